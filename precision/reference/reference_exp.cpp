// precision/reference/reference_exp.cpp: the exp-based ops: lse and softmax (fast tier, mpfr
// tier as fallback), attention (mpfr tier), and the benchmark's plain-MPFR baseline.
// Contracts in reference.hpp; the fast tier's kernel and bound in fixed_exp.hpp.
// Over 600 lines by choice: lse, softmax, attention share file-local helpers (scan, fall-back).
#include "precision/reference/reference_internal.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <gmp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "precision/reference/fixed_exp.hpp"

namespace carrier::reference {

namespace {

using internal::kExactLog2;
using internal::kInf;
using internal::kNaN;
using internal::Start;

constexpr double kLn2 = 0.69314718055994530942;
constexpr mpfr_prec_t kFastFinishBits = 256;  // the one log / reciprocal of the fast tier

// Row summary shared by lse and softmax.
struct RowScan {
  bool nan = false;
  std::size_t pos_inf = 0;
  double max = -kInf;
};

// The loop `for v in x: if NaN, flag; else count +inf and max = std::max(max, v)`, with eight
// interleaved lanes (lane k takes the x[i] with i = k mod 8) that the compiler keeps in vector
// registers instead of one branchy chain. A lane keeps its maximum unless it is below v, as
// std::max does, so NaNs never enter. Elements equal to the maximum all have its bits except
// +-0, so when the maximum is zero the loop's own answer, the first zero, is looked up.
RowScan Scan(std::span<const double> x) {
  constexpr std::size_t kWidth = 8;
  double max[kWidth];
  std::uint64_t nan[kWidth] = {}, pos_inf[kWidth] = {};
  for (double& m : max) m = -kInf;
  const std::size_t n = x.size(), body = n - n % kWidth;
  for (std::size_t i = 0; i < body; i += kWidth)
    for (std::size_t k = 0; k < kWidth; ++k) {
      const double v = x[i + k];
      nan[k] += v != v;
      pos_inf[k] += v == kInf;
      max[k] = max[k] < v ? v : max[k];
    }
  for (std::size_t i = body; i < n; ++i) {
    const double v = x[i];
    nan[0] += v != v;
    pos_inf[0] += v == kInf;
    max[0] = max[0] < v ? v : max[0];
  }
  RowScan s;
  for (std::size_t k = 0; k < kWidth; ++k) {
    s.nan = s.nan || nan[k] != 0;
    s.pos_inf += pos_inf[k];
    s.max = std::max(s.max, max[k]);
  }
  if (s.max == 0)
    for (const double v : x)
      if (v == 0) {
        s.max = v;
        break;
      }
  return s;
}

void MarkExactSpecial(Reference& r) { internal::MarkExact(r, 53, kExactLog2); }

// S_hat (Q64.192 words) as an exact MPFR value.
void SumToMpfr(const ShiftedExpSum& s, mpfr_ptr out) {
  mpz_t z;
  mpz_init(z);
  mpz_import(z, 4, -1, sizeof(std::uint64_t), 0, 0, s.word);
  mpfr_set_prec(out, kFastFinishBits);
  const int ternary = mpfr_set_z_2exp(out, z, -192, MPFR_RNDN);  // 256 bits hold it exactly
  mpz_clear(z);
  if (ternary != 0) throw std::logic_error("reference: S_hat conversion was not exact");
}

// log2 of a positive MPFR value without underflow (values far below the double range).
double Log2Of(mpfr_srcptr v) {
  if (mpfr_zero_p(v)) return -kInf;
  long e = 0;
  const double m = mpfr_get_d_2exp(&e, v, MPFR_RNDU);
  return static_cast<double>(e) + std::log2(std::fabs(m));
}

// The mpfr tier's lse at p bits: terms below 2^-(p + 70) relative to the maximum's term are
// skipped (their sum is below 2^-(p + 6) of S >= 1).
void EvaluateLse(std::span<const double> x, double m, mpfr_prec_t p, std::vector<MpfrValue>& out) {
  const double cut = -static_cast<double>(p + 70) * kLn2;
  MpfrValue acc(p + 64, 0.0), y(p), t(p), lse(p);
  for (double v : x) {
    if (v == -kInf) continue;
    if (v == m) {
      mpfr_add_ui(acc.get(), acc.get(), 1, MPFR_RNDN);
      continue;
    }
    mpfr_set_d(y.get(), v, MPFR_RNDN);
    mpfr_sub_d(y.get(), y.get(), m, MPFR_RNDN);
    if (mpfr_cmp_d(y.get(), cut) < 0) continue;
    mpfr_exp(t.get(), y.get(), MPFR_RNDN);
    mpfr_add(acc.get(), acc.get(), t.get(), MPFR_RNDN);
  }
  mpfr_log(lse.get(), acc.get(), MPFR_RNDN);
  mpfr_add_d(lse.get(), lse.get(), m, MPFR_RNDN);
  out.clear();
  out.push_back(std::move(lse));
}

// The fast tier's lse. Error budget (all absolute, in lse): |log S_hat - log S| <= rho / (1 -
// rho) with rho = S.RelErrorBound(); the log and the addition of m each round once at 256
// bits (at most 2^-256 relative, counted only when MPFR reports them inexact).
void FastLseFrom(const ShiftedExpSum& sum, double m, const Options& options, Reference& r) {
  MpfrValue s;
  SumToMpfr(sum, s.get());
  MpfrValue log_s(kFastFinishBits), lse(kFastFinishBits);
  const bool log_inexact = mpfr_log(log_s.get(), s.get(), MPFR_RNDN) != 0;
  const bool add_inexact = mpfr_add_d(lse.get(), log_s.get(), m, MPFR_RNDN) != 0;
  const double rho = sum.RelErrorBound();
  MpfrValue err(64), term(64);
  mpfr_set_d(err.get(), rho, MPFR_RNDU);
  mpfr_mul_d(err.get(), err.get(), 1.0 + 2.0 * rho, MPFR_RNDU);  // rho / (1 - rho), rho < 1/2
  if (log_inexact) {
    mpfr_abs(term.get(), log_s.get(), MPFR_RNDU);
    mpfr_mul_2si(term.get(), term.get(), -static_cast<long>(kFastFinishBits), MPFR_RNDU);
    mpfr_add(err.get(), err.get(), term.get(), MPFR_RNDU);
  }
  if (add_inexact) {
    mpfr_abs(term.get(), lse.get(), MPFR_RNDU);
    mpfr_mul_2si(term.get(), term.get(), -static_cast<long>(kFastFinishBits), MPFR_RNDU);
    mpfr_add(err.get(), err.get(), term.get(), MPFR_RNDU);
  }
  double d = 0;
  long double ld = 0;
  const bool rounded = RoundsTo(lse.get(), err.get(), &d, &ld);
  double rel_log2 = kExactLog2;
  if (!mpfr_zero_p(err.get())) {
    if (mpfr_zero_p(lse.get())) {
      rel_log2 = kInf;
    } else {
      MpfrValue rel(64);
      mpfr_div(rel.get(), err.get(), lse.get(), MPFR_RNDA);
      mpfr_abs(rel.get(), rel.get(), MPFR_RNDN);
      rel_log2 = Log2Of(rel.get());
    }
  }
  internal::AddRounded(r, std::move(lse), d, ld);
  r.cert.tier = Tier::kFast;
  r.cert.precision_bits = 128;
  r.cert.error_bound_log2 = rel_log2;
  r.cert.certified = rel_log2 <= options.tolerance_log2;
  r.cert.correctly_rounded = rounded;
  if (!r.cert.certified)
    r.cert.note = "fast tier: rigorous bound 2^" + std::to_string(rel_log2) +
                  " relative (lse near 0: m + log S cancels) is above the tolerance 2^" +
                  std::to_string(options.tolerance_log2);
  else if (!rounded)
    r.cert.note = "fast tier: lse lies within its error bound of a rounding boundary";
}

void FastLse(std::span<const double> x, double m, const Options& options, Reference& r) {
  FastLseFrom(SumExpShifted(x, m), m, options, r);  // split: PassThreads()
}

bool FastAccepted(const Reference& r, const Options& options) {
  return r.cert.certified && (r.cert.correctly_rounded || !options.require_correct_rounding);
}

// Replaces an unaccepted fast result by the mpfr tier's, keeping the reason in the note.
void FallBack(Reference& r, std::size_t k, const internal::Evaluator& evaluate,
              const Options& options) {
  const std::string why = r.cert.note;
  r.value.clear();
  r.as_double.clear();
  r.as_long_double.clear();
  r.cert = Certificate{};
  internal::Escalate(k, evaluate, options, r);
  r.cert.note = why + "; fell back to the mpfr tier" +
                (r.cert.note.empty() ? std::string() : ": " + r.cert.note);
}

// The fast tier's softmax: w_i = t_i * (1 / S_hat), t_i from FixedExpNeg (or exactly 1 for the
// maximum), 1 / S_hat rounded once to 128 bits. Relative error of w_i before its final
// truncation: eps_t + rho (1 + 2^-50) + 2^-128 + (second order), then the 128-bit product is
// truncated (< 2^-125 relative, W >= 2^125): eps_t + rho (1 + 2^-50) + 2^-124 bounds it all.
void FastSoftmax(std::span<const double> x, double m, const Options& options, Reference& r) {
  const ShiftedExpSum sum = SumExpShifted(x, m);
  const double rho = sum.RelErrorBound();
  MpfrValue s, recip(128);
  SumToMpfr(sum, s.get());
  mpfr_ui_div(recip.get(), 1, s.get(), MPFR_RNDN);
  mpz_t z;
  mpz_init(z);
  const long recip_exp = static_cast<long>(mpfr_get_z_2exp(z, recip.get()));  // 1/S = z 2^e
  std::uint64_t words[2] = {0, 0};
  mpz_export(words, nullptr, -1, sizeof(std::uint64_t), 0, 0, z);
  mpz_clear(z);
  const U128 recip_mant = MakeU128(words[1], words[0]);

  double max_eps = 0;
  std::size_t uncertain = 0;
  r.as_double.resize(x.size());
  r.as_long_double.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double v = x[i];
    FixedExp t;
    double eps_t = 0;
    if (v == -kInf) {
      r.as_double[i] = 0;
      r.as_long_double[i] = 0;
      continue;
    }
    if (v == m) {
      t = {U128{1} << 127, 0};
    } else {
      const ExactDifference d = Difference(v, m);
      if (d.s <= -kFixedExpArgumentLimit) {  // w < e^-16382 < 2^-23600: +0 in both formats
        r.as_double[i] = 0;
        r.as_long_double[i] = 0;
        continue;
      }
      t = FixedExpNeg(d.s, d.e);
      eps_t = kFixedExpRelError;
    }
    const U128 w = MulHi128(t.mant, recip_mant);
    const int exp2 = static_cast<int>(1 - t.shift + recip_exp);
    const double eps = eps_t + rho * (1 + 0x1p-50) + 0x1p-124;
    max_eps = std::max(max_eps, eps);
    const double err_units = std::ceil(static_cast<double>(w) * eps * (1 + 0x1p-40));
    const U128 err = static_cast<U128>(err_units) + 1;
    const auto d = RoundWindow<double>(w, err, exp2);
    const auto ld = RoundWindow<long double>(w, err, exp2);
    if (d && ld) {
      r.as_double[i] = *d;
      r.as_long_double[i] = *ld;
    } else {
      ++uncertain;
      r.as_double[i] =
          ToBinary<double>(RoundNearestEven(w, exp2, false, FormatOf<double>()), false);
      r.as_long_double[i] =
          ToBinary<long double>(RoundNearestEven(w, exp2, false, FormatOf<long double>()), false);
    }
  }
  const double bound_log2 = max_eps > 0 ? std::log2(max_eps) : kExactLog2;
  r.cert.tier = Tier::kFast;
  r.cert.precision_bits = 128;
  r.cert.error_bound_log2 = bound_log2;
  r.cert.certified = bound_log2 <= options.tolerance_log2;
  r.cert.correctly_rounded = uncertain == 0;
  if (!r.cert.certified)
    r.cert.note = "fast tier: bound 2^" + std::to_string(bound_log2) + " above the tolerance";
  else if (uncertain != 0)
    r.cert.note = "fast tier: " + std::to_string(uncertain) +
                  " component(s) within their error bound of a rounding boundary";
}

// The mpfr tier's softmax at p bits: exact x_i - m rounded to p bits, exp at p, S = the
// correctly rounded sum (mpfr_sum) at p + 64 bits, w_i = t_i / S at p.
void EvaluateSoftmax(std::span<const double> x, double m, mpfr_prec_t p,
                     std::vector<MpfrValue>& out) {
  MpfrArray terms(x.size(), p);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] == -kInf) continue;  // stays +0
    mpfr_set_d(terms[i], x[i], MPFR_RNDN);
    mpfr_sub_d(terms[i], terms[i], m, MPFR_RNDN);
    mpfr_exp(terms[i], terms[i], MPFR_RNDN);
  }
  MpfrValue s(p + 64);
  mpfr_sum(s.get(), terms.data(), terms.size(), MPFR_RNDN);
  out.clear();
  out.reserve(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    MpfrValue w(p);
    mpfr_div(w.get(), terms[i], s.get(), MPFR_RNDN);
    out.push_back(std::move(w));
  }
}

// 1/k for the k +inf elements of a row (correctly rounded through round-to-odd), 0 elsewhere.
void InfiniteRow(std::span<const double> x, std::size_t k, Reference& r) {
  MpfrValue one(53, 1.0), count(64), odd;
  mpfr_set_uj(count.get(), k, MPFR_RNDN);
  DivRoundToOdd(odd.get(), one.get(), count.get());
  for (double v : x) {
    if (v == kInf) {
      r.as_double.push_back(odd.ToDouble());
      r.as_long_double.push_back(odd.ToLongDouble());
    } else {
      r.as_double.push_back(0);
      r.as_long_double.push_back(0);
    }
  }
}

// A 256-bit two's complement fixed-point accumulator (the attention numerators).
struct Acc256 {
  std::uint64_t w[4] = {0, 0, 0, 0};
};

// acc += v (or acc -= v when negative), modulo 2^256.
void Accumulate(Acc256& acc, const std::uint64_t v[4], bool negative) {
  U128 carry = negative ? 1 : 0;
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t vi = negative ? ~v[i] : v[i];
    const U128 s = U128{acc.w[i]} + vi + carry;
    acc.w[i] = Lo64(s);
    carry = s >> 64;
  }
}

// floor(mant * mv * 2^sh) as four words, for sh <= 64 and a result below 2^256.
void ScaledProduct(U128 mant, std::uint64_t mv, int sh, std::uint64_t out[4]) {
  const U128 lo = U128{Lo64(mant)} * mv, hi = U128{Hi64(mant)} * mv;
  const U128 mid = U128{Hi64(lo)} + Lo64(hi);
  std::uint64_t p[5] = {Lo64(lo), Lo64(mid), Hi64(hi) + Hi64(mid), 0, 0};  // mant * mv, 192 bits
  for (int i = 0; i < 4; ++i) out[i] = 0;
  if (sh <= -192) return;
  if (sh >= 0) {  // left by sh <= 64: words move up by sh / 64, bits by sh % 64
    const int ws = sh / 64, bs = sh % 64;
    for (int i = 3; i >= 0; --i) {
      const int src = i - ws;
      if (src < 0) continue;
      out[i] = p[src] << bs;
      if (bs != 0 && src >= 1) out[i] |= p[src - 1] >> (64 - bs);
    }
    return;
  }
  const int ws = (-sh) / 64, bs = (-sh) % 64;  // right: truncation toward zero
  for (int i = 0; i + ws < 3; ++i) {
    out[i] = p[i + ws] >> bs;
    if (bs != 0) out[i] |= p[i + ws + 1] << (64 - bs);
  }
}

// value = acc * 2^exp2 exactly (256-bit two's complement read as signed).
void Acc256ToMpfr(const Acc256& acc, long exp2, mpfr_ptr out) {
  Acc256 magnitude = acc;
  const bool negative = (acc.w[3] >> 63) != 0;
  if (negative) {
    magnitude = Acc256{};
    Accumulate(magnitude, acc.w, true);  // 0 - acc
  }
  mpz_t z;
  mpz_init(z);
  mpz_import(z, 4, -1, sizeof(std::uint64_t), 0, 0, magnitude.w);
  mpfr_set_prec(out, 256);
  const int ternary = mpfr_set_z_2exp(out, z, exp2, MPFR_RNDN);
  mpz_clear(z);
  if (ternary != 0) throw std::logic_error("reference: accumulator conversion was not exact");
  if (negative) mpfr_neg(out, out, MPFR_RNDN);
}

// The fast tier's attention; returns false (r untouched) when the row is outside its domain:
// an unmasked value that is not finite, a weight below e^-16383 (beyond the kernel), or more
// than 2^62 rows. Method (scores finite, m = max score):
//   t_i = exp(s_i - m) from FixedExpNeg (1 exactly for the maximum), relative error eps_t;
//   N_j = sum_i t_i v_ij and A_j = sum_i t_i |v_ij| in 256-bit fixed point with unit
//   2^(E - 192), E such that every |v_ij| < 2^E (each product t_i v_ij is formed exactly,
//   then truncated: < 1 unit per term); S_hat and rho from SumExpShifted;
//   o_j = N_hat_j / S_hat rounded to 256 bits.
// Bound: |N_hat - N| <= E_N := eps_t (1 + 2 eps_t) A_hat + k unit (A_hat <= A_acc + k unit,
// k rows), |1/S_hat - 1/S| <= rho / S_hat, so
//   |o_hat - o| <= (E_N + (|N_hat| + E_N) rho) / S_hat + 2^-256 |o_hat| (if inexact).
// Cancellation in N_j (|N_j| << A_j) weakens the relative bound; then kAuto falls back.
bool FastAttention(std::span<const double> scores, std::span<const double> values, std::size_t dv,
                   double m, const Options& options, Reference& r) {
  const std::size_t n = scores.size();
  if (n > (std::size_t{1} << 62)) return false;
  int e_max = -1074;  // every unmasked |v_ij| < 2^e_max
  for (std::size_t i = 0; i < n; ++i) {
    if (scores[i] == -kInf) continue;
    if (scores[i] - m <= -kFixedExpArgumentLimit) return false;
    for (std::size_t j = 0; j < dv; ++j) {
      const double v = values[i * dv + j];
      if (!std::isfinite(v)) return false;
      int e = 0;
      if (v != 0) std::frexp(v, &e);
      e_max = std::max(e_max, e);
    }
  }
  const ShiftedExpSum sum = SumExpShifted(scores, m);
  const double rho = sum.RelErrorBound();
  std::vector<Acc256> num(dv), mag(dv);
  std::uint64_t rows = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double si = scores[i];
    if (si == -kInf) continue;
    ++rows;
    FixedExp t{U128{1} << 127, 0};
    if (si != m) {
      const ExactDifference d = Difference(si, m);
      t = FixedExpNeg(d.s, d.e);
    }
    for (std::size_t j = 0; j < dv; ++j) {
      const double v = values[i * dv + j];
      if (v == 0) continue;
      const std::uint64_t bits = std::bit_cast<std::uint64_t>(v);
      const int biased = static_cast<int>((bits >> 52) & 0x7ff);
      const std::uint64_t frac = bits & ((std::uint64_t{1} << 52) - 1);
      const std::uint64_t mv = biased == 0 ? frac : (frac | (std::uint64_t{1} << 52));
      const int ev = biased == 0 ? -1074 : biased - 1075;  // |v| = mv 2^ev
      // t v = mant mv 2^(-127 - shift + ev); in units 2^(e_max - 192):
      const int sh = 65 - t.shift + ev - e_max;
      std::uint64_t p[4];
      ScaledProduct(t.mant, mv, sh, p);
      Accumulate(num[j], p, std::signbit(v));
      Accumulate(mag[j], p, false);
    }
  }
  MpfrValue s;
  SumToMpfr(sum, s.get());
  const double eps_t = kFixedExpRelError;
  const long unit_exp = static_cast<long>(e_max) - 192;
  double max_rel_log2 = kExactLog2;
  bool certified = true, rounded = true;
  for (std::size_t j = 0; j < dv; ++j) {
    MpfrValue n_hat, a_hat, o(kFastFinishBits), err(64), t(64), units(64);
    Acc256ToMpfr(num[j], unit_exp, n_hat.get());
    Acc256ToMpfr(mag[j], unit_exp, a_hat.get());
    const bool inexact = mpfr_div(o.get(), n_hat.get(), s.get(), MPFR_RNDN) != 0;
    // E_N = eps_t (1 + 2 eps_t) (A_acc + k unit) + k unit
    mpfr_set_uj(units.get(), rows, MPFR_RNDU);
    mpfr_mul_2si(units.get(), units.get(), unit_exp, MPFR_RNDU);
    mpfr_add(err.get(), a_hat.get(), units.get(), MPFR_RNDU);
    mpfr_mul_d(err.get(), err.get(), eps_t * (1 + 2 * eps_t), MPFR_RNDU);
    mpfr_add(err.get(), err.get(), units.get(), MPFR_RNDU);
    // (E_N + (|N_hat| + E_N) rho) / S_hat
    mpfr_abs(t.get(), n_hat.get(), MPFR_RNDU);
    mpfr_add(t.get(), t.get(), err.get(), MPFR_RNDU);
    mpfr_mul_d(t.get(), t.get(), rho, MPFR_RNDU);
    mpfr_add(err.get(), err.get(), t.get(), MPFR_RNDU);
    mpfr_div(err.get(), err.get(), s.get(), MPFR_RNDU);
    if (inexact) {
      mpfr_abs(t.get(), o.get(), MPFR_RNDU);
      mpfr_mul_2si(t.get(), t.get(), -static_cast<long>(kFastFinishBits) + 1, MPFR_RNDU);
      mpfr_add(err.get(), err.get(), t.get(), MPFR_RNDU);
    }
    double d = 0;
    long double ld = 0;
    rounded = RoundsTo(o.get(), err.get(), &d, &ld) && rounded;
    if (!mpfr_zero_p(err.get())) {
      if (mpfr_zero_p(o.get())) {
        max_rel_log2 = kInf;
      } else {
        mpfr_div(t.get(), err.get(), o.get(), MPFR_RNDA);
        mpfr_abs(t.get(), t.get(), MPFR_RNDN);
        max_rel_log2 = std::max(max_rel_log2, Log2Of(t.get()));
      }
    }
    internal::AddRounded(r, std::move(o), d, ld);
  }
  certified = max_rel_log2 <= options.tolerance_log2;
  r.cert.tier = Tier::kFast;
  r.cert.precision_bits = 128;
  r.cert.error_bound_log2 = max_rel_log2;
  r.cert.certified = certified;
  r.cert.correctly_rounded = rounded;
  if (!certified)
    r.cert.note = "fast tier: bound 2^" + std::to_string(max_rel_log2) +
                  " relative (cancellation in a numerator) is above the tolerance 2^" +
                  std::to_string(options.tolerance_log2);
  else if (!rounded)
    r.cert.note = "fast tier: a component lies within its error bound of a rounding boundary";
  return true;
}

}  // namespace

Reference ReferenceLse(std::span<const double> x, const Options& options) {
  WideExponentRange range;
  Reference r = Start("lse", x.size());
  const RowScan scan = Scan(x);
  if (scan.nan || scan.pos_inf != 0 || scan.max == -kInf) {
    internal::AddExactDouble(r, scan.nan ? kNaN : scan.max);  // +inf, or -inf (empty)
    MarkExactSpecial(r);
    return r;
  }
  const double m = scan.max;
  auto evaluate = [&](mpfr_prec_t p, std::vector<MpfrValue>& out) { EvaluateLse(x, m, p, out); };
  if (options.method == Method::kEscalate) {
    internal::Escalate(1, evaluate, options, r);
    return r;
  }
  FastLse(x, m, options, r);
  if (options.method == Method::kFast || FastAccepted(r, options)) return r;
  FallBack(r, 1, evaluate, options);
  return r;
}

Reference ReferenceLse(const StoredColumn& x, const Options& options) {
  if (x.layout() == StoredColumn::Layout::kDouble) return ReferenceLse(x.Doubles(), options);
  // Scan's answer for the whole column from its chunks': the first of equal maxima is kept
  // (std::max), as the one loop keeps it.
  RowScan scan;
  x.ForEachChunk([&](std::uint64_t, std::span<const double> c) {
    const RowScan part = Scan(c);
    scan.nan = scan.nan || part.nan;
    scan.pos_inf += part.pos_inf;
    scan.max = std::max(scan.max, part.max);
  });
  // The MPFR tiers and the escalation read the column whole: decoded for them alone.
  const bool special = scan.nan || scan.pos_inf != 0 || scan.max == -kInf;
  if (special || options.method == Method::kEscalate) return ReferenceLse(x.ToDoubles(), options);
  WideExponentRange range;
  Reference r = Start("lse", x.size());
  const double m = scan.max;
  FastLseFrom(SumExpShifted(x, m), m, options, r);
  if (options.method == Method::kFast || FastAccepted(r, options)) return r;
  const std::vector<double> values = x.ToDoubles();
  auto evaluate = [&](mpfr_prec_t p, std::vector<MpfrValue>& out) {
    EvaluateLse(values, m, p, out);
  };
  FallBack(r, 1, evaluate, options);
  return r;
}

Reference ReferenceSoftmax(std::span<const double> x, const Options& options) {
  WideExponentRange range;
  Reference r = Start("softmax", x.size());
  const RowScan scan = Scan(x);
  if (x.empty() || scan.nan || scan.pos_inf != 0 || scan.max == -kInf) {
    if (scan.pos_inf != 0 && !scan.nan) {
      InfiniteRow(x, scan.pos_inf, r);
    } else {
      const bool zeros = !scan.nan && options.empty_row == SoftmaxEmptyRow::kZeros;
      r.as_double.assign(x.size(), zeros ? 0.0 : kNaN);
      r.as_long_double.assign(x.size(), zeros ? 0.0L : static_cast<long double>(kNaN));
    }
    MarkExactSpecial(r);
    return r;
  }
  const double m = scan.max;
  auto evaluate = [&](mpfr_prec_t p, std::vector<MpfrValue>& out) {
    EvaluateSoftmax(x, m, p, out);
  };
  if (options.method != Method::kEscalate) {
    FastSoftmax(x, m, options, r);
    if (options.method == Method::kFast || FastAccepted(r, options)) return r;
    FallBack(r, x.size(), evaluate, options);
  } else {
    internal::Escalate(x.size(), evaluate, options, r);
  }
  r.value.clear();  // softmax keeps no per-component MPFR values (see Reference::value)
  return r;
}

Reference ReferenceAttention(std::span<const double> scores, std::span<const double> values,
                             std::size_t dv, const Options& options) {
  if (dv == 0) throw std::invalid_argument("reference: attention needs dv >= 1");
  if (values.size() != scores.size() * dv)
    throw std::invalid_argument("reference: attention got " + std::to_string(values.size()) +
                                " values for " + std::to_string(scores.size()) + " scores x dv " +
                                std::to_string(dv));
  WideExponentRange range;
  const std::size_t n = scores.size();
  Reference r = Start("attention", n);
  const RowScan scan = Scan(scores);
  if (scan.nan || scan.max == -kInf) {
    const bool zeros = !scan.nan && options.empty_row == SoftmaxEmptyRow::kZeros;
    for (std::size_t j = 0; j < dv; ++j) internal::AddExactDouble(r, zeros ? 0.0 : kNaN);
    MarkExactSpecial(r);
    return r;
  }
  auto v = [&](std::size_t i, std::size_t j) { return values[i * dv + j]; };
  if (scan.pos_inf != 0) {
    // The +inf rows weigh 1/k each, finite rows exactly 0 (0 * inf and 0 * NaN are NaN, as in
    // IEEE), masked rows nothing: o_j = (sum of the +inf rows' v_ij) / k, exactly formed.
    MpfrValue count(64);
    mpfr_set_uj(count.get(), scan.pos_inf, MPFR_RNDN);
    long bits = 53;
    for (std::size_t j = 0; j < dv; ++j) {
      MpfrArray terms(scan.pos_inf, 53);
      std::size_t k = 0;
      bool nan = false;
      for (std::size_t i = 0; i < n; ++i) {
        if (scores[i] == kInf) {
          mpfr_set_d(terms[k++], v(i, j), MPFR_RNDN);
        } else if (scores[i] != -kInf && !std::isfinite(v(i, j))) {
          nan = true;
        }
      }
      MpfrValue sum, value(internal::ValueBits(options)), odd;
      SumExact(sum.get(), terms.data(), terms.size());
      bits = std::max<long>(bits, sum.precision());
      if (nan) mpfr_set_nan(sum.get());
      mpfr_div(value.get(), sum.get(), count.get(), MPFR_RNDN);
      DivRoundToOdd(odd.get(), sum.get(), count.get());
      internal::AddRounded(r, std::move(value), odd.ToDouble(), odd.ToLongDouble());
    }
    internal::MarkExact(r, bits, -static_cast<double>(internal::ValueBits(options)));
    return r;
  }
  const double m = scan.max;
  // At p bits: t_i = exp(s_i - m) (s_i - m rounded to p bits), S and every numerator
  // sum_i t_i v_ij correctly rounded sums (mpfr_sum at p + 64 bits) of exact products.
  auto evaluate = [&](mpfr_prec_t p, std::vector<MpfrValue>& out) {
    MpfrArray terms(n, p), products(n, p + 53);
    for (std::size_t i = 0; i < n; ++i) {
      if (scores[i] == -kInf) continue;
      mpfr_set_d(terms[i], scores[i], MPFR_RNDN);
      mpfr_sub_d(terms[i], terms[i], m, MPFR_RNDN);
      mpfr_exp(terms[i], terms[i], MPFR_RNDN);
    }
    MpfrValue s(p + 64), num(p + 64);
    mpfr_sum(s.get(), terms.data(), n, MPFR_RNDN);
    out.clear();
    for (std::size_t j = 0; j < dv; ++j) {
      for (std::size_t i = 0; i < n; ++i) {
        if (scores[i] == -kInf) {
          mpfr_set_zero(products[i], 1);  // masked: V is not read
        } else {
          mpfr_mul_d(products[i], terms[i], v(i, j), MPFR_RNDN);  // exact at p + 53 bits
        }
      }
      mpfr_sum(num.get(), products.data(), n, MPFR_RNDN);
      MpfrValue o(p);
      mpfr_div(o.get(), num.get(), s.get(), MPFR_RNDN);
      out.push_back(std::move(o));
    }
  };
  if (options.method != Method::kEscalate) {
    if (FastAttention(scores, values, dv, m, options, r)) {
      if (options.method == Method::kFast || FastAccepted(r, options)) return r;
      FallBack(r, dv, evaluate, options);
      return r;
    }
    internal::Escalate(dv, evaluate, options, r);
    r.cert.note = "fast tier declined (a non-finite value, or a weight below e^-16383)" +
                  (r.cert.note.empty() ? std::string() : "; " + r.cert.note);
    return r;
  }
  internal::Escalate(dv, evaluate, options, r);
  return r;
}

MpfrValue PlainMpfrLse(std::span<const double> x, mpfr_prec_t bits) {
  WideExponentRange range;
  const RowScan scan = Scan(x);
  if (scan.nan || scan.pos_inf != 0 || scan.max == -kInf)
    return MpfrValue(53, scan.nan ? kNaN : scan.max);
  const double m = scan.max;
  MpfrValue acc(bits, 0.0), y(bits), t(bits), lse(bits);
  for (double v : x) {
    if (v == -kInf) continue;
    mpfr_set_d(y.get(), v, MPFR_RNDN);
    mpfr_sub_d(y.get(), y.get(), m, MPFR_RNDN);
    mpfr_exp(t.get(), y.get(), MPFR_RNDN);
    mpfr_add(acc.get(), acc.get(), t.get(), MPFR_RNDN);
  }
  mpfr_log(lse.get(), acc.get(), MPFR_RNDN);
  mpfr_add_d(lse.get(), lse.get(), m, MPFR_RNDN);
  return lse;
}

}  // namespace carrier::reference

#endif  // CARRIER_HAVE_MPFR
