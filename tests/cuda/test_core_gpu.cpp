// The core carriers run in device code: a one-thread fold on the GPU equals the host fold.
// Exp-free carriers must match bit for bit; the exp-based ones (OnlineSoftmax, FlashRow) use
// libm on the host and CUDA's expf on the device, so they are held to a few ulps here (the
// `portable` exp policy of precision/ is what makes them bit-exact).
//
// Exits 77 (CTest: Skipped) when no GPU is present.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <iostream>
#include <vector>

#include "core_nvcc.cuh"
#include "fold_all.hpp"
#include "support/test_support.hpp"

TEST_CASE("device folds equal host folds", "[gpu]") {
  // Output indices 8, 9 (OnlineSoftmax m, d) and 17.. (FlashRow) involve exp.
  auto uses_exp = [](std::size_t k) { return k == 8 || k == 9 || k >= 17; };
  for (std::size_t n : {0u, 1u, 2u, 31u, 32u, 33u, 1000u}) {
    const std::uint64_t seed = 2000 + n;
    carrier::test::Rng rng(seed);
    std::vector<float> x(n);
    for (auto& v : x) v = static_cast<float>(rng.Normal() * 4);
    std::vector<double> dev;
    REQUIRE(carrier::nvcc_test::FoldAllDevice(x, dev));
    std::vector<double> host(carrier::nvcc_test::kFoldOutputs);
    carrier::nvcc_test::FoldAll<float>(x.data(), n, host.data());
    for (std::size_t k = 0; k < host.size(); ++k) {
      INFO("seed=" << seed << " n=" << n << " output " << k << ": device " << dev[k] << ", host "
                   << host[k]);
      if (uses_exp(k)) {
        CHECK(std::fabs(dev[k] - host[k]) <= 1e-5 * std::fabs(host[k]) + 1e-30);
      } else {
        CHECK((std::memcmp(&dev[k], &host[k], sizeof(double)) == 0 ||
               (dev[k] != dev[k] && host[k] != host[k])));
      }
    }
  }
}

int main(int argc, char** argv) {
  if (carrier::nvcc_test::DeviceCount() == 0) {
    std::cout << "no CUDA device: skipped\n";
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
