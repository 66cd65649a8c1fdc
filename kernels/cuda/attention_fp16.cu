// kernels/cuda/attention_fp16.cu: the FlashAttention forward kernel for fp16 inputs, portable and
// fast exp, head_dim 64 and 128, every compiled key tile size.
#include "kernels/cuda/attention_impl.cuh"

CARRIER_CUDA_INSTANTIATE_ATTENTION(::carrier::Half, ::carrier::PortableExp)
CARRIER_CUDA_INSTANTIATE_ATTENTION(::carrier::Half, ::carrier::FastExp)
