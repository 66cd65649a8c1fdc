// kernels/cuda/cuda_util.cuh: error checks, owning device buffers and event timing (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "kernels/cuda/reduce.hpp"

namespace carrier::cuda {

inline void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw CudaFailure(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    Check(cudaMalloc(&ptr_, (count ? count : 1) * sizeof(T)), "cudaMalloc");
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  void CopyFrom(const T* host, std::size_t count) {
    if (count)
      Check(cudaMemcpy(ptr_, host, count * sizeof(T), cudaMemcpyHostToDevice), "copy to device");
  }
  void CopyTo(T* host, std::size_t count) const {
    if (count)
      Check(cudaMemcpy(host, ptr_, count * sizeof(T), cudaMemcpyDeviceToHost), "copy to host");
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_;
};

// Seconds between Start() and Stop() on the default stream (Stop synchronises).
class EventTimer {
 public:
  EventTimer() {
    Check(cudaEventCreate(&start_), "cudaEventCreate");
    Check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void Start() { Check(cudaEventRecord(start_), "cudaEventRecord"); }
  double Stop() {
    Check(cudaEventRecord(stop_), "cudaEventRecord");
    Check(cudaEventSynchronize(stop_), "kernel");
    float ms = 0;
    Check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

}  // namespace carrier::cuda
