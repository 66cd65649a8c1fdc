// experiments/run/tree_shape.cpp: ShapeOfSchedule (tree_shape.hpp). Each walk below restates
// the shape of one BuildTree case (core/merge_tree.hpp) as recursion; the node records follow
// ComputeStats and TreeHash64 (core/tree_hash.hpp) expression for expression.
#include "run/tree_shape.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/fast_replay.hpp"
#include "core/tree_hash.hpp"

namespace carrier::run {

namespace {

using tree_hash_detail::Absorb;
using tree_hash_detail::CombineHash;
using tree_hash_detail::Mix;

// One node: its exact-form hash and ComputeStats' Depth (count, max, sum) and combine depth.
struct Rec {
  std::uint64_t hash = 0;
  std::uint64_t count = 0;
  std::uint64_t max = 0;
  double sum = 0;
  std::uint64_t cdepth = 0;
};

struct Counters {
  std::uint64_t chains = 0, combines = 0, longest = 0;
  bool permutes = false;
};

// The walk of one schedule over [off, off + n) (omp chunks shift their inner tree by off).
class Walker {
 public:
  Walker(Counters& c, bool lift, std::uint64_t off) : c_(c), lift_(lift), off_(off) {}

  // TreeHash64's chain hash and ComputeStats' chain depth; first is chunk-relative.
  Rec Chain(std::uint64_t first, std::uint64_t count, std::uint64_t stride) const {
    using namespace tree_hash_detail;
    ++c_.chains;
    c_.longest = std::max(c_.longest, count);
    Rec r;
    if (count > 0) first += off_;
    std::uint64_t x;
    if (lift_ && count > 0) {
      x = Absorb(Mix(kTagTile), count);
    } else {
      x = count == 0 ? Mix(kTagIdentity) : Absorb(Mix(kTagPush), count);
    }
    for (std::uint64_t j = 0; j < count; ++j) x = Absorb(x, first + j * stride);
    r.hash = x;
    if (count > 0) {
      const double l = static_cast<double>(count);
      r.count = count;
      r.max = count - 1;
      r.sum = 0.5 * l * (l - 1) + (l - 1);
    }
    return r;
  }

  Rec Combine(const Rec& a, const Rec& b) const {
    ++c_.combines;
    Rec r;
    r.hash = CombineHash(a.hash, b.hash);
    r.cdepth = 1 + std::max(a.cdepth, b.cdepth);
    if (a.count == 0) {
      r.count = b.count;
      r.max = b.max;
      r.sum = b.sum;
    } else if (b.count == 0) {
      r.count = a.count;
      r.max = a.max;
      r.sum = a.sum;
    } else {
      r.count = a.count + b.count;
      r.max = std::max(a.max, b.max) + 1;
      r.sum = a.sum + b.sum + static_cast<double>(a.count + b.count);
    }
    return r;
  }

  // pairwise:LEAF over [lo, hi): PairwiseLeaves / PairwiseFromLeaves.
  Rec Pairwise(std::uint64_t lo, std::uint64_t hi, std::uint64_t leaf) const {  // NOLINT
    if (hi - lo <= leaf) return Chain(lo, hi - lo, 1);
    if (leaf == 1 && !lift_ && hi - lo <= fast_replay_detail::kPairwiseRegion)
      return PairwiseRegion(lo, static_cast<std::uint32_t>(hi - lo));
    const std::uint64_t mid = lo + (hi - lo + 1) / 2;
    const Rec a = Pairwise(lo, mid, leaf);
    const Rec b = Pairwise(mid, hi, leaf);
    return Combine(a, b);
  }

  // pairwise:1 (no lift) over [lo, lo + m), 2 <= m <= kPairwiseRegion: the records of Chain and
  // Combine, breadth first from the fast replay's plan of the shape (fast_replay.hpp
  // PairwisePlan): every leaf, then each level's nodes, deepest first. A level's nodes are
  // independent, so their hash chains overlap in the CPU instead of waiting on one another as
  // in the recursion (eval --op sum --dtype bf16 --schedule pairwise --n 2^26: its "seconds",
  // most of it this walk, 1.2-1.5 -> 0.8-0.9). Same expressions, same operands: same bits.
  Rec PairwiseRegion(std::uint64_t lo, std::uint32_t m) const {
    using namespace tree_hash_detail;
    const fast_replay_detail::PairwisePlan& p = plans_.Plan(m);
    std::vector<Rec>& r = region_;
    r.resize(2 * std::size_t{m});
    const std::uint64_t leaf_tag = Absorb(Mix(kTagPush), 1);
    for (std::uint32_t i = 0; i < m; ++i) {
      r[i].hash = Absorb(leaf_tag, off_ + lo + i);
      r[i].count = 1;
      r[i].max = 0;
      r[i].sum = 0.0;  // Chain's 0.5 l (l - 1) + (l - 1) for l = 1
      r[i].cdepth = 0;
    }
    c_.chains += m;
    c_.longest = std::max<std::uint64_t>(c_.longest, 1);
    std::uint32_t end = m - 1;  // nodes
    for (std::size_t l = p.level.size(); l-- > 0;) {
      const std::uint32_t start = p.level[l];
      for (std::uint32_t t = start; t < end; ++t) r[m + t] = Combine(r[p.left[t]], r[p.right[t]]);
      end = start;
    }
    return r[m];
  }

  // PairwiseOver the nodes item(lo) .. item(hi - 1).
  template <class Item>
  Rec PairwiseOver(std::uint64_t lo, std::uint64_t hi, const Item& item) const {  // NOLINT
    if (hi - lo == 1) return item(lo);
    const std::uint64_t mid = lo + (hi - lo + 1) / 2;
    const Rec a = PairwiseOver(lo, mid, item);
    const Rec b = PairwiseOver(mid, hi, item);
    return Combine(a, b);
  }

  template <class Item>
  Rec SeqOver(std::uint64_t count, const Item& item) const {
    Rec acc = item(0);
    for (std::uint64_t i = 1; i < count; ++i) acc = Combine(acc, item(i));
    return acc;
  }

  // RandomOver on [lo, hi).
  Rec Random(std::uint64_t seed, std::uint64_t lo, std::uint64_t hi) const {  // NOLINT
    if (hi - lo == 1) return Chain(lo, 1, 1);
    const std::uint64_t mid = tree_detail::RandomSplit(seed, lo, hi);
    const Rec a = Random(seed, lo, mid);
    const Rec b = Random(seed, mid, hi);
    return Combine(a, b);
  }

 private:
  Counters& c_;
  bool lift_;
  std::uint64_t off_;
  mutable fast_replay_detail::PairwisePlans plans_;
  mutable std::vector<Rec> region_;
};

// The root record of BuildTree(s, n) shifted by off, n >= 1; false where BuildTree decides.
bool Walk(const Schedule& s, std::uint64_t n, std::uint64_t off, Counters& c,  // NOLINT
          Rec& root) {
  const Walker w(c, s.lift, off);
  switch (s.kind) {
    case ScheduleKind::kSeq:
      root = w.Chain(0, n, 1);
      return true;
    case ScheduleKind::kReverse: {
      Rec acc = w.Chain(n - 1, 1, 1);
      for (std::uint64_t i = n - 1; i-- > 0;) acc = w.Combine(w.Chain(i, 1, 1), acc);
      root = acc;
      return true;
    }
    case ScheduleKind::kPairwise:
      root = w.Pairwise(0, n, s.leaf);
      return true;
    case ScheduleKind::kBlocked: {
      const std::uint64_t tiles = (n + s.tile - 1) / s.tile;
      auto tile = [&](std::uint64_t t) {
        const std::uint64_t lo = t * s.tile;
        return w.Chain(lo, std::min(s.tile, n - lo), 1);
      };
      root = s.outer == OuterOrder::kSeq ? w.SeqOver(tiles, tile) : w.PairwiseOver(0, tiles, tile);
      return true;
    }
    case ScheduleKind::kStrided: {
      if (s.lanes > n) return false;  // empty lanes (and BuildTree's refusal of too many)
      const std::uint64_t K = s.lanes;
      auto lane = [&](std::uint64_t k) {
        const std::uint64_t count = (n - k + K - 1) / K;  // >= 1 since k < K <= n
        if (s.tile == 0) return w.Chain(k, count, K);
        auto piece = [&](std::uint64_t j) {
          return w.Chain(k + j * s.tile * K, std::min(s.tile, count - j * s.tile), K);
        };
        return w.SeqOver((count + s.tile - 1) / s.tile, piece);
      };
      root = w.PairwiseOver(0, K, lane);
      c.permutes = c.permutes || (n > 1 && K > 1);
      return true;
    }
    case ScheduleKind::kRandom:
      root = n == 1 ? w.Chain(0, 1, 1) : w.Random(s.seed, 0, n);
      return true;
    case ScheduleKind::kOmp: {
      if (s.parts > n) return false;  // empty chunks: BuildTree's rules
      const Schedule inner = s.inner.empty() ? Schedule::Seq() : ParseSchedule(s.inner);
      std::vector<Rec> roots(s.parts);
      for (std::uint64_t k = 0; k < s.parts; ++k) {
        const std::uint64_t lo = OmpChunkStart(n, s.parts, k);
        const std::uint64_t hi = OmpChunkStart(n, s.parts, k + 1);
        if (!Walk(inner, hi - lo, off + lo, c, roots[k])) return false;
      }
      auto item = [&](std::uint64_t k) { return roots[k]; };
      root =
          s.outer == OuterOrder::kSeq ? w.SeqOver(s.parts, item) : w.PairwiseOver(0, s.parts, item);
      return true;
    }
    default:
      return false;
  }
}

std::mutex g_cache_mutex;
std::map<std::pair<std::string, std::uint64_t>, TreeShape>& Cache() {
  static std::map<std::pair<std::string, std::uint64_t>, TreeShape> cache;
  return cache;
}

}  // namespace

bool WalkableKind(const Schedule& s, std::uint64_t n) {  // NOLINT(misc-no-recursion)
  if (n == 0) return false;
  switch (s.kind) {
    case ScheduleKind::kSeq:
    case ScheduleKind::kReverse:
    case ScheduleKind::kPairwise:
    case ScheduleKind::kBlocked:
    case ScheduleKind::kRandom:
      return true;
    case ScheduleKind::kStrided:
      return s.lanes <= n;
    case ScheduleKind::kOmp: {
      if (s.parts > n) return false;
      const Schedule inner = s.inner.empty() ? Schedule::Seq() : ParseSchedule(s.inner);
      return WalkableKind(inner, n / s.parts);  // the shortest chunk decides strided's lanes
    }
    default:
      return false;
  }
}

bool WalkShape(const Schedule& s, std::uint64_t n, TreeShape& out) {
  if (n == 0) return false;
  Counters c;
  Rec root;
  if (!Walk(s, n, 0, c, root)) return false;
  out.schedule = ToString(s);
  out.permutes = c.permutes;
  out.stats = TreeStats{};
  out.stats.n = n;
  out.stats.chains = c.chains;
  out.stats.combines = c.combines;
  out.stats.longest_chain = c.longest;
  out.stats.combine_depth = root.cdepth;
  out.stats.max_leaf_depth = root.max;
  out.stats.mean_leaf_depth = root.sum / static_cast<double>(n);
  const std::uint64_t h = Absorb(Absorb(Mix(tree_hash_detail::kTagRoot), n), root.hash);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  out.hash = buf;
  return true;
}

TreeShape ShapeOfTree(const MergeTree& t) {
  TreeShape out;
  out.schedule = t.schedule;
  out.stats = ComputeStats(t);
  out.hash = TreeHash(t);
  out.permutes = t.permutes;
  return out;
}

bool ShapeOfSchedule(const Schedule& s, std::uint64_t n, TreeShape& out) {
  std::pair<std::string, std::uint64_t> key{ToString(s), n};
  {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    const auto it = Cache().find(key);
    if (it != Cache().end()) {
      out = it->second;
      return true;
    }
  }
  TreeShape walked;
  if (!WalkShape(s, n, walked)) return false;
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  Cache().emplace(std::move(key), walked);
  out = std::move(walked);
  return true;
}

}  // namespace carrier::run
