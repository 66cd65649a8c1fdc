// experiments/backends/backends.hpp: the one door through which eval and sweep reach the fast
// kernels (kernels/simd, kernels/omp, kernels/cuda). The replay backend is not here: it is
// core/replay_oracle.hpp, called by the trial runner directly.
//
// Which op a backend runs is the op table's business (experiments/registry/registry.hpp: an
// entry's `backends` names, per backend, the function below that runs it and the schedules it
// realises). Run<Backend>Carrier<CT> runs the carrier CT<T> (T the compute scalar of the
// storage type: float, or double for fp64) through that backend's kernel; the backend's .cpp
// instantiates it for the carriers its kernels have (kernels/simd's Reduce list), so an entry
// can name only what exists. RunSimd / RunOmp / RunCuda look the request's op up in the table
// (dispatch.cpp) and refuse an op without a kernel there with one line naming the ops it has.
//
// Contract of every Run*: the values in `a` (and `b` for dot) are already rounded to the storage
// format, so converting them to it is exact; the result has the same component layout as the
// replay path of `carrier eval` (the entry's components; argmax: {value} + index; softmax and
// attention: one output per output element), and `schedule` is the text of the schedule the
// kernel actually executed, which core's ParseSchedule and BuildTree accept and whose ReplayOracle
// gives the same bits. A backend that is not built, has no device, or lacks the op/type
// combination throws Unavailable with a one-line reason (the sweep records it in the trial's
// row; eval exits 2 with it).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/carriers/online_softmax.hpp"
#include "precision/math_policy.hpp"

namespace carrier::backends {

class Unavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Request {
  std::string op;        // the op table's name (for dispatch and messages)
  std::string storage;   // fp16 bf16 fp32 fp64
  std::string acc;       // compute type: fp32 fp64
  std::string exp;       // libm portable fast (backends may refuse libm: Unavailable)
  std::string schedule;  // requested schedule text; empty = the backend's default (native)
  std::span<const double> a;
  std::span<const double> b;   // dot: second operand; otherwise empty
  std::uint64_t head_dim = 0;  // attention only
};

struct Result {
  std::vector<long double> components;
  std::int64_t index = -1;  // argmax
  std::string schedule;     // the schedule executed (replays to the same bits)
  double seconds = 0;       // kernel time only, excluding conversions
};

// The exp the kernels reproduce bit for bit (lse and softmax on every backend).
template <class T>
using PortableLse = OnlineSoftmax<T, PortableExp>;

// By the op table (dispatch.cpp).
Result RunSimd(const Request& request);
Result RunOmp(const Request& request);
Result RunCuda(const Request& request);
Result RunBackend(const std::string& backend, const Request& request);

// experiments/backends/simd_backend.cpp
template <template <class> class CT>
Result RunSimdCarrier(const Request& request);
Result RunSimdSoftmax(const Request& request);
Result RunSimdDot(const Request& request);
// experiments/backends/omp_backend.cpp
template <template <class> class CT>
Result RunOmpCarrier(const Request& request);
Result RunOmpSoftmax(const Request& request);
Result RunOmpDot(const Request& request);
// experiments/backends/cuda_backend.cpp
template <template <class> class CT>
Result RunCudaCarrier(const Request& request);
Result RunCudaAttention(const Request& request);

}  // namespace carrier::backends

// The carriers kernels/simd (and so kernels/omp) has a Reduce for (its instantiation list in
// kernels/simd/simd.cpp); the simd and omp backends instantiate Run...Carrier for exactly
// these, built or not (unbuilt, they throw Unavailable).
#define CARRIER_CPU_KERNEL_CARRIERS(X) \
  X(::carrier::Sum)                    \
  X(::carrier::Compensated)            \
  X(::carrier::Max)                    \
  X(::carrier::ArgMax)                 \
  X(::carrier::Welford)                \
  X(::carrier::ScaledNorm2)            \
  X(::carrier::backends::PortableLse)
// kernels/cuda's (kernels/cuda/reduce.hpp's list, lse as PortableLse).
#define CARRIER_CUDA_KERNEL_CARRIERS(X) CARRIER_CPU_KERNEL_CARRIERS(X)
