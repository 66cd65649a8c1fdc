// kernels/simd/simd_f64.cc: the dispatched kernels for fp64 storage, one Highway translation unit
// (HWY_EXPORT takes no template in Highway 1.0.3, so each storage type gets its own file, as
// hwy/contrib/sort does). The kernels themselves live in carriers-inl.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/simd_f64.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd/carriers-inl.h"

HWY_BEFORE_NAMESPACE();
namespace carrier::simd {
namespace HWY_NAMESPACE {

void ReduceF64Target(const detail::ReduceArgs& args) { ReduceImpl<double>(args); }
void SoftmaxF64Target(const detail::SoftmaxArgs& args) { SoftmaxImpl<double>(args); }
std::uint32_t NativeLanesF64Target() { return NativeLanes<double>(); }
}  // namespace HWY_NAMESPACE
}  // namespace carrier::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace carrier::simd {
HWY_EXPORT(ReduceF64Target);
HWY_EXPORT(SoftmaxF64Target);
HWY_EXPORT(NativeLanesF64Target);
namespace detail {
void ReduceF64(const ReduceArgs& args) { HWY_DYNAMIC_DISPATCH(ReduceF64Target)(args); }
void SoftmaxF64(const SoftmaxArgs& args) { HWY_DYNAMIC_DISPATCH(SoftmaxF64Target)(args); }
std::uint32_t NativeLanesF64() { return HWY_DYNAMIC_DISPATCH(NativeLanesF64Target)(); }
}  // namespace detail
}  // namespace carrier::simd
#endif  // HWY_ONCE
