// core/cuda_tree.hpp: BuildCudaTree, the MergeTree that kernels/cuda executes for a `cuda:...`
// schedule (core/cuda_schedule.hpp has the schedule and its phases).
//
// Node ids: the block pass's thread chains (block-major: block b, thread t is chain
// b * THREADS + t; an idle thread is an empty chain), then the grid pass's idle threads (empty
// chains, in thread order), then the combines in this order: per block, the warp trees (warp
// by warp) and the block tree; then, with more than one block, per grid-pass thread the fold
// of its partials, its warp trees and the block tree. n == 0 gives the empty tree (the kernel
// launches nothing and returns Identity). `permutes` is set exactly when some combine merges
// interleaved inputs (striped chains of two or more inputs, or the xor butterfly over lanes
// that hold inputs).
//
// Included at the end of core/merge_tree.hpp (BuildTree's `cuda:` case calls it): include
// either header.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/cuda_schedule.hpp"
#include "core/merge_tree.hpp"
#include "core/pairwise.hpp"

namespace carrier {

namespace cuda_tree_detail {

class CudaTreeBuilder {
 public:
  CudaTreeBuilder(const CudaSchedule& s, MergeTree& t) : s_(s), t_(t) {}

  std::uint64_t Combine(std::uint64_t left, std::uint64_t right) {
    t_.combines.push_back({left, right});
    return t_.chains.size() + t_.combines.size() - 1;
  }

  // One warp's tree over its 32 lane nodes; returns lane 0's result.
  std::uint64_t Warp(const std::uint64_t* lane) {
    if (s_.warp == CudaWarpTree::kShuffleDown) {
      std::uint64_t node[32];
      for (int i = 0; i < 32; ++i) node[i] = lane[i];
      for (int o = 1; o < 32; o *= 2)
        for (int i = 0; i < 32; i += 2 * o) node[i] = Combine(node[i], node[i + o]);
      return node[0];
    }
    return Xor(lane, 0, 5);
  }

  // Lane `l` after the first k butterfly steps (masks 16, 8, ...): own state on the left.
  std::uint64_t Xor(const std::uint64_t* lane, int l, int k) {  // NOLINT(misc-no-recursion)
    if (k == 0) return lane[l];
    const int mask = 32 >> k;
    const std::uint64_t own = Xor(lane, l, k - 1);
    const std::uint64_t other = Xor(lane, l ^ mask, k - 1);
    return Combine(own, other);
  }

  std::uint64_t Pairwise(const std::vector<std::uint64_t>& w, std::size_t lo,
                         std::size_t hi) {  // NOLINT(misc-no-recursion)
    if (hi - lo == 1) return w[lo];
    const std::size_t mid = PairwiseMid(lo, hi);
    const std::uint64_t left = Pairwise(w, lo, mid);
    const std::uint64_t right = Pairwise(w, mid, hi);
    return Combine(left, right);
  }

  // The block reduction over THREADS thread nodes: warp trees, then the block tree.
  std::uint64_t Block(const std::vector<std::uint64_t>& thread) {
    std::vector<std::uint64_t> warp;
    for (std::size_t w = 0; w < thread.size() / 32; ++w) warp.push_back(Warp(&thread[32 * w]));
    if (s_.block == CudaBlockTree::kPairwise) return Pairwise(warp, 0, warp.size());
    std::uint64_t acc = warp[0];
    for (std::size_t w = 1; w < warp.size(); ++w) acc = Combine(acc, warp[w]);
    return acc;
  }

 private:
  const CudaSchedule& s_;
  MergeTree& t_;
};

// Exact interleaving test (the rule of ValidateTree): some combine of two non-empty nodes
// whose index ranges overlap.
inline bool Interleaves(const MergeTree& t) {
  constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::uint64_t> lo(t.NodeCount(), kNone), hi(t.NodeCount(), 0);
  for (std::size_t k = 0; k < t.chains.size(); ++k) {
    const Chain& c = t.chains[k];
    if (c.count == 0) continue;
    lo[k] = c.first;
    hi[k] = c.first + (c.count - 1) * c.stride;
  }
  bool interleaves = false;
  for (std::size_t m = 0; m < t.combines.size(); ++m) {
    const std::uint64_t a = t.combines[m].left, b = t.combines[m].right, id = t.chains.size() + m;
    if (lo[a] != kNone && lo[b] != kNone && hi[a] >= lo[b]) interleaves = true;
    lo[id] = std::min(lo[a], lo[b]);
    hi[id] = lo[a] == kNone ? hi[b] : lo[b] == kNone ? hi[a] : std::max(hi[a], hi[b]);
  }
  return interleaves;
}

}  // namespace cuda_tree_detail

inline MergeTree BuildCudaTree(const CudaSchedule& s, std::uint64_t n) {
  if (std::string why = CudaScheduleProblem(s); !why.empty())
    throw ScheduleError("bad schedule '" + ToString(s) + "': " + why);
  MergeTree t;
  t.n = n;
  t.schedule = ToString(s);
  if (n == 0) return t;
  const std::uint64_t T = s.threads;
  const std::uint64_t G = s.GridBlocks(n);
  if (G > kCudaMaxBlocks)
    throw ScheduleError("schedule '" + t.schedule + "' needs " + std::to_string(G) +
                        " blocks for n = " + std::to_string(n) + ", more than gridDim.x allows (" +
                        std::to_string(kCudaMaxBlocks) + "); give a fixed GRID");
  const std::uint64_t P = G * T;
  // One chain per thread of the grid, idle or not: refuse trees that could not fit in memory.
  constexpr std::uint64_t kMaxChains = std::uint64_t{1} << 28;
  if (P > kMaxChains)
    throw ScheduleError("schedule '" + t.schedule + "' over n = " + std::to_string(n) + " runs " +
                        std::to_string(P) +
                        " threads; its tree (one chain per thread) is built "
                        "for at most 2^28");
  const ChainMode mode = s.lift ? ChainMode::kLiftTile : ChainMode::kPush;
  // Block pass chains.
  const std::uint64_t run = s.blocks == 0 ? s.items : (n + P - 1) / P;  // blocked run length
  // A fixed GRID far above n makes a tree of idle threads whatever n is (cuda:64:2:...:1111111
  // over one input: 71 million empty chains, 2 GB): refused past kMaxIdleThreads, as strided:K
  // and omp:P refuse their empty lanes and chunks, so a large GRID cannot exhaust memory.
  constexpr std::uint64_t kMaxIdleThreads = std::uint64_t{1} << 20;
  const std::uint64_t active =
      s.arrangement == CudaArrangement::kStriped ? std::min(n, P) : (n + run - 1) / run;
  if (P - active > kMaxIdleThreads)
    throw ScheduleError("schedule '" + t.schedule + "' over n = " + std::to_string(n) + " leaves " +
                        std::to_string(P - active) +
                        " of its threads without input; its tree is built for at most 2^20 "
                        "idle threads (give a smaller GRID or auto)");
  t.chains.reserve(P + T);
  for (std::uint64_t g = 0; g < P; ++g) {
    Chain c{0, 0, 1, mode};
    if (s.arrangement == CudaArrangement::kStriped) {
      if (g < n) c = {g, (n - g + P - 1) / P, P, mode};
    } else if (g < (n + run - 1) / run) {
      c = {g * run, std::min(run, n - g * run), 1, mode};
    }
    if (c.count <= 1) c.stride = 1;
    t.chains.push_back(c);
  }
  // Grid pass: thread j folds partials [j L2, j L2 + L2); idle threads are empty chains.
  const std::uint64_t l2 = (G + T - 1) / T;
  std::vector<std::uint64_t> idle(T, 0);
  if (G > 1)
    for (std::uint64_t j = 0; j < T; ++j)
      if (j * l2 >= G) {
        idle[j] = t.chains.size();
        t.chains.push_back({0, 0, 1, mode});
      }
  cuda_tree_detail::CudaTreeBuilder b(s, t);
  std::vector<std::uint64_t> partial(G);
  std::vector<std::uint64_t> thread(T);
  for (std::uint64_t blk = 0; blk < G; ++blk) {
    for (std::uint64_t j = 0; j < T; ++j) thread[j] = blk * T + j;
    partial[blk] = b.Block(thread);
  }
  if (G > 1) {
    for (std::uint64_t j = 0; j < T; ++j) {
      if (j * l2 >= G) {
        thread[j] = idle[j];
        continue;
      }
      std::uint64_t acc = partial[j * l2];
      for (std::uint64_t m = j * l2 + 1; m < std::min(G, j * l2 + l2); ++m)
        acc = b.Combine(acc, partial[m]);
      thread[j] = acc;
    }
    b.Block(thread);
  }
  t.permutes = cuda_tree_detail::Interleaves(t);
  return t;
}

}  // namespace carrier
