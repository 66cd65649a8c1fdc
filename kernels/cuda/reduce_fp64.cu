// kernels/cuda/reduce_fp64.cu: the block/grid reductions for fp64 storage, double compute (one
// instantiation file per storage type keeps nvcc's work per file small).
#include "kernels/cuda/reduce_impl.cuh"

CARRIER_CUDA_REDUCE_CARRIERS(CARRIER_CUDA_INSTANTIATE_REDUCE, double, double)
