// core/cuda_schedule.hpp: the merge order of kernels/cuda's block/grid reductions as a
// schedule, `cuda:THREADS[:ITEMS[:ARRANGE[:WARP[:BLOCK[:GRID]]]]][:lift]`.
//
//   THREADS  threads per block: a multiple of 32 in [32, 1024] (what a GPU can launch)
//   ITEMS    items per thread, 1..64 (default 1). With GRID auto it fixes the tile: each block
//            covers THREADS * ITEMS inputs. With a fixed GRID it does not change the tree (the
//            kernels' load loop is unrolled to a fixed depth whatever ITEMS is).
//   ARRANGE  blocked (default): global thread g = block * THREADS + t pushes a contiguous run
//                   [g L, g L + L) with L = ITEMS (GRID auto) or ceil(n / (GRID THREADS));
//            striped: thread g pushes g, g + P, g + 2P, ... with P = GRID * THREADS (the
//                   grid-stride loop; coalesced, but it interleaves the inputs of threads).
//   WARP     shfl (default): CUB's WarpReduceShfl order, shuffle-down with offsets 1, 2, 4,
//                   8, 16: lane i combines (lane i, lane i + o) when i % 2o == 0, so the 32
//                   lane states are merged pairwise, neighbours first, operands in lane order;
//            xor: FlashAttention's butterfly, masks 16, 8, 4, 2, 1, every lane combining
//                   (own, lane ^ mask); the result is lane 0's, whose tree pairs lanes i and
//                   i + 16 first (interleaved). Allowed only for bitwise commutative carriers
//                   (refused at compile time by the kernel, at replay by `permutes`).
//   BLOCK    seq (default): the THREADS/32 warp aggregates folded left to right by thread 0;
//            pairwise: recursive halving over them, the left half taking the extra one.
//   GRID     auto (default): ceil(n / (THREADS ITEMS)) blocks, one tile each; or a fixed
//            number of blocks B (1 .. 2^31 - 1), each thread looping over its chain. With more
//            than one block a second launch (one block of THREADS threads, no atomics) merges
//            the block partials: thread t folds partials [t L2, t L2 + L2), L2 = ceil(B /
//            THREADS), left to right by Combine (an idle thread holds Identity), then the same
//            warp and block trees.
//   lift     each thread's chain is lifted whole by the carrier's LiftTile (held in registers;
//            needs GRID auto) instead of pushed element by element.
//
// Every thread, lane and warp takes part in every combine of its tree, idle ones holding
// Identity (merging with Identity is not bitwise neutral for every carrier, so the tree keeps
// those combines). core/cuda_tree.hpp builds the resulting MergeTree; its ReplayOracle equals the
// kernel's bits (tests/cuda). The text form is canonical with every field spelled out:
// ToString gives `cuda:256:4:blocked:shfl:seq:auto` for `cuda:256:4`.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace carrier {

enum class CudaArrangement : std::uint8_t { kBlocked, kStriped };
enum class CudaWarpTree : std::uint8_t { kShuffleDown, kXorButterfly };
enum class CudaBlockTree : std::uint8_t { kInOrder, kPairwise };

inline constexpr std::uint64_t kCudaMaxThreads = 1024;
inline constexpr std::uint64_t kCudaMaxItems = 64;
inline constexpr std::uint64_t kCudaMaxBlocks = 2147483647;  // gridDim.x
// Static shared memory a block may use without an opt-in, on every GPU carrier targets.
inline constexpr std::uint64_t kCudaSharedBytesLimit = 48 * 1024;

struct CudaSchedule {
  std::uint64_t threads = 256;
  std::uint64_t items = 1;
  CudaArrangement arrangement = CudaArrangement::kBlocked;
  CudaWarpTree warp = CudaWarpTree::kShuffleDown;
  CudaBlockTree block = CudaBlockTree::kInOrder;
  std::uint64_t blocks = 0;  // 0 = auto
  bool lift = false;
  friend bool operator==(const CudaSchedule&, const CudaSchedule&) = default;

  // Blocks launched for n inputs (0 for n == 0: nothing is launched, the result is Identity).
  std::uint64_t GridBlocks(std::uint64_t n) const {
    if (n == 0) return 0;
    if (blocks != 0) return blocks;
    return (n + threads * items - 1) / (threads * items);
  }
  // Shared memory of the block reduction for a carrier state of state_bytes: one slot per warp.
  std::uint64_t SharedBytes(std::uint64_t state_bytes) const { return threads / 32 * state_bytes; }
};

inline constexpr const char* kCudaScheduleGrammar =
    "cuda:THREADS[:ITEMS[:blocked|striped[:shfl|xor[:seq|pairwise[:auto|BLOCKS]]]]][:lift]";

inline std::string ToString(const CudaSchedule& s) {
  std::string out = "cuda:" + std::to_string(s.threads) + ":" + std::to_string(s.items);
  out += s.arrangement == CudaArrangement::kBlocked ? ":blocked" : ":striped";
  out += s.warp == CudaWarpTree::kShuffleDown ? ":shfl" : ":xor";
  out += s.block == CudaBlockTree::kInOrder ? ":seq" : ":pairwise";
  out += s.blocks == 0 ? std::string(":auto") : ":" + std::to_string(s.blocks);
  if (s.lift) out += ":lift";
  return out;
}

// Why no GPU could run s ("" when it is fine).
inline std::string CudaScheduleProblem(const CudaSchedule& s) {
  if (s.threads < 32 || s.threads > kCudaMaxThreads || s.threads % 32 != 0)
    return "THREADS must be a multiple of 32 (a whole number of warps) between 32 and " +
           std::to_string(kCudaMaxThreads) + ", got " + std::to_string(s.threads);
  if (s.items < 1 || s.items > kCudaMaxItems)
    return "ITEMS must be between 1 and " + std::to_string(kCudaMaxItems) + ", got " +
           std::to_string(s.items);
  if (s.blocks > kCudaMaxBlocks)
    return "BLOCKS must be at most " + std::to_string(kCudaMaxBlocks) + " (gridDim.x), got " +
           std::to_string(s.blocks);
  if (s.lift && s.blocks != 0)
    return "lift needs GRID auto (a thread lifts its whole chain from registers: at most "
           "ITEMS inputs)";
  return "";
}

// Why a carrier with states of state_bytes cannot run s ("" when it can).
inline std::string CudaSharedMemoryProblem(const CudaSchedule& s, std::uint64_t state_bytes) {
  const std::uint64_t bytes = s.SharedBytes(state_bytes);
  if (bytes > kCudaSharedBytesLimit)
    return "schedule '" + ToString(s) + "' needs " + std::to_string(bytes) +
           " bytes of shared memory for its warp aggregates, more than the " +
           std::to_string(kCudaSharedBytesLimit) + " a block may use";
  return "";
}

// Parses the fields after "cuda:" (already split on ':'). Returns "" and fills `out`, or the
// reason the text is not a cuda schedule any GPU could run.
inline std::string ParseCudaFields(const std::vector<std::string_view>& fields, CudaSchedule& out) {
  out = CudaSchedule{};
  std::size_t i = 0, n = fields.size();
  if (n > 0 && fields[n - 1] == "lift") {
    out.lift = true;
    --n;
  }
  auto count = [](std::string_view f, std::uint64_t& v) {
    auto [ptr, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
    return !f.empty() && ec == std::errc() && ptr == f.data() + f.size();
  };
  if (i >= n) return std::string("cuda needs a thread count: ") + kCudaScheduleGrammar;
  if (!count(fields[i], out.threads))
    return "THREADS must be a positive integer, got '" + std::string(fields[i]) + "'";
  ++i;
  if (i < n) {
    if (!count(fields[i], out.items))
      return "ITEMS must be a positive integer, got '" + std::string(fields[i]) + "'";
    ++i;
  }
  if (i < n) {
    if (fields[i] == "blocked" || fields[i] == "striped") {
      out.arrangement =
          fields[i] == "blocked" ? CudaArrangement::kBlocked : CudaArrangement::kStriped;
    } else {
      return "arrangement must be blocked or striped, got '" + std::string(fields[i]) + "'";
    }
    ++i;
  }
  if (i < n) {
    if (fields[i] == "shfl" || fields[i] == "xor") {
      out.warp = fields[i] == "shfl" ? CudaWarpTree::kShuffleDown : CudaWarpTree::kXorButterfly;
    } else {
      return "warp tree must be shfl or xor, got '" + std::string(fields[i]) + "'";
    }
    ++i;
  }
  if (i < n) {
    if (fields[i] == "seq" || fields[i] == "pairwise") {
      out.block = fields[i] == "seq" ? CudaBlockTree::kInOrder : CudaBlockTree::kPairwise;
    } else {
      return "block tree must be seq or pairwise, got '" + std::string(fields[i]) + "'";
    }
    ++i;
  }
  if (i < n) {
    if (fields[i] == "auto") {
      out.blocks = 0;
    } else if (!count(fields[i], out.blocks) || out.blocks == 0) {
      return "GRID must be auto or a positive block count, got '" + std::string(fields[i]) + "'";
    }
    ++i;
  }
  if (i < n)
    return "unexpected field '" + std::string(fields[i]) + "'; expected " + kCudaScheduleGrammar;
  return CudaScheduleProblem(out);
}

}  // namespace carrier
