// Every core header compiled by nvcc: its host code folds every carrier to the same bits as
// g++ does (same libm, no contraction on either side).
#include <catch2/catch.hpp>
#include <cstring>
#include <iostream>
#include <vector>

#include "core_nvcc.cuh"
#include "fold_all.hpp"
#include "support/test_support.hpp"

namespace {

bool SameBits(double a, double b) {
  if (a != a || b != b) return a != a && b != b;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

template <class T>
std::vector<T> Inputs(std::uint64_t seed, std::size_t n) {
  carrier::test::Rng rng(seed);
  std::vector<T> x(n);
  for (auto& v : x) v = static_cast<T>(rng.Normal() * 4);
  return x;
}

}  // namespace

TEST_CASE("nvcc host code folds every carrier to the g++ bits", "[fast][nvcc]") {
  for (std::size_t n : {0u, 1u, 2u, 7u, 33u, 1000u}) {
    const std::uint64_t seed = 1000 + n;
    const auto xf = Inputs<float>(seed, n);
    const auto xd = Inputs<double>(seed, n);
    const auto nvcc_f = carrier::nvcc_test::FoldAllHost(xf);
    const auto nvcc_d = carrier::nvcc_test::FoldAllHostDouble(xd);
    std::vector<double> gxx_f(carrier::nvcc_test::kFoldOutputs),
        gxx_d(carrier::nvcc_test::kFoldOutputs);
    carrier::nvcc_test::FoldAll<float>(xf.data(), n, gxx_f.data());
    carrier::nvcc_test::FoldAll<double>(xd.data(), n, gxx_d.data());
    for (std::size_t k = 0; k < gxx_f.size(); ++k) {
      INFO("seed=" << seed << " n=" << n << " output " << k << ": nvcc " << nvcc_f[k] << " / "
                   << nvcc_d[k] << ", g++ " << gxx_f[k] << " / " << gxx_d[k]);
      CHECK(SameBits(nvcc_f[k], gxx_f[k]));
      CHECK(SameBits(nvcc_d[k], gxx_d[k]));
    }
  }
  std::cout << "nvcc-compiled host folds of " << carrier::nvcc_test::kFoldOutputs
            << " state fields match g++ for n in {0,1,2,7,33,1000}, float and double\n";
}
