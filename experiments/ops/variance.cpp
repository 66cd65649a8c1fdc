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
// No a-priori bound; no fast kernel.
#include "core/carriers/sum.hpp"
#include "ops/builtin.hpp"

namespace carrier::ops {

namespace {

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
template <class T>
T SumOver(const MergeTree& tree, const std::vector<T>& x) {
  return Sum<T>::Finalize(Replay<Sum<T>>(tree, std::span<const T>(x)));
}

template <class T>
std::vector<T> Column(const registry::ReplayInput& in) {
  std::vector<T> x;
  x.reserve(in.a.size());
  for (double v : in.a) x.push_back(static_cast<T>(v));
  return x;
}

template <class T>
registry::Replayed Moments(const T& mean, const T& m2, std::size_t n) {
  const T count = T(static_cast<double>(n));
  return {{static_cast<long double>(mean), static_cast<long double>(m2 / count),
           static_cast<long double>(m2 / T(static_cast<double>(n - 1)))}};
}

registry::Replayed TwoPass(registry::ScalarKind k, registry::ExpKind, const MergeTree& tree,
                           const registry::ReplayInput& in) {
  return registry::WithScalar(k, [&]<class T>() {
    // Pass 1: the mean; pass 2: the centred squares, both through the same tree.
    const std::vector<T> x = Column<T>(in);
    const T mean = SumOver(tree, x) / T(static_cast<double>(x.size()));
    std::vector<T> d2;
    d2.reserve(x.size());
    for (const T& v : x) {
      const T d = v - mean;
      d2.push_back(d * d);
    }
    return Moments(mean, SumOver(tree, d2), x.size());
  });
}

registry::Replayed Corrected(registry::ScalarKind k, registry::ExpKind, const MergeTree& tree,
                             const registry::ReplayInput& in) {
  return registry::WithScalar(k, [&]<class T>() {
    // Pass 1: the mean; pass 2: the centred values and their squares, both sums through the
    // same tree; then M2 = sum d^2 - (sum d)^2 / n.
    const std::vector<T> x = Column<T>(in);
    const T count = T(static_cast<double>(x.size()));
    const T mean = SumOver(tree, x) / count;
    std::vector<T> d, d2;
    d.reserve(x.size());
    d2.reserve(x.size());
    for (const T& v : x) {
      d.push_back(v - mean);
      d2.push_back(d.back() * d.back());
    }
    const T s1 = SumOver(tree, d);
    return Moments(mean, SumOver(tree, d2) - s1 * s1 / count, x.size());
  });
}

registry::Replayed Textbook(registry::ScalarKind k, registry::ExpKind, const MergeTree& tree,
                            const registry::ReplayInput& in) {
  return registry::WithScalar(k, [&]<class T>() {
    // One pass carrying (sum x, sum x^2): two Sum replays over the same tree are exactly that
    // pair carrier, component by component.
    const std::vector<T> x = Column<T>(in);
    const T count = T(static_cast<double>(x.size()));
    std::vector<T> sq;
    sq.reserve(x.size());
    for (const T& v : x) sq.push_back(v * v);
    const T s1 = SumOver(tree, x);
    const T s2 = SumOver(tree, sq);
    return Moments(s1 / count, s2 - s1 * s1 / count, x.size());
  });
}

registry::Replayed Shifted(registry::ScalarKind k, registry::ExpKind, const MergeTree& tree,
                           const registry::ReplayInput& in) {
  return registry::WithScalar(k, [&]<class T>() {
    // The textbook pair (sum y, sum y^2) over y_i = x_i - x_1, each y_i rounded once.
    const std::vector<T> x = Column<T>(in);
    const T count = T(static_cast<double>(x.size()));
    const T d = x.empty() ? T(0.0) : x.front();  // n = 0 is refused earlier; no UB here
    std::vector<T> y, sq;
    y.reserve(x.size());
    sq.reserve(x.size());
    for (const T& v : x) {
      y.push_back(v - d);
      sq.push_back(y.back() * y.back());
    }
    const T s1 = SumOver(tree, y);
    const T s2 = SumOver(tree, sq);
    return Moments(d + s1 / count, s2 - s1 * s1 / count, x.size());
  });
}
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
  e.fast_reference = &registry::FastColumnReference<&reference::ReferenceWelfordFast>;
  e.cond = &VarianceConditionOf;
#endif
  return e;
}

}  // namespace

namespace {
Entry VarTwopassOp() {
  Entry e = VarianceOp("var-twopass", "two-pass variance: the mean, then the centred squares", 120);
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.replay = &TwoPass;
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
  e.replay = &Corrected;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(VarCorrectedOp())

namespace {
Entry VarTextbookOp() {
  Entry e = VarianceOp("var-textbook", "textbook one-pass variance (sum x^2 - (sum x)^2/n)/n", 130);
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.replay = &Textbook;
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
  e.replay = &Shifted;
#endif
  return e;
}
}  // namespace

CARRIER_REGISTER_OP(VarShiftedOp())

}  // namespace carrier::ops
