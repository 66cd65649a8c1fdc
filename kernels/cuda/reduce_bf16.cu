// kernels/cuda/reduce_bf16.cu: the block/grid reductions for bf16 storage, float compute (one
// instantiation file per storage type keeps nvcc's work per file small).
#include "kernels/cuda/reduce_impl.cuh"

CARRIER_CUDA_REDUCE_CARRIERS(CARRIER_CUDA_INSTANTIATE_REDUCE, float, ::carrier::BFloat16)
