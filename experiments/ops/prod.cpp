// Op `prod`: the product of a column (core/carriers/prod.hpp); its bound is
// precision/op_bounds/prod.hpp; its reference the carrier itself in MPFR at p and 2p bits
// (tier mpfr-carrier; a product of n doubles is exact at 53 n bits, so the pair agrees once p
// passes that or the digits that matter). No fast kernel: the backends refuse it.
#include "core/carriers/prod.hpp"

#include "ops/builtin.hpp"
#include "precision/op_bounds/prod.hpp"

namespace carrier::ops {

namespace {
Entry ProdOp() {
  Entry e = registry::CarrierOp<registry::Plain<Prod>>("prod",
                                                       "product, one rounding per multiplication");
  e.rank = 110;
  e.component_names = {"prod"};
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.reference = &registry::CarrierReferenceHook<Prod>;  // reads a packed column by chunks
  e.column_reference = true;
  e.bound = &ProdOpBound;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(ProdOp())

}  // namespace carrier::ops
