// Ops `var-twopass`, `var-corrected` and `var-textbook`: the classical variance formulas, each
// sum through the schedule's tree in the compute type, measured against Welford's certified
// population variance (they share welford's reference). var-twopass: the mean by Sum, then the
// Sum of (x - mean)^2, divided by n. var-corrected: Chan, Golub & LeVeque's corrected two-pass
// algorithm (Amer. Statist. 37(3), 1983), which subtracts (sum (x - mean))^2 / n from the
// two-pass sum of squares: in exact arithmetic the correction is 0, in floating point it
// cancels the n delta^2 that an error delta in the computed mean adds. var-textbook: the
// one-pass (sum x^2 - (sum x)^2 / n) / n. var-shifted: CGL's shifted textbook algorithm, the
// one-pass formula on y_i = x_i - d with d = x_1 (the first stored value, the paper's cheap
// guess of the mean), so its error grows with the shifted data's condition number, not x's.
// The formulas are core/variance_formulas.hpp's; this file only registers them. No a-priori
// bound; no fast kernel.
#include "core/variance_formulas.hpp"
#include "ops/builtin.hpp"

namespace carrier::ops {

namespace {

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
// The op's replay: core/variance_formulas.hpp's formula F in the compute scalar of kind k.
template <template <class> class F>
registry::Replayed FormulaReplay(registry::ScalarKind k, registry::ExpKind, const MergeTree& tree,
                                 const registry::ReplayInput& in) {
  return registry::WithScalar(k, [&]<class T>() {
    std::vector<T> x;
    x.reserve(in.a.size());
    for (double v : in.a) x.push_back(static_cast<T>(v));
    const VarianceMoments<T> m = F<T>::Run(tree, x);
    registry::Replayed out;
    for (const T& v : {m.mean, m.var_population, m.var_sample}) registry::AppendValue(v, out);
    return out;
  });
}

template <class T>
struct TwoPass {
  static VarianceMoments<T> Run(const MergeTree& t, const std::vector<T>& x) {
    return TwoPassVariance(t, x);
  }
};
template <class T>
struct Corrected {
  static VarianceMoments<T> Run(const MergeTree& t, const std::vector<T>& x) {
    return CorrectedTwoPassVariance(t, x);
  }
};
template <class T>
struct Textbook {
  static VarianceMoments<T> Run(const MergeTree& t, const std::vector<T>& x) {
    return TextbookVariance(t, x);
  }
};
template <class T>
struct Shifted {
  static VarianceMoments<T> Run(const MergeTree& t, const std::vector<T>& x) {
    return ShiftedTextbookVariance(t, x);
  }
};
#endif

Entry VarianceOp(const char* name, const char* summary, int rank) {
  Entry e;
  e.name = name;
  e.summary = summary;
  e.rank = rank;
  e.commutative = true;
  e.components = 3;
  e.component_names = {"mean", "var_population", "var_sample"};
  e.main = 1;
  e.reference_key = "welford";
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.reference = &registry::ColumnReference<&reference::ReferenceWelford>;
  e.fast_reference = &registry::FastColumnReference<&reference::ReferenceWelfordFast,
                                                    &reference::ReferenceWelfordFast>;
  e.column_reference = true;
  e.cond = &VarianceConditionOf;
#endif
  return e;
}

}  // namespace

namespace {
Entry VarTwopassOp() {
  Entry e = VarianceOp("var-twopass", "two-pass variance: the mean, then the centred squares", 120);
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.replay_oracle = &FormulaReplay<TwoPass>;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(VarTwopassOp())

namespace {
Entry VarCorrectedOp() {
  Entry e = VarianceOp("var-corrected",
                       "corrected two-pass variance (Chan-Golub-LeVeque): two-pass minus "
                       "(sum of centred values)^2/n",
                       125);
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.replay_oracle = &FormulaReplay<Corrected>;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(VarCorrectedOp())

namespace {
Entry VarTextbookOp() {
  Entry e = VarianceOp("var-textbook", "textbook one-pass variance (sum x^2 - (sum x)^2/n)/n", 130);
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.replay_oracle = &FormulaReplay<Textbook>;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(VarTextbookOp())

namespace {
Entry VarShiftedOp() {
  Entry e = VarianceOp("var-shifted",
                       "shifted textbook variance (Chan-Golub-LeVeque): the one-pass formula on "
                       "x - x_1",
                       135);
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.replay_oracle = &FormulaReplay<Shifted>;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(VarShiftedOp())

}  // namespace carrier::ops
