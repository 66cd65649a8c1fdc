// Op `neumaier`: the Kahan-Babuska-Neumaier compensated sum (core/carriers/compensated.hpp).
// Before this name existed the op was called `kahan`; `kahan` is now Kahan's original
// algorithm (ops/kahan.cpp).
#include "core/carriers/compensated.hpp"
#include "ops/builtin.hpp"

namespace carrier::ops {

namespace {
Entry NeumaierOp() {
  using F = registry::Plain<Compensated>;
  Entry e = registry::CarrierOp<F>(
      "neumaier", "Kahan-Babuska-Neumaier compensated sum (the correction added at the end)");
  e.rank = 20;
  e.component_names = {"sum"};
  e.reference_key = "sum";
  e.backends = KernelBackends<Compensated>(kSimdStrided);
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.replay_mixed = &registry::MixedOf<F>;
  e.reference = &registry::ColumnReference<&reference::ReferenceSum>;
  e.fast_reference =
      &registry::FastColumnReference<&reference::ReferenceSumFast, &reference::ReferenceSumFast>;
  e.column_reference = true;
  e.bound = &NeumaierOpBound;
  e.cond = &SumCondition;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(NeumaierOp())

}  // namespace carrier::ops
