// Compiles every core header with nvcc (-std=c++20) for host and device code, and exposes the
// folds of fold_all.hpp to the g++ tests.
#include <cuda_runtime.h>

#include "core_nvcc.cuh"
#include "fold_all.hpp"

namespace carrier::nvcc_test {

namespace {

template <class T>
__global__ void FoldAllKernel(const T* x, std::size_t n, double* out) {
  if (blockIdx.x == 0 && threadIdx.x == 0) FoldAll<T>(x, n, out);
}

}  // namespace

std::vector<double> FoldAllHost(const std::vector<float>& x) {
  std::vector<double> out(kFoldOutputs);
  FoldAll<float>(x.data(), x.size(), out.data());
  return out;
}

std::vector<double> FoldAllHostDouble(const std::vector<double>& x) {
  std::vector<double> out(kFoldOutputs);
  FoldAll<double>(x.data(), x.size(), out.data());
  return out;
}

int DeviceCount() {
  int count = 0;
  // Without a driver this returns an error (35, not 100): any error means "no GPU".
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

bool FoldAllDevice(const std::vector<float>& x, std::vector<double>& out) {
  out.clear();
  if (DeviceCount() == 0) return false;
  float* dx = nullptr;
  double* dout = nullptr;
  if (cudaMalloc(&dx, x.size() * sizeof(float) + 1) != cudaSuccess) return false;
  if (cudaMalloc(&dout, kFoldOutputs * sizeof(double)) != cudaSuccess) {
    cudaFree(dx);
    return false;
  }
  cudaMemcpy(dx, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice);
  FoldAllKernel<float><<<1, 1>>>(dx, x.size(), dout);
  out.resize(kFoldOutputs);
  const bool ok = cudaMemcpy(out.data(), dout, kFoldOutputs * sizeof(double),
                             cudaMemcpyDeviceToHost) == cudaSuccess;
  cudaFree(dx);
  cudaFree(dout);
  if (!ok) out.clear();
  return ok;
}

}  // namespace carrier::nvcc_test
