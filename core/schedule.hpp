// core/schedule.hpp: the library of merge orders. A Schedule (core/orders/order.hpp) is a few
// parameters with a text form that round-trips; each kind lives in one file of core/orders/
// (its parameters, parse, print, help row, and its walk or tree), listed once below in Orders.
//
// Vocabulary (DESIGN.md; each file says more):
//   seq                          one chain, left to right, from Identity
//   reverse                      right fold of single elements: x0 + (x1 + (... + x_{n-1}))
//   pairwise[:LEAF][:lift]       recursive halving down to chains of at most LEAF elements
//   blocked:TILE[:seq|pairwise][:lift]   tiles of TILE, tile states merged by the outer order
//   strided:K[:tile:T][:lift]    element i to lane i mod K; lanes merged pairwise in lane order
//   random:SEED                  a seeded random binary tree over the input in order
//   omp:P[:seq|pairwise][:INNER] P static chunks [floor(c n / P), floor((c+1) n / P)), each by
//                                the INNER order (default seq), chunk states merged outer
//   cuda:THREADS[:...]           kernels/cuda's block and grid reduction
//   canonical:L[:bisect]         WG21 P4016R0's canonical parallel reduction
//   file:PATH                    the tree saved in PATH (core/tree_io.hpp)
//   mma:PROFILE[:promote:N]      a matrix unit's accumulation along K (core/mma.hpp); dot only
//   numpy[:BLOCK[:ACC[:CHUNK]]]  numpy's float sum
//   torch:LANES                  torch.sum on CPU, one thread
//   splitk:S[:INNER]             split-K: S slices of ceil(n/S), each by INNER, partials in order
// `:lift` makes every leaf chain a whole-tile lift by the carrier's LiftTile (its documented
// inner algorithm, e.g. softmax: tile max, then one exp per element) instead of a fold.
//
// ParseSchedule(text) throws ScheduleError, a one-line message naming the bad part and what is
// allowed; ToString(ParseSchedule(t)) is the canonical text and ParseSchedule(ToString(s)) == s.
// BuildTree(s, n) is the explicit MergeTree; WalkSchedule(s, n, off, visitor) emits the same
// tree's nodes into any visitor (core/orders/order.hpp) without building it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/merge_tree.hpp"
#include "core/orders/blocked.hpp"
#include "core/orders/canonical.hpp"
#include "core/orders/cuda.hpp"
#include "core/orders/file.hpp"
#include "core/orders/mma.hpp"
#include "core/orders/numpy.hpp"
#include "core/orders/omp.hpp"
#include "core/orders/order.hpp"
#include "core/orders/pairwise.hpp"
#include "core/orders/random.hpp"
#include "core/orders/reverse.hpp"
#include "core/orders/seq.hpp"
#include "core/orders/splitk.hpp"
#include "core/orders/strided.hpp"
#include "core/orders/torch.hpp"

namespace carrier {

template <class... K>
struct OrderList {};

// Every kind, in ScheduleKind order. A new kind: its file in core/orders/, its enumerator, and
// one entry here.
using Orders =
    OrderList<orders::Seq, orders::Reverse, orders::Pairwise, orders::Blocked, orders::Strided,
              orders::Random, orders::Omp, orders::Cuda, orders::Canonical, orders::File,
              orders::Mma, orders::Numpy, orders::Torch, orders::SplitK>;

namespace schedule_detail {

template <class K, class V>
concept WalkedOrder = requires(const Schedule& s, V& v) {
  K::template Walk<V>(s, 0, 0, v);
};
template <class K>
concept PartitionOrder = requires(const Schedule& s) {
  K::Chunks(s, std::uint64_t{0});
};

template <class F, class K, class... Rest>
decltype(auto) DispatchKind(ScheduleKind kind, F& f) {
  if constexpr (sizeof...(Rest) == 0) {
    return f(K{});  // the last kind (the enum holds no other value)
  } else {
    if (kind == K::kKind) return f(K{});
    return DispatchKind<F, Rest...>(kind, f);
  }
}

template <class... K>
constexpr bool InKindOrder(OrderList<K...>) {
  int i = 0;
  return ((static_cast<int>(K::kKind) == i++) && ...);
}
static_assert(InKindOrder(Orders{}), "Orders must list the kinds in ScheduleKind order");

}  // namespace schedule_detail

// f(K{}) for the kind K of `kind`; every call must return the same type.
template <class F>
decltype(auto) VisitOrder(ScheduleKind kind, F&& f) {
  return [&]<class... K>(OrderList<K...>) -> decltype(auto) {
    return schedule_detail::DispatchKind<F, K...>(kind, f);
  }(Orders{});
}

inline constexpr auto kScheduleKindDocs = []<class... K>(OrderList<K...>) {
  return std::array<ScheduleKindDoc, sizeof...(K)>{K::kDoc...};
}(Orders{});

// "seq | reverse | ...": every kind's syntax.
inline const std::string kScheduleGrammar = [] {
  std::string g;
  for (const ScheduleKindDoc& d : kScheduleKindDocs)
    g += (g.empty() ? "" : " | ") + std::string(d.syntax);
  return g;
}();

inline Schedule ParseSchedule(std::string_view text) {
  const std::vector<std::string_view> parts = schedule_detail::Split(text, ':');
  const std::string_view head = parts[0];
  std::optional<Schedule> out;
  [&]<class... K>(OrderList<K...>) {
    (void)((head == K::kHead ? (out = K::Parse(text, parts), true) : false) || ...);
  }(Orders{});
  if (!out)
    schedule_detail::Fail(text,
                          "unknown kind '" + std::string(head) + "'; expected " + kScheduleGrammar);
  return *std::move(out);
}

inline std::string ToString(const Schedule& s) {
  return VisitOrder(s.kind, [&]<class K>(K) { return K::Print(s); });
}

// The partition of a chunked order (omp, splitk) over n inputs; nullopt for the others.
inline std::optional<Partition> PartitionOf(const Schedule& s, std::uint64_t n) {
  return VisitOrder(s.kind, [&]<class K>(K) -> std::optional<Partition> {
    if constexpr (schedule_detail::PartitionOrder<K>) {
      return K::Chunks(s, n);
    } else {
      return std::nullopt;
    }
  });
}

// The visitor that numbers a walk's nodes as MergeTree does: chains in emission order, then
// combines in emission order (a combine's operands are resolved to ids when the walk ends).
class TreeBuilder {
 public:
  using Node = std::uint64_t;  // chain k: k; combine m: kCombine | m

  TreeBuilder(std::uint64_t n, std::string schedule) {
    t_.n = n;
    t_.schedule = std::move(schedule);
  }
  Node Chain(std::uint64_t first, std::uint64_t count, std::uint64_t stride, ChainMode mode) {
    t_.chains.push_back({first, count, stride, mode});
    return t_.chains.size() - 1;
  }
  Node Singles(std::uint64_t first, std::uint64_t count, ChainMode mode) {
    const Node base = t_.chains.size();
    t_.chains.reserve(t_.chains.size() + count);
    for (std::uint64_t i = 0; i < count; ++i) t_.chains.push_back({first + i, 1, 1, mode});
    return base;
  }
  Node Combine(Node a, Node b) {
    t_.combines.push_back({a, b});
    return kCombine | (t_.combines.size() - 1);
  }
  void Permutes() { t_.permutes = true; }
  void Fused(const MmaNode& node) { t_.fused = node; }

  // The tree; `root` (the walk's result) must be its last node.
  MergeTree Take(std::optional<Node> root) {
    const std::uint64_t chains = t_.chains.size();
    auto id = [&](Node x) { return x & kCombine ? chains + (x & ~kCombine) : x; };
    for (CombineOp& op : t_.combines) op = {id(op.left), id(op.right)};
    if (root && id(*root) != t_.NodeCount() - 1)
      throw std::logic_error("order walk of '" + t_.schedule + "' ended off its last node");
    return std::move(t_);
  }

 private:
  static constexpr Node kCombine = Node{1} << 63;
  MergeTree t_;
};

// An explicit tree emitted node by node into a visitor, its inputs shifted by off (the orders
// from outside as a walk: an omp chunk by cuda:..., say).
template <class V>
std::optional<NodeOf<V>> WalkTree(const MergeTree& t, std::uint64_t off, V& v) {
  if (t.Empty()) return std::nullopt;
  if constexpr (requires { v.Fused(t.fused); }) {
    if (t.UsesFusedNode()) v.Fused(t.fused);
  }
  std::vector<NodeOf<V>> id;
  id.reserve(t.NodeCount());
  for (const Chain& c : t.chains)
    id.push_back(v.Chain(c.count > 0 ? c.first + off : c.first, c.count, c.stride, c.mode));
  for (const CombineOp& op : t.combines) id.push_back(v.Combine(id[op.left], id[op.right]));
  if (t.permutes) v.Permutes();
  return id.back();
}

template <class V>
std::optional<NodeOf<V>> WalkSchedule(const Schedule& s, std::uint64_t n, std::uint64_t off,
                                      V& v) {  // NOLINT(misc-no-recursion)
  return VisitOrder(s.kind, [&]<class K>(K) -> std::optional<NodeOf<V>> {
    if constexpr (schedule_detail::WalkedOrder<K, V>) {
      return K::Walk(s, n, off, v);
    } else {
      return WalkTree(K::Build(s, n), off, v);
    }
  });
}

// Whether schedule s has a walk of its own (false: the orders from outside, built as trees).
inline bool IsWalkedOrder(const Schedule& s) {
  return VisitOrder(s.kind,
                    [&]<class K>(K) { return schedule_detail::WalkedOrder<K, TreeBuilder>; });
}

// The explicit tree of schedule s over n inputs.
inline MergeTree BuildTree(const Schedule& s, std::uint64_t n) {
  return VisitOrder(s.kind, [&]<class K>(K) {
    if constexpr (schedule_detail::WalkedOrder<K, TreeBuilder>) {
      TreeBuilder v(n, K::Print(s));
      const std::optional<TreeBuilder::Node> root = K::Walk(s, n, 0, v);
      return v.Take(root);
    } else {
      return K::Build(s, n);
    }
  });
}

inline MergeTree BuildTree(std::string_view schedule_text, std::uint64_t n) {
  return BuildTree(ParseSchedule(schedule_text), n);
}

}  // namespace carrier
