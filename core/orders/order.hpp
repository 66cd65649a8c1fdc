// core/orders/order.hpp: what every merge order shares: its parse helpers and the walk protocol
// through which one order's shape reaches every consumer. The Schedule value itself is
// assembled in core/schedule.hpp, where every kind is known; here and in the kinds' files it is
// only named (no include circle: the kinds' files include this file, schedule.hpp includes them).
//
// One file per schedule kind (core/orders/<kind>.hpp) holds that kind's parameters (a struct
// <Kind>Params, one alternative of Schedule's std::variant), and an order struct with its parse
// (Parse -> Params) and print (Print(params)), its help row, and either
//   Walk(p, n, off, v)   the shape over inputs [off, off + n), emitted into a visitor v, or
//   Build(p, n)          an explicit MergeTree, for the orders that come from outside (a CUDA
//                        kernel, P4016, numpy, torch, a matrix unit, a file)
// and optionally Chunks(p, n), where the order is a partition of the input into contiguous
// chunks, each reduced by a nested order (omp, splitk): its walk is WalkPartition
// (core/orders/partition.hpp), and the fast replay's ShapeOf reads the chunks' nested order to
// check a schedule before any input is read. core/schedule.hpp lists the kinds (Orders), builds the
// variant from that list and dispatches on it; a new kind is its file plus one line there (and
// its enumerator below).
//
// The walk protocol. A visitor V has a node type V::Node and
//   Node Chain(first, count, stride, ChainMode)   a chain (MergeTree's Chain, first absolute)
//   Node Combine(Node left, Node right)           Combine(left, right), operands in this order
//   void Permutes()                               the tree merges interleaved inputs
// and optionally Singles(first, count, mode), declaring `count` one-input chains at once (a
// batch of independent chains: the tree builder numbers them in one step; others make each
// node when the walk asks for it), and Tiles(first, n, len, mode), a batch of contiguous chains
// of `len` inputs asked in increasing order (TilesOf below). Walks emit chains in chain-id
// order and combines in combine-id order of the tree BuildTree has always built for the kind
// (ids, and so saved trees and order-sensitive replays, are unchanged); a node is emitted
// before it is used. A visitor that evaluates several nodes faster together may also take a
// whole piece of a kind's shape at once, where the kind's walk offers it (each kind's file
// says which): a pairwise subtree (TakesPairwise / PairwiseSubtree), a random:S region
// (RandomRegionLimit / RandomRegion), the reverse fold (ReverseFold), strided:K's lanes
// (StridedLanes) and an explicit tree of an order from outside (Tree, core/schedule.hpp
// WalkSchedule). Each returns the node the walk would have reached, by the same operations.
// Visitors: the tree builder (core/schedule.hpp TreeBuilder), the shape and hash walk
// (core/orders/shape.hpp) and the fast replay (core/replay.hpp ReplayWalker, the carrier
// states themselves).
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace carrier {

class ScheduleError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// In the order of the kinds' list in core/schedule.hpp (Orders); append new kinds.
enum class ScheduleKind {
  kSeq,
  kReverse,
  kPairwise,
  kBlocked,
  kStrided,
  kRandom,
  kOmp,
  kCuda,
  kCanonical,
  kFile,
  kMma,
  kNumpy,
  kTorch,
  kSplitK,
};
enum class OuterOrder { kSeq, kPairwise };
enum class ChainMode : std::uint8_t { kPush, kLiftTile, kFused };

// The value of a merge order: one kind's parameters (core/schedule.hpp, a std::variant of every
// kind's Params; this file and the kinds' files only name it).
struct Schedule;
struct MergeTree;  // core/merge_tree.hpp

// A nested order held by value (omp's and splitk's per-chunk order): unset (the kind's
// default, printed as nothing) or a Schedule. Copies share the immutable value.
class NestedSchedule {
 public:
  NestedSchedule() = default;
  explicit NestedSchedule(Schedule s);
  bool IsSet() const { return p_ != nullptr; }
  // The nested order; seq where unset.
  const Schedule& Get() const;
  friend bool operator==(const NestedSchedule& a, const NestedSchedule& b);

 private:
  std::shared_ptr<const Schedule> p_;
};

// Defined in core/schedule.hpp (they dispatch over every kind, and Schedule is complete there).
inline Schedule ParseSchedule(std::string_view text);
inline std::string ToString(const Schedule& s);

// One line of help per schedule kind: its syntax, what it is, and an example that parses
// (tests/core/test_schedule_docs.cpp checks every kind has one, in ScheduleKind order, that each
// example parses to its kind, and that the grammar names each syntax). `carrier tree --help` and
// `carrier eval --help` print the table (registry::ExpandHelp {SCHEDULES}).
struct ScheduleKindDoc {
  ScheduleKind kind;
  const char* syntax;
  const char* what;
  const char* example;
};

namespace schedule_detail {

inline std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t pos = text.find(sep, start);
    parts.push_back(text.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

[[noreturn]] inline void Fail(std::string_view text, const std::string& why) {
  throw ScheduleError("bad schedule '" + std::string(text) + "': " + why);
}

inline std::uint64_t ParseCount(std::string_view text, std::string_view field,
                                std::string_view what, bool allow_zero) {
  std::uint64_t value = 0;
  const char* begin = field.data();
  const char* end = field.data() + field.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (field.empty() || ec != std::errc() || ptr != end || (!allow_zero && value == 0)) {
    Fail(text, std::string(what) + " must be " + (allow_zero ? "a non-negative" : "a positive") +
                   " integer, got '" + std::string(field) + "'");
  }
  return value;
}

inline void ExpectAtMost(std::string_view text, const std::vector<std::string_view>& parts,
                         std::size_t n) {
  if (parts.size() > n) Fail(text, "unexpected field '" + std::string(parts[n]) + "'");
}

// The optional `:lift` that ends pairwise, blocked and strided (from parts[i]), then nothing.
inline void ParseLiftTail(std::string_view text, const std::vector<std::string_view>& parts,
                          std::size_t i, bool& lift) {
  if (i < parts.size() && parts[i] == "lift") {
    lift = true;
    ++i;
  }
  ExpectAtMost(text, parts, i);
}

}  // namespace schedule_detail

// ---- The walk protocol (see the top of this file) ----

template <class V>
using NodeOf = typename V::Node;

// Defined in core/schedule.hpp: the walk of any kind (orders with Build only: their tree,
// emitted node by node). Returns no node where the order's tree over n inputs has none.
template <class V>
std::optional<NodeOf<V>> WalkSchedule(const Schedule& s, std::uint64_t n, std::uint64_t off, V& v);

// A chain of the walk over [off, off + n): `first` relative to off (an empty chain keeps 0).
template <class V>
NodeOf<V> WalkChain(V& v, std::uint64_t off, std::uint64_t first, std::uint64_t count,
                    std::uint64_t stride, ChainMode mode) {
  return v.Chain(count > 0 ? off + first : first, count, stride, mode);
}

// `lanes` independent chains of count >= 1 inputs each, chain i over inputs off + first + i,
// off + first + i + stride, ..., appended to out in order. A visitor with Chains(first, lanes,
// count, stride, mode, out) makes them together (the shape walk: their hashes advance
// together); for the others, WalkChain one after another.
template <class V>
void WalkChains(V& v, std::uint64_t off, std::uint64_t first, std::uint64_t lanes,
                std::uint64_t count, std::uint64_t stride, ChainMode mode,
                std::vector<NodeOf<V>>& out) {
  if constexpr (requires { v.Chains(first, lanes, count, stride, mode, out); }) {
    v.Chains(off + first, lanes, count, stride, mode, out);
  } else {
    for (std::uint64_t i = 0; i < lanes; ++i)
      out.push_back(WalkChain(v, off, first + i, count, stride, mode));
  }
}

// `count` one-input chains for inputs off + first + i, i < count, declared in one batch;
// at(i) is the node of input off + first + i.
template <class V>
class SinglesOf {
 public:
  SinglesOf(V& v, std::uint64_t first, std::uint64_t count, ChainMode mode)
      : v_(v), first_(first), mode_(mode) {
    if constexpr (requires { v.Singles(first, count, mode); })
      base_ = v.Singles(first, count, mode);
  }
  NodeOf<V> at(std::uint64_t i) const {
    if constexpr (requires { v_.Singles(first_, i, mode_); }) {
      return base_ + i;
    } else {
      return v_.Chain(first_ + i, 1, 1, mode_);
    }
  }

 private:
  V& v_;
  std::uint64_t first_;
  ChainMode mode_;
  NodeOf<V> base_{};
};

// The ceil(n / len) contiguous chains of [first, first + n): chain i holds inputs first + i len
// .. first + min(n, (i + 1) len) - 1 (n > 0, len > 0), a batch of independent chains whose nodes
// are asked for in increasing i (at(i), or a batch at a time: Batch(i, want) and LeftFold,
// WalkPairwiseTiles and WalkSeqTiles below). A visitor with Tiles(first, n, len, mode) returns an
// object that evaluates them together (the fast replay: batches of tiles per vector pass), or one
// whose Merged() is the merged node itself (the shape probe, whose nodes carry nothing, so
// blocked:T's merge is not walked); for the others at(i) makes chain i when it is asked for.
template <class V>
class ChainTiles {
 public:
  ChainTiles(V& v, std::uint64_t first, std::uint64_t n, std::uint64_t len, ChainMode mode)
      : v_(v), first_(first), n_(n), len_(len), mode_(mode) {}
  NodeOf<V> at(std::uint64_t i) {
    const std::uint64_t lo = i * len_;
    return v_.Chain(first_ + lo, std::min(len_, n_ - lo), 1, mode_);
  }

 private:
  V& v_;
  std::uint64_t first_, n_, len_;
  ChainMode mode_;
};

template <class V>
auto TilesOf(V& v, std::uint64_t first, std::uint64_t n, std::uint64_t len, ChainMode mode) {
  if constexpr (requires { v.Tiles(first, n, len, mode); }) {
    return v.Tiles(first, n, len, mode);
  } else {
    return ChainTiles<V>(v, first, n, len, mode);
  }
}

// Combines item(0) .. item(count - 1) left to right (count >= 1); each item is asked for just
// before it is merged.
template <class V, class Item>
NodeOf<V> WalkSeqOver(V& v, std::uint64_t count, const Item& item) {
  NodeOf<V> acc = item(0);
  for (std::uint64_t i = 1; i < count; ++i) acc = v.Combine(acc, item(i));
  return acc;
}

// Recursive halving over item(lo) .. item(hi - 1) (hi > lo), the left half taking the extra
// item (core/pairwise.hpp's split), items asked for left to right.
template <class V, class Item>
NodeOf<V> WalkPairwiseOver(V& v, std::uint64_t lo, std::uint64_t hi,
                           const Item& item) {  // NOLINT(misc-no-recursion)
  if (hi - lo == 1) return item(lo);
  if (hi - lo == 2) {  // the recursion's last step inline: half the calls
    const NodeOf<V> a = item(lo);
    const NodeOf<V> b = item(lo + 1);
    return v.Combine(a, b);
  }
  const std::uint64_t mid = lo + (hi - lo + 1) / 2;
  const NodeOf<V> a = WalkPairwiseOver(v, lo, mid, item);
  const NodeOf<V> b = WalkPairwiseOver(v, mid, hi, item);
  return v.Combine(a, b);
}

// Combines tiles.at(0) .. tiles.at(count - 1) left to right, as WalkSeqOver. A tile source
// that computes its chains in batches folds them itself (the fast replay's: LeftFold(combine)
// returns combine(... combine(tile 0, tile 1) ..., tile count - 1) with this walk's Combine) or
// hands each batch over (the shape walk's: Batch(t, want)): the same combines in the same
// order, with no at(t) call and its check per tile.
template <class V, class Tiles>
NodeOf<V> WalkSeqTiles(V& v, std::uint64_t count, Tiles& tiles) {
  if constexpr (requires { tiles.LeftFold([](NodeOf<V> a, NodeOf<V>) { return a; }); }) {
    return tiles.LeftFold([&](const NodeOf<V>& a, const NodeOf<V>& b) { return v.Combine(a, b); });
  } else if constexpr (requires { tiles.Batch(std::uint64_t{0}, std::uint64_t{1}); }) {
    NodeOf<V> acc{};
    for (std::uint64_t t = 0; t < count;) {
      const auto batch = tiles.Batch(t, 1);
      std::size_t i = 0;
      if (t == 0) acc = batch[i++];
      for (; i < batch.size(); ++i) acc = v.Combine(acc, batch[i]);
      t += batch.size();
    }
    return acc;
  } else {
    return WalkSeqOver(v, count, [&](std::uint64_t t) { return tiles.at(t); });
  }
}

// WalkPairwiseOver(v, lo, hi, tiles.at) for tiles asked left to right. A tile source with
// Batch(t, want) hands each subtree whose tiles one batch holds over whole (the same recursion
// over the batch's nodes, without a check per tile).
template <class V, class Tiles>
NodeOf<V> WalkPairwiseTiles(V& v, std::uint64_t lo, std::uint64_t hi,
                            Tiles& tiles) {  // NOLINT(misc-no-recursion)
  if constexpr (requires { tiles.Batch(std::uint64_t{0}, std::uint64_t{1}); }) {
    const auto batch = tiles.Batch(lo, hi - lo);
    if (batch.size() >= hi - lo)
      return WalkPairwiseOver(v, 0, hi - lo, [&](std::uint64_t i) { return batch[i]; });
    const std::uint64_t mid = lo + (hi - lo + 1) / 2;  // WalkPairwiseOver's split
    const NodeOf<V> a = WalkPairwiseTiles(v, lo, mid, tiles);
    const NodeOf<V> b = WalkPairwiseTiles(v, mid, hi, tiles);
    return v.Combine(a, b);
  } else {
    return WalkPairwiseOver(v, lo, hi, [&](std::uint64_t t) { return tiles.at(t); });
  }
}

template <class V, class Item>
NodeOf<V> WalkOuter(V& v, OuterOrder outer, std::uint64_t count, const Item& item) {
  return outer == OuterOrder::kSeq ? WalkSeqOver(v, count, item)
                                   : WalkPairwiseOver(v, 0, count, item);
}

inline ChainMode LeafMode(bool lift) { return lift ? ChainMode::kLiftTile : ChainMode::kPush; }

// Trees whose size does not follow from n (K lanes of strided:K, empty chunks whose nested
// order still has nodes) are refused with a ScheduleError above this many empty nodes, so a
// large parameter cannot exhaust memory on a small input.
inline constexpr std::uint64_t kMaxEmptyNodes = std::uint64_t{1} << 16;

// A partition of [0, n) into `parts` contiguous chunks, chunk c = [start(c), start(c + 1)),
// each reduced by `inner`, the chunk states merged by `outer` (omp, splitk). chunk_of(i) is the
// chunk holding input i < n.
struct Partition {
  std::uint64_t n = 0;
  std::uint64_t parts = 0;
  OuterOrder outer = OuterOrder::kSeq;
  const Schedule* inner = nullptr;
  std::uint64_t (*start_fn)(const Partition&, std::uint64_t) = nullptr;
  std::uint64_t (*chunk_of_fn)(const Partition&, std::uint64_t) = nullptr;
  std::uint64_t nonempty = 0;  // how many chunks hold an input
  std::uint64_t param = 0;     // the kind's own constant (splitk: the slice length)
  std::uint64_t Start(std::uint64_t c) const { return start_fn(*this, c); }
  std::uint64_t ChunkOf(std::uint64_t i) const { return chunk_of_fn(*this, i); }
};

// Defined in core/schedule.hpp: the partition of a chunked order over n inputs, else nullopt.
inline std::optional<Partition> PartitionOf(const Schedule& s, std::uint64_t n);

}  // namespace carrier
