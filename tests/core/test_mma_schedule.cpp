// mma:PROFILE[:promote:N] as a schedule, a tree and a replay: the text round-trips and bad
// text is refused in one line; the tree covers every input with fused chains (promoted chunks
// merged in order); ReplayOracle<Dot> equals the fused steps applied by hand, is deterministic, and
// carriers without a fused step refuse the tree.
#include <catch2/catch.hpp>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "core/carriers/all.hpp"
#include "core/merge_tree.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"
#include "support/test_support.hpp"

using namespace carrier;
using carrier::test::Exact;
using carrier::test::Rng;

namespace {

// Random fp16 values (11 significant bits, exponents -8..4), stored in float.
std::vector<ValuePair<float>> Fp16Pairs(std::uint64_t n, std::uint64_t seed) {
  Rng rng(seed);
  auto one = [&] {
    const double m = static_cast<double>(1024 + rng.Below(1024));
    const int e = static_cast<int>(rng.Below(13)) - 8;
    return static_cast<float>((rng.Below(2) ? -1 : 1) * std::ldexp(m, e - 10));
  };
  std::vector<ValuePair<float>> p(n);
  for (auto& v : p) v = {one(), one()};
  return p;
}

// The e4m3 values 2^e (1 + m/8), e in -4..3.
std::vector<ValuePair<float>> E4m3Pairs(std::uint64_t n, std::uint64_t seed) {
  Rng rng(seed);
  auto one = [&] {
    const double m = static_cast<double>(8 + rng.Below(8));
    const int e = static_cast<int>(rng.Below(8)) - 4;
    return static_cast<float>((rng.Below(2) ? -1 : 1) * std::ldexp(m, e - 3));
  };
  std::vector<ValuePair<float>> p(n);
  for (auto& v : p) v = {one(), one()};
  return p;
}

}  // namespace

TEST_CASE("mma schedules parse and print round-trip", "[fast][mma]") {
  for (const char* text :
       {"mma:volta", "mma:ampere", "mma:hopper", "mma:hopper-fp8", "mma:hopper-fp8:promote:128",
        "mma:ada-fp8:promote:64", "mma:cdna3:promote:8", "mma:blackwell"}) {
    INFO("schedule " << text);
    const Schedule s = ParseSchedule(text);
    CHECK(s.kind() == ScheduleKind::kMma);
    CHECK(ToString(s) == text);
    CHECK(ParseSchedule(ToString(s)) == s);
  }
  for (const MmaProfile& p : kMmaProfiles)
    CHECK(ToString(ParseSchedule("mma:" + std::string(p.name))) == "mma:" + std::string(p.name));
  for (const char* bad : {"mma", "mma:", "mma:pascal", "mma:volta:promote", "mma:volta:promote:0",
                          "mma:volta:promote:6", "mma:hopper-fp8:promote:100", "mma:volta:lift",
                          "mma:volta:promote:8:x"}) {
    INFO("schedule " << bad);
    try {
      (void)ParseSchedule(bad);
      FAIL("accepted " << bad);
    } catch (const ScheduleError& e) {
      const std::string what = e.what();
      std::cout << what << "\n";
      CHECK(what.find('\n') == std::string::npos);
      CHECK(what.find(bad) != std::string::npos);
    }
  }
}

TEST_CASE("mma trees: fused chains over every input, promoted chunks merged in order",
          "[fast][mma]") {
  for (std::uint64_t n : {0, 1, 3, 4, 5, 31, 32, 33, 127, 128, 129, 300, 1000}) {
    for (const char* text : {"mma:volta", "mma:ampere", "mma:hopper-fp8",
                             "mma:hopper-fp8:promote:128", "mma:ampere:promote:16"}) {
      INFO("schedule " << text << " n " << n);
      const Schedule s = ParseSchedule(text);
      const MergeTree t = BuildTree(s, n);
      CHECK(ValidateTree(t).empty());
      CHECK(t.schedule == text);
      CHECK(BuildTree(ParseSchedule(t.schedule), n).chains == t.chains);  // text round-trips
      CHECK(t.fused == FindMmaProfile(s.As<orders::MmaParams>().profile)->node);
      const std::uint64_t span =
          s.As<orders::MmaParams>().promote ? s.As<orders::MmaParams>().promote : (n ? n : 1);
      CHECK(t.chains.size() == (n + span - 1) / span);
      for (const Chain& c : t.chains) CHECK(c.mode == ChainMode::kFused);
      CHECK(t.combines.size() == (t.chains.empty() ? 0 : t.chains.size() - 1));
      const TreeStats st = ComputeStats(t);
      const std::uint64_t g = t.fused.terms;
      const std::uint64_t longest = std::min(span, n);
      // Fused steps of the longest chain, plus one rounding per promotion add above it.
      CHECK(st.max_leaf_depth ==
            (n ? (longest + g - 1) / g + (t.chains.size() > 1 ? t.chains.size() - 1 : 0) : 0));
    }
  }
  const MergeTree t = BuildTree(ParseSchedule("mma:hopper-fp8:promote:128"), 300);
  const std::string text = ToText(t), json = ToJson(t), dot = ToDot(t);
  std::cout << text;
  CHECK(text.find("fused node      32 products per step, F = 13") != std::string::npos);
  CHECK(text.find("mma x[256..299]") != std::string::npos);
  CHECK(json.find("\"fused\":{\"input\":\"fp8e4m3\",\"terms\":32,\"frac_bits\":13") !=
        std::string::npos);
  CHECK(json.find("\"mode\":\"fused\"") != std::string::npos);
  CHECK(dot.find("mma x[0..127]") != std::string::npos);
}

TEST_CASE("ReplayOracle of mma trees equals the fused steps by hand and is deterministic",
          "[fast][mma]") {
  for (std::uint64_t n : {1, 7, 16, 17, 100, 1000}) {
    for (const char* text : {"mma:volta", "mma:turing", "mma:ampere", "mma:hopper", "mma:blackwell",
                             "mma:cdna3", "mma:ampere:promote:32"}) {
      INFO("schedule " << text << " n " << n << " seed " << n);
      const auto p = Fp16Pairs(n, n);
      const std::span<const ValuePair<float>> ps(p);
      const Schedule s = ParseSchedule(text);
      const MergeTree t = BuildTree(s, n);
      const float got = ReplayOracle<Dot<float>>(t, ps).s;
      CHECK(ScalarTraits<float>::BitEqual(got, ReplayOracle<Dot<float>>(t, ps).s));
      // By hand: steps of k/split products from 0, promoted chunks added in fp32.
      const MmaNode& node = FindMmaProfile(s.As<orders::MmaParams>().profile)->node;
      const std::uint64_t span =
          s.As<orders::MmaParams>().promote ? s.As<orders::MmaParams>().promote : n;
      float acc = 0.0f;
      for (std::uint64_t lo = 0; lo < n; lo += span) {
        double part = 0;
        const std::uint64_t hi = std::min(n, lo + span);
        for (std::uint64_t j = lo; j < hi; j += node.terms)
          part =
              MmaFusedStep(node, part, p.data() + j, std::min<std::uint64_t>(node.terms, hi - j));
        acc = lo == 0 ? static_cast<float>(part) : acc + static_cast<float>(part);
      }
      CHECK(ScalarTraits<float>::BitEqual(got, acc));
      // Dot<double> holds the same values: the node decides the bits, not the carrier's T.
      std::vector<ValuePair<double>> pd;
      for (const auto& v : p) pd.push_back({v.a, v.b});
      if (!s.As<orders::MmaParams>().promote)
        CHECK(ReplayOracle<Dot<double>>(t, std::span<const ValuePair<double>>(pd)).s ==
              static_cast<double>(got));
    }
  }
  // FP8 with and without promotion: both replay; they differ on a long row.
  const auto p = E4m3Pairs(4096, 7);
  const std::span<const ValuePair<float>> ps(p);
  const float plain =
      ReplayOracle<Dot<float>>(BuildTree(ParseSchedule("mma:hopper-fp8"), 4096), ps).s;
  const float promoted =
      ReplayOracle<Dot<float>>(BuildTree(ParseSchedule("mma:hopper-fp8:promote:128"), 4096), ps).s;
  const float ieee = ReplayOracle<Dot<float>>(BuildTree(Schedule::Seq(), 4096), ps).s;
  std::cout << "K = 4096 e4m3: mma:hopper-fp8 " << Exact(plain) << ", promote:128 "
            << Exact(promoted) << ", IEEE fp32 seq " << Exact(ieee) << "\n";
}

TEST_CASE("Carriers without a fused step refuse mma trees", "[fast][mma]") {
  const MergeTree t = BuildTree(ParseSchedule("mma:volta"), 8);
  const std::vector<float> x(8, 1.0f);
  try {
    (void)ReplayOracle<Sum<float>>(t, std::span<const float>(x));
    FAIL("Sum replayed an mma tree");
  } catch (const ScheduleError& e) {
    const std::string what = e.what();
    std::cout << what << "\n";
    CHECK(what.find("mma:volta") != std::string::npos);
    CHECK(what.find('\n') == std::string::npos);
  }
  // An fp32 input is not an fp16 value: the instruction cannot take it.
  const std::vector<ValuePair<float>> p(8, {0.1f, 1.0f});
  CHECK_THROWS_AS(ReplayOracle<Dot<float>>(t, std::span<const ValuePair<float>>(p)), MmaInputError);
}
