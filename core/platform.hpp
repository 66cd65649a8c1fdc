// core/platform.hpp: the one macro that lets every core header compile for host and device.
//
// core/ knows no third-party library. Under nvcc, CARRIER_HD marks a function
// __host__ __device__ so the same carrier code runs in CUDA kernels and in the CPU replay;
// under a plain C++ compiler it expands to nothing.
#pragma once

#if defined(__CUDACC__)
#define CARRIER_HD __host__ __device__
#else
#define CARRIER_HD
#endif
