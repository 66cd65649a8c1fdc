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
// Blackwell's block-scaled instructions (tcgen05.mma kind::mxf8f6f4, mxf4, mxf4nvf4) take one
// scale per block of elements of a and of b (E8M0: a power of two 2^-127..2^127, or UE4M3: an
// e4m3 value whose sign is ignored; NaN either way gives NaN):
//   mxf8      (block 32 = the instruction's k): as above with every product's exponent raised
//             by the scale pair's exponents e(sa) + e(sb) and its value multiplied by sa sb;
//             a zero c takes part with exponent -126 (fp32's minimum)
//   group     (mxf4, nvf4: MmaNode::group = 16) each group of 16 products is summed exactly;
//             the group's term is that sum times the significands of its two scales, with
//             exponent e(sa) + e(sb) whatever the sum's magnitude (zero included: the exponent
//             comes from the scales); c takes part with exponent E(c) (zero: -126); the terms
//             are aligned to their largest exponent, truncated to F = 35 fractional bits, added
//             exactly and rounded to fp32 RZ. A scale's exponent and significand are those of
//             its value (UE4M3 subnormals: exponent -6; a zero scale: exponent -126).
// MmaFusedStep runs a group node with unit scales (exponent 0, significand 1); MmaScaledStep
// and MmaScaledChain apply a profile's scales.
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
// Block-scaled nodes (mxf4, nvf4): the group sums (16 fp4 products, multiples of 2^-2, at most
// 576) times two scale significands (multiples of 2^-3 below 2) are exact doubles below 2^12;
// scaled by 2^(35 + e - e_max) they are below 2^47, and the five cut terms sum below 2^50.
//
// Inputs must be values of the node's input format (fp16, bf16, tf32, fp8 e4m3, e5m2, e2m1): the
// exponent clamp depends on the format, and hardware accepts nothing else. MmaInputAccepts
// says which storage dtypes qualify; MmaFusedStep throws MmaInputError on any other value.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace carrier {

class MmaInputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class MmaInput : std::uint8_t { kFp16, kBf16, kTf32, kFp8E4m3, kFp8E5m2, kFp4E2m1 };
inline constexpr int kMmaInputCount = 6;
enum class MmaAlign : std::uint8_t { kTruncate, kFloor };
enum class MmaOutput : std::uint8_t { kFp32Rz, kE8m13Rz, kFp16Rne, kFp32Rne };
// A block-scaled profile's scale format: none, E8M0 (MX: a power of two) or UE4M3 (NVFP4).
enum class MmaScale : std::uint8_t { kNone, kE8m0, kUe4m3 };

// The arithmetic of one fused step: what a MergeTree's fused node carries.
struct MmaNode {
  MmaInput input = MmaInput::kFp16;
  std::uint32_t terms = 4;      // products per fused step (the instruction's k / split)
  std::int32_t frac_bits = 23;  // F
  MmaAlign align = MmaAlign::kTruncate;
  MmaOutput output = MmaOutput::kFp32Rz;
  bool two_stage = false;   // CDNA3: products first, then with c (floored to 31 / 24 bits)
  std::uint32_t group = 0;  // products summed exactly into one term (mxf4/nvf4: 16; 0 = none)
  friend bool operator==(const MmaNode&, const MmaNode&) = default;
};

inline constexpr std::uint32_t kMmaMaxTerms = 64;

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
  MmaScale scale = MmaScale::kNone;  // block-scaled instructions: the scale format
  std::uint32_t scale_block = 0;     // elements per scale (32 MX, 16 NVFP4)
};

// clang-format off
inline constexpr std::array<MmaProfile, 21> kMmaProfiles{{
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
  {"blackwell-bf16", "tcgen05.mma kind::f16 k16 bf16 (sm_100a)", 16, 1,
   {MmaInput::kBf16, 16, 25, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false},
   "as blackwell with bf16 inputs: MMA-Sim simulator/nv_ptx.py tcgen05mma (one F = 25 for "
   "kind::f16); kernel validated there: kernels/nv_blackwell.py f16 m64n8k16 f32 bf16"},
  {"blackwell-f8f6f4", "tcgen05.mma kind::f8f6f4 k32 e4m3 (sm_100a)", 32, 1,
   {MmaInput::kFp8E4m3, 32, 25, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false},
   "F=25 (not Hopper's 13, and fp32 output, not e8m13): MMA-Sim simulator/nv_ptx.py tcgen05mma "
   "(@c785138); k32 one fused step: isa/nv_ptx/nv_tcgen05mma.py; kernel validated there: "
   "kernels/nv_blackwell.py f8f6f4 m64n8k32 e4m3 (@973543c)"},
  {"blackwell-f8f6f4-e5m2", "tcgen05.mma kind::f8f6f4 k32 e5m2 (sm_100a)", 32, 1,
   {MmaInput::kFp8E5m2, 32, 25, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false},
   "as blackwell-f8f6f4 with e5m2 elements (exponent clamp -14): MMA-Sim kernels/nv_blackwell.py "
   "f8f6f4 m64n8k32 e5m2"},
  {"blackwell-mxf8", "tcgen05.mma kind::mxf8f6f4 block32 e4m3 ue8m0 (sm_100a)", 32, 1,
   {MmaInput::kFp8E4m3, 32, 25, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false},
   "F=25 for k32: MMA-Sim simulator/nv_ptx.py tcgen05mma_block_scale; the two E8M0 exponents "
   "added to every product's exponent inside the one fused sum: arithmetic.py fused_dot_add; "
   "block32, one scale pair per k32: isa/nv_ptx/nv_tcgen05mma.py",
   MmaScale::kE8m0, 32},
  {"blackwell-mxf4", "tcgen05.mma kind::mxf4 block32 e2m1 ue8m0 (sm_100a)", 64, 1,
   {MmaInput::kFp4E2m1, 64, 35, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false, 16},
   "F=35 for k64: MMA-Sim simulator/nv_ptx.py tcgen05mma_block_scale; groups of 16 summed "
   "exactly, times the scale pair, then one fused sum, fp32 RZ: arithmetic.py "
   "nv_fused_dot_add_with_block_scale; kernel: kernels/nv_blackwell.py mxf4 block32 ue8m0",
   MmaScale::kE8m0, 32},
  {"blackwell-nvf4", "tcgen05.mma kind::mxf4nvf4 block16 e2m1 ue4m3 (sm_100a)", 64, 1,
   {MmaInput::kFp4E2m1, 64, 35, MmaAlign::kTruncate, MmaOutput::kFp32Rz, false, 16},
   "as blackwell-mxf4 with a UE4M3 scale per 16 (sign ignored: nv_fused_dot_add_with_block_scale);"
   " kernel: kernels/nv_blackwell.py mxf4nvf4 block16 ue4m3; NVFP4's fp32 tensor scale is "
   "applied outside the unit",
   MmaScale::kUe4m3, 16},
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
    case MmaInput::kFp8E5m2:
      return "fp8e5m2";
    case MmaInput::kFp4E2m1:
      return "fp4e2m1";
  }
  return "?";
}

inline std::string_view MmaScaleName(MmaScale s) {
  switch (s) {
    case MmaScale::kNone:
      return "none";
    case MmaScale::kE8m0:
      return "e8m0";
    case MmaScale::kUe4m3:
      return "ue4m3";
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

// The storage dtypes that are e2m1 (carrier has no named fp4 dtype: a custom format with
// 2 significant bits, exponents 0..2, subnormals and no infinity, saturating or not).
inline constexpr std::array<std::string_view, 2> kMmaE2m1Dtypes{
    "custom:p=2,emin=0,emax=2,inf=0", "custom:p=2,emin=0,emax=2,inf=0,saturate=1"};

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
    case MmaInput::kFp8E5m2:
      return dtype == "fp8e5m2";
    case MmaInput::kFp4E2m1:
      return dtype == kMmaE2m1Dtypes[0] || dtype == kMmaE2m1Dtypes[1];
  }
  return false;
}

// First-order error of one fused step relative to the sum of its terms' magnitudes: each of
// the terms + 1 cut terms loses less than 2^(e_max - F) <= 2^-F max|t| (for normal inputs),
// and the output rounding at most one unit (RZ) or half a unit (RNE) of its last place.
// A group node (mxf4, nvf4) with unit scales has (terms / group + 1) cut terms, each losing
// less than 2^(e_max - F) with 2^e_max <= max(|c|, 1) <= 4 sum|a_i b_i| (every nonzero e2m1
// product is at least 1/4; c is a sum of earlier products): (groups + 1) 2^(2-F). Arbitrary
// scales have no such bound (a zero group with a large scale cuts c; contract above).
inline double MmaStepErrorCoefficient(const MmaNode& n) {
  const double cut = n.group > 0 ? static_cast<double>((n.terms + n.group - 1) / n.group + 1) *
                                       std::ldexp(1.0, 2 - n.frac_bits)
                                 : static_cast<double>(n.terms + 1) * std::ldexp(1.0, -n.frac_bits);
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
    case MmaInput::kFp8E5m2:
      return {3, -14, 57344.0};
    case MmaInput::kFp4E2m1:
      return {2, 0, 6.0};
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
    case MmaInput::kFp8E5m2:
      return {113 << 23, 0x47600000 - (113 << 23), 0x1fffff};
    case MmaInput::kFp4E2m1:
      return {127 << 23, 0x40c00000 - (127 << 23), 0x3fffff};
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

// A group node's step (MmaNode::group > 0): c plus groups of `group` products, the group
// starting at product j scaled by sa_sig[j / block] sb_sig[j / block] 2^(sa_exp + sb_exp) of
// the same index (block a multiple of group). Values already checked; nan_scale: some scale
// was NaN.
template <class P>
double GroupStep(const MmaNode& node, double c, const P* p, std::size_t m, std::size_t stride,
                 const double* sa_sig, const int* sa_exp, const double* sb_sig, const int* sb_exp,
                 std::size_t block, bool nan_scale) {
  const InputFormat fin = FormatOf(node.input);
  const std::size_t g = node.group;
  double term[kMmaMaxTerms + 1];
  int ex[kMmaMaxTerms + 1];
  std::size_t n = 0;
  bool special = nan_scale || !std::isfinite(c);
  double plain = 0;  // the double sum of the products and c, for the special values
  for (std::size_t j = 0; j < m; j += g) {
    double sum = 0;  // exact: at most 16 products, each a multiple of 2^-2 up to 36
    for (std::size_t i = j; i < m && i < j + g; ++i) {
      const double a = static_cast<double>(p[i * stride].a);
      const double b = static_cast<double>(p[i * stride].b);
      if (!Fits(fin, a)) BadInput(node.input, a);
      if (!Fits(fin, b)) BadInput(node.input, b);
      if (!std::isfinite(a) || !std::isfinite(b)) special = true;
      sum += a * b;
    }
    const std::size_t s = j / block;
    term[n] = sum * sa_sig[s] * sb_sig[s];
    ex[n] = sa_exp[s] + sb_exp[s];
    plain += term[n] * Pow2(ex[n]);
    ++n;
  }
  if (special) {
    if (nan_scale || std::isnan(c)) return std::numeric_limits<double>::quiet_NaN();
    const double r = plain + c;
    return std::isnan(r) ? std::numeric_limits<double>::quiet_NaN() : r;
  }
  // c takes part with its exponent even when zero (-126, fp32's minimum: MMA-Sim).
  int emax = c != 0 ? ClampedExponent(c, OutputEmin(node.output)) : OutputEmin(node.output);
  for (std::size_t t = 0; t < n; ++t) emax = ex[t] > emax ? ex[t] : emax;
  const int f = node.frac_bits;
  std::int64_t total = c != 0 ? Cut(c * Pow2(f - emax), node.align) : 0;
  for (std::size_t t = 0; t < n; ++t)
    if (term[t] != 0) total += Cut(term[t] * Pow2(f + ex[t] - emax), node.align);
  return RoundOutput(node.output, static_cast<double>(total) * Pow2(emax - f));
}

// A scale's significand and exponent (contract above); false for a value the format lacks.
inline bool DecodeScale(MmaScale format, double v, double& sig, int& exp, bool& nan) {
  nan = std::isnan(v);
  if (nan) {
    sig = 1;
    exp = 0;
    return true;
  }
  if (format == MmaScale::kE8m0) {
    if (!(v > 0) || std::isinf(v)) return false;
    const int e = std::ilogb(v);
    if (e < -127 || e > 127 || v != std::ldexp(1.0, e)) return false;
    sig = 1;
    exp = e;
    return true;
  }
  if (format == MmaScale::kUe4m3) {
    const double a = std::fabs(v);  // the sign bit is ignored
    if (!Fits(FormatOf(MmaInput::kFp8E4m3), a) || std::isinf(a)) return false;
    if (a == 0) {
      sig = 0;
      exp = -126;
      return true;
    }
    exp = ClampedExponent(a, -6);
    sig = a * Pow2(-exp);
    return true;
  }
  return false;
}

[[noreturn]] inline void BadScale(MmaScale f, double v) {
  throw MmaInputError("mma: block scale " + std::to_string(v) + " is not a " +
                      std::string(MmaScaleName(f)) + " value");
}

}  // namespace mma_detail

// One fused step: c plus the m products p[0].a*p[0].b, p[s].a*p[s].b, ... (s = stride), by the
// node's rule (contract above). c must be a value of the node's output format (what a previous
// step or an fp32 accumulator holds); m <= kMmaMaxTerms. P is any pair type with members a, b
// convertible to double exactly (ValuePair<float>, ValuePair<double>). A group node (mxf4,
// nvf4) runs with unit scales; scale_exp (mxf8: e(sa) + e(sb), in [-254, 254]) raises every
// product's exponent and multiplies it by 2^scale_exp.
template <class P>
double MmaFusedStep(const MmaNode& node, double c, const P* p, std::size_t m,
                    std::size_t stride = 1, int scale_exp = 0) {
  using namespace mma_detail;
  if (node.group > 0) {
    double sig[kMmaMaxTerms];
    int ex[kMmaMaxTerms];
    for (std::size_t i = 0; i < kMmaMaxTerms; ++i) sig[i] = 1, ex[i] = 0;
    return GroupStep(node, c, p, m, stride, sig, ex, sig, ex, node.group, false);
  }
  if constexpr (std::is_same_v<std::remove_cv_t<decltype(p->a)>, float> &&
                std::is_same_v<std::remove_cv_t<decltype(p->b)>, float>) {
    double out;
    if ((node.two_stage || node.align == MmaAlign::kTruncate) && stride == 1 && scale_exp == 0 &&
        FastStep<0>(node, FastFormatOf(node.input), c, p, m, out))
      return out;
  }
  const InputFormat fin = FormatOf(node.input);
  const double scale_factor = Pow2(scale_exp);
  double prod[kMmaMaxTerms];
  int ex[kMmaMaxTerms];
  bool special = !std::isfinite(c);
  int emax_p = kNoExponent;
  for (std::size_t i = 0; i < m; ++i) {
    const double a = static_cast<double>(p[i * stride].a);
    const double b = static_cast<double>(p[i * stride].b);
    if (!Fits(fin, a)) BadInput(node.input, a);
    if (!Fits(fin, b)) BadInput(node.input, b);
    prod[i] = a * b * scale_factor;  // exact: a power of two within double's range
    if (!std::isfinite(a) || !std::isfinite(b)) {
      special = true;
      ex[i] = kNoExponent;
      continue;
    }
    if (a == 0 || b == 0) {
      ex[i] = kNoExponent;
      continue;
    }
    ex[i] = ClampedExponent(a, fin.emin) + ClampedExponent(b, fin.emin) + scale_exp;
    if (ex[i] > emax_p) emax_p = ex[i];
  }
  if (special) {
    double s = 0;
    for (std::size_t i = 0; i < m; ++i) s += prod[i];
    s += c;
    if (std::isnan(s)) return std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  // A scaled step's zero c takes part at fp32's minimum exponent (MMA-Sim fused_dot_add); an
  // unscaled one's has no exponent (with scale_exp = 0 the two agree on every fp8 node).
  const int ec = c != 0           ? ClampedExponent(c, OutputEmin(node.output))
                 : scale_exp != 0 ? OutputEmin(node.output)
                                  : kNoExponent;
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
    if ((node.two_stage || node.align == MmaAlign::kTruncate) && stride == 1 && node.group == 0) {
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

// Block-scaled products (Blackwell kind::mxf8f6f4, mxf4, mxf4nvf4): a and b hold element
// values (values of the profile's input format, unscaled), scale_a and scale_b one scale per
// profile.scale_block elements (the last block may be shorter; E8M0 values are powers of two,
// UE4M3 values e4m3 values, NaN allowed). The value each stands for is a_i scale_a[i / block]
// (NVFP4's per-tensor fp32 scale is applied outside the unit, by the caller). MmaScaledStep is
// one instruction (a.size() <= profile.k); MmaScaledChain runs the instructions along K from
// c, or with promote > 0 (a multiple of k) chunks of promote elements from zero whose fp32
// results are added in order onto c in fp32 (IEEE, round to nearest; c must then be an fp32
// value), as mma:PROFILE:promote:N does from c = 0.
// Throws MmaInputError on a value outside the formats, wrong span sizes or an unscaled profile.
namespace mma_detail {

struct ScaledPair {
  double a, b;
};

inline void CheckScaledSpans(const MmaProfile& pr, std::size_t n, std::size_t na, std::size_t nb) {
  if (pr.scale == MmaScale::kNone || pr.scale_block == 0)
    throw MmaInputError("mma: profile " + std::string(pr.name) + " takes no block scales");
  const std::size_t want = (n + pr.scale_block - 1) / pr.scale_block;
  if (na != want || nb != want)
    throw MmaInputError("mma: " + std::to_string(n) + " elements in blocks of " +
                        std::to_string(pr.scale_block) + " need " + std::to_string(want) +
                        " scales for a and for b, got " + std::to_string(na) + " and " +
                        std::to_string(nb));
}

// One instruction over elements [lo, lo + m) (lo a multiple of the block size).
inline double ScaledInstruction(const MmaProfile& pr, double c, const double* a, const double* b,
                                std::size_t m, const double* sa, const double* sb) {
  const MmaNode& node = pr.node;
  const std::size_t nscale = (m + pr.scale_block - 1) / pr.scale_block;
  double sig_a[kMmaMaxTerms], sig_b[kMmaMaxTerms];
  int exp_a[kMmaMaxTerms], exp_b[kMmaMaxTerms];
  bool nan = false;
  for (std::size_t s = 0; s < nscale; ++s) {
    bool na = false, nb = false;
    if (!DecodeScale(pr.scale, sa[s], sig_a[s], exp_a[s], na)) BadScale(pr.scale, sa[s]);
    if (!DecodeScale(pr.scale, sb[s], sig_b[s], exp_b[s], nb)) BadScale(pr.scale, sb[s]);
    nan = nan || na || nb;
  }
  ScaledPair p[kMmaMaxTerms];
  for (std::size_t i = 0; i < m; ++i) p[i] = {a[i], b[i]};
  if (node.group > 0)
    return GroupStep(node, c, p, m, 1, sig_a, exp_a, sig_b, exp_b, pr.scale_block, nan);
  // mxf8: one scale pair per instruction (the block is the instruction's k).
  if (nan) return std::numeric_limits<double>::quiet_NaN();
  return MmaFusedStep(node, c, p, m, 1, exp_a[0] + exp_b[0]);
}

}  // namespace mma_detail

inline double MmaScaledStep(const MmaProfile& profile, double c, std::span<const double> a,
                            std::span<const double> b, std::span<const double> scale_a,
                            std::span<const double> scale_b) {
  if (a.size() != b.size() || a.size() > profile.k)
    throw MmaInputError("mma: one " + std::string(profile.name) + " instruction takes at most " +
                        std::to_string(profile.k) + " pairs, got " + std::to_string(a.size()) +
                        " and " + std::to_string(b.size()));
  mma_detail::CheckScaledSpans(profile, a.size(), scale_a.size(), scale_b.size());
  return mma_detail::ScaledInstruction(profile, c, a.data(), b.data(), a.size(), scale_a.data(),
                                       scale_b.data());
}

inline double MmaScaledChain(const MmaProfile& profile, double c, std::span<const double> a,
                             std::span<const double> b, std::span<const double> scale_a,
                             std::span<const double> scale_b, std::uint64_t promote = 0) {
  if (a.size() != b.size())
    throw MmaInputError("mma: a has " + std::to_string(a.size()) + " elements, b " +
                        std::to_string(b.size()));
  mma_detail::CheckScaledSpans(profile, a.size(), scale_a.size(), scale_b.size());
  if (promote % profile.k != 0)
    throw MmaInputError(
        "mma: promote:" + std::to_string(promote) +
        " must be a multiple of the instruction's k = " + std::to_string(profile.k));
  const std::size_t n = a.size(), k = profile.k, blk = profile.scale_block;
  const std::size_t span = promote ? promote : (n ? n : 1);
  float total = static_cast<float>(c);
  for (std::size_t lo = 0; lo < n; lo += span) {
    double acc = promote ? 0.0 : c;
    const std::size_t hi = lo + span < n ? lo + span : n;
    for (std::size_t j = lo; j < hi; j += k) {
      const std::size_t m = hi - j < k ? hi - j : k;
      acc = mma_detail::ScaledInstruction(profile, acc, a.data() + j, b.data() + j, m,
                                          scale_a.data() + j / blk, scale_b.data() + j / blk);
    }
    if (!promote) return acc;
    total = total + static_cast<float>(acc);  // the fp32 accumulator promoted into
  }
  return promote ? static_cast<double>(total) : c;
}

}  // namespace carrier
