// The laws/derive counterexamples `naive-mean` and `naive-lse` (core/derivations/
// counterexamples.hpp): carriers that declare a monoid they are not, so `carrier laws` and
// `carrier derive` must reject them. Not trial ops (no replay).
#include "core/derivations/counterexamples.hpp"

#include "ops/builtin.hpp"

namespace carrier::ops {

namespace {
Entry NaiveMeanOp() {
  Entry e = registry::CarrierOp<registry::Plain<NaiveMean>>(
      "naive-mean", "counterexample: the mean of two means (not associative)");
  e.rank = 200;
  e.replay_oracle = nullptr;
  e.derive = &registry::DeriveOf<NaiveMeanDerivation>;
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(NaiveMeanOp())

namespace {
Entry NaiveLseOp() {
  Entry e = registry::CarrierOp<registry::Plain<NaiveLse>, true>(
      "naive-lse", "counterexample: log-sum-exp without the max rescale");
  e.rank = 210;
  e.replay_oracle = nullptr;
  e.derive = &registry::DeriveOf<NaiveLseDerivation>;
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(NaiveLseOp())

}  // namespace carrier::ops
