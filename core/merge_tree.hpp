// core/merge_tree.hpp: a merge order made explicit, so any kernel's order can be replayed.
// Over 600 lines by choice: one MergeTree contract, its builder, validator, stats and exports.
// A MergeTree over n inputs is
//   chains    node ids 0 .. C-1. Chain k starts from Identity and takes the inputs
//             first, first + stride, ... (count of them, increasing), either pushing them one
//             by one (ChainMode::kPush) or lifting them whole with the carrier's LiftTile
//             (ChainMode::kLiftTile). A chain may be empty (an idle SIMD lane, say): its state
//             is Identity, and the combines that consume it are part of the tree.
//   combines  node ids C .. C+M-1, in evaluation order. Combine k is
//             Combine(state[left], state[right]); left covers the earlier inputs (operand
//             order is preserved, never swapped).
//   root      the last node; with no nodes at all (n = 0 under an ordered schedule) the
//             result is Identity.
//             A chain in ChainMode::kFused is a matrix unit's accumulation: its inputs go in
//             groups of fused.terms (the last group may be shorter) through the tree's fused
//             node (MergeTree::fused, core/mma.hpp), each step adding one group's exact
//             products to the running state in one rounding; only carriers that define
//             FusedStep (dot) replay it.
// A tree whose combines merge interleaved index sets (strided:K) sets `permutes`; Replay
// refuses it for carriers whose Combine is not commutative.
//
// Leaf depth of an input = rounded operations on its path to the root: inside a chain of
// length L the element at position j passes (L - 1 - j) later pushes plus its own push when
// j > 0 (the push onto Identity is exact), and every combine above the chain adds one unless
// its other operand is empty (merging with Identity is exact). So
// seq has max depth n - 1 (Higham's gamma_{n-1}), pairwise ceil(log2 n), and blocked:b with a
// pairwise outer order b - 1 + ceil(log2(n/b)) (FABsum).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/hash.hpp"
#include "core/pairwise.hpp"
#include "core/schedule.hpp"

namespace carrier {

enum class ChainMode : std::uint8_t { kPush, kLiftTile, kFused };

struct Chain {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
  std::uint64_t stride = 1;
  ChainMode mode = ChainMode::kPush;
  friend bool operator==(const Chain&, const Chain&) = default;
};

struct CombineOp {
  std::uint64_t left = 0;
  std::uint64_t right = 0;
  friend bool operator==(const CombineOp&, const CombineOp&) = default;
};

struct MergeTree {
  std::uint64_t n = 0;
  std::vector<Chain> chains;
  std::vector<CombineOp> combines;
  bool permutes = false;
  std::string schedule;  // canonical text of the schedule that built it
  MmaNode fused{};       // the fused node of its kFused chains (mma: schedules; core/mma.hpp)

  std::uint64_t NodeCount() const { return chains.size() + combines.size(); }
  bool Empty() const { return NodeCount() == 0; }
  std::uint64_t Root() const { return NodeCount() - 1; }
  bool UsesTileLift() const {
    return std::any_of(chains.begin(), chains.end(),
                       [](const Chain& c) { return c.mode == ChainMode::kLiftTile; });
  }
  bool UsesFusedNode() const {
    return std::any_of(chains.begin(), chains.end(),
                       [](const Chain& c) { return c.mode == ChainMode::kFused; });
  }
};

// Start of chunk c of the static partition of omp:P over n inputs: floor(c n / P), computed
// without overflow (128-bit product). kernels/omp uses the same function, so both agree.
inline std::uint64_t OmpChunkStart(std::uint64_t n, std::uint64_t parts, std::uint64_t c) {
  __extension__ typedef unsigned __int128 Wide;  // a GNU extension: -Wpedantic stays quiet
  return static_cast<std::uint64_t>((static_cast<Wide>(c) * n) / parts);
}

namespace tree_detail {

class Builder {
 public:
  Builder(std::uint64_t n, const Schedule& s) : s_(s) {
    tree_.n = n;
    tree_.schedule = ToString(s);
  }

  std::uint64_t AddChain(std::uint64_t first, std::uint64_t count, std::uint64_t stride = 1) {
    ChainMode mode = s_.lift ? ChainMode::kLiftTile : ChainMode::kPush;
    tree_.chains.push_back({first, count, stride, mode});
    return tree_.chains.size() - 1;
  }
  // Chains must all exist before the first combine, since combines are numbered after chains.
  std::uint64_t AddCombine(std::uint64_t left, std::uint64_t right) {
    tree_.combines.push_back({left, right});
    return tree_.chains.size() + tree_.combines.size() - 1;
  }
  MergeTree Take() { return std::move(tree_); }
  MergeTree& tree() { return tree_; }

 private:
  Schedule s_;
  MergeTree tree_;
};

// Recursive halving over node ids [lo, hi) at core/pairwise.hpp's split: the left half takes
// the extra node.
inline std::uint64_t PairwiseOver(Builder& b, const std::vector<std::uint64_t>& nodes,
                                  std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) return nodes[lo];
  std::size_t mid = PairwiseMid(lo, hi);
  std::uint64_t left = PairwiseOver(b, nodes, lo, mid);
  std::uint64_t right = PairwiseOver(b, nodes, mid, hi);
  return b.AddCombine(left, right);
}

inline std::uint64_t SeqOver(Builder& b, const std::vector<std::uint64_t>& nodes) {
  std::uint64_t acc = nodes[0];
  for (std::size_t i = 1; i < nodes.size(); ++i) acc = b.AddCombine(acc, nodes[i]);
  return acc;
}

// Leaves of pairwise:LEAF: the same halving on [0, n) stopped at LEAF, listed left to right.
inline void PairwiseLeaves(std::uint64_t lo, std::uint64_t hi, std::uint64_t leaf,
                           std::vector<std::pair<std::uint64_t, std::uint64_t>>& out) {
  if (hi - lo <= leaf) {
    out.push_back({lo, hi});
    return;
  }
  std::uint64_t mid = PairwiseMid(lo, hi);
  PairwiseLeaves(lo, mid, leaf, out);
  PairwiseLeaves(mid, hi, leaf, out);
}

inline std::uint64_t PairwiseFromLeaves(Builder& b, std::uint64_t lo, std::uint64_t hi,
                                        std::uint64_t leaf, std::uint64_t& next_chain) {
  if (hi - lo <= leaf) return next_chain++;
  std::uint64_t mid = PairwiseMid(lo, hi);
  std::uint64_t left = PairwiseFromLeaves(b, lo, mid, leaf, next_chain);
  std::uint64_t right = PairwiseFromLeaves(b, mid, hi, leaf, next_chain);
  return b.AddCombine(left, right);
}

// Counter-based mixing (core/hash.hpp's SplitMix64): the split of [lo, hi) depends only on
// (seed, lo, hi), never on traversal order. Kept as a name for existing callers (verbs/probe).
inline std::uint64_t Mix(std::uint64_t x) { return SplitMix64(x); }

inline std::uint64_t RandomSplit(std::uint64_t seed, std::uint64_t lo, std::uint64_t hi) {
  std::uint64_t h = Mix(Mix(Mix(seed) ^ lo) ^ hi);
  return lo + 1 + h % (hi - lo - 1);
}

inline std::uint64_t RandomOver(Builder& b, std::uint64_t seed, std::uint64_t lo,
                                std::uint64_t hi) {
  if (hi - lo == 1) return lo;  // chain id == input index (one chain per input)
  std::uint64_t mid = RandomSplit(seed, lo, hi);
  std::uint64_t left = RandomOver(b, seed, lo, mid);
  std::uint64_t right = RandomOver(b, seed, mid, hi);
  return b.AddCombine(left, right);
}

}  // namespace tree_detail

// The tree of a `cuda:` schedule: core/cuda_tree.hpp (included at the end of this file).
inline MergeTree BuildCudaTree(const CudaSchedule& s, std::uint64_t n);

// Orders from outside: canonical:L (core/canonical_tree.hpp, included at the end of this file)
// and file:PATH (core/tree_io.hpp; defined in core/tree_io.cpp, which parses with nlohmann-json).
inline MergeTree BuildCanonicalTree(const Schedule& s, std::uint64_t n);
MergeTree LoadTreeFile(const std::string& path, std::uint64_t n);
// ---- The tree of an `mma:` schedule ----
// One kFused chain over [0, n), or with promote:N the kFused chains [jN, min((j+1)N, n)) merged
// left to right (the fp32 accumulator the partials are promoted into). The tree carries the
// profile's fused node; its groups are the profile's k / split products.
inline MergeTree BuildMmaTree(const Schedule& s, std::uint64_t n) {
  const MmaProfile* profile = FindMmaProfile(s.mma);
  if (!profile) throw ScheduleError("bad schedule '" + ToString(s) + "': unknown mma profile");
  tree_detail::Builder b(n, s);
  b.tree().fused = profile->node;
  if (n == 0) return b.Take();
  const std::uint64_t span = s.promote ? s.promote : n;
  std::vector<std::uint64_t> chunks;
  for (std::uint64_t lo = 0; lo < n; lo += span) {
    chunks.push_back(b.AddChain(lo, std::min(span, n - lo)));
    b.tree().chains.back().mode = ChainMode::kFused;
  }
  tree_detail::SeqOver(b, chunks);
  return b.Take();
}
inline MergeTree BuildNumpyTree(const Schedule& s, std::uint64_t n);
inline MergeTree BuildTorchTree(const Schedule& s, std::uint64_t n);
// Trees whose size does not follow from n (K lanes of strided:K, empty omp chunks whose inner
// schedule still has nodes) are refused with a ScheduleError above this many empty nodes, so
// a large parameter cannot exhaust memory on a small input.
inline constexpr std::uint64_t kMaxEmptyNodes = std::uint64_t{1} << 16;

// The explicit tree of schedule s over n inputs.
inline MergeTree BuildTree(const Schedule& s, std::uint64_t n) {  // NOLINT(misc-no-recursion)
  using namespace tree_detail;
  Builder b(n, s);
  switch (s.kind) {
    case ScheduleKind::kSeq:
      if (n > 0) b.AddChain(0, n);
      break;
    case ScheduleKind::kReverse: {
      for (std::uint64_t i = 0; i < n; ++i) b.AddChain(i, 1);
      if (n > 1) {
        std::uint64_t acc = n - 1;
        for (std::uint64_t i = n - 1; i-- > 0;) acc = b.AddCombine(i, acc);
      }
      break;
    }
    case ScheduleKind::kPairwise: {
      if (n == 0) break;
      std::vector<std::pair<std::uint64_t, std::uint64_t>> leaves;
      PairwiseLeaves(0, n, s.leaf, leaves);
      for (auto [lo, hi] : leaves) b.AddChain(lo, hi - lo);
      std::uint64_t next = 0;
      PairwiseFromLeaves(b, 0, n, s.leaf, next);
      break;
    }
    case ScheduleKind::kBlocked: {
      if (n == 0) break;
      std::vector<std::uint64_t> tiles;
      for (std::uint64_t lo = 0; lo < n; lo += s.tile)
        tiles.push_back(b.AddChain(lo, std::min(s.tile, n - lo)));
      if (s.outer == OuterOrder::kSeq) {
        SeqOver(b, tiles);
      } else {
        PairwiseOver(b, tiles, 0, tiles.size());
      }
      break;
    }
    case ScheduleKind::kStrided: {
      // Always K lanes, empty ones included: a SIMD kernel's idle lanes hold Identity and are
      // merged like the others, and replay must see the same combines.
      if (s.lanes > n && s.lanes - n > kMaxEmptyNodes)
        throw ScheduleError("bad schedule '" + ToString(s) + "': " + std::to_string(s.lanes) +
                            " lanes over " + std::to_string(n) + " inputs would make over " +
                            std::to_string(kMaxEmptyNodes) + " empty lanes");
      std::vector<std::uint64_t> lanes;
      if (s.tile == 0) {
        for (std::uint64_t k = 0; k < s.lanes; ++k) {
          std::uint64_t count = k < n ? (n - k + s.lanes - 1) / s.lanes : 0;
          lanes.push_back(b.AddChain(k < n ? k : 0, count, s.lanes));
        }
      } else {
        // Lane k's tile j holds its elements k + (jT + t)K, t < T: all chains first (lane
        // major), then each lane's tiles merged in order, then the lanes pairwise. A lane with
        // no element is one empty chain; no other tile is empty.
        std::vector<std::pair<std::uint64_t, std::uint64_t>> lane_chains;  // first id, count
        for (std::uint64_t k = 0; k < s.lanes; ++k) {
          const std::uint64_t count = k < n ? (n - k + s.lanes - 1) / s.lanes : 0;
          const std::uint64_t first_id = b.tree().chains.size();
          if (count == 0) b.AddChain(0, 0, s.lanes);
          for (std::uint64_t j = 0; j * s.tile < count; ++j)
            b.AddChain(k + j * s.tile * s.lanes, std::min(s.tile, count - j * s.tile), s.lanes);
          lane_chains.push_back({first_id, b.tree().chains.size() - first_id});
        }
        for (auto [first_id, count] : lane_chains) {
          std::vector<std::uint64_t> ids;
          for (std::uint64_t j = 0; j < count; ++j) ids.push_back(first_id + j);
          lanes.push_back(SeqOver(b, ids));
        }
      }
      PairwiseOver(b, lanes, 0, lanes.size());
      b.tree().permutes = n > 1 && s.lanes > 1;
      break;
    }
    case ScheduleKind::kOmp: {
      // Chunk c = [floor(c n / P), floor((c + 1) n / P)), each the inner schedule's tree
      // shifted to its start. Node ids: every chunk's chains (chunk order), then every chunk's
      // combines (chunk order), then the outer merge of the non-empty chunk roots.
      const Schedule inner = s.inner.empty() ? Schedule::Seq() : ParseSchedule(s.inner);
      std::vector<MergeTree> sub;
      std::uint64_t total_chains = 0;
      // With P > n some chunks are empty. When the inner schedule gives an empty chunk no node
      // (every inner schedule but strided), those chunks add nothing and are skipped, so the
      // work is O(min(n, P)) and not O(P) (omp:10^15 used to hang on n = 100: found by
      // tests/fuzz/fuzz_schedule). Otherwise each empty chunk really holds nodes, and a P that
      // would make an absurd tree is refused.
      const std::uint64_t empty_nodes = s.parts > n ? BuildTree(inner, 0).NodeCount() : 0;
      const bool skip_empty = s.parts > n && empty_nodes == 0;
      if (s.parts > n && empty_nodes > 0 && s.parts - n > kMaxEmptyNodes / empty_nodes)
        throw ScheduleError("bad schedule '" + ToString(s) + "': " + std::to_string(s.parts) +
                            " chunks of " + std::to_string(n) + " inputs with inner schedule '" +
                            s.inner + "' would make over " + std::to_string(kMaxEmptyNodes) +
                            " nodes for empty chunks");
      // The chunk holding input i: the smallest c with floor((c + 1) n / P) > i.
      auto chunk_of = [&](std::uint64_t i) -> std::uint64_t {
        __extension__ typedef unsigned __int128 Wide;
        const Wide num = static_cast<Wide>(i + 1) * s.parts;
        return static_cast<std::uint64_t>((num + n - 1) / n) - 1;
      };
      for (std::uint64_t c = skip_empty ? (n > 0 ? chunk_of(0) : s.parts) : 0; c < s.parts;) {
        const std::uint64_t lo = OmpChunkStart(n, s.parts, c);
        const std::uint64_t hi = OmpChunkStart(n, s.parts, c + 1);
        c = skip_empty ? (hi < n ? chunk_of(hi) : s.parts) : c + 1;
        sub.push_back(BuildTree(inner, hi - lo));
        for (Chain ch : sub.back().chains) {
          if (ch.count > 0) ch.first += lo;
          b.tree().chains.push_back(ch);
        }
        b.tree().permutes = b.tree().permutes || sub.back().permutes;
        total_chains += sub.back().chains.size();
      }
      std::vector<std::uint64_t> roots;
      std::uint64_t chain_base = 0, combine_base = 0;
      for (const MergeTree& t : sub) {
        auto global = [&](std::uint64_t id) {
          return id < t.chains.size() ? chain_base + id
                                      : total_chains + combine_base + (id - t.chains.size());
        };
        for (const CombineOp& op : t.combines) b.AddCombine(global(op.left), global(op.right));
        if (!t.Empty()) roots.push_back(global(t.Root()));
        chain_base += t.chains.size();
        combine_base += t.combines.size();
      }
      if (roots.empty()) break;
      if (s.outer == OuterOrder::kSeq) {
        SeqOver(b, roots);
      } else {
        PairwiseOver(b, roots, 0, roots.size());
      }
      break;
    }
    case ScheduleKind::kCuda:
      return BuildCudaTree(s.cuda, n);
    case ScheduleKind::kCanonical:
      return BuildCanonicalTree(s, n);
    case ScheduleKind::kFile:
      return LoadTreeFile(s.path, n);
    case ScheduleKind::kMma:
      return BuildMmaTree(s, n);
    case ScheduleKind::kNumpy:
      return BuildNumpyTree(s, n);
    case ScheduleKind::kTorch:
      return BuildTorchTree(s, n);
    case ScheduleKind::kRandom: {
      for (std::uint64_t i = 0; i < n; ++i) b.AddChain(i, 1);
      if (n > 1) RandomOver(b, s.seed, 0, n);
      break;
    }
  }
  return b.Take();
}

inline MergeTree BuildTree(std::string_view schedule_text, std::uint64_t n) {
  return BuildTree(ParseSchedule(schedule_text), n);
}

// Checks that the tree is a merge order over its n inputs: every input in exactly one chain,
// chains increasing, every node consumed exactly once (the root by nobody), operands already
// computed, operand order preserved, and interleaving only where `permutes` declares it.
// Returns "" when valid, otherwise one line naming the first problem.
inline std::string ValidateTree(const MergeTree& t) {
  const std::uint64_t nodes = t.NodeCount();
  const std::uint64_t nchains = t.chains.size();
  if (nodes == 0) return t.n == 0 ? "" : "tree has no nodes but n = " + std::to_string(t.n);
  // The chains must cover exactly n inputs. Where n is large this is checked before anything of
  // size n is allocated, so a 60-byte file claiming n = 2^64 - 1 is refused at once rather than
  // by bad_alloc; smaller trees get the walk below, which names the input at fault.
  std::uint64_t covered = 0;
  for (const Chain& c : t.chains) {
    if (c.count > std::numeric_limits<std::uint64_t>::max() - covered)
      return "the chains cover more than 2^64 inputs";
    covered += c.count;
  }
  if (covered != t.n && t.n > (std::uint64_t{1} << 24))
    return "the chains cover " + std::to_string(covered) + " inputs but n = " + std::to_string(t.n);
  std::vector<std::uint8_t> seen(t.n, 0);
  constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::uint64_t> lo(nodes, kNone), hi(nodes, 0);
  std::vector<std::uint8_t> contiguous(nodes, 1);
  for (std::uint64_t k = 0; k < nchains; ++k) {
    const Chain& c = t.chains[k];
    if (c.count == 0) continue;
    if (c.stride == 0 && c.count > 1) return "chain " + std::to_string(k) + " has stride 0";
    const std::uint64_t stride = c.count > 1 ? c.stride : 1;
    if (c.first >= t.n || (c.count - 1) > (t.n - 1 - c.first) / stride)
      return "chain " + std::to_string(k) + " reaches past input " + std::to_string(t.n - 1);
    for (std::uint64_t j = 0; j < c.count; ++j) {
      std::uint64_t i = c.first + j * stride;
      if (seen[i])
        return "input " + std::to_string(i) + " is taken twice (chain " + std::to_string(k) + ")";
      seen[i] = 1;
    }
    lo[k] = c.first;
    hi[k] = c.first + (c.count - 1) * stride;
    contiguous[k] = stride == 1;
  }
  for (std::uint64_t i = 0; i < t.n; ++i)
    if (!seen[i]) return "input " + std::to_string(i) + " is dropped (in no chain)";
  std::vector<std::uint8_t> used(nodes, 0);
  bool interleaves = false;
  for (std::uint64_t m = 0; m < t.combines.size(); ++m) {
    const CombineOp& op = t.combines[m];
    const std::uint64_t id = nchains + m;
    const std::string name = "combine " + std::to_string(m);
    if (op.left >= id || op.right >= id)
      return name + " uses node " + std::to_string(std::max(op.left, op.right)) +
             " before it is computed";
    if (op.left == op.right)
      return name + " combines node " + std::to_string(op.left) + " with itself";
    for (std::uint64_t operand : {op.left, op.right}) {
      if (used[operand]) return "node " + std::to_string(operand) + " is consumed twice";
      used[operand] = 1;
    }
    const bool left_empty = lo[op.left] == kNone, right_empty = lo[op.right] == kNone;
    if (!left_empty && !right_empty) {
      if (lo[op.left] > lo[op.right])
        return name + " swaps its operands: the left one starts at input " +
               std::to_string(lo[op.left]) + ", after the right one (" +
               std::to_string(lo[op.right]) + ")";
      if (hi[op.left] >= lo[op.right]) interleaves = true;
    }
    lo[id] = std::min(lo[op.left], lo[op.right]);
    hi[id] = left_empty    ? hi[op.right]
             : right_empty ? hi[op.left]
                           : std::max(hi[op.left], hi[op.right]);
    contiguous[id] = contiguous[op.left] && contiguous[op.right] &&
                     (left_empty || right_empty || hi[op.left] + 1 == lo[op.right]);
  }
  for (std::uint64_t id = 0; id + 1 < nodes; ++id)
    if (!used[id])
      return "node " + std::to_string(id) + " is never consumed (the root is the last node)";
  if (interleaves && !t.permutes)
    return "a combine merges interleaved inputs but the tree does not declare `permutes`";
  return "";
}

struct TreeStats {
  std::uint64_t n = 0;
  std::uint64_t chains = 0;
  std::uint64_t combines = 0;
  std::uint64_t longest_chain = 0;
  std::uint64_t combine_depth = 0;   // combines on the longest chain-to-root path
  std::uint64_t max_leaf_depth = 0;  // the D of the a-priori bounds
  double mean_leaf_depth = 0.0;
};

// Depth is itself a carrier over the tree: a node's (count, max depth, depth sum) combine as
// (n_a + n_b, max + 1, sum + n_a + n_b), except that merging with an empty node (Identity) is
// exact and adds nothing (the identity law).
inline TreeStats ComputeStats(const MergeTree& t) {
  TreeStats st;
  st.n = t.n;
  st.chains = t.chains.size();
  st.combines = t.combines.size();
  if (t.Empty()) return st;
  struct Depth {
    std::uint64_t count = 0;
    std::uint64_t max = 0;
    double sum = 0;
  };
  std::vector<Depth> node(t.NodeCount());
  for (std::uint64_t k = 0; k < t.chains.size(); ++k) {
    // Positions j = 0..L-1 have depth (L - 1 - j) + [j > 0]: max L - 1, sum L(L-1)/2 + L - 1.
    const std::uint64_t len = t.chains[k].count;
    st.longest_chain = std::max(st.longest_chain, len);
    if (len > 0 && t.chains[k].mode == ChainMode::kFused) {
      // S = ceil(L / g) fused steps, each one rounding (the first too: its cut may lose bits);
      // an input in step j (0-based) passes S - j of them.
      const std::uint64_t g = std::max<std::uint64_t>(t.fused.terms, 1);
      const std::uint64_t steps = (len + g - 1) / g;
      double sum = 0;
      for (std::uint64_t j = 0; j < steps; ++j)
        sum += static_cast<double>(std::min(g, len - j * g)) * static_cast<double>(steps - j);
      node[k] = {len, steps, sum};
    } else if (len > 0) {
      const double l = static_cast<double>(len);
      node[k] = {len, len - 1, 0.5 * l * (l - 1) + (l - 1)};
    }
  }
  std::vector<std::uint64_t> combine_depth(t.NodeCount(), 0);
  for (std::uint64_t m = 0; m < t.combines.size(); ++m) {
    const std::uint64_t id = t.chains.size() + m;
    const Depth& a = node[t.combines[m].left];
    const Depth& b = node[t.combines[m].right];
    combine_depth[id] =
        1 + std::max(combine_depth[t.combines[m].left], combine_depth[t.combines[m].right]);
    if (a.count == 0) {
      node[id] = b;
    } else if (b.count == 0) {
      node[id] = a;
    } else {
      node[id] = {a.count + b.count, std::max(a.max, b.max) + 1,
                  a.sum + b.sum + static_cast<double>(a.count + b.count)};
    }
  }
  st.combine_depth = combine_depth[t.Root()];
  st.max_leaf_depth = node[t.Root()].max;
  st.mean_leaf_depth = t.n ? node[t.Root()].sum / static_cast<double>(t.n) : 0.0;
  return st;
}

namespace tree_detail {

inline std::string ChainLabel(const Chain& c) {
  std::ostringstream os;
  os << (c.mode == ChainMode::kLiftTile ? "tile " : c.mode == ChainMode::kFused ? "mma " : "push ");
  if (c.count == 0) {
    os << "(empty)";
  } else if (c.count == 1) {
    os << "x[" << c.first << "]";
  } else if (c.stride == 1) {
    os << "x[" << c.first << ".." << c.first + c.count - 1 << "]";
  } else {
    os << "x[" << c.first << ":" << c.first + (c.count - 1) * c.stride << ":" << c.stride << "]";
  }
  return os.str();
}

}  // namespace tree_detail

// Graphviz DOT: chains are boxes, combines circles; edges point from operand to result and are
// labelled L (earlier segment) and R.
inline std::string ToDot(const MergeTree& t) {
  std::ostringstream os;
  os << "digraph merge_tree {\n  label=\"" << t.schedule << ", n = " << t.n
     << "\";\n  rankdir=BT;\n  node [fontname=\"monospace\"];\n";
  for (std::uint64_t k = 0; k < t.chains.size(); ++k)
    os << "  n" << k << " [shape=box, label=\"" << tree_detail::ChainLabel(t.chains[k]) << "\"];\n";
  for (std::uint64_t m = 0; m < t.combines.size(); ++m) {
    const std::uint64_t id = t.chains.size() + m;
    os << "  n" << id << " [shape=circle, label=\"+\"];\n";
    os << "  n" << t.combines[m].left << " -> n" << id << " [label=\"L\"];\n";
    os << "  n" << t.combines[m].right << " -> n" << id << " [label=\"R\"];\n";
  }
  os << "}\n";
  return os.str();
}

// JSON (format: core/tree_io.hpp), one line; the schedule string escaped by nlohmann-json.
// Defined in core/tree_io.cpp.
std::string ToJson(const MergeTree& t);

// Human-readable: the statistics, then the tree drawn root first (left operand above right)
// when it has at most max_nodes nodes.
inline std::string ToText(const MergeTree& t, std::uint64_t max_nodes = 256) {
  const TreeStats st = ComputeStats(t);
  std::ostringstream os;
  os << "schedule        " << t.schedule << "\n"
     << "n               " << t.n << "\n"
     << "chains          " << st.chains << " (longest " << st.longest_chain << ")\n"
     << "combines        " << st.combines << " (depth " << st.combine_depth << ")\n"
     << "max leaf depth  " << st.max_leaf_depth << "\n"
     << "mean leaf depth " << st.mean_leaf_depth << "\n"
     << "permutes inputs " << (t.permutes ? "yes (commutative carriers only)" : "no") << "\n";
  if (t.UsesFusedNode())
    os << "fused node      " << t.fused.terms << " products per step, F = " << t.fused.frac_bits
       << (t.fused.align == MmaAlign::kFloor ? " (floor)" : " (truncate)") << ", input "
       << MmaInputName(t.fused.input) << ", output " << MmaOutputName(t.fused.output)
       << (t.fused.two_stage ? ", two stages" : "") << "\n";
  if (t.Empty()) {
    os << "(empty input: the result is Identity)\n";
    return os.str();
  }
  if (t.NodeCount() > max_nodes) {
    os << "(" << t.NodeCount() << " nodes: drawing omitted; use --format dot or json)\n";
    return os.str();
  }
  struct Item {
    std::uint64_t node;
    std::string prefix;
    bool last;
    bool top;
  };
  std::vector<Item> stack{{t.Root(), "", true, true}};
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    os << it.prefix << (it.top ? "" : it.last ? "`-- " : "|-- ");
    const std::string child_prefix = it.prefix + (it.top ? "" : it.last ? "    " : "|   ");
    if (it.node < t.chains.size()) {
      os << tree_detail::ChainLabel(t.chains[it.node]) << "\n";
    } else {
      const CombineOp& op = t.combines[it.node - t.chains.size()];
      os << "combine\n";
      stack.push_back({op.right, child_prefix, true, false});
      stack.push_back({op.left, child_prefix, false, false});
    }
  }
  return os.str();
}

}  // namespace carrier

#include "core/canonical_tree.hpp"  // NOLINT(misc-header-include-cycle): BuildCanonicalTree
#include "core/cuda_tree.hpp"       // NOLINT(misc-header-include-cycle): BuildCudaTree
#include "core/library_trees.hpp"   // NOLINT(misc-header-include-cycle): BuildNumpyTree
#include "core/tree_io.hpp"         // NOLINT(misc-header-include-cycle): LoadTreeFile
