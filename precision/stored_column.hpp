// precision/stored_column.hpp: a column of stored values kept in the fewest bytes that hold
// every value bit for bit, read back as doubles one chunk at a time.
//
// Why: eval and sweep store an input rounded to its storage format. As fp64 that costs 8 bytes
// per value, 4x a bf16 input and 8x an fp8 one. A StoredColumn keeps the values of a
// small format as 16-bit codes and those of a format inside fp32 as floats; every reader
// (the fast replay, the exact references, the bounds' sums) decodes one chunk at a time into a
// buffer of its own, so the input is never held as doubles.
//
// Contract
//   Layouts, chosen from the storage format by Builder (LayoutFor):
//     kCode8    formats whose values fit an 8-bit code: sign, then an index that counts the
//               format's values upward from zero (subnormals 1 .. 2^(p-1) - 1, normal binade e
//               at ((e - emin + 1) << (p - 1)) | trailing, up to the largest finite value, then
//               +inf where the format has it, then NaN). fp8e4m3 (its NaN takes the index of
//               the pattern E4M3 spends on NaN), fp8e5m2. 1 byte per value.
//     kCode16   the same code in 16 bits: bf16, fp16 and small custom formats. 2 bytes.
//     kFloat    formats inside fp32 (p <= 24, -126 <= emin, emax <= 127): tf32, fp32. 4 bytes.
//     kDouble   everything else, and every column with a value the layout cannot give back bit
//               for bit (a NaN with a payload, a value outside the format): 8 bytes.
//   Read(lo, count, out) writes values [lo, lo + count) as doubles: exactly the doubles that
//   were appended (same bits, -0 and the quiet NaN included). A builder that meets a value its
//   layout cannot give back converts what it holds to kDouble and carries on, so a column never
//   changes a value; Layout() says which layout it ended in.
//   Copies share the data (immutable once built). Thread-safe for concurrent readers.
// Cost: Read is one table lookup (kCode8, kCode16: the 2 KB or 512 KB table is built once per
// code layout and process) or one conversion (kFloat) per value.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/carriers/pairs.hpp"
#include "precision/format.hpp"

namespace carrier {

namespace stored_column_detail {
// The allocator of a column's packed values (fp32, 16- and 8-bit codes): value-initialising a
// trivial element (vector::resize) leaves it unwritten, so that the pass threads that encode
// the values are the first to touch the column's pages. Zeroing a 2^24-value fp32 column first
// showed as 150 ms of page clearing on the calling thread in a perf timeline of a 2^24 lse
// eval; this and the bounds' maximum in double (op_bounds.cpp) took its wall time from
// 0.79-0.88 s to 0.71-0.78 s, side by side. Every element
// is written before it is read: AppendSplit keeps only what its writers wrote, and Size's new
// elements are Put (Finish checks that Put covered them).
template <class T>
struct UnzeroedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UnzeroedAllocator<U>;
  };
  UnzeroedAllocator() = default;
  template <class U>
  explicit UnzeroedAllocator(const UnzeroedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;  // default-initialised: left unwritten
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
template <class T>
using Packed = std::vector<T, UnzeroedAllocator<T>>;
}  // namespace stored_column_detail

class StoredColumn {
 public:
  enum class Layout { kDouble, kFloat, kCode16, kCode8 };
  // Values per chunk of ForEachChunk (32 KB of doubles: stays in L1/L2 while a reader uses it).
  static constexpr std::size_t kChunk = 4096;

  StoredColumn() = default;
  // Values already in doubles, kept as they are (layout kDouble).
  explicit StoredColumn(std::vector<double> values);

  std::uint64_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  Layout layout() const { return layout_; }
  // Bytes the values occupy (the decoding table not counted: it is shared per format).
  std::uint64_t Bytes() const;
  // The values in place, layout kDouble only (else an empty span).
  std::span<const double> Doubles() const;
  void Read(std::uint64_t lo, std::size_t count, double* out) const;
  std::vector<double> ToDoubles() const;
  // Every value a code of this column's layout gives back (kCode8, kCode16: the decoding
  // table, indexed by code); empty for kFloat and kDouble. Each stored value is one of them, so
  // a property every entry has, every value has.
  std::span<const double> CodeValues() const;
  // The codes of [lo, lo + count) (kCode8, kCode16): value i is CodeValues()[out[i]], the very
  // double Read gives. Throws std::logic_error for the other layouts.
  void ReadCodes(std::uint64_t lo, std::size_t count, std::uint16_t* out) const;
  // The address of the values' storage (shared by copies): identifies the column's data.
  const void* Identity() const;
  // f(lo, span of the values [lo, lo + span.size())) over [begin, end), in order, in chunks of
  // at most kChunk (a kDouble column hands out its own memory in chunks).
  template <class F>
  void ForEachChunk(std::uint64_t begin, std::uint64_t end, F&& f) const {
    if (layout_ == Layout::kDouble) {
      for (std::uint64_t lo = begin; lo < end; lo += kChunk)
        f(lo, Doubles().subspan(lo, std::min<std::uint64_t>(kChunk, end - lo)));
      return;
    }
    double buf[kChunk];
    for (std::uint64_t lo = begin; lo < end; lo += kChunk) {
      const std::size_t c = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, end - lo));
      Read(lo, c, buf);
      f(lo, std::span<const double>(buf, c));
    }
  }
  template <class F>
  void ForEachChunk(F&& f) const {
    ForEachChunk(0, n_, static_cast<F&&>(f));
  }

  // The layout a column of `format`'s values starts in (null: kDouble).
  static Layout LayoutFor(const Format* format);
  static const char* LayoutName(Layout layout);  // "fp64" "fp32" "code16" "code8"
  // The code of a format's values (kCode8, kCode16): the index of the largest finite value, of
  // +inf (0: none) and of NaN, and the code's width (8, 16, or 0 when no width holds it).
  struct CodeLayout {
    int p = 0, emin = 0, bits = 0;
    std::uint64_t last_finite = 0, inf = 0, nan = 0;
  };
  static CodeLayout CodeLayoutOf(const Format& f);

  // Appends values in order; Finish gives the column (defined below).
  class Builder;

 private:
  Layout layout_ = Layout::kDouble;
  std::uint64_t n_ = 0;
  std::shared_ptr<const std::vector<double>> d_;
  std::shared_ptr<const stored_column_detail::Packed<float>> f_;
  std::shared_ptr<const stored_column_detail::Packed<std::uint16_t>> h_;
  std::shared_ptr<const stored_column_detail::Packed<std::uint8_t>> b_;
  std::shared_ptr<const std::vector<double>> table_;  // kCode8, kCode16: code -> value
  CodeLayout code_;
};

// Appends values in order; Finish gives the column. Reserve n to avoid regrowth.
// Or fills a column of known length out of order: Size(n) makes it n values long (after what
// was appended; the new values are unwritten until Put), then Put(lo, values) stores the values
// at lo onwards, each index once, every new index before Finish (which throws a logic_error
// where Put's counts do not add up to Size's). Put may run on several threads at once for disjoint
// ranges (the generator's pass threads encode the pieces they drew while these are in cache). A
// range the layout cannot give back is kept aside as doubles and Finish then gives the double
// layout: the same column as appending the values in index order.
class StoredColumn::Builder {
 public:
  Builder(const Format* format, std::uint64_t reserve);
  void Append(std::span<const double> values);
  void Size(std::uint64_t n);
  void Put(std::uint64_t lo, std::span<const double> values);
  StoredColumn Finish();

 private:
  void ToDoubleLayout();
  StoredColumn c_;
  std::vector<double> d_;
  stored_column_detail::Packed<float> f_;
  stored_column_detail::Packed<std::uint16_t> h_;
  stored_column_detail::Packed<std::uint8_t> b_;
  std::uint64_t sized_from_ = 0, sized_to_ = 0;  // the elements Size added, which Put must write
  std::atomic<std::uint64_t> put_{0};            // values Put stored or set aside
  std::mutex aside_mutex_;
  std::vector<std::pair<std::uint64_t, std::vector<double>>> aside_;  // Put's refused ranges
};

// For tests: encode and decode coded columns with the portable loops (false) or, where the CPU
// has AVX-512 F+DQ, eight values at a time (true; precision/stored_column_x86.hpp); returns
// whether the vector forms now run. Not thread-safe: call it outside any encoding or reading.
bool UseColumnCodesVectorised(bool on);

// A column given as a span of doubles or as a StoredColumn, read the same way by the code that
// takes either: its length, and f(lo, values) over it in order (the span whole in one call, the
// column a chunk at a time as ForEachChunk).
inline std::uint64_t ColumnCount(std::span<const double> x) { return x.size(); }
inline std::uint64_t ColumnCount(const StoredColumn& x) { return x.size(); }
template <class F>
void ForEachChunkOf(std::span<const double> x, F&& f) {
  f(std::uint64_t{0}, x);
}
template <class F>
void ForEachChunkOf(const StoredColumn& x, F&& f) {
  x.ForEachChunk(static_cast<F&&>(f));
}

// Two columns of one length read together: f(lo, a's values, b's values) over [begin, end) in
// order, in chunks of at most kChunk (a kDouble column is read in place).
template <class F>
void ForEachChunkOfPairs(const StoredColumn& a, const StoredColumn& b, std::uint64_t begin,
                         std::uint64_t end, F&& f) {
  double buf[StoredColumn::kChunk];
  a.ForEachChunk(begin, end, [&](std::uint64_t lo, std::span<const double> va) {
    if (b.layout() == StoredColumn::Layout::kDouble) {
      f(lo, va, b.Doubles().subspan(lo, va.size()));
    } else {
      b.Read(lo, va.size(), buf);
      f(lo, va, std::span<const double>(buf, va.size()));
    }
  });
}

// The pairs (a_i, b_i) of two columns of doubles (the shorter one's length).
inline std::vector<ValuePair<double>> ZipPairs(std::span<const double> a,
                                               std::span<const double> b) {
  std::vector<ValuePair<double>> pairs(std::min(a.size(), b.size()));
  for (std::size_t i = 0; i < pairs.size(); ++i) pairs[i] = {a[i], b[i]};
  return pairs;
}

}  // namespace carrier
