// core/attention.hpp: the CPU replay of the FlashAttention forward kernel (kernels/cuda), one
// head, so that the kernel's error can be studied on any machine and its bits checked on a GPU.
//
// API (header-only, no dependencies; T the compute scalar (float; double; or any scalar with
// ScalarTraits, the operators and ADL sqrt/exp, e.g. precision/emulated_oracle.hpp's EmulatedOracle
// under its EmulationScope, which rounds every listed step into a narrow format such as bf16; Exp
// then LibmExp or FastExp, PortableExp is float/double only), S the storage scalar of
// q, k, v (Half, BFloat16, float, double: anything with static_cast<T>(s) exact), Exp the exp
// policy (PortableExp for bit-exactness with the GPU, FastExp as FlashAttention)):
//
//   struct AttentionShape { seq_len, head_dim, block_r, block_c, causal };
//   template <class T, class Exp, class S>
//   std::vector<T> AttentionForwardReplay(const S* q, const S* k, const S* v,
//                                         const AttentionShape& shape,
//                                         const Schedule& row_order = {blocked:block_c:lift});
//     -> seq_len x head_dim outputs, row-major, in T (the kernel writes T too, no final
//        rounding to S). head_dim 64 or 128 (the kernel's menu; others throw ScheduleError).
//   AttentionRowKeys(shape, i)            how many keys row i reduces (causal tile skipping)
//   AttentionScale<T>(head_dim)           the score scale both sides use: T(1) / sqrt(T(d))
//   AttentionScoresReplay<T>(q, k, shape, i) the row's scores exactly as the kernel forms them
//   AttentionScoresExact(q, k, shape, i)  the row's scores q.k / sqrt(d) in long double, -inf
//                                         where masked, for the certified reference: pass them
//                                         with the v rows (as doubles) to
//                                         precision/reference/reference.hpp's
//                                         ReferenceAttention(scores, values, head_dim)
//                                         (per row; values row-major keys x head_dim). The
//                                         exact scores are irrational for d = 128: these are
//                                         within about 2^-60 relative, far below any fp32 error.
//   AttentionShapeFromSchedule(text, seq_len, head_dim, causal)
//                                         block_c from "blocked:BC:lift" (the kernel's order),
//                                         block_r = kAttentionDefaultBlockR.
//
// The operation order (it is the kernel's, kernels/cuda/flash_attention.cuh):
//   score_ij = (((0 + q_i0 k_j0) + q_i1 k_j1) + ... + q_i,d-1 k_j,d-1) * scale   in T,
//              q and k converted from S exactly, products and sums rounded in T, no fma;
//              -inf when causal and j > i (a masked key: FlashRow never reads its v row).
//   row i:     FlashRow<T, d, FA2, Exp> over its first AttentionRowKeys(shape, i) keys, merged
//              in `row_order` (the kernel: blocked:block_c:lift, i.e. each key tile lifted
//              whole by FlashRow::LiftTile, tile states folded left to right), then
//              Finalize(state) (NaN for an empty row).
//   Causal tile skipping: the kernel's block of query rows [r0, r0 + block_r) reads key tiles
//   up to the one holding key min(n, r0 + block_r) - 1, so row i reduces the first
//   min(n, block_c * ceil(min(n, r0 + block_r) / block_c)) keys (the later ones are masked
//   for the whole block and skipped). Non-causal rows reduce all seq_len keys.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/carriers/flash_row.hpp"
#include "core/merge_tree.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"

namespace carrier {

inline constexpr std::size_t kAttentionDefaultBlockR = 64;

struct AttentionShape {
  std::size_t seq_len = 0;
  std::size_t head_dim = 64;
  std::size_t block_r = kAttentionDefaultBlockR;  // query rows per kernel block (causal skip)
  std::size_t block_c = 64;                       // keys per tile
  bool causal = false;
};

// Throws ScheduleError (one line) for a shape the kernel and replay do not support.
inline void CheckAttentionShape(const AttentionShape& s) {
  if (s.head_dim != 64 && s.head_dim != 128)
    throw ScheduleError("attention: head_dim must be 64 or 128, got " + std::to_string(s.head_dim));
  if (s.block_r == 0 || s.block_c == 0)
    throw ScheduleError("attention: tile sizes must be positive (block_r " +
                        std::to_string(s.block_r) + ", block_c " + std::to_string(s.block_c) + ")");
}

// What the GPU kernel (kernels/cuda/flash_attention.cuh) can run: key tiles of a compiled size,
// one thread per query row (block_r <= 1024), and its shared memory (the block's query rows at
// a padded stride of head_dim + 1, one key and one value tile, all in fp32) within what an
// sm_90 block may opt into (227 KiB; an sm_80 block gets 163 KiB, checked at launch).
inline constexpr std::size_t kAttentionKernelBlockC[] = {16, 32, 64, 128};
inline constexpr std::size_t kAttentionMaxSharedBytes = 227 * 1024;

inline std::size_t AttentionKernelSharedBytes(const AttentionShape& s) {
  return (s.block_r * (s.head_dim + 1) + 2 * s.block_c * s.head_dim) * sizeof(float);
}

inline void CheckAttentionKernelShape(const AttentionShape& s) {
  CheckAttentionShape(s);
  bool compiled = false;
  for (std::size_t bc : kAttentionKernelBlockC) compiled = compiled || bc == s.block_c;
  if (!compiled)
    throw ScheduleError(
        "attention kernel: block_c must be 16, 32, 64 or 128 (compiled tile "
        "sizes), got " +
        std::to_string(s.block_c));
  if (s.block_r > 1024)
    throw ScheduleError(
        "attention kernel: block_r is one thread per query row, at most 1024, "
        "got " +
        std::to_string(s.block_r));
  if (AttentionKernelSharedBytes(s) > kAttentionMaxSharedBytes)
    throw ScheduleError("attention kernel: block_r " + std::to_string(s.block_r) + " x block_c " +
                        std::to_string(s.block_c) + " at head_dim " + std::to_string(s.head_dim) +
                        " needs " + std::to_string(AttentionKernelSharedBytes(s)) +
                        " bytes of shared memory, more than any GPU block gets (" +
                        std::to_string(kAttentionMaxSharedBytes) + ")");
}

inline std::size_t AttentionRowKeys(const AttentionShape& s, std::size_t i) {
  if (!s.causal) return s.seq_len;
  const std::size_t r0 = i / s.block_r * s.block_r;
  const std::size_t last = std::min(s.seq_len, r0 + s.block_r);  // one past the block's last row
  const std::size_t tiles = (last + s.block_c - 1) / s.block_c;
  return std::min(s.seq_len, tiles * s.block_c);
}

template <class T>
CARRIER_HD inline T AttentionScale(std::size_t head_dim) {
  using std::sqrt;
  return T(1) / sqrt(static_cast<T>(head_dim));
}

// The kernel's order for key tiles of block_c: blocked:block_c:lift.
inline Schedule AttentionKernelOrder(const AttentionShape& s) {
  return Schedule::Blocked(s.block_c, OuterOrder::kSeq, /*lift=*/true);
}

inline AttentionShape AttentionShapeFromSchedule(std::string_view text, std::size_t seq_len,
                                                 std::size_t head_dim, bool causal) {
  const Schedule s = ParseSchedule(text);
  const auto* b = s.If<orders::BlockedParams>();
  if (!b || b->outer != OuterOrder::kSeq || !b->lift)
    throw ScheduleError(
        "attention: the kernel's order is blocked:BC:lift (key tiles of BC "
        "lifted whole, folded in order), got '" +
        std::string(text) + "'");
  AttentionShape shape{seq_len, head_dim, kAttentionDefaultBlockR, b->tile, causal};
  CheckAttentionShape(shape);
  return shape;
}

// One score, in the kernel's operation order (see the header comment).
template <class T, class S>
CARRIER_HD inline T AttentionScore(const S* q_row, const S* k_row, std::size_t d, T scale) {
  T acc = T(0);
  for (std::size_t c = 0; c < d; ++c) {
    const T prod = static_cast<T>(q_row[c]) * static_cast<T>(k_row[c]);
    acc = acc + prod;
  }
  return acc * scale;
}

template <class T, class S>
std::vector<T> AttentionScoresReplay(const S* q, const S* k, const AttentionShape& shape,
                                     std::size_t i) {
  const std::size_t keys = AttentionRowKeys(shape, i);
  const T scale = AttentionScale<T>(shape.head_dim);
  std::vector<T> scores(keys);
  for (std::size_t j = 0; j < keys; ++j)
    scores[j] = (shape.causal && j > i)
                    ? -ScalarTraits<T>::Infinity()
                    : AttentionScore<T>(q + i * shape.head_dim, k + j * shape.head_dim,
                                        shape.head_dim, scale);
  return scores;
}

// q_i . k_j / sqrt(d) over all seq_len keys (-inf where causal masks), in long double.
template <class S>
std::vector<double> AttentionScoresExact(const S* q, const S* k, const AttentionShape& shape,
                                         std::size_t i) {
  const std::size_t d = shape.head_dim;
  const long double inv_sqrt = 1.0L / std::sqrt(static_cast<long double>(d));
  std::vector<double> scores(shape.seq_len);
  for (std::size_t j = 0; j < shape.seq_len; ++j) {
    if (shape.causal && j > i) {
      scores[j] = -std::numeric_limits<double>::infinity();
      continue;
    }
    long double acc = 0.0L;
    for (std::size_t c = 0; c < d; ++c)
      acc += static_cast<long double>(static_cast<double>(q[i * d + c])) *
             static_cast<long double>(static_cast<double>(k[j * d + c]));
    scores[j] = static_cast<double>(acc * inv_sqrt);
  }
  return scores;
}

namespace attention_detail {

template <class T, std::size_t D, class Exp, class S>
std::vector<T> ReplayRows(const S* q, const S* k, const S* v, const AttentionShape& shape,
                          const Schedule& row_order) {
  using C = FlashRow<T, D, FlashVariant::kFA2, Exp>;
  const std::size_t n = shape.seq_len;
  std::vector<T> vt(n * D);
  for (std::size_t i = 0; i < n * D; ++i) vt[i] = static_cast<T>(v[i]);
  std::vector<T> out(n * D);
  std::vector<FlashInput<T>> inputs;
  std::uint64_t tree_n = ~std::uint64_t{0};
  MergeTree tree;
  for (std::size_t i = 0; i < n; ++i) {
    const std::vector<T> scores = AttentionScoresReplay<T>(q, k, shape, i);
    inputs.resize(scores.size());
    for (std::size_t j = 0; j < scores.size(); ++j) inputs[j] = {scores[j], vt.data() + j * D};
    if (tree_n != scores.size()) {  // rows share a key count except near causal block edges
      tree = BuildTree(row_order, scores.size());
      tree_n = scores.size();
    }
    const typename C::Result r =
        C::Finalize(ReplayOracle<C>(tree, std::span<const FlashInput<T>>(inputs)));
    for (std::size_t c = 0; c < D; ++c) out[i * D + c] = r.o[c];
  }
  return out;
}

}  // namespace attention_detail

template <class T, class Exp, class S>
std::vector<T> AttentionForwardReplay(const S* q, const S* k, const S* v,
                                      const AttentionShape& shape, const Schedule& row_order) {
  CheckAttentionShape(shape);
  if (shape.head_dim == 64)
    return attention_detail::ReplayRows<T, 64, Exp>(q, k, v, shape, row_order);
  return attention_detail::ReplayRows<T, 128, Exp>(q, k, v, shape, row_order);
}

template <class T, class Exp, class S>
std::vector<T> AttentionForwardReplay(const S* q, const S* k, const S* v,
                                      const AttentionShape& shape) {
  return AttentionForwardReplay<T, Exp>(q, k, v, shape, AttentionKernelOrder(shape));
}

}  // namespace carrier
