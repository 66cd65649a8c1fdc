// Block-scaled formats (precision/block_scaled.hpp) against an independent exact implementation
// written here from the OCP MX v1.0 and TransformerEngine NVFP4 definitions: element values from
// their bit fields, rounding by search over every element value in exact rationals
// (boost::multiprecision::cpp_rational), scale rules from their published formulas. The NVFP4
// recipe's fp32 steps are its definition, so the reference runs them in float too.
#include <algorithm>
#include <boost/multiprecision/cpp_int.hpp>
#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "precision/block_scaled.hpp"

namespace carrier {
namespace {

using Q = boost::multiprecision::number<boost::multiprecision::cpp_rational_backend,
                                        boost::multiprecision::et_off>;

Q ExactPow2(int k) {
  using boost::multiprecision::cpp_int;
  return k >= 0 ? Q(cpp_int(1) << k) : Q(cpp_int(1), cpp_int(1) << -k);
}
Q Exact(double v) {  // a finite double as a rational, exactly
  int e = 0;
  const double m = std::frexp(v, &e);
  return Q(static_cast<long long>(std::ldexp(m, 53))) * ExactPow2(e - 53);
}

// An element type from its bit fields (OCP FP8 v1.0 and MX v1.0 section 5.3).
struct RefElement {
  MxElement id;
  int ebits = 0, mbits = 0;  // 0 ebits: int8
  bool e5m2_specials = false, e4m3_nan = false;
  struct Value {
    std::uint8_t code;
    Q q;
    double d;
  };
  std::vector<Value> finite;  // every finite code (both signs, both zeros)
  std::vector<Value> pos;     // +0 and the positive finite values, ascending
  std::vector<Value> neg;     // neg[i]: the negative-sign code of pos[i] (-0 too; int8: 0)
  std::vector<Q> mids;        // mids[i]: the midpoint of pos[i] and pos[i + 1]
  Q max;
  int emax_pow2 = 0;  // floor(log2(max))
};

RefElement MakeRef(MxElement id) {
  RefElement r{};
  r.id = id;
  switch (id) {
    case MxElement::kE5M2:
      r.ebits = 5, r.mbits = 2, r.e5m2_specials = true;
      break;
    case MxElement::kE4M3:
      r.ebits = 4, r.mbits = 3, r.e4m3_nan = true;
      break;
    case MxElement::kE3M2:
      r.ebits = 3, r.mbits = 2;
      break;
    case MxElement::kE2M3:
      r.ebits = 2, r.mbits = 3;
      break;
    case MxElement::kE2M1:
      r.ebits = 2, r.mbits = 1;
      break;
    case MxElement::kInt8:
      r.ebits = 0, r.mbits = 0;
      break;
  }
  const int bits = r.ebits == 0 ? 8 : 1 + r.ebits + r.mbits;
  for (int c = 0; c < (1 << bits); ++c) {
    Q q;
    if (r.ebits == 0) {
      q = Q(static_cast<std::int8_t>(c)) / 64;
      if (c == 0x80) continue;  // -2: never produced (symmetric saturation)
    } else {
      const int sign = c >> (bits - 1), field = (c >> r.mbits) & ((1 << r.ebits) - 1),
                mant = c & ((1 << r.mbits) - 1);
      const int bias = (1 << (r.ebits - 1)) - 1, top = (1 << r.ebits) - 1;
      if (r.e5m2_specials && field == top) continue;
      if (r.e4m3_nan && field == top && mant == (1 << r.mbits) - 1) continue;
      q = field == 0 ? Q(mant) * ExactPow2(1 - bias - r.mbits)
                     : Q(mant + (1 << r.mbits)) * ExactPow2(field - bias - r.mbits);
      if (sign) q = -q;
    }
    r.finite.push_back({static_cast<std::uint8_t>(c), q, static_cast<double>(q)});
    if (q > 0 || (q == 0 && (c >> (bits - 1)) == 0)) r.pos.push_back(r.finite.back());
  }
  std::sort(r.pos.begin(), r.pos.end(), [](auto& a, auto& b) { return a.q < b.q; });
  for (const auto& p : r.pos)
    for (const auto& v : r.finite)
      if (v.q == -p.q && (r.ebits == 0 || (v.code >> (r.ebits + r.mbits)) == 1)) r.neg.push_back(v);
  REQUIRE(r.neg.size() == r.pos.size());
  for (std::size_t i = 0; i + 1 < r.pos.size(); ++i)
    r.mids.push_back((r.pos[i].q + r.pos[i + 1].q) / 2);
  r.max = r.pos.back().q;
  r.emax_pow2 = 0;
  while (ExactPow2(r.emax_pow2 + 1) <= r.max) ++r.emax_pow2;
  while (ExactPow2(r.emax_pow2) > r.max) --r.emax_pow2;
  return r;
}

// Whether a value's code is "even": the last significand bit (int8: the integer) is 0.
bool EvenCode(const RefElement& /*r*/, std::uint8_t code) { return (code & 1) == 0; }

// Round-to-nearest-even of the exact y into the element's values, saturating at +-max. `neg`:
// y's sign (given apart so that -0 keeps it); a negative y that rounds to zero gives the
// negative-zero code (int8: 0).
RefElement::Value RoundRef(const RefElement& r, const Q& y, bool neg) {
  const Q a = y < 0 ? Q(-y) : y;
  // The first midpoint at or above a: below it pos[i], at it the even one of the pair.
  const auto it = std::lower_bound(r.mids.begin(), r.mids.end(), a);
  const std::size_t i = static_cast<std::size_t>(it - r.mids.begin());
  const std::size_t pick =
      it != r.mids.end() && *it == a && !EvenCode(r, r.pos[i].code) ? i + 1 : i;
  return neg ? r.neg[pick] : r.pos[pick];
}
RefElement::Value RoundRef(const RefElement& r, const Q& y) { return RoundRef(r, y, y < 0); }

// The E8M0 exponent a rule gives for amax > 0 (finite), before clamping; 0x7FFF for "NaN".
int RefExponent(const RefElement& r, BlockScaleRule rule, double amax_d) {
  const Q amax = Exact(amax_d);
  auto floor_log2 = [](const Q& v) {
    const double guess = static_cast<double>(v);
    int k = guess > 0 ? std::ilogb(guess) : -1100;  // a guess, corrected exactly below
    while (ExactPow2(k) > v) --k;
    while (ExactPow2(k + 1) <= v) ++k;
    return k;
  };
  auto ceil_log2 = [&](const Q& v) {
    const int k = floor_log2(v);
    return ExactPow2(k) == v ? k : k + 1;
  };
  switch (rule) {
    case BlockScaleRule::kFloor:
      return floor_log2(amax) - r.emax_pow2;
    case BlockScaleRule::kCeil:
      return ceil_log2(amax) - r.emax_pow2;
    case BlockScaleRule::kEven: {
      const int m = r.ebits == 0 ? 6 : r.mbits;
      const int k = floor_log2(amax);
      const Q sig =
          amax / ExactPow2(k) * ExactPow2(m) + Q(1, 2);  // ties away: floor(sig * 2^m + 1/2)
      const auto n =
          boost::multiprecision::numerator(sig) / boost::multiprecision::denominator(sig);
      return (n >= (boost::multiprecision::cpp_int(1) << (m + 1)) ? k + 1 : k) - r.emax_pow2;
    }
    case BlockScaleRule::kRceil: {
      const float d =
          static_cast<float>(amax_d) * (1.0f / static_cast<float>(static_cast<double>(r.max)));
      if (!std::isfinite(d)) return 0x7FFF;
      const Q dq = Exact(d);
      if (dq <= ExactPow2(-127)) return -127;
      return ceil_log2(dq);
    }
    case BlockScaleRule::kCudnn:
      return ceil_log2(amax / r.max);
    default:
      break;
  }
  throw std::logic_error("rule");
}

struct RefBlockResult {
  std::vector<std::uint8_t> codes, scale_codes;
  std::vector<double> values;
};

// OCP MX quantisation of x in 1-D blocks of B.
RefBlockResult RefMx(const RefElement& r, BlockScaleRule rule, std::size_t B,
                     const std::vector<double>& x) {
  RefBlockResult out;
  for (std::size_t b0 = 0; b0 < x.size(); b0 += B) {
    const std::size_t b1 = std::min(x.size(), b0 + B);
    double amax = 0;
    bool bad = false;
    for (std::size_t i = b0; i < b1; ++i) {
      if (!std::isfinite(x[i]))
        bad = true;
      else
        amax = std::max(amax, std::fabs(x[i]));
    }
    int e = bad ? 0x7FFF : amax == 0 ? -127 : RefExponent(r, rule, amax);
    if (e < -127) e = -127;
    if (e > 127) {
      out.scale_codes.push_back(0xFF);
      for (std::size_t i = b0; i < b1; ++i) {
        out.codes.push_back(0);
        out.values.push_back(std::numeric_limits<double>::quiet_NaN());
      }
      continue;
    }
    out.scale_codes.push_back(static_cast<std::uint8_t>(e + 127));
    for (std::size_t i = b0; i < b1; ++i) {
      const auto v = RoundRef(r, Exact(x[i]) * ExactPow2(-e), std::signbit(x[i]));
      out.codes.push_back(v.code);
      out.values.push_back(static_cast<double>(v.q * ExactPow2(e)));
    }
  }
  return out;
}

// The positive E4M3 values (the ue4m3 scale) and their rounding: nearest even or up, to 448.
double RefUE4M3(double t, bool up) {
  static const RefElement e4 = MakeRef(MxElement::kE4M3);
  const Q q = Exact(t);
  if (up) {
    for (const auto& v : e4.pos)
      if (v.q >= q) return v.d;
    return 448.0;
  }
  return RoundRef(e4, q).d;
}

// TransformerEngine's NVFP4 recipe (e2m1, ue4m3 scales) in 1-D blocks of B (or the 4/6 choice).
struct RefNv {
  RefBlockResult r;
  double s_dec = 1;
};
RefNv RefNvfp4(std::size_t B, const std::vector<double>& x, bool up, bool four_six) {
  static const RefElement e21 = MakeRef(MxElement::kE2M1);
  RefNv out;
  double amax = 0;
  for (double v : x) amax = std::max(amax, std::fabs(v));
  const float A = static_cast<float>(amax);
  float s_enc = (four_six ? 1536.0f : 2688.0f) / A;
  if (s_enc > FLT_MAX) s_enc = FLT_MAX;
  if (A == 0.0f || s_enc == 0.0f) s_enc = 1.0f;
  const float s_dec = 1.0f / s_enc;
  out.s_dec = s_dec;
  for (std::size_t b0 = 0; b0 < x.size(); b0 += B) {
    const std::size_t b1 = std::min(x.size(), b0 + B);
    double bmax = 0;
    for (std::size_t i = b0; i < b1; ++i) bmax = std::max(bmax, std::fabs(x[i]));
    const float a6 = static_cast<float>(bmax) / 6.0f;
    const float t = a6 * s_enc;
    auto run = [&](double s, std::vector<RefElement::Value>& els) {
      const float sf = static_cast<float>(s);
      const float den = sf * s_dec;
      float c = 1.0f / den;
      if (!(c <= FLT_MAX)) c = FLT_MAX;
      float err = 0;
      for (std::size_t i = b0; i < b1; ++i) {
        const float xf = static_cast<float>(x[i]);
        const float y = xf * c;
        const Q yq = std::isinf(y) ? (y > 0 ? Q(1000) : Q(-1000)) : Exact(y);
        els.push_back(RoundRef(e21, yq, std::signbit(y)));
        const float p1 = static_cast<float>(els.back().d) * sf;
        const float p2 = p1 * A;
        const float val = p2 / 1536.0f;
        const float diff = val - xf;
        const float sq = diff * diff;
        err = err + sq;
      }
      return err;
    };
    double s = RefUE4M3(t, up);
    std::vector<RefElement::Value> els, els4;
    const float err6 = run(s, els);
    if (four_six) {
      const float t4 = t * 1.5f;
      const double s4 = RefUE4M3(t4, up);
      if (run(s4, els4) < err6) {
        s = s4;
        els = els4;
      }
    }
    // The ue4m3 code of s, from the e4m3 table.
    static const RefElement e4 = MakeRef(MxElement::kE4M3);
    for (const auto& v : e4.pos)
      if (v.d == s) out.r.scale_codes.push_back(v.code);
    for (const auto& v : els) {
      out.r.codes.push_back(v.code);
      out.r.values.push_back(static_cast<double>(v.q * Exact(s) * Exact(s_dec)));
    }
  }
  return out;
}

const MxElement kAllElements[] = {MxElement::kE5M2, MxElement::kE4M3, MxElement::kE3M2,
                                  MxElement::kE2M3, MxElement::kE2M1, MxElement::kInt8};
const BlockScaleRule kMxRules[] = {BlockScaleRule::kFloor, BlockScaleRule::kCeil,
                                   BlockScaleRule::kEven, BlockScaleRule::kRceil,
                                   BlockScaleRule::kCudnn};

bool SameValue(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Compares a library result with the reference; returns the number of mismatches, printing the
// first few with everything needed to reproduce.
int Compare(const std::string& what, const std::vector<double>& x, const BlockScaledResult& got,
            const RefBlockResult& want) {
  int bad = 0;
  auto report = [&](const std::string& s) {
    if (bad++ < 5) UNSCOPED_INFO(what << ": " << s);
  };
  if (got.scale_codes != want.scale_codes) {
    for (std::size_t b = 0; b < std::min(got.scale_codes.size(), want.scale_codes.size()); ++b)
      if (got.scale_codes[b] != want.scale_codes[b]) {
        std::ostringstream os;
        os << "block " << b << " scale code " << int(got.scale_codes[b]) << " want "
           << int(want.scale_codes[b]);
        report(os.str());
      }
    if (got.scale_codes.size() != want.scale_codes.size()) report("scale count differs");
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (got.codes[i] != want.codes[i] || !SameValue(got.values[i], want.values[i])) {
      std::ostringstream os;
      os.precision(17);
      os << "x[" << i << "] = " << x[i] << " (block " << got.Block(i) << "): code "
         << int(got.codes[i]) << " value " << got.values[i] << "; want code " << int(want.codes[i])
         << " value " << want.values[i];
      report(os.str());
    }
    // The documented identity.
    const double id = got.elements[i] * got.scales[got.Block(i)] * got.tensor_scale;
    if (!SameValue(id, got.values[i])) report("identity fails at " + std::to_string(i));
  }
  return bad;
}

// Inputs that walk every element code and every midpoint for a block whose amax is A: the block
// starts with +-A; the rest are (grid value or midpoint, +- a hair) * 2^e for the reference's e,
// kept at most A.
std::vector<double> WalkBlocks(const RefElement& r, BlockScaleRule rule, std::size_t B, double A) {
  std::vector<double> grid;
  for (std::size_t i = 0; i < r.pos.size(); ++i) {
    grid.push_back(r.pos[i].d);
    if (i + 1 < r.pos.size()) {
      const double mid = (r.pos[i].d + r.pos[i + 1].d) / 2;  // exact: a few bits
      grid.push_back(mid);
      grid.push_back(std::nextafter(mid, 0.0));
      grid.push_back(std::nextafter(mid, 1e9));
    }
  }
  grid.push_back(static_cast<double>(r.max) * 1.25);  // saturation
  int e = RefExponent(r, rule, A);
  if (e < -127) e = -127;
  if (e > 127) e = 0;
  std::vector<double> x;
  std::size_t g = 0;
  int sign = 1;
  while (g < grid.size()) {
    x.push_back(sign * A);
    for (std::size_t k = 1; k < B && g < grid.size(); ++k) {
      const double v = std::ldexp(grid[g++], e);
      x.push_back(std::fabs(v) <= A ? (k % 2 ? v : -v) : (k % 2 ? A : -A));
    }
    sign = -sign;
  }
  return x;
}

TEST_CASE("block-scaled: every element code decodes and encodes as its bit fields say", "[fast]") {
  for (MxElement id : kAllElements) {
    const RefElement r = MakeRef(id);
    int checked = 0;
    for (const auto& v : r.finite) {
      INFO(MxElementName(id) << " code " << int(v.code));
      CHECK(DecodeMxElement(id, v.code) == v.d);
      CHECK(std::signbit(DecodeMxElement(id, v.code)) == (v.q < 0 || (v.q == 0 && v.code != 0)));
      CHECK(EncodeMxElement(id, DecodeMxElement(id, v.code)) == v.code);
      ++checked;
    }
    const Format f = MxElementFormat(id);
    CHECK(f.MaxFinite() == static_cast<double>(r.max));
    CHECK(f.emax == r.emax_pow2);
    std::printf("block-scaled: %s: %d finite codes, max %g, emax %d\n",
                std::string(MxElementName(id)).c_str(), checked, f.MaxFinite(), f.emax);
  }
  CHECK(std::isnan(DecodeE8M0(0xFF)));
  CHECK(DecodeE8M0(0) == std::ldexp(1.0, -127));
  CHECK(DecodeE8M0(254) == std::ldexp(1.0, 127));
  CHECK(std::isnan(DecodeUE4M3(0x7F)));
  CHECK(DecodeUE4M3(0x7E) == 448.0);
  CHECK(DecodeUE4M3(0x01) == std::ldexp(1.0, -9));
}

TEST_CASE("block-scaled: MX quantisation equals the exact OCP rules on every code", "[fast]") {
  // amax values: powers of two, just below one (ceil/even carry), above the element max (floor
  // saturates), on the rceil/cudnn boundary M * 2^k, fp32-subnormal, double-subnormal, and
  // past 2^127 * M (NaN scale).
  const double kAmax[] = {1.0, 1.5, 0x1.fcp5, 500.0 * 0x1p-3, 0x1.ffp9, 448.0 * 32, 7.5 * 0x1p-20,
                          6.0 * 4, 3 * 0x1p-149, 0x1p-130, 0x1p-1070, 1e300, 0x1.f8p3, 57344.0 * 2,
                          1.984375 * 0x1p4, 28.0 * 0x1p-100,
                          // rceil's fp32 steps round these across a power of two (cudnn's
                          // exact quotient does not): the int8 max plus one fp32 ulp, and
                          // doubles a hair above M * 2^k that fp32(amax) rounds to M * 2^k.
                          0x1.fc0002p+3, 0x1.c0000007p8, 0x1.8000000000018p2};
  int total = 0, mismatches = 0;
  for (MxElement id : kAllElements) {
    const RefElement r = MakeRef(id);
    for (BlockScaleRule rule : kMxRules) {
      const std::size_t B = 32;
      const BlockScaledFormat f =
          ParseBlockScaledFormat("mx:" + std::string(MxElementName(id)) +
                                 ":32:e8m0:" + std::string(BlockScaleRuleName(rule)));
      for (double A : kAmax) {
        std::vector<double> x = WalkBlocks(r, rule, B, A);
        x.resize(x.size() + 3, 0.0);  // a tail shorter than a block (zeros after the last block)
        x.push_back(-A * 0.25);
        const BlockScaledResult got = Quantize(f, x);
        const RefBlockResult want = RefMx(r, rule, B, x);
        std::ostringstream what;
        what.precision(17);
        what << f.name << " amax " << A;
        const int bad = Compare(what.str(), x, got, want);
        CHECK(bad == 0);
        mismatches += bad;
        total += static_cast<int>(x.size());
        // Round trip: the dequantised values quantise to themselves.
        bool finite = true;
        for (double v : got.values) finite = finite && std::isfinite(v);
        if (finite) {
          const BlockScaledResult again = Quantize(f, got.values);
          CHECK(again.values == got.values);
          if (rule == BlockScaleRule::kFloor) CHECK(again.codes == got.codes);
        }
      }
    }
  }
  std::printf("block-scaled: MX: %d values over 6 elements x 5 rules x 19 amax, %d mismatches\n",
              total, mismatches);
}

TEST_CASE("block-scaled: zeros, NaN and inf blocks", "[fast]") {
  const BlockScaledFormat f = ParseBlockScaledFormat("mxfp8e4m3");
  std::vector<double> x(32 * 3 + 5, 0.0);
  x[40] = std::numeric_limits<double>::quiet_NaN();
  x[70] = -std::numeric_limits<double>::infinity();
  x[1] = 3.0;
  const BlockScaledResult q = Quantize(f, x);
  REQUIRE(q.scale_codes.size() == 4);
  CHECK(q.scale_codes[1] == 0xFF);
  CHECK(q.scale_codes[2] == 0xFF);
  CHECK(q.scale_codes[3] == 0);  // the all-zero tail: 2^-127
  CHECK(q.scale_codes[0] == 127 + 1 - 8);
  for (std::size_t i = 32; i < 96; ++i) CHECK(std::isnan(q.values[i]));
  for (std::size_t i = 96; i < x.size(); ++i) CHECK(q.values[i] == 0.0);
  const BlockScaledResult nv = Quantize(ParseBlockScaledFormat("nvfp4"), x);
  for (double v : nv.values) CHECK(std::isnan(v));
  std::vector<double> zeros(20, 0.0);
  const BlockScaledResult z = Quantize(ParseBlockScaledFormat("nvfp4"), zeros);
  CHECK(z.encode_scale == 1.0);
  for (double v : z.values) CHECK(v == 0.0);
}

TEST_CASE("block-scaled: NVFP4 equals TransformerEngine's recipe on every code", "[fast]") {
  const RefElement r = MakeRef(MxElement::kE2M1);
  int total = 0, mismatches = 0;
  for (const char* name : {"nvfp4", "nvfp4:ru", "nvfp4:4/6", "nvfp4:ru:4/6"}) {
    const BlockScaledFormat f = ParseBlockScaledFormat(name);
    const bool up = f.rule == BlockScaleRule::kUp;
    for (double A : {1.0, 6.0, 0x1.7p3, 1e-3, 3e-40, 2.5e5, 0x1p-140, 1e30}) {
      // Blocks whose maxima vary over 12 binades below the tensor max, each walking every e2m1
      // value and midpoint (scaled by that block's max / 6).
      std::vector<double> x;
      for (int b = 0; b < 24; ++b) {
        const double bm = A * std::ldexp(1.0 + (b % 5) * 0.1875, -(b / 2));
        x.push_back(b % 2 ? -bm : bm);
        for (int k = 1; k < 16; ++k) {
          const auto& v = r.pos[k % r.pos.size()];
          const double mid = k % 3 == 0 && k % r.pos.size() + 1 < r.pos.size()
                                 ? (v.d + r.pos[k % r.pos.size() + 1].d) / 2
                                 : v.d;
          x.push_back((k % 2 ? 1 : -1) * std::min(bm, mid * bm / 6));
        }
      }
      x.resize(x.size() + 7, A / 3);  // a tail of 7
      const BlockScaledResult got = Quantize(f, x);
      const RefNv want = RefNvfp4(16, x, up, f.four_over_six);
      std::ostringstream what;
      what.precision(17);
      what << name << " tensor amax " << A;
      CHECK(got.tensor_scale == want.s_dec);
      const int bad = Compare(what.str(), x, got, want.r);
      CHECK(bad == 0);
      mismatches += bad;
      total += static_cast<int>(x.size());
    }
  }
  std::printf("block-scaled: NVFP4: %d values over 4 variants x 8 tensors, %d mismatches\n", total,
              mismatches);
}

TEST_CASE("block-scaled: 16x16 two-dimensional blocks", "[fast]") {
  const BlockScaledFormat f = ParseBlockScaledFormat("nvfp4:2d16");
  const std::size_t rows = 20, cols = 35;
  std::vector<double> x(rows * cols);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * i) * (1 + i % 7);
  const BlockScaledResult q = Quantize(f, x, rows, cols);
  CHECK(q.block_rows == 2);
  CHECK(q.block_cols == 3);
  // Block (1, 2) holds rows 16..19, cols 32..34; its scale comes from those 12 values alone.
  CHECK(q.Block(17 * cols + 33) == 1 * 3 + 2);
  CHECK(q.Block(15 * cols + 15) == 0);
  std::vector<double> tile;
  for (std::size_t r0 = 16; r0 < 20; ++r0)
    for (std::size_t c0 = 32; c0 < 35; ++c0) tile.push_back(x[r0 * cols + c0]);
  double amax = 0, tmax = 0;
  for (double v : x) amax = std::max(amax, std::fabs(v));
  for (double v : tile) tmax = std::max(tmax, std::fabs(v));
  const float s_enc = 2688.0f / static_cast<float>(amax);
  const float t = (static_cast<float>(tmax) / 6.0f) * s_enc;
  CHECK(q.scales[5] == RefUE4M3(t, false));
  CHECK_THROWS_AS(Quantize(f, x), std::invalid_argument);
}

TEST_CASE("block-scaled: names parse, round-trip and reject bad text in one line", "[fast]") {
  for (const BlockScaledFormat& f : NamedBlockScaledFormats())
    CHECK(ParseBlockScaledFormat(f.name) == f);
  const std::map<std::string, std::string> canonical = {
      {"mx:e2m1:32:e8m0:floor", "mxfp4"},
      {"mx:e2m1:16:ue4m3:rn", "nvfp4"},
      {"nvfp4:rn", "nvfp4"},
      {"nvfp4:2d16:ru", "nvfp4:ru:2d16"},
      {"nvfp4:4/6", "nvfp4:4/6"},
      {"mxfp8e4m3:rceil", "mxfp8e4m3:rceil"},
      {"mx:e4m3:16:e8m0:even", "mx:e4m3:16:e8m0:even"},
      {"mxfp4:2d16", "mx:e2m1:16:e8m0:floor:2d16"},
  };
  for (const auto& [text, name] : canonical) {
    INFO(text);
    const BlockScaledFormat f = ParseBlockScaledFormat(text);
    CHECK(f.name == name);
    CHECK(ParseBlockScaledFormat(f.name) == f);
  }
  for (const char* bad :
       {"mxfp5", "mx:e2m1:32:e8m0", "mx:e9m9:32:e8m0:floor", "mx:e2m1:0:e8m0:floor",
        "mx:e2m1:32:e5m2:floor", "mx:e2m1:32:e8m0:rn", "nvfp4:floor", "mxfp4:4/6", "nvfp4:rn:ru",
        "nvfp4:2dx", "nvfp4:bogus", ""}) {
    INFO(bad);
    try {
      ParseBlockScaledFormat(bad);
      FAIL("accepted");
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      CHECK(msg.find('\n') == std::string::npos);
      CHECK(msg.find("block-scaled format '" + std::string(bad) + "'") == 0);
    }
  }
}

TEST_CASE("block-scaled: fp32 scales by DeepGEMM's amax rule", "[fast]") {
  // mx:e4m3:4:fp32:amax, every step in fp32: a = max(amax, 1e-4), s = a / 448, elements
  // e4m3(x * (448 / a)). Block 0 (3, -1, 0.1, 0): c = fp32(448 / 3) = 149.33..., so 3 c rounds
  // to 448, -c to -144 (e4m3 steps of 16 in [128, 256)), 0.1 c = 14.93... to 15, 0 to 0.
  // Block 1 (5e-5, 0, 0, 0): amax below 1e-4 is clamped, so 5e-5 maps to 224, not 448.
  // Block 2 (NaN, 1, 0, 0): scale NaN, every value NaN. Block 3: zeros (scale 1e-4 / 448).
  const BlockScaledFormat f = ParseBlockScaledFormat("mx:e4m3:4:fp32:amax");
  CHECK(f.name == "mx:e4m3:4:fp32:amax");
  CHECK(f.scale == BlockScaleFormat::kFp32);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> x = {3, -1, 0.1, 0, 5e-5, 0, 0, 0, nan, 1, 0, 0, 0, 0, 0, 0};
  const BlockScaledResult q = Quantize(f, x);
  REQUIRE(q.scales.size() == 4);
  const std::vector<double> want_el = {448, -144, 15, 0, 224, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (std::size_t i = 0; i < x.size(); ++i) {
    INFO("element " << i);
    CHECK(q.elements[i] == want_el[i]);
  }
  const float s0 = 3.0f / 448.0f, s1 = 1e-4f / 448.0f;
  CHECK(q.scales[0] == static_cast<double>(s0));
  CHECK(q.scales[1] == static_cast<double>(s1));
  CHECK(std::isnan(q.scales[2]));
  CHECK(q.scales[3] == static_cast<double>(s1));
  CHECK(q.values[1] == -144 * static_cast<double>(s0));  // exact: 4 + 24 significant bits
  CHECK(q.values[4] == 224 * static_cast<double>(s1));
  for (std::size_t i = 8; i < 12; ++i) CHECK(std::isnan(q.values[i]));
  CHECK(q.scale_codes[0] == 0);  // fp32 scales have no byte code
  CHECK(q.tensor_scale == 1);
  for (const char* bad :
       {"mx:e4m3:128:fp32:floor", "mx:e4m3:32:e8m0:amax", "nvfp4:amax", "mx:e4m3:128:fp64:amax"}) {
    INFO(bad);
    CHECK_THROWS_AS(ParseBlockScaledFormat(bad), std::invalid_argument);
  }
}

}  // namespace
}  // namespace carrier
