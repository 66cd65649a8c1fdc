// kernels/cuda/attention.hpp: the plain C++ door to the FlashAttention forward kernel
// (flash_attention.cuh); no CUDA types. Instantiated in attention_fp16.cu / attention_bf16.cu for
// S = Half, BFloat16 and Exp = PortableExp (bit-exact with core/attention.hpp's
// AttentionForwardReplay<float, PortableExp>) and FastExp (the device's exp2f against the host's
// std::exp2: not bit-exact, within a few ulps per exp).
//
// AttentionForward<S, Exp>(q, k, v, shape): q, k, v host arrays of seq_len x head_dim; returns
// the seq_len x head_dim fp32 outputs. Kernel time to *kernel_seconds when given.
// TimeAttention<S, Exp>: data copied once, one warm-up and `repeats` timed runs (seconds each).
// Errors as reduce.hpp: Unavailable (no GPU), ScheduleError (CheckAttentionKernelShape, or more
// shared memory than this device allows a block), CudaFailure.
#pragma once

#include <cstddef>
#include <vector>

#include "core/attention.hpp"
#include "kernels/cuda/reduce.hpp"

namespace carrier::cuda {

template <class S, class Exp>
std::vector<float> AttentionForward(const S* q, const S* k, const S* v, const AttentionShape& shape,
                                    double* kernel_seconds = nullptr);

template <class S, class Exp>
std::vector<double> TimeAttention(const S* q, const S* k, const S* v, const AttentionShape& shape,
                                  int repeats);

#define CARRIER_CUDA_ATTENTION_INSTANCES(X)      \
  X(::carrier::Half, ::carrier::PortableExp)     \
  X(::carrier::Half, ::carrier::FastExp)         \
  X(::carrier::BFloat16, ::carrier::PortableExp) \
  X(::carrier::BFloat16, ::carrier::FastExp)

#define CARRIER_CUDA_EXTERN_ATTENTION(S, E)                                                  \
  extern template std::vector<float> AttentionForward<S, E>(const S*, const S*, const S*,    \
                                                            const AttentionShape&, double*); \
  extern template std::vector<double> TimeAttention<S, E>(const S*, const S*, const S*,      \
                                                          const AttentionShape&, int);
CARRIER_CUDA_ATTENTION_INSTANCES(CARRIER_CUDA_EXTERN_ATTENTION)
#undef CARRIER_CUDA_EXTERN_ATTENTION

}  // namespace carrier::cuda
