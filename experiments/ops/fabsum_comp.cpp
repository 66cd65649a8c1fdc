// Op `fabsum-comp`: FABsum with a compensated accurate sum in one precision
// (core/carriers/fab_compensated.hpp): plain pushes inside each chain, TwoSum combines.
// ReplayOracle only (no kernel) and no a-priori bound (the carrier header says why).
#include "core/carriers/fab_compensated.hpp"
#include "ops/builtin.hpp"

namespace carrier::ops {

namespace {
Entry FabsumCompOp() {
  using F = registry::Plain<FabCompensated>;
  Entry e = registry::CarrierOp<F>(
      "fabsum-comp", "plain sums inside each chain, chain results combined by compensated TwoSum");
  e.rank = 26;
  e.component_names = {"sum"};
  e.reference_key = "sum";
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.reference = &registry::ColumnReference<&reference::ReferenceSum>;
  e.fast_reference =
      &registry::FastColumnReference<&reference::ReferenceSumFast, &reference::ReferenceSumFast>;
  e.column_reference = true;
  e.cond = &SumCondition;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(FabsumCompOp())

}  // namespace carrier::ops
