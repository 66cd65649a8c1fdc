// Ops `lse` and `softmax` (core/carriers/online_softmax.hpp): the online (m, d) carrier under
// the exp policy; softmax replays the same state and then forms one output per input.
#include "core/carriers/online_softmax.hpp"
#include "core/derivations/online_softmax.hpp"
#include "ops/builtin.hpp"

namespace carrier::ops {

namespace {

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
using Family = registry::WithExp<OnlineSoftmax>;

registry::Replayed SoftmaxReplay(registry::ScalarKind k, registry::ExpKind x, const MergeTree& tree,
                                 const registry::ReplayInput& in) {
  return registry::WithScalar(k, [&]<class T>() {
    return registry::WithExpPolicy<Family, T>(x, [&]<class C>() {
      std::vector<T> v;
      v.reserve(in.a.size());
      for (double a : in.a) v.push_back(static_cast<T>(a));
      const auto s = ReplayOracle<C>(tree, std::span<const T>(v));
      registry::Replayed out;
      for (const T& a : v)
        out.components.push_back(static_cast<long double>(C::SoftmaxOutput(a, s)));
      return out;
    });
  });
}
#endif

}  // namespace

namespace {
Entry LseOp() {
  using F = registry::WithExp<OnlineSoftmax>;
  Entry e = registry::CarrierOp<F, true>("lse", "log-sum-exp by the online (max, sum) carrier");
  e.rank = 50;
  e.component_names = {"lse"};
  e.derive = &registry::DeriveOf<OnlineSoftmaxDerivation>;
  e.backends = KernelBackends<backends::PortableLse>(kSimdStridedTiles);
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.replay_mixed = &registry::MixedOf<F>;
  e.reference =
      &registry::PackedColumnReference<&reference::ReferenceLse, &reference::ReferenceLse>;
  e.column_reference = true;
  e.bound = &LseOpBound;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(LseOp())

namespace {
Entry SoftmaxOp() {
  Entry e;
  e.name = "softmax";
  e.summary = "softmax outputs from the online lse state (vector output)";
  e.rank = 60;
  e.commutative = true;
  e.components = 0;  // one output per input
  e.uses_exp = true;
  e.backends = {{"simd", kSimdStridedTiles, &backends::RunSimdSoftmax},
                {"omp", OmpSchedules(kSimdStridedTiles), &backends::RunOmpSoftmax}};
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.replay_oracle = &SoftmaxReplay;
  e.reference = &registry::ColumnReference<&reference::ReferenceSoftmax>;
  e.bound = &SoftmaxOpBound;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(SoftmaxOp())

}  // namespace carrier::ops
