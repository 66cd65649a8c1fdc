// core/fprev.hpp: recover the merge tree of a black-box sum from masked inputs (FPRev).
//
// Method: Xie et al., "FPRev: Revealing the order of floating-point summation" (arXiv
// 2411.00442). For inputs i != j set x_i = +M, x_j = -M and every other input to 1, with M
// so large that M absorbs any partial sum of ones (core/tree_hash.hpp, MaskMagnitude). A sum
// that is a binary tree of rounded additions then returns exactly n - |LCA(i, j)|: the ones
// inside the subtree where +M and -M meet are absorbed, the ones outside it are added
// exactly. So one call reveals the size of the lowest common ancestor of two inputs.
//
// Recovery (FPRev's recursive form): for a cluster S known to be a subtree, let i = min S and
// ask for |LCA(i, j)| for every other j in S (|S| - 1 calls, sent as one batch). The distinct
// sizes s_1 < ... < s_m are the ancestors of i inside S; the j with size s_k form G_k, the
// sibling subtree at the k-th ancestor, and |G_k| must equal s_k - s_{k-1} (s_0 = 1), which
// checks that the target is such a tree at all. The ancestor chain is
// ((i + T(G_1)) + T(G_2)) + ..., i's side on the left (it holds the smaller index), and each
// G_k with two or more inputs is recovered the same way. Calls: n - 1 for a sequential sum,
// about (n/2) log2 n for a balanced one, at most n(n-1)/2.
//
// Limits (documented, checked where possible): the target must be a tree of binary
// additions over exactly these n values in one format with p significand bits and
// n < 2^p; M must be finite (fp32 n < 2^(127-25), fp64 more). An answer that is not an
// integer in [0, n - 2], or groups of the wrong size, is reported as "not a summation tree"
// (compensated sums, multi-term fused adders, value-dependent orders). Addition is
// commutative, so operand order inside a node is not observable; the recovered tree puts the
// operand holding the smaller index on the left, as every MergeTree does. max, and anything
// else exact in every order, has no observable tree; log-sum-exp's terms exp(x - m) are
// positive, so they cannot cancel and the masks do not apply.
//
// ToMergeTree turns the recovered binary tree into a MergeTree: every left-deep run of single
// inputs whose indices increase by a constant stride becomes one push chain (numpy's eight
// accumulators are chains of stride 8), everything else combines; `permutes` is set when a
// combine interleaves.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/merge_tree.hpp"
#include "core/schedule.hpp"
#include "core/tree_hash.hpp"

namespace carrier {

class ProbeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Answers a batch: for each j in js, the target's result on the mask (i -> +M, j -> -M).
using MaskQuery =
    std::function<std::vector<double>(std::uint64_t i, const std::vector<std::uint64_t>& js)>;

struct ProbeStats {
  std::uint64_t calls = 0;    // target evaluations
  std::uint64_t batches = 0;  // query invocations (FPRev: rounds; proofs: tree levels)
};

// One request of a frontier: the masks (i -> +M, j -> -M) for each j in js.
struct MaskRequest {
  std::uint64_t i = 0;
  std::vector<std::uint64_t> js;
};
// Answers every request of one frontier (the clusters FPRev recovers side by side), result k
// for request k; one call, so a target can evaluate the whole frontier in one round trip.
using MaskBatchQuery =
    std::function<std::vector<std::vector<double>>(const std::vector<MaskRequest>&)>;

// The recovered binary tree over inputs 0..n-1 (BinaryTree of core/tree_hash.hpp). Clusters
// are recovered breadth first: every cluster of one round is independent of the others, so a
// round is one MaskBatchQuery (stats.batches counts rounds: at most the tree's depth + 1).
inline BinaryTree RecoverSumTreeBatched(std::uint64_t n, const MaskBatchQuery& query,
                                        ProbeStats& stats) {
  BinaryTree t;
  t.n = n;
  if (n == 0) return t;
  if (n == 1) {
    t.root = 0;
    return t;
  }
  // Work list of clusters; each item writes its subtree's root id into *slot when done.
  struct Item {
    std::vector<std::uint64_t> members;  // sorted
    std::uint64_t slot;                  // index into roots
  };
  std::vector<std::uint64_t> roots(1, tree_hash_detail::kAbsent);
  // Internal nodes are created after their children; record pending combines and resolve
  // them once every cluster is recovered.
  struct Pending {
    std::uint64_t left_slot;   // slot of the left operand (ancestor chain so far)
    std::uint64_t right_slot;  // slot of T(G_k)
    std::uint64_t out_slot;
  };
  std::vector<Pending> pending;
  std::vector<Item> work;
  {
    std::vector<std::uint64_t> all(n);
    for (std::uint64_t i = 0; i < n; ++i) all[i] = i;
    work.push_back({std::move(all), 0});
  }
  auto new_slot = [&] {
    roots.push_back(tree_hash_detail::kAbsent);
    return roots.size() - 1;
  };
  while (!work.empty()) {
    std::vector<Item> round;
    round.swap(work);
    std::vector<MaskRequest> requests;
    std::vector<std::size_t> asked;  // round items with a request, in request order
    for (std::size_t k = 0; k < round.size(); ++k) {
      const std::vector<std::uint64_t>& s = round[k].members;
      if (s.size() == 1) {
        roots[round[k].slot] = s[0];
        continue;
      }
      requests.push_back({s[0], std::vector<std::uint64_t>(s.begin() + 1, s.end())});
      asked.push_back(k);
    }
    if (requests.empty()) break;
    const std::vector<std::vector<double>> answers = query(requests);
    stats.batches += 1;
    if (answers.size() != requests.size())
      throw ProbeError("the target answered the wrong number of requests");
    for (std::size_t r = 0; r < requests.size(); ++r) {
      const Item& item = round[asked[r]];
      const std::vector<std::uint64_t>& s = item.members;
      const std::uint64_t i = requests[r].i;
      const std::vector<std::uint64_t>& js = requests[r].js;
      const std::vector<double>& got = answers[r];
      stats.calls += js.size();
      if (got.size() != js.size())
        throw ProbeError("the target answered the wrong number of calls");
      std::map<std::uint64_t, std::vector<std::uint64_t>> groups;  // |LCA| -> members
      for (std::size_t q = 0; q < js.size(); ++q) {
        const double v = got[q];
        if (!(v >= 0) || v != std::floor(v) || v > static_cast<double>(n - 2))
          throw ProbeError("not a summation tree: the mask +M at " + std::to_string(i) +
                           ", -M at " + std::to_string(js[q]) + " gave " + std::to_string(v) +
                           ", not an integer in [0, n - 2]");
        const std::uint64_t size = n - static_cast<std::uint64_t>(v);
        groups[size].push_back(js[q]);
      }
      std::uint64_t prev = 1;
      std::uint64_t left_slot = new_slot();
      roots[left_slot] = i;
      for (auto& [size, members] : groups) {
        if (size <= prev || members.size() != size - prev)
          throw ProbeError("not a summation tree: " + std::to_string(members.size()) +
                           " inputs meet input " + std::to_string(i) + " in a subtree of " +
                           std::to_string(size) + ", which needs " + std::to_string(size - prev));
        prev = size;
        const std::uint64_t right_slot = new_slot();
        std::sort(members.begin(), members.end());
        work.push_back({std::move(members), right_slot});
        const std::uint64_t out = new_slot();
        pending.push_back({left_slot, right_slot, out});
        left_slot = out;
      }
      if (prev != s.size())
        throw ProbeError("not a summation tree: the cluster of input " + std::to_string(i) +
                         " has " + std::to_string(s.size()) + " inputs but its top LCA covers " +
                         std::to_string(prev));
      // The cluster's root is the last ancestor: alias item.slot to it by a pending copy.
      pending.push_back({left_slot, tree_hash_detail::kAbsent, item.slot});
    }
  }
  // Resolve slots depth first: a pending combine's node is made once both operands exist,
  // so internal nodes come out children first (what ComputeClusters and ToMergeTree need).
  std::vector<std::uint64_t> producer(roots.size(), tree_hash_detail::kAbsent);
  for (std::size_t k = 0; k < pending.size(); ++k) producer[pending[k].out_slot] = k;
  std::vector<std::uint64_t> stack{0};
  while (!stack.empty()) {
    const std::uint64_t slot = stack.back();
    if (roots[slot] != tree_hash_detail::kAbsent) {
      stack.pop_back();
      continue;
    }
    if (producer[slot] == tree_hash_detail::kAbsent) throw ProbeError("internal: unresolved slot");
    const Pending& p = pending[producer[slot]];
    const std::uint64_t l = roots[p.left_slot];
    if (l == tree_hash_detail::kAbsent) {
      stack.push_back(p.left_slot);
      continue;
    }
    if (p.right_slot == tree_hash_detail::kAbsent) {
      roots[slot] = l;
      continue;
    }
    const std::uint64_t r = roots[p.right_slot];
    if (r == tree_hash_detail::kAbsent) {
      stack.push_back(p.right_slot);
      continue;
    }
    t.internal.push_back({{l, r}, false});
    roots[slot] = n + t.internal.size() - 1;
  }
  t.root = roots[0];
  return t;
}

// The same, one cluster per query (the form of a target that answers one request at a time).
inline BinaryTree RecoverSumTree(std::uint64_t n, const MaskQuery& query, ProbeStats& stats) {
  return RecoverSumTreeBatched(
      n,
      [&](const std::vector<MaskRequest>& requests) {
        std::vector<std::vector<double>> out;
        for (const MaskRequest& r : requests) out.push_back(query(r.i, r.js));
        return out;
      },
      stats);
}

// ---- Proving a predicted tree with packed masks ------------------------------------------
//
// FPRev asks Theta(n log n) questions of a balanced tree, each a call over all n inputs:
// 1.6e7 calls of 10^6 values for numpy.sum at n = 10^6, about 40 minutes at numpy's 150 us per
// call. A tree that is predicted (a library schedule that matched the target on random data)
// is proven instead, top down, with far fewer calls:
//
//   Known: P is a cluster of the target B (the root is). Claim: P's child X (|X| >= 2) is a
//   cluster too. Put +M at x1 (in X's left child), -M at x2 (in X's right child), weight 1 on
//   the rest of X, weight W > |X| - 2 on the sibling Z = P \ X, and 0 everywhere else. The
//   cluster L = LCA_B(x1, x2) lies inside P, and everything in L cancels to 0 with the pair,
//   so P's value is |X \ L| + W |Z \ L|: it equals W |Z| exactly when L = X.
//
// Zero is exact in every addition, so inputs outside P do not disturb P's value, and P's
// pair cancels inside P: checks in disjoint clusters are independent and go into one call,
// each in its own bit field (weights scaled by 2^e, M by the same factor), as many as fit in
// p bits. Proving every cluster of the predicted tree proves B equal to it (a binary tree over
// n inputs has n - 1 clusters). When a check needs more than p bits it is made as two, X's
// part (value 0) and Z's part (value |Z|). Calls: n - 2 for a sequential sum (one check per
// level), about n / 5 for numpy's tree in fp32 (measured: carrier probe's report).
// Same model as FPRev: a tree of binary additions rounded to nearest in one format.

// A probe input given sparsely: every input holds `background` except the runs, which set
// count inputs first, first + stride, ... to value, applied in order.
struct MaskRun {
  std::uint64_t first = 0, count = 0, stride = 1;
  double value = 0;
};
struct MaskedInput {
  double background = 1;
  std::vector<MaskRun> runs;
};
inline std::vector<double> Materialize(const MaskedInput& in, std::uint64_t n) {
  std::vector<double> x(n, in.background);
  for (const MaskRun& r : in.runs)
    for (std::uint64_t k = 0; k < r.count; ++k) x[r.first + k * r.stride] = r.value;
  return x;
}
// The target's results on a batch of inputs, in order.
using SumOracle = std::function<std::vector<double>(const std::vector<MaskedInput>&)>;

namespace fprev_detail {

inline int BitWidth(std::uint64_t v) {  // bits to hold 0..v
  int b = 0;
  while (b < 64 && (v >> b) != 0) ++b;
  return b;
}

// Leaf sets of every node as runs (a contiguous set is one run; otherwise the children's runs,
// the adjacent pair merged when it continues one progression).
struct LeafSets {
  std::vector<std::uint64_t> size, lo, hi, parent;
  std::vector<std::vector<MaskRun>> runs;
};

inline bool BuildLeafSets(const BinaryTree& t, LeafSets& s, std::uint64_t max_runs) {
  const std::size_t total = t.n + t.internal.size();
  s.size.assign(total, 1);
  s.lo.resize(total);
  s.hi.resize(total);
  s.parent.assign(total, tree_hash_detail::kAbsent);
  s.runs.assign(total, {});
  std::uint64_t stored = 0;
  for (std::uint64_t i = 0; i < t.n; ++i) {
    s.lo[i] = s.hi[i] = i;
    s.runs[i] = {{i, 1, 1, 0}};
  }
  for (std::size_t m = 0; m < t.internal.size(); ++m) {
    const auto& ch = t.internal[m].children;
    if (ch.size() != 2 || t.internal[m].tile) return false;
    const std::uint64_t id = t.n + m, a = ch[0], b = ch[1];
    s.parent[a] = s.parent[b] = id;
    s.size[id] = s.size[a] + s.size[b];
    s.lo[id] = std::min(s.lo[a], s.lo[b]);
    s.hi[id] = std::max(s.hi[a], s.hi[b]);
    std::vector<MaskRun>& r = s.runs[id];
    if (s.hi[id] - s.lo[id] + 1 == s.size[id]) {
      r = {{s.lo[id], s.size[id], 1, 0}};
    } else {
      r = s.runs[a];
      for (const MaskRun& x : s.runs[b]) {
        MaskRun& last = r.back();
        const std::uint64_t end = last.first + (last.count - 1) * last.stride;
        if (x.first > end && (last.count == 1 || x.first - end == last.stride) &&
            (x.count == 1 || x.stride == x.first - end)) {
          last.stride = x.first - end;
          last.count += x.count;
        } else {
          r.push_back(x);
        }
      }
    }
    stored += r.size();
    if (stored > max_runs) return false;
  }
  return true;
}

struct Check {
  std::uint64_t x = 0, z = 0;  // node ids: the claimed cluster and its sibling
  int part = 0;                // 0: X and Z in one field, 1: X only, 2: Z only
  int bits = 0;
};

}  // namespace fprev_detail

// Proves that the target is the tree `t` (see above). Returns "" when every cluster checked
// out, else the first failure in one line. With oracle empty, only counts: stats.calls is the
// number of calls the proof would make, and "" is returned. stats.calls counts calls (each
// call packs several checks); progress, when set, is raised by the calls of each level.
// Returns "too irregular" (no call made) when the leaf sets need more than max_runs runs.
inline std::string ProveSumTree(const BinaryTree& t, int precision_bits, const SumOracle& oracle,
                                ProbeStats& stats, std::uint64_t max_runs = 1ULL << 26) {
  using namespace fprev_detail;
  if (t.n < 3) return "";
  LeafSets s;
  if (!BuildLeafSets(t, s, max_runs)) return "too irregular";
  // Depth of each internal node; the checks of one level are independent.
  const std::size_t internal = t.internal.size();
  std::vector<std::uint32_t> depth(internal, 0);
  std::uint32_t max_depth = 0;
  for (std::size_t m = internal; m-- > 0;) {
    const std::uint64_t id = t.n + m, up = s.parent[id];
    if (up != tree_hash_detail::kAbsent) depth[m] = depth[up - t.n] + 1;
    max_depth = std::max(max_depth, depth[m]);
  }
  std::vector<std::vector<std::uint64_t>> levels(max_depth + 1);
  for (std::size_t m = 0; m < internal; ++m) levels[depth[m]].push_back(t.n + m);
  const int p = precision_bits;
  for (const auto& level : levels) {
    // Four slots per parent (X/Z side, one or two fields): one check per parent per slot, so
    // the checks of one slot touch disjoint parents and pack freely.
    std::vector<Check> slot[4];
    for (const std::uint64_t parent : level) {
      const auto& ch = t.internal[parent - t.n].children;
      for (int side = 0; side < 2; ++side) {
        const std::uint64_t x = ch[side], z = ch[1 - side];
        if (s.size[x] < 2) continue;
        const int xb = BitWidth(s.size[x] - 2), zb = BitWidth(s.size[z]);
        if (xb + zb <= p) {
          slot[2 * side].push_back({x, z, 0, xb + zb});
        } else {
          slot[2 * side].push_back({x, z, 2, zb});
          if (xb > 0) slot[2 * side + 1].push_back({x, z, 1, xb});
        }
      }
    }
    std::vector<std::vector<Check>> calls;
    for (auto& checks : slot) {
      int used = p + 1;
      for (const Check& c : checks) {
        if (used + c.bits > p) {
          calls.emplace_back();
          used = 0;
        }
        calls.back().push_back(c);
        used += c.bits;
      }
    }
    stats.calls += calls.size();
    stats.batches += calls.empty() ? 0 : 1;
    if (!oracle || calls.empty()) continue;
    std::vector<MaskedInput> inputs;
    std::vector<std::vector<std::pair<int, std::uint64_t>>> fields;  // (exponent, expected)
    for (const auto& call : calls) {
      MaskedInput in;
      in.background = 0;
      std::vector<std::pair<int, std::uint64_t>> f;
      int e = 0;
      for (const Check& c : call) {
        const std::uint64_t nx = s.size[c.x], nz = s.size[c.z];
        const int xb = BitWidth(nx - 2);
        const double unit = std::ldexp(1.0, e);
        if (c.part != 2)
          for (MaskRun r : s.runs[c.x]) in.runs.push_back({r.first, r.count, r.stride, unit});
        std::uint64_t expected = 0;
        if (c.part != 1) {
          const int zshift = c.part == 0 ? xb : 0;
          for (MaskRun r : s.runs[c.z])
            in.runs.push_back({r.first, r.count, r.stride, std::ldexp(1.0, e + zshift)});
          expected = nz << zshift;
        }
        const double m = std::ldexp(1.0, e + c.bits + p + 1);
        const auto& xc = t.internal[c.x - t.n].children;
        in.runs.push_back({s.lo[xc[0]], 1, 1, m});
        in.runs.push_back({s.lo[xc[1]], 1, 1, -m});
        f.emplace_back(e, expected);
        e += c.bits;
      }
      inputs.push_back(std::move(in));
      fields.push_back(std::move(f));
    }
    const std::vector<double> got = oracle(inputs);
    if (got.size() != inputs.size()) return "the target answered the wrong number of calls";
    for (std::size_t k = 0; k < calls.size(); ++k) {
      const double v = got[k];
      if (!(v >= 0) || v != std::floor(v) || v >= std::ldexp(1.0, p))
        return "a packed check gave " + std::to_string(v) + ", not an integer in [0, 2^" +
               std::to_string(p) + ")";
      const auto u = static_cast<std::uint64_t>(v);
      for (std::size_t c = 0; c < calls[k].size(); ++c) {
        const Check& ck = calls[k][c];
        const auto [e, expected] = fields[k][c];
        const std::uint64_t field = (u >> e) & ((std::uint64_t{1} << ck.bits) - 1);
        if (field != expected)
          return "the inputs " + std::to_string(s.lo[ck.x]) + ".." + std::to_string(s.hi[ck.x]) +
                 " (" + std::to_string(s.size[ck.x]) +
                 " of them) predicted to form one subtree do not (check field " +
                 std::to_string(field) + ", expected " + std::to_string(expected) + ")";
      }
    }
  }
  return "";
}

// The binary tree as a MergeTree (chains compressed; see the contract above). With node_class
// (one entry per internal node: a precision, say), a chain never runs across a change of
// class: a node whose left operand is an internal node of another class starts a combine.
// merge_node, when given, receives for every node of b (inputs, then internal nodes) the
// MergeTree node that computes it: its chain (an input; a push inside a chain) or its combine.
inline MergeTree ToMergeTree(const BinaryTree& b, const std::string& schedule_name,
                             const std::vector<std::uint8_t>* node_class = nullptr,
                             std::vector<std::uint64_t>* merge_node = nullptr) {
  using tree_hash_detail::kAbsent;
  MergeTree t;
  t.n = b.n;
  t.schedule = schedule_name;
  if (b.root == kAbsent) return t;
  // Pass 1: which internal nodes extend a chain (left operand a chain run, right an input
  // continuing its stride)? run[x] = (first, count, stride) for nodes that are chain runs.
  struct Run {
    std::uint64_t first = 0, count = 0, stride = 1;
    bool is_run = false;
  };
  const std::size_t total = b.n + b.internal.size();
  std::vector<Run> run(total);
  for (std::uint64_t i = 0; i < b.n; ++i) run[i] = {i, 1, 1, true};
  std::vector<std::uint64_t> parent(total, kAbsent);
  for (std::size_t m = 0; m < b.internal.size(); ++m) {
    const auto& ch = b.internal[m].children;
    for (std::uint64_t c : ch) parent[c] = b.n + m;
    if (ch.size() != 2 || b.internal[m].tile) continue;
    const Run& l = run[ch[0]];
    const std::uint64_t r = ch[1];
    if (!l.is_run || r >= b.n) continue;
    if (node_class && ch[0] >= b.n && (*node_class)[ch[0] - b.n] != (*node_class)[m]) continue;
    const std::uint64_t last = l.first + (l.count - 1) * l.stride;
    if (r <= last) continue;
    if (l.count == 1) {
      run[b.n + m] = {l.first, 2, r - l.first, true};
    } else if (r - last == l.stride) {
      run[b.n + m] = {l.first, l.count + 1, l.stride, true};
    }
  }
  // A chain is a maximal run: a run node whose parent does not extend it.
  auto extends = [&](std::uint64_t node) {  // both operands of a run node belong to its run
    const std::uint64_t p = parent[node];
    return p != kAbsent && run[p].is_run;
  };
  std::vector<std::uint64_t> id(total, kAbsent);
  std::vector<std::uint64_t> chain_nodes;
  for (std::size_t x = 0; x < total; ++x)
    if (run[x].is_run && !extends(x)) chain_nodes.push_back(x);
  std::sort(chain_nodes.begin(), chain_nodes.end(),
            [&](std::uint64_t a, std::uint64_t c) { return run[a].first < run[c].first; });
  for (std::uint64_t x : chain_nodes) {
    id[x] = t.chains.size();
    t.chains.push_back(
        {run[x].first, run[x].count, run[x].count > 1 ? run[x].stride : 1, ChainMode::kPush});
  }
  for (std::size_t m = 0; m < b.internal.size(); ++m) {
    const std::uint64_t node = b.n + m;
    if (run[node].is_run) continue;  // inside (or the top of) a chain
    const auto& ch = b.internal[m].children;
    if (ch.size() != 2) throw ProbeError("ToMergeTree: multi-operand nodes are not supported");
    const std::uint64_t l = id[ch[0]], r = id[ch[1]];
    t.combines.push_back({l, r});
    id[node] = t.chains.size() + t.combines.size() - 1;
  }
  if (merge_node) {
    merge_node->assign(total, kAbsent);
    for (std::size_t x = 0; x < total; ++x) {
      if (id[x] == kAbsent) continue;
      (*merge_node)[x] = id[x];
      if (!run[x].is_run) continue;           // a combine
      for (std::uint64_t y = x; y >= b.n;) {  // down the chain: pushes and their inputs
        const auto& ch = b.internal[y - b.n].children;
        (*merge_node)[y] = (*merge_node)[ch[1]] = id[x];
        y = ch[0];
        if (y < b.n) (*merge_node)[y] = id[x];
      }
    }
  }
  t.permutes = false;
  if (!ValidateTree(t).empty()) t.permutes = true;
  if (std::string why = ValidateTree(t); !why.empty())
    throw ProbeError("ToMergeTree: the recovered tree does not validate: " + why);
  return t;
}

}  // namespace carrier
