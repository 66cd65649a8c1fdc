// precision/dot_split.hpp: XLA's split dot algorithms (ALG_DOT_BF16_BF16_F32_X3, _X6, _X9 and
// ALG_DOT_TF32_TF32_F32_X3): an fp32 dot emulated by several dots of narrower operands.
//
// Contract (the semantics of openxla/xla's GPU pass DotAlgorithmRewriter,
// xla/backends/gpu/transforms/dot_algorithm_rewriter.cc; facts read from that file):
//   Split. Each fp32 operand x is cut into `parts` values of the part format (bf16 or tf32):
//     every part but the last is x truncated to the part format (the low 16 bits of the fp32
//     encoding cleared for bf16, the low 13 for tf32: round toward zero, by bit mask), and the
//     remainder x - part (exact in fp32) is split further; the last part is the remainder
//     rounded to the part format to nearest even (XLA's fp32 -> bf16 convert). bf16: 2 parts
//     (hi, lo) for X3, 3 (hi, mid, lo) for X6 and X9. tf32 X3: 2 parts; XLA passes the fp32
//     remainder to a TF32 dot, whose rounding of it is not published: here to nearest even, as
//     the ALG_DOT_TF32_TF32_F32 preset rounds its operands.
//   Products. A partial dot sum_k a_i[k] b_j[k] for each listed pair (i, j) of parts (0 = hi):
//     X3 {lo hi, hi lo, hi hi}; X6 {mid mid, hi lo, lo hi, hi mid, mid hi, hi hi} (the six of
//     the nine with i + j <= 2); X9 all nine. Each partial dot is an ALG_DOT_{BF16,TF32}_..._F32
//     dot: exact products (8 + 8 or 11 + 11 bits fit fp32) accumulated in fp32, in whatever
//     order the dot runs (the caller's merge order: XLA leaves it to the GEMM).
//   Combine. The partial dots are added in fp32 in the listed order, smallest terms first:
//     r = p_0; r = fl(r + p_m) for m = 1 .. M-2; then r is replaced by 0 where it is NaN (XLA:
//     an infinite operand gives inf * 0 = NaN in the low products, which must not hide the hi
//     hi product's inf); the result is fl(r + p_{M-1}), p_{M-1} = hi hi.
// No FMA contraction (the file is compiled with -ffp-contract=off).
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "precision/format.hpp"

namespace carrier {

struct DotSplitAlgorithm {
  std::string name;  // the policy's split= value: bf16x3 bf16x6 bf16x9 tf32x3
  std::string xla;   // XLA's PrecisionConfig.Algorithm name
  Format part;       // the part format: BF16() or TF32()
  int parts = 2;     // how many parts each operand is cut into
  // The partial dots (lhs part, rhs part), 0 = hi, in the order they are added; the last is
  // (0, 0), added after the NaN guard.
  std::vector<std::pair<int, int>> products;
};

const std::vector<DotSplitAlgorithm>& DotSplitAlgorithms();
// nullptr for an unknown name.
const DotSplitAlgorithm* FindDotSplit(std::string_view name);
// "bf16x3 bf16x6 bf16x9 tf32x3"
std::string DotSplitNames();

// The parts of each value of x (fp32 values; anything else is rounded to fp32 first, to nearest
// even): result[i][k] is part i of x[k], as doubles (exact).
std::vector<std::vector<double>> SplitOperands(const std::vector<double>& x,
                                               const DotSplitAlgorithm& alg);
// One value's parts (the same rule); entries past alg.parts are 0.
inline constexpr int kMaxDotSplitParts = 3;
std::array<float, kMaxDotSplitParts> SplitValue(float x, const DotSplitAlgorithm& alg);

// The partial dots (fp32 values, in alg.products' order) added as the contract says.
float CombinePartialDots(const DotSplitAlgorithm& alg, const std::vector<float>& partial);

}  // namespace carrier
