// tests/cuda/core_nvcc.cuh: entry points of core_nvcc.cu, callable from g++-compiled tests.
//
// core_nvcc.cu includes every core header under nvcc and folds every carrier over one input,
// once in nvcc-compiled host code and once in a device kernel (one thread, so the order is
// the seq schedule). The g++ tests compare both with the g++ fold bit for bit.
#pragma once

#include <cstddef>
#include <vector>

namespace carrier::nvcc_test {

// One fold result per carrier, flattened to doubles in a fixed order (see core_nvcc.cu).
std::vector<double> FoldAllHost(const std::vector<float>& x);
std::vector<double> FoldAllHostDouble(const std::vector<double>& x);
// Same on the device; returns false (and leaves `out` empty) when no GPU can run it.
bool FoldAllDevice(const std::vector<float>& x, std::vector<double>& out);
int DeviceCount();

}  // namespace carrier::nvcc_test
