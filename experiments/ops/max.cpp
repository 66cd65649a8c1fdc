// Ops `max` and `argmax` (core/carriers/max.hpp, argmax.hpp): exact, no rounding.
#include "core/carriers/max.hpp"

#include "core/carriers/argmax.hpp"
#include "core/derivations/max.hpp"
#include "ops/builtin.hpp"

namespace carrier::ops {

namespace {
Entry MaxOp() {
  Entry e = registry::CarrierOp<registry::Plain<Max>, true>("max", "maximum (NaN-propagating)");
  e.rank = 30;
  e.component_names = {"max"};
  e.derive = &registry::DeriveOf<MaxDerivation>;
  e.backends = KernelBackends<Max>(kSimdStrided);
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.reference = &registry::FastColumnReference<&reference::ReferenceMax, &reference::ReferenceMax>;
  e.column_reference = true;
  e.bound = &ExactOpBound;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(MaxOp())

namespace {
Entry ArgmaxOp() {
  Entry e = registry::CarrierOp<registry::Plain<ArgMax>, true>(
      "argmax", "maximum and its index (ties to the lowest index; not commutative)");
  e.rank = 40;
  e.component_names = {"max"};
  e.backends = KernelBackends<ArgMax>(kSimdSeq);
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.reference =
      &registry::FastColumnReference<&reference::ReferenceArgMax, &reference::ReferenceArgMax>;
  e.column_reference = true;
  e.bound = &ExactOpBound;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(ArgmaxOp())

}  // namespace carrier::ops
