// Op `kahan`: Kahan's original compensated summation (core/carriers/kahan.hpp); its bound is
// precision/op_bounds/kahan.hpp. No fast kernel: the simd, omp and cuda backends refuse it.
#include "core/carriers/kahan.hpp"

#include "ops/builtin.hpp"
#include "precision/op_bounds/kahan.hpp"

namespace carrier::ops {

namespace {
Entry KahanOp() {
  using F = registry::Plain<Kahan>;
  Entry e = registry::CarrierOp<F>(
      "kahan", "Kahan's original compensated sum (the correction fed into the next input)");
  e.rank = 25;
  e.component_names = {"sum"};
  e.reference_key = "sum";
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.replay_mixed = &registry::MixedOf<F>;
  e.reference = &registry::ColumnReference<&reference::ReferenceSum>;
  e.fast_reference =
      &registry::FastColumnReference<&reference::ReferenceSumFast, &reference::ReferenceSumFast>;
  e.column_reference = true;
  e.bound = &KahanOpBound;
  e.cond = &SumCondition;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(KahanOp())

}  // namespace carrier::ops
