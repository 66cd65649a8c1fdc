// precision/reference/reference_exact.cpp: the ops with an exact tier (sum, dot, welford,
// norm2) and the ones that need no arithmetic at all (max, argmax). Contracts in reference.hpp.
#include "precision/reference/reference_internal.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <cmath>
#include <limits>

#include "core/carriers/argmax.hpp"
#include "core/carriers/max.hpp"

namespace carrier::reference {

namespace {

using internal::kExactLog2;
using internal::kInf;
using internal::kNaN;
using internal::Start;

// NaN / inf bookkeeping with the sum's rule: NaN, or +inf and -inf together, give NaN.
struct SpecialSum {
  bool nan = false, pos_inf = false, neg_inf = false;
  void Add(double v) {
    if (std::isnan(v)) {
      nan = true;
    } else if (v == kInf) {
      pos_inf = true;
    } else if (v == -kInf) {
      neg_inf = true;
    }
  }
  bool Any() const { return nan || pos_inf || neg_inf; }
  double Value() const { return (nan || (pos_inf && neg_inf)) ? kNaN : (pos_inf ? kInf : -kInf); }
};

Reference ExactSpecial(Reference r, std::initializer_list<double> components) {
  for (double c : components) internal::AddExactDouble(r, c);
  internal::MarkExact(r, 53, kExactLog2);
  return r;
}

// A quotient or root: the MPFR value at ValueBits (round to nearest) and the double / long
// double from the round-to-odd result (correct roundings of the exact real).
void AddIrrational(Reference& r, MpfrValue value, const MpfrValue& odd) {
  internal::AddRounded(r, std::move(value), odd.ToDouble(), odd.ToLongDouble());
}

}  // namespace

Reference ReferenceSum(std::span<const double> x, const Options& options) {
  WideExponentRange range;
  Reference r = Start("sum", x.size());
  SpecialSum special;
  for (double v : x) special.Add(v);
  if (special.Any()) return ExactSpecial(std::move(r), {special.Value()});
  if (options.method == Method::kEscalate) {
    internal::Escalate(
        1,
        [&](mpfr_prec_t p, std::vector<MpfrValue>& out) {
          MpfrValue s(p, 0.0);
          for (double v : x) mpfr_add_d(s.get(), s.get(), v, MPFR_RNDN);
          out.clear();
          out.push_back(std::move(s));
        },
        options, r);
    return r;
  }
  MpfrArray terms(x.size(), 53);
  for (std::size_t i = 0; i < x.size(); ++i) mpfr_set_d(terms[i], x[i], MPFR_RNDN);
  MpfrValue s;
  SumExact(s.get(), terms.data(), terms.size());
  const long bits = s.precision();
  internal::AddExact(r, std::move(s));
  internal::MarkExact(r, bits, kExactLog2);
  return r;
}

Reference ReferenceDot(std::span<const ValuePair<double>> x, const Options& options) {
  WideExponentRange range;
  Reference r = Start("dot", x.size());
  SpecialSum special;
  for (const auto& p : x) {
    if (std::isnan(p.a) || std::isnan(p.b) || (std::isinf(p.a) && p.b == 0) ||
        (std::isinf(p.b) && p.a == 0)) {
      special.nan = true;
    } else if (std::isinf(p.a) || std::isinf(p.b)) {
      special.Add(std::signbit(p.a) != std::signbit(p.b) ? -kInf : kInf);
    }
  }
  if (special.Any()) return ExactSpecial(std::move(r), {special.Value()});
  if (options.method == Method::kEscalate) {
    internal::Escalate(
        1,
        [&](mpfr_prec_t p, std::vector<MpfrValue>& out) {
          MpfrValue s(p, 0.0), a(53), b(53);
          for (const auto& pair : x) {
            mpfr_set_d(a.get(), pair.a, MPFR_RNDN);
            mpfr_set_d(b.get(), pair.b, MPFR_RNDN);
            mpfr_fma(s.get(), a.get(), b.get(), s.get(), MPFR_RNDN);
          }
          out.clear();
          out.push_back(std::move(s));
        },
        options, r);
    return r;
  }
  MpfrArray products(x.size(), 106);  // a product of two 53-bit significands has <= 106 bits
  for (std::size_t i = 0; i < x.size(); ++i) {
    mpfr_set_d(products[i], x[i].a, MPFR_RNDN);
    mpfr_mul_d(products[i], products[i], x[i].b, MPFR_RNDN);
  }
  MpfrValue s;
  SumExact(s.get(), products.data(), products.size());
  const long bits = s.precision();
  internal::AddExact(r, std::move(s));
  internal::MarkExact(r, bits, kExactLog2);
  return r;
}

namespace {

template <class X>
Reference MaxOf(const X& x) {
  Reference r = Start("max", ColumnCount(x));
  double m = -kInf;
  ForEachChunkOf(x, [&](std::uint64_t, std::span<const double> c) {
    for (double v : c) m = Max<double>::Of(m, v);
  });
  return ExactSpecial(std::move(r), {m});
}

template <class X>
Reference ArgMaxOf(const X& x) {
  Reference r = Start("argmax", ColumnCount(x));
  using A = ArgMax<double>;
  A::State s = A::Identity();
  ForEachChunkOf(x, [&](std::uint64_t start, std::span<const double> c) {
    for (std::size_t i = 0; i < c.size(); ++i)
      s = A::Combine(s, A::Lift({c[i], static_cast<std::int64_t>(start + i)}));
  });
  r.index = s.index;
  return ExactSpecial(std::move(r), {s.value, static_cast<double>(s.index)});
}

}  // namespace

Reference ReferenceMax(std::span<const double> x) { return MaxOf(x); }
Reference ReferenceMax(const StoredColumn& x) { return MaxOf(x); }
Reference ReferenceArgMax(std::span<const double> x) { return ArgMaxOf(x); }
Reference ReferenceArgMax(const StoredColumn& x) { return ArgMaxOf(x); }

Reference ReferenceWelford(std::span<const double> x, const Options& options) {
  WideExponentRange range;
  const std::size_t n = x.size();
  Reference r = Start("welford", n);
  if (n == 0) return ExactSpecial(std::move(r), {kNaN, kNaN, kNaN});
  SpecialSum special;
  for (double v : x) special.Add(v);
  if (special.Any()) return ExactSpecial(std::move(r), {special.Value(), kNaN, kNaN});
  if (n == 1) return ExactSpecial(std::move(r), {x[0], 0.0, kNaN});
  if (options.method == Method::kEscalate) {
    // Two-pass at p bits: mean = sum / n, m2 = sum (x - mean)^2.
    internal::Escalate(
        3,
        [&](mpfr_prec_t p, std::vector<MpfrValue>& out) {
          MpfrValue sum(p + 64, 0.0), mean(p), dev(p), m2(p + 64, 0.0), vp(p), vs(p);
          for (double v : x) mpfr_add_d(sum.get(), sum.get(), v, MPFR_RNDN);
          mpfr_div_ui(mean.get(), sum.get(), n, MPFR_RNDN);
          for (double v : x) {
            mpfr_d_sub(dev.get(), v, mean.get(), MPFR_RNDN);
            mpfr_fma(m2.get(), dev.get(), dev.get(), m2.get(), MPFR_RNDN);
          }
          mpfr_div_ui(vp.get(), m2.get(), n, MPFR_RNDN);
          mpfr_div_ui(vs.get(), m2.get(), n - 1, MPFR_RNDN);
          out.clear();
          out.push_back(std::move(mean));
          out.push_back(std::move(vp));
          out.push_back(std::move(vs));
        },
        options, r);
    return r;
  }
  // n m2 = n sum x^2 - (sum x)^2, formed exactly; then three correctly rounded quotients.
  MpfrArray xs(n, 53), squares(n, 106);
  for (std::size_t i = 0; i < n; ++i) {
    mpfr_set_d(xs[i], x[i], MPFR_RNDN);
    mpfr_sqr(squares[i], xs[i], MPFR_RNDN);  // exact at 106 bits
  }
  MpfrValue s1, s2, count(64), count_m1(64), n_s2, s1_sq, n_m2, n_sq, n_nm1;
  SumExact(s1.get(), xs.data(), n);
  SumExact(s2.get(), squares.data(), n);
  mpfr_set_uj(count.get(), n, MPFR_RNDN);
  mpfr_set_uj(count_m1.get(), n - 1, MPFR_RNDN);
  MulExact(n_s2.get(), s2.get(), count.get());
  MulExact(s1_sq.get(), s1.get(), s1.get());
  SubExact(n_m2.get(), n_s2.get(), s1_sq.get());
  MulExact(n_sq.get(), count.get(), count.get());
  MulExact(n_nm1.get(), count.get(), count_m1.get());
  const long bits = std::max({s1.precision(), s2.precision(), n_m2.precision()});
  const mpfr_prec_t value_bits = internal::ValueBits(options);
  auto quotient = [&](mpfr_srcptr num, mpfr_srcptr den) {
    MpfrValue value(value_bits), odd;
    mpfr_div(value.get(), num, den, MPFR_RNDN);
    DivRoundToOdd(odd.get(), num, den);
    AddIrrational(r, std::move(value), odd);
  };
  quotient(s1.get(), count.get());
  quotient(n_m2.get(), n_sq.get());
  quotient(n_m2.get(), n_nm1.get());
  internal::MarkExact(r, bits, -static_cast<double>(value_bits));
  return r;
}

Reference ReferenceNorm2(std::span<const double> x, const Options& options) {
  WideExponentRange range;
  Reference r = Start("norm2", x.size());
  bool nan = false, inf = false;
  for (double v : x) {
    nan = nan || std::isnan(v);
    inf = inf || std::isinf(v);
  }
  if (nan || inf) return ExactSpecial(std::move(r), {nan ? kNaN : kInf});
  if (options.method == Method::kEscalate) {
    internal::Escalate(
        1,
        [&](mpfr_prec_t p, std::vector<MpfrValue>& out) {
          MpfrValue ssq(p + 64, 0.0), v(53), norm(p);
          for (double xi : x) {
            mpfr_set_d(v.get(), xi, MPFR_RNDN);
            mpfr_fma(ssq.get(), v.get(), v.get(), ssq.get(), MPFR_RNDN);
          }
          mpfr_sqrt(norm.get(), ssq.get(), MPFR_RNDN);
          out.clear();
          out.push_back(std::move(norm));
        },
        options, r);
    return r;
  }
  MpfrArray squares(x.size(), 106);
  for (std::size_t i = 0; i < x.size(); ++i) {
    mpfr_set_d(squares[i], x[i], MPFR_RNDN);
    mpfr_sqr(squares[i], squares[i], MPFR_RNDN);
  }
  MpfrValue ssq;
  SumExact(ssq.get(), squares.data(), squares.size());
  const long bits = ssq.precision();
  const mpfr_prec_t value_bits = internal::ValueBits(options);
  MpfrValue value(value_bits), odd;
  mpfr_sqrt(value.get(), ssq.get(), MPFR_RNDN);
  SqrtRoundToOdd(odd.get(), ssq.get());
  AddIrrational(r, std::move(value), odd);
  internal::MarkExact(r, bits, -static_cast<double>(value_bits));
  return r;
}

}  // namespace carrier::reference

#endif  // CARRIER_HAVE_MPFR
