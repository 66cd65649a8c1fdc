// kernels/cuda's plain API without a GPU: every entry point throws Unavailable("no GPU: ...")
// (the backend and the benchmark turn it into a one-line reason); with a GPU, schedules the
// kernels cannot run are ScheduleErrors before any launch.
#include <catch2/catch.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "core/attention.hpp"
#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/reduce.hpp"

TEST_CASE("cuda kernels say plainly when there is no GPU", "[fast][cuda]") {
  const std::vector<float> x(100, 1.0f);
  const carrier::CudaSchedule s =
      carrier::ParseSchedule("cuda:256:4").As<carrier::orders::CudaParams>().cuda;
  const std::vector<carrier::Half> h(64 * 64, carrier::Half(0.5f));
  const carrier::AttentionShape shape{64, 64, 64, 64, false};
  std::cout << "CUDA devices: " << carrier::cuda::DeviceCount() << " ("
            << carrier::cuda::DeviceName() << ")\n";
  if (carrier::cuda::DeviceCount() > 0) {
    // A GPU is here: the refusals that come before any launch.
    const carrier::CudaSchedule not_compiled =
        carrier::ParseSchedule("cuda:64").As<carrier::orders::CudaParams>().cuda;
    CHECK_THROWS_AS(
        (carrier::cuda::Reduce<carrier::Sum<float>, float>(x.data(), x.size(), not_compiled)),
        carrier::ScheduleError);
    const carrier::CudaSchedule xor_tree =
        carrier::ParseSchedule("cuda:32:1:blocked:xor").As<carrier::orders::CudaParams>().cuda;
    CHECK_THROWS_AS(
        (carrier::cuda::Reduce<carrier::Welford<float>, float>(x.data(), x.size(), xor_tree)),
        carrier::ScheduleError);
    const carrier::AttentionShape odd_tile{64, 64, 64, 48, false};
    CHECK_THROWS_AS((carrier::cuda::AttentionForward<carrier::Half, carrier::PortableExp>(
                        h.data(), h.data(), h.data(), odd_tile)),
                    carrier::ScheduleError);
    return;
  }
  try {
    (void)carrier::cuda::Reduce<carrier::Sum<float>, float>(x.data(), x.size(), s);
    FAIL("Reduce ran without a GPU");
  } catch (const carrier::cuda::Unavailable& e) {
    std::cout << "Reduce: " << e.what() << "\n";
    CHECK(std::string(e.what()).rfind("no GPU: ", 0) == 0);
  }
  try {
    (void)carrier::cuda::AttentionForward<carrier::Half, carrier::PortableExp>(h.data(), h.data(),
                                                                               h.data(), shape);
    FAIL("AttentionForward ran without a GPU");
  } catch (const carrier::cuda::Unavailable& e) {
    std::cout << "AttentionForward: " << e.what() << "\n";
    CHECK(std::string(e.what()).rfind("no GPU: ", 0) == 0);
  }
  CHECK(carrier::cuda::DeviceName().empty());
}
