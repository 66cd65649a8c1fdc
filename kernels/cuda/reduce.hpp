// kernels/cuda/reduce.hpp: the plain C++ door to the CUDA block/grid reductions (no CUDA types;
// g++ code calls it). Defined in reduce_impl.cuh, instantiated in reduce_<storage>.cu for the
// carriers and types listed in CARRIER_CUDA_REDUCE_INSTANCES below.
//
// Reduce<C, S>(x, n, schedule): copies the n stored values x to the device, runs the kernels of
// `schedule` (block_reduce.cuh) and returns the final State, which equals
// ReplayOracle<C>(BuildTree(schedule, n), inputs) bit for bit, the inputs being x converted exactly
// to C's compute type (for ArgMax: with their index). Kernel time (both launches, cudaEvent) goes
// to *kernel_seconds when given.
// TimeReduce<C, S>: the same on data copied once, one warm-up and `repeats` timed runs (seconds
// each), for the benchmark.
//
// Errors: Unavailable when no GPU can be used (no device, no driver: the reason is in what());
// ScheduleError when the schedule is invalid (core/cuda_schedule.hpp), needs too much shared
// memory for C's state, names a thread count outside kCompiledThreads, asks for the xor butterfly
// for a carrier that is not bitwise commutative, permutes inputs (striped with two or more
// items per thread) for a non-commutative carrier, or lifts tiles for a carrier without
// LiftTile; CudaFailure for a CUDA runtime error.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/carriers/all.hpp"
#include "core/cuda_schedule.hpp"
#include "core/schedule.hpp"
#include "precision/bfloat16.hpp"
#include "precision/half.hpp"
#include "precision/math_policy.hpp"

namespace carrier::cuda {

class Unavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CudaFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Block sizes the dispatcher instantiates (THREADS of the schedule must be one of them).
// Three sizes keep nvcc's time per instantiation file near half a minute (each adds every
// carrier x warp tree x block tree x two kernels).
inline constexpr int kCompiledThreads[] = {32, 256, 1024};

int DeviceCount();         // 0 on any error (no driver returns an error, not 0 devices)
std::string DeviceName();  // name of device 0, "" when none
// Throws Unavailable("no GPU: <reason>") unless a device can be used.
void RequireDevice();

template <class C, class S>
typename C::State Reduce(const S* x, std::size_t n, const CudaSchedule& schedule,
                         double* kernel_seconds = nullptr);

template <class C, class S>
std::vector<double> TimeReduce(const S* x, std::size_t n, const CudaSchedule& schedule, int repeats,
                               typename C::State* result = nullptr);

template <class T>
using LsePortable = OnlineSoftmax<T, PortableExp>;

// The instantiated (carrier, storage) pairs: X(CARRIER, STORAGE) for compute type T. Log-sum-exp
// runs with the portable exp only: it is the one whose bits the CPU replay reproduces.
#define CARRIER_CUDA_REDUCE_CARRIERS(X, T, S) \
  X(::carrier::Sum<T>, S)                     \
  X(::carrier::Compensated<T>, S)             \
  X(::carrier::Max<T>, S)                     \
  X(::carrier::ArgMax<T>, S)                  \
  X(::carrier::cuda::LsePortable<T>, S)       \
  X(::carrier::Welford<T>, S)                 \
  X(::carrier::ScaledNorm2<T>, S)
// Storage -> compute pairs, one instantiation file each (reduce_fp16.cu, ...).
#define CARRIER_CUDA_REDUCE_INSTANCES(X)                      \
  CARRIER_CUDA_REDUCE_CARRIERS(X, float, ::carrier::Half)     \
  CARRIER_CUDA_REDUCE_CARRIERS(X, float, ::carrier::BFloat16) \
  CARRIER_CUDA_REDUCE_CARRIERS(X, float, float)               \
  CARRIER_CUDA_REDUCE_CARRIERS(X, double, float)              \
  CARRIER_CUDA_REDUCE_CARRIERS(X, double, double)

#define CARRIER_CUDA_EXTERN_REDUCE(C, S)                                                           \
  extern template typename C::State Reduce<C, S>(const S*, std::size_t, const CudaSchedule&,       \
                                                 double*);                                         \
  extern template std::vector<double> TimeReduce<C, S>(const S*, std::size_t, const CudaSchedule&, \
                                                       int, typename C::State*);
CARRIER_CUDA_REDUCE_INSTANCES(CARRIER_CUDA_EXTERN_REDUCE)
#undef CARRIER_CUDA_EXTERN_REDUCE

}  // namespace carrier::cuda
