// precision/stored_column.cpp: StoredColumn (contract in stored_column.hpp).
#include "precision/stored_column.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

#include "core/cpu_features.hpp"
#include "precision/parallel_pass.hpp"
#include "precision/stored_column_x86.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace carrier {

// (Named, not anonymous: the main job's unity build puts several sources in one unit.)

namespace stored_column_detail {

constexpr std::uint64_t kAbsMask = ~(std::uint64_t{1} << 63);
constexpr std::uint64_t kInfBits = 0x7ff0000000000000ULL;

// The index of the last trailing pattern of the top binade in the code layout of (p, emin,
// emax).
std::uint64_t MaxIndex(int p, int emin, int emax) {
  return (static_cast<std::uint64_t>(emax - emin + 1) << (p - 1)) |
         ((std::uint64_t{1} << (p - 1)) - 1);
}

}  // namespace stored_column_detail

StoredColumn::CodeLayout StoredColumn::CodeLayoutOf(const Format& f) {
  CodeLayout c;
  c.p = f.precision;
  c.emin = f.emin;
  // OCP E4M3 spends the top binade's last pattern on NaN: its finite values end one earlier.
  const std::uint64_t last = stored_column_detail::MaxIndex(f.precision, f.emin, f.emax) -
                             (f.top_significand_is_nan ? 1 : 0);
  c.last_finite = last;
  c.inf = f.has_inf ? last + 1 : 0;
  c.nan = last + 1 + (f.has_inf ? 1 : 0);
  c.bits = c.nan < (1U << 7) ? 8 : c.nan < (1U << 15) ? 16 : 0;
  return c;
}

namespace stored_column_detail {

// Code -> value for every code of the layout (2^bits of them); codes past NaN's decode to NaN and
// are never produced.
std::vector<double> BuildTable(const StoredColumn::CodeLayout& c) {
  const int p = c.p;
  const std::uint32_t half = 1U << (p - 1);
  const std::uint32_t sign = 1U << (c.bits - 1);
  std::vector<double> t(std::size_t{1} << c.bits);
  for (std::uint32_t code = 0; code < t.size(); ++code) {
    const std::uint32_t idx = code & (sign - 1);
    double a;
    if (idx == 0) {
      a = 0.0;
    } else if (idx < half) {  // subnormal: idx * 2^(emin - p + 1)
      a = std::ldexp(static_cast<double>(idx), c.emin - p + 1);
    } else if (idx <= c.last_finite) {
      const int e = static_cast<int>(idx >> (p - 1)) - 1 + c.emin;
      a = std::ldexp(static_cast<double>(half + (idx & (half - 1))), e - p + 1);
    } else if (c.inf != 0 && idx == c.inf) {
      a = std::numeric_limits<double>::infinity();
    } else {
      a = std::numeric_limits<double>::quiet_NaN();
    }
    t[code] = (code & sign) != 0 ? -a : a;
  }
  return t;
}

// One table per code layout and process.
std::shared_ptr<const std::vector<double>> TableFor(const StoredColumn::CodeLayout& c) {
  static std::mutex m;
  static std::map<std::tuple<int, int, std::uint64_t, std::uint64_t, int>,
                  std::shared_ptr<const std::vector<double>>>
      tables;
  const std::lock_guard<std::mutex> lock(m);
  auto& slot = tables[{c.p, c.emin, c.last_finite, c.inf, c.bits}];
  if (!slot) slot = std::make_shared<const std::vector<double>>(BuildTable(c));
  return slot;
}

// v's code in layout c, or a value >= 2^bits when v has none (the caller's table check then
// refuses it too: the table is the definition).
std::uint64_t CodeOf(double v, const StoredColumn::CodeLayout& c) {
  constexpr std::uint64_t kNone = std::uint64_t{1} << 16;
  const std::uint64_t b = std::bit_cast<std::uint64_t>(v);
  const std::uint64_t a = b & kAbsMask;
  std::uint64_t idx;
  if (a == 0) {
    idx = 0;
  } else if (a == kInfBits) {
    idx = c.inf != 0 ? c.inf : kNone;
  } else if (a > kInfBits) {
    idx = c.nan;
  } else {
    const int e = static_cast<int>(a >> 52) - 1023;
    if (e < c.emin) {  // below the format's normals: a multiple of 2^(emin - p + 1)
      const double q = std::ldexp(std::bit_cast<double>(a), c.p - 1 - c.emin);
      idx = q >= 1 ? static_cast<std::uint64_t>(q) : kNone;  // < 1: not a value
    } else {
      idx = (static_cast<std::uint64_t>(e - c.emin + 1) << (c.p - 1)) |
            ((a & ((std::uint64_t{1} << 52) - 1)) >> (53 - c.p));
      const std::uint64_t low_mask = (std::uint64_t{1} << (53 - c.p)) - 1;
      if ((a & low_mask) != 0 || idx > c.last_finite) idx = kNone;
    }
  }
  if (idx >= (std::uint64_t{1} << (c.bits - 1))) return kNone;
  return ((b >> 63) << (c.bits - 1)) | idx;
}

struct CodesFamily;
bool ColumnCodesVectorised() { return Avx512FDqSwitch<CodesFamily>::On(); }

// The codes of values[0 .. count) into out, where every value is a normal value of the layout
// (l: its constants, from WriteCodes) that the table gives back; false (out then holds codes of no
// meaning) where any is not. The common case of a column, without a branch per value: CodeOf's
// normal branch, the same expression, and the same table check, so a code written here is the one
// CodeOf writes. Eight values at a time where ColumnCodesVectorised
// (precision/stored_column_x86.hpp).
template <class Code>
bool NormalCodes(const double* values, std::size_t count, const stored_column_x86::NormalLayout& l,
                 const double* table, Code* out) {
  std::size_t i = 0;
#if CARRIER_X86_KERNELS
  if (ColumnCodesVectorised()) {
    bool good = true;
    i = stored_column_x86::NormalCodes8(values, count, l, table, out, good);
    if (!good) return false;
  }
#endif
  constexpr std::uint64_t kFracMask = (std::uint64_t{1} << 52) - 1;
  std::uint64_t bad = 0;
  for (; i < count; ++i) {
    const std::uint64_t b = std::bit_cast<std::uint64_t>(values[i]);
    const std::uint64_t a = b & kAbsMask;
    const std::uint64_t e = a >> 52;
    const std::uint64_t idx =
        ((e - l.min_e + 1) << l.index_shift) | ((a & kFracMask) >> l.fraction_shift);
    const std::uint64_t code = (((b >> 63) << l.sign_shift) | idx) & l.code_mask;
    bad |= static_cast<std::uint64_t>(e < l.min_e) | static_cast<std::uint64_t>(e == 2047) |
           static_cast<std::uint64_t>((a & l.low_mask) != 0) |
           static_cast<std::uint64_t>(idx > l.idx_limit) |
           static_cast<std::uint64_t>(std::bit_cast<std::uint64_t>(table[code]) != b);
    out[i] = static_cast<Code>(code);
  }
  return bad == 0;
}

// Writes the codes of values[0 .. count) to out while each gives its value back; returns where
// it stopped (count: every one). Blocks of normal values go through NormalCodes; a block with
// any other value (zero, subnormal, inf, NaN, or one without a code) value by value by CodeOf.
template <class Code>
std::size_t WriteCodes(const double* values, std::size_t count, const StoredColumn::CodeLayout& c,
                       const double* table, Code* out) {
  constexpr std::size_t kBlock = 256;
  const bool normals = c.emin + 1023 >= 1 && c.p >= 1 && c.p <= 53;
  const int shift = 53 - c.p;
  const stored_column_x86::NormalLayout l = {
      .min_e = static_cast<std::uint64_t>(c.emin + 1023),
      .index_shift = c.p - 1,
      .fraction_shift = shift,
      .sign_shift = c.bits - 1,
      .low_mask = normals ? (std::uint64_t{1} << shift) - 1 : 0,
      .code_mask = (std::uint64_t{1} << c.bits) - 1,
      .idx_limit = std::min(c.last_finite, (std::uint64_t{1} << (c.bits - 1)) - 1)};
  for (std::size_t lo = 0; lo < count; lo += kBlock) {
    const std::size_t hi = std::min(count, lo + kBlock);
    if (normals && NormalCodes(values + lo, hi - lo, l, table, out + lo)) continue;
    for (std::size_t i = lo; i < hi; ++i) {
      const std::uint64_t code = CodeOf(values[i], c);
      if (code >= (std::uint64_t{1} << c.bits) ||
          std::bit_cast<std::uint64_t>(table[code]) != std::bit_cast<std::uint64_t>(values[i]))
        return i;
      out[i] = static_cast<Code>(code);
    }
  }
  return count;
}

// The same for the float layout: values[i] as a float while it gives the double back.
std::size_t WriteFloats(const double* values, std::size_t count, float* out) {
  for (std::size_t i = 0; i < count; ++i) {
    const float f = static_cast<float>(values[i]);
    if (std::bit_cast<std::uint64_t>(static_cast<double>(f)) !=
        std::bit_cast<std::uint64_t>(values[i]))
      return i;
    out[i] = f;
  }
  return count;
}

// Appends write's encodings of values[i..) to out while each gives its value back; returns
// where it stopped. Each value's encoding is its own, so the values are split across
// PassThreads() (precision/parallel_pass.hpp) and written in place; the first part that stopped
// decides where the appended run ends, as one pass in order would.
template <class V, class Write>
std::size_t AppendSplit(std::span<const double> values, V& out, Write write) {
  const std::size_t old = out.size();
  out.resize(old + values.size());
  const std::size_t parts = PassParts(values.size());
  std::vector<std::size_t> stop(parts), end(parts);
  SplitPass(values.size(), parts, [&](std::size_t p, std::uint64_t lo, std::uint64_t hi) {
    end[p] = static_cast<std::size_t>(hi);
    stop[p] = static_cast<std::size_t>(lo) +
              write(values.data() + lo, static_cast<std::size_t>(hi - lo), out.data() + old + lo);
  });
  std::size_t i = values.size();
  for (std::size_t p = 0; p < parts; ++p) {
    if (stop[p] < end[p]) {
      i = stop[p];
      break;
    }
  }
  out.resize(old + i);
  return i;
}

template <class Code>
void Decode(const Code* codes, std::size_t count, const double* table, double* out) {
  std::size_t i = 0;
#if CARRIER_X86_KERNELS
  if (ColumnCodesVectorised()) i = stored_column_x86::Decode8(codes, count, table, out);
#endif
  for (; i < count; ++i) out[i] = table[codes[i]];
}

}  // namespace stored_column_detail

StoredColumn::StoredColumn(std::vector<double> values)
    : layout_(Layout::kDouble),
      n_(values.size()),
      d_(std::make_shared<const std::vector<double>>(std::move(values))) {}

StoredColumn::Layout StoredColumn::LayoutFor(const Format* f) {
  if (f == nullptr) return Layout::kDouble;
  const int bits = CodeLayoutOf(*f).bits;
  if (bits == 8) return Layout::kCode8;
  if (bits == 16) return Layout::kCode16;
  if (f->precision <= 24 && f->emin >= -126 && f->emax <= 127) return Layout::kFloat;
  return Layout::kDouble;
}

const char* StoredColumn::LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kCode8:
      return "code8";
    case Layout::kCode16:
      return "code16";
    case Layout::kFloat:
      return "fp32";
    case Layout::kDouble:
      break;
  }
  return "fp64";
}

std::uint64_t StoredColumn::Bytes() const {
  switch (layout_) {
    case Layout::kCode8:
      return n_;
    case Layout::kCode16:
      return 2 * n_;
    case Layout::kFloat:
      return 4 * n_;
    case Layout::kDouble:
      break;
  }
  return 8 * n_;
}

std::span<const double> StoredColumn::Doubles() const {
  if (layout_ != Layout::kDouble || !d_) return {};
  return *d_;
}

void StoredColumn::Read(std::uint64_t lo, std::size_t count, double* out) const {
  if (lo > n_ || count > n_ - lo)
    throw std::out_of_range("StoredColumn::Read past the end of the column");
  switch (layout_) {
    case Layout::kCode8:
      stored_column_detail::Decode(b_->data() + lo, count, table_->data(), out);
      return;
    case Layout::kCode16:
      stored_column_detail::Decode(h_->data() + lo, count, table_->data(), out);
      return;
    case Layout::kFloat: {
      const float* f = f_->data() + lo;
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<double>(f[i]);
      return;
    }
    case Layout::kDouble:
      std::copy_n(d_->data() + lo, count, out);
      return;
  }
}

const void* StoredColumn::Identity() const {
  switch (layout_) {
    case Layout::kCode8:
      return b_ ? b_->data() : nullptr;
    case Layout::kCode16:
      return h_ ? h_->data() : nullptr;
    case Layout::kFloat:
      return f_ ? f_->data() : nullptr;
    case Layout::kDouble:
      break;
  }
  return d_ ? d_->data() : nullptr;
}

std::span<const double> StoredColumn::CodeValues() const {
  if ((layout_ != Layout::kCode8 && layout_ != Layout::kCode16) || !table_) return {};
  return {table_->data(), table_->size()};
}

void StoredColumn::ReadCodes(std::uint64_t lo, std::size_t count, std::uint16_t* out) const {
  if (lo > n_ || count > n_ - lo)
    throw std::out_of_range("StoredColumn::ReadCodes past the end of the column");
  if (layout_ == Layout::kCode8) {
    std::copy_n(b_->data() + lo, count, out);
  } else if (layout_ == Layout::kCode16) {
    std::copy_n(h_->data() + lo, count, out);
  } else {
    throw std::logic_error(std::string("StoredColumn::ReadCodes on a column of layout ") +
                           LayoutName(layout_));
  }
}

std::vector<double> StoredColumn::ToDoubles() const {
  std::vector<double> out(n_);
  if (n_ > 0) Read(0, n_, out.data());
  return out;
}

namespace stored_column_detail {

// Asks the kernel to back a large reserved buffer with huge pages where it can (Linux with
// transparent huge pages in madvise mode): first-touching a 2^24-value column a 4 KiB page at a
// time took about 8% of a 2^24 eval in page faults. Advice only: no value changes, and a kernel
// that declines leaves the buffer as it was.
template <class V>
void AdviseHugePages(const V& v) {
  using T = typename V::value_type;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{1} << 21;
  const auto begin = reinterpret_cast<std::uintptr_t>(v.data());
  const std::uintptr_t end = begin + v.capacity() * sizeof(T);
  const std::uintptr_t lo = (begin + kHuge - 1) & ~(kHuge - 1), hi = end & ~(kHuge - 1);
  if (hi > lo + kHuge) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
#else
  (void)v;
#endif
}

}  // namespace stored_column_detail

StoredColumn::Builder::Builder(const Format* format, std::uint64_t reserve) {
  c_.layout_ = LayoutFor(format);
  switch (c_.layout_) {
    case Layout::kCode8:
    case Layout::kCode16:
      c_.code_ = CodeLayoutOf(*format);
      c_.table_ = stored_column_detail::TableFor(c_.code_);
      if (c_.layout_ == Layout::kCode8) {
        b_.reserve(reserve);
        stored_column_detail::AdviseHugePages(b_);
      } else {
        h_.reserve(reserve);
        stored_column_detail::AdviseHugePages(h_);
      }
      break;
    case Layout::kFloat:
      f_.reserve(reserve);
      stored_column_detail::AdviseHugePages(f_);
      break;
    case Layout::kDouble:
      d_.reserve(reserve);
      stored_column_detail::AdviseHugePages(d_);
      break;
  }
}

void StoredColumn::Builder::ToDoubleLayout() {
  std::vector<double> d;
  d.reserve(std::max<std::size_t>(d_.capacity(), b_.size() + h_.size() + f_.size()));
  for (const std::uint8_t h : b_) d.push_back((*c_.table_)[h]);
  for (const std::uint16_t h : h_) d.push_back((*c_.table_)[h]);
  for (const float f : f_) d.push_back(static_cast<double>(f));
  b_ = {};
  h_ = {};
  f_ = {};
  d_ = std::move(d);
  c_.table_.reset();
  c_.layout_ = Layout::kDouble;
}

void StoredColumn::Builder::Append(std::span<const double> values) {
  using namespace stored_column_detail;
  std::size_t i = 0;
  if (c_.layout_ == Layout::kCode8 || c_.layout_ == Layout::kCode16) {
    const CodeLayout& code = c_.code_;
    const double* table = c_.table_->data();
    auto write = [&](const double* v, std::size_t count, auto* out) {
      return WriteCodes(v, count, code, table, out);
    };
    i = c_.layout_ == Layout::kCode8 ? AppendSplit(values, b_, write)
                                     : AppendSplit(values, h_, write);
  } else if (c_.layout_ == Layout::kFloat) {
    i = AppendSplit(values, f_, WriteFloats);
  }
  if (i == values.size()) return;
  if (c_.layout_ != Layout::kDouble) ToDoubleLayout();
  d_.insert(d_.end(), values.begin() + static_cast<std::ptrdiff_t>(i), values.end());
}

void StoredColumn::Builder::Size(std::uint64_t n) {
  const auto size = [&](auto& v) {
    if (n < v.size()) throw std::invalid_argument("StoredColumn::Builder::Size below its length");
    sized_from_ = v.size();
    sized_to_ = n;
    v.resize(n);
  };
  switch (c_.layout_) {
    case Layout::kCode8:
      return size(b_);
    case Layout::kCode16:
      return size(h_);
    case Layout::kFloat:
      return size(f_);
    case Layout::kDouble:
      return size(d_);
  }
}

void StoredColumn::Builder::Put(std::uint64_t lo, std::span<const double> values) {
  using namespace stored_column_detail;
  const std::size_t count = values.size();
  const auto check = [&](std::size_t size) {
    if (lo > size || count > size - lo)
      throw std::out_of_range("StoredColumn::Builder::Put past the column's Size");
  };
  std::size_t done = count;
  switch (c_.layout_) {
    case Layout::kCode8:
      check(b_.size());
      done = WriteCodes(values.data(), count, c_.code_, c_.table_->data(), b_.data() + lo);
      break;
    case Layout::kCode16:
      check(h_.size());
      done = WriteCodes(values.data(), count, c_.code_, c_.table_->data(), h_.data() + lo);
      break;
    case Layout::kFloat:
      check(f_.size());
      done = WriteFloats(values.data(), count, f_.data() + lo);
      break;
    case Layout::kDouble:
      check(d_.size());
      std::copy(values.begin(), values.end(), d_.begin() + static_cast<std::ptrdiff_t>(lo));
      put_.fetch_add(count, std::memory_order_relaxed);
      return;
  }
  put_.fetch_add(count, std::memory_order_relaxed);
  if (done == count) return;
  // The rest of the range is set aside; its packed elements are written too (as zeros), so
  // that ToDoubleLayout reads no unwritten element before the aside values replace them.
  switch (c_.layout_) {
    case Layout::kCode8:
      std::fill_n(b_.data() + lo + done, count - done, std::uint8_t{0});
      break;
    case Layout::kCode16:
      std::fill_n(h_.data() + lo + done, count - done, std::uint16_t{0});
      break;
    case Layout::kFloat:
      std::fill_n(f_.data() + lo + done, count - done, 0.0F);
      break;
    case Layout::kDouble:
      break;
  }
  const std::lock_guard<std::mutex> lock(aside_mutex_);
  aside_.emplace_back(lo + done, std::vector<double>(values.begin() + done, values.end()));
}

StoredColumn StoredColumn::Builder::Finish() {
  if (put_.load() != sized_to_ - sized_from_)
    throw std::logic_error("StoredColumn::Builder: Put stored " + std::to_string(put_.load()) +
                           " values where Size added " + std::to_string(sized_to_ - sized_from_));
  if (!aside_.empty()) {
    // Some value Put stored has no code (or float): every value as a double, as Append does.
    ToDoubleLayout();
    for (const auto& [lo, v] : aside_)
      std::copy(v.begin(), v.end(), d_.begin() + static_cast<std::ptrdiff_t>(lo));
    aside_.clear();
  }
  StoredColumn c = std::move(c_);
  switch (c.layout_) {
    case Layout::kCode8:
      c.n_ = b_.size();
      c.b_ = std::make_shared<const stored_column_detail::Packed<std::uint8_t>>(std::move(b_));
      break;
    case Layout::kCode16:
      c.n_ = h_.size();
      c.h_ = std::make_shared<const stored_column_detail::Packed<std::uint16_t>>(std::move(h_));
      break;
    case Layout::kFloat:
      c.n_ = f_.size();
      c.f_ = std::make_shared<const stored_column_detail::Packed<float>>(std::move(f_));
      break;
    case Layout::kDouble:
      c.n_ = d_.size();
      c.d_ = std::make_shared<const std::vector<double>>(std::move(d_));
      break;
  }
  c_ = StoredColumn{};
  return c;
}

bool UseColumnCodesVectorised(bool on) {
  return Avx512FDqSwitch<stored_column_detail::CodesFamily>::Use(on);
}

}  // namespace carrier
