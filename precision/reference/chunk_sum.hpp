// precision/reference/chunk_sum.hpp: ChunkSum, the scan of the fast exact tiers (fast_sum.hpp):
// the exact sums of doubles and of their squares in ExactSum's limb layout, carries deferred.
//
// Value      After Finish(), Values() and Squares() are ExactSum::States in canonical form
//            (ExactSum::Canonical: limbs 0..66 in [0, 2^32), limb 67 signed, pending 1, or 0
//            for an exact zero; no special flags) whose values are exactly sum x_i and sum x_i^2
//            over the terms scanned with kValues and kSquares respectively.
// State      kLanes copies of ExactSum's 68 limbs of radix 2^32 (limb i weighs 2^(32 i - 1074))
//            per sum. Consecutive terms go to different lanes, so that terms of one binade (the
//            common case) do not form one read-modify-write chain on the same limbs. A limb may
//            hold more than 32 bits (the digits overlap, as in Neal's small superaccumulator,
//            arXiv 1505.05571): a term adds its low 32 bits to one limb and everything above to
//            the next (values: 2 limb updates; squares: 4), and a carry pass every kBlock terms
//            per lane brings every limb but the top one back to [0, 2^32). Beside the limbs, per
//            binade position p (0..2046) the OR of the significands of the terms there: it
//            gives the lowest and highest set bit over all terms (ReferenceSum's precision
//            rule) for one OR per term, and p = 2046 flags an infinity or a NaN.
// Bound      exact (integer arithmetic only). Between carry passes a lane takes at most kBlock + 3
//            terms; each adds below 2^32 + 2^52 to a limb (values: sig < 2^53 shifted by < 32,
//            split at bit 32) or below 2^41 (squares: sig^2 < 2^106 shifted by < 32, pieces of
//            32 bits and a top piece of at most 41 bits); from limbs in [0, 2^32) that stays
//            below 2^32 + 1027 (2^52 + 2^32) < 2^63, so no limb overflows.
// Inputs     values: any doubles; +-0 adds nothing. Infinities and NaNs add garbage to limbs 63..64
//            (in range) and set HasSpecial(): the caller must then not use Values(). squares:
//            |x| in [2^-484, 2^511) or x = +-0 (x^2 is then a multiple of 2^-968 below 2^1022,
//            inside the limbs); any other input sets OutOfSquareRange() (its limb position is
//            clamped, so memory stays in bounds) and the caller must then not use Squares().
// Cost       one pass, no branch per term but the loop's; a carry pass of 68 limbs per lane per
//            kBlock terms; Finish() O(2047 + kLanes * 68). About 40 KB of state, zeroed once.
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

  // Adds the terms scanned by `other` (both before Finish): the scan may be split across threads
  // and the parts merged in any order, with the same result.
  void Merge(ChunkSum& other) {
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
  }

  // Folds the lanes into canonical ExactSum states (call once, after the last Scan).
  void Finish() {
    Fold(value_limb_, values_);
    Fold(square_limb_, squares_);
    for (int p = 0; p < kPositions; ++p) {
      const std::uint64_t bits = ors_[2 * p] | ors_[2 * p + 1];
      if (bits == 0 || p == kPositions - 1) continue;  // nothing there, or inf / NaN
      top_ = std::max(top_, static_cast<long>(p + 64 - std::countl_zero(bits)) - 1074);
      low_ = std::min(low_, static_cast<long>(p + std::countr_zero(bits)) - 1074);
    }
  }
  const ExactSum::State& Values() const { return values_; }
  const ExactSum::State& Squares() const { return squares_; }

  // An infinity or a NaN was scanned.
  bool HasSpecial() const { return (ors_[2 * (kPositions - 1)] | ors_[2 * kPositions - 1]) != 0; }
  // Over the finite nonzero terms x = sig * 2^k (sig an integer below 2^53): the largest
  // k + bits(sig) (the weight of the highest set bit, plus one) and the smallest k +
  // trailing_zeros(sig) (the weight of the lowest set bit); LONG_MIN / LONG_MAX when there is none.
  long Top() const { return top_; }
  long Low() const { return low_; }
  // Squares only: the largest |x| as bits (fixes the top bit of the largest square).
  std::uint64_t MaxMagnitude() const { return max_mag_; }
  bool OutOfSquareRange() const { return out_of_range_; }

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
      const unsigned sh = static_cast<unsigned>(q & 31);
      const U128 sq = U128{sig} * sig;  // < 2^106
      const std::uint64_t lo = Lo64(sq), hi = Hi64(sq);
      // sq << sh (< 2^137) as three 64-bit words; (w >> 1) >> (63 - sh) is w >> (64 - sh)
      // without the undefined shift by 64 when sh = 0.
      const std::uint64_t w0 = lo << sh;
      const std::uint64_t w1 = (hi << sh) | ((lo >> 1) >> (63 - sh));
      const std::uint64_t w2 = (hi >> 1) >> (63 - sh);  // < 2^9
      std::int64_t* l = square_limb_ + k + (q >> 5) * kLanes;
      l[0] += static_cast<std::int64_t>(w0 & kLow32);
      l[kLanes] += static_cast<std::int64_t>(w0 >> 32);
      l[2 * kLanes] += static_cast<std::int64_t>(w1 & kLow32);
      l[3 * kLanes] += static_cast<std::int64_t>((w1 >> 32) | (w2 << 32));  // < 2^41
    }
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
};

template <bool kValues, bool kSquares>
void ChunkSum::Scan(const double* x, std::size_t n) {
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

// One Scan of x[0..n) split across PassThreads() (precision/parallel_pass.hpp): part 0 into
// `into` (fresh), each other part into its own ChunkSum, merged into `into` in part order.
// Merge is exact, so after Finish every observable (Values, Squares, Top, Low, MaxMagnitude,
// HasSpecial, OutOfSquareRange) is that of into.Scan(x, n).
template <bool kValues, bool kSquares>
void ScanParallel(ChunkSum& into, const double* x, std::size_t n) {
  const std::size_t parts = PassParts(n);
  if (parts <= 1) {
    into.Scan<kValues, kSquares>(x, n);
    return;
  }
  std::vector<std::unique_ptr<ChunkSum>> rest(parts - 1);  // about 40 KB each: on the heap
  for (auto& r : rest) r = std::make_unique<ChunkSum>();
  SplitPass(n, parts, [&](std::size_t part, std::uint64_t lo, std::uint64_t hi) {
    ChunkSum& c = part == 0 ? into : *rest[part - 1];
    c.Scan<kValues, kSquares>(x + lo, static_cast<std::size_t>(hi - lo));
  });
  for (auto& r : rest) into.Merge(*r);
}

// A column's length, a span's or a StoredColumn's (the fast tiers are written once for both).
inline std::uint64_t ColumnCount(std::span<const double> x) { return x.size(); }
inline std::uint64_t ColumnCount(const StoredColumn& x) { return x.size(); }

// The same scan over a StoredColumn, each part decoding its range a chunk at a time (Scan
// accumulates, and carries at the end of every call, so chunks give the one-pass state).
template <bool kValues, bool kSquares>
void ScanParallel(ChunkSum& into, const StoredColumn& x) {
  if (x.layout() == StoredColumn::Layout::kDouble) {
    ScanParallel<kValues, kSquares>(into, x.Doubles().data(), x.size());
    return;
  }
  const std::size_t parts = PassParts(x.size());
  std::vector<std::unique_ptr<ChunkSum>> rest(parts - 1);  // about 40 KB each: on the heap
  for (auto& r : rest) r = std::make_unique<ChunkSum>();
  SplitPass(x.size(), parts, [&](std::size_t part, std::uint64_t lo, std::uint64_t hi) {
    ChunkSum& c = part == 0 ? into : *rest[part - 1];
    x.ForEachChunk(lo, hi, [&](std::uint64_t, std::span<const double> v) {
      c.Scan<kValues, kSquares>(v.data(), v.size());
    });
  });
  for (auto& r : rest) into.Merge(*r);
}

}  // namespace carrier::reference
