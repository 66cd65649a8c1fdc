// Op `rmsnorm`: the root mean square of a row, RMSNorm's statistic (core/carriers/rms_norm.hpp);
// eval measures rms. Its reference is the carrier folded in MPFR at p and 2p bits (the user
// carriers' tier, ops/register.hpp MakeEntry): no closed-form reference is needed for a sum of
// squares and a square root, and the certified tier says when the two precisions agree.
#include "core/carriers/rms_norm.hpp"
#include "ops/builtin.hpp"

namespace carrier::ops {

namespace {
Entry RmsNormOp() {
  Entry e = registry::MakeEntry<RmsNorm>(
      "rmsnorm", "RMSNorm's statistic sqrt(sum x^2 / n) (count and sum of squares)");
  e.user = false;
  e.rank = 72;
  e.component_names = {"rms", "mean_square"};
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(RmsNormOp())

}  // namespace carrier::ops
