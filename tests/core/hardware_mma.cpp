// The mma: profiles against a real matrix unit: outputs of cuBLAS on an NVIDIA H200 (sm_90,
// driver 580.159.04, CUDA 13.0, torch 2.11: torch.mm with an fp32 output for fp16/bf16 and
// torch._scaled_mm for e4m3), recorded by scripts/gpu_tensor_core.py (issue 34, see
// kernels/cuda/results/README.md). Each line of data/h200_tensor_core_cases.txt is one dot
// product the GPU computed and the profile that reproduced every sampled output of its case;
// here each is replayed through core/mma.hpp's fused chain and must give the GPU's bits. Lines
// with four fields carry the accumulator c the instruction started from (mma.sync through WMMA,
// kernels/cuda/bench/mma_dump.cu: tf32 m16n8k8 and bf16 m16n8k16 with a random fp32 C).
// `promote:N` is replayed as chunks of N products from a zero accumulator, the chunk results
// added in order in IEEE fp32 (the profile's contract in core/mma.md).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/carriers/pairs.hpp"
#include "core/mma.hpp"
#include "support/test_support.hpp"

using namespace carrier;
using carrier::test::Exact;

namespace {

std::vector<double> HexList(const std::string& text) {
  std::vector<double> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    out.push_back(std::strtod(item.c_str(), &end));
    REQUIRE(end != item.c_str());
  }
  return out;
}

double ReplayOracle(const std::string& profile, const std::vector<double>& a,
                    const std::vector<double>& b, double c) {
  std::string base = profile;
  std::size_t promote = 0;
  const auto at = profile.find(":promote:");
  if (at != std::string::npos) {
    base = profile.substr(0, at);
    promote = std::stoul(profile.substr(at + 9));
  }
  const MmaProfile* p = FindMmaProfile(base);
  REQUIRE(p != nullptr);
  std::vector<ValuePair<double>> pairs;
  for (std::size_t i = 0; i < a.size(); ++i) pairs.push_back({a[i], b[i]});
  if (promote == 0) return MmaFusedChain(p->node, c, pairs.data(), pairs.size());
  REQUIRE(c == 0.0);
  float total = 0.0f;
  for (std::size_t s = 0; s < pairs.size(); s += promote) {
    const std::size_t m = std::min(promote, pairs.size() - s);
    total += static_cast<float>(MmaFusedChain(p->node, 0.0, pairs.data() + s, m));
  }
  return total;
}

}  // namespace

TEST_CASE("cuBLAS on an H200 reproduces bit for bit under the hopper profiles", "[fast][mma]") {
  const std::string path = CARRIER_TEST_DATA_DIR "/h200_tensor_core_cases.txt";
  std::ifstream in(path);
  REQUIRE(in.good());
  std::map<std::string, std::pair<int, int>> per_case;  // case profile -> (equal, lines)
  std::string line;
  int lines = 0, foil_lines = 0, foil_differs = 0;  // the same fp16 dots under mma:ampere
  int tf32_lines = 0, tf32_differs = 0;             // the tf32 ones under mma:ampere-tf32
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream fields(line);
    std::string name, profile, dtype, rest;
    fields >> name >> profile >> dtype >> rest;
    std::vector<std::string> parts;  // a;b;output, or a;b;c;output with an accumulator c
    std::stringstream split(rest);
    for (std::string part; std::getline(split, part, ';');) parts.push_back(part);
    REQUIRE((parts.size() == 3 || parts.size() == 4));
    const auto a = HexList(parts[0]);
    const auto b = HexList(parts[1]);
    const double c = parts.size() == 4 ? std::strtod(parts[2].c_str(), nullptr) : 0.0;
    const double gpu = std::strtod(parts.back().c_str(), nullptr);
    REQUIRE(a.size() == b.size());
    const double model = ReplayOracle(profile, a, b, c);
    auto& count = per_case[name + " mma:" + profile + " (" + dtype +
                           ", K = " + std::to_string(a.size()) + ")"];
    ++count.second;
    ++lines;
    if (profile == "hopper-tf32") {
      ++tf32_lines;
      tf32_differs += ReplayOracle("ampere-tf32", a, b, c) != gpu;
    }
    if (profile == "hopper") {
      ++foil_lines;
      foil_differs += ReplayOracle("ampere", a, b, c) != gpu;
    }
    if (model == gpu) {
      ++count.first;
    } else {
      INFO(path << " line for case " << name << ": profile " << profile << " gives " << Exact(model)
                << ", the H200 gave " << Exact(gpu));
      CHECK(model == gpu);
    }
  }
  for (const auto& [key, c] : per_case)
    std::cout << key << ": " << c.first << "/" << c.second << " bit-equal\n";
  std::cout << "foil: mma:ampere (two k8 halves, F = 24) differs from the H200 on " << foil_differs
            << " of " << foil_lines << " fp16 dots\n";
  std::cout << "foil: mma:ampere-tf32 (F = 24) differs from the H200 on " << tf32_differs << " of "
            << tf32_lines << " tf32 dots\n";
  CHECK(foil_differs > 0);  // the data tell the profiles apart
  CHECK(tf32_differs > 0);
  CHECK(lines >= 290);
  CHECK(per_case.size() >= 10);
}
