// Defaults that work (issue 17): `carrier eval` with a kernel backend and no --schedule, --exp
// or --acc runs what that backend realises and says so; an explicit mismatch is still one line
// naming what would work; `carrier tree` refuses sizes that cannot fit, with the numbers.
#include <catch2/catch.hpp>
#include <iostream>
#include <string>

#include "support/cli_support.hpp"

using carrier_test::Carrier;
using carrier_test::CheckRejected;

namespace {

// The value of `key` in eval's text output ("key<spaces>value"), or "" when absent.
std::string Field(const std::string& out, const std::string& key) {
  std::size_t pos = 0;
  while ((pos = out.find(key, pos)) != std::string::npos) {
    if (pos == 0 || out[pos - 1] == '\n') {
      const std::size_t v = out.find_first_not_of(' ', pos + key.size());
      if (v != pos + key.size()) return out.substr(v, out.find('\n', v) - v);
    }
    pos += key.size();
  }
  return "";
}

void CheckDefaults(const std::string& args, const std::string& schedule_prefix,
                   const std::string& acc, const std::string& exp,
                   const std::string& defaults_mention) {
  const auto r = Carrier("eval " + args);
  std::cout << "  carrier eval " << args << "  -> exit " << r.code << ", schedule "
            << Field(r.out, "schedule_used") << ", acc " << Field(r.out, "acc") << ", exp "
            << Field(r.out, "exp") << "\n    defaults: " << Field(r.out, "defaults") << "\n";
  INFO("carrier eval " << args << "\nstdout:\n" << r.out << "stderr: " << r.err);
  REQUIRE(r.code == 0);
  CHECK(Field(r.out, "schedule_used").rfind(schedule_prefix, 0) == 0);
  CHECK(Field(r.out, "acc") == acc);
  CHECK(Field(r.out, "exp") == exp);
  CHECK(Field(r.out, "defaults").find(defaults_mention) != std::string::npos);
}

}  // namespace

TEST_CASE("eval on simd and omp runs the backend's native schedule, exp and compute type",
          "[fast][cli][defaults]") {
#if CARRIER_TEST_HAVE_SIMD
  CheckDefaults("--op sum --dtype fp32 --backend simd --gen normal --n 1000", "strided:", "fp32",
                "libm", "simd's native one");
  CheckDefaults("--op lse --dtype fp32 --backend simd --gen normal --n 1000", "strided:", "fp32",
                "portable", "exp portable");
  CheckDefaults("--op sum --dtype bf16 --backend simd --gen normal --n 1000", "strided:", "fp32",
                "libm", "acc fp32: simd's compute type for bf16 storage");
  CheckDefaults("--op lse --dtype fp16 --backend simd --gen normal --n 1000", "strided:", "fp32",
                "portable", "acc fp32");
  // Explicit choices the kernel lacks: one line naming what it does realise.
  CheckRejected("eval --op sum --dtype fp32 --backend simd --schedule seq --gen normal --n 100",
                "strided:K");
  CheckRejected("eval --op lse --dtype fp32 --backend simd --exp libm --gen normal --n 100",
                "portable");
  CheckRejected("eval --op sum --dtype bf16 --acc bf16 --backend simd --gen normal --n 100",
                "bf16/fp32");
#endif
#if CARRIER_TEST_HAVE_OMP
  CheckDefaults("--op sum --dtype fp32 --backend omp --gen normal --n 1000", "omp:", "fp32", "libm",
                "omp's native one");
  CheckDefaults("--op lse --dtype bf16 --backend omp --gen normal --n 1000", "omp:", "fp32",
                "portable", "acc fp32");
  CheckRejected("eval --op sum --dtype fp32 --backend omp --schedule seq --gen normal --n 100",
                "omp:P");
#endif
  // The replay backend keeps its plain defaults and says nothing extra.
  const auto r = Carrier("eval --op lse --dtype bf16 --gen normal --n 100");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(Field(r.out, "schedule") == "seq");
  CHECK(Field(r.out, "acc") == "bf16");
  CHECK(Field(r.out, "exp") == "libm");
  CHECK(Field(r.out, "defaults").empty());
}

TEST_CASE("tree refuses a tree that cannot fit in memory, with the numbers",
          "[fast][cli][defaults]") {
  // pairwise over 2^30 inputs as JSON: about 2^31 nodes and their text, hundreds of GB.
  CheckRejected("tree --schedule pairwise --n 1073741824 --format json", "memory available");
  const auto r = Carrier("tree --schedule pairwise --n 1073741824 --format json");
  CHECK(r.err.find("n <= ") != std::string::npos);
  CHECK(r.err.find("nodes") != std::string::npos);
  // Small trees draw as before.
  const auto small = Carrier("tree --schedule blocked:4 --n 14");
  INFO(small.out << small.err);
  CHECK(small.code == 0);
  CHECK(small.out.find("chains          4 (longest 4)") != std::string::npos);
}
