// core/mma.hpp: matrix-unit accumulation (tensor cores, matrix cores) as exact CPU arithmetic.
//
// A matrix instruction D = A B + C does not add its k products one IEEE rounding at a time.
// It adds a group of products and the accumulator in one *fused step*:
//   terms     t_0 = c (the accumulator), t_i = a_i b_i (exact products), i = 1..m
//   exponent  of a product: e_i = E(a_i) + E(b_i), the sum of the factors' exponents (not the
//             exponent of the normalised product, which may be one larger); of c: E(c);
//             E(x) = floor(log2 |x|) clamped below at the format's minimum normal exponent
//             (a subnormal keeps that exponent and a significand below 1); zero terms have none
//   align     e_max = max_i e_i; every term is cut to a multiple of q = 2^(e_max - F), F the
//             node's fractional bits: truncated toward zero (NVIDIA) or floored (AMD)
//   sum       the cut terms are added exactly (no rounding)
//   output    the exact sum is normalised and rounded once to the output format:
//             fp32 RZ (NVIDIA, 24 significant bits, subnormals kept, quantum 2^-149), e8m13 RZ
//             (NVIDIA FP8: 14 significant bits, fp32's exponent range, quantum 2^-139 below
//             2^-126), fp16 RNE (fp16-output instructions), fp32 RNE (AMD CDNA3)
//   overflow  a rounded result beyond the output's range is +-inf
//   zero      an exact-zero sum is +0 (whatever the signs of the zero terms), and so is a
//             nonzero sum that RZ or fp16 RNE rounds to zero; fp32 RNE keeps the sign of a
//             sum that underflows to zero (MMA-Sim: the integer truncation has no sign, the
//             conversion of the CDNA3 double does)
//   special   any NaN or infinite term: the result is the double sum of the products and c
//             (so NaN for NaN in, inf - inf, 0 * inf; the infinity otherwise), a quiet NaN for NaN
// CDNA3 (two_stage) differs: the products alone are aligned to their own e_max with F = 24 and
// truncated; that partial sum and c are then aligned to their common maximum exponent, the
// partial floored to 31 fractional bits and c floored to 24 fractional bits, added, and
// rounded to fp32 RNE.
//
// Where the numbers come from (each profile row below names its own): MMA-Sim (Xie, Wang,
// Yang, Yang, arXiv 2511.10909, 2025) and its reference implementation
// github.com/microsoft/MMA-Sim (mmasim/simulator/nv.py: `arch_accum_fractional_bits`,
// `is_split_k`, the FP8 F = 13 / e8m13 special case, WGMMASim; functions.py:
// `nv_fused_dot_add`, `fused_sum`, `amd_fused_dot_add`; amd.py: CDNA3 group size 8, two
// stages, RNE output), validated there bit for bit against the hardware. The Volta behaviour
// (truncation to 23 fractional bits after alignment, RZ output, two carry-out bits, the
// non-monotonic sum) was found first by Fasi, Higham, Mikaitis and Pranesh, "Numerical
// behavior of NVIDIA tensor cores", PeerJ Comput. Sci. 7:e330 (2021), with the test suite
// github.com/north-numerical-computing/tensor-cores-numerical-behavior (section D of
// tc_test_numerics-V100.cu). None of it is confirmed on a GPU by this project yet.
//
// Exactness of this implementation: a product of two inputs of at most 24 significant bits
// is exact in double; a term scaled by 2^(F - e_max) is below 2^(F+2) <= 2^27 in magnitude, so
// its cut is an exact int64 and the sum of at most 33 of them is exact; the rounding to the
// output works on that exact value by bit masks (RZ) or one hardware rounding of an exact
// double (RNE). Tests compare it with an independent big-integer implementation of the rule.
//
// Inputs must be values of the node's input format (fp16, bf16, tf32, fp8 e4m3): the
// exponent clamp depends on the format, and hardware accepts nothing else. MmaInputAccepts
// says which storage dtypes qualify; MmaFusedStep throws MmaInputError on any other value.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace carrier {

class MmaInputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class MmaInput : std::uint8_t { kFp16, kBf16, kTf32, kFp8E4m3 };
enum class MmaAlign : std::uint8_t { kTruncate, kFloor };
enum class MmaOutput : std::uint8_t { kFp32Rz, kE8m13Rz, kFp16Rne, kFp32Rne };

// The arithmetic of one fused step: what a MergeTree's fused node carries.
struct MmaNode {
  MmaInput input = MmaInput::kFp16;
  std::uint32_t terms = 4;      // products per fused step (the instruction's k / split)
  std::int32_t frac_bits = 23;  // F
  MmaAlign align = MmaAlign::kTruncate;
  MmaOutput output = MmaOutput::kFp32Rz;
  bool two_stage = false;  // CDNA3: products first, then with c (floored to 31 / 24 bits)
  friend bool operator==(const MmaNode&, const MmaNode&) = default;
};

inline constexpr std::uint32_t kMmaMaxTerms = 32;

// One architecture and instruction. k products per instruction, run as `split` fused steps of
// k / split products each (Ampere and Ada split their k16 f16/bf16, k8 tf32 and k32 fp8
// instructions into two halves: MMA-Sim nv.py `is_split_k`).
struct MmaProfile {
  std::string_view name;
  std::string_view instruction;
  std::uint32_t k;
  std::uint32_t split;
  MmaNode node;
  std::string_view source;
};

// clang-format off
inline constexpr std::array<MmaProfile, 15> kMmaProfiles{{
  {"volta", "mma.m8n8k4.f32.f16.f16.f32 (sm_70)", 4, 1,
   {MmaInput::kFp16, 4, 23, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false},
   "F=23: MMA-Sim nv.py arch_accum_fractional_bits[Volta]; Fasi et al. 2021 (V100: no guard "
   "bits, RZ, 2 carry-out bits, non-monotonic); k=4: MMA-Sim isa/nv_mma.py m8n8k4"},
  {"volta-f16", "mma.m8n8k4.f16.f16.f16.f16 (sm_70)", 4, 1,
   {MmaInput::kFp16, 4, 23, MmaAlign::kTruncate, MmaOutput::kFp16Rne, false},
   "as volta; fp16 output RNE: MMA-Sim functions.py nv_fused_dot_add (f16); Fasi et al. 2021 "
   "test C (accumulator rounded to nearest in binary16 mode)"},
  {"turing", "mma.m16n8k8.f32.f16.f16.f32 (sm_75)", 8, 1,
   {MmaInput::kFp16, 8, 24, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false},
   "F=24: MMA-Sim nv.py arch_accum_fractional_bits[Turing]; k8 not split (is_split_k)"},
  {"ampere", "mma.m16n8k16.f32.f16.f16.f32 (sm_80)", 16, 2,
   {MmaInput::kFp16, 8, 24, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false},
   "F=24: MMA-Sim nv.py arch_accum_fractional_bits[Ampere]; k16 as two fused k8 halves: "
   "is_split_k"},
  {"ampere-bf16", "mma.m16n8k16.f32.bf16.bf16.f32 (sm_80)", 16, 2,
   {MmaInput::kBf16, 8, 24, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false},
   "as ampere (MMA-Sim nv.py, is_split_k lists the bf16 k16 qualifier)"},
  {"ampere-tf32", "mma.m16n8k8.f32.tf32.tf32.f32 (sm_80)", 8, 2,
   {MmaInput::kTf32, 4, 24, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false},
   "as ampere; tf32 k8 as two k4 halves (is_split_k); inputs must already be tf32 values"},
  {"ada", "mma.m16n8k16.f32.f16.f16.f32 (sm_89)", 16, 2,
   {MmaInput::kFp16, 8, 24, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false},
   "F=24: MMA-Sim nv.py arch_accum_fractional_bits[Ada Lovelace]; split as ampere"},
  {"ada-fp8", "mma.m16n8k32.f32.e4m3.e4m3.f32 (sm_89)", 32, 2,
   {MmaInput::kFp8E4m3, 16, 13, MmaAlign::kTruncate, MmaOutput::kE8m13Rz, false},
   "F=13 and output f32_e8m13: MMA-Sim nv.py MMASim (Ada Lovelace fp8 special case); k32 as "
   "two k16 halves (is_split_k)"},
  {"hopper", "wgmma.m64nNk16.f32.f16.f16 (sm_90a)", 16, 1,
   {MmaInput::kFp16, 16, 25, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false},
   "F=25: MMA-Sim nv.py WGMMASim (n_accum_fractional_bits = 25); k16 one fused step"},
  {"hopper-bf16", "wgmma.m64nNk16.f32.bf16.bf16 (sm_90a)", 16, 1,
   {MmaInput::kBf16, 16, 25, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false},
   "as hopper (MMA-Sim nv.py WGMMASim)"},
  {"hopper-fp8", "wgmma.m64nNk32.f32.e4m3.e4m3 (sm_90a)", 32, 1,
   {MmaInput::kFp8E4m3, 32, 13, MmaAlign::kTruncate, MmaOutput::kE8m13Rz, false},
   "F=13 and output f32_e8m13: MMA-Sim nv.py WGMMASim fp8 case; k32 one fused step "
   "(isa/nv_wgmma.py); DeepSeek-V3 (arXiv 2412.19437, sec. 3.3) promotes for this reason"},
  {"hopper-tf32", "mma.m16n8k8.f32.tf32.tf32.f32 (sm_90)", 8, 2,
   {MmaInput::kTf32, 4, 25, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false},
   "measured on an H200 (kernels/cuda/results: mma.sync through WMMA, random A, B and fp32 C, "
   "every sampled output): k8 as two k4 halves, F = 25; cuBLAS's TF32 GEMM is not this"},
  {"blackwell", "tcgen05.mma kind::f16 k16 (sm_100a)", 16, 1,
   {MmaInput::kFp16, 16, 25, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false},
   "F=25: MMA-Sim nv.py arch_accum_fractional_bits[Blackwell], TCGen05MMASim"},
  {"cdna3", "v_mfma_f32_32x32x8_f16 (gfx942)", 8, 1,
   {MmaInput::kFp16, 8, 24, MmaAlign::kFloor, MmaOutput::kFp32Rne, true},
   "MMA-Sim amd.py MFMASim (CDNA3 f16: group of min(8, k), two stages) and functions.py "
   "amd_fused_dot_add: products truncated at F=24, then floored to 31 / c to 24 bits, RNE"},
  {"cdna3-bf16", "v_mfma_f32_32x32x8_bf16 (gfx942)", 8, 1,
   {MmaInput::kBf16, 8, 24, MmaAlign::kFloor, MmaOutput::kFp32Rne, true},
   "as cdna3 (MMA-Sim amd.py: the bf16 CDNA3 path is the f16 one)"},
}};
// clang-format on

inline const MmaProfile* FindMmaProfile(std::string_view name) {
  for (const MmaProfile& p : kMmaProfiles)
    if (p.name == name) return &p;
  return nullptr;
}

inline std::string MmaProfileNames() {
  std::string out;
  for (const MmaProfile& p : kMmaProfiles) out += (out.empty() ? "" : " ") + std::string(p.name);
  return out;
}

inline std::string_view MmaInputName(MmaInput f) {
  switch (f) {
    case MmaInput::kFp16:
      return "fp16";
    case MmaInput::kBf16:
      return "bf16";
    case MmaInput::kTf32:
      return "tf32";
    case MmaInput::kFp8E4m3:
      return "fp8e4m3";
  }
  return "?";
}

inline std::string_view MmaOutputName(MmaOutput o) {
  switch (o) {
    case MmaOutput::kFp32Rz:
      return "fp32-rz";
    case MmaOutput::kE8m13Rz:
      return "e8m13-rz";
    case MmaOutput::kFp16Rne:
      return "fp16-rne";
    case MmaOutput::kFp32Rne:
      return "fp32-rne";
  }
  return "?";
}

// Whether every value of storage dtype `dtype` (carrier's dtype names) is a value of the
// node's input format: fp16 and bf16 are tf32 values; fp8 e4m3 only for the fp8 nodes.
inline bool MmaInputAccepts(MmaInput f, std::string_view dtype) {
  switch (f) {
    case MmaInput::kFp16:
      return dtype == "fp16";
    case MmaInput::kBf16:
      return dtype == "bf16";
    case MmaInput::kTf32:
      return dtype == "tf32" || dtype == "fp16" || dtype == "bf16";
    case MmaInput::kFp8E4m3:
      return dtype == "fp8e4m3";
  }
  return false;
}

// First-order error of one fused step relative to the sum of its terms' magnitudes: each of
// the terms + 1 cut terms loses less than 2^(e_max - F) <= 2^-F max|t| (for normal inputs),
// and the output rounding at most one unit (RZ) or half a unit (RNE) of its last place.
inline double MmaStepErrorCoefficient(const MmaNode& n) {
  const double cut = static_cast<double>(n.terms + 1) * std::ldexp(1.0, -n.frac_bits);
  switch (n.output) {
    case MmaOutput::kFp32Rz:
      return cut + std::ldexp(1.0, -23);
    case MmaOutput::kE8m13Rz:
      return cut + std::ldexp(1.0, -13);
    case MmaOutput::kFp16Rne:
      return cut + std::ldexp(1.0, -11);
    case MmaOutput::kFp32Rne:
      return cut + std::ldexp(1.0, -24);
  }
  return cut;
}

namespace mma_detail {

inline std::uint64_t Bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
inline double FromBits(std::uint64_t b) {
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}
// 2^e for e in [-1022, 1023], exactly.
inline double Pow2(int e) { return FromBits(static_cast<std::uint64_t>(e + 1023) << 52); }
// floor(log2 |x|) of a nonzero finite normal double.
inline int Exponent(double x) { return static_cast<int>((Bits(x) >> 52) & 0x7ff) - 1023; }

struct InputFormat {
  int precision;  // significant bits, implicit bit included
  int emin;       // exponent of the smallest normal
  double max;     // largest finite value
};

inline InputFormat FormatOf(MmaInput f) {
  switch (f) {
    case MmaInput::kFp16:
      return {11, -14, 65504.0};
    case MmaInput::kBf16:
      return {8, -126, 0x1.fep127};
    case MmaInput::kTf32:
      return {11, -126, 0x1.ffcp127};
    case MmaInput::kFp8E4m3:
      return {4, -6, 448.0};
  }
  return {11, -14, 65504.0};
}

// Is finite nonzero v a value of format f? (Non-finite values pass: the special path.)
inline bool Fits(const InputFormat& f, double v) {
  if (v == 0 || !std::isfinite(v)) return true;
  const double a = std::fabs(v);
  if (a > f.max) return false;
  const int e = Exponent(a);  // every candidate is far above double's subnormals
  const int lsb = (e > f.emin ? e : f.emin) - (f.precision - 1);
  if (e < lsb) return false;  // below the smallest subnormal
  const int drop = 52 - (e - lsb);
  return (Bits(a) & ((std::uint64_t{1} << drop) - 1)) == 0;
}

inline constexpr int kNoExponent = std::numeric_limits<int>::min() / 4;

inline int ClampedExponent(double x, int emin) {
  const int e = Exponent(x);
  return e > emin ? e : emin;
}

inline std::int64_t Cut(double scaled, MmaAlign align) {
  std::int64_t t = static_cast<std::int64_t>(scaled);  // toward zero
  if (align == MmaAlign::kFloor && scaled < static_cast<double>(t)) --t;
  return t;
}

// Round toward zero to `frac` fractional bits with fp32's exponent range (emin -126); results
// at or above 2^128 overflow to inf.
inline double RoundTowardZero(double v, int frac) {
  if (v == 0) return 0.0;
  const double a = std::fabs(v);
  double r;
  if (a >= 0x1p-126) {
    r = FromBits(Bits(v) & ~((std::uint64_t{1} << (52 - frac)) - 1));
  } else {
    const int shift = 126 + frac;  // quantum 2^-(126 + frac)
    r = static_cast<double>(static_cast<std::int64_t>(v * Pow2(shift))) * Pow2(-shift);
  }
  if (std::fabs(r) >= 0x1p128) return std::copysign(std::numeric_limits<double>::infinity(), v);
  return r;
}

inline double RoundFp16Nearest(double v) {
  if (v == 0) return 0.0;
  const int e = ClampedExponent(std::fabs(v), -14);
  const double r = std::nearbyint(v * Pow2(10 - e)) * Pow2(e - 10);
  if (r == 0) return 0.0;  // MMA-Sim rounds to an integer, which has no sign
  if (std::fabs(r) > 65504.0) return std::copysign(std::numeric_limits<double>::infinity(), v);
  return r;
}

inline double RoundOutput(MmaOutput o, double v) {
  switch (o) {
    case MmaOutput::kFp32Rz:
      return RoundTowardZero(v, 23);
    case MmaOutput::kE8m13Rz:
      return RoundTowardZero(v, 13);
    case MmaOutput::kFp16Rne:
      return RoundFp16Nearest(v);
    case MmaOutput::kFp32Rne:
      return static_cast<double>(static_cast<float>(v));
  }
  return v;
}

inline int OutputEmin(MmaOutput o) { return o == MmaOutput::kFp16Rne ? -14 : -126; }

[[noreturn]] inline void BadInput(MmaInput f, double v) {
  throw MmaInputError("mma: input " + std::to_string(v) + " is not a " +
                      std::string(MmaInputName(f)) + " value (the instruction's input format)");
}

// The fast path of MmaFusedStep for float factors (truncating or CDNA3 nodes): every factor a
// normal value of the input format (one range check and one mask on its float bits, so the
// exponent clamp is a no-op), c finite. Returns false, computing nothing, when any of that
// fails (zeros, subnormals, specials, values outside the format): the generic path decides.
// M > 0 fixes the group size at compile time (the loops unroll); M = 0 takes m as given.
struct FastFormat {
  std::int32_t lo, span, mask;  // float bits of 2^emin; largest value's bits - lo; low-bit mask
};
inline FastFormat FastFormatOf(MmaInput f) {
  switch (f) {
    case MmaInput::kFp16:
      return {113 << 23, 0x477fe000 - (113 << 23), 0x1fff};
    case MmaInput::kBf16:
      return {1 << 23, 0x7f7f0000 - (1 << 23), 0xffff};
    case MmaInput::kTf32:
      return {1 << 23, 0x7f7fe000 - (1 << 23), 0x1fff};
    case MmaInput::kFp8E4m3:
      return {121 << 23, 0x43e00000 - (121 << 23), 0xfffff};
  }
  return {113 << 23, 0x477fe000 - (113 << 23), 0x1fff};
}

template <std::size_t M, class P>
bool FastStep(const MmaNode& node, const FastFormat& ff, double c, const P* p,
              std::size_t m_runtime, double& out) {
  const std::size_t m = M > 0 ? M : m_runtime;
  static_assert(sizeof(P) == 2 * sizeof(float), "FastStep reads the pairs as 2m floats");
  const std::int32_t lo = ff.lo, span = ff.span, mask = ff.mask;
  // Simple loops over plain arrays, so that the compiler can vectorise them.
  std::int32_t u[2 * kMmaMaxTerms];
  std::memcpy(u, p, m * sizeof(P));
  std::int32_t bad = 0;
  for (std::size_t i = 0; i < 2 * m; ++i) {
    u[i] &= 0x7fffffff;
    const std::int32_t d = u[i] - lo;
    bad |= (u[i] & mask) | ((d | (span - d)) >> 31);  // a low bit set, or out of [lo, lo+span]
  }
  if (bad != 0 || !std::isfinite(c)) return false;
  std::int32_t fmax = 0;  // the largest sum of the factors' biased exponent fields
  for (std::size_t i = 0; i < m; ++i) {
    const std::int32_t f = (u[2 * i] >> 23) + (u[2 * i + 1] >> 23);
    fmax = f > fmax ? f : fmax;
  }
  int emax = fmax - 254;
  const int ec = c != 0 ? ClampedExponent(c, OutputEmin(node.output)) : kNoExponent;
  if (node.two_stage) {  // CDNA3, as the generic path: products truncated, then both floored
    const double scale_p = Pow2(node.frac_bits - emax);
    std::int64_t partial = 0;
    for (std::size_t i = 0; i < m; ++i)
      partial += static_cast<std::int64_t>(static_cast<double>(p[i].a) *
                                           static_cast<double>(p[i].b) * scale_p);
    const int e = ec > emax ? ec : emax;
    std::int64_t total =
        partial != 0 ? Cut(static_cast<double>(partial) * Pow2(emax - node.frac_bits + 31 - e),
                           MmaAlign::kFloor)
                     : 0;
    if (c != 0) total += Cut(c * Pow2(24 - e), MmaAlign::kFloor) << 7;
    out = RoundOutput(node.output, static_cast<double>(total) * Pow2(e - 31));
    return true;
  }
  if (c != 0) emax = ec > emax ? ec : emax;
  // Each cut is an int64 (below 2^(F+2) in magnitude), so the integer sum is exact.
  const int f = node.frac_bits;
  const double scale = Pow2(f - emax);
  std::int64_t sum = c != 0 ? static_cast<std::int64_t>(c * scale) : 0;
  for (std::size_t i = 0; i < m; ++i)
    sum += static_cast<std::int64_t>(static_cast<double>(p[i].a) * static_cast<double>(p[i].b) *
                                     scale);
  out = RoundOutput(node.output, static_cast<double>(sum) * Pow2(emax - f));
  return true;
}

// Full groups of M from p[0] while the fast path holds; c is updated. Returns the inputs done.
template <std::size_t M, class P>
std::size_t FastRun(const MmaNode& node, double& c, const P* p, std::size_t count) {
  const FastFormat ff = FastFormatOf(node.input);
  std::size_t j = 0;
  double out;
  for (; j + M <= count && FastStep<M>(node, ff, c, p + j, M, out); j += M) c = out;
  return j;
}

}  // namespace mma_detail

// One fused step: c plus the m products p[0].a*p[0].b, p[s].a*p[s].b, ... (s = stride), by the
// node's rule (contract above). c must be a value of the node's output format (what a previous
// step or an fp32 accumulator holds); m <= kMmaMaxTerms. P is any pair type with members a, b
// convertible to double exactly (ValuePair<float>, ValuePair<double>).
template <class P>
double MmaFusedStep(const MmaNode& node, double c, const P* p, std::size_t m,
                    std::size_t stride = 1) {
  using namespace mma_detail;
  if constexpr (std::is_same_v<std::remove_cv_t<decltype(p->a)>, float> &&
                std::is_same_v<std::remove_cv_t<decltype(p->b)>, float>) {
    double out;
    if ((node.two_stage || node.align == MmaAlign::kTruncate) && stride == 1 &&
        FastStep<0>(node, FastFormatOf(node.input), c, p, m, out))
      return out;
  }
  const InputFormat fin = FormatOf(node.input);
  double prod[kMmaMaxTerms];
  int ex[kMmaMaxTerms];
  bool special = !std::isfinite(c);
  int emax_p = kNoExponent;
  for (std::size_t i = 0; i < m; ++i) {
    const double a = static_cast<double>(p[i * stride].a);
    const double b = static_cast<double>(p[i * stride].b);
    if (!Fits(fin, a)) BadInput(node.input, a);
    if (!Fits(fin, b)) BadInput(node.input, b);
    prod[i] = a * b;
    if (!std::isfinite(a) || !std::isfinite(b)) {
      special = true;
      ex[i] = kNoExponent;
      continue;
    }
    if (a == 0 || b == 0) {
      ex[i] = kNoExponent;
      continue;
    }
    ex[i] = ClampedExponent(a, fin.emin) + ClampedExponent(b, fin.emin);
    if (ex[i] > emax_p) emax_p = ex[i];
  }
  if (special) {
    double s = 0;
    for (std::size_t i = 0; i < m; ++i) s += prod[i];
    s += c;
    if (std::isnan(s)) return std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  const int ec = c != 0 ? ClampedExponent(c, OutputEmin(node.output)) : kNoExponent;
  if (!node.two_stage) {
    const int emax = ec > emax_p ? ec : emax_p;
    if (emax == kNoExponent) return 0.0;
    const int f = node.frac_bits;
    const double scale = Pow2(f - emax);
    std::int64_t sum = c != 0 ? Cut(c * scale, node.align) : 0;
    for (std::size_t i = 0; i < m; ++i)
      if (ex[i] != kNoExponent) sum += Cut(prod[i] * scale, node.align);
    return RoundOutput(node.output, static_cast<double>(sum) * Pow2(emax - f));
  }
  // CDNA3: stage 1, the products alone (truncated at F); stage 2, with c (floored).
  std::int64_t partial = 0;
  if (emax_p != kNoExponent) {
    const double scale = Pow2(node.frac_bits - emax_p);
    for (std::size_t i = 0; i < m; ++i)
      if (ex[i] != kNoExponent) partial += Cut(prod[i] * scale, MmaAlign::kTruncate);
  }
  const int emax = ec > emax_p ? ec : emax_p;
  if (emax == kNoExponent) return 0.0;
  constexpr int kPartialBits = 31, kAccBits = 24;
  std::int64_t total = 0;  // in units of 2^(emax - 31)
  if (partial != 0)
    total += Cut(static_cast<double>(partial) * Pow2(emax_p - node.frac_bits + kPartialBits - emax),
                 MmaAlign::kFloor);
  if (c != 0)
    total += Cut(c * Pow2(kAccBits - emax), MmaAlign::kFloor) << (kPartialBits - kAccBits);
  return RoundOutput(node.output, static_cast<double>(total) * Pow2(emax - kPartialBits));
}

// A chain of fused steps from c: the count products p[0], p[stride], ... in groups of
// node.terms (the last group may be shorter), each group one MmaFusedStep on the running
// value. Equal to those steps one by one; faster, since full groups of float pairs take an
// unrolled path and the running value stays a double between steps.
template <class P>
double MmaFusedChain(const MmaNode& node, double c, const P* p, std::size_t count,
                     std::size_t stride = 1) {
  using namespace mma_detail;
  const std::size_t g = node.terms;
  std::size_t j = 0;
  if constexpr (std::is_same_v<std::remove_cv_t<decltype(p->a)>, float> &&
                std::is_same_v<std::remove_cv_t<decltype(p->b)>, float>) {
    if ((node.two_stage || node.align == MmaAlign::kTruncate) && stride == 1) {
      switch (g) {  // the profiles' group sizes
        case 4:
          j = FastRun<4>(node, c, p, count);
          break;
        case 8:
          j = FastRun<8>(node, c, p, count);
          break;
        case 16:
          j = FastRun<16>(node, c, p, count);
          break;
        case 32:
          j = FastRun<32>(node, c, p, count);
          break;
        default:
          break;
      }
    }
  }
  for (; j < count; j += g)
    c = MmaFusedStep(node, c, p + j * stride, count - j < g ? count - j : g, stride);
  return c;
}

}  // namespace carrier
