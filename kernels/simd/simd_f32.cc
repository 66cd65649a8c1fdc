// kernels/simd/simd_f32.cc: the dispatched kernels for fp32 storage, one Highway translation unit
// (HWY_EXPORT takes no template in Highway 1.0.3, so each storage type gets its own file, as
// hwy/contrib/sort does). The kernels themselves live in carriers-inl.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/simd_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd/carriers-inl.h"

HWY_BEFORE_NAMESPACE();
namespace carrier::simd {
namespace HWY_NAMESPACE {

void ReduceF32Target(const detail::ReduceArgs& args) { ReduceImpl<float>(args); }
void SoftmaxF32Target(const detail::SoftmaxArgs& args) { SoftmaxImpl<float>(args); }
std::uint32_t NativeLanesF32Target() { return NativeLanes<float>(); }
}  // namespace HWY_NAMESPACE
}  // namespace carrier::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace carrier::simd {
HWY_EXPORT(ReduceF32Target);
HWY_EXPORT(SoftmaxF32Target);
HWY_EXPORT(NativeLanesF32Target);
namespace detail {
void ReduceF32(const ReduceArgs& args) { HWY_DYNAMIC_DISPATCH(ReduceF32Target)(args); }
void SoftmaxF32(const SoftmaxArgs& args) { HWY_DYNAMIC_DISPATCH(SoftmaxF32Target)(args); }
std::uint32_t NativeLanesF32() { return HWY_DYNAMIC_DISPATCH(NativeLanesF32Target)(); }
}  // namespace detail
}  // namespace carrier::simd
#endif  // HWY_ONCE
