// experiments/run/tree_shape.hpp: a trial's tree shape (core/orders/shape.hpp), cached.
//
// ShapeOfSchedule(s, n, out) is WalkShape(s, n, out) remembered per (schedule text, n) for the
// process (PrefetchShape starts one ahead), since a sweep asks again for every op, dtype and input
// of a cell; false (out untouched) where the order is not walked (the caller builds the tree and
// uses ShapeOfTree).
// Threads: reentrant; the cache is guarded by a mutex (two threads asking for the same new key
// may both compute it; both results are equal).
#pragma once

#include <cstdint>
#include <future>
#include <optional>

#include "core/orders/shape.hpp"
#include "core/schedule.hpp"

namespace carrier::run {

bool ShapeOfSchedule(const Schedule& s, std::uint64_t n, TreeShape& out);

// Starts WalkShape(s, n) on a thread of its own and returns at once, where s is walked over n
// and the key is neither cached nor under way; ShapeOfSchedule(s, n) then waits for that walk
// (its shape, or its ScheduleError rethrown there) instead of walking again. eval calls it
// before it draws the input, so that the walk (0.6-8 ns per input) runs beside the input's
// generation, its reference and its replay instead of after them. The handle's destructor
// waits for the walk, so that no walk outlives its caller (keep the handle until the trial is
// done).
class ShapePrefetch {
 public:
  ShapePrefetch() = default;
  ShapePrefetch(ShapePrefetch&&) = default;
  ShapePrefetch& operator=(ShapePrefetch&&) = delete;
  ~ShapePrefetch();

 private:
  friend ShapePrefetch PrefetchShape(const Schedule& s, std::uint64_t n);
  std::shared_future<std::optional<TreeShape>> walk_;
};
[[nodiscard]] ShapePrefetch PrefetchShape(const Schedule& s, std::uint64_t n);

}  // namespace carrier::run
