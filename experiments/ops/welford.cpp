// Op `welford`: Welford's running (n, mean, M2) with the Chan-Golub-LeVeque merge
// (core/carriers/welford.hpp); eval measures the population variance.
#include "core/carriers/welford.hpp"

#include "core/derivations/welford.hpp"
#include "ops/builtin.hpp"

namespace carrier::ops {

namespace {
Entry WelfordOp() {
  using F = registry::Plain<Welford>;
  Entry e = registry::CarrierOp<F>("welford",
                                   "Welford's mean and variance with the Chan-Golub-LeVeque merge");
  e.rank = 70;
  e.component_names = {"mean", "var_population", "var_sample"};
  e.main = 1;
  e.reference_key = "welford";
  e.derive = &registry::DeriveOf<WelfordDerivation>;
  e.backends = KernelBackends<Welford>(kSimdStridedTiles);
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.replay_mixed = &registry::MixedOf<F>;
  e.reference = &registry::ColumnReference<&reference::ReferenceWelford>;
  e.fast_reference = &registry::FastColumnReference<&reference::ReferenceWelfordFast,
                                                    &reference::ReferenceWelfordFast>;
  e.column_reference = true;
  e.bound = &WelfordOpBound;
  e.cond = &VarianceConditionOf;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(WelfordOp())

}  // namespace carrier::ops
