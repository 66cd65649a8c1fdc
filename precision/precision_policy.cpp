// precision/precision_policy.cpp: parsing, printing and presets of precision policies
// (precision_policy.hpp).
#include "precision/precision_policy.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/mma.hpp"
#include "precision/block_scaled.hpp"
#include "precision/dot_split.hpp"

namespace carrier {

namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

std::vector<std::string> RoleNames() {
  std::vector<std::string> v;
  for (PrecisionRole r : kAllPrecisionRoles) v.emplace_back(PrecisionRoleName(r));
  v.emplace_back("mma");
  v.emplace_back("pscale");
  v.emplace_back("rescale");
  v.emplace_back("recip");
  v.emplace_back("split");
  return v;
}

std::vector<std::string> PresetNames() {
  std::vector<std::string> v;
  for (const auto& p : PrecisionPresets()) v.push_back(p.name);
  return v;
}

[[noreturn]] void Bad(const std::string& what) {
  throw std::invalid_argument("precision: " + what);
}

RoleArithmetic ParseRole(std::string_view role, std::string_view value) {
  RoleArithmetic r;
  const auto at = value.find('@');
  const std::string_view fmt = value.substr(0, at);
  if (LooksBlockScaled(fmt)) {
    // Block-scaled storage (precision/block_scaled.hpp): the in role only; its rounding is the
    // format's own scale rule and round-to-nearest-even elements.
    if (role != "in")
      Bad(std::string(role) + "=" + std::string(value) +
          ": block-scaled formats are storage formats (in=" + std::string(fmt) + ")");
    if (at != std::string_view::npos)
      Bad(std::string(role) + "=" + std::string(value) +
          ": a block-scaled format rounds by its own rule (a :RULE suffix), not @ROUNDING");
    try {
      r.format = BlockScaledStorageFormat(ParseBlockScaledFormat(fmt));
    } catch (const std::invalid_argument& e) {
      Bad(std::string(role) + "=" + std::string(value) + ": " + e.what());
    }
    return r;
  }
  try {
    r.format = ParseFormat(fmt);
  } catch (const std::invalid_argument& e) {
    Bad(std::string(role) + "=" + std::string(value) + ": " + e.what() +
        (role == "in" ? "; or a block-scaled storage format (mxfp8e4m3 mxfp8e5m2 mxfp6e3m2 "
                        "mxfp6e2m3 mxfp4 mxint8 nvfp4 mx:ELEM:BLOCK:SCALEFMT:RULE)"
                      : ""));
  }
  if (at != std::string_view::npos) {
    try {
      r.rounding = ParseRounding(value.substr(at + 1));
    } catch (const std::invalid_argument& e) {
      Bad(std::string(role) + "=" + std::string(value) + ": " + e.what());
    }
  }
  return r;
}

double ParsePscale(std::string_view v) {
  double x = 0;
  std::string s(v);
  try {
    std::size_t used = 0;
    if (s.rfind("2^", 0) == 0) {
      const int k = std::stoi(s.substr(2), &used);
      if (used + 2 != s.size()) throw std::invalid_argument("trailing");
      x = std::ldexp(1.0, k);
    } else {
      x = std::stod(s, &used);
      if (used != s.size()) throw std::invalid_argument("trailing");
    }
  } catch (const std::exception&) {
    Bad("pscale=" + s + ": expected a power of two (e.g. 256 or 2^8)");
  }
  int e = 0;
  if (!(x > 0) || !std::isfinite(x) || std::frexp(x, &e) != 0.5 || e < -126 || e > 128) {
    Bad("pscale=" + s + ": expected a power of two between 2^-127 and 2^127");
  }
  return x;
}

double ParseRescale(std::string_view v) {
  const std::string s(v);
  double x = -1;
  try {
    std::size_t used = 0;
    x = std::stod(s, &used);
    if (used != s.size()) x = -1;
  } catch (const std::exception&) {
    x = -1;
  }
  if (!(x >= 0) || !std::isfinite(x))
    Bad("rescale=" + s + ": expected a threshold >= 0 in log2 units (e.g. 8)");
  return x;
}

std::string RoleText(const RoleArithmetic& r) {
  std::string t = r.format.name;
  if (r.rounding != Rounding::kNearestEven) t += "@" + std::string(RoundingName(r.rounding));
  return t;
}

std::string PscaleText(double x) {
  int e = 0;
  std::frexp(x, &e);
  return "2^" + std::to_string(e - 1);
}

}  // namespace

std::string_view PrecisionRoleName(PrecisionRole r) {
  switch (r) {
    case PrecisionRole::kIn:
      return "in";
    case PrecisionRole::kProd:
      return "prod";
    case PrecisionRole::kAcc:
      return "acc";
    case PrecisionRole::kCombine:
      return "combine";
    case PrecisionRole::kState:
      return "state";
    case PrecisionRole::kS:
      return "s";
    case PrecisionRole::kP:
      return "p";
    case PrecisionRole::kOut:
      break;
  }
  return "out";
}

const RoleArithmetic& PrecisionPolicy::Role(PrecisionRole r) const {
  return const_cast<PrecisionPolicy*>(this)->Role(r);
}

RoleArithmetic& PrecisionPolicy::Role(PrecisionRole r) {
  switch (r) {
    case PrecisionRole::kIn:
      return in;
    case PrecisionRole::kProd:
      return prod;
    case PrecisionRole::kAcc:
      return acc;
    case PrecisionRole::kCombine:
      return combine;
    case PrecisionRole::kState:
      return state;
    case PrecisionRole::kS:
      return s;
    case PrecisionRole::kP:
      return p;
    case PrecisionRole::kOut:
      break;
  }
  return out;
}

bool PrecisionPolicy::operator==(const PrecisionPolicy& o) const {
  for (PrecisionRole r : kAllPrecisionRoles) {
    if (!(Role(r) == o.Role(r))) return false;
  }
  return mma == o.mma && pscale == o.pscale && rescale == o.rescale && recip == o.recip &&
         split == o.split;
}

// Each preset reads its roles from the kernel source or the paper named beside it. Where a
// kernel's matrix products run on tensor cores, `mma` names the profile whose fused
// accumulation replaces the IEEE fp32 chain (prod/acc then describe only the non-matmul
// arithmetic).
const std::vector<PrecisionPreset>& PrecisionPresets() {
  static const std::vector<PrecisionPreset> presets = {
      {"fa2-ampere-bf16",
       "in=bf16,prod=fp32,acc=fp32,combine=fp32,state=fp32,s=fp32,p=bf16,out=bf16,mma=ampere-bf16",
       "FlashAttention-2 forward on sm80 (Dao 2023, arXiv 2307.08691, Algorithm 1; "
       "csrc/flash_attn/src/flash_fwd_kernel.h: Q, K, V in the bf16 element type, S and O "
       "accumulated in float (acc_s, acc_o) by SM80 mma.sync m16n8k16, m and l in float "
       "(softmax.h), P converted to bf16 before the P V gemm, O / l converted to bf16)"},
      {"fa2-hopper-bf16",
       "in=bf16,prod=fp32,acc=fp32,combine=fp32,state=fp32,s=fp32,p=bf16,out=bf16,mma=hopper-bf16",
       "FlashAttention-2 built for sm90: the same kernel and roles as fa2-ampere-bf16 (its "
       "SM80 MMA atoms run as mma.sync on Hopper tensor cores), with Hopper's accumulation"},
      {"fa3-hopper-fp8",
       "in=fp8e4m3,prod=fp32,acc=fp32,combine=fp32,state=fp32,s=fp32,p=fp8e4m3,out=bf16,"
       "mma=hopper-fp8,pscale=256",
       "FlashAttention-3 FP8 forward (Shah et al. 2024, arXiv 2407.08608, section 3.3: Q, K, V "
       "in e4m3 with per-block scales, wgmma e4m3 with fp32 accumulators, softmax in fp32, P "
       "rounded to e4m3 for the P V wgmma, bf16 output); P is multiplied by the static scale "
       "2^8 before its e4m3 cast (the value FlashAttention-3/4 deploy, analysed in arXiv "
       "2606.06521)"},
      {"fa4-blackwell-bf16",
       "in=bf16,prod=fp32,acc=fp32,combine=fp32,state=fp32,s=fp32,p=bf16,out=bf16,"
       "mma=blackwell-bf16,rescale=8,recip=fp32",
       "FlashAttention-4 forward on sm100 (flash_attn/cute/flash_fwd_sm100.py and softmax.py "
       "SoftmaxSm100): S and O accumulated in fp32 by tcgen05.mma kind::f16, softmax in fp32, "
       "P converted to the bf16 input type, O rescaled only when the row max grew by more than "
       "rescale_threshold = 8.0 (log2 units) for 16-bit inputs, O multiplied by the row sum's "
       "reciprocal (rcp_approx, modelled as an fp32 reciprocal rounded to nearest: set recip= "
       "to study another), bf16 output"},
      {"fa4-blackwell-fp8",
       "in=fp8e4m3,prod=fp32,acc=fp32,combine=fp32,state=fp32,s=fp32,p=fp8e4m3,out=bf16,"
       "mma=blackwell-f8f6f4,pscale=256,recip=fp32",
       "FlashAttention-4 FP8 forward: as fa4-blackwell-bf16 with e4m3 Q, K, V and P through "
       "tcgen05.mma kind::f8f6f4 (blackwell-f8f6f4), rescale_threshold 0.0 for 8-bit inputs "
       "(every tile rescales), exp2 shifted by max_offset (SoftmaxSm100.max_offset) so P is "
       "multiplied by 2^8 before its cvt.rn.satfinite e4m3 conversion"},
      {"eager-bf16", "in=bf16,prod=fp32,acc=fp32,combine=fp32,state=fp32,s=bf16,p=bf16,out=bf16",
       "PyTorch eager attention in bf16 (softmax(q @ k^T * scale) @ v): each matmul "
       "accumulates in fp32 and writes a bf16 tensor (S, then O); softmax upcasts its bf16 "
       "input to fp32 (its accumulate type), computes max and sum there and writes bf16 P"},
      {"all-bf16", "in=bf16,prod=bf16,acc=bf16,combine=bf16,state=bf16,s=bf16,p=bf16,out=bf16",
       "every operation rounded to bf16: the model of `--dtype bf16` (Golden et al. 2024's "
       "re-implementation of FlashAttention at one precision)"},
      // Block-scaled GEMMs (dot and matmul run them through run/scaled_dot.hpp: the block
      // scales applied where the unit applies them).
      {"deepgemm-fp8", "in=mx:e4m3:128:fp32:amax,acc=fp32,mma=hopper-fp8",
       "DeepGEMM's FP8 GEMM on sm90 (github.com/deepseek-ai/DeepGEMM; fine-grained scaling of "
       "DeepSeek-V3, arXiv 2412.19437 sec. 3.3): e4m3 operands with fp32 scales per 1 x 128 "
       "activation block and 128 x 128 weight block (tests' per_token_cast_to_fp8 and "
       "per_block_cast_to_fp8: scale amax / 448, amax clamped at 1e-4), so one scale per 128 "
       "of K for either operand; wgmma e4m3 k32 (hopper-fp8) from zero for each 128 of K, then "
       "promoted into fp32 with the scale pair by one FFMA (impls/sm90_fp8_gemm_1d2d.cuh): "
       "mma:hopper-fp8:promote:128; a dot's (and matmul's) columns carry 1 x 128 blocks, so a "
       "weight tile's shared scale is modelled as each column's own"},
      {"mxfp8-gemm", "in=mxfp8e4m3,acc=fp32,mma=blackwell-mxf8",
       "an MXFP8 GEMM on sm100 (OCP MX v1.0 e4m3 elements, blocks of 32 along K, E8M0 scales; "
       "the OCP floor rule, in=mxfp8e4m3:rceil for cuBLAS's and TransformerEngine's) through "
       "tcgen05.mma kind::mxf8f6f4 block32 (blackwell-mxf8: the scale exponents inside the "
       "25-bit fused sum, fp32 RZ; MMA-Sim nv_blackwell.py)"},
      {"nvfp4-gemm", "in=nvfp4,acc=fp32,mma=blackwell-nvf4",
       "an NVFP4 GEMM on sm100 (TransformerEngine's NVFP4 recipe, core_nvfp4.cuh: e2m1 in "
       "blocks of 16, UE4M3 block scales, fp32 per-tensor scale) through tcgen05.mma "
       "kind::mxf4nvf4 block16 (blackwell-nvf4: groups of 16 summed exactly, times the scale "
       "pair, 35-bit fused sum, fp32 RZ; MMA-Sim nv_blackwell.py), the per-tensor scales "
       "applied to the fp32 output as the GEMM's alpha"},
      // XLA's dot algorithms (PrecisionConfig.Algorithm in xla/xla_data.proto; JAX's
      // DotAlgorithmPreset): ALG_DOT_{A}_{B}_{ACC}[_X{N}], A and B the types the operands are
      // rounded to, ACC the accumulation type, independent of the storage types. The proto
      // fixes those types, not the order or the matrix unit: the aliases are IEEE chains in
      // ACC (any --schedule applies), except FAST_ACCUM, which names a hardware mode.
      {"ALG_DOT_F16_F16_F16", "in=fp16,acc=fp16",
       "XLA PrecisionConfig.Algorithm ALG_DOT_F16_F16_F16 (xla_data.proto): fp16 operands, fp16 "
       "accumulation"},
      {"ALG_DOT_F16_F16_F32", "in=fp16,acc=fp32",
       "XLA ALG_DOT_F16_F16_F32 (xla_data.proto): fp16 operands, fp32 accumulation"},
      {"ALG_DOT_BF16_BF16_BF16", "in=bf16,acc=bf16",
       "XLA ALG_DOT_BF16_BF16_BF16 (xla_data.proto): bf16 operands, bf16 accumulation"},
      {"ALG_DOT_BF16_BF16_F32", "in=bf16,acc=fp32",
       "XLA ALG_DOT_BF16_BF16_F32 (xla_data.proto; JAX \"BF16_BF16_F32\"): operands rounded "
       "to bf16, fp32 accumulation"},
      {"ALG_DOT_TF32_TF32_F32", "in=tf32,acc=fp32",
       "XLA ALG_DOT_TF32_TF32_F32 (xla_data.proto): operands rounded to tf32 (here to nearest "
       "even; the proto does not say how), fp32 accumulation"},
      {"ALG_DOT_F32_F32_F32", "in=fp32,acc=fp32",
       "XLA ALG_DOT_F32_F32_F32 (xla_data.proto; JAX \"F32_F32_F32\", true float32)"},
      {"ALG_DOT_F64_F64_F64", "in=fp64,acc=fp64",
       "XLA ALG_DOT_F64_F64_F64 (xla_data.proto): fp64 throughout"},
      {"ALG_DOT_ANY_F8_ANY_F8_F32", "in=fp8e4m3,acc=fp32",
       "XLA ALG_DOT_ANY_F8_ANY_F8_F32 (xla_data.proto: the storage may be any 8-bit float; "
       "e4m3 here, in=fp8e5m2 overrides), fp32 accumulation"},
      {"ALG_DOT_ANY_F8_ANY_F8_F32_FAST_ACCUM", "in=fp8e4m3,acc=fp32,mma=hopper-fp8",
       "XLA ALG_DOT_ANY_F8_ANY_F8_F32_FAST_ACCUM (xla_data.proto): XLA:GPU runs it as "
       "cuBLASLt's FP8 fast accumulation (openxla/xla PR 6599, issue 6168); on Hopper that is "
       "the wgmma fused sum without promotion, mma:hopper-fp8 (measured on an H200 through "
       "torch._scaled_mm, core/mma.md); dot runs it as --schedule mma:hopper-fp8"},
      // XLA's split algorithms (precision/dot_split.hpp): fp32 operands cut into bf16 or tf32
      // parts, one IEEE fp32 partial dot per pair of parts (through --schedule), added in the
      // order of XLA's DotAlgorithmRewriter. dot and matmul only. (XLA's older Triton emitter,
      // xla/backends/gpu/codegen/triton/dot_algorithms.cc, split with round-to-nearest casts and
      // chained each K tile's partial dots through one accumulator: not modelled.)
      {"ALG_DOT_BF16_BF16_F32_X3", "in=fp32,acc=fp32,split=bf16x3",
       "XLA ALG_DOT_BF16_BF16_F32_X3 (xla_data.proto; JAX \"BF16_BF16_F32_X3\"): openxla/xla "
       "xla/backends/gpu/transforms/dot_algorithm_rewriter.cc RewriteF32ToBF16X3: hi = x "
       "truncated to bf16 (bit mask), lo = bf16(x - hi) to nearest; partial dots lo*hi, hi*lo, "
       "hi*hi in fp32; sum (lo hi + hi lo), NaN set to 0, + hi hi"},
      {"ALG_DOT_BF16_BF16_F32_X6", "in=fp32,acc=fp32,split=bf16x6",
       "XLA ALG_DOT_BF16_BF16_F32_X6 (xla_data.proto): dot_algorithm_rewriter.cc "
       "RewriteF32ToBF16X6: hi, mid truncated to bf16, lo = bf16(x - hi - mid) to nearest; the "
       "six partial dots with i + j <= 2 added as mid mid, hi lo, lo hi, hi mid, mid hi, NaN "
       "set to 0, + hi hi"},
      {"ALG_DOT_BF16_BF16_F32_X9", "in=fp32,acc=fp32,split=bf16x9",
       "XLA ALG_DOT_BF16_BF16_F32_X9 (xla_data.proto): dot_algorithm_rewriter.cc "
       "RewriteF32ToBF16X9: three bf16 parts as X6; all nine partial dots added as lo lo, lo "
       "mid, mid lo, mid mid, hi lo, lo hi, hi mid, mid hi, NaN set to 0, + hi hi"},
      {"ALG_DOT_TF32_TF32_F32_X3", "in=fp32,acc=fp32,split=tf32x3",
       "XLA ALG_DOT_TF32_TF32_F32_X3 (xla_data.proto): dot_algorithm_rewriter.cc "
       "RewriteF32ToTF32X3: hi = x truncated to tf32 (bit mask), lo = x - hi passed in fp32 to "
       "a TF32 dot, whose rounding of lo is not published (here to nearest even, as "
       "ALG_DOT_TF32_TF32_F32); lo hi + hi lo, NaN set to 0, + hi hi"},
  };
  return presets;
}

const std::vector<std::string>& MatrixUnitProfileNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const MmaProfile& p : kMmaProfiles) v.emplace_back(p.name);
    return v;
  }();
  return names;
}

PrecisionPolicy ParsePrecisionPolicy(std::string_view text) {
  if (text.empty()) {
    Bad("empty policy; expected role=FORMAT items (roles: " + Join(RoleNames()) +
        ") or a preset (" + Join(PresetNames()) + ")");
  }
  // Split on commas that separate items (a custom:p=..,emin=.. format contains commas, so an
  // item continues while the next piece has no role name before '=').
  std::vector<std::string> items;
  const std::vector<std::string> roles = RoleNames();
  auto is_item_start = [&](std::string_view piece) {
    const auto eq = piece.find('=');
    if (eq == std::string_view::npos) return items.empty();
    const std::string key(piece.substr(0, eq));
    for (const auto& r : roles) {
      if (r == key) return true;
    }
    return false;
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string_view piece =
        text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    if (items.empty() || is_item_start(piece)) {
      items.emplace_back(piece);
    } else {
      items.back() += "," + std::string(piece);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }

  PrecisionPolicy p;
  bool set[8] = {};    // the role has a value (given, or from the preset)
  bool given[8] = {};  // the role was named in the text
  bool any_role = false;
  std::size_t first = 0;
  if (items[0].find('=') == std::string::npos) {
    const PrecisionPreset* found = nullptr;
    for (const auto& pr : PrecisionPresets()) {
      if (pr.name == items[0]) found = &pr;
    }
    if (found == nullptr) {
      Bad("unknown preset '" + items[0] + "'; presets: " + Join(PresetNames()) +
          " (or role=FORMAT items, roles: " + Join(RoleNames()) + ")");
    }
    p = ParsePrecisionPolicy(found->text);
    for (bool& b : set) b = true;
    p.preset = found->name;
    first = 1;
  }
  for (std::size_t i = first; i < items.size(); ++i) {
    const std::string& item = items[i];
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      Bad("item '" + item + "' is not role=FORMAT (roles: " + Join(RoleNames()) + ")");
    }
    const std::string key = item.substr(0, eq);
    const std::string value = item.substr(eq + 1);
    if (value.empty()) Bad("item '" + item + "' has no value");
    if (key == "mma") {
      bool known = false;
      for (const auto& n : MatrixUnitProfileNames()) known = known || n == value;
      if (!known) {
        Bad("mma=" + value + ": unknown profile; profiles: " + Join(MatrixUnitProfileNames()));
      }
      p.mma = value;
      continue;
    }
    if (key == "pscale") {
      p.pscale = ParsePscale(value);
      continue;
    }
    if (key == "rescale") {
      p.rescale = ParseRescale(value);
      continue;
    }
    if (key == "recip") {
      p.recip = ParseRole(key, value);
      continue;
    }
    if (key == "split") {
      if (!FindDotSplit(value))
        Bad("split=" + value + ": unknown split dot algorithm; split: " + DotSplitNames());
      p.split = value;
      continue;
    }
    bool matched = false;
    for (std::size_t r = 0; r < 8; ++r) {
      const PrecisionRole role = kAllPrecisionRoles[r];
      if (key != PrecisionRoleName(role)) continue;
      if (given[r]) Bad("role '" + key + "' given twice");
      p.Role(role) = ParseRole(key, value);
      set[r] = given[r] = true;
      matched = true;
      any_role = true;
    }
    if (!matched) Bad("unknown role '" + key + "'; roles: " + Join(RoleNames()));
  }
  if (first == 0) {
    if (!set[0]) Bad("'in=FORMAT' is required (the input storage format)");
    // A block-scaled in has no arithmetic of its own: acc then defaults to fp32 (the
    // accumulator of every block-scaled matrix unit and kernel).
    if (!set[2]) p.acc = LooksBlockScaled(p.in.format.name) ? RoleArithmetic{} : p.in;
    for (PrecisionRole r : {PrecisionRole::kProd, PrecisionRole::kCombine, PrecisionRole::kState,
                            PrecisionRole::kS, PrecisionRole::kP, PrecisionRole::kOut}) {
      if (!set[static_cast<int>(r)]) p.Role(r) = p.acc;
    }
  } else if (any_role) {
    p.preset += " (overridden)";
  }
  return p;
}

std::string ToString(const PrecisionPolicy& p) {
  std::string t;
  for (PrecisionRole r : kAllPrecisionRoles) {
    if (!t.empty()) t += ",";
    t += std::string(PrecisionRoleName(r)) + "=" + RoleText(p.Role(r));
  }
  if (!p.mma.empty()) t += ",mma=" + p.mma;
  if (p.pscale != 1.0) t += ",pscale=" + PscaleText(p.pscale);
  if (p.rescale != 0.0) {
    std::ostringstream os;
    os << p.rescale;
    t += ",rescale=" + os.str();
  }
  if (p.recip) t += ",recip=" + RoleText(*p.recip);
  if (!p.split.empty()) t += ",split=" + p.split;
  return t;
}

PrecisionPolicy PolicyFromShorthand(std::string_view dtype, std::string_view acc, Rounding r) {
  PrecisionPolicy p;
  p.in = {ParseFormat(dtype), Rounding::kNearestEven};
  const std::string_view a = (acc.empty() || acc == "same") ? dtype : acc;
  const RoleArithmetic computed{ParseFormat(a), r};
  for (PrecisionRole role : kAllPrecisionRoles) {
    if (role != PrecisionRole::kIn) p.Role(role) = computed;
  }
  return p;
}

ShorthandSpec ToShorthand(const PrecisionPolicy& p) {
  auto refuse = [&](const std::string& why) {
    throw std::invalid_argument("precision " + ToString(p) + ": " + why +
                                "; this op runs policies of the form in=D,acc=A[,combine=B] "
                                "(every other role = acc)");
  };
  if (!p.mma.empty()) refuse("mma=" + p.mma + " applies to dot and attention products");
  if (p.pscale != 1.0) refuse("pscale applies to attention's P");
  if (p.rescale != 0.0) refuse("rescale applies to attention's O");
  if (p.recip) refuse("recip applies to attention's normaliser");
  if (!p.split.empty()) refuse("split=" + p.split + " applies to dot and matmul");
  if (p.in.rounding != Rounding::kNearestEven) refuse("inputs are stored with rne");
  for (PrecisionRole r : {PrecisionRole::kProd, PrecisionRole::kState, PrecisionRole::kS,
                          PrecisionRole::kP, PrecisionRole::kOut}) {
    if (!(p.Role(r) == p.acc)) {
      refuse("role " + std::string(PrecisionRoleName(r)) + "=" + RoleText(p.Role(r)) +
             " differs from acc=" + RoleText(p.acc));
    }
  }
  if (p.combine.rounding != p.acc.rounding) refuse("combine and acc round differently");
  ShorthandSpec s;
  s.dtype = p.in.format.name;
  s.round = std::string(RoundingName(p.acc.rounding));
  if (p.combine.format == p.acc.format) {
    s.acc = p.acc.format.name;
  } else if (p.combine.format.precision >= p.acc.format.precision &&
             p.combine.format.emin <= p.acc.format.emin &&
             p.combine.format.emax >= p.acc.format.emax) {
    s.acc = p.acc.format.name + ">" + p.combine.format.name;
    // The out role equals acc here (checked above), narrower than the combine's result.
    s.out = p.out.format.name;
  } else {
    refuse("combine=" + p.combine.format.name + " is narrower than acc=" + p.acc.format.name);
  }
  return s;
}

}  // namespace carrier
