// gpu_mma_tests: the real tensor core against core/mma.hpp's fused node, bit for bit.
//
// One warp runs mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 on random fp16 A (16x16),
// B (16x8) and fp32 C (16x8); every D[i][j] must equal MmaFusedChain(node, C[i][j], row i of A
// times column j of B) for the node of this GPU: sm_80/86/87 ampere and sm_89 ada (two fused
// k8 halves, F = 24), sm_90 and sm_100/120 (one fused k16 step, F = 25: MMA-Sim nv.py, where
// `is_split_k` names Ampere and Ada only). The fragment layout is the PTX ISA's for m16n8k16
// (.f16 A row-major, B column-major, f32 C/D): groupID = lane / 4, t = lane % 4.
//
// Exits 77 (CTest: Skipped) without a GPU or on a GPU older than sm_80; 1 on any mismatch,
// printing the first ones with their inputs; 0 when every element of every trial agrees.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/carriers/pairs.hpp"
#include "core/hash.hpp"
#include "core/mma.hpp"

namespace {

__global__ void MmaSync16816(const __half* a, const __half* b, const float* c, float* d) {
  const int lane = threadIdx.x, g = lane >> 2, t = lane & 3;
  auto pack = [](__half lo, __half hi) {
    return static_cast<unsigned>(__half_as_ushort(lo)) |
           (static_cast<unsigned>(__half_as_ushort(hi)) << 16);
  };
  // A row-major 16x16: a[r * 16 + k]; B column-major 16x8: b[n * 16 + k]; C, D row-major 16x8.
  const unsigned a0 = pack(a[g * 16 + 2 * t], a[g * 16 + 2 * t + 1]);
  const unsigned a1 = pack(a[(g + 8) * 16 + 2 * t], a[(g + 8) * 16 + 2 * t + 1]);
  const unsigned a2 = pack(a[g * 16 + 2 * t + 8], a[g * 16 + 2 * t + 9]);
  const unsigned a3 = pack(a[(g + 8) * 16 + 2 * t + 8], a[(g + 8) * 16 + 2 * t + 9]);
  const unsigned b0 = pack(b[g * 16 + 2 * t], b[g * 16 + 2 * t + 1]);
  const unsigned b1 = pack(b[g * 16 + 2 * t + 8], b[g * 16 + 2 * t + 9]);
  float d0, d1, d2, d3;
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%10,%11,%12,%13};\n"
      : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c[g * 8 + 2 * t]),
        "f"(c[g * 8 + 2 * t + 1]), "f"(c[(g + 8) * 8 + 2 * t]), "f"(c[(g + 8) * 8 + 2 * t + 1]));
  d[g * 8 + 2 * t] = d0;
  d[g * 8 + 2 * t + 1] = d1;
  d[(g + 8) * 8 + 2 * t] = d2;
  d[(g + 8) * 8 + 2 * t + 1] = d3;
}

// A finite fp16 value: sign, exponent field in [lo, lo + width), 10 random fraction bits.
float RandomHalf(std::uint64_t r, int lo, int width) {
  const int ef = lo + static_cast<int>((r >> 12) % static_cast<std::uint64_t>(width));
  const double m = static_cast<double>(r & 1023);
  double v = ef == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, ef - 25);
  if ((r >> 40) & 1) v = -v;
  if (((r >> 41) & 15) == 0) v = 0;
  return static_cast<float>(v);
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no GPU: skipped\n");
    return 77;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  const int cc = prop.major * 10 + prop.minor;
  const char* name = cc >= 90 ? (cc >= 100 ? "blackwell" : "hopper") : cc == 89 ? "ada" : "ampere";
  if (cc < 80) {
    std::printf("sm_%d has no mma.sync m16n8k16: skipped\n", cc);
    return 77;
  }
  // mma.sync on Hopper and Blackwell is one fused k16 step with F = 25: the hopper/blackwell
  // node; Ampere and Ada split it.
  const carrier::MmaNode node = carrier::FindMmaProfile(name)->node;
  std::printf("%s (sm_%d): mma.sync m16n8k16 against profile %s (%u terms per step, F = %d)\n",
              prop.name, cc, name, node.terms, node.frac_bits);
  __half *da, *db;
  float *dc, *dd;
  cudaMalloc(&da, 256 * sizeof(__half));
  cudaMalloc(&db, 128 * sizeof(__half));
  cudaMalloc(&dc, 128 * sizeof(float));
  cudaMalloc(&dd, 128 * sizeof(float));
  std::vector<float> a(256), b(128), c(128), d(128);
  std::vector<__half> ha(256), hb(128);
  int mismatches = 0, checked = 0;
  const int trials = 2000;
  for (int trial = 0; trial < trials && mismatches < 10; ++trial) {
    const int width = 1 + trial % 30, lo = (trial * 7) % (31 - width);
    for (int i = 0; i < 256; ++i)
      a[i] = RandomHalf(carrier::SplitMix64(trial * 1000003ULL + i), lo, width);
    for (int i = 0; i < 128; ++i)
      b[i] = RandomHalf(carrier::SplitMix64(trial * 1000033ULL + 7777 + i), lo, width);
    for (int i = 0; i < 128; ++i) {  // an fp32 accumulator near the products' scale
      const std::uint64_t r = carrier::SplitMix64(trial * 1000037ULL + 99999 + i);
      const double m = static_cast<double>((r & 0xffffff) | 0x800000);
      const int e = 2 * (lo + width / 2 - 15) + static_cast<int>((r >> 30) % 9) - 4 - 23;
      c[i] = ((r >> 50) & 3) == 0 ? 0.0f
                                  : static_cast<float>(((r >> 52) & 1 ? -1 : 1) * std::ldexp(m, e));
    }
    for (int i = 0; i < 256; ++i) ha[i] = __float2half(a[i]);
    for (int i = 0; i < 128; ++i) hb[i] = __float2half(b[i]);
    cudaMemcpy(da, ha.data(), 256 * sizeof(__half), cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb.data(), 128 * sizeof(__half), cudaMemcpyHostToDevice);
    cudaMemcpy(dc, c.data(), 128 * sizeof(float), cudaMemcpyHostToDevice);
    MmaSync16816<<<1, 32>>>(da, db, dc, dd);
    if (cudaMemcpy(d.data(), dd, 128 * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) {
      std::printf("CUDA error: %s\n", cudaGetErrorString(cudaGetLastError()));
      return 1;
    }
    for (int i = 0; i < 16; ++i) {
      for (int j = 0; j < 8; ++j) {
        std::vector<carrier::ValuePair<float>> p(16);
        for (int k = 0; k < 16; ++k) p[k] = {a[i * 16 + k], b[j * 16 + k]};
        const float want = static_cast<float>(
            carrier::MmaFusedChain(node, static_cast<double>(c[i * 8 + j]), p.data(), 16));
        const float got = d[i * 8 + j];
        ++checked;
        std::uint32_t gw, ww;
        std::memcpy(&gw, &got, 4);
        std::memcpy(&ww, &want, 4);
        if (gw != ww && !(std::isnan(got) && std::isnan(want))) {
          if (++mismatches <= 10) {
            std::printf("trial %d D[%d][%d]: gpu %a model %a; c %a\n", trial, i, j, got, want,
                        c[i * 8 + j]);
            for (int k = 0; k < 16; ++k) std::printf("  %a * %a\n", p[k].a, p[k].b);
          }
        }
      }
    }
  }
  std::printf("%d elements compared, %d mismatches\n", checked, mismatches);
  return mismatches == 0 ? 0 : 1;
}
