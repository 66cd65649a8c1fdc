// kernels/cuda/reduce_fp32_fp64.cu: the block/grid reductions for fp32 storage, double compute
// (its own file, so the instantiation files build in parallel in similar times).
#include "kernels/cuda/reduce_impl.cuh"

CARRIER_CUDA_REDUCE_CARRIERS(CARRIER_CUDA_INSTANTIATE_REDUCE, double, float)
