// experiments/backends/backends.hpp: the one door through which eval and sweep reach the fast
// kernels (kernels/simd, kernels/omp, kernels/cuda). The replay backend is not here: it is
// core/replay.hpp, called by the trial runner directly.
//
// Contract of every Run*: the values in `a` (and `b` for dot) are already rounded to the storage
// format, so converting them to it is exact; the result has the same component layout as the
// replay path of `carrier eval` (sum/kahan/max/lse/norm2/dot: {value}; argmax: {value} + index;
// welford: {mean, var_population, var_sample}; softmax: one output per input), and `schedule`
// is the text of the schedule the kernel actually executed, which core's ParseSchedule and
// BuildTree accept and whose Replay gives the same bits. A backend that is not built, has no
// device, or lacks the op/type combination throws Unavailable with a one-line reason (the sweep
// records it in the trial's row; eval exits 2 with it).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace carrier::backends {

class Unavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Request {
  std::string op;        // sum kahan max argmax lse softmax welford norm2 dot (attention: cuda)
  std::string storage;   // fp16 bf16 fp32 fp64
  std::string acc;       // compute type: fp32 fp64
  std::string exp;       // libm portable fast (backends may refuse libm: Unavailable)
  std::string schedule;  // requested schedule text; empty = the backend's default (native)
  std::span<const double> a;
  std::span<const double> b;  // dot: second operand; otherwise empty
  std::uint64_t head_dim = 0;  // attention only
};

struct Result {
  std::vector<long double> components;
  std::int64_t index = -1;  // argmax
  std::string schedule;     // the schedule executed (replays to the same bits)
  double seconds = 0;       // kernel time only, excluding conversions
};

Result RunSimd(const Request& request);  // experiments/backends/simd_backend.cpp
Result RunOmp(const Request& request);   // experiments/backends/omp_backend.cpp
Result RunCuda(const Request& request);  // experiments/backends/cuda_backend.cpp

}  // namespace carrier::backends
