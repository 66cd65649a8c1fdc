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
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
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

}  // namespace carrier
