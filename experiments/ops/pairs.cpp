// Ops over pairs (a_i, b_i): `dot` (core/carriers/dot.hpp) and `affine`, the composition of
// the maps h -> a h + b (core/carriers/affine.hpp; eval measures b, i.e. h_n from h_0 = 0).
#include "core/carriers/affine.hpp"
#include "core/carriers/dot.hpp"
#include "core/derivations/affine.hpp"
#include "core/dot_arithmetic.hpp"
#include "io/text_file.hpp"
#include "io/tree_file.hpp"
#include "ops/builtin.hpp"
#include "precision/reference/fast_sum.hpp"

namespace carrier::ops {

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
namespace {
// The references at their default options, in the forms PairsReference takes.
reference::Reference DotReference(std::span<const ValuePair<double>> x) {
  return reference::ReferenceDot(x);
}
reference::Reference AffineReference(std::span<const ValuePair<double>> x) {
  return reference::ReferenceAffine(x);
}
reference::Reference AffineColumnsReference(const StoredColumn& a, const StoredColumn& b) {
  return reference::ReferenceAffine(a, b);
}

// A tree file that carries a "dot_arithmetic" (core/dot_arithmetic.hpp: `carrier probe dot:...
// -o FILE`) is replayed node by node as it says, in its own format only; every other tree runs
// carrier's Dot in the compute type.
std::optional<DotArithmetic> FileArithmetic(const MergeTree& tree) {
  if (tree.schedule.rfind("file:", 0) != 0) return std::nullopt;
  const std::string path = tree.schedule.substr(5);
  std::string text;
  try {
    text = io::ReadTextFile(path, io::kMaxTreeFileBytes);
  } catch (const std::runtime_error& e) {
    throw ScheduleError(std::string("file:") + e.what());
  }
  std::optional<DotArithmetic> a = ReadDotArithmetic(text, tree.schedule, tree.NodeCount());
  if (!a) return a;
  if (const std::string why = CheckDotArithmetic(tree, *a); !why.empty())
    throw ScheduleError(tree.schedule + ": " + why);
  return a;
}

registry::Replayed ReplayArithmetic(registry::ScalarKind k, const MergeTree& tree,
                                    const DotArithmetic& a, const registry::ReplayInput& in) {
  const registry::ScalarKind want =
      a.fp32 ? registry::ScalarKind::kFloat : registry::ScalarKind::kDouble;
  if (k != want)
    throw std::invalid_argument(
        tree.schedule + " holds a dot's arithmetic in " + (a.fp32 ? "fp32" : "fp64") +
        " node by node: replay it with --acc " + (a.fp32 ? "fp32" : "fp64"));
  registry::Replayed r;
  r.components = {static_cast<long double>(ReplayDotArithmetic(tree, a, in.a, in.b))};
  return r;
}

registry::Replayed DotReplayOracle(registry::ScalarKind k, registry::ExpKind e,
                                   const MergeTree& tree, const registry::ReplayInput& in) {
  if (const auto a = FileArithmetic(tree)) return ReplayArithmetic(k, tree, *a, in);
  return registry::ReplayOracleOf<registry::Plain<Dot>>(k, e, tree, in);
}

registry::Replayed DotReplay(registry::ScalarKind k, registry::ExpKind e, const Schedule& s,
                             const MergeTree* tree, const registry::ReplayInput& in) {
  if (tree)
    if (const auto a = FileArithmetic(*tree)) return ReplayArithmetic(k, *tree, *a, in);
  return registry::ReplayOf<registry::Plain<Dot>>(k, e, s, tree, in);
}
}  // namespace
#endif

namespace {
Entry DotOp() {
  Entry e = registry::CarrierOp<registry::Plain<Dot>>("dot", "dot product of two columns");
  e.rank = 90;
  e.component_names = {"dot"};
  e.fused_schedules = true;  // mma:PROFILE: the products through a matrix unit's fused adder
  e.backends = {{"simd", kSimdStrided, &backends::RunSimdDot},
                {"omp", OmpSchedules(kSimdStrided), &backends::RunOmpDot}};
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.replay_oracle = &DotReplayOracle;
  e.replay = &DotReplay;
  e.reference = &registry::PairsReference<&DotReference, &registry::DecodedPairs<&DotReference>>;
  // the exact tier at superaccumulator speed, the two columns read a chunk at a time
  e.fast_reference =
      &registry::PairsReference<&reference::ReferenceDotFast, &reference::ReferenceDotFast>;
  e.column_reference = true;
  e.bound = &DotOpBound;
  e.cond = &DotCondition;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(DotOp())

namespace {
Entry AffineOp() {
  Entry e = registry::CarrierOp<registry::Plain<Affine>, false, true>(
      "affine", "affine recurrence h = a h + b as composed maps (not commutative)");
  e.rank = 100;
  e.component_names = {"a", "b"};
  e.main = 1;
  e.derive = &registry::DeriveOf<AffineDerivation>;
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  // the definition, the two columns read a chunk at a time in each of its passes
  e.reference = &registry::PairsReference<&AffineReference, &AffineColumnsReference>;
  e.column_reference = true;
  e.bound = &AffineOpBound;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(AffineOp())

}  // namespace carrier::ops
