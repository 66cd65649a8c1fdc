// kernels/cuda/block_reduce.cuh: warp, block and grid reductions of any core carrier, in the
// merge order of a `cuda:` schedule (core/cuda_schedule.hpp), in CUB's shape: the merge order is
// template parameters, scratch space a nested TempStorage the caller puts in shared memory.
// Include only from .cu files (nvcc).
//
// Phases (the tree they make is built on the CPU by core/cuda_tree.hpp, and its ReplayOracle gives
// these kernels' bits; tests/cuda checks it on a GPU):
//   1. thread chain  global thread g pushes its inputs in increasing index order from Identity
//                    (or lifts them whole with LiftTile): a contiguous run (blocked) or g, g+P,
//                    g+2P, ... (striped, P threads in the grid). Loads are unrolled by
//                    kLoadUnroll and issued before the pushes, so the order of the pushes, not
//                    of the loads, is the tree.
//   2. warp tree     WarpCarrierReduce<C, kShuffleDown>: CUB's shuffle-down, offsets 1, 2, 4, 8,
//                    16, lane i keeping Combine(lane i, lane i + o) when i % 2o == 0: pairwise
//                    over the 32 lanes, neighbours first, input order kept (any carrier).
//                    WarpCarrierReduce<C, kXorButterfly>: FlashAttention's Allreduce, masks 16,
//                    8, 4, 2, 1, every lane Combine(own, lane ^ mask): every lane ends with the
//                    total, but lane i's tree differs from lane j's by operand swaps, so it is
//                    refused at compile time unless C::kBitwiseCommutative. Its tree (lane 0's)
//                    pairs lanes i and i + 16 first: it permutes the input order.
//   3. block tree    BlockCarrierReduce<C, Threads, WarpTree, BlockTree>: lane 0 of each warp
//                    writes its aggregate to TempStorage; thread 0 folds the Threads/32
//                    aggregates in order (kInOrder) or by recursive halving, the left half
//                    taking the extra one (kPairwise, unrolled at compile time).
//   4. grid pass     a second launch of one block merges the G block partials without atomics:
//                    thread t folds partials [t L, t L + L), L = ceil(G / Threads), by Combine
//                    from the first, then phases 2 and 3. Skipped when G == 1.
// Every lane and warp takes part in every combine, idle ones with Identity. Trade-offs: shfl
// keeps the input order and so serves non-commutative carriers (ArgMax); xor leaves the total
// in every lane (what attention needs) but is only safe for bitwise commutative combines;
// in-order block folding has depth Threads/32 - 1 against log2 for pairwise, at the same cost.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/carrier.hpp"
#include "core/carriers/pairs.hpp"
#include "core/cuda_schedule.hpp"
#include "core/pairwise.hpp"

namespace carrier::cuda {

inline constexpr int kLoadUnroll = 8;

// A carrier state moved across lanes word by word (states are trivially copyable).
template <class State>
__device__ __forceinline__ State ShuffleDown(const State& s, int offset) {
  static_assert(sizeof(State) % 4 == 0, "carrier states are shuffled as 32-bit words");
  constexpr int kWords = sizeof(State) / 4;
  unsigned words[kWords];
  memcpy(words, &s, sizeof(State));
#pragma unroll
  for (int w = 0; w < kWords; ++w) words[w] = __shfl_down_sync(0xffffffffu, words[w], offset);
  State r;
  memcpy(&r, words, sizeof(State));
  return r;
}

template <class State>
__device__ __forceinline__ State ShuffleXor(const State& s, int mask) {
  static_assert(sizeof(State) % 4 == 0, "carrier states are shuffled as 32-bit words");
  constexpr int kWords = sizeof(State) / 4;
  unsigned words[kWords];
  memcpy(words, &s, sizeof(State));
#pragma unroll
  for (int w = 0; w < kWords; ++w) words[w] = __shfl_xor_sync(0xffffffffu, words[w], mask);
  State r;
  memcpy(&r, words, sizeof(State));
  return r;
}

template <class C, CudaWarpTree Tree>
struct WarpCarrierReduce {
  static_assert(Tree != CudaWarpTree::kXorButterfly || C::kBitwiseCommutative,
                "the xor butterfly needs a carrier whose Combine is bitwise commutative: lanes "
                "combine (own, other) with opposite operand orders");
  using State = typename C::State;

  // All 32 lanes call it; the warp's total is in lane 0 (in every lane for kXorButterfly).
  __device__ static State Reduce(State s) {
    const int lane = static_cast<int>(threadIdx.x & 31u);
    if constexpr (Tree == CudaWarpTree::kShuffleDown) {
#pragma unroll
      for (int o = 1; o < 32; o *= 2) {
        const State other = ShuffleDown(s, o);
        if ((lane & (2 * o - 1)) == 0) s = C::Combine(s, other);
      }
    } else {
#pragma unroll
      for (int mask = 16; mask >= 1; mask /= 2) s = C::Combine(s, ShuffleXor(s, mask));
    }
    return s;
  }
};

template <class C, int Threads, CudaWarpTree WarpTree, CudaBlockTree BlockTree>
class BlockCarrierReduce {
  static_assert(Threads % 32 == 0 && Threads >= 32 && Threads <= 1024,
                "a block is a whole number of warps, at most 1024 threads");

 public:
  using State = typename C::State;
  static constexpr int kWarps = Threads / 32;
  // One slot per warp aggregate. Raw bytes: a State may have default member initialisers,
  // which __shared__ variables cannot run.
  struct TempStorage {
    alignas(State) unsigned char raw[sizeof(State) * kWarps];
  };

  __device__ explicit BlockCarrierReduce(TempStorage& temp) : temp_(temp) {}

  // All Threads threads call it with their chain's state; the block's total is returned in
  // thread 0 (other threads get their own warp's value, not to be used).
  __device__ State Reduce(State s) {
    s = WarpCarrierReduce<C, WarpTree>::Reduce(s);
    State* slot = reinterpret_cast<State*>(temp_.raw);
    if ((threadIdx.x & 31u) == 0) slot[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
      if constexpr (BlockTree == CudaBlockTree::kInOrder) {
        s = slot[0];
        for (int w = 1; w < kWarps; ++w) s = C::Combine(s, slot[w]);
      } else {
        s = Pairwise<0, kWarps>(slot);
      }
    }
    return s;
  }

 private:
  template <int Lo, int Hi>
  __device__ static State Pairwise(const State* w) {
    if constexpr (Hi - Lo == 1) {
      return w[Lo];
    } else {
      constexpr int kMid = PairwiseMid(Lo, Hi);
      const State left = Pairwise<Lo, kMid>(w);
      const State right = Pairwise<kMid, Hi>(w);
      return C::Combine(left, right);
    }
  }

  TempStorage& temp_;
};

// The carrier's input at global position i from a stored value (exact widening conversion).
template <class C, class S>
__device__ __forceinline__ typename C::Input MakeInput(const S& x, std::uint64_t i) {
  using In = typename C::Input;
  using T = typename C::Scalar;
  if constexpr (std::is_same_v<In, IndexedValue<T>>) {
    return In{static_cast<T>(x), static_cast<std::int64_t>(i)};
  } else {
    (void)i;
    return static_cast<T>(x);
  }
}

// Where global thread g's chain lies (core/cuda_schedule.hpp): computed identically by
// core/cuda_tree.hpp.
struct ChainLayout {
  std::uint64_t n;
  std::uint64_t threads_in_grid;  // P
  std::uint64_t run;              // blocked: run length; 0 = striped
  bool lift;
};

template <class C, class S>
__device__ typename C::State ThreadChain(const S* x, const ChainLayout& layout, std::uint64_t g) {
  using State = typename C::State;
  using In = typename C::Input;
  std::uint64_t first = 0, count = 0, stride = 1;
  if (layout.run == 0) {
    stride = layout.threads_in_grid;
    if (g < layout.n) {
      first = g;
      count = (layout.n - g + stride - 1) / stride;
    }
  } else if (g * layout.run < layout.n) {
    first = g * layout.run;
    count = layout.n - first < layout.run ? layout.n - first : layout.run;
  }
  if constexpr (HasTileLift<C>) {
    if (layout.lift) {
      if (count == 0) return C::Identity();
      In tile[kCudaMaxItems];
      for (std::uint64_t j = 0; j < count; ++j)
        tile[j] = MakeInput<C>(x[first + j * stride], first + j * stride);
      return C::LiftTile(tile, static_cast<std::size_t>(count));
    }
  }
  State s = C::Identity();
  std::uint64_t j = 0;
  // Contiguous chains starting on a 16-byte boundary (x comes from cudaMalloc, 256-byte
  // aligned) load 16 bytes at a time, as CUB's vectorised blocked loads do; the pushes, hence
  // the bits, are the same as the scalar loop's.
  constexpr int kVec = 16 / sizeof(S);
  if constexpr (sizeof(S) * kVec == 16 && kLoadUnroll % kVec == 0) {
    if (stride == 1 && first % kVec == 0) {
      struct alignas(16) Pack {
        S v[kVec];
      };
      for (; j + kLoadUnroll <= count; j += kLoadUnroll) {
        Pack p[kLoadUnroll / kVec];
#pragma unroll
        for (int q = 0; q < kLoadUnroll / kVec; ++q)
          p[q] = reinterpret_cast<const Pack*>(x + first + j)[q];
#pragma unroll
        for (int q = 0; q < kLoadUnroll / kVec; ++q)
#pragma unroll
          for (int u = 0; u < kVec; ++u) {
            const std::uint64_t i = first + j + q * kVec + u;
            s = PushOne<C>(s, MakeInput<C>(p[q].v[u], i));
          }
      }
    }
  }
  for (; j + kLoadUnroll <= count; j += kLoadUnroll) {
    In v[kLoadUnroll];
#pragma unroll
    for (int u = 0; u < kLoadUnroll; ++u) {
      const std::uint64_t i = first + (j + u) * stride;
      v[u] = MakeInput<C>(x[i], i);
    }
#pragma unroll
    for (int u = 0; u < kLoadUnroll; ++u) s = PushOne<C>(s, v[u]);
  }
  for (; j < count; ++j) {
    const std::uint64_t i = first + j * stride;
    s = PushOne<C>(s, MakeInput<C>(x[i], i));
  }
  return s;
}

// Phases 1-3: block b writes its partial to out[b].
template <class C, int Threads, CudaWarpTree WarpTree, CudaBlockTree BlockTree, class S>
__global__ void __launch_bounds__(Threads)
    BlockPassKernel(const S* x, ChainLayout layout, typename C::State* out) {
  using Reduce = BlockCarrierReduce<C, Threads, WarpTree, BlockTree>;
  __shared__ typename Reduce::TempStorage temp;
  const std::uint64_t g = static_cast<std::uint64_t>(blockIdx.x) * Threads + threadIdx.x;
  typename C::State s = ThreadChain<C>(x, layout, g);
  s = Reduce(temp).Reduce(s);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

// Phase 4: one block merges the `blocks` partials into *out.
template <class C, int Threads, CudaWarpTree WarpTree, CudaBlockTree BlockTree>
__global__ void __launch_bounds__(Threads)
    GridPassKernel(const typename C::State* partial, std::uint64_t blocks, typename C::State* out) {
  using Reduce = BlockCarrierReduce<C, Threads, WarpTree, BlockTree>;
  __shared__ typename Reduce::TempStorage temp;
  const std::uint64_t per = (blocks + Threads - 1) / Threads;
  const std::uint64_t first = threadIdx.x * per;
  typename C::State s = C::Identity();
  if (first < blocks) {
    s = partial[first];
    const std::uint64_t last = first + per < blocks ? first + per : blocks;
    // Partials are loaded kGridPrefetch at a time ahead of their combines (they do not depend
    // on the running state), so a thread's fold is not one memory latency per partial.
    constexpr int kGridPrefetch = 4;
    std::uint64_t m = first + 1;
    for (; m + kGridPrefetch <= last; m += kGridPrefetch) {
      typename C::State p[kGridPrefetch];
#pragma unroll
      for (int u = 0; u < kGridPrefetch; ++u) p[u] = partial[m + u];
#pragma unroll
      for (int u = 0; u < kGridPrefetch; ++u) s = C::Combine(s, p[u]);
    }
    for (; m < last; ++m) s = C::Combine(s, partial[m]);
  }
  s = Reduce(temp).Reduce(s);
  if (threadIdx.x == 0) *out = s;
}

}  // namespace carrier::cuda
