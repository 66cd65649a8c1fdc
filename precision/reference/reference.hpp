// precision/reference/reference.hpp: certified references for every op of core/carriers.
//
// What a reference means. The exact real result of the op on the inputs *as stored*: callers
// pass the stored values (already rounded to their storage format) as doubles, and the
// reference is the mathematical op on exactly those numbers, never on the unrounded data:
//   sum, kahan   sum_i x_i                  dot      sum_i a_i b_i
//   max          max_i x_i (exact)          argmax   (max, lowest index of it) (exact)
//   lse          log sum_i exp(x_i)         softmax  exp(x_i) / sum_j exp(x_j), per i
//   welford      mean, population variance m2 / n, sample variance m2 / (n - 1)
//   norm2        sqrt(sum_i x_i^2)          affine   the composed map h -> a h + b
//   attention    softmax(scores) . V, per output column
// Components come in the order of the carrier's Components() (argmax: value, index; welford:
// mean, var_population, var_sample; affine: a, b; softmax: one per input; attention: Dv).
//
// Tiers (Certificate::tier says which produced a result):
//   exact  sum, kahan, dot, welford, norm2, max, argmax. The sums are formed exactly in MPFR
//          (mpfr_sum over the inputs or over exact products: a product of two doubles is
//          exact at 106 bits; a precision covering every bit, ternary value checked to be 0);
//          welford forms n m2 = n sum x^2 - (sum x)^2 exactly; one final division or square
//          root is rounded to odd at 128 bits, which makes the double and long double roundings
//          correct (see mpfr_util.hpp). No escalation, rigorous.
//   fast   lse, softmax, attention: the fixed-point kernel of fixed_exp.hpp (128-bit integer
//          arithmetic, proven relative error <= 2^-111 per exp; sum S exact up to 2^-192 per
//          term; attention's numerators sum_i t_i v_ij in 256-bit fixed point from exact
//          products), then one log (lse), reciprocal (softmax) or division per column
//          (attention) in MPFR. Rigorous a-priori bound, reported in error_bound_log2: about
//          2^-111 / |lse| for lse (absolute in lse, so cancellation m ~ -log S weakens it),
//          2^-110 for softmax, 2^-111 sum_i w_i |v_ij| / |o_j| for attention (cancellation in
//          a numerator weakens it). Outside its domain (attention: a non-finite unmasked value
//          or a weight below e^-16383) the fast tier declines and kAuto uses mpfr.
//   mpfr   every op (affine always): the op evaluated at p bits in MPFR, then again at 2p,
//          escalating p = start_bits, 2 start_bits, ... while max_bits allows,
//          until the two agree on every component: |v_p - v_2p| <= 2^tolerance_log2 |v_2p|, or
//          both are the same zero, infinity or NaN. The 2p value is returned; precision_bits
//          is p. Certification rule (an assumption, not a proof): doubling the precision at
//          least halves the error, so |v_2p - v| <= |v_p - v_2p|; under it the reported
//          error_bound_log2 is log2 max |v_p - v_2p| / |v_2p| (-inf when they are equal, and
//          the value is then taken as exact). Its blind spot: a zero (or any value) that both
//          precisions reproduce exactly is accepted, so a cancellation of more than 2p bits
//          below the terms (1 + 2^-300 - 1 summed at 128 and 256 bits gives 0 twice) passes;
//          the exact and fast tiers have no such case, which is why kAuto prefers them.
// Method::kAuto uses exact where it exists, else fast where it exists and certifies, else
// mpfr; kEscalate forces the mpfr tier (for tests and benchmarks; max/argmax and special values
// stay exact); kFast forces the fast tier where there is one (no fallback: an uncertified
// result says so).
//
// Certificate. `certified`: the relative error bound of `value` (hence of every rounding) is
// at most 2^tolerance_log2 (rigorous for exact and fast, under the assumption above for mpfr).
// `correctly_rounded`: every as_double / as_long_double is the correct round-to-nearest-even
// of the true value (exact tier: always; fast and mpfr: the whole error window rounds to the
// same number, as Ziv's strategy; with require_correct_rounding the mpfr tier keeps escalating
// until it does or max_bits is reached). A result is never silently uncertified: when
// `certified` is false, `note` says why; callers must check it.
//
// Special values (the project's table, core/carriers/*.hpp): NaN in -> NaN; sum/dot of +inf
// and -inf (or inf * 0 in dot) -> NaN, else the inf; empty sum/dot/norm2 -> +0, exact zero sum
// -> +0; max: empty -> -inf, +0 above -0; argmax: empty -> (-inf, -1), NaN -> first NaN's
// index; lse: empty or all -inf -> -inf, any +inf -> +inf; softmax: empty -> no components,
// all -inf -> NaN each (0 with SoftmaxEmptyRow::kZeros), +inf elements -> 1/k each and 0
// elsewhere, -inf elements -> 0; welford: empty -> NaN, one element -> variances (0, NaN), an
// inf -> mean that inf (both signs: NaN) and variances NaN; norm2: NaN beats inf, inf -> +inf;
// attention: NaN score -> NaN, -inf score masks its row (V not read), +inf scores -> the mean
// of their rows (other rows weigh exactly 0, and 0 * inf = NaN as in IEEE), empty or all -inf
// -> NaN (or zeros). Special results are exact (tier exact).
//
// Cost (n inputs): exact tiers O(n) MPFR operations at 53-106 bits plus one mpfr_sum; fast lse
// and softmax about 60 ns per element, attention that plus about 10 ns per value; mpfr tier one
// exp per element at p and again at 2p bits (p = 128: about 4 us per element in all), more when
// it escalates, plus n products per attention column. Thread-safe: no global state is written
// except MPFR's per-thread exponent range, which each call widens and restores. MPFR caches
// constants (log 2) and memory pools per thread: a thread that computed references should call
// mpfr_free_cache() before it exits, or LeakSanitizer reports them.
#pragma once

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <mpfr.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/carriers/online_softmax.hpp"
#include "core/carriers/pairs.hpp"
#include "precision/reference/mpfr_util.hpp"
#include "precision/stored_column.hpp"

namespace carrier::reference {

enum class Tier { kExact, kFast, kMpfr };
std::string_view TierName(Tier t);  // "exact", "fast", "mpfr"

enum class Method { kAuto, kEscalate, kFast };

struct Options {
  Method method = Method::kAuto;
  mpfr_prec_t start_bits = 128;                 // mpfr tier's first p (at least 64)
  mpfr_prec_t max_bits = mpfr_prec_t{1} << 14;  // the highest precision ever evaluated (>= 2p)
  int tolerance_log2 = -100;                    // relative agreement / bound required
  bool require_correct_rounding = true;         // mpfr tier: escalate until rounding is sure
  SoftmaxEmptyRow empty_row = SoftmaxEmptyRow::kNaN;  // softmax and attention
};

struct Certificate {
  bool certified = false;
  bool correctly_rounded = false;
  Tier tier = Tier::kExact;
  // exact: the largest precision of an exact intermediate; fast: 128 (the fixed-point width);
  // mpfr: p of the agreeing pair (the value is computed at 2p).
  long precision_bits = 0;
  // log2 of the relative error bound of `value` (max over components); -inf when exact.
  double error_bound_log2 = -std::numeric_limits<double>::infinity();
  std::string note;  // why not certified, or which fallback was taken; empty otherwise
};

struct Reference {
  std::string op;
  std::uint64_t count = 0;                  // number of inputs
  std::int64_t index = -1;                  // argmax only: the index (also component 1)
  std::vector<double> as_double;            // per component, see Certificate
  std::vector<long double> as_long_double;  // per component
  // Per component, the exact value or the certified approximation; empty for softmax (n
  // components: as_long_double, within 2^-11 ulp of fp64, is the finest form kept there).
  std::vector<MpfrValue> value;
  Certificate cert;
};

Reference ReferenceSum(std::span<const double> x, const Options& options = {});
Reference ReferenceMax(std::span<const double> x);
Reference ReferenceArgMax(std::span<const double> x);
// The same over a packed column (precision/stored_column.hpp), read a chunk at a time.
Reference ReferenceMax(const StoredColumn& x);
Reference ReferenceArgMax(const StoredColumn& x);
Reference ReferenceLse(std::span<const double> x, const Options& options = {});
// The same Reference, field for field, from a column read a chunk at a time (the MPFR tiers,
// when the fast tier is not accepted, and special values decode it whole).
Reference ReferenceLse(const StoredColumn& x, const Options& options = {});
Reference ReferenceSoftmax(std::span<const double> x, const Options& options = {});
Reference ReferenceWelford(std::span<const double> x, const Options& options = {});
Reference ReferenceNorm2(std::span<const double> x, const Options& options = {});
Reference ReferenceDot(std::span<const ValuePair<double>> x, const Options& options = {});
Reference ReferenceAffine(std::span<const ValuePair<double>> x, const Options& options = {});
// The same Reference, field for field, on the pairs (a_i, b_i) of two columns of one length
// (else std::invalid_argument), each escalation pass reading both a chunk at a time.
Reference ReferenceAffine(const StoredColumn& a, const StoredColumn& b,
                          const Options& options = {});
// values: row-major n x dv (row i is the value vector of score i).
Reference ReferenceAttention(std::span<const double> scores, std::span<const double> values,
                             std::size_t dv, const Options& options = {});

// (Which reference an op of the CLI uses is its op-table entry's business: experiments/
// registry/registry.hpp. Nothing here knows the CLI's op names.)

// The benchmark's baseline, NOT a certified reference: m = max x, then for every element one
// subtraction, one exp and one addition at `bits` bits, lse = m + log(sum). Same special
// values as ReferenceLse.
MpfrValue PlainMpfrLse(std::span<const double> x, mpfr_prec_t bits);

}  // namespace carrier::reference

#endif  // CARRIER_HAVE_MPFR
