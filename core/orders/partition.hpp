// core/orders/partition.hpp: the walk shared by the partitions (omp:P, splitk:S): contiguous
// chunks, each reduced by a nested order over its own inputs, the chunk states merged by an
// outer order. Node ids as BuildTree has always given them: every chunk's chains (chunk
// order), then every chunk's combines (chunk order), then the outer merge of the chunks whose
// tree has a node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/orders/order.hpp"

namespace carrier {

namespace schedule_detail {

// The nested order written after a partition's own fields: parts[i..] rejoined (it contains
// ':' itself), parsed; `who` names the kind in the messages. Partitions do not nest. Defined in
// core/schedule.hpp (it parses a whole Schedule).
inline NestedSchedule ParseNested(std::string_view text, const std::vector<std::string_view>& parts,
                                  std::size_t i, std::string_view who);

}  // namespace schedule_detail

namespace orders_detail {

// Counts the nodes of a walk (the size of a tree without building it).
struct NodeCounter {
  using Node = int;
  std::uint64_t nodes = 0;
  Node Chain(std::uint64_t, std::uint64_t, std::uint64_t, ChainMode) {
    ++nodes;
    return 0;
  }
  Node Combine(Node, Node) {
    ++nodes;
    return 0;
  }
  void Permutes() {}
};

}  // namespace orders_detail

// Whether the empty chunks of p (if any) are skipped: they are where the nested order gives
// an empty input no node (every order but strided), so the work is O(non-empty chunks) and
// not O(parts) (omp:10^15 used to hang on n = 100: found by tests/fuzz/fuzz_schedule).
// Otherwise each empty chunk really holds nodes, and a count that would make an absurd tree is
// refused here (ScheduleError naming `text`), for the walk and the fast replay alike.
inline bool SkipEmptyChunks(const Partition& p, const std::string& text) {
  if (p.parts <= p.nonempty) return false;
  orders_detail::NodeCounter count;
  WalkSchedule(*p.inner, 0, 0, count);
  const std::uint64_t empty_nodes = count.nodes;
  if (empty_nodes > 0 && p.parts - p.nonempty > kMaxEmptyNodes / empty_nodes)
    throw ScheduleError("bad schedule '" + text + "': " + std::to_string(p.parts) + " chunks of " +
                        std::to_string(p.n) + " inputs with inner schedule '" + ToString(*p.inner) +
                        "' would make over " + std::to_string(kMaxEmptyNodes) +
                        " nodes for empty chunks");
  return empty_nodes == 0;
}

// The partition p walked over inputs [off, off + p.n); `text` names the schedule in errors.
template <class V>
std::optional<NodeOf<V>> WalkPartition(const Partition& p, const std::string& text,
                                       std::uint64_t off, V& v) {  // NOLINT(misc-no-recursion)
  const std::uint64_t n = p.n;
  const Schedule& inner = *p.inner;
  const bool skip_empty = SkipEmptyChunks(p, text);
  std::vector<NodeOf<V>> roots;
  for (std::uint64_t c = skip_empty ? (n > 0 ? p.ChunkOf(0) : p.parts) : 0; c < p.parts;) {
    const std::uint64_t lo = p.Start(c);
    const std::uint64_t hi = p.Start(c + 1);
    c = skip_empty ? (hi < n ? p.ChunkOf(hi) : p.parts) : c + 1;
    if (auto root = WalkSchedule(inner, hi - lo, off + lo, v)) roots.push_back(*root);
  }
  if (roots.empty()) return std::nullopt;
  return WalkOuter(v, p.outer, roots.size(), [&](std::uint64_t i) { return roots[i]; });
}

}  // namespace carrier
