// precision/parallel_pass.hpp: long element-wise passes split across threads, for the passes
// whose parts combine exactly (an input's counter-based generation, a reference's exact-sum
// scan, the shifted exponential sum's integer accumulator), so that the split never changes a
// bit, only the wall time.
//
// Why: a sweep's workers (carrier sweep --jobs J) share each input and its reference; the first
// trial of a new input makes them while the other workers wait on it, so at n = 2^28 one core
// idles through every generation and reference pass. SetPassThreads(J) lets those passes use
// the waiting cores. The default, 1, runs every pass on the calling thread (eval, the Python
// module, the tests unless they ask).
//
// SplitPass(n, parts, f) calls f(part, lo, hi) over [0, n) cut into `parts` contiguous parts
// in index order (part 0 on the calling thread, the others on their own threads, all joined
// before it returns); callers take parts = PassParts(n), which is 1 below 2 kMinPassPart
// elements (then it is the one call f(0, 0, n) on the calling thread).
// Exceptions thrown by f on any thread are rethrown (the first part's first) after the join.
//
// PipelinePass(n, block, piece, fill, use) is for a pass with per-value work that any thread
// may do (fill) and an in-order reader of it (use): [0, n) in blocks of `block` values, each
// cut into pieces of `piece`. fill(slot, lo, len) prepares values [lo, lo + len) of the block
// that holds them into buffer `slot` (the block's number mod 2), on any thread and in any
// order, at most two blocks at a time; use(slot, lo, len) then reads that block, [lo, lo +
// len), on the calling thread, block after block. PassThreads() - 1 helper threads fill ahead
// and the calling thread fills pieces while it waits for a block, so that use(block k) runs
// beside fill(block k + 1) rather than after it. With one pass thread: fill, then use, a block
// at a time on the calling thread. fill must give the same values on any thread; use sees
// exactly what one thread would have given it. An exception from fill is rethrown on the
// calling thread before the block it belongs to is used; helpers stop when the pass ends,
// however it ends.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace carrier {

inline constexpr std::uint64_t kMinPassPart = std::uint64_t{1} << 20;

inline std::atomic<int>& PassThreadsSetting() {
  static std::atomic<int> threads{1};
  return threads;
}
inline int PassThreads() { return PassThreadsSetting().load(std::memory_order_relaxed); }
// Clamped to [1, 64].
inline void SetPassThreads(int threads) {
  PassThreadsSetting().store(std::clamp(threads, 1, 64), std::memory_order_relaxed);
}
// Sets PassThreads for the scope's life (a sweep: its --jobs), then restores the old value.
class PassThreadsScope {
 public:
  explicit PassThreadsScope(int threads) : old_(PassThreads()) { SetPassThreads(threads); }
  ~PassThreadsScope() { SetPassThreads(old_); }
  PassThreadsScope(const PassThreadsScope&) = delete;
  PassThreadsScope& operator=(const PassThreadsScope&) = delete;

 private:
  int old_;
};

// How many parts SplitPass(n, .) uses: PassThreads(), fewer so that each has kMinPassPart.
inline std::size_t PassParts(std::uint64_t n) {
  const std::uint64_t by_size = std::max<std::uint64_t>(n / kMinPassPart, 1);
  return static_cast<std::size_t>(std::min<std::uint64_t>(by_size, PassThreads()));
}

template <class F>
void SplitPass(std::uint64_t n, std::size_t parts, F&& f) {
  if (parts <= 1) {
    f(std::size_t{0}, std::uint64_t{0}, n);
    return;
  }
  std::vector<std::exception_ptr> errors(parts);
  auto run = [&](std::size_t p) {
    const std::uint64_t lo = n / parts * p, hi = p + 1 == parts ? n : n / parts * (p + 1);
    try {
      f(p, lo, hi);
    } catch (...) {
      errors[p] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(parts - 1);
  for (std::size_t p = 1; p < parts; ++p) threads.emplace_back(run, p);
  run(0);
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

template <class Fill, class Use>
void PipelinePass(std::uint64_t n, std::uint64_t block, std::uint64_t piece, Fill&& fill,
                  Use&& use) {
  if (n == 0) return;
  const std::uint64_t blocks = (n + block - 1) / block;
  const std::uint64_t per = (block + piece - 1) / piece;  // pieces per block
  const std::uint64_t total = blocks * per;
  const auto helpers = static_cast<std::size_t>(
      std::min<std::uint64_t>(static_cast<std::uint64_t>(PassThreads() - 1), total));
  // Piece p: block p / per, values [lo, lo + len) (empty past the last value).
  auto range = [&](std::uint64_t p, std::uint64_t& lo, std::uint64_t& len) {
    const std::uint64_t b0 = p / per * block, b1 = std::min(n, b0 + block);
    lo = std::min(b1, b0 + p % per * piece);
    len = std::min(b1, lo + piece) - lo;
  };
  if (helpers == 0) {
    for (std::uint64_t k = 0; k < blocks; ++k) {
      for (std::uint64_t p = k * per; p < (k + 1) * per; ++p) {
        std::uint64_t lo = 0, len = 0;
        range(p, lo, len);
        if (len > 0) fill(static_cast<int>(k % 2), lo, len);
      }
      use(static_cast<int>(k % 2), k * block, std::min(block, n - k * block));
    }
    return;
  }
  std::atomic<std::uint64_t> next{0};           // the next piece to claim
  std::atomic<std::uint64_t> consumed{0};       // blocks use has read
  std::atomic<std::uint64_t> done[2] = {0, 0};  // pieces filled into each slot's block
  std::mutex error_mutex;
  std::exception_ptr error;
  auto work = [&](std::uint64_t p) {
    std::uint64_t lo = 0, len = 0;
    range(p, lo, len);
    const auto slot = static_cast<int>(p / per % 2);
    try {
      if (len > 0) fill(slot, lo, len);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
    done[slot].fetch_add(1, std::memory_order_release);
    done[slot].notify_all();
  };
  auto helper = [&] {
    for (;;) {
      const std::uint64_t p = next.fetch_add(1, std::memory_order_relaxed);
      if (p >= total) return;
      // The slot of block k held block k - 2 until use read it.
      const std::uint64_t k = p / per;
      for (std::uint64_t c = consumed.load(std::memory_order_acquire); k >= c + 2;
           c = consumed.load(std::memory_order_acquire))
        consumed.wait(c, std::memory_order_acquire);
      work(p);
    }
  };
  std::vector<std::jthread> threads;  // joined last: declared before the stop below
  // However the pass ends: no piece is claimed any more, and no helper waits for a block.
  struct Stop {
    std::atomic<std::uint64_t>& next;
    std::atomic<std::uint64_t>& consumed;
    std::uint64_t total, blocks;
    ~Stop() {
      next.store(total, std::memory_order_relaxed);
      consumed.store(blocks + 2, std::memory_order_release);
      consumed.notify_all();
    }
  };
  threads.reserve(helpers);
  for (std::size_t h = 0; h < helpers; ++h) threads.emplace_back(helper);
  const Stop stop{next, consumed, total, blocks};
  for (std::uint64_t k = 0; k < blocks; ++k) {
    const auto slot = static_cast<int>(k % 2);
    const std::uint64_t limit = std::min(total, (k + 2) * per);  // blocks k and k + 1 only
    for (std::uint64_t d = done[slot].load(std::memory_order_acquire); d < per;
         d = done[slot].load(std::memory_order_acquire)) {
      std::uint64_t p = next.load(std::memory_order_relaxed);
      if (p < limit) {
        if (next.compare_exchange_weak(p, p + 1, std::memory_order_relaxed)) work(p);
        continue;
      }
      done[slot].wait(d, std::memory_order_acquire);
    }
    {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (error) std::rethrow_exception(error);
    }
    use(slot, k * block, std::min(block, n - k * block));
    done[slot].store(0, std::memory_order_relaxed);
    consumed.store(k + 1, std::memory_order_release);
    consumed.notify_all();
  }
}

}  // namespace carrier
