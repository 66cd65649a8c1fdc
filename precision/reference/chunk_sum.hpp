// precision/reference/chunk_sum.hpp: ChunkSum, the scan of the fast exact tiers (fast_sum.hpp):
// the exact sums of doubles, of their squares or of products of two doubles in ExactSum's limb
// layout, carries deferred.
//
// Value      After Finish(), Values() and Squares() are ExactSum::States in canonical form
//            (ExactSum::Canonical: limbs 0..66 in [0, 2^32), limb 67 signed, pending 1, or 0
//            for an exact zero; no special flags). Values() is exactly sum x_i over the terms
//            scanned with kValues. The second sum, Squares() (also named Products()), is exactly
//            sum x_i^2 over the terms scanned with kSquares, or sum a_i b_i over the pairs of
//            ScanProducts: one ChunkSum scans squares or products, never both (a dot scan never
//            scans squares).
// State      kLanes copies of ExactSum's 68 limbs of radix 2^32 (limb i weighs 2^(32 i - 1074))
//            per sum. Consecutive terms go to different lanes, so that terms of one binade (the
//            common case) do not form one read-modify-write chain on the same limbs. A limb may
//            hold more than 32 bits (the digits overlap, as in Neal's small superaccumulator,
//            arXiv 1505.05571): a term adds its low 32 bits to one limb and everything above to
//            the next (values: 2 limb updates; squares and products: 4), and a carry pass every
//            kBlock terms per lane brings every limb but the top one back to [0, 2^32). Beside
//            the limbs, per binade position p (0..2046) the OR of the significands of the values
//            there: it gives the lowest and highest set bit over all values (ReferenceSum's
//            precision rule) for one OR per term, and p = 2046 flags an infinity or a NaN.
//            Products keep the same per q (below): the OR of the P there, two ORs per term (a
//            zero product ORs nothing in), which gives the largest q + bits(P) and the smallest
//            q + trailing_zeros(P) over the nonzero products; a spare entry q = 1991 collects
//            the nonzero products outside the range, so that one test finds them. (Computing
//            the bit lengths per term instead costs about 1.5 ns more per pair.)
// Values     A scan of values alone (Scan<true, false>, the exact sum's) first collects its terms
//            per pattern bucket, as Neal's large superaccumulator does (arXiv 1505.05571): the
//            top 12 bits of a term's pattern (sign and biased exponent) pick a bucket, whose
//            64-bit word adds the whole pattern and whose OR word ORs it in. After kBucketAdds
//            terms a bucket is moved into lane 0's limbs (its sum of significands, less the
//            exponent bits that m additions put there, m (ix << 52), shifted to the binade and
//            split into three limb pieces, subtracted for the negative buckets) and its OR into
//            the per-position ORs below; Merge and Finish move every bucket first. One load,
//            add and store per word, no shift or split per term: 1.3-1.6x faster than the lane
//            form on normal data, which the squares and products keep.
// Products   a = sa 2^(pa - 1074), b = sb 2^(pb - 1074) (Position, Significand: sa, sb < 2^53)
//            give a b = +-P 2^(q - 1074) with P = sa sb < 2^106 exact in 128-bit integers and
//            q = pa + pb - 1074; the sign of a xor b negates the four pieces of P 2^(q mod 32).
//            This is the squares' path with q = 2 pos - 1074 replaced by pa + pb - 1074. The
//            exponents SumExact's precision rule needs (ProductTop, ProductLow): the MPFR
//            exponent of a b is q - 1074 + bits(P), its lowest set bit weighs
//            2^(q - 1074 + trailing_zeros(P)).
// Bound      Buckets: m <= kBucketAdds = 2047 patterns of one bucket, each below 2^64 and with the
//            same top 12 bits (ix), add to m (ix << 52) + F mod 2^64 with F, the sum of their
//            52-bit fractions, below 2047 * 2^52 < 2^63, so F is that sum less m (ix << 52) mod
//            2^64 exactly; the significands' sum F + m 2^52 (normal) is below 2^64, shifted by
//            < 32 below 2^96: three pieces below 2^32, and lane 0 is carried after each move.
//            The lanes: exact (integer arithmetic only). Between carry passes a lane takes at most
//            kBlock + 3 terms; each adds below 2^32 + 2^52 to a limb (values: sig < 2^53 shifted by
//            < 32, split at bit 32) or below 2^41 in magnitude (squares and products: P < 2^106
//            shifted by < 32, pieces of 32 bits and a top piece of at most 41 bits, each negated
//            for a negative product); from limbs in [0, 2^32) that stays below 2^32 + 1027 (2^52 +
//            2^32) < 2^63 in magnitude, so no limb overflows. Squares and products are placed at
//            q in [0, 1991] (1991: the spare, only for terms that are flagged), so their four
//            pieces land in limbs q/32 .. q/32 + 3 <= 65, and every term served (q <= 1990) is
//            below 2^(1990 + 106 - 1074) = 2^1022: the carries of up to 2^64 terms stay inside
//            limbs 66..67.
// Inputs     values: any doubles; +-0 adds nothing. Infinities and NaNs add garbage to limbs 63..64
//            (in range) and set HasSpecial(): the caller must then not use Values(). squares:
//            |x| in [2^-484, 2^511) or x = +-0 (x^2 is then a multiple of 2^-968 below 2^1022,
//            inside the limbs); any other input sets OutOfSquareRange() (its limb position is
//            clamped, so memory stays in bounds) and the caller must then not use Squares().
//            products: a zero product adds nothing wherever its factors lie; a nonzero one must
//            have q in [0, 1990] (P's low bit at 2^(q - 1074) >= 2^-1074, the product below
//            2^1022; for normal factors every |a b| in [2^-969, 2^1021) is served and none
//            outside [2^-970, 2^1022)), and an inf or a NaN in a or b (position 2046) is never
//            served: either sets OutOfProductRange() (a product outside goes to the spare q =
//            1991, so memory stays in bounds) and the caller must then not use Products().
// Cost       one pass, no branch per term but the loop's (and a bucket's move); a carry pass of
//            68 limbs per lane per kBlock terms; Finish() O(4096 + 2047 + 1992 + kLanes * 68).
//            About 152 KB of state (80 KB of it the buckets, 32 KB the products' ORs), zeroed
//            once; Merge O(12000).
#pragma once

#include <algorithm>
#include <bit>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "precision/parallel_pass.hpp"
#include "precision/reference/exact_sum.hpp"
#include "precision/reference/fixed_point.hpp"
#include "precision/stored_column.hpp"

namespace carrier::reference {

class ChunkSum {
 public:
  static constexpr int kLanes = 4;
  static constexpr std::size_t kBlock = 1024;  // terms per lane between carry passes

  // Adds x[0..n) to the sum of values (kValues) and of squares (kSquares) exactly.
  template <bool kValues, bool kSquares>
  void Scan(const double* x, std::size_t n);
  // Adds the products a[i stride] * b[i stride], i in [0, n), to the second sum exactly
  // (Products(); stride 2 reads an interleaved ValuePair<double> array, 1 two arrays).
  void ScanProducts(const double* a, const double* b, std::size_t n, std::size_t stride);

  // Adds the terms scanned by `other` (both before Finish): the scan may be split across threads
  // and the parts merged in any order, with the same result.
  void Merge(ChunkSum& other) {
    MoveBuckets();
    other.MoveBuckets();
    for (int k = 0; k < kLanes; ++k) {
      Carry(value_limb_ + k);
      Carry(square_limb_ + k);
      Carry(other.value_limb_ + k);
      Carry(other.square_limb_ + k);
    }
    for (int i = 0; i < ExactSum::kLimbs * kLanes; ++i) {
      value_limb_[i] += other.value_limb_[i];  // below 2^33 except the top limbs
      square_limb_[i] += other.square_limb_[i];
    }
    for (int k = 0; k < kLanes; ++k) {  // back to [0, 2^32), the invariant Scan's bound needs
      Carry(value_limb_ + k);
      Carry(square_limb_ + k);
    }
    for (int i = 0; i < 2 * kPositions; ++i) ors_[i] |= other.ors_[i];
    max_mag_ = std::max(max_mag_, other.max_mag_);
    out_of_range_ = out_of_range_ || other.out_of_range_;
    for (std::uint64_t i = 0; i < 2 * (kSpareQ + 1); ++i) product_ors_[i] |= other.product_ors_[i];
    product_special_ |= other.product_special_;
  }

  // Folds the lanes into canonical ExactSum states (call once, after the last Scan).
  void Finish() {
    MoveBuckets();
    Fold(value_limb_, values_);
    Fold(square_limb_, squares_);
    for (int p = 0; p < kPositions; ++p) {
      const std::uint64_t bits = ors_[2 * p] | ors_[2 * p + 1];
      if (bits == 0 || p == kPositions - 1) continue;  // nothing there, or inf / NaN
      top_ = std::max(top_, static_cast<long>(p + 64 - std::countl_zero(bits)) - 1074);
      low_ = std::min(low_, static_cast<long>(p + std::countr_zero(bits)) - 1074);
    }
    // The OR of the P at q has the highest and the lowest set bit of any of them.
    for (std::uint64_t q = 0; q <= kMaxProductQ; ++q) {
      const std::uint64_t lo = product_ors_[2 * q], hi = product_ors_[2 * q + 1];
      if ((lo | hi) == 0) continue;
      const long length = hi != 0 ? 128 - std::countl_zero(hi) : 64 - std::countl_zero(lo);
      const long zeros = lo != 0 ? std::countr_zero(lo) : 64 + std::countr_zero(hi);
      product_top_ = std::max(product_top_, static_cast<long>(q) + length - 1074);
      product_low_ = std::min(product_low_, static_cast<long>(q) + zeros - 1074);
    }
  }
  const ExactSum::State& Values() const { return values_; }
  const ExactSum::State& Squares() const { return squares_; }
  // The second sum after ScanProducts: sum a_i b_i (the same state as Squares()).
  const ExactSum::State& Products() const { return squares_; }

  // An infinity or a NaN was scanned.
  bool HasSpecial() const {
    return (ors_[2 * (kPositions - 1)] | ors_[2 * kPositions - 1] | bucket_or_[kBucketInfNaN] |
            bucket_or_[kBucketInfNaN + 2048]) != 0;
  }
  // Over the finite nonzero terms x = sig * 2^k (sig an integer below 2^53): the largest
  // k + bits(sig) (the weight of the highest set bit, plus one) and the smallest k +
  // trailing_zeros(sig) (the weight of the lowest set bit); LONG_MIN / LONG_MAX when there is none.
  long Top() const { return top_; }
  long Low() const { return low_; }
  // Squares only: the largest |x| as bits (fixes the top bit of the largest square).
  std::uint64_t MaxMagnitude() const { return max_mag_; }
  bool OutOfSquareRange() const { return out_of_range_; }
  // Products only, after Finish, over the nonzero products a b (when !OutOfProductRange()): the
  // largest MPFR exponent (the weight of the highest set bit, plus one) and the smallest weight
  // of a set bit, as Top() and Low() for values; LONG_MIN / LONG_MAX when every product is 0.
  long ProductTop() const { return product_top_; }
  long ProductLow() const { return product_low_; }
  // A nonzero product outside q in [0, 1990], or an inf or a NaN in a or b, was scanned (any
  // time, before Finish too).
  bool OutOfProductRange() const {
    return (product_special_ >> 63) != 0 ||
           (product_ors_[2 * kSpareQ] | product_ors_[2 * kSpareQ + 1]) != 0;
  }

  // Split of a magnitude's bits: x = sig * 2^(pos - 1074).
  static std::uint64_t Position(std::uint64_t mag) {
    const std::uint64_t biased = mag >> 52;
    return biased - static_cast<std::uint64_t>(biased != 0);
  }
  static std::uint64_t Significand(std::uint64_t mag) {
    return mag - (Position(mag) << 52);  // normal: 2^52 + fraction; subnormal: the fraction
  }

 private:
  static constexpr int kPositions = 2047;  // pos 0..2045 finite, 2046 inf / NaN
  static constexpr std::uint64_t kLow32 = 0xffffffffu;
  static constexpr std::uint64_t kSignMask = std::uint64_t{1} << 63;
  // |x| in [2^-484, 2^511) as bits: positions 538 .. 1532, squares at 2 .. 1990.
  static constexpr std::uint64_t kSquareMinMag = std::uint64_t{1023 - 484} << 52;
  static constexpr std::uint64_t kSquareMaxMag = std::uint64_t{1023 + 511} << 52;
  static constexpr std::uint64_t kMaxProductQ = 1990;  // the highest q a product is served at
  static constexpr std::uint64_t kSpareQ = 1991;       // where the products outside go
  static constexpr std::uint64_t kOneAt52 = std::uint64_t{1} << 52;  // inf / NaN + it >= 2^63

  static constexpr int kBuckets = 4096;                 // sign and biased exponent of a pattern
  static constexpr std::uint32_t kBucketAdds = 2047;    // patterns per bucket between moves
  static constexpr std::uint64_t kBucketInfNaN = 2047;  // + inf / NaN; 4095: - inf / NaN
  static constexpr std::uint64_t kFraction = (std::uint64_t{1} << 52) - 1;

  // Bucket ix's word into lane 0's limbs (see Values and Bound above); inf and NaN (biased
  // exponent 2047) are only flagged, through the ORs. Leaves the bucket empty.
  void MoveBucket(std::uint64_t ix) {
    const std::uint64_t m = bucket_used_[ix];
    const std::uint64_t biased = ix & 2047;
    if (m != 0 && biased != 2047) {
      const std::uint64_t fractions = bucket_acc_[ix] - m * (ix << 52);  // mod 2^64: exact
      const std::uint64_t sig = fractions + (biased != 0 ? m << 52 : 0);
      const std::uint64_t pos = biased - static_cast<std::uint64_t>(biased != 0);
      const U128 w = U128{sig} << (pos & 31);
      const auto p0 = static_cast<std::int64_t>(Lo64(w) & kLow32);
      const auto p1 = static_cast<std::int64_t>(Lo64(w) >> 32);
      const auto p2 = static_cast<std::int64_t>(Hi64(w));  // < 2^32
      std::int64_t* l = value_limb_ + (pos >> 5) * kLanes;
      if (ix >> 11) {
        l[0] -= p0;
        l[kLanes] -= p1;
        l[2 * kLanes] -= p2;
      } else {
        l[0] += p0;
        l[kLanes] += p1;
        l[2 * kLanes] += p2;
      }
      Carry(value_limb_);
    }
    bucket_acc_[ix] = 0;
    bucket_used_[ix] = 0;
  }

  // Every bucket into the limbs, and the buckets' ORs into the per-position ORs (a normal
  // binade's implicit bit added where a term was there).
  void MoveBuckets() {
    for (std::uint64_t ix = 0; ix < kBuckets; ++ix) {
      if (bucket_used_[ix] != 0) MoveBucket(ix);
      const std::uint64_t bits = bucket_or_[ix];
      if (bits == 0) continue;
      const std::uint64_t biased = ix & 2047;
      const std::uint64_t pos = biased - static_cast<std::uint64_t>(biased != 0);
      ors_[2 * pos] |= (bits & kFraction) | (biased != 0 ? std::uint64_t{1} << 52 : 0);
      bucket_or_[ix] = 0;
    }
  }

  // ScanProducts with the stride a constant (kStride 1 or 2) or read from `stride` (kStride 0).
  template <std::size_t kStride>
  void ScanProductsStrided(const double* a, const double* b, std::size_t n, std::size_t stride);

  // Carries of one lane (its limbs at l[0], l[kLanes], l[2 kLanes], ...).
  static void Carry(std::int64_t* l) {
    for (int i = 0; i + 1 < ExactSum::kLimbs; ++i) {
      const std::int64_t carry = l[i * kLanes] >> 32;  // floor division (arithmetic shift)
      l[i * kLanes] &= static_cast<std::int64_t>(kLow32);
      l[(i + 1) * kLanes] += carry;
    }
  }

  static void Fold(std::int64_t* lanes, ExactSum::State& out) {
    for (int k = 0; k < kLanes; ++k) Carry(lanes + k);
    out = ExactSum::Identity();
    for (int i = 0; i < ExactSum::kLimbs; ++i) {
      std::int64_t s = 0;
      for (int k = 0; k < kLanes; ++k) s += lanes[i * kLanes + k];
      out.limb[i] = s;
    }
    ExactSum::Normalize(out);  // sets pending: 0 for an exact zero, else 1
  }

  // One term into lane k (limbs at value_limb_ + k, square_limb_ + k).
  template <bool kValues, bool kSquares>
  inline void Add(int k, double v, std::uint64_t& max_mag, bool& bad) {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(v);
    const std::uint64_t mag = bits & ~kSignMask;
    std::uint64_t pos = Position(mag);
    const std::uint64_t sig = mag - (pos << 52);
    ors_[2 * pos + (k & 1)] |= sig;  // two OR lanes: consecutive terms, different words
    if constexpr (kValues) {
      // +-sig * 2^sh = d1 * 2^32 + d0 with d0 = the low 32 bits of the two's complement
      // product, in [0, 2^32), and d1 = floor(+-sig / 2^(32 - sh)), |d1| < 2^52.
      const unsigned sh = static_cast<unsigned>(pos & 31);
      const std::int64_t neg = -static_cast<std::int64_t>(bits >> 63);  // 0 or -1
      const std::int64_t ssig = (static_cast<std::int64_t>(sig) ^ neg) - neg;
      const auto d0 = static_cast<std::int64_t>((static_cast<std::uint64_t>(ssig) << sh) & kLow32);
      const std::int64_t d1 = ssig >> (32 - sh);
      std::int64_t* l = value_limb_ + k + (pos >> 5) * kLanes;
      l[kLanes] += d1;
      l[0] += d0;
    }
    if constexpr (kSquares) {
      max_mag = std::max(max_mag, mag);
      bad = bad | ((mag != 0) & ((mag < kSquareMinMag) | (mag >= kSquareMaxMag)));
      pos = std::clamp<std::uint64_t>(pos, 537, 1532);  // moves only zeros and bad inputs
      const std::uint64_t q = 2 * pos - 1074;           // x^2 = sig^2 * 2^(q - 1074)
      AddWide(k, U128{sig} * sig, q, 0);
    }
  }

  // +-P 2^(q - 1074) into lane k of the second sum: P < 2^106, q in [0, kSpareQ], neg 0 (+)
  // or -1 (-). Four pieces of P 2^(q mod 32), each negated when neg = -1.
  inline void AddWide(int k, U128 p, std::uint64_t q, std::int64_t neg) {
    const unsigned sh = static_cast<unsigned>(q & 31);
    const std::uint64_t lo = Lo64(p), hi = Hi64(p);
    // p << sh (< 2^137) as three 64-bit words; (w >> 1) >> (63 - sh) is w >> (64 - sh)
    // without the undefined shift by 64 when sh = 0.
    const std::uint64_t w0 = lo << sh;
    const std::uint64_t w1 = (hi << sh) | ((lo >> 1) >> (63 - sh));
    const std::uint64_t w2 = (hi >> 1) >> (63 - sh);  // < 2^9
    auto piece = [neg](std::uint64_t d) { return (static_cast<std::int64_t>(d) ^ neg) - neg; };
    std::int64_t* l = square_limb_ + k + (q >> 5) * kLanes;
    l[0] += piece(w0 & kLow32);
    l[kLanes] += piece(w0 >> 32);
    l[2 * kLanes] += piece(w1 & kLow32);
    l[3 * kLanes] += piece((w1 >> 32) | (w2 << 32));  // magnitude < 2^41
  }

  // One product a * b into lane k of the second sum, its P into product_ors_ at its q (a
  // nonzero product outside q in [0, 1990] at the spare entry 1991 instead), and bit 63 of
  // `special` set by an inf or a NaN factor (mag + 2^52 >= 2^63 exactly for those).
  inline void AddProduct(int k, double a, double b, std::uint64_t& special) {
    const std::uint64_t bits_a = std::bit_cast<std::uint64_t>(a);
    const std::uint64_t bits_b = std::bit_cast<std::uint64_t>(b);
    const std::uint64_t mag_a = bits_a & ~kSignMask, mag_b = bits_b & ~kSignMask;
    const std::uint64_t pos_a = Position(mag_a), pos_b = Position(mag_b);
    const std::uint64_t sig_a = mag_a - (pos_a << 52), sig_b = mag_b - (pos_b << 52);
    const U128 p = U128{sig_a} * sig_b;  // < 2^106, exact
    const std::uint64_t lo = Lo64(p), hi = Hi64(p);
    // q = pos_a + pos_b - 1074 wraps around below 0, so one comparison finds q outside [0, 1990].
    const std::uint64_t q = pos_a + pos_b - 1074;
    const std::uint64_t qc = q > kMaxProductQ ? kSpareQ : q;
    special |= (mag_a + kOneAt52) | (mag_b + kOneAt52);
    product_ors_[2 * qc] |= lo;  // a zero product ORs nothing in
    product_ors_[2 * qc + 1] |= hi;
    AddWide(k, p, qc, -static_cast<std::int64_t>((bits_a ^ bits_b) >> 63));
  }

  // limb i of lane k at [i * kLanes + k]: one base register serves every lane
  std::int64_t value_limb_[ExactSum::kLimbs * kLanes] = {};
  std::int64_t square_limb_[ExactSum::kLimbs * kLanes] = {};
  std::uint64_t ors_[2 * kPositions] = {};
  ExactSum::State values_ = ExactSum::Identity();
  ExactSum::State squares_ = ExactSum::Identity();
  long top_ = LONG_MIN, low_ = LONG_MAX;
  std::uint64_t max_mag_ = 0;
  bool out_of_range_ = false;
  // Per q in [0, kSpareQ], the OR of the P (low word, high word) of the products there.
  std::uint64_t product_ors_[2 * (kSpareQ + 1)] = {};
  std::uint64_t product_special_ = 0;  // bit 63: an inf or a NaN factor
  // The buckets of a values-only scan (see Values above): per pattern bucket the sum of the
  // patterns added since its last move, their OR, and how many.
  std::uint64_t bucket_acc_[kBuckets] = {};
  std::uint64_t bucket_or_[kBuckets] = {};
  std::uint32_t bucket_used_[kBuckets] = {};
  long product_top_ = LONG_MIN, product_low_ = LONG_MAX;  // set by Finish
};

template <bool kValues, bool kSquares>
void ChunkSum::Scan(const double* x, std::size_t n) {
  if constexpr (kValues && !kSquares) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t bits = std::bit_cast<std::uint64_t>(x[i]);
      const std::uint64_t ix = bits >> 52;
      const std::uint32_t used = bucket_used_[ix] + 1;
      bucket_acc_[ix] += bits;
      bucket_or_[ix] |= bits;
      bucket_used_[ix] = used;
      if (used == kBucketAdds) [[unlikely]]
        MoveBucket(ix);
    }
    return;
  }
  std::uint64_t max_mag = max_mag_;
  bool bad = out_of_range_;
  for (std::size_t start = 0; start < n; start += kLanes * kBlock) {
    const std::size_t end = std::min(n, start + kLanes * kBlock);
    std::size_t i = start;
    for (; i + kLanes <= end; i += kLanes)
      for (int k = 0; k < kLanes; ++k) Add<kValues, kSquares>(k, x[i + k], max_mag, bad);
    for (; i < end; ++i) Add<kValues, kSquares>(0, x[i], max_mag, bad);  // < kLanes terms
    for (int k = 0; k < kLanes; ++k) {
      if constexpr (kValues) Carry(value_limb_ + k);
      if constexpr (kSquares) Carry(square_limb_ + k);
    }
  }
  max_mag_ = max_mag;
  out_of_range_ = bad;
}

inline void ChunkSum::ScanProducts(const double* a, const double* b, std::size_t n,
                                   std::size_t stride) {
  // The callers' two strides get loops of their own: a constant stride keeps the addressing
  // plain (a run-time stride costs about twice the time per pair).
  if (stride == 1) {
    ScanProductsStrided<1>(a, b, n, 1);
  } else if (stride == 2) {
    ScanProductsStrided<2>(a, b, n, 2);
  } else {
    ScanProductsStrided<0>(a, b, n, stride);
  }
}

template <std::size_t kStride>
void ChunkSum::ScanProductsStrided(const double* a, const double* b, std::size_t n,
                                   std::size_t stride) {
  const std::size_t step = kStride != 0 ? kStride : stride;
  std::uint64_t special = product_special_;
  for (std::size_t start = 0; start < n; start += kLanes * kBlock) {
    const std::size_t end = std::min(n, start + kLanes * kBlock);
    std::size_t i = start;
    for (; i + kLanes <= end; i += kLanes) {
#pragma GCC unroll 4  // one copy per lane: constant limb offsets
      for (int k = 0; k < kLanes; ++k) AddProduct(k, a[(i + k) * step], b[(i + k) * step], special);
    }
    for (; i < end; ++i) AddProduct(0, a[i * step], b[i * step], special);  // < kLanes terms
    for (int k = 0; k < kLanes; ++k) Carry(square_limb_ + k);
  }
  product_special_ = special;
}

// body(c, lo, hi) over [0, n) split across PassThreads() (precision/parallel_pass.hpp): part 0
// into `into` (fresh), each other part into its own ChunkSum, merged into `into` in part order.
// Merge is exact, so after Finish every observable is that of one body(into, 0, n).
template <class Body>
void SplitScan(ChunkSum& into, std::uint64_t n, Body&& body) {
  const std::size_t parts = PassParts(n);
  if (parts <= 1) {
    body(into, std::uint64_t{0}, n);
    return;
  }
  std::vector<std::unique_ptr<ChunkSum>> rest(parts - 1);  // about 152 KB each: on the heap
  for (auto& r : rest) r = std::make_unique<ChunkSum>();
  SplitPass(n, parts, [&](std::size_t part, std::uint64_t lo, std::uint64_t hi) {
    body(part == 0 ? into : *rest[part - 1], lo, hi);
  });
  for (auto& r : rest) into.Merge(*r);
}

// One Scan of x[0..n) split by SplitScan: after Finish every observable (Values, Squares, Top,
// Low, MaxMagnitude, HasSpecial, OutOfSquareRange) is that of into.Scan(x, n).
template <bool kValues, bool kSquares>
void ScanParallel(ChunkSum& into, const double* x, std::size_t n) {
  SplitScan(into, n, [&](ChunkSum& c, std::uint64_t lo, std::uint64_t hi) {
    c.Scan<kValues, kSquares>(x + lo, static_cast<std::size_t>(hi - lo));
  });
}

// The same scan over a StoredColumn, each part decoding its range a chunk at a time (Scan
// accumulates, and carries at the end of every call, so chunks give the one-pass state).
template <bool kValues, bool kSquares>
void ScanParallel(ChunkSum& into, const StoredColumn& x) {
  if (x.layout() == StoredColumn::Layout::kDouble) {
    ScanParallel<kValues, kSquares>(into, x.Doubles().data(), x.size());
    return;
  }
  SplitScan(into, x.size(), [&](ChunkSum& c, std::uint64_t lo, std::uint64_t hi) {
    x.ForEachChunk(lo, hi, [&](std::uint64_t, std::span<const double> v) {
      c.Scan<kValues, kSquares>(v.data(), v.size());
    });
  });
}

// ScanProducts(a, b, n, stride) split by SplitScan: every observable (Products, ProductTop,
// ProductLow, OutOfProductRange) is the one-pass one.
inline void ScanProductsParallel(ChunkSum& into, const double* a, const double* b, std::size_t n,
                                 std::size_t stride) {
  SplitScan(into, n, [&](ChunkSum& c, std::uint64_t lo, std::uint64_t hi) {
    c.ScanProducts(a + lo * stride, b + lo * stride, static_cast<std::size_t>(hi - lo), stride);
  });
}

// The same over two StoredColumns of one length (the caller checks it): a_i = a's value i,
// b_i = b's. Each part reads its range of both columns a chunk at a time (ForEachChunkOfPairs);
// two kDouble columns go to the pointer form.
inline void ScanProductsParallel(ChunkSum& into, const StoredColumn& a, const StoredColumn& b) {
  using Layout = StoredColumn::Layout;
  if (a.layout() == Layout::kDouble && b.layout() == Layout::kDouble) {
    ScanProductsParallel(into, a.Doubles().data(), b.Doubles().data(), a.size(), 1);
    return;
  }
  SplitScan(into, a.size(), [&](ChunkSum& c, std::uint64_t lo, std::uint64_t hi) {
    ForEachChunkOfPairs(a, b, lo, hi,
                        [&](std::uint64_t, std::span<const double> va, std::span<const double> vb) {
                          c.ScanProducts(va.data(), vb.data(), va.size(), 1);
                        });
  });
}

}  // namespace carrier::reference
