// Ops over pairs (a_i, b_i): `dot` (core/carriers/dot.hpp) and `affine`, the composition of
// the maps h -> a h + b (core/carriers/affine.hpp; eval measures b, i.e. h_n from h_0 = 0).
#include "core/carriers/affine.hpp"
#include "core/carriers/dot.hpp"
#include "core/derivations/affine.hpp"
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
