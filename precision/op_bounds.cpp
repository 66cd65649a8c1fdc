#include "precision/op_bounds.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/merge_tree.hpp"
#include "precision/math_policy.hpp"
#include "precision/parallel_pass.hpp"
#include "precision/reference/fixed_exp.hpp"

namespace carrier {

namespace {
// OpBound's two common shapes (naming every field would repeat the defaults; a braced list that
// leaves `detail` out trips -Wmissing-field-initializers).
OpBound Absolute(Bound b) {
  OpBound o;
  o.bound = b;
  return o;
}
OpBound Relative(Bound b) {
  OpBound o;
  o.bound = b;
  o.relative = true;
  return o;
}
}  // namespace

double ExpRelativeError(ExpArithmetic a, double u) {
  switch (a) {
    case ExpArithmetic::kMpfr:
      return u;
    case ExpArithmetic::kEmulated:
      return u + 0x1.0p-52;
    case ExpArithmetic::kNativePortable:
      return 2 * u * kPortableExpMaxUlpF32;
    case ExpArithmetic::kNativeLibm:
      break;
  }
  return 2 * u;
}

long double SumAbs(std::span<const double> x) {
  long double s = 0;
  for (double v : x) s += std::fabs(static_cast<long double>(v));
  return s;
}

void BoundMemo::Get(Slot slot, const BoundInputs& in, long double exact, Fill fill,
                    long double* v) {
  const std::lock_guard<std::mutex> lock(m_);
  Entry& e = slots_[slot];
  const void* data = in.column != nullptr ? in.column->Identity() : in.x.data();
  const std::size_t size = in.Count();
  // exact compared as a value: a NaN reference never matches, so it is never cached.
  if (!(e.set && e.data == data && e.size == size && e.exact == exact)) {
    fill(in, exact, e.v);
    e.data = data;
    e.size = size;
    e.exact = exact;
    e.set = true;
  }
  for (int i = 0; i < kValues; ++i) v[i] = e.v[i];
}

namespace {
// SumAbs over in's column, chunk by chunk: one long double sum in index order, as SumAbs(x).
long double SumAbsIn(const BoundInputs& in) {
  long double s = 0;
  in.Visit([&](std::span<const double> x) {
    for (double v : x) s += std::fabs(static_cast<long double>(v));
  });
  return s;
}
}  // namespace

long double SumAbsOf(const BoundInputs& in) {
  if (in.memo == nullptr) return SumAbsIn(in);
  long double v[BoundMemo::kValues];
  in.memo->Get(
      BoundMemo::kSumAbs, in, 0,
      [](const BoundInputs& b, long double, long double* out) { out[0] = SumAbsIn(b); }, v);
  return v[0];
}

namespace {

long double SumAbsProducts(const BoundInputs& in) {
  long double s = 0;
  in.VisitPairs([&](double a, double b) { s += std::fabs(static_cast<long double>(a) * b); });
  return s;
}

// The pieces lse and softmax share: M = max x, the lse (the certified one when finite), the
// spread sum w_i (M - x_i) of the softmax weights w_i = exp(x_i - M) / sum_j exp(x_j - M)
// about the max, and min x. The spread is what the bounds call M - sum w_i x_i; it is summed
// from non-negative terms with weights that add to 1 by construction, so it is never negative,
// whatever the offset: M - sum w_i x_i, with w_i from the certified lse, cancels at offsets
// near 1e12 (bound -0.00115 for softmax) and at 1e20, where the lse rounds to M, the weights
// add to n (bound -5.96e12). An input at -inf has weight 0 and adds nothing (no 0 * inf).
struct SoftmaxParts {
  long double m = -INFINITY, lse = 0, spread = 0, min_x = 0, weighted_abs = 0;
  bool finite = false;
};
// The passes of Parts over in's values with e[k] = exp(x[k] - m) rounded once to long double
// (reference::ExpShiftedLongDouble: x[k] - m exact, the fixed-point kernel's exp, correctly
// rounded but within 2^-111 of a midpoint; glibc's x87 expl was 65% of the CPU samples of an
// lse fp32 eval at 2^24 and differs from the correctly rounded value in 9% of arguments).
// ForEach(f) calls f(x, e) a block at a time, in order: the exps (the cost of Parts) split across
// PassThreads() (precision/parallel_pass.hpp), each a function of x[k] and m alone, so the same
// values on any thread; f then reads them in index order on the calling thread, as the one loop
// did. A packed column of codes (bf16, fp16, fp8: at most 2^16 values) at least twice as long as
// its code table takes each code's exp once, when constructed, for every pass (ByCode); its
// passes then read the codes alone (ForEachCodes), and a value and its exp are the table entries
// of its code (the value the same double Read gives, so the same exp).
class ExpBlocks {
 public:
  ExpBlocks(const BoundInputs& in, long double m) : in_(in), m_(static_cast<double>(m)) {
    if (in.column != nullptr) values_ = in.column->CodeValues();
    if (values_.empty() || in.Count() / 2 < values_.size()) {
      values_ = {};
      return;
    }
    code_exp_.resize(values_.size());
    Exps(values_, code_exp_.data());
  }

  // Where the passes do not go by code (ByCode() is false). The exps of the next block are
  // taken (PipelinePass) while f reads this one: with two pass threads, the pass's exps and its
  // reader share both cores (the reader's long-double divisions made the second pass of an lse
  // fp32 eval at 2^24 wait on one thread while the other idled).
  template <class F>
  void ForEach(F&& f) const {
    const std::uint64_t n = in_.Count();
    const std::size_t block = Block();
    std::vector<double> buf[2];
    std::vector<long double> e[2];
    for (int s = 0; s < 2; ++s) {
      buf[s].resize(in_.column != nullptr ? block : 0);
      e[s].resize(block);
    }
    // Block values [lo, lo + len) as doubles: read into slot s's buffer, or in_.x's own.
    auto values = [&](int s, std::uint64_t lo, std::uint64_t len) {
      const auto count = static_cast<std::size_t>(len);
      if (in_.column == nullptr) return in_.x.subspan(static_cast<std::size_t>(lo), count);
      double* to = buf[s].data() + lo % block;
      in_.column->Read(lo, count, to);
      return std::span<const double>(to, count);
    };
    PipelinePass(
        n, block, kPiece,
        [&](int s, std::uint64_t lo, std::uint64_t len) {
          reference::ExpShiftedLongDouble(values(s, lo, len), m_, e[s].data() + lo % block);
        },
        [&](int s, std::uint64_t lo, std::uint64_t len) {
          const auto count = static_cast<std::size_t>(len);
          f(in_.column != nullptr ? std::span<const double>(buf[s].data(), count)
                                  : in_.x.subspan(static_cast<std::size_t>(lo), count),
            e[s].data());
        });
  }
  // The most values one block of ForEach holds.
  std::size_t Block() const {
    return static_cast<std::size_t>(std::min<std::uint64_t>(in_.Count(), kPart * Threads()));
  }

  // Where the passes go by code: the code table (values and their exps), and f(codes, len)
  // called a block of codes at a time, in order; value k is Values()[codes[k]], its exp
  // CodeExps()[codes[k]].
  bool ByCode() const { return !values_.empty(); }
  std::span<const double> Values() const { return values_; }
  std::span<const long double> CodeExps() const { return code_exp_; }
  template <class F>
  void ForEachCodes(F&& f) const {
    const std::uint64_t n = in_.Count();
    const std::size_t block = static_cast<std::size_t>(std::min<std::uint64_t>(n, kPart));
    std::vector<std::uint16_t> codes(block);
    for (std::uint64_t lo = 0; lo < n; lo += block) {
      const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(block, n - lo));
      in_.column->ReadCodes(lo, len, codes.data());
      f(codes.data(), len);
    }
  }

 private:
  static constexpr std::size_t kPart = std::size_t{1} << 17;
  static constexpr std::size_t kPiece = std::size_t{1} << 13;  // PipelinePass's unit of work
  static std::size_t Threads() { return static_cast<std::size_t>(PassThreads()); }
  void Exps(std::span<const double> x, long double* e) const {
    const std::size_t parts = std::clamp<std::size_t>(x.size() / kPart, 1, Threads());
    SplitPass(x.size(), parts, [&](std::size_t, std::uint64_t a, std::uint64_t b) {
      reference::ExpShiftedLongDouble(x.subspan(a, b - a), m_, e + a);
    });
  }

  const BoundInputs& in_;
  double m_;                        // the maximum of doubles: exactly a double
  std::span<const double> values_;  // the code table, where the passes go by code
  std::vector<long double> code_exp_;
};

SoftmaxParts Parts(const BoundInputs& in, long double exact, bool recompute) {
  SoftmaxParts p;
  // std::max's choice (a NaN never replaces the running maximum, an equal value never does),
  // in double: the maximum of doubles is one of them, so it converts exactly. The same loop
  // in long double converted every value on the x87 stack (6 ns a value, 10% of an lse fp32
  // eval at 2^24).
  double m = -INFINITY;
  in.Visit([&](std::span<const double> x) {
    for (double v : x) m = m < v ? v : m;
  });
  p.m = m;
  long double d = 0;
  std::optional<ExpBlocks> blocks;  // both passes' (p.finite below implies a finite p.m)
  if (std::isfinite(p.m)) {
    blocks.emplace(in, p.m);
    if (blocks->ByCode()) {
      const std::span<const long double> exps = blocks->CodeExps();
      blocks->ForEachCodes([&](const std::uint16_t* codes, std::size_t len) {
        for (std::size_t k = 0; k < len; ++k) d += exps[codes[k]];
      });
    } else {
      blocks->ForEach([&](std::span<const double> x, const long double* e) {
        for (std::size_t k = 0; k < x.size(); ++k) d += e[k];
      });
    }
  }
  p.lse = exact;
  if (recompute || !std::isfinite(p.lse)) p.lse = p.m + std::log(d);
  p.finite = std::isfinite(p.m) && std::isfinite(p.lse) && d > 0;
  if (!p.finite) return p;
  p.min_x = p.m;
  if (blocks->ByCode()) {
    // Each value's weight and its two terms depend on its code alone: the same expressions
    // once per code, then the sums in index order, as the loop below adds them (a long-double
    // division per value was about 15% of an lse bf16 eval at 2^24).
    const std::span<const double> values = blocks->Values();
    const std::span<const long double> exps = blocks->CodeExps();
    std::vector<long double> spread(values.size()), abs_term(values.size());
    std::vector<std::uint8_t> weighted(values.size());
    for (std::size_t c = 0; c < values.size(); ++c) {
      const double v = values[c];
      const long double w = exps[c] / d;
      weighted[c] = w > 0;
      spread[c] = w * (p.m - v);
      abs_term[c] = w * std::fabs(static_cast<long double>(v));
    }
    blocks->ForEachCodes([&](const std::uint16_t* codes, std::size_t len) {
      for (std::size_t k = 0; k < len; ++k) {
        const std::uint16_t c = codes[k];
        if (weighted[c]) {
          p.spread += spread[c];
          p.weighted_abs += abs_term[c];
        }
        p.min_x = std::min<long double>(p.min_x, values[c]);
      }
    });
    return p;
  }
  blocks->ForEach([&](std::span<const double> x, const long double* e) {
    for (std::size_t k = 0; k < x.size(); ++k) {
      const double v = x[k];
      const long double w = e[k] / d;
      if (w > 0) {
        p.spread += w * (p.m - v);
        p.weighted_abs += w * std::fabs(static_cast<long double>(v));
      }
      p.min_x = std::min<long double>(p.min_x, v);
    }
  });
  return p;
}

// Parts(in, in.Exact(), false), through in.memo when there is one.
SoftmaxParts LseParts(const BoundInputs& in) {
  if (in.memo == nullptr) return Parts(in, in.Exact(), false);
  long double v[BoundMemo::kValues];
  in.memo->Get(
      BoundMemo::kSoftmaxParts, in, in.Exact(),
      [](const BoundInputs& b, long double exact, long double* out) {
        const SoftmaxParts p = Parts(b, exact, false);
        out[0] = p.m;
        out[1] = p.lse;
        out[2] = p.spread;
        out[3] = p.min_x;
        out[4] = p.finite ? 1 : 0;
        out[5] = p.weighted_abs;
      },
      v);
  SoftmaxParts p;
  p.m = v[0];
  p.lse = v[1];
  p.spread = v[2];
  p.min_x = v[3];
  p.finite = v[4] != 0;
  p.weighted_abs = v[5];
  return p;
}

}  // namespace

SoftmaxSpread SoftmaxSpreadOf(const BoundInputs& in) {
  const SoftmaxParts p = LseParts(in);  // the lse bound's own parts: computed once per input
  return {p.m, p.spread, p.weighted_abs, p.finite};
}

OpBound SumOpBound(const BoundContext& ctx, const BoundInputs& in) {
  return Absolute(SumBound(ctx.depth, ctx.u, static_cast<double>(SumAbsOf(in))));
}

OpBound NeumaierOpBound(const BoundContext& ctx, const BoundInputs& in) {
  return Absolute(CompensatedBound(ctx.depth, ctx.u, static_cast<double>(std::fabs(in.Exact())),
                                   static_cast<double>(SumAbsOf(in))));
}

OpBound ExactOpBound(const BoundContext&, const BoundInputs&) { return Absolute(ExactBound()); }

OpBound Norm2OpBound(const BoundContext& ctx, const BoundInputs& in) {
  const double norm = static_cast<double>(in.Exact());
  Bound b = Norm2Bound(ctx.depth, ctx.u, norm, ctx.combines, ctx.eta);
  if (ctx.u < 0x1p-53) {
    // Below double's own u (fp128, mpfr:BITS over 53) the factor (1+u)^2 sqrt(...) rounds to 1
    // in double and the bound to 0: the same relative factor without the cancellation,
    // expm1(2 log1p(u) + log1p(gamma_{5D} + 4 N eta) / 2). Above it Norm2Bound's own form is
    // kept, so results computed before stay bit for bit.
    const double g = Gamma(5.0 * static_cast<double>(ctx.depth), ctx.u) +
                     4 * static_cast<double>(ctx.combines) * ctx.eta;
    b.value = std::expm1(2 * std::log1p(ctx.u) + std::log1p(g) / 2) * norm + ctx.eta / 2;
  }
  return Absolute(b);
}

OpBound DotOpBound(const BoundContext& ctx, const BoundInputs& in) {
  return Absolute(DotBound(ctx.depth, ctx.u, static_cast<double>(SumAbsProducts(in))));
}

OpBound AffineOpBound(const BoundContext& ctx, const BoundInputs& in) {
  // sum_k |prod_{j>k} a_j| |b_k|, accumulated from the last map backwards.
  long double weight = 1, s = 0;
  in.VisitPairs<true>([&](double a, double b) {
    s += weight * std::fabs(static_cast<long double>(b));
    weight *= std::fabs(static_cast<long double>(a));
  });
  return Absolute(AffineBBound(in.PairCount(), ctx.depth, ctx.u, static_cast<double>(s)));
}

OpBound LseOpBound(const BoundContext& ctx, const BoundInputs& in) {
  const SoftmaxParts p = LseParts(in);
  if (!p.finite) return Absolute(ExactBound());
  return Absolute(LseBound(ctx.depth, ctx.u, ctx.u_exp, ctx.u_log, static_cast<double>(p.lse),
                           static_cast<double>(p.spread), static_cast<double>(p.lse - p.m)));
}

OpBound SoftmaxOpBound(const BoundContext& ctx, const BoundInputs& in) {
  const SoftmaxParts p = Parts(in, 0, true);
  if (!p.finite) return Relative(ExactBound());
  // The componentwise bound is largest for the smallest element. Outputs below the normal
  // range lose relative accuracy: e^{x_i - m} and the division by d each round to a multiple
  // of the subnormal spacing eta, an absolute error of at most eta apiece, so component i
  // gains 2 eta / p_i relative, largest for the smallest output p_min = e^{min x - lse}.
  Bound b = SoftmaxRelBound(ctx.depth, ctx.u, ctx.u_exp, static_cast<double>(p.spread),
                            static_cast<double>(p.m - p.min_x));
  if (ctx.eta > 0) {
    const long double p_min = std::exp(p.min_x - p.lse);
    b.value +=
        p_min > 0 ? static_cast<double>(2 * static_cast<long double>(ctx.eta) / p_min) : INFINITY;
    b.formula = "rho + u_e + u(M - x_i) + 2u + 2 eta / p_i (relative; eta: subnormal spacing)";
  }
  return Relative(b);
}

OpBound WelfordOpBound(const BoundContext& ctx, const BoundInputs& in) {
  const double n = static_cast<double>(in.Count());
  const long double exact_mean = in.exact.empty() ? 0 : in.exact[0];
  const double m2 = static_cast<double>(in.Exact() * static_cast<long double>(in.Count()));
  return Relative(WelfordVarianceRelBound(
      ctx.depth, ctx.u, VarianceCondition(n, static_cast<double>(exact_mean), m2)));
}

OpBound AttentionOpBound(const BoundContext& ctx, const BoundInputs& in) {
  OpBound ob;
  ob.relative = true;
  ob.normwise = true;
  ob.bound.rigorous = false;
  ob.bound.formula =
      "max_j [u|o_j| + A_j (D (2u + u_e) + u + 2 (gamma_{d+1} + u) Q) + u B_j] / "
      "max_j |o_j| (normwise)";
  const std::size_t d = in.head_dim;
  if (d == 0 || in.attention_a.size() != in.exact.size() ||
      in.attention_b.size() != in.exact.size() || in.attention_q.size() * d != in.exact.size()) {
    ob.bound.value = INFINITY;  // the reference did not supply the bound's parts
    return ob;
  }
  const double u = ctx.u;
  const double dd = static_cast<double>(d);
  const double gamma = (dd + 1) * u / (1 - (dd + 1) * u);
  const double depth = static_cast<double>(ctx.depth);
  double worst = 0, norm = 0;
  for (std::size_t idx = 0; idx < in.exact.size(); ++idx) {
    const double oj = std::fabs(static_cast<double>(in.exact[idx]));
    const double score_err = 2 * (gamma + u) * in.attention_q[idx / d];
    const double bj = u * oj + in.attention_a[idx] * (depth * (2 * u + ctx.u_exp) + u + score_err) +
                      u * in.attention_b[idx];
    worst = std::max(worst, bj);
    norm = std::max(norm, oj);
  }
  ob.bound.value = norm > 0 ? worst / norm : INFINITY;
  return ob;
}

AttentionRowBoundParts AttentionBoundParts(std::span<const double> scores,
                                           std::span<const double> query, const double* keys,
                                           std::span<const double> values, std::size_t d,
                                           std::span<const long double> o) {
  const std::size_t n = scores.size();
  AttentionRowBoundParts out;
  long double m = -INFINITY, total = 0, qmax = 0;
  for (double sc : scores) m = std::max<long double>(m, sc);
  std::vector<long double> w(n);
  for (std::size_t k = 0; k < n; ++k)
    total += (w[k] = std::exp(static_cast<long double>(scores[k]) - m));
  for (std::size_t k = 0; k < n; ++k) {
    w[k] /= total;
    long double qk = 0;
    for (std::size_t c = 0; c < d; ++c)
      qk += std::fabs(static_cast<long double>(query[c]) * keys[k * d + c]);
    qmax = std::max(qmax, qk / std::sqrt(static_cast<long double>(d)));
  }
  for (std::size_t j = 0; j < d; ++j) {
    const long double oj = std::fabs(o[j]);
    long double a = 0, b = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const long double t = w[k] * (std::fabs(static_cast<long double>(values[k * d + j])) + oj);
      a += t;
      b += t * (m - scores[k]);
    }
    out.a.push_back(static_cast<double>(a));
    out.b.push_back(static_cast<double>(b));
  }
  out.q = static_cast<double>(qmax);
  return out;
}

OpBound FabsumOpBound(const BoundInputs& in, const MergeTree& tree, double u_in, double u_out) {
  // Per chain k: its rounded pushes (count - 1, its longest in-chain path) and the combines
  // above it that round (those whose other operand is not empty; ComputeStats' rule).
  const std::size_t c = tree.chains.size();
  std::vector<std::uint64_t> count(tree.NodeCount(), 0), above(tree.NodeCount(), 0);
  for (std::size_t k = 0; k < c; ++k) count[k] = tree.chains[k].count;
  for (std::size_t m = 0; m < tree.combines.size(); ++m)
    count[c + m] = count[tree.combines[m].left] + count[tree.combines[m].right];
  for (std::size_t m = tree.combines.size(); m-- > 0;) {
    const auto& op = tree.combines[m];
    above[op.left] = above[c + m] + (count[op.right] > 0 ? 1 : 0);
    above[op.right] = above[c + m] + (count[op.left] > 0 ? 1 : 0);
  }
  double worst = 0;
  std::uint64_t d_in = 0, d_out = 0;
  for (std::size_t k = 0; k < c; ++k) {
    if (count[k] == 0) continue;
    const double v =
        static_cast<double>(count[k] - 1) * u_in + static_cast<double>(above[k]) * u_out;
    if (v >= worst) {
      worst = v;
      d_in = count[k] - 1;
      d_out = above[k];
    }
  }
  OpBound ob;
  ob.bound.value = worst * static_cast<double>(SumAbsOf(in));
  ob.bound.rigorous = false;
  ob.bound.formula =
      "((L-1) u_in + D_out u_out) sum|x|, max over chains (FABsum, first order; blocked:b: L = "
      "b, D_out = n/b - 1 seq or ceil(log2(n/b)) pairwise)";
  ob.detail = "; here L-1 = " + std::to_string(d_in) + ", D_out = " + std::to_string(d_out);
  ob.relative = false;
  ob.vacuous = worst >= 1 || !std::isfinite(ob.bound.value);
  return ob;
}

double SumCondition(const BoundInputs& in) {
  const long double exact = in.exact.empty() ? 0 : in.exact[0];
  return exact == 0 ? INFINITY : static_cast<double>(SumAbsOf(in) / std::fabs(exact));
}

double DotCondition(const BoundInputs& in) {
  const long double exact = in.exact.empty() ? 0 : in.exact[0];
  return exact == 0 ? INFINITY : static_cast<double>(SumAbsProducts(in) / std::fabs(exact));
}

double VarianceConditionOf(const BoundInputs& in) {
  auto sum_squares = [](const BoundInputs& b, long double, long double* out) {
    long double sq = 0;
    b.Visit([&](std::span<const double> x) {
      for (double v : x) sq += static_cast<long double>(v) * v;
    });
    out[0] = sq;
  };
  long double memo[BoundMemo::kValues];
  if (in.memo == nullptr) {
    sum_squares(in, 0, memo);
  } else {
    in.memo->Get(BoundMemo::kSumSquares, in, 0, sum_squares, memo);
  }
  const long double sq = memo[0];
  const long double var = in.exact.size() > 1 ? in.exact[1] : 0;
  const long double nvar = var * static_cast<long double>(in.Count());
  return nvar == 0 ? INFINITY : static_cast<double>(std::sqrt(sq / nvar));
}

OpBound MmaDotOpBound(const MergeTree& tree, std::uint64_t longest_chain,
                      std::uint64_t max_leaf_depth, double u, const BoundInputs& in) {
  const std::uint64_t g = tree.fused.terms;
  const std::uint64_t steps = (longest_chain + g - 1) / g;
  const std::uint64_t adds = max_leaf_depth > steps ? max_leaf_depth - steps : 0;
  OpBound ob;
  ob.bound.value = (static_cast<double>(steps) * MmaStepErrorCoefficient(tree.fused) +
                    static_cast<double>(adds) * u) *
                   static_cast<double>(SumAbsProducts(in));
  ob.bound.rigorous = false;
  ob.bound.formula = "(S c_F + D u) sum|a b| (fused steps, first order)";
  ob.detail =
      ": S = " + std::to_string(steps) + ", c_F = (k+1) 2^-F + u_out, D = " + std::to_string(adds);
  ob.vacuous = !std::isfinite(ob.bound.value);
  return ob;
}

}  // namespace carrier
