// Half, BFloat16 and RoundToFormat's fp8 against CUDA's own host-side conversions from
// cuda_fp16.h, cuda_bf16.h and cuda_fp8.h (plain C++ here: no nvcc, no GPU). Compiled only
// when tests/precision/CMakeLists.txt found those headers and checked that g++ accepts them.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "precision/bfloat16.hpp"
#include "precision/format.hpp"
#include "precision/half.hpp"
#include "precision/rounding.hpp"
#include "reference_rounding.hpp"
#include "rounding_test_util.hpp"
#include "support/test_support.hpp"

namespace carrier {
namespace {

static_assert(sizeof(__half) == sizeof(Half) && sizeof(__nv_bfloat16) == sizeof(BFloat16));

std::uint16_t CudaHalfBits(float x) {
  const __half h = __float2half_rn(x);
  std::uint16_t b;
  std::memcpy(&b, &h, sizeof b);
  return b;
}
std::uint16_t CudaHalfBitsFromDouble(double x) {
  const __half h = __double2half(x);
  std::uint16_t b;
  std::memcpy(&b, &h, sizeof b);
  return b;
}
std::uint16_t CudaBf16Bits(float x) {
  const __nv_bfloat16 h = __float2bfloat16_rn(x);
  std::uint16_t b;
  std::memcpy(&b, &h, sizeof b);
  return b;
}
std::uint16_t CudaBf16BitsFromDouble(double x) {
  const __nv_bfloat16 h = __double2bfloat16(x);
  std::uint16_t b;
  std::memcpy(&b, &h, sizeof b);
  return b;
}

// An fp8 byte decoded by CUDA itself (fp8 -> half raw), then widened by our Half.
double CudaFp8Value(__nv_fp8_storage_t v, __nv_fp8_interpretation_t kind) {
  const __half_raw raw = __nv_cvt_fp8_to_halfraw(v, kind);
  return Half::FromBits(raw.x).ToDouble();
}

struct Compare {
  std::uint64_t mismatches = 0;
  bool from_double = false;
  std::uint64_t first_input = 0;  // fp32 or fp64 bits
  std::uint16_t first_ours = 0, first_cuda = 0;
};

void Note(Compare* c, std::uint64_t u, std::uint16_t ours, std::uint16_t cuda) {
  if (c->mismatches++ == 0) {
    c->first_input = u;
    c->first_ours = ours;
    c->first_cuda = cuda;
  }
}

void CheckFloatInputs(const std::vector<std::uint32_t>& inputs, Compare* half, Compare* bf16) {
  for (std::uint32_t u : inputs) {
    const float x = std::bit_cast<float>(u);
    const std::uint16_t h = Half(x).bits, hc = CudaHalfBits(x);
    if (h != hc) Note(half, u, h, hc);
    const std::uint16_t b = BFloat16(x).bits, bc = CudaBf16Bits(x);
    if (b != bc) Note(bf16, u, b, bc);
  }
}

void Report(const char* what, const Compare& c, std::uint64_t total) {
  std::printf("  %-36s mismatches %llu of %llu\n", what,
              static_cast<unsigned long long>(c.mismatches),
              static_cast<unsigned long long>(total));
  const double first = c.from_double
                           ? std::bit_cast<double>(c.first_input)
                           : std::bit_cast<float>(static_cast<std::uint32_t>(c.first_input));
  INFO(what << ": " << c.mismatches << " mismatches; first at "
            << (c.from_double ? "fp64 " : "fp32 ")
            << test::Hex(c.first_input, c.from_double ? 16 : 8) << " (" << test::Exact(first)
            << ") ours " << test::Hex(c.first_ours, 4) << " cuda " << test::Hex(c.first_cuda, 4));
  CHECK(c.mismatches == 0);
}

TEST_CASE("Half and BFloat16 match CUDA's host conversions on a sample", "[fast]") {
  std::vector<std::uint32_t> inputs = test::SpecialFloatPatterns(Fp16(), 1);
  for (std::uint32_t u : test::SpecialFloatPatterns(BF16(), 2)) inputs.push_back(u);
  for (std::uint32_t u : test::RandomFloatPatterns(Fp16(), test::Trials(200000), 3))
    inputs.push_back(u);
  for (std::uint32_t u : test::RandomFloatPatterns(BF16(), test::Trials(200000), 4))
    inputs.push_back(u);
  Compare half, bf16;
  CheckFloatInputs(inputs, &half, &bf16);
  Report("Half(float) vs __float2half_rn", half, inputs.size());
  Report("BFloat16(float) vs __float2bfloat16_rn", bf16, inputs.size());

  // From double: __double2half / __double2bfloat16 also round once.
  test::Rng rng(5);
  Compare half_d, bf16_d;
  half_d.from_double = bf16_d.from_double = true;
  const int n = test::Trials(200000);
  for (int i = 0; i < n; ++i) {
    const double x = std::ldexp(rng.Uniform(-2, 2), static_cast<int>(rng.Below(300)) - 150);
    const std::uint16_t h = Half(x).bits, hc = CudaHalfBitsFromDouble(x);
    if (h != hc) Note(&half_d, std::bit_cast<std::uint64_t>(x), h, hc);
    const std::uint16_t b = BFloat16(x).bits, bc = CudaBf16BitsFromDouble(x);
    if (b != bc) Note(&bf16_d, std::bit_cast<std::uint64_t>(x), b, bc);
  }
  Report("Half(double) vs __double2half", half_d, n);
  Report("BFloat16(double) vs __double2bfloat16", bf16_d, n);
}

TEST_CASE("RoundToFormat fp8 rne matches CUDA's __nv_cvt_double_to_fp8", "[fast]") {
  struct Fp8Case {
    Format format;
    __nv_fp8_interpretation_t kind;
    __nv_saturation_t saturation;
  };
  const Fp8Case cases[] = {{Fp8E4M3(), __NV_E4M3, __NV_NOSAT},
                           {Fp8E4M3Sat(), __NV_E4M3, __NV_SATFINITE},
                           {Fp8E5M2(), __NV_E5M2, __NV_NOSAT}};
  for (const Fp8Case& c : cases) {
    std::vector<std::uint32_t> inputs = test::SpecialFloatPatterns(c.format, 6);
    for (std::uint32_t u : test::RandomFloatPatterns(c.format, test::Trials(200000), 7))
      inputs.push_back(u);
    std::uint64_t mismatches = 0;
    std::string first;
    for (std::uint32_t u : inputs) {
      const double x = std::bit_cast<float>(u);
      const double ours = RoundToFormat(x, c.format, Rounding::kNearestEven);
      const double cuda = CudaFp8Value(__nv_cvt_double_to_fp8(x, c.saturation, c.kind), c.kind);
      const bool same = std::isnan(ours) ? std::isnan(cuda)
                                         : std::bit_cast<std::uint64_t>(ours) ==
                                               std::bit_cast<std::uint64_t>(cuda);
      if (!same && mismatches++ == 0)
        first = "input fp32 " + test::Hex(u, 8) + " (" + test::Exact(x) + "): ours " +
                test::Exact(ours) + " cuda " + test::Exact(cuda);
    }
    std::printf("  %-36s mismatches %llu of %zu\n",
                (c.format.name + " rne vs __nv_cvt_double_to_fp8").c_str(),
                static_cast<unsigned long long>(mismatches), inputs.size());
    INFO("format " << c.format.name << " mode rne: " << mismatches << " mismatches; first "
                   << first);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("Half and BFloat16 match CUDA's host conversions on all 2^32 floats", "[slow]") {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<std::uint64_t> next{0};
  std::mutex mutex;
  Compare half, bf16;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      Compare h, b;
      std::vector<std::uint32_t> block(1 << 20);
      for (;;) {
        const std::uint64_t begin = next.fetch_add(block.size());
        if (begin >= (std::uint64_t{1} << 32)) break;
        for (std::size_t i = 0; i < block.size(); ++i)
          block[i] = static_cast<std::uint32_t>(begin + i);
        CheckFloatInputs(block, &h, &b);
      }
      std::lock_guard<std::mutex> lock(mutex);
      for (auto [total, local] : {std::pair{&half, &h}, std::pair{&bf16, &b}}) {
        if (total->mismatches == 0)
          *total = *local;
        else
          total->mismatches += local->mismatches;
      }
    });
  for (std::thread& th : pool) th.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("exhaustive Half/BFloat16 vs CUDA host conversions (%.1f s):\n", seconds);
  Report("Half(float) vs __float2half_rn", half, std::uint64_t{1} << 32);
  Report("BFloat16(float) vs __float2bfloat16_rn", bf16, std::uint64_t{1} << 32);
}

}  // namespace
}  // namespace carrier
