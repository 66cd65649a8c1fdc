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
// A tree whose combines merge interleaved index sets (strided:K) sets `permutes`; ReplayOracle
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
#include <utility>
#include <vector>

#include "core/mma.hpp"
#include "core/orders/order.hpp"

namespace carrier {

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

namespace tree_detail {

// Appends nodes in id order (the orders from outside build their trees with it; the walked
// orders go through core/schedule.hpp's TreeBuilder).
class Builder {
 public:
  Builder(std::uint64_t n, std::string schedule, ChainMode mode = ChainMode::kPush) : mode_(mode) {
    tree_.n = n;
    tree_.schedule = std::move(schedule);
  }

  std::uint64_t AddChain(std::uint64_t first, std::uint64_t count, std::uint64_t stride = 1) {
    tree_.chains.push_back({first, count, stride, mode_});
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
  ChainMode mode_;
  MergeTree tree_;
};

}  // namespace tree_detail

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
