// The simd backend of eval and sweep (backends.hpp): kernels/simd through cpu_kernels.hpp.
// An empty schedule runs the native SIMD schedule of the current target; the executed schedule
// text is returned and replays to the same bits.
#include "backends/backends.hpp"
#include "core/carriers/all.hpp"

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

template <template <class> class CT>
Result RunSimdCarrier(const Request& request) {
  return cpu::RunCarrier<SimdKernels, CT>(request, "simd");
}
Result RunSimdSoftmax(const Request& request) {
  return cpu::RunSoftmax<SimdKernels>(request, "simd");
}
Result RunSimdDot(const Request& request) { return cpu::RunDot<SimdKernels>(request, "simd"); }

#define CARRIER_INSTANTIATE(CT) template Result RunSimdCarrier<CT>(const Request&);
CARRIER_CPU_KERNEL_CARRIERS(CARRIER_INSTANTIATE)
#undef CARRIER_INSTANTIATE

}  // namespace carrier::backends

#else

namespace carrier::backends {

namespace {
[[noreturn]] void SimdNotBuilt() {
  throw Unavailable(
      "backend simd is not built: Highway (libhwy-dev) was not found at configure time");
}
}  // namespace

template <template <class> class CT>
Result RunSimdCarrier(const Request&) {
  SimdNotBuilt();
}
Result RunSimdSoftmax(const Request&) { SimdNotBuilt(); }
Result RunSimdDot(const Request&) { SimdNotBuilt(); }

#define CARRIER_INSTANTIATE(CT) template Result RunSimdCarrier<CT>(const Request&);
CARRIER_CPU_KERNEL_CARRIERS(CARRIER_INSTANTIATE)
#undef CARRIER_INSTANTIATE

}  // namespace carrier::backends

#endif
