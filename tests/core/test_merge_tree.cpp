// Merge trees: every schedule builds a valid tree for every n, depth statistics match the
// closed forms of the a-priori bounds, the validator rejects broken trees with a reason, and
// the exports carry the structure.
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "core/merge_tree.hpp"
#include "core/schedule.hpp"
#include "support/test_support.hpp"

using carrier::BuildTree;
using carrier::ComputeStats;
using carrier::MergeTree;
using carrier::ValidateTree;

namespace {

std::uint64_t CeilLog2(std::uint64_t n) {
  std::uint64_t d = 0;
  while ((std::uint64_t{1} << d) < n) ++d;
  return d;
}

std::vector<std::uint64_t> Sizes() {
  std::vector<std::uint64_t> n = {0,  1,  2,  3,   4,   5,   7,   8,    9,    15,   16,   17,  31,
                                  63, 64, 65, 100, 127, 128, 129, 1000, 1023, 1024, 1025, 4097};
  carrier::test::Rng rng(7);
  for (int i = 0; i < carrier::test::Trials(8); ++i) n.push_back(1 + rng.Below(20000));
  return n;
}

const std::vector<std::string> kSchedules = {"seq",
                                             "reverse",
                                             "pairwise",
                                             "pairwise:3",
                                             "pairwise:8:lift",
                                             "blocked:1",
                                             "blocked:4",
                                             "blocked:64:pairwise",
                                             "blocked:7:pairwise:lift",
                                             "blocked:64:lift",
                                             "strided:1",
                                             "strided:4",
                                             "strided:16",
                                             "strided:7",
                                             "random:0",
                                             "random:12345",
                                             "splitk:3",
                                             "splitk:5:pairwise",
                                             "splitk:64:strided:2"};

}  // namespace

TEST_CASE("every schedule builds a valid tree for every n", "[fast][tree]") {
  for (const auto& text : kSchedules) {
    for (std::uint64_t n : Sizes()) {
      MergeTree t = BuildTree(text, n);
      INFO("schedule=" << text << " n=" << n);
      REQUIRE(ValidateTree(t) == "");
      CHECK(t.schedule == text);
      CHECK(t.n == n);
      const auto st = ComputeStats(t);
      std::uint64_t covered = 0;
      for (const auto& c : t.chains) covered += c.count;
      CHECK(covered == n);
      // strided keeps its K lanes at n = 0, also as a partition's nested order (empty slices).
      if (n > 0 || text.find("strided") != std::string::npos) {
        CHECK(t.combines.size() + 1 == t.chains.size());
      } else {
        CHECK(t.Empty());
      }
      CHECK(st.max_leaf_depth <= (n ? n - 1 : 0));
      CHECK(st.mean_leaf_depth <= static_cast<double>(st.max_leaf_depth) + 1e-9);
    }
  }
}

TEST_CASE("leaf depths match the closed forms of the bounds", "[fast][tree]") {
  for (std::uint64_t n : Sizes()) {
    if (n == 0) continue;
    INFO("n=" << n);
    CHECK(ComputeStats(BuildTree("seq", n)).max_leaf_depth == n - 1);
    CHECK(ComputeStats(BuildTree("reverse", n)).max_leaf_depth == n - 1);
    CHECK(ComputeStats(BuildTree("pairwise", n)).max_leaf_depth == CeilLog2(n));
    CHECK(ComputeStats(BuildTree("random:3", n)).max_leaf_depth >= CeilLog2(n));
    for (std::uint64_t b : {1u, 4u, 64u}) {
      INFO("b=" << b);
      const std::uint64_t tiles = (n + b - 1) / b;
      // FABsum: b - 1 inside the first tile, ceil(log2(n/b)) across tiles.
      CHECK(
          ComputeStats(BuildTree("blocked:" + std::to_string(b) + ":pairwise", n)).max_leaf_depth ==
          std::min(b, n) - 1 + CeilLog2(tiles));
      CHECK(ComputeStats(BuildTree("blocked:" + std::to_string(b), n)).max_leaf_depth ==
            std::min(b, n) - 1 + (tiles - 1));
    }
    for (std::uint64_t k : {4u, 16u}) {
      INFO("K=" << k);
      const std::uint64_t lane_len = (n + k - 1) / k;
      const std::uint64_t busy = std::min(n, k);
      CHECK(ComputeStats(BuildTree("strided:" + std::to_string(k), n)).max_leaf_depth ==
            lane_len - 1 + CeilLog2(busy));
    }
  }
  // Mean depth by hand: seq over 4 inputs has depths 3, 3, 2, 1.
  CHECK(ComputeStats(BuildTree("seq", 4)).mean_leaf_depth == Approx(9.0 / 4));
  // pairwise over 5: split 3 | 2, then 2 | 1: depths 3, 3, 2, 2, 2.
  CHECK(ComputeStats(BuildTree("pairwise", 5)).mean_leaf_depth == Approx(12.0 / 5));
  // strided:4 over 2 inputs: lanes 2 and 3 are empty, merging them is exact: depths 1, 1.
  CHECK(ComputeStats(BuildTree("strided:4", 2)).max_leaf_depth == 1);
}

TEST_CASE("tree shapes are the documented ones", "[fast][tree]") {
  MergeTree seq = BuildTree("seq", 5);
  REQUIRE(seq.chains.size() == 1);
  CHECK(seq.chains[0] == carrier::Chain{0, 5, 1, carrier::ChainMode::kPush});

  MergeTree rev = BuildTree("reverse", 3);  // x0 + (x1 + x2)
  REQUIRE(rev.combines.size() == 2);
  CHECK(rev.combines[0] == carrier::CombineOp{1, 2});
  CHECK(rev.combines[1] == carrier::CombineOp{0, 3});

  MergeTree blk = BuildTree("blocked:4:lift", 10);
  REQUIRE(blk.chains.size() == 3);
  CHECK(blk.chains[2] == carrier::Chain{8, 2, 1, carrier::ChainMode::kLiftTile});
  CHECK(blk.combines[0] == carrier::CombineOp{0, 1});
  CHECK(blk.combines[1] == carrier::CombineOp{3, 2});

  MergeTree str = BuildTree("strided:4", 10);
  REQUIRE(str.chains.size() == 4);
  CHECK(str.chains[1] == carrier::Chain{1, 3, 4, carrier::ChainMode::kPush});
  CHECK(str.chains[3] == carrier::Chain{3, 2, 4, carrier::ChainMode::kPush});
  CHECK(str.permutes);
  // lanes merged pairwise in lane order: (l0 + l1) + (l2 + l3)
  CHECK(str.combines[0] == carrier::CombineOp{0, 1});
  CHECK(str.combines[1] == carrier::CombineOp{2, 3});
  CHECK(str.combines[2] == carrier::CombineOp{4, 5});
}

TEST_CASE("strided lane tiles and omp chunks build the documented trees", "[fast][tree]") {
  using carrier::Chain;
  using carrier::ChainMode;
  using carrier::CombineOp;
  MergeTree t = BuildTree("strided:2:tile:2:lift", 7);  // lane 0: x0 x2 | x4 x6; lane 1: x1 x3 | x5
  REQUIRE(t.chains.size() == 4);
  CHECK(t.chains[0] == Chain{0, 2, 2, ChainMode::kLiftTile});
  CHECK(t.chains[1] == Chain{4, 2, 2, ChainMode::kLiftTile});
  CHECK(t.chains[2] == Chain{1, 2, 2, ChainMode::kLiftTile});
  CHECK(t.chains[3] == Chain{5, 1, 2, ChainMode::kLiftTile});
  REQUIRE(t.combines.size() == 3);
  CHECK(t.combines[0] == CombineOp{0, 1});
  CHECK(t.combines[1] == CombineOp{2, 3});
  CHECK(t.combines[2] == CombineOp{4, 5});
  MergeTree o = BuildTree("omp:2", 5);  // chunks [0, 2) and [2, 5), each one seq chain
  REQUIRE(o.chains.size() == 2);
  CHECK(o.chains[0] == Chain{0, 2, 1, ChainMode::kPush});
  CHECK(o.chains[1] == Chain{2, 3, 1, ChainMode::kPush});
  CHECK(o.combines == std::vector<CombineOp>{{0, 1}});
  CHECK(BuildTree("omp:3", 1).chains.size() == 1);  // empty chunks have no node
  for (const std::string text : {"strided:4:tile:3:lift", "strided:16:tile:1", "omp:3:seq",
                                 "omp:4:pairwise:strided:4:tile:2:lift", "omp:7:seq:pairwise:3",
                                 "omp:2:pairwise:strided:16"}) {
    for (std::uint64_t n : Sizes()) {
      MergeTree m = BuildTree(text, n);
      INFO("schedule=" << text << " n=" << n);
      REQUIRE(ValidateTree(m) == "");
      CHECK(m.schedule == text);
      std::uint64_t covered = 0;
      for (const auto& c : m.chains) covered += c.count;
      CHECK(covered == n);
      CHECK((m.Empty() || m.combines.size() + 1 == m.chains.size()));
    }
  }
}

TEST_CASE("the validator rejects broken trees with a reason", "[fast][tree]") {
  const MergeTree good = BuildTree("pairwise", 8);
  REQUIRE(ValidateTree(good) == "");
  struct Case {
    std::string what;
    MergeTree tree;
    std::string must_mention;
  };
  std::vector<Case> cases;
  {
    MergeTree t = good;  // drop input 7
    t.chains[7].count = 0;
    cases.push_back({"dropped input", t, "input 7 is dropped"});
  }
  {
    MergeTree t = good;  // input 3 in two chains
    t.chains[4].first = 3;
    cases.push_back({"duplicated input", t, "input 3 is taken twice"});
  }
  {
    MergeTree t = good;  // swap the operands of the first combine
    std::swap(t.combines[0].left, t.combines[0].right);
    cases.push_back({"swapped operands", t, "swaps its operands"});
  }
  {
    MergeTree t = good;  // the root uses a node twice
    t.combines.back().right = t.combines.back().left;
    cases.push_back({"self combine", t, "with itself"});
  }
  {
    MergeTree t = good;
    t.combines[1].right = t.combines[0].right;
    cases.push_back({"node consumed twice", t, "consumed twice"});
  }
  {
    MergeTree t = good;  // a combine that refers forward
    t.combines[0].right = t.NodeCount() - 1;
    cases.push_back({"forward reference", t, "before it is computed"});
  }
  {
    MergeTree t = good;  // a chain past the end
    t.chains[7].count = 2;
    cases.push_back({"past the end", t, "reaches past input"});
  }
  {
    MergeTree t = good;  // a dangling node: drop the root combine
    t.combines.pop_back();
    cases.push_back({"dangling node", t, "never consumed"});
  }
  {
    MergeTree t = BuildTree("strided:2", 8);  // interleaving without the declaration
    t.permutes = false;
    cases.push_back({"undeclared permutation", t, "does not declare `permutes`"});
  }
  {
    MergeTree t;  // no nodes for nonempty input
    t.n = 3;
    cases.push_back({"no nodes", t, "no nodes"});
  }
  for (const auto& c : cases) {
    const std::string why = ValidateTree(c.tree);
    std::cout << "  " << c.what << " -> " << why << "\n";
    INFO(c.what << ": " << why);
    CHECK(why.find(c.must_mention) != std::string::npos);
  }
}

TEST_CASE("trees export text and DOT and JSON", "[fast][tree]") {
  MergeTree t = BuildTree("blocked:4:pairwise", 10);
  const std::string dot = carrier::ToDot(t);
  CHECK(dot.rfind("digraph merge_tree {", 0) == 0);
  CHECK(dot.find("label=\"push x[8..9]\"") != std::string::npos);
  CHECK(dot.find("[label=\"L\"]") != std::string::npos);
  const std::string json = carrier::ToJson(t);
  CHECK(json.find("\"schedule\":\"blocked:4:pairwise\"") != std::string::npos);
  CHECK(json.find("\"max_leaf_depth\":5") != std::string::npos);
  CHECK(json.find("\"combines\":[[0,1],[3,2]]") != std::string::npos);
  const std::string text = carrier::ToText(t);
  std::cout << text;
  CHECK(text.find("max leaf depth  5") != std::string::npos);
  CHECK(text.find("`-- push x[8..9]") != std::string::npos);
  CHECK(carrier::ToText(BuildTree("pairwise", 1000), 10).find("drawing omitted") !=
        std::string::npos);
  CHECK(carrier::ToText(BuildTree("seq", 0)).find("Identity") != std::string::npos);
}

// splitk:S against the tree written out from its definition (slices of ceil(n / S), each the
// nested order's tree over its own inputs, the partials combined left to right).
TEST_CASE("splitk:S builds slices of ceil(n / S) combined in order", "[fast][tree]") {
  using carrier::Chain;
  using carrier::ChainMode;
  using carrier::CombineOp;
  MergeTree t = BuildTree("splitk:4", 10);  // slices [0,3) [3,6) [6,9) [9,10)
  REQUIRE(t.chains.size() == 4);
  CHECK(t.chains[0] == Chain{0, 3, 1, ChainMode::kPush});
  CHECK(t.chains[1] == Chain{3, 3, 1, ChainMode::kPush});
  CHECK(t.chains[2] == Chain{6, 3, 1, ChainMode::kPush});
  CHECK(t.chains[3] == Chain{9, 1, 1, ChainMode::kPush});
  CHECK(t.combines == std::vector<CombineOp>{{0, 1}, {4, 2}, {5, 3}});
  // omp:4 over 10 cuts 2 3 2 3: a different order.
  CHECK(BuildTree("omp:4", 10).chains[0].count == 2);
  // n = 9, S = 4: slices of 3, the fourth empty (no node under seq).
  MergeTree e = BuildTree("splitk:4", 9);
  CHECK(e.chains.size() == 3);
  CHECK(e.combines == std::vector<CombineOp>{{0, 1}, {3, 2}});
  // With a nested order: each slice by pairwise, slice roots in order.
  MergeTree p = BuildTree("splitk:2:pairwise", 4);  // slices [0,2) [2,4)
  REQUIRE(p.chains.size() == 4);
  CHECK(p.combines == std::vector<CombineOp>{{0, 1}, {2, 3}, {4, 5}});
  // An empty slice whose nested order keeps nodes (strided's K lanes) takes part.
  MergeTree s = BuildTree("splitk:3:strided:2", 4);  // slices [0,2) [2,4) and one empty
  CHECK(s.chains.size() == 6);
  CHECK(s.chains[4].count == 0);
  CHECK(ValidateTree(s) == "");
  // S far above n: only the non-empty slices are visited.
  CHECK(BuildTree("splitk:1000000000000000", 5).chains.size() == 5);
  for (const std::string text : {"splitk:1", "splitk:3", "splitk:7:pairwise", "splitk:4:blocked:3",
                                 "splitk:5:strided:3:tile:2:lift", "splitk:3:random:9"}) {
    for (std::uint64_t n : Sizes()) {
      const MergeTree m = BuildTree(text, n);
      INFO("schedule=" << text << " n=" << n);
      REQUIRE(ValidateTree(m) == "");
      CHECK(m.schedule == text);
      // The longest chain under seq is the slice length ceil(n / S).
      if (text == "splitk:3" && n > 0) CHECK(ComputeStats(m).longest_chain == (n + 2) / 3);
    }
  }
}
