// Op `norm2`: the scaled 2-norm (scale, ssq) of LAPACK's dnrm2 (core/carriers/scaled_norm2.hpp).
#include "core/carriers/scaled_norm2.hpp"
#include "ops/builtin.hpp"

namespace carrier::ops {

namespace {
Entry Norm2Op() {
  Entry e = registry::CarrierOp<registry::Plain<ScaledNorm2>>(
      "norm2", "2-norm by the scaled (scale, ssq) carrier (no overflow, no underflow)");
  e.rank = 80;
  e.component_names = {"norm"};
  e.backends = KernelBackends<ScaledNorm2>(kSimdStrided);
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.reference = &registry::ColumnReference<&reference::ReferenceNorm2>;
  e.fast_reference = &registry::FastColumnReference<&reference::ReferenceNorm2Fast,
                                                    &reference::ReferenceNorm2Fast>;
  e.column_reference = true;
  e.bound = &Norm2OpBound;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(Norm2Op())

}  // namespace carrier::ops
