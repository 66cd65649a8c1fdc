// core/library_trees.hpp: the merge orders of library reductions that carrier replays by name.
//
// numpy[:BLOCK[:ACC[:CHUNK]]] (default numpy:128:8:8192): numpy's float add.reduce over a
// contiguous array (numpy 1.24). The reduction's iterator hands the inner loop CHUNK elements
// at a time (numpy's ufunc buffer size, np.getbufsize() = 8192), so the result is
// ((P(chunk 0) + P(chunk 1)) + P(chunk 2)) + ..., chunk sums added in order, and each P is
// `pairwise_sum` (numpy/core/src/umath/loops_utils.h.src). CHUNK 0 means one chunk. Over a run
// of m elements starting at lo, P is:
//   m < ACC          one chain lo .. lo+m-1 (res = 0, res += a[i]);
//   m <= BLOCK       ACC accumulators r[k] = a[lo+k], r[k] += a[lo+k+ACC*t] over the first
//                    m - m % ACC elements: ACC chains of stride ACC; then r merged pairwise,
//                    ((r0 r1)(r2 r3))((r4 r5)(r6 r7)); then the m % ACC tail elements added
//                    one at a time;
//   m > BLOCK        split at h = m/2 rounded down to a multiple of ACC: (lo, h) + (lo+h, m-h).
// The probe (`carrier probe numpy.sum`) recovers this tree from numpy itself; the tests check
// that the two agree for the lengths in fp32 and fp64. The chains interleave, so the
// tree `permutes` (commutative carriers only), like strided:K.
//
// torch:LANES (no default: LANES is the CPU vector's element count, 8 for fp32 and 4 for fp64
// under AVX2, 16 and 8 under AVX512): torch.sum of a contiguous CPU tensor (PyTorch 1.13's
// cascade_sum, aten/src/ATen/native/cpu/SumKernel.cpp), one thread (inputs below its grain
// size, 32768, are never split; larger ones split across threads when torch has several, which
// this name does not model: the probe recovers that tree). With V = LANES and n inputs:
//   n >= V  the n / V whole vectors (V lanes each) are reduced lane by lane by R below over
//           vector units, then the n % V tail elements are added in order (a chain), and the
//           V lane results are added to that one at a time, lane 0 first.
//   n < V   R below over the n elements themselves (one lane).
// R (row_sum, ILP = 4) over U units: unit u belongs to row u % 4; rows k = 0..3 are reduced
// over their items i (unit 4 i + k, i < U / 4) by L; the U % 4 leftover units are added to
// row 0's result in order; then rows 1, 2, 3 are added to row 0's, in that order.
// L (multi_row_sum) over S items: level step 2^P, P = max(4, CeilLog2(S) / 4) (CeilLog2(S) =
// ceil(log2 S), 1 for S <= 2); four accumulator levels a0..a3, all empty. While a whole step
// of items remains: the step's items form one chain into a0; then for j = 1..3: aj = aj + a(j-1),
// a(j-1) emptied, stopping after level j unless the item count so far is a multiple of
// 2^(P (j + 1)) (level 3 always accumulates). The remaining items form a chain into a0; then
// a0 = a0 + a1, + a2, + a3 in that order. Empty accumulators are identities (they hold +0: so
// signed zeros aside, Sum's bits are the tree's).
// Addition is commutative and the probe cannot see operand order, so every combine puts the
// operand holding the smaller input index on the left, as trees from `carrier probe` do; the
// tree `permutes` (commutative carriers only).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/merge_tree.hpp"

namespace carrier {

namespace library_detail {

struct NumpyNode {
  bool chain;
  std::uint64_t first, count, stride;  // a chain
  std::uint64_t a, b;                  // a combine of two earlier NumpyNode indices
};

// Builds numpy's pairwise_sum over [lo, lo + m) as a list of nodes in evaluation order.
inline std::uint64_t NumpyOver(std::vector<NumpyNode>& out,  // NOLINT(misc-no-recursion)
                               std::uint64_t lo, std::uint64_t m, std::uint64_t block,
                               std::uint64_t acc) {
  auto chain = [&](std::uint64_t first, std::uint64_t count, std::uint64_t stride) {
    out.push_back({true, first, count, stride, 0, 0});
    return out.size() - 1;
  };
  auto combine = [&](std::uint64_t a, std::uint64_t b) {
    out.push_back({false, 0, 0, 0, a, b});
    return out.size() - 1;
  };
  if (m < acc) return chain(lo, m, 1);
  if (m <= block) {
    const std::uint64_t body = m - m % acc;
    std::vector<std::uint64_t> r;
    for (std::uint64_t k = 0; k < acc; ++k) r.push_back(chain(lo + k, body / acc, acc));
    // ((r0 r1)(r2 r3))((r4 r5)(r6 r7)): pairwise over the accumulators, halves equal.
    while (r.size() > 1) {
      std::vector<std::uint64_t> next;
      for (std::size_t k = 0; k + 1 < r.size(); k += 2) next.push_back(combine(r[k], r[k + 1]));
      if (r.size() % 2) next.push_back(r.back());
      r = next;
    }
    std::uint64_t res = r[0];
    for (std::uint64_t i = lo + body; i < lo + m; ++i) res = combine(res, chain(i, 1, 1));
    return res;
  }
  std::uint64_t h = m / 2;
  h -= h % acc;
  const std::uint64_t left = NumpyOver(out, lo, h, block, acc);
  const std::uint64_t right = NumpyOver(out, lo + h, m - h, block, acc);
  return combine(left, right);
}

// torch:LANES's tree, built as a list of nodes (the helpers below keep each node's smallest
// input so that combines can be ordered by it).
class TorchBuilder {
 public:
  struct Node {
    bool chain;
    std::uint64_t first, count, stride;  // a chain
    std::uint64_t a, b;                  // a combine of two earlier nodes
    std::uint64_t min_index;
  };
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  std::vector<Node> nodes;

  std::uint64_t Chain(std::uint64_t first, std::uint64_t count, std::uint64_t stride) {
    if (count == 0) return kEmpty;
    nodes.push_back({true, first, count, count > 1 ? stride : 1, 0, 0, first});
    return nodes.size() - 1;
  }
  std::uint64_t Add(std::uint64_t a, std::uint64_t b) {  // an empty operand is the identity
    if (a == kEmpty) return b;
    if (b == kEmpty) return a;
    if (nodes[b].min_index < nodes[a].min_index) std::swap(a, b);
    nodes.push_back({false, 0, 0, 0, a, b, nodes[a].min_index});
    return nodes.size() - 1;
  }
  // L over items 0..size-1 of one row and lane, item i being input base + i * step_in.
  std::uint64_t Levels(std::uint64_t size, std::uint64_t base, std::uint64_t step_in) {
    std::uint64_t ceil_log2 = 1;
    if (size > 2)
      while ((std::uint64_t{1} << ceil_log2) < size) ++ceil_log2;
    const std::uint64_t power = std::max<std::uint64_t>(4, ceil_log2 / 4);
    const std::uint64_t level_step = std::uint64_t{1} << power, mask = level_step - 1;
    std::uint64_t acc[4] = {kEmpty, kEmpty, kEmpty, kEmpty};
    std::uint64_t i = 0;
    while (i + level_step <= size) {
      acc[0] = Chain(base + i * step_in, level_step, step_in);
      i += level_step;
      for (int j = 1; j < 4; ++j) {
        acc[j] = Add(acc[j], acc[j - 1]);
        acc[j - 1] = kEmpty;
        if (power * j < 64 && (i & (mask << (power * j))) != 0) break;
      }
    }
    acc[0] = Chain(base + i * step_in, size - i, step_in);
    for (int j = 1; j < 4; ++j) acc[0] = Add(acc[0], acc[j]);
    return acc[0];
  }
  // R over units 0..units-1 of one lane: unit u is input lane + u * width.
  std::uint64_t Rows(std::uint64_t units, std::uint64_t width, std::uint64_t lane) {
    constexpr std::uint64_t kIlp = 4;
    const std::uint64_t per_row = units / kIlp;
    std::uint64_t row[kIlp];
    for (std::uint64_t k = 0; k < kIlp; ++k)
      row[k] = Levels(per_row, lane + k * width, kIlp * width);
    for (std::uint64_t u = per_row * kIlp; u < units; ++u)
      row[0] = Add(row[0], Chain(lane + u * width, 1, 1));
    for (std::uint64_t k = 1; k < kIlp; ++k) row[0] = Add(row[0], row[k]);
    return row[0];
  }
};

}  // namespace library_detail

// torch:LANES over n inputs; `text` is the schedule's canonical text.
inline MergeTree BuildTorchTree(std::uint64_t v, const std::string& text, std::uint64_t n) {
  if (v == 0) throw ScheduleError("bad schedule '" + text + "': torch needs LANES >= 1");
  tree_detail::Builder b(n, text);
  if (n == 0) return b.Take();
  library_detail::TorchBuilder t;
  std::uint64_t root;
  if (n < v) {
    root = t.Rows(n, 1, 0);
  } else {
    const std::uint64_t vectors = n / v;
    root = t.Chain(vectors * v, n - vectors * v, 1);  // the tail, added first
    for (std::uint64_t lane = 0; lane < v; ++lane) root = t.Add(root, t.Rows(vectors, v, lane));
  }
  (void)root;  // the last node made is the root
  std::vector<std::uint64_t> id(t.nodes.size());
  for (std::size_t k = 0; k < t.nodes.size(); ++k)
    if (t.nodes[k].chain) id[k] = b.AddChain(t.nodes[k].first, t.nodes[k].count, t.nodes[k].stride);
  for (std::size_t k = 0; k < t.nodes.size(); ++k)
    if (!t.nodes[k].chain) id[k] = b.AddCombine(id[t.nodes[k].a], id[t.nodes[k].b]);
  MergeTree tree = b.Take();
  tree.permutes = n > 1;
  return tree;
}

// numpy:BLOCK:ACC:CHUNK over n inputs (CHUNK 0: one chunk); `text` is the canonical text.
inline MergeTree BuildNumpyTree(std::uint64_t block, std::uint64_t acc, std::uint64_t chunk_len,
                                const std::string& text, std::uint64_t n) {
  if (acc == 0 || block < acc)
    throw ScheduleError("bad schedule '" + text + "': numpy needs BLOCK >= ACC >= 1");
  tree_detail::Builder b(n, text);
  if (n == 0) return b.Take();
  std::vector<library_detail::NumpyNode> nodes;
  const std::uint64_t chunk = chunk_len == 0 ? n : chunk_len;
  std::uint64_t acc_node = 0;
  for (std::uint64_t lo = 0; lo < n; lo += chunk) {
    const std::uint64_t root =
        library_detail::NumpyOver(nodes, lo, std::min(chunk, n - lo), block, acc);
    if (lo == 0) {
      acc_node = root;
    } else {
      nodes.push_back({false, 0, 0, 0, acc_node, root});
      acc_node = nodes.size() - 1;
    }
  }
  // MergeTree numbering: chains first (in list order), then combines.
  std::vector<std::uint64_t> id(nodes.size());
  for (std::size_t k = 0; k < nodes.size(); ++k)
    if (nodes[k].chain) id[k] = b.AddChain(nodes[k].first, nodes[k].count, nodes[k].stride);
  for (std::size_t k = 0; k < nodes.size(); ++k)
    if (!nodes[k].chain) id[k] = b.AddCombine(id[nodes[k].a], id[nodes[k].b]);
  MergeTree t = b.Take();
  t.permutes = n >= 2 * acc && acc > 1;
  return t;
}

}  // namespace carrier
