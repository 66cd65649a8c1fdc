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
#pragma once

#include <algorithm>
#include <cstdint>
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

}  // namespace library_detail

inline MergeTree BuildNumpyTree(const Schedule& s, std::uint64_t n) {
  const std::uint64_t block = s.tile, acc = s.lanes;
  if (acc == 0 || block < acc)
    throw ScheduleError("bad schedule '" + ToString(s) + "': numpy needs BLOCK >= ACC >= 1");
  tree_detail::Builder b(n, s);
  if (n == 0) return b.Take();
  std::vector<library_detail::NumpyNode> nodes;
  const std::uint64_t chunk = s.parts == 0 ? n : s.parts;
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
