// precision/reference/reference_internal.hpp: what the reference .cpp files share; not part of
// the public API (include reference.hpp instead).
#pragma once

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <algorithm>
#include <bit>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "precision/reference/exact_sum.hpp"
#include "precision/reference/reference.hpp"

namespace carrier::reference::internal {

// Evaluates every component of an op at precision p; out must hold k values on return.
using Evaluator = std::function<void(mpfr_prec_t p, std::vector<MpfrValue>& out)>;

// The mpfr tier (rule in reference.hpp): fills r's components and certificate.
void Escalate(std::size_t k, const Evaluator& evaluate, const Options& options, Reference& r);

// Appends a component whose MPFR value is exact (its roundings are then correct).
void AddExact(Reference& r, MpfrValue v);
// Appends the exact double x (special values, max, argmax).
void AddExactDouble(Reference& r, double x);
// Appends a component with separately computed correct roundings.
void AddRounded(Reference& r, MpfrValue v, double d, long double ld);
// Marks r as an exact-tier result.
void MarkExact(Reference& r, long precision_bits, double error_bound_log2);

// Precision of the MPFR value kept for irrational exact-tier results (quotients, roots):
// at least 256 bits and 32 bits below the tolerance.
mpfr_prec_t ValueBits(const Options& options);

// Precision of the largest exact intermediate, for Certificate::precision_bits.
long MaxPrecision(const std::vector<MpfrValue>& values);

// Shared by the exact (reference_exact.cpp) and exp (reference_exp.cpp) tiers.
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
// MarkExact's error_bound_log2 for an exact value: log2(0).
inline constexpr double kExactLog2 = -std::numeric_limits<double>::infinity();

// An empty reference of `op` over n inputs, to be filled by a tier.
inline Reference Start(const char* op, std::size_t n) {
  Reference r;
  r.op = op;
  r.count = n;
  return r;
}

// The exact sum in state s (ChunkSum's, chunk_sum.hpp) of n terms, at the precision SumExact
// (mpfr_util.hpp) gives the same sum: top - low + bits(n) + 1 (MPFR_PREC_MIN + 1 at least),
// with top the largest MPFR exponent and low the smallest weight of a set bit over the nonzero
// terms; 53 bits and +0 when every term is zero (top = LONG_MIN), +0 for an exact zero sum.
// Throws std::logic_error if the value does not fit that precision (it always does: a bug).
inline MpfrValue ToExact(const ExactSum::State& s, long top, long low, std::size_t n) {
  mpfr_prec_t prec = 53;
  if (top != LONG_MIN) {
    const long carry_bits = 64 - std::countl_zero(static_cast<std::uint64_t>(n));
    prec = static_cast<mpfr_prec_t>(std::max<long>(top - low + carry_bits + 1, MPFR_PREC_MIN + 1));
  }
  MpfrValue exact;
  ExactSum::ToMpfr(s, exact.get());
  MpfrValue value(prec);
  if (mpfr_set(value.get(), exact.get(), MPFR_RNDN) != 0)
    throw std::logic_error("reference: an exact sum does not fit its precision");
  if (mpfr_zero_p(value.get())) mpfr_set_zero(value.get(), 1);
  return value;
}

}  // namespace carrier::reference::internal

#endif  // CARRIER_HAVE_MPFR
