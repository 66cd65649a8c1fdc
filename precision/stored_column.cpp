// precision/stored_column.cpp: StoredColumn (contract in stored_column.hpp).
#include "precision/stored_column.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

namespace carrier {

namespace {

constexpr std::uint64_t kAbsMask = ~(std::uint64_t{1} << 63);
constexpr std::uint64_t kInfBits = 0x7ff0000000000000ULL;

// The index of the largest finite value in the code layout of (p, emin, emax): the last
// trailing pattern of the top binade (top_significand_is_nan only leaves one index unused).
std::uint64_t MaxIndex(int p, int emin, int emax) {
  return (static_cast<std::uint64_t>(emax - emin + 1) << (p - 1)) |
         ((std::uint64_t{1} << (p - 1)) - 1);
}

bool FitsCode16(const Format& f) { return MaxIndex(f.precision, f.emin, f.emax) + 2 < (1U << 15); }

// Code -> value for every 16-bit code of the layout (p, emin, emax); codes past NaN's decode to
// NaN and are never produced.
std::vector<double> BuildTable(int p, int emin, int emax) {
  const std::uint64_t max_index = MaxIndex(p, emin, emax);
  const std::uint32_t half = 1U << (p - 1);
  std::vector<double> t(1U << 16);
  for (std::uint32_t code = 0; code < t.size(); ++code) {
    const std::uint32_t idx = code & 0x7fffU;
    double a;
    if (idx == 0) {
      a = 0.0;
    } else if (idx < half) {  // subnormal: idx * 2^(emin - p + 1)
      a = std::ldexp(static_cast<double>(idx), emin - p + 1);
    } else if (idx <= max_index) {
      const int e = static_cast<int>(idx >> (p - 1)) - 1 + emin;
      a = std::ldexp(static_cast<double>(half + (idx & (half - 1))), e - p + 1);
    } else if (idx == max_index + 1) {
      a = std::numeric_limits<double>::infinity();
    } else {
      a = std::numeric_limits<double>::quiet_NaN();
    }
    t[code] = (code >> 15) != 0 ? -a : a;
  }
  return t;
}

// One table per (p, emin, emax) and process.
std::shared_ptr<const std::vector<double>> TableFor(int p, int emin, int emax) {
  static std::mutex m;
  static std::map<std::tuple<int, int, int>, std::shared_ptr<const std::vector<double>>> tables;
  const std::lock_guard<std::mutex> lock(m);
  auto& slot = tables[{p, emin, emax}];
  if (!slot) slot = std::make_shared<const std::vector<double>>(BuildTable(p, emin, emax));
  return slot;
}

}  // namespace

StoredColumn::StoredColumn(std::vector<double> values)
    : layout_(Layout::kDouble),
      n_(values.size()),
      d_(std::make_shared<const std::vector<double>>(std::move(values))) {}

StoredColumn::Layout StoredColumn::LayoutFor(const Format* f) {
  if (f == nullptr) return Layout::kDouble;
  if (FitsCode16(*f)) return Layout::kCode16;
  if (f->precision <= 24 && f->emin >= -126 && f->emax <= 127) return Layout::kFloat;
  return Layout::kDouble;
}

const char* StoredColumn::LayoutName(Layout layout) {
  switch (layout) {
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
    case Layout::kCode16: {
      const double* t = table_->data();
      const std::uint16_t* h = h_->data() + lo;
      for (std::size_t i = 0; i < count; ++i) out[i] = t[h[i]];
      return;
    }
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
    case Layout::kCode16:
      return h_ ? h_->data() : nullptr;
    case Layout::kFloat:
      return f_ ? f_->data() : nullptr;
    case Layout::kDouble:
      break;
  }
  return d_ ? d_->data() : nullptr;
}

std::vector<double> StoredColumn::ToDoubles() const {
  std::vector<double> out(n_);
  if (n_ > 0) Read(0, n_, out.data());
  return out;
}

StoredColumn::Builder::Builder(const Format* format, std::uint64_t reserve) {
  c_.layout_ = LayoutFor(format);
  switch (c_.layout_) {
    case Layout::kCode16:
      c_.p_ = format->precision;
      c_.emin_ = format->emin;
      c_.max_index_ =
          static_cast<std::uint32_t>(MaxIndex(format->precision, format->emin, format->emax));
      c_.table_ = TableFor(format->precision, format->emin, format->emax);
      h_.reserve(reserve);
      break;
    case Layout::kFloat:
      f_.reserve(reserve);
      break;
    case Layout::kDouble:
      d_.reserve(reserve);
      break;
  }
}

void StoredColumn::Builder::ToDoubleLayout() {
  std::vector<double> d;
  d.reserve(std::max<std::size_t>(d_.capacity(), h_.size() + f_.size()));
  for (const std::uint16_t h : h_) d.push_back((*c_.table_)[h]);
  for (const float f : f_) d.push_back(static_cast<double>(f));
  h_ = {};
  f_ = {};
  d_ = std::move(d);
  c_.table_.reset();
  c_.layout_ = Layout::kDouble;
}

void StoredColumn::Builder::Append(std::span<const double> values) {
  std::size_t i = 0;
  if (c_.layout_ == Layout::kCode16) {
    const double* t = c_.table_->data();
    const int p = c_.p_, emin = c_.emin_;
    const std::uint64_t low_mask = (std::uint64_t{1} << (53 - p)) - 1;
    for (; i < values.size(); ++i) {
      const std::uint64_t b = std::bit_cast<std::uint64_t>(values[i]);
      const std::uint64_t a = b & kAbsMask;
      std::uint64_t idx;
      if (a == 0) {
        idx = 0;
      } else if (a >= kInfBits) {
        idx = c_.max_index_ + (a == kInfBits ? 1 : 2);
      } else {
        const int e = static_cast<int>(a >> 52) - 1023;
        if (e < emin) {  // below the format's normals: a multiple of 2^(emin - p + 1)
          const double q = std::ldexp(std::bit_cast<double>(a), p - 1 - emin);
          idx = q >= 1 ? static_cast<std::uint64_t>(q) : (1U << 16);  // < 1: not a value
        } else {
          idx = (static_cast<std::uint64_t>(e - emin + 1) << (p - 1)) |
                ((a & ((std::uint64_t{1} << 52) - 1)) >> (53 - p));
          if ((a & low_mask) != 0 || idx > c_.max_index_) idx = 1U << 16;
        }
      }
      const std::uint64_t code = ((b >> 63) << 15) | idx;
      // The table is the definition: a code is kept only if it gives the value back exactly.
      if (idx >= (1U << 15) || std::bit_cast<std::uint64_t>(t[code]) != b) break;
      h_.push_back(static_cast<std::uint16_t>(code));
    }
  } else if (c_.layout_ == Layout::kFloat) {
    for (; i < values.size(); ++i) {
      const float f = static_cast<float>(values[i]);
      if (std::bit_cast<std::uint64_t>(static_cast<double>(f)) !=
          std::bit_cast<std::uint64_t>(values[i]))
        break;
      f_.push_back(f);
    }
  }
  if (i == values.size()) return;
  if (c_.layout_ != Layout::kDouble) ToDoubleLayout();
  d_.insert(d_.end(), values.begin() + static_cast<std::ptrdiff_t>(i), values.end());
}

StoredColumn StoredColumn::Builder::Finish() {
  StoredColumn c = std::move(c_);
  switch (c.layout_) {
    case Layout::kCode16:
      c.n_ = h_.size();
      c.h_ = std::make_shared<const std::vector<std::uint16_t>>(std::move(h_));
      break;
    case Layout::kFloat:
      c.n_ = f_.size();
      c.f_ = std::make_shared<const std::vector<float>>(std::move(f_));
      break;
    case Layout::kDouble:
      c.n_ = d_.size();
      c.d_ = std::make_shared<const std::vector<double>>(std::move(d_));
      break;
  }
  c_ = StoredColumn{};
  return c;
}

}  // namespace carrier
