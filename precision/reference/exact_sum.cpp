// precision/reference/exact_sum.cpp: normalisation and the one rounding of ExactSum.
#include "precision/reference/exact_sum.hpp"

#include <cstdint>
#include <limits>

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include <gmp.h>
#endif

namespace carrier::reference {

namespace {

// Special-value outcome, or nullopt-like `false` when the sum is finite.
bool SpecialResult(const ExactSum::State& s, double* out) {
  if (s.has_nan || (s.has_pos_inf && s.has_neg_inf)) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (s.has_pos_inf || s.has_neg_inf) {
    *out = s.has_pos_inf ? std::numeric_limits<double>::infinity()
                         : -std::numeric_limits<double>::infinity();
    return true;
  }
  return false;
}

// |sum| as non-negative normalised limbs, and its sign.
ExactSum::State Magnitude(const ExactSum::State& s, bool* negative) {
  ExactSum::State t = ExactSum::Canonical(s);
  *negative = t.limb[ExactSum::kLimbs - 1] < 0;
  if (*negative) {
    for (auto& l : t.limb) l = -l;
    ExactSum::Normalize(t);
  }
  return t;
}

template <class T>
T RoundMagnitude(const ExactSum::State& s) {
  double special = 0;
  if (SpecialResult(s, &special)) return static_cast<T>(special);
  bool negative = false;
  const ExactSum::State t = Magnitude(s, &negative);
  int h = ExactSum::kLimbs - 1;
  while (h >= 0 && t.limb[h] == 0) --h;
  if (h < 0) return T(0);  // exact zero: +0 whatever the signs of the inputs
  auto digit = [&](int i) -> std::uint64_t {
    return i >= 0 ? static_cast<std::uint64_t>(t.limb[i]) : 0;
  };
  // The top three digits (at least 65 significant bits, since digit h is non-zero) and a sticky
  // bit for everything below: enough for round-to-nearest to 53 or 64 bits.
  const U128 mant = (U128{digit(h)} << 64) | (digit(h - 1) << 32) | digit(h - 2);
  bool sticky = false;
  for (int i = h - 3; i >= 0 && !sticky; --i) sticky = t.limb[i] != 0;
  const int exp2 = ExactSum::kLimbBits * (h - 2) + ExactSum::kLowestExponent;
  return ToBinary<T>(RoundNearestEven(mant, exp2, sticky, FormatOf<T>()), negative);
}

}  // namespace

void ExactSum::Normalize(State& s) {
  bool zero = true;
  for (int i = 0; i + 1 < kLimbs; ++i) {
    const std::int64_t carry = s.limb[i] >> kLimbBits;  // floor division (arithmetic shift)
    s.limb[i] -= carry * (std::int64_t{1} << kLimbBits);
    s.limb[i + 1] += carry;
    zero = zero && s.limb[i] == 0;
  }
  zero = zero && s.limb[kLimbs - 1] == 0;
  s.pending = zero ? 0 : 1;
}

double ExactSum::Finalize(const State& s) { return RoundMagnitude<double>(s); }

long double ExactSum::FinalizeLongDouble(const State& s) { return RoundMagnitude<long double>(s); }

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
void ExactSum::ToMpfr(const State& s, mpfr_ptr out) {
  double special = 0;
  if (SpecialResult(s, &special)) {
    mpfr_set_prec(out, 53);
    mpfr_set_d(out, special, MPFR_RNDN);
    return;
  }
  bool negative = false;
  const State t = Magnitude(s, &negative);
  std::uint32_t digits[kLimbs];
  for (int i = 0; i < kLimbs; ++i) digits[i] = static_cast<std::uint32_t>(t.limb[i]);
  mpz_t z;
  mpz_init(z);
  mpz_import(z, kLimbs, -1, sizeof(std::uint32_t), 0, 0, digits);  // least significant first
  const std::size_t bits = mpz_sizeinbase(z, 2);
  mpfr_set_prec(out, static_cast<mpfr_prec_t>(bits < 2 ? 2 : bits));
  const int ternary = mpfr_set_z_2exp(out, z, kLowestExponent, MPFR_RNDN);
  mpz_clear(z);
  if (ternary != 0) throw std::logic_error("ExactSum::ToMpfr: conversion was not exact");
  if (negative) mpfr_neg(out, out, MPFR_RNDN);
}
#endif

}  // namespace carrier::reference
