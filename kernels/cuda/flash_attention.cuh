// kernels/cuda/flash_attention.cuh: a readable FlashAttention-2-style forward kernel for one
// head, over core's FlashRow carrier, whose every operation core/attention.hpp replays on the
// CPU (include from .cu files only).
//
// Layout. q, k, v: seq_len x D row-major in storage S (fp16 or bf16); out: seq_len x D in fp32.
// One block per block_r query rows, one thread per row (blockDim.x = block_r). Shared memory
// (dynamic, fp32, converted exactly from S on load): the block's q rows at stride D + 1 (so the
// threads' row reads fall in different banks), one key tile and one value tile of Bc rows.
// Per key tile t (Bc keys; the last may be short):
//   1. the block loads K and V rows [t Bc, t Bc + Bc) into shared memory;
//   2. each thread forms its row's Bc scores, score = (sum_c q_c k_c, in order, from +0) *
//      scale, -inf for keys after the row when causal (AttentionScore of core/attention.hpp);
//   3. lifts the tile whole, FlashRow::LiftTile (tile max, then per key p = exp(s - max),
//      l += p, o += p v in key order), and folds it into its running state: the first tile's
//      state is taken as is, later ones by FlashRow::Combine(running, tile).
// So each row's tree is blocked:Bc:lift over its keys. With `causal`, a block stops after the
// tile holding its last row's key (later tiles are masked for every row of the block), which is
// why the replay needs block_r (AttentionRowKeys). Finally out = Finalize(state) (o / l).
// Trade-offs, chosen for readability over speed: scores and the online softmax run on CUDA
// cores in fp32 (no tensor cores), one row per thread keeps FlashRow's state (D + 2 floats) in
// registers and its scores in local memory, and blocks do not split the key range.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/attention.hpp"
#include "core/carriers/flash_row.hpp"

namespace carrier::cuda {

template <class S, class Exp, int D, int Bc>
__global__ void FlashForwardKernel(const S* __restrict__ q, const S* __restrict__ k,
                                   const S* __restrict__ v, float* __restrict__ out,
                                   std::uint64_t n, float scale, bool causal) {
  using C = FlashRow<float, D, FlashVariant::kFA2, Exp>;
  extern __shared__ float smem[];
  const std::uint64_t block_r = blockDim.x;
  float* q_tile = smem;                                         // block_r x (D + 1)
  float* k_tile = q_tile + block_r * (D + 1);                   // Bc x D
  float* v_tile = k_tile + static_cast<std::uint64_t>(Bc) * D;  // Bc x D
  const std::uint64_t r0 = static_cast<std::uint64_t>(blockIdx.x) * block_r;
  const std::uint64_t row = r0 + threadIdx.x;
  const bool active = row < n;

  for (std::uint64_t e = threadIdx.x; e < block_r * D; e += block_r) {
    const std::uint64_t r = e / D, c = e % D;
    q_tile[r * (D + 1) + c] = r0 + r < n ? static_cast<float>(q[(r0 + r) * D + c]) : 0.0f;
  }
  // Keys this block reads: all, or (causal) up to the tile of its last row's key.
  const std::uint64_t last = r0 + block_r < n ? r0 + block_r : n;
  const std::uint64_t tiles = causal ? (last + Bc - 1) / Bc : (n + Bc - 1) / Bc;

  typename C::State state = C::Identity();
  FlashInput<float> inputs[Bc];
  for (std::uint64_t t = 0; t < tiles; ++t) {
    const std::uint64_t k0 = t * Bc;
    const std::uint64_t count = n - k0 < static_cast<std::uint64_t>(Bc) ? n - k0 : Bc;
    __syncthreads();  // the previous tile is no longer read
    for (std::uint64_t e = threadIdx.x; e < count * D; e += block_r) {
      k_tile[e] = static_cast<float>(k[k0 * D + e]);
      v_tile[e] = static_cast<float>(v[k0 * D + e]);
    }
    __syncthreads();
    if (!active) continue;
    for (std::uint64_t j = 0; j < count; ++j) {
      const float score =
          (causal && k0 + j > row)
              ? -ScalarTraits<float>::Infinity()
              : AttentionScore<float>(q_tile + threadIdx.x * (D + 1), k_tile + j * D, D, scale);
      inputs[j] = {score, v_tile + j * D};
    }
    const typename C::State tile = C::LiftTile(inputs, static_cast<std::size_t>(count));
    state = t == 0 ? tile : C::Combine(state, tile);
  }
  if (!active) return;
  const typename C::Result r = C::Finalize(state);
  for (int c = 0; c < D; ++c) out[row * D + c] = r.o[c];
}

}  // namespace carrier::cuda
