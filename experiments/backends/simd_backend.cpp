// The simd backend of eval and sweep (backends.hpp): kernels/simd through cpu_kernels.hpp.
// An empty schedule runs the native SIMD schedule of the current target; the executed schedule
// text is returned and replays to the same bits.
#include "backends/backends.hpp"

#if defined(CARRIER_HAVE_SIMD_KERNELS) && CARRIER_HAVE_SIMD_KERNELS
#include "backends/cpu_kernels.hpp"

namespace carrier::backends {
namespace {

struct SimdKernels {
  template <class C, class TS>
  static Schedule Executed(const std::string& text) {
    if (text.empty()) return simd::NativeSchedule<C, TS>();
    Schedule s = ParseSchedule(text);
    simd::CheckRealisable<C, TS>(s);
    return s;
  }
  template <class C, class TS>
  static typename C::State Reduce(const TS* x, std::size_t n, const Schedule& s) {
    return simd::Reduce<C, TS>(x, n, s);
  }
  template <class TS>
  static auto ReduceDot(const TS* a, const TS* b, std::size_t n, const Schedule& s) {
    return simd::ReduceDot<TS>(a, b, n, s);
  }
};

}  // namespace

Result RunSimd(const Request& request) { return cpu::Run<SimdKernels>(request, "simd"); }

}  // namespace carrier::backends

#else

namespace carrier::backends {

Result RunSimd(const Request&) {
  throw Unavailable("backend simd is not built: Highway (libhwy-dev) was not found at configure time");
}

}  // namespace carrier::backends

#endif
