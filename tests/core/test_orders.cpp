// Orders from outside: canonical:L (WG21 P4016R0) against the paper's golden values and a
// direct transcription of its definition, tree identity (hashes, the binary form, constructed
// witnesses), file: trees that round-trip through JSON, and FPRev recovery of planted trees.

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/carriers/sum.hpp"
#include "core/fprev.hpp"
#include "core/invariance.hpp"
#include "core/merge_tree.hpp"
#include "core/mma.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"
#include "core/tree_hash.hpp"
#include "core/tree_io.hpp"
#include "support/test_support.hpp"

using namespace carrier;

namespace {

// P4016R0's data generator (its Appendix K demonstrators, "CrossPlatformRNG"): a 64-bit LCG
// state = state * 6364136223846793005 + 1442695040888963407; each value takes the new state's
// top 53 bits b and returns (b - 2^52) / 2^52, a double in [-1, 1). Seed 0x243F6A8885A308D3.
std::vector<double> P4016Data(std::size_t n, std::uint64_t seed) {
  std::vector<double> x(n);
  std::uint64_t state = seed;
  for (auto& v : x) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const auto top = static_cast<std::int64_t>(state >> 11);
    v = static_cast<double>(top - (std::int64_t{1} << 52)) / 4503599627370496.0;
  }
  return x;
}

std::uint64_t Bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// P4016 4.2-4.5 transcribed literally on values (std::optional is the paper's maybe<A>).
template <class T>
std::optional<T> TreeEval(std::vector<std::optional<T>> w, bool bisect) {
  auto combine = [](std::optional<T> a, std::optional<T> b) -> std::optional<T> {
    if (!a) return b;
    if (!b) return a;
    return *a + *b;
  };
  if (bisect) {
    std::function<std::optional<T>(std::size_t, std::size_t)> rec = [&](std::size_t lo,
                                                                        std::size_t hi) {
      if (hi - lo == 1) return w[lo];
      const std::size_t m = lo + (hi - lo) / 2;
      return combine(rec(lo, m), rec(m, hi));
    };
    return rec(0, w.size());
  }
  while (w.size() > 1) {
    std::vector<std::optional<T>> next;
    for (std::size_t i = 0; i + 1 < w.size(); i += 2) next.push_back(combine(w[i], w[i + 1]));
    if (w.size() % 2) next.push_back(w.back());
    w = next;
  }
  return w[0];
}

template <class T>
T CanonicalReduce(const std::vector<T>& x, std::size_t lanes, bool bisect, T init) {
  const std::size_t n = x.size();
  if (n == 0) return init;
  const std::size_t k = (n + lanes - 1) / lanes;
  std::vector<std::optional<T>> z(lanes);
  for (std::size_t j = 0; j < lanes; ++j) {
    std::vector<std::optional<T>> y(k);
    for (std::size_t t = 0; t < k; ++t)
      if (j + t * lanes < n) y[t] = x[j + t * lanes];
    z[j] = TreeEval(y, bisect);
  }
  return init + *TreeEval(z, bisect);
}

template <class T>
T ReplaySum(const MergeTree& t, const std::vector<T>& x) {
  return ReplayOracleResult<Sum<T>>(t, std::span<const T>(x));
}

}  // namespace

TEST_CASE("canonical:16 and canonical:128 reproduce P4016R0's golden values", "[fast][orders]") {
  // Appendix K.0 / K.3: N = 1,000,000 doubles from the generator above, init 0.0.
  const std::uint64_t seed = 0x243F6A8885A308D3ULL;
  const auto x = P4016Data(1000000, seed);
  const double narrow = ReplaySum(BuildTree("canonical:16", x.size()), x);
  const double wide = ReplaySum(BuildTree("canonical:128", x.size()), x);
  std::cout << "  P4016 golden: canonical:16 = " << std::hex << "0x" << Bits(narrow)
            << " (paper 0x40618f71f6379380), canonical:128 = 0x" << Bits(wide)
            << " (paper 0x40618f71f6379397)" << std::dec << "; x[0] = " << test::Exact(x[0])
            << "\n";
  CHECK(Bits(narrow) == 0x40618f71f6379380ULL);
  CHECK(Bits(wide) == 0x40618f71f6379397ULL);
}

TEST_CASE("canonical:L replays P4016's definition bit for bit", "[fast][orders]") {
  test::Rng rng(2026);
  const std::vector<std::size_t> lane_counts = {1, 2, 3, 4, 5, 7, 8, 16, 17, 128};
  std::vector<std::size_t> sizes = {1,  2,  3,  4,   5,   6,   7,   8,   9,   15,  16,
                                    17, 31, 33, 100, 127, 128, 129, 255, 257, 1000};
  for (int t = 0; t < test::Trials(6); ++t) sizes.push_back(1 + rng.Below(5000));
  int checked = 0;
  for (bool bisect : {false, true})
    for (std::size_t lanes : lane_counts)
      for (std::size_t n : sizes) {
        std::vector<float> x(n);
        for (auto& v : x) v = static_cast<float>(rng.Normal() * std::ldexp(1.0, rng.Below(20)));
        const std::string s = "canonical:" + std::to_string(lanes) + (bisect ? ":bisect" : "");
        const MergeTree tree = BuildTree(s, n);
        INFO("schedule " << s << ", n " << n << ", x " << test::Join(x));
        REQUIRE(ValidateTree(tree) == "");
        REQUIRE(tree.combines.size() == n);  // N - 1 applications of op, plus op(init, R)
        const float want = CanonicalReduce<float>(x, lanes, bisect, 0.0f);
        REQUIRE(ScalarTraits<float>::BitEqual(ReplaySum(tree, x), want));
        ++checked;
      }
  std::cout << "  canonical:L against P4016's definition: " << checked << " (L, n, shape) cases\n";
  CHECK(BuildTree("canonical:4", 0).Empty());
}

TEST_CASE("iterative pairwise and recursive bisection agree exactly at powers of two",
          "[fast][orders]") {
  // P4016 Appendix O.2/O.3, and how both relate to carrier's pairwise (left half larger).
  int differ = 0, same = 0;
  for (std::uint64_t k = 1; k <= 64; ++k) {
    const auto it = TreeHash(BuildTree("canonical:1", k), TreeForm::kBinary);
    const auto bi = TreeHash(BuildTree("canonical:1:bisect", k), TreeForm::kBinary);
    const bool pow2 = (k & (k - 1)) == 0;
    INFO("k = " << k);
    if (pow2) {
      CHECK(it == bi);
      CHECK(it == TreeHash(BuildTree("pairwise", k), TreeForm::kBinary));
    }
    (it == bi ? same : differ)++;
  }
  // The paper's k = 5 example: iterative ((e0 e1)(e2 e3)) e4, bisection (e0 e1)(e2 (e3 e4)).
  const std::vector<double> x = {1.0, 0x1p-53, 0x1p-53, 0x1p-53, 0x1p-53};
  const double iterative = ReplaySum(BuildTree("canonical:1", 5), x);
  const double bisection = ReplaySum(BuildTree("canonical:1:bisect", 5), x);
  CHECK(iterative == ((x[0] + x[1]) + (x[2] + x[3])) + x[4]);
  CHECK(bisection == (x[0] + x[1]) + (x[2] + (x[3] + x[4])));
  std::cout << "  k in [1, 64]: iterative pairwise == recursive bisection for " << same
            << " sizes, differ for " << differ << "\n";
  CHECK(differ > 0);
}

TEST_CASE("tree hashes name trees, not their storage", "[fast][orders]") {
  // Exact form: seq and blocked:1 are different expressions; binary form: the same tree.
  const MergeTree seq = BuildTree("seq", 100), b1 = BuildTree("blocked:1", 100);
  CHECK(TreeHash(seq) != TreeHash(b1));
  CHECK(TreeHash(seq, TreeForm::kBinary) == TreeHash(b1, TreeForm::kBinary));
  // Same schedule, same hash; a different n or order, a different hash.
  CHECK(TreeHash(BuildTree("pairwise", 100)) == TreeHash(BuildTree("pairwise", 100)));
  CHECK(TreeHash(BuildTree("pairwise", 100)) != TreeHash(BuildTree("pairwise", 101)));
  CHECK(TreeHash(BuildTree("pairwise", 100)) != TreeHash(BuildTree("pairwise:2", 100)));
  CHECK(TreeHash(BuildTree("strided:8", 64)) != TreeHash(BuildTree("strided:8:tile:8:lift", 64)));
  // Renumbering independent combines does not change the hash.
  MergeTree p = BuildTree("blocked:4:pairwise", 16);  // 4 chains, 3 combines: (0 1) (2 3)
  MergeTree q = p;
  const std::uint64_t c = p.chains.size();
  q.combines = {{2, 3}, {0, 1}, {c + 1, c}};  // (2 3) listed first
  REQUIRE(ValidateTree(q) == "");
  CHECK(TreeHash(p) == TreeHash(q));
  CHECK(TreeHash(p).size() == 16);
}

TEST_CASE("different trees come with an input on which their sums differ", "[fast][orders]") {
  const std::vector<std::string> schedules = {"seq",
                                              "reverse",
                                              "pairwise",
                                              "pairwise:4",
                                              "blocked:8:pairwise",
                                              "strided:4",
                                              "canonical:16",
                                              "canonical:16:bisect",
                                              "random:3",
                                              "canonical:1"};
  int witnessed = 0, equal = 0;
  for (std::uint64_t n : {5, 6, 12, 100, 1000})
    for (const auto& a : schedules)
      for (const auto& b : schedules) {
        const MergeTree ta = BuildTree(a, n), tb = BuildTree(b, n);
        const bool same = TreeHash(ta, TreeForm::kBinary) == TreeHash(tb, TreeForm::kBinary);
        const TreeDifference d = FirstDifference(ToBinaryTree(ta), ToBinaryTree(tb));
        INFO(a << " vs " << b << ", n " << n);
        REQUIRE(d.found == !same);
        if (!d.found) {
          ++equal;
          continue;
        }
        for (int p : {24, 53}) {
          const auto w = SumWitness<double>(n, d.i, d.j, p);
          if (p == 24) {
            const std::vector<float> wf(w.begin(), w.end());
            const float ra = ReplaySum(ta, wf), rb = ReplaySum(tb, wf);
            REQUIRE(ra == static_cast<float>(n - d.size_a));
            REQUIRE(rb == static_cast<float>(n - d.size_b));
            REQUIRE(ra != rb);
          } else {
            const double ra = ReplaySum(ta, w), rb = ReplaySum(tb, w);
            REQUIRE(ra == static_cast<double>(n - d.size_a));
            REQUIRE(ra != rb);
          }
        }
        ++witnessed;
      }
  std::cout << "  equiv: " << witnessed << " ordered pairs of different trees, each with a "
            << "verified witness; " << equal << " pairs with equal binary forms\n";
  CHECK(witnessed > 0);
}

TEST_CASE("numpy schedules whose split could be empty are refused", "[fast][orders]") {
  // BLOCK < 2 ACC: a block of BLOCK + 1 items would split into an empty half and recurse.
  for (const char* bad : {"numpy:8", "numpy:15:8", "numpy:7:4:10"}) {
    INFO(bad);
    CHECK_THROWS_AS(ParseSchedule(bad), ScheduleError);
  }
  for (const char* good : {"numpy:16", "numpy:8:4", "numpy:2:1:5"}) {
    INFO(good);
    const Schedule s = ParseSchedule(good);
    for (std::uint64_t n : {1, 9, 17, 33, 100}) CHECK(ValidateTree(BuildTree(s, n)).empty());
  }
}

TEST_CASE("file: trees round-trip through carrier tree's JSON", "[fast][orders]") {
  std::vector<std::string> schedules = {"seq",
                                        "reverse",
                                        "pairwise:3",
                                        "blocked:7:pairwise:lift",
                                        "strided:16:tile:4:lift",
                                        "random:9",
                                        "omp:3:pairwise:strided:4",
                                        "canonical:16",
                                        "canonical:5:bisect",
                                        "cuda:32:2:blocked:shfl:pairwise",
                                        "numpy",
                                        "numpy:64:4:0",
                                        "numpy:16:4:100",
                                        "torch:8",
                                        "torch:4"};
  // Every matrix-unit profile, one chain and promoted (fused nodes: the writer emits them).
  for (const MmaProfile& p : kMmaProfiles) {
    schedules.push_back("mma:" + std::string(p.name));
    // promote:32 is a multiple of every k up to 32; the k64 block-scaled profiles take 64.
    schedules.push_back("mma:" + std::string(p.name) + ":promote:" + (p.k > 32 ? "64" : "32"));
  }
  std::uint64_t fused_trees = 0;
  for (const auto& s : schedules)
    for (std::uint64_t n : {1, 2, 7, 100, 257}) {
      const MergeTree t = BuildTree(s, n);
      // Loaded as experiments/io/tree_file.hpp loads a file: schedule (core reads no files).
      Schedule f = ParseSchedule("file:saved.json");
      f.As<orders::FileParams>().tree =
          std::make_shared<const MergeTree>(TreeFromJson(ToJson(t), "file:saved.json"));
      const MergeTree u = BuildTree(f, n);
      INFO(s << ", n " << n);
      CHECK(u.chains == t.chains);
      CHECK(u.combines == t.combines);
      CHECK(u.permutes == t.permutes);
      CHECK(u.UsesFusedNode() == t.UsesFusedNode());
      if (t.UsesFusedNode()) {
        CHECK(u.fused == t.fused);
        ++fused_trees;
      }
      CHECK(u.schedule == "file:saved.json");
      CHECK(TreeHash(u) == TreeHash(t));
      CHECK_THROWS_AS(BuildTree(f, n + 1), ScheduleError);
    }
  std::cout << "  " << schedules.size() << " schedules x 5 lengths round-tripped, " << fused_trees
            << " of them with a fused node\n";
  CHECK(fused_trees == 2 * kMmaProfiles.size() * 5);
  CHECK(ToString(ParseSchedule("file:/a:b.json")) == "file:/a:b.json");
  CHECK(ToString(ParseSchedule("canonical:16:bisect")) == "canonical:16:bisect");
  CHECK_THROWS_AS(ParseSchedule("canonical"), ScheduleError);
  CHECK_THROWS_AS(ParseSchedule("canonical:0"), ScheduleError);
  CHECK_THROWS_AS(ParseSchedule("canonical:4:odd"), ScheduleError);
  CHECK_THROWS_AS(ParseSchedule("file:"), ScheduleError);
}

TEST_CASE("core's file order builds only a loaded tree, and refuses an unloaded one in one line",
          "[fast][orders]") {
  // ParseSchedule reads nothing: the tree is the caller's to load (experiments/io/tree_file.hpp).
  for (const char* text : {"file:/nonexistent/t.json", "omp:2:file:/nonexistent/t.json",
                           "splitk:2:file:/nonexistent/t.json"}) {
    const Schedule s = ParseSchedule(text);
    CHECK(!(s.kind() == ScheduleKind::kFile ? s : s.Inner()).As<orders::FileParams>().tree);
    try {
      (void)BuildTree(s, 8);
      FAIL("built " << text << " without its tree");
    } catch (const ScheduleError& e) {
      const std::string msg = e.what();
      std::cout << "  " << text << ": " << msg << "\n";
      CHECK(msg.rfind("file:/nonexistent/t.json: the tree was not loaded", 0) == 0);
      CHECK(msg.find('\n') == std::string::npos);
    }
  }
  // Loaded: the tree itself, named file:PATH, over its own n only (the n check is core's).
  const MergeTree t = BuildTree("pairwise:2", 6);
  Schedule f = ParseSchedule("file:p.json");
  f.As<orders::FileParams>().tree = std::make_shared<const MergeTree>(t);
  const MergeTree u = BuildTree(f, 6);
  CHECK(u.chains == t.chains);
  CHECK(u.combines == t.combines);
  CHECK(u.schedule == "file:p.json");
  try {
    (void)BuildTree(f, 7);
    FAIL("built a tree over 6 inputs for 7");
  } catch (const ScheduleError& e) {
    CHECK(std::string(e.what()) ==
          "file:p.json: the tree is over n = 6 inputs, but the input has 7");
  }
  // Nested, each chunk of omp:2 over 12 inputs is the loaded tree over 6.
  Schedule omp = ParseSchedule("omp:2:file:p.json");
  omp.As<orders::OmpParams>().inner = NestedSchedule(f);
  CHECK(TreeHash(BuildTree(omp, 12)) == TreeHash(BuildTree("omp:2:seq:pairwise:2", 12)));
  // A loaded schedule equals its copies, not a fresh parse of its text.
  const Schedule copy = f;
  CHECK(copy == f);
  CHECK(!(ParseSchedule("file:p.json") == f));
}

TEST_CASE("a file: tree that is not a merge order is refused with one line", "[fast][orders]") {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"n":3,"chains":[{"first":0,"count":2},{"first":1,"count":2}],"combines":[[0,1]]})",
       "taken twice"},
      {R"({"n":3,"chains":[{"first":0,"count":2}],"combines":[]})", "dropped"},
      {R"({"n":2,"chains":[{"first":0,"count":1},{"first":5,"count":1}],"combines":[[0,1]]})",
       "reaches past"},
      {R"({"n":2,"chains":[{"first":0,"count":1},{"first":1,"count":1}],"combines":[[0,7]]})",
       "before it is computed"},
      {R"({"n":2,"chains":[{"first":0,"count":2,"fused":4}],"combines":[]})", "unknown key"},
      {R"({"n":2,"chains":[{"first":0,"count":2}],"combines":[]} x)", "trailing"},
      {R"({"n":2,"chains":[{"first":0,"count":2})", "expected"},
      {R"({"chains":[],"combines":[]})", "missing key"},
      // nlohmann-json's number overflow (out_of_range, not parse_error; fuzz_tree_json found it).
      {R"({"n":1e999,"chains":[],"combines":[]})", "not valid JSON"},
      {R"({"n":2,"chains":[{"first":0,"count":2,"mode":3}],"combines":[]})",
       "mode must be a string"},
      {R"({"n":2,"chains":[{"first":0,"count":2,"mode":"fused"}],"combines":[]})",
       "\"fused\" node is missing"},
      {R"({"n":2,"chains":[{"first":0,"count":2}],"combines":[],"fused":{"input":"fp16",)"
       R"("terms":4,"frac_bits":23,"align":"truncate","output":"fp32-rz","two_stage":false}})",
       "no chain has mode fused"},
      {R"({"n":2,"chains":[{"first":0,"count":2,"mode":"fused"}],"combines":[],"fused":{)"
       R"("input":"fp16","terms":0,"frac_bits":23,"align":"truncate","output":"fp32-rz",)"
       R"("two_stage":false}})",
       "terms must be in [1, 64]"},
      {R"({"n":2,"chains":[{"first":0,"count":2,"mode":"fused"}],"combines":[],"fused":{)"
       R"("input":"fp16","terms":4,"frac_bits":40,"align":"truncate","output":"fp32-rz",)"
       R"("two_stage":false}})",
       "frac_bits must be in [0, 35]"},
      {R"({"n":2,"chains":[{"first":0,"count":2,"mode":"fused"}],"combines":[],"fused":{)"
       R"("input":"fp16","terms":4,"frac_bits":30,"align":"truncate","output":"fp32-rz",)"
       R"("two_stage":false}})",
       "frac_bits above 25 needs a group node"},
      {R"({"n":2,"chains":[{"first":0,"count":2,"mode":"fused"}],"combines":[],"fused":{)"
       R"("input":"fp16","terms":64,"frac_bits":35,"align":"truncate","output":"fp32-rz",)"
       R"("two_stage":false,"group":16}})",
       "group node takes fp4e2m1 input"},
      {R"({"n":2,"chains":[{"first":0,"count":2,"mode":"fused"}],"combines":[],"fused":{)"
       R"("input":"fp4e2m1","terms":64,"frac_bits":35,"align":"truncate","output":"fp32-rz",)"
       R"("two_stage":false,"group":8}})",
       "group must be 0 or 16"},
      {R"({"n":2,"chains":[{"first":0,"count":2,"mode":"fused"}],"combines":[],"fused":{)"
       R"("input":"fp64","terms":4,"frac_bits":23,"align":"truncate","output":"fp32-rz",)"
       R"("two_stage":false}})",
       "input must be one of fp16 bf16 tf32 fp8e4m3"},
      {R"({"n":2,"chains":[{"first":0,"count":2,"mode":"fused"}],"combines":[],"fused":{)"
       R"("input":"fp16","terms":4}})",
       "needs all of"},
  };
  for (const auto& [json, why] : bad) {
    INFO(json);
    try {
      TreeFromJson(json, "t.json");
      FAIL("accepted");
    } catch (const ScheduleError& e) {
      const std::string msg = e.what();
      std::cout << "  " << msg << "\n";
      CHECK(msg.find(why) != std::string::npos);
      CHECK(msg.find('\n') == std::string::npos);
    }
  }
  // Interleaving without "permutes" is inferred; an explicit false is an error.
  const auto t = TreeFromJson(
      R"({"n":4,"chains":[{"first":0,"count":2,"stride":2},{"first":1,"count":2,"stride":2}],"combines":[[0,1]]})",
      "x");
  CHECK(t.permutes);
  CHECK_THROWS_AS(
      TreeFromJson(
          R"({"n":4,"permutes":false,"chains":[{"first":0,"count":2,"stride":2},{"first":1,"count":2,"stride":2}],"combines":[[0,1]]})",
          "x"),
      ScheduleError);
}

TEST_CASE("FPRev recovers planted trees exactly from masked sums", "[fast][orders]") {
  const std::vector<std::string> planted = {
      "seq",           "reverse",      "pairwise",           "pairwise:5", "blocked:16:pairwise",
      "strided:8",     "canonical:16", "canonical:7:bisect", "random:11",  "random:12345",
      "omp:3:pairwise"};
  for (const auto& s : planted)
    for (std::uint64_t n : {1, 2, 3, 9, 64, 129, 1000}) {
      const MergeTree truth = BuildTree(s, n);
      ProbeStats stats;
      // The black box: ReplayOracle of the planted tree in fp64 on the mask.
      const double m = MaskMagnitude(n, 53);
      MaskQuery q = [&](std::uint64_t i, const std::vector<std::uint64_t>& js) {
        std::vector<double> out;
        std::vector<double> x(n, 1.0);
        for (std::uint64_t j : js) {
          x[i] = m;
          x[j] = -m;
          out.push_back(ReplaySum(truth, x));
          x[j] = 1.0;
        }
        return out;
      };
      const BinaryTree got = RecoverSumTree(n, q, stats);
      const MergeTree rec = ToMergeTree(got, "probe");
      INFO(s << ", n " << n << ", calls " << stats.calls);
      REQUIRE(ValidateTree(rec) == "");
      REQUIRE(TreeHash(rec, TreeForm::kBinary) == TreeHash(truth, TreeForm::kBinary));
      if (n == 1000)
        std::cout << "  FPRev " << s << " n = 1000: " << stats.calls << " calls in "
                  << stats.batches << " batches, " << rec.chains.size() << " chains\n";
    }
  // A correctly rounded sum (n - 2 on every mask) is no tree of rounded additions: refused,
  // not mis-recovered.
  const std::uint64_t n = 16;
  MaskQuery exact = [&](std::uint64_t, const std::vector<std::uint64_t>& js) {
    return std::vector<double>(js.size(), static_cast<double>(n - 2));
  };
  ProbeStats st;
  CHECK_THROWS_AS(RecoverSumTree(n, exact, st), ProbeError);
}

TEST_CASE("packed masks prove a predicted tree and refuse a wrong one", "[fast][orders]") {
  // The black box: the planted tree replayed in fp32 on the sparse input. The proof of the
  // planted tree itself must pass; the proof of any other tree must fail (a binary tree is
  // its set of clusters, and every cluster of the prediction is checked).
  struct Case {
    const char *truth, *predicted;
  };
  const std::vector<Case> cases = {{"numpy", "numpy"},
                                   {"pairwise:5", "pairwise:5"},
                                   {"strided:8", "strided:8"},
                                   {"random:7", "random:7"},
                                   {"seq", "seq"},
                                   {"blocked:16:pairwise", "blocked:16:pairwise"},
                                   {"numpy", "strided:8"},
                                   {"pairwise", "pairwise:4"},
                                   {"random:7", "random:8"},
                                   {"seq", "reverse"},
                                   {"canonical:16", "canonical:16:bisect"}};
  for (const Case& c : cases)
    for (std::uint64_t n : {3, 17, 1000, 5000}) {
      const MergeTree truth = BuildTree(c.truth, n), predicted = BuildTree(c.predicted, n);
      const bool same =
          TreeHash(truth, TreeForm::kBinary) == TreeHash(predicted, TreeForm::kBinary);
      std::uint64_t calls = 0, inexact = 0;  // inputs that fp32 does not hold
      const SumOracle oracle = [&](const std::vector<MaskedInput>& batch) {
        std::vector<double> out;
        for (const MaskedInput& in : batch) {
          const std::vector<double> x = Materialize(in, n);
          const std::vector<float> xf(x.begin(), x.end());
          for (std::size_t k = 0; k < x.size(); ++k) inexact += static_cast<double>(xf[k]) != x[k];
          out.push_back(ReplayOracleResult<Sum<float>>(truth, std::span<const float>(xf)));
          ++calls;
        }
        return out;
      };
      ProbeStats plan, proof;
      const BinaryTree b = ToBinaryTree(predicted);
      CHECK(ProveSumTree(b, 24, {}, plan).empty());
      const std::string why = ProveSumTree(b, 24, oracle, proof);
      INFO(c.truth << " predicted as " << c.predicted << ", n " << n << ": " << why);
      CHECK(why.empty() == same);
      CHECK(inexact == 0);
      if (same) CHECK(proof.calls == plan.calls);
      CHECK(calls <= plan.calls);
      if (n == 5000 && same)
        std::cout << "  proof of " << c.truth << " n = 5000 (fp32): " << proof.calls << " calls in "
                  << proof.batches << " rounds\n";
    }
}

TEST_CASE("invariance: fixed split size is invariant, fixed split count is not",
          "[fast][orders][invariance]") {
  const std::uint64_t n = 1000;
  // Batch: both fixed families ignore the batch; the split-KV heuristic does not.
  CHECK(CheckInvariance("batch", "splits:4", n, 32).invariant);
  CHECK(CheckInvariance("batch", "splitsize:128", n, 32).invariant);
  const InvarianceResult h = CheckInvariance("batch", "heuristic:132", n, 32);
  REQUIRE(!h.invariant);
  // Padding: a fixed split size with the seq outer order is invariant, a split count is not,
  // and a split size with a pairwise outer order is not either.
  CHECK(CheckInvariance("padding", "splitsize:128", n, 300).invariant);
  const InvarianceResult p = CheckInvariance("padding", "splits:4", n, 64);
  REQUIRE(!p.invariant);
  CHECK(!CheckInvariance("padding", "splitsize:128:pairwise", n, 300).invariant);
  // Alignment: chunks anchored at the buffer start cut the row where the grid falls.
  CHECK(!CheckInvariance("alignment", "splitsize:128", n, 8).invariant);
  CHECK(CheckInvariance("alignment", "seq", n, 8).invariant);
  // The witnesses separate the contexts when replayed (pads and prefix zero).
  for (const InvarianceResult* r : {&h, &p}) {
    const double m = MaskMagnitude(2 * n + 64, 53);
    auto row = [&](const MergeTree& t, std::uint64_t off) {
      std::vector<double> x(t.n, 0.0);
      for (std::uint64_t k = 0; k < n; ++k) x[off + k] = 1.0;
      x[off + r->diff.i] = m;
      x[off + r->diff.j] = -m;
      return ReplaySum(t, x);
    };
    const double a = row(r->tree_a, r->offset_a), b = row(r->tree_b, r->offset_b);
    INFO(r->context_a << " vs " << r->context_b);
    CHECK(a != b);
    std::cout << "  invariance witness: " << r->context_a << " -> " << a << ", " << r->context_b
              << " -> " << b << "\n";
  }
}

TEST_CASE("torch:LANES builds valid trees of torch.sum's shape", "[fast][orders]") {
  // The trees PyTorch 1.13 itself gives are checked against torch in
  // tests/experiments/test_orders_cli.cpp; here: validity at every small n, and the shape the
  // probe recovered at n = 128 in fp32 under AVX2 (32 lanes of 4, lanes merged in order).
  for (std::uint64_t lanes : {1, 2, 4, 8, 16})
    for (std::uint64_t n = 0; n <= 300; ++n) {
      const MergeTree t = BuildTree("torch:" + std::to_string(lanes), n);
      INFO("torch:" << lanes << " n " << n);
      REQUIRE(ValidateTree(t).empty());
    }
  for (std::uint64_t n : {4097, 70000, 1 << 20})
    CHECK(ValidateTree(BuildTree("torch:8", n)).empty());
  const MergeTree t = BuildTree("torch:8", 128);
  CHECK(t.chains.size() == 32);
  for (const Chain& c : t.chains) CHECK((c.count == 4 && c.stride == 32));
  const TreeStats st = ComputeStats(t);
  std::cout << "  torch:8 n=128: " << st.chains << " chains, combine depth " << st.combine_depth
            << "\n";
  CHECK(st.combine_depth == 10);
  CHECK_THROWS_AS(ParseSchedule("torch"), ScheduleError);
  CHECK_THROWS_AS(ParseSchedule("torch:0"), ScheduleError);
  CHECK(ToString(ParseSchedule("torch:8")) == "torch:8");
}
