// precision/reference/reference_internal.hpp: what the reference .cpp files share; not part of
// the public API (include reference.hpp instead).
#pragma once

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <functional>
#include <vector>

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

}  // namespace carrier::reference::internal

#endif  // CARRIER_HAVE_MPFR
