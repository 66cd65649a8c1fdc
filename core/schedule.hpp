// core/schedule.hpp: a merge order as a few parameters, with a text form that round-trips.
//
// Vocabulary (DESIGN.md):
//   seq                          one chain, left to right, from Identity
//   reverse                      right fold of single elements: x0 + (x1 + (... + x_{n-1}))
//   pairwise[:LEAF][:lift]       recursive halving (the left half takes the extra element)
//                                down to chains of at most LEAF elements (default 1)
//   blocked:TILE[:seq|pairwise][:lift]
//                                tiles of TILE contiguous elements, each folded sequentially,
//                                tile states merged by the outer order (default seq)
//   strided:K[:tile:T][:lift]    element i to lane i mod K; lanes merged pairwise in lane order.
//                                With tile:T each lane's chain is cut into tiles of T of its
//                                elements (lane k, tile j: inputs k + (jT + t)K, t < T), folded
//                                (or, with :lift, lifted whole) and merged in order within the
//                                lane: the SIMD kernels' lifted tiles (kernels/simd)
//   omp:P[:seq|pairwise][:INNER] an explicit static partition into P chunks, chunk c being
//                                [floor(c n / P), floor((c+1) n / P)); each chunk reduced by
//                                the INNER schedule (any non-omp schedule, default seq) over
//                                its own elements, chunk states merged by the outer order
//   random:SEED                  a seeded random binary tree over the input in order
//   canonical:L[:bisect]         WG21 P4016R0 (core/canonical_tree.hpp): element i to lane
//                                i mod L, each lane by the iterative pairwise tree, the L lane
//                                results by the same rule, then Combine(Identity, R) (init);
//                                :bisect uses the paper's recursive-bisection tree (App. O)
//   file:PATH                    the tree saved in PATH (core/tree_io.hpp: the JSON that
//                                `carrier tree --format json` and `carrier probe` write),
//                                validated and replayed as it is; its n must be the input's
//   mma:PROFILE[:promote:N]      a matrix unit's accumulation along K (core/mma.hpp): one chain
//                                of fused k-term steps over all inputs, or with promote:N chains
//                                of N inputs (N a multiple of the profile's k), each from a
//                                zeroed accumulator, whose results are added in order by the
//                                carrier's Combine (an IEEE fp32 accumulator, DeepSeek-V3's
//                                promotion). dot only.
//   numpy[:BLOCK[:ACC[:CHUNK]]]  numpy's float sum (core/library_trees.hpp), default
//                                128:8:8192: chunks of CHUNK added in order, each numpy's
//                                pairwise_sum (blocks of BLOCK, ACC accumulators)
//   torch:LANES                  torch.sum on CPU, one thread (core/library_trees.hpp): LANES
//                                the vector's elements (AVX2: 8 fp32, 4 fp64)
// `:lift` makes every leaf chain a whole-tile lift by the carrier's LiftTile (its documented
// inner algorithm, e.g. softmax: tile max, then one exp per element) instead of a fold.
//
// Parse(text) throws ScheduleError, a one-line message naming the bad part and what is
// allowed; ToString(Parse(t)) is the canonical text and Parse(ToString(s)) == s.
#pragma once

#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/cuda_schedule.hpp"
#include "core/mma.hpp"

namespace carrier {

class ScheduleError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class ScheduleKind {
  kSeq,
  kReverse,
  kPairwise,
  kBlocked,
  kStrided,
  kRandom,
  kOmp,
  kCuda,
  // Orders from outside (core/canonical_tree.hpp, core/tree_io.hpp):
  kCanonical,  // canonical:L[:bisect]   WG21 P4016R0's canonical parallel reduction
  kFile,       // file:PATH              a saved tree (carrier tree --format json, carrier probe)
  kMma,        // mma:PROFILE[:promote:N] (appended: keep it last)
  kNumpy,      // numpy[:BLOCK[:ACC[:CHUNK]]]  numpy's float sum (core/library_trees.hpp)
  kTorch,      // torch:LANES  torch.sum's cascade on CPU (core/library_trees.hpp)
};
enum class OuterOrder { kSeq, kPairwise };

struct Schedule {
  ScheduleKind kind = ScheduleKind::kSeq;
  std::uint64_t leaf = 1;               // pairwise: largest leaf chain
  std::uint64_t tile = 0;               // blocked: tile size; strided: lane tile (0 = whole lane)
  OuterOrder outer = OuterOrder::kSeq;  // blocked: how tile states are merged
  std::uint64_t lanes = 0;              // strided: K
  std::uint64_t seed = 0;               // random
  bool lift = false;                    // leaf chains lifted whole by LiftTile
  std::uint64_t parts = 0;              // omp: P, the number of chunks
  std::string inner{};                  // omp: canonical text of the per-chunk schedule ("" = seq)
  CudaSchedule cuda{};  // cuda: kernels/cuda's block/grid reduction (cuda_schedule.hpp)
  // Orders from outside. canonical: L is `lanes`; `bisect` selects P4016's Appendix O tree.
  bool bisect = false;
  std::string path{};         // file: the JSON tree's path, as given
  std::string mma{};          // mma: the profile's name (core/mma.hpp kMmaProfiles)
  std::uint64_t promote = 0;  // mma: promote to the carrier's Combine every N inputs (0 = never)

  friend bool operator==(const Schedule&, const Schedule&) = default;

  static Schedule Seq() { return {}; }
  static Schedule Reverse() { return {.kind = ScheduleKind::kReverse}; }
  static Schedule Pairwise(std::uint64_t leaf = 1, bool lift = false) {
    return {.kind = ScheduleKind::kPairwise, .leaf = leaf, .lift = lift};
  }
  static Schedule Blocked(std::uint64_t tile, OuterOrder outer = OuterOrder::kSeq,
                          bool lift = false) {
    return {.kind = ScheduleKind::kBlocked, .tile = tile, .outer = outer, .lift = lift};
  }
  static Schedule Strided(std::uint64_t lanes) {
    return {.kind = ScheduleKind::kStrided, .lanes = lanes};
  }
  static Schedule Random(std::uint64_t seed) {
    return {.kind = ScheduleKind::kRandom, .seed = seed};
  }
  static Schedule StridedTiles(std::uint64_t lanes, std::uint64_t tile, bool lift) {
    return {.kind = ScheduleKind::kStrided, .tile = tile, .lanes = lanes, .lift = lift};
  }
  static Schedule Omp(std::uint64_t parts, OuterOrder outer = OuterOrder::kSeq,
                      std::string inner = "") {
    return {.kind = ScheduleKind::kOmp, .outer = outer, .parts = parts, .inner = std::move(inner)};
  }
};

// One line of help per schedule kind, in ScheduleKind order: its syntax, what it is, and an
// example that parses (tests/core/test_schedule_docs.cpp checks every kind is here, in order,
// that each example parses to its kind, and that the grammar names each syntax). `carrier
// tree --help` and `carrier eval --help` print this table (registry::ExpandHelp {SCHEDULES}).
struct ScheduleKindDoc {
  ScheduleKind kind;
  const char* syntax;
  const char* what;
  const char* example;
};
inline constexpr ScheduleKindDoc kScheduleKindDocs[] = {
    {ScheduleKind::kSeq, "seq", "left to right, one running state", "seq"},
    {ScheduleKind::kReverse, "reverse", "right to left", "reverse"},
    {ScheduleKind::kPairwise, "pairwise[:LEAF][:lift]",
     "recursive halving; chains of at most LEAF at the leaves", "pairwise:8"},
    {ScheduleKind::kBlocked, "blocked:TILE[:seq|pairwise][:lift]",
     "tiles of TILE reduced in order, tile states merged seq or pairwise", "blocked:64:pairwise"},
    {ScheduleKind::kStrided, "strided:K[:tile:T][:lift]",
     "K interleaved lanes (SIMD), lane states merged pairwise; :tile:T:lift = kernels/simd",
     "strided:8"},
    {ScheduleKind::kRandom, "random:SEED", "a random binary tree drawn from SEED", "random:3"},
    {ScheduleKind::kOmp, "omp:P[:seq|pairwise][:INNER]",
     "P static chunks, each reduced by schedule INNER (default seq), merged seq or pairwise",
     "omp:4:pairwise:strided:8"},
    {ScheduleKind::kCuda,
     "cuda:THREADS[:ITEMS[:blocked|striped[:shfl|xor[:seq|pairwise[:auto|BLOCKS]]]]][:lift]",
     "kernels/cuda's block and grid reduction (core/cuda_schedule.hpp)", "cuda:256:4:striped"},
    {ScheduleKind::kCanonical, "canonical:L[:bisect]",
     "WG21 P4016R0's canonical parallel reduction over L lanes", "canonical:16"},
    {ScheduleKind::kFile, "file:TREE.json",
     "a saved tree (carrier tree --format json, carrier probe)", "file:tree.json"},
    {ScheduleKind::kMma, "mma:PROFILE[:promote:N]",
     "a matrix unit's fused accumulation (the profiles are listed below), promoted every N",
     "mma:hopper:promote:128"},
    {ScheduleKind::kNumpy, "numpy[:BLOCK[:ACC[:CHUNK]]]",
     "numpy's float sum: pairwise blocks of BLOCK, ACC accumulators, CHUNK buffering", "numpy"},
    {ScheduleKind::kTorch, "torch:LANES", "torch.sum's cascade on CPU with LANES lanes", "torch:8"},
};

inline constexpr const char* kScheduleGrammar =
    "seq | reverse | pairwise[:LEAF][:lift] | blocked:TILE[:seq|pairwise][:lift] | "
    "strided:K[:tile:T][:lift] | random:SEED | omp:P[:seq|pairwise][:INNER] | "
    "cuda:THREADS[:ITEMS[:blocked|striped[:shfl|xor[:seq|pairwise[:auto|BLOCKS]]]]][:lift] | "
    "canonical:L[:bisect] | file:TREE.json | numpy[:BLOCK[:ACC[:CHUNK]]] | torch:LANES | "
    "mma:PROFILE[:promote:N]";

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

}  // namespace schedule_detail

inline std::string ToString(const Schedule& s);

// canonical:L[:bisect], numpy[:BLOCK[:ACC]] and file:PATH (orders from outside). Returns false when
// `head` is neither; throws ScheduleError for bad fields.
inline bool ParseOrdersSchedule(std::string_view text, const std::vector<std::string_view>& parts,
                                Schedule& out) {
  using schedule_detail::Fail;
  const std::string_view head = parts[0];
  if (head == "canonical") {
    if (parts.size() < 2) Fail(text, "canonical needs a lane count: canonical:L[:bisect]");
    out = Schedule{};
    out.kind = ScheduleKind::kCanonical;
    out.lanes = schedule_detail::ParseCount(text, parts[1], "L", false);
    if (parts.size() >= 3) {
      if (parts[2] != "bisect")
        Fail(text, "expected 'bisect' (P4016 Appendix O), got '" + std::string(parts[2]) + "'");
      out.bisect = true;
    }
    if (parts.size() > 3) Fail(text, "unexpected field '" + std::string(parts[3]) + "'");
    return true;
  }
  if (head == "numpy") {
    out = Schedule{};
    out.kind = ScheduleKind::kNumpy;
    out.tile =
        parts.size() >= 2 ? schedule_detail::ParseCount(text, parts[1], "BLOCK", false) : 128;
    out.lanes = parts.size() >= 3 ? schedule_detail::ParseCount(text, parts[2], "ACC", false) : 8;
    out.parts =
        parts.size() >= 4 ? schedule_detail::ParseCount(text, parts[3], "CHUNK", true) : 8192;
    if (parts.size() > 4) Fail(text, "unexpected field '" + std::string(parts[4]) + "'");
    // A block of more than BLOCK items is split in two halves of whole ACC groups: with
    // BLOCK >= 2 ACC each half is non-empty (numpy: 128 >= 16); below it the split can be empty
    // and the builder would recurse forever (found by fuzz_schedule: "numpy:8").
    if (out.tile < 2 * out.lanes) Fail(text, "BLOCK must be at least 2 x ACC");
    return true;
  }
  if (head == "torch") {
    if (parts.size() < 2) Fail(text, "torch needs its vector's lane count: torch:LANES");
    if (parts.size() > 2) Fail(text, "unexpected field '" + std::string(parts[2]) + "'");
    out = Schedule{};
    out.kind = ScheduleKind::kTorch;
    out.lanes = schedule_detail::ParseCount(text, parts[1], "LANES", false);
    return true;
  }
  if (head == "file") {
    // The path is the rest of the text (it may contain ':').
    const std::string_view path =
        text.substr(text.find(':') == std::string_view::npos ? text.size() : text.find(':') + 1);
    if (path.empty()) Fail(text, "file needs a path: file:TREE.json");
    if (path.find('"') != std::string_view::npos || path.find('\\') != std::string_view::npos)
      Fail(text, "the path may not contain '\"' or '\\'");
    out = Schedule{};
    out.kind = ScheduleKind::kFile;
    out.path = std::string(path);
    return true;
  }
  return false;
}

// ---- mma:PROFILE[:promote:N] (matrix-unit accumulation; core/mma.hpp) ----
inline Schedule ParseMmaSchedule(std::string_view text,
                                 const std::vector<std::string_view>& parts) {
  using schedule_detail::Fail;
  if (parts.size() < 2 || parts[1].empty())
    Fail(text, "mma needs a profile: mma:PROFILE[:promote:N]; profiles: " + MmaProfileNames());
  const MmaProfile* profile = FindMmaProfile(parts[1]);
  if (!profile)
    Fail(text,
         "unknown mma profile '" + std::string(parts[1]) + "'; profiles: " + MmaProfileNames());
  Schedule s;
  s.kind = ScheduleKind::kMma;
  s.mma = std::string(profile->name);
  if (parts.size() > 2) {
    if (parts[2] != "promote")
      Fail(text, "unexpected field '" + std::string(parts[2]) + "'; expected promote:N");
    if (parts.size() < 4) Fail(text, "promote needs an interval: mma:PROFILE:promote:N");
    s.promote = schedule_detail::ParseCount(text, parts[3], "N", false);
    if (s.promote % profile->k != 0)
      Fail(text, "promote:N must be a multiple of the instruction's k = " +
                     std::to_string(profile->k) + " (" + std::string(profile->instruction) + ")");
    if (parts.size() > 4) Fail(text, "unexpected field '" + std::string(parts[4]) + "'");
  }
  return s;
}

inline Schedule ParseSchedule(std::string_view text) {
  using schedule_detail::Fail;
  using schedule_detail::ParseCount;
  auto parts = schedule_detail::Split(text, ':');
  const std::string_view head = parts[0];
  const std::size_t nparts = parts.size();
  auto expect_at_most = [&](std::size_t n) {
    if (nparts > n) Fail(text, "unexpected field '" + std::string(parts[n]) + "'");
  };
  if (head == "seq") {
    expect_at_most(1);
    return Schedule::Seq();
  }
  if (head == "reverse") {
    expect_at_most(1);
    return Schedule::Reverse();
  }
  if (head == "pairwise") {
    Schedule s = Schedule::Pairwise();
    std::size_t i = 1;
    if (i < nparts && parts[i] != "lift") s.leaf = ParseCount(text, parts[i++], "LEAF", false);
    if (i < nparts && parts[i] == "lift") {
      s.lift = true;
      ++i;
    }
    expect_at_most(i);
    return s;
  }
  if (head == "blocked") {
    if (nparts < 2) Fail(text, "blocked needs a tile size: blocked:TILE[:seq|pairwise][:lift]");
    Schedule s = Schedule::Blocked(ParseCount(text, parts[1], "TILE", false));
    std::size_t i = 2;
    if (i < nparts && (parts[i] == "seq" || parts[i] == "pairwise")) {
      s.outer = parts[i] == "seq" ? OuterOrder::kSeq : OuterOrder::kPairwise;
      ++i;
    } else if (i < nparts && parts[i] != "lift") {
      Fail(text, "outer order must be seq or pairwise, got '" + std::string(parts[i]) + "'");
    }
    if (i < nparts && parts[i] == "lift") {
      s.lift = true;
      ++i;
    }
    expect_at_most(i);
    return s;
  }
  if (head == "strided") {
    if (nparts < 2) Fail(text, "strided needs a lane count: strided:K[:tile:T][:lift]");
    Schedule s = Schedule::Strided(ParseCount(text, parts[1], "K", false));
    std::size_t i = 2;
    if (i < nparts && parts[i] == "tile") {
      if (i + 1 >= nparts) Fail(text, "tile needs a size: strided:K:tile:T");
      s.tile = ParseCount(text, parts[i + 1], "T", false);
      i += 2;
    }
    if (i < nparts && parts[i] == "lift") {
      s.lift = true;
      ++i;
    }
    expect_at_most(i);
    return s;
  }
  if (head == "omp") {
    if (nparts < 2) Fail(text, "omp needs a chunk count: omp:P[:seq|pairwise][:INNER]");
    Schedule s = Schedule::Omp(ParseCount(text, parts[1], "P", false));
    std::size_t i = 2;
    if (i < nparts && (parts[i] == "seq" || parts[i] == "pairwise")) {
      s.outer = parts[i] == "seq" ? OuterOrder::kSeq : OuterOrder::kPairwise;
      ++i;
    }
    if (i < nparts) {
      // The rest of the text is the inner schedule (it contains ':' itself).
      const std::size_t offset = static_cast<std::size_t>(parts[i].data() - text.data());
      const std::string_view rest = text.substr(offset);
      if (rest.substr(0, 4) == "omp:" || rest == "omp")
        Fail(text, "the inner schedule of omp cannot be omp");
      try {
        s.inner = ToString(ParseSchedule(rest));
      } catch (const ScheduleError& e) {
        Fail(text, std::string("inner schedule: ") + e.what());
      }
    }
    return s;
  }
  if (head == "cuda") {
    Schedule s;
    s.kind = ScheduleKind::kCuda;
    const std::vector<std::string_view> fields(parts.begin() + 1, parts.end());
    if (std::string why = ParseCudaFields(fields, s.cuda); !why.empty()) Fail(text, why);
    return s;
  }
  if (head == "mma") return ParseMmaSchedule(text, parts);
  if (head == "random") {
    if (nparts < 2) Fail(text, "random needs a seed: random:SEED");
    expect_at_most(2);
    return Schedule::Random(ParseCount(text, parts[1], "SEED", true));
  }
  if (Schedule s; ParseOrdersSchedule(text, parts, s)) return s;
  Fail(text, "unknown kind '" + std::string(head) + "'; expected " + kScheduleGrammar);
}

inline std::string ToString(const Schedule& s) {
  const std::string lift = s.lift ? ":lift" : "";
  switch (s.kind) {
    case ScheduleKind::kSeq:
      return "seq";
    case ScheduleKind::kReverse:
      return "reverse";
    case ScheduleKind::kPairwise:
      return "pairwise" + (s.leaf == 1 ? std::string() : ":" + std::to_string(s.leaf)) + lift;
    case ScheduleKind::kBlocked:
      return "blocked:" + std::to_string(s.tile) +
             (s.outer == OuterOrder::kPairwise ? ":pairwise" : "") + lift;
    case ScheduleKind::kStrided:
      return "strided:" + std::to_string(s.lanes) +
             (s.tile ? ":tile:" + std::to_string(s.tile) : std::string()) + lift;
    case ScheduleKind::kRandom:
      return "random:" + std::to_string(s.seed);
    case ScheduleKind::kCuda:
      return ToString(s.cuda);
    case ScheduleKind::kOmp:
      return "omp:" + std::to_string(s.parts) +
             (s.outer == OuterOrder::kPairwise ? ":pairwise" : ":seq") +
             (s.inner.empty() ? std::string() : ":" + s.inner);
    case ScheduleKind::kCanonical:
      return "canonical:" + std::to_string(s.lanes) + (s.bisect ? ":bisect" : "");
    case ScheduleKind::kFile:
      return "file:" + s.path;
    case ScheduleKind::kMma:
      return "mma:" + s.mma + (s.promote ? ":promote:" + std::to_string(s.promote) : "");
    case ScheduleKind::kNumpy:
      return s.tile == 128 && s.lanes == 8 && s.parts == 8192
                 ? "numpy"
                 : "numpy:" + std::to_string(s.tile) + ":" + std::to_string(s.lanes) + ":" +
                       std::to_string(s.parts);
    case ScheduleKind::kTorch:
      return "torch:" + std::to_string(s.lanes);
  }
  return "?";
}

}  // namespace carrier
