// Op `attention`: one head of FlashAttention-2's forward pass, non-causal, n = the sequence
// length (core/attention.hpp's AttentionForwardReplay with every row merged in the schedule's
// order, blocked:Bc:lift being the kernel's key tiles of Bc), measured normwise and
// componentwise over all n x head_dim outputs against the per-row certified references;
// fp32, fp64 or an emulated format (replay only). Its bound is AttentionOpBound
// (precision/op_bounds.hpp); `carrier laws attention` checks FlashRow<T, 2>. Under a precision
// policy (eval --precision, a sweep's precision axis) it runs every role of the policy through
// precision/attention_model.hpp's FlashAttention-2 model (AttentionPolicyReplay), bounded by
// precision/role_bounds.hpp's AttentionRoleBound.
#include "core/attention.hpp"

#include <algorithm>
#include <cmath>

#include "core/carriers/flash_row.hpp"
#include "core/mma.hpp"
#include "io/tree_file.hpp"
#include "ops/builtin.hpp"
#include "precision/attention_model.hpp"

namespace carrier::ops {

namespace {

template <class T>
using AttentionLaws = FlashRow<T, 2>;

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

// core/attention.hpp's shape for a schedule: blocked:BC:lift is the kernel's order (key tiles
// of BC); any other schedule is the per-row merge order of a non-causal head, where block_c
// plays no part.
AttentionShape AttentionShapeFor(const std::string& schedule, std::size_t n, std::size_t d) {
  const Schedule s = ParseSchedule(schedule);
  const auto* b = s.If<orders::BlockedParams>();
  if (b && b->outer == OuterOrder::kSeq && b->lift)
    return AttentionShapeFromSchedule(schedule, n, d, false);
  AttentionShape shape;
  shape.seq_len = n;
  shape.head_dim = d;
  CheckAttentionShape(shape);
  return shape;
}

// fp32/fp64 natively; an emulated format (bf16, fp16, ...) under the caller's EmulationScope,
// so every score product and sum, exp, rescale by exp(m_old - m_new), l and o update and the
// final o / l round into that format, as a kernel computing in it.
registry::Replayed AttentionReplay(registry::ScalarKind k, registry::ExpKind x,
                                   const MergeTree& tree, const registry::ReplayInput& in) {
  return registry::WithScalar(k, [&]<class T>() -> registry::Replayed {
    if constexpr (std::is_same_v<T, Mpfr> || registry::kIsFloat128<T>) {  // refused by Resolve
      throw run::SpecError(
          "attention computes in fp32, fp64 or an emulated format (acc), not mpfr");
    } else {
      return registry::WithExpKind<T>(x, [&]<class Exp>() {
        const std::size_t n = in.n, d = in.head_dim;
        const double* q = in.a.data();
        const AttentionShape shape = AttentionShapeFor(tree.schedule, n, d);
        const std::vector<T> o = AttentionForwardReplay<T, Exp, double>(
            q, q + n * d, q + 2 * n * d, shape, io::LoadSchedule(tree.schedule));
        registry::Replayed out;
        out.components.reserve(o.size());
        for (const T& v : o) out.components.push_back(static_cast<long double>(v));
        return out;
      });
    }
  });
}

// The certified output of every query row (core/attention.hpp's exact scores, then
// ReferenceAttention per row), concatenated row-major like the replay's output. Certified when
// every row is; the tier and precision of the least precise row. Also the bound's
// data-dependent parts (run::SharedReference; precision/op_bounds.hpp AttentionBoundParts).
void AttentionReference(const run::TrialInput& in, std::uint64_t d, run::SharedReference& out) {
  const std::size_t n = in.n;
  const double* q = in.a.data();
  AttentionShape shape;
  shape.seq_len = n;
  shape.head_dim = d;
  const std::span<const double> v(q + 2 * n * d, n * d);
  reference::Reference all;
  all.op = "attention";
  all.count = n;
  all.cert.certified = true;
  all.cert.correctly_rounded = true;
  all.cert.precision_bits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::vector<double> scores = AttentionScoresExact(q, q + n * d, shape, i);
    const reference::Reference r = reference::ReferenceAttention(scores, v, d);
    all.as_double.insert(all.as_double.end(), r.as_double.begin(), r.as_double.end());
    all.as_long_double.insert(all.as_long_double.end(), r.as_long_double.begin(),
                              r.as_long_double.end());
    if (i == 0 || r.cert.precision_bits < all.cert.precision_bits) {
      all.cert.precision_bits = r.cert.precision_bits;
      all.cert.tier = r.cert.tier;
    }
    all.cert.certified = all.cert.certified && r.cert.certified;
    all.cert.correctly_rounded = all.cert.correctly_rounded && r.cert.correctly_rounded;
    if (!r.cert.certified && all.cert.note.empty())
      all.cert.note = "row " + std::to_string(i) + ": " + r.cert.note;
    const AttentionRowBoundParts parts =
        AttentionBoundParts(scores, std::span<const double>(q + i * d, d), q + n * d, v, d,
                            std::span<const long double>(r.as_long_double.data(), d));
    out.attention_a.insert(out.attention_a.end(), parts.a.begin(), parts.a.end());
    out.attention_b.insert(out.attention_b.end(), parts.b.begin(), parts.b.end());
    out.attention_q.push_back(parts.q);
  }
  SetReference(out, std::move(all));
}

// A precision policy role by role: precision/attention_model.hpp's FlashAttention-2 forward
// (the model `carrier study attention-deviation` runs), key tiles of BC keys for
// blocked:BC:lift and of one key for seq, every intermediate rounded as the policy's roles say
// (prod, acc, s, p, state, out; an mma profile's fused products). The scores, exp and final
// division follow the model's contract, not core/attention.hpp's T arithmetic.
std::size_t PolicyKeyTile(const Schedule& s) {
  if (s.kind() == ScheduleKind::kSeq) return 1;
  if (const auto* b = s.If<orders::BlockedParams>(); b && b->outer == OuterOrder::kSeq && b->lift)
    return b->tile;
  throw std::invalid_argument(
      "op attention by role runs FlashAttention-2's key tiles in order "
      "(precision/attention_model.hpp): schedule seq (tiles of one key) or blocked:BC:lift, not '" +
      ToString(s) + "'");
}

void CheckAttentionPolicy(const PrecisionPolicy& p, const Schedule& schedule) {
  (void)PolicyKeyTile(schedule);
  if (p.mma.empty()) return;
  const MmaProfile* profile = FindMmaProfile(p.mma);
  if (!profile) throw std::invalid_argument("precision: unknown mma profile '" + p.mma + "'");
  for (const auto& [role, f] : {std::pair{"in", &p.in}, std::pair{"p", &p.p}}) {
    if (!MmaInputAccepts(profile->node.input, f->format.name))
      throw std::invalid_argument("precision " + ToString(p) + ": mma=" + p.mma + " multiplies " +
                                  std::string(MmaInputName(profile->node.input)) + " values, not " +
                                  role + "=" + f->format.name);
  }
}

registry::Replayed AttentionPolicyReplay(const PrecisionPolicy& p, const Schedule& schedule,
                                         std::uint64_t sr_seed, const registry::ReplayInput& in) {
  const std::size_t n = in.n, d = in.head_dim;
  const std::span<const double> q = in.a.subspan(0, n * d), k = in.a.subspan(n * d, n * d),
                                v = in.a.subspan(2 * n * d, n * d);
  AttentionModelSpec ms;
  ms.seq_len = n;
  ms.head_dim = d;
  ms.block_c = PolicyKeyTile(schedule);
  ms.algorithm = AttentionAlgorithm::kFa2;
  ms.policy = p;
  ms.sr_seed = sr_seed;
  const std::vector<double> o = AttentionModel(q, k, v, ms);
  registry::Replayed out;
  out.components.assign(o.begin(), o.end());
  return out;
}

#endif  // CARRIER_HAVE_MPFR

}  // namespace

namespace {
Entry AttentionOp() {
  Entry e;
  e.name = "attention";
  e.summary = "one FlashAttention-2 forward head over q, k, v (n x head_dim outputs)";
  e.rank = 140;
  e.input = registry::InputKind::kAttention;
  e.commutative = true;
  e.components = 0;
  e.uses_exp = true;
  e.mpfr_compute = false;
  e.emulated_on_backends = false;
  e.head_dims = {64, 128};  // core/attention.hpp's menu
  e.backends = {{"cuda", "blocked:BC:lift (BC 16 32 64 128; empty: blocked:64:lift)",
                 &backends::RunCudaAttention}};
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.laws = &registry::LawsOf<AttentionLaws, true>;
  e.replay_oracle = &AttentionReplay;
  e.policy_replay = &AttentionPolicyReplay;
  e.check_policy = &CheckAttentionPolicy;
  e.reference = &AttentionReference;
  e.bound = &AttentionOpBound;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(AttentionOp())

}  // namespace carrier::ops
