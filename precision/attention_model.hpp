// precision/attention_model.hpp: one attention head computed the way a real kernel computes it,
// under a precision policy (precision_policy.hpp), for deviation studies (Golden et al. 2024,
// "Is Flash Attention Stable?", arXiv 2405.02803).
//
// Contract. AttentionModel(q, k, v, spec) returns the n x d output O = softmax(Q K^T / sqrt(d)) V
// of one non-causal head (row-major; q, k, v are n x d row-major and already stored in the
// policy's `in` format — StoreAttentionInputs does that) computed by one of three algorithms,
// every intermediate rounded as the policy's roles say (R_role(x): x rounded to that role's
// format with its rounding):
//   dot(c, a, b) a length-k dot product onto c: the chain acc = R_acc(acc + R_prod(a_t b_t)),
//              t = 0..k-1 from acc = c, or, when the policy names `mma`, spec.matrix_dot (the
//              matrix unit's fused accumulation onto c, as a kernel's mma accumulates into its
//              registers; set by AttentionModel from MatrixDotFor(policy.mma) when empty);
//   scores     s_j = R_s(R_acc(dot(q_i, k_j) * scale)), scale = R_acc(1 / sqrt(d));
//   kFa2       FlashAttention-2's forward (Dao 2023, Algorithm 1): per key tile of Bc keys,
//              m' = max(m, max_j s_j); a = R_acc(exp(R_acc(m - m'))) (0 for the first tile);
//              p_j = R_acc(exp(R_acc(s_j - m'))); l = R_state(R_acc(R_acc(a l) + sum_j p_j))
//              with the row sum a chain in acc; P_j = R_p(p_j * pscale);
//              O_c = R_state(dot(R_acc(a O_c), P, V_c)) (O carried scaled by pscale, as the
//              FP8 kernel does); at the end one division O_c / pscale / l in acc (pscale a power
//              of two: exact), then R_out. O stays unnormalised between tiles. With
//              policy.rescale = T > 0 (FlashAttention-4's lazy rescale) a tile whose max m'
//              exceeds m by at most T log2 units, (m' - m) log2(e) <= T, keeps m (a = 1: O and
//              l untouched, p_j = exp(s_j - m) up to 2^T); with policy.recip the end is
//              R_out(R_acc((O_c / pscale) R_recip(1 / l))) instead of the division.
//   kFa1       FlashAttention's original forward (Dao et al. 2022, Algorithm 1; Golden et al.'s
//              re-implementation): per tile, m~ = max_j s_j, p_j = R_acc(exp(R_acc(s_j - m~))),
//              l~ = sum_j p_j (chain in acc), m' = max(m, m~), a = R_acc(exp(R_acc(m - m'))),
//              b = R_acc(exp(R_acc(m~ - m'))), l' = R_state(R_acc(R_acc(a l) + R_acc(b l~))),
//              O_c = R_state(R_acc(R_acc(R_acc(l a) O_c) + R_acc(b dot(0, P, V_c) / pscale)) / l')
//              — O renormalised every tile — and R_out(O_c) at the end.
//   kBaseline  the GEMM-style attention of an eager framework, no tiling: all n scores s_j,
//              m = max s_j, e_j = R_acc(exp(R_acc(s_j - m))), sum = chain of e_j in acc,
//              P_j = R_p(R_acc(e_j / sum) pscale), O_c = R_out(dot(0, P, V_c) / pscale) over all
//              n keys. The
//              softmax computes in acc, its accumulate type (PyTorch's softmax upcasts bf16 to
//              fp32), and keeps no state between steps, so `state` plays no part here.
// Tensor-op granularity (spec.elementwise set, format E): the model of a re-implementation
// written with framework tensor ops on E tensors (Golden et al.'s microbenchmark re-implements
// FlashAttention "at different numerical precisions"; a PyTorch op on E tensors computes in
// its accumulate type and writes an E tensor). In kFa1 and kFa2 every elementwise operation
// outside a dot or row sum (the score shift, each exp, each product, sum and division of the
// rescaling and of the l and O updates) is computed in acc and then rounded to E, and each
// tile's row sum and P V product is rounded to E when it is written (a matmul's or a sum's
// output tensor); kFa2 then forms O = R_E(R_E(a O) + R_E(dot(0, P, V))) as two tensor ops
// instead of accumulating onto a O. The baseline is one framework softmax plus two matmuls,
// so E changes nothing there. Unset (the default) the algorithms are exactly as above.
// exp is libm's fp64 exp of the (rounded) argument, then rounded to the role (so its own error,
// under 1 ulp of fp64, is far below every role's; every algorithm uses the same one).
// Tiles: Bc (block_c) keys per tile; the last tile may be shorter. Br (block_r) query rows per
// block: rows are independent in a non-causal head, so Br groups rows only and changes no bit
// (the tests check this); it is kept so that tile shapes read as the paper's.
// Arithmetic: a role of format fp32 (rne) computes in float, fp64 (rne) in double; any other
// format or rounding computes the exact operation to fp64 with round-to-odd (an error-free
// TwoSum / fma product) and rounds that once into the format, which is correctly rounded in
// every mode for formats of at most 51 bits (round to odd at p + 2 or more bits is innocuous).
// fp64 with a mode other than rne is refused. Stochastic rounding draws from a counter stream
// seeded with spec.sr_seed, in the order operations are listed above.
// Errors: std::invalid_argument (one line) for shapes (n, d, Br, Bc zero; Br or Bc > n is
// allowed and means one block), for an unknown `mma` profile, and for an input of the wrong
// format for the profile's matrix unit (core/mma.hpp MmaInputError).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "precision/precision_policy.hpp"

namespace carrier {

enum class AttentionAlgorithm { kFa2, kFa1, kBaseline };
// fa2 fa1 baseline
std::string AttentionAlgorithmName(AttentionAlgorithm a);
AttentionAlgorithm ParseAttentionAlgorithm(const std::string& text);

// The matrix unit's accumulation c + sum_t a_t b_t of a length-k dot product onto the
// accumulator c, a and b already in the unit's input format; returns the accumulated value (in
// the unit's output format). MatrixDotFor(profile) is core/mma.hpp's MmaFusedChain.
using MatrixDot = std::function<double(double c, const double* a, const double* b, std::size_t k)>;
// The fused chain of the named core/mma.hpp profile; throws std::invalid_argument for an
// unknown name.
MatrixDot MatrixDotFor(const std::string& profile);

struct AttentionModelSpec {
  std::size_t seq_len = 0;
  std::size_t head_dim = 0;
  std::size_t block_r = 64;
  std::size_t block_c = 64;
  AttentionAlgorithm algorithm = AttentionAlgorithm::kFa2;
  PrecisionPolicy policy;
  MatrixDot matrix_dot;  // when policy.mma is set: empty = MatrixDotFor(policy.mma)
  std::uint64_t sr_seed = 1;
  std::optional<RoleArithmetic> elementwise;  // tensor-op granularity (see the contract)
};

// A policy plus the tensor-op granularity, from text: a precision policy text
// (ParsePrecisionPolicy) that may carry one more item `ew=FORMAT[@ROUNDING]` (the elementwise
// format; not at the front, where a preset name may stand), or `torch-FORMAT`, the model of a
// PyTorch re-implementation on FORMAT tensors: in, state, s, p, out and ew all FORMAT, acc
// (the accumulate type of matmuls, sums and elementwise kernels) fp32, or FORMAT where that
// is wider. Bad text throws std::invalid_argument (one line).
struct AttentionArithmetic {
  PrecisionPolicy policy;
  std::optional<RoleArithmetic> elementwise;
};
AttentionArithmetic ParseAttentionArithmetic(std::string_view text);

std::vector<double> AttentionModel(std::span<const double> q, std::span<const double> k,
                                   std::span<const double> v, const AttentionModelSpec& spec);

// Rounds every value to `in` (nearest even), as the inputs a kernel is handed.
std::vector<double> StoreAttentionInputs(std::span<const double> x, const Format& in);

// The policy with every role fp64 (rne): the golden model when used with kBaseline.
PrecisionPolicy Fp64Policy();

// Elementwise deviation |o - golden| over all outputs.
struct Deviation {
  double max = 0, mean = 0, stddev = 0;  // stddev: population standard deviation
};
Deviation MeasureDeviation(std::span<const double> o, std::span<const double> golden);

}  // namespace carrier
