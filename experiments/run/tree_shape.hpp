// experiments/run/tree_shape.hpp: a trial's tree shape (core/orders/shape.hpp), cached.
//
// ShapeOfSchedule(s, n, out) is WalkShape(s, n, out) remembered per (schedule text, n) for the
// process, since a sweep asks again for every op, dtype and input of a cell; false (out
// untouched) where the order is not walked (the caller builds the tree and uses ShapeOfTree).
// Threads: reentrant; the cache is guarded by a mutex (two threads asking for the same new key
// may both compute it; both results are equal).
#pragma once

#include <cstdint>

#include "core/orders/shape.hpp"
#include "core/schedule.hpp"

namespace carrier::run {

bool ShapeOfSchedule(const Schedule& s, std::uint64_t n, TreeShape& out);

}  // namespace carrier::run
