// kernels/simd/simd_bf16.cc: the dispatched kernels for bf16 (promoted exactly to fp32) storage,
// one Highway translation unit (HWY_EXPORT takes no template in Highway 1.0.3, so each storage type
// gets its own file, as hwy/contrib/sort does). The kernels themselves live in carriers-inl.h.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/simd_bf16.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/simd/carriers-inl.h"

HWY_BEFORE_NAMESPACE();
namespace carrier::simd {
namespace HWY_NAMESPACE {

void ReduceBF16Target(const detail::ReduceArgs& args) { ReduceImpl<hwy::bfloat16_t>(args); }
void SoftmaxBF16Target(const detail::SoftmaxArgs& args) { SoftmaxImpl<hwy::bfloat16_t>(args); }

}  // namespace HWY_NAMESPACE
}  // namespace carrier::simd
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace carrier::simd {
HWY_EXPORT(ReduceBF16Target);
HWY_EXPORT(SoftmaxBF16Target);

namespace detail {
void ReduceBF16(const ReduceArgs& args) { HWY_DYNAMIC_DISPATCH(ReduceBF16Target)(args); }
void SoftmaxBF16(const SoftmaxArgs& args) { HWY_DYNAMIC_DISPATCH(SoftmaxBF16Target)(args); }

}  // namespace detail
}  // namespace carrier::simd
#endif  // HWY_ONCE
