// Op `sum`: plain recursive summation (core/carriers/sum.hpp), one rounding per addition.
#include "core/carriers/sum.hpp"

#include "core/derivations/sum.hpp"
#include "ops/builtin.hpp"

namespace carrier::ops {

namespace {
Entry SumOp() {
  using F = registry::Plain<Sum>;
  Entry e = registry::CarrierOp<F>("sum", "recursive summation, one rounding per addition");
  e.rank = 10;
  e.component_names = {"sum"};
  e.reference_key = "sum";
  e.derive = &registry::DeriveOf<SumDerivation>;
  e.backends = KernelBackends<Sum>(kSimdStrided);
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.replay_mixed = &registry::MixedOf<F>;
  e.reference = &registry::ColumnReference<&reference::ReferenceSum>;
  e.fast_reference =
      &registry::FastColumnReference<&reference::ReferenceSumFast, &reference::ReferenceSumFast>;
  e.column_reference = true;
  e.bound = &SumOpBound;
  e.mixed_bound = &FabsumOpBound;
  e.cond = &SumCondition;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(SumOp())

}  // namespace carrier::ops
