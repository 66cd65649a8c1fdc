// precision/attention_model.cpp: the three attention algorithms of attention_model.hpp.
#include "precision/attention_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include "core/carriers/pairs.hpp"
#include "core/mma.hpp"
#include "precision/rounding.hpp"

namespace carrier {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLog2E = 1.4426950408889634;  // log2(e): FlashAttention-4 compares in log2 units

// The arithmetic of one role: each operation's exact result rounded once into the role.
class RoleOps {
 public:
  RoleOps(const RoleArithmetic& r, StochasticBits* sr) : f_(r.format), r_(r.rounding), sr_(sr) {
    const bool rne = r.rounding == Rounding::kNearestEven;
    if (r.format == Fp64()) {
      if (!rne) {
        throw std::invalid_argument("attention model: fp64 roles compute with rne only (got " +
                                    std::string(RoundingName(r.rounding)) + ")");
      }
      kind_ = Kind::kDouble;
    } else if (r.format == Fp32() && rne) {
      kind_ = Kind::kFloat;
    } else {
      if (r.format.precision > 51) {
        throw std::invalid_argument("attention model: format " + r.format.name +
                                    " has more than 51 bits; use fp64 (rne)");
      }
      kind_ = Kind::kGeneric;
    }
    min_normal_ = r.format.MinNormal();
    max_finite_ = r.format.MaxFinite();
  }

  double Round(double x) const {
    switch (kind_) {
      case Kind::kDouble:
        return x;
      case Kind::kFloat:
        return static_cast<double>(static_cast<float>(x));
      case Kind::kGeneric:
        break;
    }
    // Round to nearest even by integer arithmetic on the double's bits where x and its
    // rounding are normal and finite in the format (the common case); RoundToFormat elsewhere.
    const double ax = std::fabs(x);
    if (r_ == Rounding::kNearestEven && ax >= min_normal_ && ax <= max_finite_) {
      std::uint64_t bits;
      __builtin_memcpy(&bits, &x, sizeof x);
      const unsigned shift = 53U - static_cast<unsigned>(f_.precision);
      const std::uint64_t lsb = (bits >> shift) & 1U;
      bits += (std::uint64_t{1} << (shift - 1)) - 1 + lsb;
      bits &= ~((std::uint64_t{1} << shift) - 1);
      double y;
      __builtin_memcpy(&y, &bits, sizeof y);
      if (std::fabs(y) <= max_finite_) return y;
    }
    return RoundToFormat(x, f_, r_, sr_);
  }

  double Add(double a, double b) const {
    if (kind_ == Kind::kDouble) return a + b;
    if (kind_ == Kind::kFloat && IsFloat(a) && IsFloat(b)) {
      return static_cast<double>(static_cast<float>(a) + static_cast<float>(b));
    }
    const double s = a + b;
    if (!std::isfinite(s)) return Round(s);
    const double bb = s - a;
    const double err = (a - (s - bb)) + (b - bb);  // TwoSum: a + b == s + err exactly
    return Round(ToOdd(s, err));
  }
  double Sub(double a, double b) const { return Add(a, -b); }

  double Mul(double a, double b) const {
    if (kind_ == Kind::kDouble) return a * b;
    if (kind_ == Kind::kFloat && IsFloat(a) && IsFloat(b)) {
      return static_cast<double>(static_cast<float>(a) * static_cast<float>(b));
    }
    const double p = a * b;
    if (!std::isfinite(p) || p == 0) return Round(p);
    return Round(ToOdd(p, std::fma(a, b, -p)));
  }

  double Div(double a, double b) const {
    if (kind_ == Kind::kDouble) return a / b;
    if (kind_ == Kind::kFloat && IsFloat(a) && IsFloat(b)) {
      return static_cast<double>(static_cast<float>(a) / static_cast<float>(b));
    }
    const double q = a / b;
    if (!std::isfinite(q) || q == 0 || !std::isfinite(b)) return Round(q);
    const double rem = std::fma(-q, b, a);  // a - q b, exact
    return Round(ToOdd(q, (rem > 0) == (b > 0) ? rem : -rem));
  }

  double Exp(double x) const { return Round(std::exp(x)); }

 private:
  enum class Kind { kDouble, kFloat, kGeneric };

  static bool IsFloat(double x) { return static_cast<double>(static_cast<float>(x)) == x; }

  // s = RN(x) and x = s + err (or err of x's sign): the double rounded to odd of x.
  static double ToOdd(double s, double err) {
    if (err == 0) return s;
    std::uint64_t bits;
    static_assert(sizeof bits == sizeof s);
    __builtin_memcpy(&bits, &s, sizeof s);
    if (bits & 1U) return s;
    return std::nextafter(s, err > 0 ? kInf : -kInf);
  }

  Format f_;
  Rounding r_;
  StochasticBits* sr_;
  Kind kind_ = Kind::kGeneric;
  double min_normal_ = 0, max_finite_ = 0;
};

struct Ops {
  RoleOps prod, acc, state, s, p, out;
  std::optional<RoleOps> ew;     // the tensor-op (elementwise) format, when modelled
  std::optional<RoleOps> recip;  // the normaliser's reciprocal (kFa2), when the policy sets it
};

// dot(c, a, b) of the contract: a chain in acc of products rounded to prod onto c, or the
// matrix unit. b is read with a stride (a column of V).
double Dot(const Ops& o, const AttentionModelSpec& spec, double c, const double* a, const double* b,
           std::size_t k, std::size_t stride_b) {
  if (!spec.policy.mma.empty()) {
    if (stride_b == 1) return spec.matrix_dot(c, a, b, k);
    std::vector<double> col(k);
    for (std::size_t t = 0; t < k; ++t) col[t] = b[t * stride_b];
    return spec.matrix_dot(c, a, col.data(), k);
  }
  double acc = c;
  for (std::size_t t = 0; t < k; ++t) acc = o.acc.Add(acc, o.prod.Mul(a[t], b[t * stride_b]));
  return acc;
}

void CheckSpec(const AttentionModelSpec& spec, std::size_t q_size, std::size_t k_size,
               std::size_t v_size) {
  if (spec.seq_len == 0 || spec.head_dim == 0 || spec.block_r == 0 || spec.block_c == 0) {
    throw std::invalid_argument(
        "attention model: seq_len, head_dim, block_r and block_c must be positive");
  }
  const std::size_t want = spec.seq_len * spec.head_dim;
  if (q_size != want || k_size != want || v_size != want) {
    throw std::invalid_argument("attention model: q, k and v must each hold seq_len x head_dim = " +
                                std::to_string(want) + " values");
  }
}

void RowFa(const Ops& o, const AttentionModelSpec& spec, const double* qi, const double* k,
           const double* v, double scale, double* out_row, bool fa1) {
  const std::size_t n = spec.seq_len, d = spec.head_dim, bc = spec.block_c;
  const double pscale = spec.policy.pscale;
  // T(x): a tensor op's output written in the elementwise format (identity when unset).
  const bool tensor_ops = o.ew.has_value();
  const auto T = [&o](double x) { return o.ew ? o.ew->Round(x) : x; };
  double m = -kInf, l = 0;
  std::vector<double> acc_o(d, 0.0), sc(bc), pr(bc), pq(bc);
  for (std::size_t j0 = 0; j0 < n; j0 += bc) {
    const std::size_t len = std::min(bc, n - j0);
    double tile_max = -kInf;
    for (std::size_t t = 0; t < len; ++t) {
      sc[t] = o.s.Round(o.acc.Mul(Dot(o, spec, 0.0, qi, k + (j0 + t) * d, d, 1), scale));
      tile_max = std::max(tile_max, sc[t]);
    }
    double m_new = o.state.Round(std::max(m, tile_max));
    // FlashAttention-4's lazy rescale: while the max grew by at most `rescale` log2 units the
    // old max stays, and O and l are not rescaled (a = 1, an exact no-op).
    const bool keep_max = !fa1 && spec.policy.rescale > 0 && m != -kInf &&
                          (m_new - m) * kLog2E <= spec.policy.rescale;
    if (keep_max) m_new = m;
    // exp(-inf - finite) = 0: the first tile's rescale factor.
    const double alpha = m == -kInf ? 0.0 : keep_max ? 1.0 : T(o.acc.Exp(T(o.acc.Sub(m, m_new))));
    const double shift = fa1 ? tile_max : m_new;
    double row_sum = 0;
    for (std::size_t t = 0; t < len; ++t) {
      pr[t] = sc[t] == -kInf ? 0.0 : T(o.acc.Exp(T(o.acc.Sub(sc[t], shift))));
      row_sum = o.acc.Add(row_sum, pr[t]);
      pq[t] = o.p.Round(pr[t] * pscale);  // pscale is a power of two: exact
    }
    row_sum = T(row_sum);
    if (!fa1) {
      l = o.state.Round(T(o.acc.Add(T(o.acc.Mul(alpha, l)), row_sum)));
      for (std::size_t c = 0; c < d; ++c) {  // acc_o carries pscale O
        const double rescaled = T(o.acc.Mul(alpha, acc_o[c]));
        if (tensor_ops) {  // O = a O + P V as two tensor ops
          const double pv = T(Dot(o, spec, 0.0, pq.data(), v + j0 * d + c, len, d));
          acc_o[c] = o.state.Round(T(o.acc.Add(rescaled, pv)));
        } else {
          acc_o[c] = o.state.Round(Dot(o, spec, rescaled, pq.data(), v + j0 * d + c, len, d));
        }
      }
    } else {
      const double beta = T(o.acc.Exp(T(o.acc.Sub(tile_max, m_new))));
      const double l_new =
          o.state.Round(T(o.acc.Add(T(o.acc.Mul(alpha, l)), T(o.acc.Mul(beta, row_sum)))));
      const double la = T(o.acc.Mul(l, alpha));
      for (std::size_t c = 0; c < d; ++c) {
        const double pv = T(Dot(o, spec, 0.0, pq.data(), v + j0 * d + c, len, d) / pscale);
        const double num = T(o.acc.Add(T(o.acc.Mul(la, acc_o[c])), T(o.acc.Mul(beta, pv))));
        acc_o[c] = o.state.Round(T(o.acc.Div(num, l_new)));
      }
      l = l_new;
    }
    m = m_new;
  }
  if (!fa1 && o.recip) {  // O times the rounded reciprocal of l (FlashAttention-4)
    const double r = o.recip->Div(1.0, l);
    for (std::size_t c = 0; c < d; ++c)
      out_row[c] = o.out.Round(T(o.acc.Mul(acc_o[c] / pscale, r)));
    return;
  }
  for (std::size_t c = 0; c < d; ++c) {
    out_row[c] = fa1 ? o.out.Round(acc_o[c]) : o.out.Round(T(o.acc.Div(acc_o[c] / pscale, l)));
  }
}

void RowBaseline(const Ops& o, const AttentionModelSpec& spec, const double* qi, const double* k,
                 const double* v, double scale, double* out_row) {
  const std::size_t n = spec.seq_len, d = spec.head_dim;
  const double pscale = spec.policy.pscale;
  std::vector<double> sc(n), e(n);
  double m = -kInf;
  for (std::size_t j = 0; j < n; ++j) {
    sc[j] = o.s.Round(o.acc.Mul(Dot(o, spec, 0.0, qi, k + j * d, d, 1), scale));
    m = std::max(m, sc[j]);
  }
  double sum = 0;
  for (std::size_t j = 0; j < n; ++j) {
    e[j] = sc[j] == -kInf ? 0.0 : o.acc.Exp(o.acc.Sub(sc[j], m));
    sum = o.acc.Add(sum, e[j]);
  }
  for (std::size_t j = 0; j < n; ++j) e[j] = o.p.Round(o.acc.Div(e[j], sum) * pscale);
  for (std::size_t c = 0; c < d; ++c) {
    out_row[c] = o.out.Round(Dot(o, spec, 0.0, e.data(), v + c, n, d) / pscale);
  }
}

}  // namespace

std::string AttentionAlgorithmName(AttentionAlgorithm a) {
  switch (a) {
    case AttentionAlgorithm::kFa2:
      return "fa2";
    case AttentionAlgorithm::kFa1:
      return "fa1";
    case AttentionAlgorithm::kBaseline:
      break;
  }
  return "baseline";
}

AttentionAlgorithm ParseAttentionAlgorithm(const std::string& text) {
  for (AttentionAlgorithm a :
       {AttentionAlgorithm::kFa2, AttentionAlgorithm::kFa1, AttentionAlgorithm::kBaseline}) {
    if (AttentionAlgorithmName(a) == text) return a;
  }
  throw std::invalid_argument("attention algorithm '" + text + "' is not one of: fa2 fa1 baseline");
}

MatrixDot MatrixDotFor(const std::string& profile) {
  const MmaProfile* p = FindMmaProfile(profile);
  if (p == nullptr) {
    throw std::invalid_argument("attention model: unknown mma profile '" + profile +
                                "'; profiles: " + MmaProfileNames());
  }
  const MmaNode node = p->node;
  return [node](double c, const double* a, const double* b, std::size_t k) {
    std::vector<ValuePair<double>> pairs(k);
    for (std::size_t t = 0; t < k; ++t) pairs[t] = {a[t], b[t]};
    return MmaFusedChain(node, c, pairs.data(), k);
  };
}

std::vector<double> AttentionModel(std::span<const double> q, std::span<const double> k,
                                   std::span<const double> v, const AttentionModelSpec& in_spec) {
  AttentionModelSpec spec = in_spec;
  if (!spec.policy.mma.empty() && !spec.matrix_dot) spec.matrix_dot = MatrixDotFor(spec.policy.mma);
  CheckSpec(spec, q.size(), k.size(), v.size());
  StochasticBits sr{spec.sr_seed, 0};
  const PrecisionPolicy& pol = spec.policy;
  Ops o{RoleOps(pol.prod, &sr), RoleOps(pol.acc, &sr), RoleOps(pol.state, &sr),
        RoleOps(pol.s, &sr),    RoleOps(pol.p, &sr),   RoleOps(pol.out, &sr),
        std::nullopt,           std::nullopt};
  if (spec.elementwise) o.ew.emplace(*spec.elementwise, &sr);
  if (pol.recip) o.recip.emplace(*pol.recip, &sr);
  const std::size_t n = spec.seq_len, d = spec.head_dim;
  const double scale = o.acc.Div(1.0, o.acc.Round(std::sqrt(static_cast<double>(d))));
  std::vector<double> out(n * d);
  // Query rows in blocks of Br: the grouping of the kernel's outer loop. Each row's arithmetic
  // depends on its own q row only.
  for (std::size_t r0 = 0; r0 < n; r0 += spec.block_r) {
    for (std::size_t i = r0; i < std::min(n, r0 + spec.block_r); ++i) {
      const double* qi = q.data() + i * d;
      double* oi = out.data() + i * d;
      switch (spec.algorithm) {
        case AttentionAlgorithm::kFa2:
          RowFa(o, spec, qi, k.data(), v.data(), scale, oi, false);
          break;
        case AttentionAlgorithm::kFa1:
          RowFa(o, spec, qi, k.data(), v.data(), scale, oi, true);
          break;
        case AttentionAlgorithm::kBaseline:
          RowBaseline(o, spec, qi, k.data(), v.data(), scale, oi);
          break;
      }
    }
  }
  return out;
}

std::vector<double> StoreAttentionInputs(std::span<const double> x, const Format& in) {
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    out[i] = RoundToFormat(x[i], in, Rounding::kNearestEven);
  }
  return out;
}

PrecisionPolicy Fp64Policy() { return ParsePrecisionPolicy("in=fp64"); }

AttentionArithmetic ParseAttentionArithmetic(std::string_view text) {
  const std::string_view torch = "torch-";
  if (text.substr(0, torch.size()) == torch) {
    const std::string fmt(text.substr(torch.size()));
    const Format f = [&] {
      try {
        return ParseFormat(fmt);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("attention arithmetic '" + std::string(text) +
                                    "': " + e.what());
      }
    }();
    // The accumulate type: fp32, or the format itself where it is wider.
    const std::string acc = f.precision > Fp32().precision ? fmt : "fp32";
    AttentionArithmetic a;
    a.policy = ParsePrecisionPolicy("in=" + fmt + ",acc=" + acc + ",state=" + fmt + ",s=" + fmt +
                                    ",p=" + fmt + ",out=" + fmt);
    a.elementwise = RoleArithmetic{f, Rounding::kNearestEven};
    return a;
  }
  // Split off one `ew=` item; the rest is the policy's own text.
  std::string rest;
  std::optional<std::string> ew;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.substr(0, 3) == "ew=") {
      if (ew)
        throw std::invalid_argument("attention arithmetic: ew= given twice in '" +
                                    std::string(text) + "'");
      if (start == 0) {
        throw std::invalid_argument("attention arithmetic: ew= cannot be the first item of '" +
                                    std::string(text) + "' (give the policy first)");
      }
      ew = std::string(item.substr(3));
    } else {
      rest += (rest.empty() ? "" : ",") + std::string(item);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  AttentionArithmetic a;
  a.policy = ParsePrecisionPolicy(rest);
  if (ew) {
    const std::size_t at = ew->find('@');
    RoleArithmetic r;
    try {
      r.format = ParseFormat(ew->substr(0, at));
      if (at != std::string::npos) r.rounding = ParseRounding(ew->substr(at + 1));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("attention arithmetic: ew=" + *ew + ": " + e.what());
    }
    a.elementwise = r;
  }
  return a;
}

Deviation MeasureDeviation(std::span<const double> o, std::span<const double> golden) {
  Deviation dev;
  if (o.size() != golden.size() || o.empty()) {
    throw std::invalid_argument("deviation: outputs and golden values differ in size or are empty");
  }
  double sum = 0;
  for (std::size_t i = 0; i < o.size(); ++i) {
    const double e = std::fabs(o[i] - golden[i]);
    dev.max = std::max(dev.max, e);
    sum += e;
  }
  dev.mean = sum / static_cast<double>(o.size());
  double ss = 0;
  for (std::size_t i = 0; i < o.size(); ++i) {
    const double e = std::fabs(o[i] - golden[i]) - dev.mean;
    ss += e * e;
  }
  dev.stddev = std::sqrt(ss / static_cast<double>(o.size()));
  return dev;
}

}  // namespace carrier
