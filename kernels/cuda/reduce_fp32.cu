// kernels/cuda/reduce_fp32.cu: the block/grid reductions for fp32 storage, float compute (one
// instantiation file per storage type keeps nvcc's work per file small).
#include "kernels/cuda/reduce_impl.cuh"

CARRIER_CUDA_REDUCE_CARRIERS(CARRIER_CUDA_INSTANTIATE_REDUCE, float, float)
