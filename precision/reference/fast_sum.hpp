// precision/reference/fast_sum.hpp: the exact tiers of the sum, dot, Welford and norm2 references
// at superaccumulator speed.
//
// ReferenceSumFast(x) returns the same Reference as ReferenceSum(x) (reference.hpp, default
// options: Method::kAuto) in every field — op "sum", count, as_double, as_long_double, the
// exact value (same MPFR precision and bits), and the certificate (tier exact, certified,
// correctly rounded, precision_bits, error_bound_log2 = -inf) — tests/precision/
// test_fast_sum.cpp compares the two on random, ill-conditioned, huge-range, cancelling and
// special inputs. What changes is how the exact sum is formed: one pass of ChunkSum
// (chunk_sum.hpp: ExactSum's 68 limbs of radix 2^32 in four lanes, each term two limb updates
// whose digits overlap, carries deferred to a pass every 1024 terms per lane, no rounding
// anywhere; the design of Neal's small superaccumulator, arXiv 1505.05571) instead of n MPFR
// conversions and one mpfr_sum, and one conversion of the result to MPFR at the end. The
// precision it reports is ReferenceSum's: top - low + bits(n) + 1, with top the largest MPFR
// exponent of a nonzero term and low the weight of the lowest set bit of any term (ChunkSum keeps
// the OR of the significands per binade for them).
// ChunkSum scans merge exactly (ChunkSum::Merge), so a caller may split the pass across threads.
//
// Special values as reference.hpp: NaN, or +inf and -inf together -> NaN; else the inf; empty,
// all zeros or an exact zero sum -> +0. Cost: a few ns per term plus O(2047) at the end.
#pragma once

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <span>

#include "precision/reference/reference.hpp"

namespace carrier::reference {

Reference ReferenceSumFast(std::span<const double> x);
// Each function here also reads a StoredColumn (precision/stored_column.hpp) a chunk at a
// time, with the same Reference as its span form on the same values; the inputs their span
// form hands to the definition (special values, the range edges) are decoded whole for it.
Reference ReferenceSumFast(const StoredColumn& x);

// ReferenceWelford(x) (default options), field for field, from one ChunkSum pass forming the
// exact sums of x and of x^2 (the 106-bit integer square of the significand, four limb
// updates) instead of 2n MPFR terms and two mpfr_sum; then ReferenceWelford's own exact steps (n m2
// = n sum x^2 - (sum x)^2) and its three correctly rounded quotients. Inputs with a nonzero |x|
// outside [2^-484, 2^511) (where the split of x^2 could round), special values, and n < 2 are
// answered by ReferenceWelford itself.
Reference ReferenceWelfordFast(std::span<const double> x);
Reference ReferenceWelfordFast(const StoredColumn& x);

// ReferenceNorm2(x) (default options), field for field: the exact sum of squares from one
// ChunkSum pass (same fallback rule), then ReferenceNorm2's one correctly rounded root.
Reference ReferenceNorm2Fast(std::span<const double> x);
Reference ReferenceNorm2Fast(const StoredColumn& x);

// ReferenceDot(x) (default options), field for field (op "dot", count, the roundings, the exact
// value at SumExact's precision, the exact-tier certificate): one ChunkSum pass adds each exact
// product a_i b_i (the 106-bit integer product of the significands, four limb updates, the sign
// of a xor b) instead of n 106-bit MPFR products and one mpfr_sum, and keeps the OR of the
// products' significands per exponent for SumExact's precision rule (the highest and the lowest
// set bit over the nonzero products). Inputs with an inf or a NaN, or with a nonzero product
// outside ChunkSum's product range (for normal factors every |a b| in [2^-969, 2^1021) is
// served, none outside [2^-970, 2^1022): chunk_sum.hpp), are answered by ReferenceDot itself.
// Cost: about 4 ns per pair against about 100 for ReferenceDot (n = 2^20, one thread, GCC -O3),
// plus O(4000) at the end.
Reference ReferenceDotFast(std::span<const ValuePair<double>> x);
// Pairs (a_i, b_i) from two columns of one length (else std::invalid_argument), read a chunk of
// each at a time; the fallback decodes both into pairs for ReferenceDot.
Reference ReferenceDotFast(const StoredColumn& a, const StoredColumn& b);

}  // namespace carrier::reference

#endif
