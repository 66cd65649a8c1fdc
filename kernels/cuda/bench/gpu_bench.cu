// carrier_gpu_bench: the GPU benchmark of kernels/cuda (README.md, "On a machine with a GPU").
//
//   carrier_gpu_bench [--n N] [--repeats R] [--reduce-only | --attention-only]
//
// Reductions (fp32 storage and compute, n = N, default 2^28): a device-to-device copy of the
// same bytes (bandwidth counted as bytes read + written over its time), CUB's
// DeviceReduce::Sum (bytes read over time; CUB picks its own order: a baseline, not a
// replayable result), and carrier's Sum and log-sum-exp (portable exp) under a few cuda:
// schedules (bytes read over time), each the median of R runs (default 20) in one process, so the
// ratios compare like with like. Attention: the FlashAttention forward kernel, one head, fp16,
// for seq_len 1024..16384, head_dim 64 and 128, block 64 x 64, median of R runs, printed as
// `attention,<seq_len>,<head_dim>,<causal>,<exp>,<seconds>` lines that
// scripts/gpu_bench_attention.py compares with PyTorch's scaled_dot_product_attention.
// Without a GPU: one line "carrier_gpu_bench: no GPU: ..." and exit 2.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cub/device/device_reduce.cuh>
#include <string>
#include <vector>

#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/cuda_util.cuh"
#include "kernels/cuda/reduce.hpp"

namespace {

using carrier::cuda::Check;
using carrier::cuda::DeviceBuffer;
using carrier::cuda::EventTimer;

double Median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return t.empty() ? 0.0 : t[t.size() / 2];
}

std::vector<float> Uniform01(std::size_t n, std::uint64_t seed) {
  std::vector<float> x(n);
  std::uint64_t s = seed;
  for (auto& v : x) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    v = static_cast<float>(s >> 40) * 0x1.0p-24f;
  }
  return x;
}

double CopySeconds(const float* dx, float* dy, std::size_t n) {
  Check(cudaMemcpy(dy, dx, n * sizeof(float), cudaMemcpyDeviceToDevice), "copy warm-up");
  Check(cudaDeviceSynchronize(), "copy warm-up");
  EventTimer timer;
  timer.Start();
  Check(cudaMemcpy(dy, dx, n * sizeof(float), cudaMemcpyDeviceToDevice), "copy");
  return timer.Stop();
}

double CubSumSeconds(const float* dx, std::size_t n, float* dout, void* temp, std::size_t bytes) {
  EventTimer timer;
  timer.Start();
  Check(cub::DeviceReduce::Sum(temp, bytes, dx, dout, static_cast<std::int64_t>(n)), "cub sum");
  return timer.Stop();
}

int RunReduce(std::size_t n, int repeats) {
  cudaDeviceProp prop{};
  Check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const double bytes = static_cast<double>(n) * sizeof(float);
  const std::vector<float> x = Uniform01(n, 42);
  double copy = 0, cub_time = 0;
  {
    DeviceBuffer<float> dx(n), dy(n), dout(1);
    dx.CopyFrom(x.data(), n);
    std::vector<double> t;
    for (int r = 0; r < repeats; ++r) t.push_back(CopySeconds(dx.get(), dy.get(), n));
    copy = Median(t);
    std::size_t temp_bytes = 0;
    Check(cub::DeviceReduce::Sum(nullptr, temp_bytes, dx.get(), dout.get(),
                                 static_cast<std::int64_t>(n)),
          "cub sum size");
    DeviceBuffer<unsigned char> temp(temp_bytes);
    CubSumSeconds(dx.get(), n, dout.get(), temp.get(), temp_bytes);
    t.clear();
    for (int r = 0; r < repeats; ++r)
      t.push_back(CubSumSeconds(dx.get(), n, dout.get(), temp.get(), temp_bytes));
    cub_time = Median(t);
  }
  const double copy_bw = 2 * bytes / copy;
  std::printf("device: %s (%d SMs)\nn = %zu fp32 values (%.0f MiB), median of %d runs\n\n",
              prop.name, prop.multiProcessorCount, n, bytes / (1 << 20), repeats);
  std::printf("%-44s %12s %10s %10s %10s\n", "kernel", "time (ms)", "GB/s", "vs copy", "vs CUB");
  std::printf("%-44s %12.4f %10.1f %10s %10s\n", "device-to-device copy (read + write)", copy * 1e3,
              copy_bw / 1e9, "1.00", "");
  std::printf("%-44s %12.4f %10.1f %10.2f %10s\n", "cub::DeviceReduce::Sum", cub_time * 1e3,
              bytes / cub_time / 1e9, bytes / cub_time / copy_bw, "1.00");
  const std::string persistent = std::to_string(prop.multiProcessorCount * 8);
  const std::vector<std::string> schedules = {
      "cuda:256:16:blocked:shfl:seq:auto", "cuda:256:8:striped:shfl:seq:" + persistent,
      "cuda:1024:8:striped:shfl:pairwise:" + std::to_string(prop.multiProcessorCount * 2),
      "cuda:256:16:blocked:shfl:seq:auto:lift"};
  for (const auto& text : schedules) {
    const carrier::CudaSchedule s =
        carrier::ParseSchedule(text).As<carrier::orders::CudaParams>().cuda;
    auto row = [&](const char* op, double t) {
      std::printf("%-5s %-38s %12.4f %10.1f %10.2f %10.2f\n", op, text.c_str(), t * 1e3,
                  bytes / t / 1e9, bytes / t / copy_bw, cub_time / t);
    };
    if (!s.lift)
      row("sum",
          Median(carrier::cuda::TimeReduce<carrier::Sum<float>, float>(x.data(), n, s, repeats)));
    row("lse", Median(carrier::cuda::TimeReduce<carrier::cuda::LsePortable<float>, float>(
                   x.data(), n, s, repeats)));
  }
  std::printf(
      "\n(vs copy: reduction bandwidth / copy bandwidth, target >= 0.85; vs CUB: CUB's time "
      "/ ours, target >= 0.9)\n");
  return 0;
}

int RunAttention(int repeats) {
  for (std::size_t d : {64u, 128u})
    for (std::size_t n : {1024u, 4096u, 16384u})
      for (bool causal : {false, true}) {
        const std::size_t elems = n * d;
        const std::vector<float> f = Uniform01(3 * elems, 7 + n);
        std::vector<carrier::Half> qkv(3 * elems);
        for (std::size_t i = 0; i < qkv.size(); ++i) qkv[i] = carrier::Half(f[i] * 2 - 1);
        const carrier::AttentionShape shape{n, d, 64, 64, causal};
        const auto* q = qkv.data();
        const auto* k = q + elems;
        const auto* v = k + elems;
        const double portable =
            Median(carrier::cuda::TimeAttention<carrier::Half, carrier::PortableExp>(q, k, v, shape,
                                                                                     repeats));
        const double fast = Median(
            carrier::cuda::TimeAttention<carrier::Half, carrier::FastExp>(q, k, v, shape, repeats));
        std::printf("attention,%zu,%zu,%d,portable,%.9g\n", n, d, causal ? 1 : 0, portable);
        std::printf("attention,%zu,%zu,%d,fast,%.9g\n", n, d, causal ? 1 : 0, fast);
        std::fflush(stdout);
      }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = std::size_t{1} << 28;
  int repeats = 20;
  bool reduce = true, attention = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--n" || a == "--repeats") && i + 1 < argc) {
      char* end = nullptr;
      const double v = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(v >= 1) || v > 1e12) {
        std::fprintf(stderr, "carrier_gpu_bench: %s needs a positive number, got '%s'\n", a.c_str(),
                     argv[i]);
        return 2;
      }
      if (a == "--n") {
        n = static_cast<std::size_t>(v);
      } else {
        repeats = static_cast<int>(v);
      }
    } else if (a == "--reduce-only") {
      attention = false;
    } else if (a == "--attention-only") {
      reduce = false;
    } else {
      std::fprintf(stderr,
                   "carrier_gpu_bench: unknown argument '%s'; usage: carrier_gpu_bench [--n N] "
                   "[--repeats R] [--reduce-only | --attention-only]\n",
                   a.c_str());
      return 2;
    }
  }
  try {
    carrier::cuda::RequireDevice();
    if (reduce) RunReduce(n, repeats);
    if (attention) RunAttention(repeats);
  } catch (const carrier::cuda::Unavailable& e) {
    std::fprintf(stderr, "carrier_gpu_bench: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "carrier_gpu_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
