// precision/reference/fast_sum.cpp: ReferenceSumFast (contract in fast_sum.hpp).
#include "precision/reference/fast_sum.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

#include "precision/reference/chunk_sum.hpp"
#include "precision/reference/exact_sum.hpp"
#include "precision/reference/reference_internal.hpp"

namespace carrier::reference {

namespace {

// Special-value flags of x (only asked when a term is inf or NaN: ChunkSum::HasSpecial).
void SpecialFlags(std::span<const double> x, ExactSum::State& s) {
  for (const double v : x) {
    if (std::isnan(v)) {
      s.has_nan = true;
    } else if (std::isinf(v)) {
      (v > 0 ? s.has_pos_inf : s.has_neg_inf) = true;
    }
  }
}
ExactSum::State SpecialFlags(std::span<const double> x) {
  ExactSum::State s = ExactSum::Identity();
  SpecialFlags(x, s);
  return s;
}
ExactSum::State SpecialFlags(const StoredColumn& x) {
  ExactSum::State s = ExactSum::Identity();
  x.ForEachChunk([&](std::uint64_t, std::span<const double> c) { SpecialFlags(c, s); });
  return s;
}

void Scan(ChunkSum& c, std::span<const double> x) {
  ScanParallel<true, false>(c, x.data(), x.size());
}
void Scan(ChunkSum& c, const StoredColumn& x) { ScanParallel<true, false>(c, x); }

// X: a span of doubles or a StoredColumn (the same values, the same Reference).
template <class X>
Reference SumFast(const X& x) {
  WideExponentRange range;
  Reference r;
  r.op = "sum";
  r.count = ColumnCount(x);
  // One pass of ChunkSum (chunk_sum.hpp): the exact sum with deferred carries, and the
  // highest and lowest set bits that ReferenceSum's precision rule needs.
  const auto owned = std::make_unique<ChunkSum>();  // about 152 KB: not on the stack
  ChunkSum& chunks = *owned;
  Scan(chunks, x);  // split: PassThreads()
  if (chunks.HasSpecial()) {
    const ExactSum::State s = SpecialFlags(x);
    const double special = (s.has_nan || (s.has_pos_inf && s.has_neg_inf))
                               ? std::numeric_limits<double>::quiet_NaN()
                               : (s.has_pos_inf ? std::numeric_limits<double>::infinity()
                                                : -std::numeric_limits<double>::infinity());
    internal::AddExactDouble(r, special);
    internal::MarkExact(r, 53, -std::numeric_limits<double>::infinity());
    return r;
  }
  chunks.Finish();
  MpfrValue value = internal::ToExact(chunks.Values(), chunks.Top(), chunks.Low(), ColumnCount(x));
  const long prec = value.precision();
  internal::AddExact(r, std::move(value));
  internal::MarkExact(r, prec, -std::numeric_limits<double>::infinity());
  return r;
}

}  // namespace

Reference ReferenceSumFast(std::span<const double> x) { return SumFast(x); }
Reference ReferenceSumFast(const StoredColumn& x) { return SumFast(x); }

}  // namespace carrier::reference

#endif
