// kernels/cuda/attention_bf16.cu: the FlashAttention forward kernel for bf16 inputs, portable and
// fast exp, head_dim 64 and 128, every compiled key tile size.
#include "kernels/cuda/attention_impl.cuh"

CARRIER_CUDA_INSTANTIATE_ATTENTION(::carrier::BFloat16, ::carrier::PortableExp)
CARRIER_CUDA_INSTANTIATE_ATTENTION(::carrier::BFloat16, ::carrier::FastExp)
