// kernels/cuda/reduce_impl.cuh: definitions of reduce.hpp's Reduce and TimeReduce (nvcc only):
// validation, device buffers, and the dispatch from a runtime CudaSchedule to the compile-time
// BlockCarrierReduce<C, Threads, WarpTree, BlockTree> kernels of block_reduce.cuh.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/cuda_util.cuh"
#include "kernels/cuda/reduce.hpp"

namespace carrier::cuda {

namespace reduce_detail {

template <class C, class S, int Threads, CudaWarpTree W, CudaBlockTree B>
void LaunchFixed(const S* x, std::uint64_t n, const CudaSchedule& s, typename C::State* partial,
                 typename C::State* out) {
  const std::uint64_t blocks = s.GridBlocks(n);
  ChainLayout layout{};
  layout.n = n;
  layout.threads_in_grid = blocks * Threads;
  layout.run =
      s.arrangement == CudaArrangement::kStriped
          ? 0
          : (s.blocks == 0 ? s.items : (n + layout.threads_in_grid - 1) / layout.threads_in_grid);
  layout.lift = s.lift;
  if (blocks == 1) {
    BlockPassKernel<C, Threads, W, B><<<1, Threads>>>(x, layout, out);
  } else {
    BlockPassKernel<C, Threads, W, B>
        <<<static_cast<unsigned>(blocks), Threads>>>(x, layout, partial);
    GridPassKernel<C, Threads, W, B><<<1, Threads>>>(partial, blocks, out);
  }
  Check(cudaGetLastError(), "kernel launch");
}

template <class C, class S, int Threads>
void LaunchTrees(const S* x, std::uint64_t n, const CudaSchedule& s, typename C::State* partial,
                 typename C::State* out) {
  const bool in_order = s.block == CudaBlockTree::kInOrder;
  if (s.warp == CudaWarpTree::kShuffleDown) {
    if (in_order) {
      LaunchFixed<C, S, Threads, CudaWarpTree::kShuffleDown, CudaBlockTree::kInOrder>(x, n, s,
                                                                                      partial, out);
    } else {
      LaunchFixed<C, S, Threads, CudaWarpTree::kShuffleDown, CudaBlockTree::kPairwise>(
          x, n, s, partial, out);
    }
    return;
  }
  if constexpr (C::kBitwiseCommutative) {
    if (in_order) {
      LaunchFixed<C, S, Threads, CudaWarpTree::kXorButterfly, CudaBlockTree::kInOrder>(
          x, n, s, partial, out);
    } else {
      LaunchFixed<C, S, Threads, CudaWarpTree::kXorButterfly, CudaBlockTree::kPairwise>(
          x, n, s, partial, out);
    }
  }
}

template <class C, class S>
void Launch(const S* x, std::uint64_t n, const CudaSchedule& s, typename C::State* partial,
            typename C::State* out) {
  switch (s.threads) {
    case 32:
      return LaunchTrees<C, S, 32>(x, n, s, partial, out);
    case 256:
      return LaunchTrees<C, S, 256>(x, n, s, partial, out);
    case 1024:
      return LaunchTrees<C, S, 1024>(x, n, s, partial, out);
    default:
      break;
  }
}

// Everything that can be refused before touching the device (see reduce.hpp).
template <class C>
void Validate(const CudaSchedule& s, std::uint64_t n) {
  const std::string text = ToString(s);
  auto fail = [&](const std::string& why) {
    throw ScheduleError("cuda reduce: schedule '" + text + "' for " + C::kName + ": " + why);
  };
  if (std::string why = CudaScheduleProblem(s); !why.empty()) fail(why);
  if (std::string why = CudaSharedMemoryProblem(s, sizeof(typename C::State)); !why.empty())
    fail(why);
  const int* end = kCompiledThreads + sizeof(kCompiledThreads) / sizeof(int);
  if (std::find(kCompiledThreads, end, static_cast<int>(s.threads)) == end)
    fail("THREADS " + std::to_string(s.threads) + " is not a compiled block size (32 256 1024)");
  if (s.warp == CudaWarpTree::kXorButterfly && !C::kBitwiseCommutative)
    fail("the xor butterfly needs a bitwise commutative Combine");
  if (s.lift && !HasTileLift<C>) fail("the carrier defines no tile lift");
  const std::uint64_t blocks = s.GridBlocks(n);
  if (blocks > kCudaMaxBlocks)
    fail("n = " + std::to_string(n) + " needs more blocks than gridDim.x allows");
  if (!C::kCommutative && s.arrangement == CudaArrangement::kStriped && n > blocks * s.threads)
    fail("striped chains of two or more inputs reorder them, and the Combine is not commutative");
}

template <class C, class S>
struct DeviceRun {
  using State = typename C::State;
  DeviceBuffer<S> x;
  DeviceBuffer<State> partial;
  DeviceBuffer<State> out;
  DeviceRun(const S* host, std::uint64_t n, std::uint64_t blocks)
      : x(n), partial(blocks > 1 ? blocks : 1), out(1) {
    x.CopyFrom(host, n);
  }
};

}  // namespace reduce_detail

template <class C, class S>
typename C::State Reduce(const S* x, std::size_t n, const CudaSchedule& schedule,
                         double* kernel_seconds) {
  RequireDevice();
  reduce_detail::Validate<C>(schedule, n);
  if (kernel_seconds) *kernel_seconds = 0;
  if (n == 0) return C::Identity();
  reduce_detail::DeviceRun<C, S> run(x, n, schedule.GridBlocks(n));
  EventTimer timer;
  timer.Start();
  reduce_detail::Launch<C, S>(run.x.get(), n, schedule, run.partial.get(), run.out.get());
  const double seconds = timer.Stop();
  if (kernel_seconds) *kernel_seconds = seconds;
  typename C::State result;
  run.out.CopyTo(&result, 1);
  return result;
}

template <class C, class S>
std::vector<double> TimeReduce(const S* x, std::size_t n, const CudaSchedule& schedule, int repeats,
                               typename C::State* result) {
  RequireDevice();
  reduce_detail::Validate<C>(schedule, n);
  std::vector<double> times;
  if (n == 0) {
    if (result) *result = C::Identity();
    return times;
  }
  reduce_detail::DeviceRun<C, S> run(x, n, schedule.GridBlocks(n));
  reduce_detail::Launch<C, S>(run.x.get(), n, schedule, run.partial.get(), run.out.get());
  Check(cudaDeviceSynchronize(), "warm-up");
  EventTimer timer;
  for (int r = 0; r < repeats; ++r) {
    timer.Start();
    reduce_detail::Launch<C, S>(run.x.get(), n, schedule, run.partial.get(), run.out.get());
    times.push_back(timer.Stop());
  }
  if (result) run.out.CopyTo(result, 1);
  return times;
}

}  // namespace carrier::cuda

#define CARRIER_CUDA_INSTANTIATE_REDUCE(C, S)                                                    \
  template typename C::State carrier::cuda::Reduce<C, S>(const S*, std::size_t,                  \
                                                         const carrier::CudaSchedule&, double*); \
  template std::vector<double> carrier::cuda::TimeReduce<C, S>(                                  \
      const S*, std::size_t, const carrier::CudaSchedule&, int, typename C::State*);
