// carrier_mma_dump: the GPU's warp-level matrix instruction as a black box, for the tf32 and
// bf16 profiles (issue 34). Through the WMMA API (the compiler lays out the fragments), each
// warp computes D = A B + C on one 16 x 16 tile with K = 8 (tf32: one m16n8k8 step per half)
// or K = 16 (bf16), from seeded random inputs whose entries are exact in the input format
// (exponents spread over up to 24 binades, zeros, both signs) and a random fp32 C (zero in
// a quarter of the tiles). It writes OUT_DIR/mma_<type>.bin: int32 tiles, int32 k, then
// float32 A[tiles][16][k] (row-major), Bt[tiles][16][k] (column j of B as a row), C and D
// [tiles][16][16]. scripts/gpu_tensor_core.py mma compares D with the mma: profiles.
//
//   carrier_mma_dump OUT_DIR [--tiles N]
//
// Exits 77 without a GPU (or below sm_80), 2 on bad arguments.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace nvcuda;

// One 16 x 16 tile per warp: D = A B + C with K = kK, A row-major, B given column-major (Bt),
// Elem the fragment's element type (wmma::precision::tf32 or __nv_bfloat16), In the stored one.
template <class Elem, class In, int kK>
__global__ void Tiles(const In* a, const In* bt, const float* c, float* d) {
  const int t = blockIdx.x;
  wmma::fragment<wmma::matrix_a, 16, 16, kK, Elem, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, kK, Elem, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, kK, float> fc;
  wmma::load_matrix_sync(fa, a + t * 16 * kK, kK);
  wmma::load_matrix_sync(fb, bt + t * 16 * kK, kK);
  wmma::load_matrix_sync(fc, c + t * 256, 16, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(d + t * 256, fc, 16, wmma::mem_row_major);
}

std::uint64_t SplitMix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// An exact value with `frac` fraction bits, exponent in [top - spread, top].
float RandomValue(std::uint64_t& s, int frac, int top, int spread) {
  const std::uint64_t r = SplitMix(s);
  if ((r & 15) == 0) return 0.0f;
  const int e = top - static_cast<int>((r >> 8) % static_cast<std::uint64_t>(spread + 1));
  const double m = 1.0 + static_cast<double>((r >> 20) & ((1u << frac) - 1)) / (1u << frac);
  const double v = std::ldexp(m, e);
  return static_cast<float>((r >> 4) & 1 ? -v : v);
}

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "carrier_mma_dump: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void Write(const std::string& path, int tiles, int k, const std::vector<float>& a,
           const std::vector<float>& bt, const std::vector<float>& c, const std::vector<float>& d) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::fprintf(stderr, "carrier_mma_dump: cannot write %s\n", path.c_str());
    std::exit(2);
  }
  const std::int32_t head[2] = {tiles, k};
  std::fwrite(head, sizeof head, 1, f);
  for (const auto* v : {&a, &bt, &c, &d}) std::fwrite(v->data(), sizeof(float), v->size(), f);
  std::fclose(f);
  std::printf("wrote %s: %d tiles, k = %d\n", path.c_str(), tiles, k);
}

template <class In, class Launch>
void Run(const std::string& path, int tiles, int k, int frac, Launch launch) {
  std::uint64_t seed = 0x5eed0000ULL + static_cast<std::uint64_t>(k);
  const int spreads[8] = {0, 1, 2, 4, 8, 12, 16, 24};
  std::vector<float> a(static_cast<std::size_t>(tiles) * 16 * k), bt(a.size()), c(tiles * 256u),
      d(c.size());
  for (int t = 0; t < tiles; ++t) {
    for (int r = 0; r < 16; ++r)
      for (int j = 0; j < k; ++j) {
        a[(t * 16 + r) * k + j] = RandomValue(seed, frac, 4, spreads[r % 8]);
        bt[(t * 16 + r) * k + j] = RandomValue(seed, frac, 4, spreads[(r / 2 + t) % 8]);
      }
    for (int e = 0; e < 256; ++e)
      c[t * 256 + e] = (t % 4 == 0) ? 0.0f : RandomValue(seed, 23, 8, 16);
  }
  std::vector<In> ha(a.size()), hb(bt.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ha[i] = static_cast<In>(a[i]);
    hb[i] = static_cast<In>(bt[i]);
  }
  In *da, *db;
  float *dc, *dd;
  Check(cudaMalloc(&da, ha.size() * sizeof(In)), "cudaMalloc");
  Check(cudaMalloc(&db, hb.size() * sizeof(In)), "cudaMalloc");
  Check(cudaMalloc(&dc, c.size() * sizeof(float)), "cudaMalloc");
  Check(cudaMalloc(&dd, d.size() * sizeof(float)), "cudaMalloc");
  Check(cudaMemcpy(da, ha.data(), ha.size() * sizeof(In), cudaMemcpyHostToDevice), "copy");
  Check(cudaMemcpy(db, hb.data(), hb.size() * sizeof(In), cudaMemcpyHostToDevice), "copy");
  Check(cudaMemcpy(dc, c.data(), c.size() * sizeof(float), cudaMemcpyHostToDevice), "copy");
  launch(tiles, da, db, dc, dd);
  Check(cudaGetLastError(), "launch");
  Check(cudaMemcpy(d.data(), dd, d.size() * sizeof(float), cudaMemcpyDeviceToHost), "copy back");
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaFree(dd);
  // Sanity: every output near the exact A B + C (a wrong layout would be far off).
  double worst = 0;
  for (int t = 0; t < tiles; ++t)
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 16; ++j) {
        double exact = c[t * 256 + i * 16 + j], mag = std::fabs(exact);
        for (int q = 0; q < k; ++q) {
          const double p = static_cast<double>(a[(t * 16 + i) * k + q]) * bt[(t * 16 + j) * k + q];
          exact += p;
          mag += std::fabs(p);
        }
        if (mag > 0) worst = std::fmax(worst, std::fabs(d[t * 256 + i * 16 + j] - exact) / mag);
      }
  std::printf("%s: worst |D - exact| / (|C| + sum |a b|) = %.3g\n", path.c_str(), worst);
  Write(path, tiles, k, a, bt, c, d);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: carrier_mma_dump OUT_DIR [--tiles N]\n");
    return 2;
  }
  const std::string out = argv[1];
  int tiles = 64;
  if (argc == 4 && std::string(argv[2]) == "--tiles") tiles = std::atoi(argv[3]);
  if (tiles <= 0 || tiles > 1 << 16) {
    std::fprintf(stderr, "carrier_mma_dump: --tiles must be in [1, 65536]\n");
    return 2;
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("carrier_mma_dump: no GPU\n");
    return 77;
  }
  cudaDeviceProp prop{};
  Check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  if (prop.major < 8) return 77;
  std::printf("%s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  Run<float>(out + "/mma_tf32.bin", tiles, 8, 10,
             [](int n, float* a, float* b, float* c, float* d) {
               Tiles<wmma::precision::tf32, float, 8><<<n, 32>>>(a, b, c, d);
             });
  Run<__nv_bfloat16>(out + "/mma_bf16.bin", tiles, 16, 7,
                     [](int n, __nv_bfloat16* a, __nv_bfloat16* b, float* c, float* d) {
                       Tiles<__nv_bfloat16, __nv_bfloat16, 16><<<n, 32>>>(a, b, c, d);
                     });
  return 0;
}
