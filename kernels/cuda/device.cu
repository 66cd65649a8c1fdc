// kernels/cuda/device.cu: device discovery for the plain API (reduce.hpp, attention.hpp).
#include <cuda_runtime.h>

#include <string>

#include "kernels/cuda/reduce.hpp"

namespace carrier::cuda {

int DeviceCount() {
  int count = 0;
  // Without a driver this is an error (35), not 0 devices: any error means "no GPU".
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

std::string DeviceName() {
  if (DeviceCount() == 0) return "";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "";
  return prop.name;
}

void RequireDevice() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) throw Unavailable(std::string("no GPU: ") + cudaGetErrorString(e));
  if (count == 0) throw Unavailable("no GPU: no CUDA device found");
}

}  // namespace carrier::cuda
