// experiments/inputs/generators_x86.cpp: the normal family's block routines (normal_block.hpp)
// compiled for AVX2 and for AVX-512 (F, DQ for the 64-bit multiplies, VL) by per-function
// target attributes, the rest of the build staying baseline x86-64. One run-time check decides
// for this family: core/cpu_features.hpp's HostAvx512() for AVX-512, the CPU's avx2 flag read
// once below for AVX2. The same source as the baseline build, so the same bits
// (normal_block.hpp). GCC only: the vector forms were measured and tested with it; elsewhere
// (clang's sanitizer build, other CPUs) the baseline build alone runs.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/cpu_features.hpp"
#include "inputs/normal_block.hpp"

namespace carrier::inputs::draw_detail {

#if CARRIER_X86_KERNELS && !defined(__clang__)
namespace {
[[gnu::target("avx2")]] void NormalAvx2(std::uint64_t ms, std::uint64_t lo, std::size_t count,
                                        double* out) {
  NormalBlockBody(ms, lo, count, out);
}
[[gnu::target("avx2")]] void BoxMullerAvx2(const double* u1, const double* u2, std::size_t n,
                                           double* out) {
  BoxMullerBody(u1, u2, n, out);
}
[[gnu::target("avx512f,avx512dq,avx512vl")]] void NormalAvx512(std::uint64_t ms, std::uint64_t lo,
                                                               std::size_t count, double* out) {
  NormalBlockBody(ms, lo, count, out);
}
[[gnu::target("avx512f,avx512dq,avx512vl")]] void BoxMullerAvx512(const double* u1,
                                                                  const double* u2, std::size_t n,
                                                                  double* out) {
  BoxMullerBody(u1, u2, n, out);
}
}  // namespace

void AddX86Variants(std::vector<DrawVariant>& v) {
  static const bool avx2 = __builtin_cpu_supports("avx2") != 0;
  if (avx2) v.push_back({"avx2", NormalAvx2, BoxMullerAvx2});
  const Avx512Features& a = HostAvx512();
  if (a.HasFDq() && a.vl) v.push_back({"avx512", NormalAvx512, BoxMullerAvx512});
}
#else
void AddX86Variants(std::vector<DrawVariant>&) {}
#endif

}  // namespace carrier::inputs::draw_detail
