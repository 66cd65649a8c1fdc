// kernels/cuda/attention_impl.cuh: definitions of attention.hpp (nvcc only): shape checks,
// buffers, and the dispatch from the runtime (head_dim, block_c) to the compiled kernels.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/cuda_util.cuh"
#include "kernels/cuda/flash_attention.cuh"

namespace carrier::cuda {

namespace attention_detail {

template <class S, class Exp, int D, int Bc>
void LaunchFixed(const S* q, const S* k, const S* v, float* out, const AttentionShape& shape) {
  const std::size_t bytes = AttentionKernelSharedBytes(shape);
  auto kernel = FlashForwardKernel<S, Exp, D, Bc>;
  Check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(bytes)),
        "cudaFuncSetAttribute (shared memory)");
  cudaFuncAttributes attr{};
  Check(cudaFuncGetAttributes(&attr, kernel), "cudaFuncGetAttributes");
  if (shape.block_r > static_cast<std::size_t>(attr.maxThreadsPerBlock))
    throw ScheduleError("attention kernel: block_r " + std::to_string(shape.block_r) +
                        " threads exceed what this kernel can launch per block at head_dim " +
                        std::to_string(D) + " (" + std::to_string(attr.maxThreadsPerBlock) +
                        ", register-bound)");
  const std::uint64_t blocks = (shape.seq_len + shape.block_r - 1) / shape.block_r;
  kernel<<<static_cast<unsigned>(blocks), static_cast<unsigned>(shape.block_r), bytes>>>(
      q, k, v, out, shape.seq_len, AttentionScale<float>(shape.head_dim), shape.causal);
  Check(cudaGetLastError(), "attention kernel launch");
}

template <class S, class Exp, int D>
void LaunchTiles(const S* q, const S* k, const S* v, float* out, const AttentionShape& shape) {
  switch (shape.block_c) {
    case 16:
      return LaunchFixed<S, Exp, D, 16>(q, k, v, out, shape);
    case 32:
      return LaunchFixed<S, Exp, D, 32>(q, k, v, out, shape);
    case 64:
      return LaunchFixed<S, Exp, D, 64>(q, k, v, out, shape);
    default:
      return LaunchFixed<S, Exp, D, 128>(q, k, v, out, shape);
  }
}

template <class S, class Exp>
void Launch(const S* q, const S* k, const S* v, float* out, const AttentionShape& shape) {
  if (shape.head_dim == 64) return LaunchTiles<S, Exp, 64>(q, k, v, out, shape);
  return LaunchTiles<S, Exp, 128>(q, k, v, out, shape);
}

inline void Validate(const AttentionShape& shape) {
  CheckAttentionKernelShape(shape);
  int optin = 0;
  Check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0),
        "cudaDeviceGetAttribute");
  if (AttentionKernelSharedBytes(shape) > static_cast<std::size_t>(optin))
    throw ScheduleError("attention kernel: block_r " + std::to_string(shape.block_r) +
                        " x block_c " + std::to_string(shape.block_c) + " needs " +
                        std::to_string(AttentionKernelSharedBytes(shape)) +
                        " bytes of shared memory; this GPU allows a block " +
                        std::to_string(optin));
}

template <class S>
struct Buffers {
  DeviceBuffer<S> q, k, v;
  DeviceBuffer<float> out;
  Buffers(const S* hq, const S* hk, const S* hv, std::size_t elems)
      : q(elems), k(elems), v(elems), out(elems) {
    q.CopyFrom(hq, elems);
    k.CopyFrom(hk, elems);
    v.CopyFrom(hv, elems);
  }
};

}  // namespace attention_detail

template <class S, class Exp>
std::vector<float> AttentionForward(const S* q, const S* k, const S* v, const AttentionShape& shape,
                                    double* kernel_seconds) {
  RequireDevice();
  attention_detail::Validate(shape);
  const std::size_t elems = shape.seq_len * shape.head_dim;
  std::vector<float> out(elems);
  if (kernel_seconds) *kernel_seconds = 0;
  if (elems == 0) return out;
  attention_detail::Buffers<S> b(q, k, v, elems);
  EventTimer timer;
  timer.Start();
  attention_detail::Launch<S, Exp>(b.q.get(), b.k.get(), b.v.get(), b.out.get(), shape);
  const double seconds = timer.Stop();
  if (kernel_seconds) *kernel_seconds = seconds;
  b.out.CopyTo(out.data(), elems);
  return out;
}

template <class S, class Exp>
std::vector<double> TimeAttention(const S* q, const S* k, const S* v, const AttentionShape& shape,
                                  int repeats) {
  RequireDevice();
  attention_detail::Validate(shape);
  const std::size_t elems = shape.seq_len * shape.head_dim;
  std::vector<double> times;
  if (elems == 0) return times;
  attention_detail::Buffers<S> b(q, k, v, elems);
  attention_detail::Launch<S, Exp>(b.q.get(), b.k.get(), b.v.get(), b.out.get(), shape);
  Check(cudaDeviceSynchronize(), "warm-up");
  EventTimer timer;
  for (int r = 0; r < repeats; ++r) {
    timer.Start();
    attention_detail::Launch<S, Exp>(b.q.get(), b.k.get(), b.v.get(), b.out.get(), shape);
    times.push_back(timer.Stop());
  }
  return times;
}

}  // namespace carrier::cuda

#define CARRIER_CUDA_INSTANTIATE_ATTENTION(S, E)                              \
  template std::vector<float> carrier::cuda::AttentionForward<S, E>(          \
      const S*, const S*, const S*, const carrier::AttentionShape&, double*); \
  template std::vector<double> carrier::cuda::TimeAttention<S, E>(            \
      const S*, const S*, const S*, const carrier::AttentionShape&, int);
