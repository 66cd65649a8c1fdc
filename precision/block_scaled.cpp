// precision/block_scaled.cpp: MX and NVFP4 formats and their quantisation (block_scaled.hpp).
// Compiled with -ffp-contract=off (precision/CMakeLists.txt): the fp32 steps of the NVFP4 recipe
// are separate roundings and must not be fused.
#include "precision/block_scaled.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "precision/rounding.hpp"

namespace carrier {
namespace {

struct ElementInfo {
  MxElement id;
  std::string_view name;
  int bits;
  int mbits;  // stored fraction bits (p - 1)
  int emin, emax;
  bool top_nan;  // e4m3
};

constexpr ElementInfo kElements[] = {
    {MxElement::kE5M2, "e5m2", 8, 2, -14, 15, false}, {MxElement::kE4M3, "e4m3", 8, 3, -6, 8, true},
    {MxElement::kE3M2, "e3m2", 6, 2, -2, 4, false},   {MxElement::kE2M3, "e2m3", 6, 3, 0, 2, false},
    {MxElement::kE2M1, "e2m1", 4, 1, 0, 2, false},    {MxElement::kInt8, "int8", 8, 6, 0, 0, false},
};

const ElementInfo& Info(MxElement e) { return kElements[static_cast<int>(e)]; }

struct Named {
  std::string_view name;
  MxElement element;
  int block;
  BlockScaleFormat scale;
  BlockScaleRule rule;
};
constexpr Named kNamed[] = {
    {"mxfp8e4m3", MxElement::kE4M3, 32, BlockScaleFormat::kE8M0, BlockScaleRule::kFloor},
    {"mxfp8e5m2", MxElement::kE5M2, 32, BlockScaleFormat::kE8M0, BlockScaleRule::kFloor},
    {"mxfp6e3m2", MxElement::kE3M2, 32, BlockScaleFormat::kE8M0, BlockScaleRule::kFloor},
    {"mxfp6e2m3", MxElement::kE2M3, 32, BlockScaleFormat::kE8M0, BlockScaleRule::kFloor},
    {"mxfp4", MxElement::kE2M1, 32, BlockScaleFormat::kE8M0, BlockScaleRule::kFloor},
    {"mxint8", MxElement::kInt8, 32, BlockScaleFormat::kE8M0, BlockScaleRule::kFloor},
    {"nvfp4", MxElement::kE2M1, 16, BlockScaleFormat::kUE4M3, BlockScaleRule::kNearest},
};

constexpr BlockScaleRule kE8M0Rules[] = {BlockScaleRule::kFloor, BlockScaleRule::kCeil,
                                         BlockScaleRule::kEven, BlockScaleRule::kRceil,
                                         BlockScaleRule::kCudnn};
constexpr BlockScaleRule kUE4M3Rules[] = {BlockScaleRule::kNearest, BlockScaleRule::kUp};
constexpr BlockScaleRule kFp32Rules[] = {BlockScaleRule::kAmax};

constexpr std::string_view kSyntax =
    "expected mxfp8e4m3, mxfp8e5m2, mxfp6e3m2, mxfp6e2m3, mxfp4, mxint8, nvfp4 or "
    "mx:ELEM:BLOCK:SCALEFMT:RULE (SCALEFMT e8m0 ue4m3 fp32), then optional :RULE, :4/6, :2dB";

[[noreturn]] void RejectBlockScaled(std::string_view text, const std::string& why) {
  throw std::invalid_argument("block-scaled format '" + std::string(text) + "': " + why);
}

std::string RulesOf(BlockScaleFormat f) {
  std::string s;
  if (f == BlockScaleFormat::kE8M0) {
    for (auto r : kE8M0Rules) s += (s.empty() ? "" : " ") + std::string(BlockScaleRuleName(r));
  } else if (f == BlockScaleFormat::kUE4M3) {
    for (auto r : kUE4M3Rules) s += (s.empty() ? "" : " ") + std::string(BlockScaleRuleName(r));
  } else {
    for (auto r : kFp32Rules) s += (s.empty() ? "" : " ") + std::string(BlockScaleRuleName(r));
  }
  return s;
}

bool ParseRule(std::string_view t, BlockScaleRule& out) {
  for (auto r : {BlockScaleRule::kFloor, BlockScaleRule::kCeil, BlockScaleRule::kEven,
                 BlockScaleRule::kRceil, BlockScaleRule::kCudnn, BlockScaleRule::kNearest,
                 BlockScaleRule::kUp, BlockScaleRule::kAmax}) {
    if (t == BlockScaleRuleName(r)) {
      out = r;
      return true;
    }
  }
  return false;
}

bool RuleFits(BlockScaleFormat f, BlockScaleRule r) {
  if (f == BlockScaleFormat::kFp32 || r == BlockScaleRule::kAmax)
    return f == BlockScaleFormat::kFp32 && r == BlockScaleRule::kAmax;
  const bool ue = r == BlockScaleRule::kNearest || r == BlockScaleRule::kUp;
  return (f == BlockScaleFormat::kUE4M3) == ue;
}

bool ParseInt(std::string_view t, int& out) {
  if (t.empty() || t.size() > 6) return false;
  int v = 0;
  for (char c : t) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

std::vector<std::string_view> Split(std::string_view t) {
  std::vector<std::string_view> v;
  std::size_t start = 0;
  while (true) {
    const auto colon = t.find(':', start);
    v.push_back(t.substr(start, colon == std::string_view::npos ? t.npos : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return v;
}

std::string CanonicalName(const BlockScaledFormat& f) {
  std::string s;
  const Named* base = nullptr;
  for (const Named& n : kNamed)
    if (n.element == f.element && n.block == f.block && n.scale == f.scale) base = &n;
  if (base) {
    s = std::string(base->name);
    if (f.rule != base->rule) s += ":" + std::string(BlockScaleRuleName(f.rule));
  } else {
    s = "mx:" + std::string(MxElementName(f.element)) + ":" + std::to_string(f.block) + ":" +
        std::string(BlockScaleFormatName(f.scale)) + ":" + std::string(BlockScaleRuleName(f.rule));
  }
  if (f.four_over_six) s += ":4/6";
  if (f.two_d) s += ":2d" + std::to_string(f.block);
  return s;
}

// ---- element and scale encodings ----

// The exponent e with 2^e <= |v| < 2^(e+1), for finite v != 0 (exact, subnormals included).
int Log2Floor(double v) { return std::ilogb(v); }
bool IsPow2(double v) {
  int e = 0;
  return std::frexp(std::fabs(v), &e) == 0.5;
}

// The block's E8M0 exponent under `rule` for a finite amax > 0; may lie outside -127..127.
int E8M0Exponent(const ElementInfo& el, const Format& ef, BlockScaleRule rule, double amax) {
  const int emax = el.emax;
  switch (rule) {
    case BlockScaleRule::kFloor:
      return Log2Floor(amax) - emax;
    case BlockScaleRule::kCeil:
      return Log2Floor(amax) + (IsPow2(amax) ? 0 : 1) - emax;
    case BlockScaleRule::kEven: {
      // amax's significand in [1, 2), rounded to mbits fraction bits with ties away: it
      // carries into the next binade iff its fraction is at least 1 - 2^-(mbits+1).
      const int k = Log2Floor(amax);
      const double frac = std::ldexp(amax, -k) - 1.0;  // exact
      const bool carry = frac >= 1.0 - std::ldexp(1.0, -(el.mbits + 1));
      return k + (carry ? 1 : 0) - emax;
    }
    case BlockScaleRule::kRceil: {
      const float inv = 1.0f / static_cast<float>(ef.MaxFinite());
      const float d = static_cast<float>(amax) * inv;
      if (!std::isfinite(d)) return 128;
      if (d <= std::ldexp(1.0f, -127)) return -127;
      return Log2Floor(d) + (IsPow2(d) ? 0 : 1);
    }
    case BlockScaleRule::kCudnn: {
      const double m = ef.MaxFinite();
      if (amax <= std::ldexp(m, -127)) return -127;
      // Smallest e with m * 2^e >= amax; m * 2^e is exact for e >= -127 (and inf past DBL_MAX).
      int e = Log2Floor(amax) - Log2Floor(m) - 1;
      if (e < -127) e = -127;
      while (std::ldexp(m, e) < amax) ++e;
      return e;
    }
    default:
      break;
  }
  throw std::logic_error("E8M0Exponent: not an e8m0 rule");
}

}  // namespace

std::string_view MxElementName(MxElement e) { return Info(e).name; }

std::string_view BlockScaleFormatName(BlockScaleFormat f) {
  return f == BlockScaleFormat::kE8M0 ? "e8m0" : f == BlockScaleFormat::kUE4M3 ? "ue4m3" : "fp32";
}

std::string_view BlockScaleRuleName(BlockScaleRule r) {
  switch (r) {
    case BlockScaleRule::kFloor:
      return "floor";
    case BlockScaleRule::kCeil:
      return "ceil";
    case BlockScaleRule::kEven:
      return "even";
    case BlockScaleRule::kRceil:
      return "rceil";
    case BlockScaleRule::kCudnn:
      return "cudnn";
    case BlockScaleRule::kNearest:
      return "rn";
    case BlockScaleRule::kUp:
      return "ru";
    case BlockScaleRule::kAmax:
      break;
  }
  return "amax";
}

Format MxElementFormat(MxElement e) {
  const ElementInfo& el = Info(e);
  Format f;
  f.name = std::string(el.name);
  f.precision = el.mbits + 1;
  f.emin = el.emin;
  f.emax = el.emax;
  f.subnormals = true;
  f.has_inf = false;
  f.has_nan = el.top_nan;
  f.saturate = true;
  f.top_significand_is_nan = el.top_nan;
  return f;
}

int MxElementBits(MxElement e) { return Info(e).bits; }

std::uint8_t EncodeMxElement(MxElement e, double value) {
  const ElementInfo& el = Info(e);
  if (e == MxElement::kInt8) {
    const long k = std::lround(std::ldexp(value, 6));
    return static_cast<std::uint8_t>(static_cast<std::int8_t>(k));
  }
  const std::uint8_t sign = std::signbit(value) ? std::uint8_t(1u << (el.bits - 1)) : 0;
  const double a = std::fabs(value);
  if (a == 0) return sign;
  unsigned field = 0, mant = 0;
  if (a < std::ldexp(1.0, el.emin)) {  // subnormal: a = mant * 2^(emin - mbits)
    mant = static_cast<unsigned>(std::ldexp(a, el.mbits - el.emin));
  } else {
    const int k = Log2Floor(a);
    field = static_cast<unsigned>(k + 1 - el.emin);
    mant = static_cast<unsigned>(std::ldexp(a, el.mbits - k)) - (1u << el.mbits);
  }
  return static_cast<std::uint8_t>(sign | (field << el.mbits) | mant);
}

double DecodeMxElement(MxElement e, std::uint8_t code) {
  const ElementInfo& el = Info(e);
  if (e == MxElement::kInt8)
    return std::ldexp(static_cast<double>(static_cast<std::int8_t>(code)), -6);
  const unsigned mask = (1u << el.bits) - 1;
  code &= mask;
  const bool neg = (code >> (el.bits - 1)) & 1u;
  const unsigned field = (code >> el.mbits) & ((1u << (el.bits - 1 - el.mbits)) - 1);
  const unsigned mant = code & ((1u << el.mbits) - 1);
  const unsigned top = (1u << (el.bits - 1 - el.mbits)) - 1;
  double v;
  if (e == MxElement::kE5M2 && field == top) {
    v = mant == 0 ? std::numeric_limits<double>::infinity()
                  : std::numeric_limits<double>::quiet_NaN();
  } else if (el.top_nan && field == top && mant == (1u << el.mbits) - 1) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (field == 0) {
    v = std::ldexp(static_cast<double>(mant), el.emin - el.mbits);
  } else {
    v = std::ldexp(static_cast<double>(mant + (1u << el.mbits)),
                   static_cast<int>(field) - 1 + el.emin - el.mbits);
  }
  return neg ? -v : v;
}

double DecodeE8M0(std::uint8_t code) {
  if (code == 0xFF) return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, static_cast<int>(code) - 127);
}

double DecodeUE4M3(std::uint8_t code) { return DecodeMxElement(MxElement::kE4M3, code & 0x7F); }

const std::vector<BlockScaledFormat>& NamedBlockScaledFormats() {
  static const std::vector<BlockScaledFormat> v = [] {
    std::vector<BlockScaledFormat> out;
    for (const Named& n : kNamed) out.push_back(ParseBlockScaledFormat(n.name));
    return out;
  }();
  return v;
}

bool LooksBlockScaled(std::string_view text) {
  if (text.substr(0, 3) == "mx:") return true;
  for (const Named& n : kNamed)
    if (text.substr(0, n.name.size()) == n.name &&
        (text.size() == n.name.size() || text[n.name.size()] == ':'))
      return true;
  return false;
}

BlockScaledFormat ParseBlockScaledFormat(std::string_view text) {
  const std::vector<std::string_view> parts = Split(text);
  BlockScaledFormat f;
  std::size_t next = 1;
  bool rule_given = false;
  if (parts[0] == "mx") {
    if (parts.size() < 5)
      RejectBlockScaled(text,
                        "the mx: form needs ELEM:BLOCK:SCALEFMT:RULE (e.g. mx:e2m1:32:e8m0:floor)");
    bool found = false;
    for (const ElementInfo& el : kElements)
      if (parts[1] == el.name) {
        f.element = el.id;
        found = true;
      }
    if (!found)
      RejectBlockScaled(text, "element '" + std::string(parts[1]) +
                                  "' is not one of e5m2 e4m3 e3m2 e2m3 e2m1 int8");
    if (!ParseInt(parts[2], f.block) || f.block < 1 || f.block > 4096)
      RejectBlockScaled(text, "block '" + std::string(parts[2]) + "' is not an integer in 1..4096");
    if (parts[3] == "e8m0") {
      f.scale = BlockScaleFormat::kE8M0;
    } else if (parts[3] == "ue4m3") {
      f.scale = BlockScaleFormat::kUE4M3;
    } else if (parts[3] == "fp32") {
      f.scale = BlockScaleFormat::kFp32;
    } else {
      RejectBlockScaled(
          text, "scale format '" + std::string(parts[3]) + "' is not one of e8m0 ue4m3 fp32");
    }
    if (!ParseRule(parts[4], f.rule) || !RuleFits(f.scale, f.rule))
      RejectBlockScaled(text, "rule '" + std::string(parts[4]) + "' is not one of " +
                                  RulesOf(f.scale) + " (scale " +
                                  std::string(BlockScaleFormatName(f.scale)) + ")");
    rule_given = true;
    next = 5;
  } else {
    const Named* base = nullptr;
    for (const Named& n : kNamed)
      if (parts[0] == n.name) base = &n;
    if (!base)
      RejectBlockScaled(text,
                        "unknown name '" + std::string(parts[0]) + "': " + std::string(kSyntax));
    f.element = base->element;
    f.block = base->block;
    f.scale = base->scale;
    f.rule = base->rule;
  }
  bool seen_46 = false, seen_2d = false;
  for (std::size_t i = next; i < parts.size(); ++i) {
    const std::string_view p = parts[i];
    BlockScaleRule r;
    if (p == "4/6") {
      if (seen_46) RejectBlockScaled(text, "suffix '4/6' given twice");
      seen_46 = true;
      if (f.scale != BlockScaleFormat::kUE4M3 || f.element != MxElement::kE2M1)
        RejectBlockScaled(text, "':4/6' needs e2m1 elements with a ue4m3 scale (nvfp4)");
      f.four_over_six = true;
    } else if (p.substr(0, 2) == "2d") {
      if (seen_2d) RejectBlockScaled(text, "suffix '2d' given twice");
      seen_2d = true;
      int b = 0;
      if (!ParseInt(p.substr(2), b) || b < 1 || b > 4096)
        RejectBlockScaled(text,
                          "'" + std::string(p) + "': expected 2dB with B an integer in 1..4096");
      f.block = b;
      f.two_d = true;
    } else if (ParseRule(p, r)) {
      if (rule_given) RejectBlockScaled(text, "rule given twice ('" + std::string(p) + "')");
      rule_given = true;
      if (!RuleFits(f.scale, r))
        RejectBlockScaled(text, "rule '" + std::string(p) + "' is not one of " + RulesOf(f.scale) +
                                    " (scale " + std::string(BlockScaleFormatName(f.scale)) + ")");
      f.rule = r;
    } else {
      RejectBlockScaled(text, "unknown suffix '" + std::string(p) + "': expected a rule (" +
                                  RulesOf(f.scale) + "), 4/6 or 2dB");
    }
  }
  f.name = CanonicalName(f);
  return f;
}

Format BlockScaledStorageFormat(const BlockScaledFormat& f) {
  Format s = Fp64();
  s.name = f.name;
  return s;
}

std::size_t BlockScaledResult::Block(std::size_t i) const {
  const std::size_t r = i / cols, c = i % cols;
  const std::size_t b = static_cast<std::size_t>(block);
  return (two_d ? r / b : r) * block_cols + c / b;
}

BlockScaledResult Quantize(const BlockScaledFormat& f, std::span<const double> x) {
  if (f.two_d)
    throw std::invalid_argument("quantize " + f.name +
                                ": two-dimensional blocks need a matrix (rows and cols)");
  return Quantize(f, x, 1, x.size());
}

BlockScaledResult Quantize(const BlockScaledFormat& f, std::span<const double> x, std::size_t rows,
                           std::size_t cols) {
  if (rows * cols != x.size())
    throw std::invalid_argument("quantize " + f.name + ": rows x cols = " + std::to_string(rows) +
                                " x " + std::to_string(cols) + " but " + std::to_string(x.size()) +
                                " values");
  const ElementInfo& el = Info(f.element);
  const Format ef = MxElementFormat(f.element);
  const std::size_t B = static_cast<std::size_t>(f.block);
  BlockScaledResult out;
  out.rows = rows;
  out.cols = cols;
  out.block = f.block;
  out.two_d = f.two_d;
  out.block_cols = cols == 0 ? 0 : (cols + B - 1) / B;
  out.block_rows = f.two_d ? (rows + B - 1) / B : rows;
  const std::size_t n = x.size();
  out.codes.assign(n, 0);
  out.elements.assign(n, 0.0);
  out.values.assign(n, 0.0);
  const std::size_t nblocks = out.block_rows * out.block_cols;
  out.scale_codes.assign(nblocks, 0);
  out.scales.assign(nblocks, 0.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();

  // The element indices of block b, row-major inside the block.
  std::vector<std::size_t> idx;
  auto gather = [&](std::size_t b) {
    idx.clear();
    const std::size_t br = b / out.block_cols, bc = b % out.block_cols;
    const std::size_t r0 = f.two_d ? br * B : br, r1 = f.two_d ? std::min(rows, r0 + B) : r0 + 1;
    const std::size_t c0 = bc * B, c1 = std::min(cols, c0 + B);
    for (std::size_t r = r0; r < r1; ++r)
      for (std::size_t c = c0; c < c1; ++c) idx.push_back(r * cols + c);
  };
  auto set_element = [&](std::size_t i, double e) {
    out.elements[i] = e;
    out.codes[i] = EncodeMxElement(f.element, e);
  };
  // The largest |x| of the gathered block; bad when one of its values is not finite.
  auto block_amax = [&](bool& bad) {
    double amax = 0;
    bad = false;
    for (std::size_t i : idx) {
      if (!std::isfinite(x[i])) bad = true;
      amax = std::max(amax, std::fabs(x[i]));
    }
    return amax;
  };
  // A NaN scale: every value of the gathered block is NaN (its elements' codes are zero).
  auto nan_block = [&](std::size_t b) {
    out.scales[b] = nan;
    for (std::size_t i : idx) {
      set_element(i, 0.0);
      out.values[i] = nan;
    }
  };

  if (f.scale == BlockScaleFormat::kE8M0) {
    for (std::size_t b = 0; b < nblocks; ++b) {
      gather(b);
      bool bad = false;
      const double amax = block_amax(bad);
      int e = bad ? 128 : amax == 0 ? -127 : E8M0Exponent(el, ef, f.rule, amax);
      if (e < -127) e = -127;
      if (e > 127) {  // NaN scale: every value of the block is NaN
        out.scale_codes[b] = 0xFF;
        nan_block(b);
        continue;
      }
      out.scale_codes[b] = static_cast<std::uint8_t>(e + 127);
      out.scales[b] = std::ldexp(1.0, e);
      for (std::size_t i : idx) {
        // x * 2^-e is exact (a tiny x that underflows here rounds to zero either way).
        const double el_value = RoundToFormat(std::ldexp(x[i], -e), ef, Rounding::kNearestEven);
        set_element(i, el_value);
        out.values[i] = el_value * out.scales[b];
      }
    }
    return out;
  }

  if (f.scale == BlockScaleFormat::kFp32) {  // DeepGEMM's per-block fp32 scales (rule amax)
    const float elem_max = static_cast<float>(ef.MaxFinite());
    for (std::size_t b = 0; b < nblocks; ++b) {
      gather(b);
      bool bad = false;
      const double amax = block_amax(bad);
      if (bad) {  // NaN scale: every value of the block is NaN
        nan_block(b);
        continue;
      }
      const float a = std::max(static_cast<float>(amax), 1e-4f);
      const float s = a / elem_max;  // the stored (decode) scale
      const float c = elem_max / a;  // the encode multiplier
      out.scales[b] = s;
      for (std::size_t i : idx) {
        const float y = static_cast<float>(x[i]) * c;
        const double e = RoundToFormat(static_cast<double>(y), ef, Rounding::kNearestEven);
        set_element(i, e);
        out.values[i] = e * static_cast<double>(s);  // exact: at most 4 + 24 significant bits
      }
    }
    return out;
  }

  // ue4m3 scales: TransformerEngine's fp32 recipe (block_scaled.hpp).
  double tensor_amax = 0;
  bool bad = false;
  for (double v : x) {
    if (!std::isfinite(v)) bad = true;
    tensor_amax = std::max(tensor_amax, std::fabs(v));
  }
  if (bad) {
    out.encode_scale = out.tensor_scale = nan;
    for (std::size_t b = 0; b < nblocks; ++b) {
      out.scale_codes[b] = 0x7F;
      out.scales[b] = nan;
    }
    for (std::size_t i = 0; i < n; ++i) {
      set_element(i, 0.0);
      out.values[i] = nan;
    }
    return out;
  }
  const float elem_max = static_cast<float>(ef.MaxFinite());
  const float q = f.four_over_six ? 256.0f : 448.0f;
  const float a_t = static_cast<float>(tensor_amax);
  float s_enc = std::fmin((q * elem_max) / a_t, FLT_MAX);
  if (a_t == 0.0f || s_enc == 0.0f) s_enc = 1.0f;
  const float s_dec = 1.0f / s_enc;
  out.encode_scale = s_enc;
  out.tensor_scale = s_dec;
  const Format scale_fmt = Fp8E4M3Sat();
  const Rounding scale_round =
      f.rule == BlockScaleRule::kUp ? Rounding::kUp : Rounding::kNearestEven;
  std::vector<double> cand_a, cand_b;
  // Quantises block `idx` with block scale s (a ue4m3 value) into `els`; returns TE's fp32
  // 4over6 error sum of the candidate (sequential over the block's elements).
  auto quantize_block = [&](double s, std::vector<double>& els) {
    const float sf = static_cast<float>(s);
    const float c = std::fmin(1.0f / (sf * s_dec), FLT_MAX);
    els.resize(idx.size());
    float err = 0.0f;
    for (std::size_t j = 0; j < idx.size(); ++j) {
      const float xf = static_cast<float>(x[idx[j]]);
      const float y = xf * c;
      els[j] = RoundToFormat(static_cast<double>(y), ef, Rounding::kNearestEven);
      const float val = ((static_cast<float>(els[j]) * sf) * a_t) / (6.0f * 256.0f);
      const float diff = val - xf;
      const float sq = diff * diff;
      err = err + sq;
    }
    return err;
  };
  for (std::size_t b = 0; b < nblocks; ++b) {
    gather(b);
    double amax = 0;
    for (std::size_t i : idx) amax = std::max(amax, std::fabs(x[i]));
    const float a = static_cast<float>(amax);
    const float t = (a / elem_max) * s_enc;
    double s = RoundToFormat(static_cast<double>(t), scale_fmt, scale_round);
    const float err6 = quantize_block(s, cand_a);
    if (f.four_over_six) {
      const float t4 = t * 1.5f;
      const double s4 = RoundToFormat(static_cast<double>(t4), scale_fmt, scale_round);
      const float err4 = quantize_block(s4, cand_b);
      if (err4 < err6) {
        s = s4;
        cand_a.swap(cand_b);
      }
    }
    out.scale_codes[b] = static_cast<std::uint8_t>(EncodeMxElement(MxElement::kE4M3, s) & 0x7F);
    out.scales[b] = s;
    for (std::size_t j = 0; j < idx.size(); ++j) {
      set_element(idx[j], cand_a[j]);
      out.values[idx[j]] = cand_a[j] * s * static_cast<double>(s_dec);
    }
  }
  return out;
}

}  // namespace carrier
