// precision/op_bounds.hpp: the a-priori bound of each op's main result, one typed function per
// op (the op table of experiments/registry/ names the function of each entry; nothing here
// knows the CLI's op names), plus the data-dependent condition numbers the trial reports.
//
// Main result per op (what `carrier eval` measures): sum, neumaier, kahan, dot, max, lse,
// norm2, prod -> the scalar; argmax -> the maximum's value; welford -> the population
// variance; affine -> b, the composed map applied to h_0 = 0 (the recurrence's h_n); softmax
// -> the vector (the bound is componentwise relative); attention -> the n x head_dim outputs
// (normwise). Data-dependent ingredients (sum |x_i|, the softmax weights, kappa,
// sum |prod a_j| |b_k|) are computed from the stored inputs in long double, where their own
// error (about 2^-64 n relative) is far below any bound they scale.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/carriers/pairs.hpp"
#include "core/merge_tree.hpp"
#include "precision/bounds.hpp"
#include "precision/stored_column.hpp"

namespace carrier {

struct MergeTree;

struct BoundContext {
  std::uint64_t depth = 0;     // the tree's max leaf depth D
  std::uint64_t combines = 0;  // number of combines in the tree
  double u = 0;                // unit roundoff of the compute format under its rounding
  double u_exp = 0;            // relative error of the exp policy in that format
  double u_log = 0;            // relative error of the log
  double eta = 0;              // smallest positive subnormal of the compute format
};

// The relative error u_e (= u_l) of the exp/log a compute type uses, for BoundContext: MPFR's
// are correctly rounded (u); an emulated format rounds libm's double result once (u + 2^-52);
// natively, libm is within one ulp (glibc documents <= 1 ulp for exp and log: 2u) and the
// portable exp within kPortableExpMaxUlpF32 ulps (precision/math_policy.hpp).
enum class ExpArithmetic { kNativeLibm, kNativePortable, kEmulated, kMpfr };
double ExpRelativeError(ExpArithmetic a, double u);

// The schedule-independent sums the bounds and condition numbers read from one input (sum |x_i|,
// sum x_i^2, lse's softmax weights), kept so that the trials of one input under several
// schedules (a sweep's group) compute each once. A value is remembered together with the
// input it was computed from (its data's address, length, and the exact reference it used) and is
// returned only for that same input; it is the value the uncached code gives, computed by that
// code. Thread-safe: the trials of one input may run on several threads.
struct BoundInputs;

class BoundMemo {
 public:
  // The sums' slots, one per kind of ingredient.
  enum Slot { kSumAbs, kSumSquares, kSoftmaxParts, kSlots };
  using Fill = void (*)(const BoundInputs& in, long double exact, long double* v);
  // v[0..kValues) of `slot` for the input in.x or in.column (with `exact`, the reference it
  // depends on): fill(in, exact, v) on first use, the remembered values after that; another input
  // in the same slot is filled afresh and remembered instead.
  void Get(Slot slot, const BoundInputs& in, long double exact, Fill fill, long double* v);
  static constexpr int kValues = 6;

 private:
  struct Entry {
    const void* data = nullptr;
    std::size_t size = 0;
    long double exact = 0;
    bool set = false;
    long double v[kValues] = {0, 0, 0, 0, 0, 0};
  };
  std::mutex m_;
  Entry slots_[kSlots];
};

// What a bound may read: the stored inputs and the certified reference (never the result).
struct BoundInputs {
  std::span<const double> x;  // one column (attention: q, k, v concatenated)
  // Or the one column held packed (run::TrialInput::column; x is then empty): the same values,
  // read a chunk at a time. Every reader below takes either (Visit, Count).
  const StoredColumn* column = nullptr;
  std::span<const ValuePair<double>> pairs;  // dot, affine: (a_i, b_i)
  // Or the pairs held packed as two columns: a_i in `column`, b_i here (pairs is then empty),
  // read a chunk at a time. The pair readers below take either (PairCount, VisitPairs).
  const StoredColumn* column_b = nullptr;
  std::span<const long double> exact;  // the certified reference, every component
  std::size_t main = 0;                // the main component's index in `exact`
  std::uint64_t n = 0;                 // the reduction's length
  std::uint64_t head_dim = 0;          // attention only
  // attention only (run::SharedReference): per output A_j, B_j; per row Q_i.
  std::span<const double> attention_a, attention_b, attention_q;
  BoundMemo* memo = nullptr;  // optional: the input's cached sums (run::SharedReference)
  long double Exact() const { return main < exact.size() ? exact[main] : 0; }
  // The column's length, and f(span) over its values in order (x whole, or column's chunks).
  std::uint64_t Count() const { return column != nullptr ? column->size() : x.size(); }
  template <class F>
  void Visit(F&& f) const {
    if (column == nullptr) {
      f(x);
      return;
    }
    column->ForEachChunk([&](std::uint64_t, std::span<const double> c) { f(c); });
  }
  // The number of pairs, and f(a_i, b_i) for every pair in input order (kBackward: from the
  // last pair to the first).
  std::uint64_t PairCount() const { return column_b != nullptr ? column_b->size() : pairs.size(); }
  template <bool kBackward = false, class F>
  void VisitPairs(F&& f) const {
    if (column_b == nullptr) {
      if constexpr (kBackward) {
        for (std::size_t k = pairs.size(); k-- > 0;) f(pairs[k].a, pairs[k].b);
      } else {
        for (const auto& p : pairs) f(p.a, p.b);
      }
      return;
    }
    if constexpr (!kBackward) {
      ForEachChunkOfPairs(*column, *column_b, 0, column_b->size(),
                          [&](std::uint64_t, std::span<const double> a, std::span<const double> b) {
                            for (std::size_t k = 0; k < a.size(); ++k) f(a[k], b[k]);
                          });
    } else {  // the chunks from the last, each from its last pair
      constexpr std::uint64_t kChunk = StoredColumn::kChunk;
      double a[kChunk], b[kChunk];
      const std::uint64_t total = column_b->size();
      for (std::uint64_t done = 0; done < total;) {
        const std::uint64_t count = std::min(kChunk, total - done);
        const std::uint64_t lo = total - done - count;
        column->Read(lo, count, a);
        column_b->Read(lo, count, b);
        for (std::uint64_t k = count; k-- > 0;) f(a[k], b[k]);
        done += count;
      }
    }
  }
};

struct OpBound {
  Bound bound;
  bool relative = false;  // bound.value bounds the relative (not absolute) error
  bool normwise = false;  // vector output measured normwise (||o^ - o||_inf / ||o||_inf)
  bool vacuous = false;   // says nothing even where finite (a coefficient D u >= 1)
  std::string detail;     // appended to the formula (e.g. the depths that entered it)
};

using OpBoundFn = OpBound (*)(const BoundContext&, const BoundInputs&);

// dot under an mma:PROFILE[:promote:N] tree (core/mma.hpp): a fused step is not an IEEE chain.
// First order: S fused steps on the deepest path, each within MmaStepErrorCoefficient(node) of
// the magnitudes it adds, then D promotion adds in the carrier's Combine at u:
// (S c_F + D u) sum|a_i b_i| (not rigorous).
OpBound MmaDotOpBound(const MergeTree& tree, std::uint64_t longest_chain,
                      std::uint64_t max_leaf_depth, double u, const BoundInputs& in);
using ConditionFn = double (*)(const BoundInputs&);

// Each returns the bound of one op (formulas and sources: bounds.hpp and the carrier headers).
OpBound SumOpBound(const BoundContext& ctx, const BoundInputs& in);       // gamma_D sum|x|
OpBound NeumaierOpBound(const BoundContext& ctx, const BoundInputs& in);  // compensated.hpp
OpBound ExactOpBound(const BoundContext& ctx, const BoundInputs& in);     // max, argmax: 0
OpBound Norm2OpBound(const BoundContext& ctx, const BoundInputs& in);
OpBound DotOpBound(const BoundContext& ctx, const BoundInputs& in);
OpBound AffineOpBound(const BoundContext& ctx, const BoundInputs& in);
OpBound LseOpBound(const BoundContext& ctx, const BoundInputs& in);
OpBound SoftmaxOpBound(const BoundContext& ctx, const BoundInputs& in);
OpBound WelfordOpBound(const BoundContext& ctx, const BoundInputs& in);
// FlashRow's first-order FA2 bound per component (core/carriers/flash_row.hpp),
//   |o^_j - o_j| <= u |o_j| + sum_i w_i (|v_ij| + |o_j|) (D (2u + u_e) + u + u (M - s_i)),
// plus the scores' rounding: each is a d-term dot product and one scaling in the compute
// type, |s^_i - s_i| <= (gamma_{d+1} + u) Q (Q = max_i sum_c |q_c k_ic| / sqrt(d)), which
// moves o_j by at most 2 max_i |s^_i - s_i| sum_i w_i (|v_ij| + |o_j|) to first order.
// Reported normwise: max_j bound_j / max_j |o_j| (a componentwise relative bound says little
// here: outputs near zero come from cancelling terms).
OpBound AttentionOpBound(const BoundContext& ctx, const BoundInputs& in);
// AttentionOpBound's data-dependent parts for one query row, in long double from the row's
// exact scores s_k (k = 0..n-1): with w the exact softmax weights and M = max s, per output
// component j, A_j = sum_k w_k (|v_kj| + |o_j|) and B_j = sum_k w_k (|v_kj| + |o_j|) (M - s_k);
// and Q = max_k sum_c |q_c k_kc| / sqrt(d). keys and values are row-major n x d; o the row's
// reference output (d values).
struct AttentionRowBoundParts {
  std::vector<double> a, b;
  double q = 0;
};
AttentionRowBoundParts AttentionBoundParts(std::span<const double> scores,
                                           std::span<const double> query, const double* keys,
                                           std::span<const double> values, std::size_t d,
                                           std::span<const long double> o);

// Two-level sum (FABsum's shape, Blanchard, Higham & Mary 2020, first order): an input in a
// chain of L values passes at most L - 1 rounded INNER additions, the exact conversion, and
// the rounded OUTER combines above its chain, so |s^ - s| <= max_k ((L_k - 1) u_in +
// D_out,k u_out) sum|x| + O(u^2). For blocked:b that is (b - 1) u_in + (n/b - 1) u_out (seq
// outer) or (b - 1) u_in + ceil(log2(n/b)) u_out (pairwise outer).
OpBound FabsumOpBound(const BoundInputs& in, const MergeTree& tree, double u_in, double u_out);
using MixedBoundFn = OpBound (*)(const BoundInputs&, const MergeTree&, double, double);

// Condition numbers (experiments/sweep/FORMAT.md's `cond`): sum|x| / |S| (+inf for S = 0),
// sum|a b| / |a.b|, and kappa = sqrt(sum x^2 / (n var)) (Chan, Golub & LeVeque 1983).
double SumCondition(const BoundInputs& in);
double DotCondition(const BoundInputs& in);
double VarianceConditionOf(const BoundInputs& in);

// sum |x_i| in long double.
long double SumAbs(std::span<const double> x);
// SumAbs(in.x), through in.memo when there is one.
long double SumAbsOf(const BoundInputs& in);

// The softmax weights' statistics the lse and softmax bounds read: M = max x, the spread
// sum w_i (M - x_i) >= 0 and sum w_i |x_i|, with w_i = exp(x_i - M) / sum_j exp(x_j - M) (they
// add to 1 whatever the offset; an input at -inf has weight 0). finite is false when M or the
// lse is not finite (no bound then).
struct SoftmaxSpread {
  long double m = 0, spread = 0, weighted_abs = 0;
  bool finite = false;
};
SoftmaxSpread SoftmaxSpreadOf(const BoundInputs& in);

}  // namespace carrier
