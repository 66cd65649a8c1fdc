// core/schedule.hpp: the library of merge orders. A Schedule (below: a variant of the kinds'
// parameters) has a text form that round-trips; each kind lives in one file of core/orders/
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
#include <type_traits>
#include <utility>
#include <variant>
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
// one entry here (which also makes its Params an alternative of Schedule's variant).
using Orders =
    OrderList<orders::Seq, orders::Reverse, orders::Pairwise, orders::Blocked, orders::Strided,
              orders::Random, orders::Omp, orders::Cuda, orders::Canonical, orders::File,
              orders::Mma, orders::Numpy, orders::Torch, orders::SplitK>;

namespace schedule_detail {

template <class K, class V>
concept WalkedOrder = requires(const typename K::Params& p, V& v) {
  K::template Walk<V>(p, 0, 0, v);
};
// A visitor that takes an explicit tree whole (the fast replay's Tree hook). A named concept,
// not a requires-expression inside WalkSchedule's lambda: nvcc 13's front end took that one as
// satisfied for visitors without Tree (NodeCounter) and compiled the call.
template <class V>
concept TakesTree = requires(V& v, const MergeTree& t, std::uint64_t off) {
  v.Tree(t, off);
};
template <class K>
concept PartitionOrder = requires(const typename K::Params& p) {
  K::Chunks(p, std::uint64_t{0});
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

template <class... K>
std::variant<typename K::Params...> ParamsVariantOf(OrderList<K...>);

}  // namespace schedule_detail

// One alternative per kind, in ScheduleKind order (the index is the kind).
using ScheduleParams = decltype(schedule_detail::ParamsVariantOf(Orders{}));

// A merge order: one kind's parameters. kind() is the variant's index; As<P>() / If<P>() give
// the typed parameters (orders::PairwiseParams, ...). Equality compares the kind and its
// parameters (file:'s loaded tree by identity, FileParams).
struct Schedule {
  ScheduleParams params{};

  Schedule() = default;
  template <class P>
  requires std::is_constructible_v<ScheduleParams, P&&> &&
      (!std::is_same_v<std::remove_cvref_t<P>, Schedule>)Schedule(P&& p)
      : params(std::forward<P>(p)) {}  // NOLINT(google-explicit-constructor)

  ScheduleKind kind() const { return static_cast<ScheduleKind>(params.index()); }
  template <class P>
  const P* If() const {
    return std::get_if<P>(&params);
  }
  template <class P>
  P* If() {
    return std::get_if<P>(&params);
  }
  // The parameters of kind P; std::bad_variant_access where the schedule is another kind.
  template <class P>
  const P& As() const {
    return std::get<P>(params);
  }
  template <class P>
  P& As() {
    return std::get<P>(params);
  }

  // The nested order of omp and splitk (seq where unset, and for the other kinds).
  const Schedule& Inner() const {
    const NestedSchedule* nested = Nested();
    return nested ? nested->Get() : NestedSchedule().Get();
  }
  // The nested order's slot of omp and splitk; null for the other kinds.
  const NestedSchedule* Nested() const {
    return std::visit(
        [](const auto& p) -> const NestedSchedule* {
          if constexpr (requires { p.inner; }) {
            return &p.inner;
          } else {
            return nullptr;
          }
        },
        params);
  }
  NestedSchedule* Nested() { return const_cast<NestedSchedule*>(std::as_const(*this).Nested()); }
  // Whether the leaf chains are lifted whole by LiftTile (the `lift` of seq, reverse, pairwise,
  // blocked, strided, random); false for the other kinds (cuda's own is in CudaSchedule).
  bool Lift() const {
    return std::visit(
        [](const auto& p) {
          if constexpr (requires { p.lift; }) {
            return p.lift;
          } else {
            return false;
          }
        },
        params);
  }

  friend bool operator==(const Schedule&, const Schedule&) = default;

  static Schedule Seq() { return {}; }
  static Schedule Reverse() { return orders::ReverseParams{}; }
  static Schedule Pairwise(std::uint64_t leaf = 1, bool lift = false) {
    return orders::PairwiseParams{.leaf = leaf, .lift = lift};
  }
  static Schedule Blocked(std::uint64_t tile, OuterOrder outer = OuterOrder::kSeq,
                          bool lift = false) {
    return orders::BlockedParams{.tile = tile, .outer = outer, .lift = lift};
  }
  static Schedule Strided(std::uint64_t lanes) { return orders::StridedParams{.lanes = lanes}; }
  static Schedule Random(std::uint64_t seed) { return orders::RandomParams{.seed = seed}; }
  static Schedule StridedTiles(std::uint64_t lanes, std::uint64_t tile, bool lift) {
    return orders::StridedParams{.lanes = lanes, .tile = tile, .lift = lift};
  }
  static Schedule Omp(std::uint64_t parts, OuterOrder outer = OuterOrder::kSeq,
                      NestedSchedule inner = {}) {
    return orders::OmpParams{.parts = parts, .outer = outer, .inner = std::move(inner)};
  }
  static Schedule SplitK(std::uint64_t parts, NestedSchedule inner = {}) {
    return orders::SplitKParams{.parts = parts, .inner = std::move(inner)};
  }
};

inline NestedSchedule::NestedSchedule(Schedule s)
    : p_(std::make_shared<const Schedule>(std::move(s))) {}
inline const Schedule& NestedSchedule::Get() const {
  static const Schedule seq{};
  return p_ ? *p_ : seq;
}
inline bool operator==(const NestedSchedule& a, const NestedSchedule& b) {
  if (a.p_ == nullptr || b.p_ == nullptr) return a.p_ == b.p_;
  return *a.p_ == *b.p_;
}

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

// f(K{}, params) for the kind K of s and its parameters (K::Params).
template <class F>
decltype(auto) VisitParams(const Schedule& s, F&& f) {
  return VisitOrder(s.kind(), [&]<class K>(K k) -> decltype(auto) {
    return f(k, *std::get_if<typename K::Params>(&s.params));
  });
}

inline Schedule ParseSchedule(std::string_view text) {
  const std::vector<std::string_view> parts = schedule_detail::Split(text, ':');
  const std::string_view head = parts[0];
  std::optional<Schedule> out;
  [&]<class... K>(OrderList<K...>) {
    (void)((head == K::kHead ? (out = Schedule(K::Parse(text, parts)), true) : false) || ...);
  }(Orders{});
  if (!out)
    schedule_detail::Fail(text,
                          "unknown kind '" + std::string(head) + "'; expected " + kScheduleGrammar);
  return *std::move(out);
}

inline std::string ToString(const Schedule& s) {
  return VisitParams(s, [&]<class K>(K, const auto& p) { return K::Print(p); });
}

namespace schedule_detail {

inline NestedSchedule ParseNested(std::string_view text, const std::vector<std::string_view>& parts,
                                  std::size_t i, std::string_view who) {
  if (i >= parts.size()) return {};
  const std::size_t offset = static_cast<std::size_t>(parts[i].data() - text.data());
  const std::string_view rest = text.substr(offset);
  Schedule inner;
  try {
    inner = ParseSchedule(rest);
  } catch (const ScheduleError& e) {
    Fail(text, std::string("inner schedule: ") + e.what());
  }
  if (PartitionOf(inner, 0))
    Fail(text, "the inner schedule of " + std::string(who) + " cannot be " +
                   std::string(rest.substr(0, rest.find(':'))) + " (partitions do not nest)");
  return NestedSchedule(std::move(inner));
}

}  // namespace schedule_detail

// The partition of a chunked order (omp, splitk) over n inputs; nullopt for the others.
inline std::optional<Partition> PartitionOf(const Schedule& s, std::uint64_t n) {
  return VisitParams(s, [&]<class K>(K, const auto& p) -> std::optional<Partition> {
    if constexpr (schedule_detail::PartitionOrder<K>) {
      return K::Chunks(p, n);
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
  return VisitParams(s, [&]<class K>(K, const auto& p) -> std::optional<NodeOf<V>> {
    if constexpr (schedule_detail::WalkedOrder<K, V>) {
      return K::Walk(p, n, off, v);
    } else if constexpr (schedule_detail::TakesTree<V>) {
      return v.Tree(K::Build(p, n), off);  // a visitor that takes the explicit tree whole
    } else {
      return WalkTree(K::Build(p, n), off, v);
    }
  });
}

// Whether schedule s has a walk of its own (false: the orders from outside, built as trees).
inline bool IsWalkedOrder(const Schedule& s) {
  return VisitOrder(s.kind(),
                    [&]<class K>(K) { return schedule_detail::WalkedOrder<K, TreeBuilder>; });
}

// The explicit tree of schedule s over n inputs.
inline MergeTree BuildTree(const Schedule& s, std::uint64_t n) {
  return VisitParams(s, [&]<class K>(K, const auto& p) {
    if constexpr (schedule_detail::WalkedOrder<K, TreeBuilder>) {
      TreeBuilder v(n, K::Print(p));
      const std::optional<TreeBuilder::Node> root = K::Walk(p, n, 0, v);
      return v.Take(root);
    } else {
      return K::Build(p, n);
    }
  });
}

inline MergeTree BuildTree(std::string_view schedule_text, std::uint64_t n) {
  return BuildTree(ParseSchedule(schedule_text), n);
}

}  // namespace carrier
