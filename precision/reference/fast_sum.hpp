// precision/reference/fast_sum.hpp: the exact tier of the sum reference at superaccumulator
// speed.
//
// ReferenceSumFast(x) returns the same Reference as ReferenceSum(x) (reference.hpp, default
// options: Method::kAuto) in every field — op "sum", count, as_double, as_long_double, the
// exact value (same MPFR precision and bits), and the certificate (tier exact, certified,
// correctly rounded, precision_bits, error_bound_log2 = -inf) — tests/precision/
// test_fast_sum.cpp compares the two on random, ill-conditioned, huge-range, cancelling and
// special inputs. What changes is how the exact sum is formed: one pass of ExactSum::Add
// (exact_sum.hpp: a 68-limb carry-save accumulator of radix 2^32, three limb updates per term,
// no rounding anywhere; the style of Neal's small superaccumulator, arXiv 1505.05571) instead
// of n MPFR conversions and one mpfr_sum, and one conversion of the accumulator to MPFR at the
// end. The precision it reports is ReferenceSum's: top - low + bits(n) + 1, with top the largest
// MPFR exponent of a nonzero term and low the weight of the lowest set bit of any term.
// ExactSum states merge exactly (Combine), so a caller may split the pass across threads.
//
// Special values as reference.hpp: NaN, or +inf and -inf together -> NaN; else the inf; empty,
// all zeros or an exact zero sum -> +0. Cost: about one ns per term plus O(68) at the end.
#pragma once

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <span>

#include "precision/reference/reference.hpp"

namespace carrier::reference {

Reference ReferenceSumFast(std::span<const double> x);

}  // namespace carrier::reference

#endif
