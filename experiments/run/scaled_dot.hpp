// experiments/run/scaled_dot.hpp: a dot through a matrix unit that applies block scales, on
// block-scaled storage (precision/block_scaled.hpp), as eval --op dot and --op matmul run it.
//
// A block-scaled storage keeps, beside the dequantised values every other trial reads, each
// column's element values and block scales (TrialInput::scaled_a, scaled_b). Two kinds of unit
// take them (ResolvedTrial::scaled_mma; CheckScaledMma decides which, or refuses):
//   block-scaled profiles (mma:blackwell-mxf8, -mxf4, -nvf4: core/mma.hpp MmaScaledChain)
//        the elements and scales go into the instruction, which applies the scale pair where
//        the hardware does (mxf8: the two E8M0 exponents inside the fused sum; mxf4/nvf4: per
//        group of 16 products after their exact sum, then the 35-bit fused sum, fp32 RZ). The
//        storage must be the profile's own format: element type, block size (32 for mxf8 and
//        mxf4, 16 for nvf4) and scale format (E8M0, UE4M3); the scale rule is free. NVFP4's
//        per-tensor fp32 scales are applied after the unit, on its fp32 output: the block
//        scales go to cuBLASLt as VEC16_UE4M3 scale tensors and the per-tensor scales as the
//        GEMM's fp32 alpha (TransformerEngine transformer_engine/common/gemm/cublaslt_gemm.cu
//        and cublaslt_grouped_gemm.cu: alpha = amax_A amax_B / (6^2 448^2), computed on the
//        device). Here the result is fp32(fp32(S_a S_b) * acc) with S the stored decode scales
//        (block_scaled.hpp's S_dec = fp32(1 / S_enc)); TE's alpha, rounded from the amaxes, can
//        differ from fp32(S_a S_b) in its last bits, which is not modelled.
//   fp32 block scales through an unscaled profile (DeepGEMM's FP8 GEMM on Hopper)
//        mx:e4m3:128:fp32:amax through mma:hopper-fp8: each block of 128 along K (4 wgmma k32
//        instructions) is accumulated from zero on the unit's own rule (MmaFusedChain, e8m13),
//        then promoted into the fp32 accumulator with its scale pair: total = fma(fp32(s_a
//        s_b), acc, total), one FFMA (DeepGEMM deep_gemm/include/deep_gemm/impls/
//        sm90_fp8_gemm_1d2d.cuh: the math warpgroup multiplies the two fp32 scales, then adds
//        that product times the chunk's wgmma result into its fp32 registers, which nvcc's
//        default -fmad=true contracts to one FFMA). The promotion interval is the block
//        (mma:hopper-fp8 is run as mma:hopper-fp8:promote:128; another N is refused).
// Everything else is refused in one line naming both the profile and the storage: a
// block-scaled profile on plain storage or on another block-scaled format, a block-scaled
// storage through an unscaled profile (except fp32 scales as above). The accumulator is fp32
// (--acc fp32). The result is exact arithmetic on the stored codes: no MPFR, O(n) time.
#pragma once

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <cstdint>

#include "core/mma.hpp"
#include "registry/registry.hpp"
#include "run/trial.hpp"

namespace carrier::run {

// Called by ResolveTrial for an mma: schedule when the profile is block-scaled or the storage
// is: checks the pair (throws SpecError, one line) and sets t.scaled_mma (and, for fp32 block
// scales, t.schedule.promote to the block).
void CheckScaledMma(const MmaProfile& profile, const std::string& schedule_text, ResolvedTrial& t);

// The dot of two scaled operands through `profile` (promote as in mma:PROFILE:promote:N, 0 =
// none) with the rules above. Throws std::invalid_argument (MmaInputError) on operands that do
// not fit the profile.
double ScaledDot(const MmaProfile& profile, std::uint64_t promote, const ScaledOperand& a,
                 const ScaledOperand& b);

// Execute's reduction for a trial with scaled_mma: components = {ScaledDot(...)}.
registry::Replayed RunScaledDot(const ResolvedTrial& t, const TrialInput& in);

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR
