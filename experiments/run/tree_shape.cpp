// experiments/run/tree_shape.cpp: ShapeOfSchedule and PrefetchShape (tree_shape.hpp), the walk's
// cache.
#include "run/tree_shape.hpp"

#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace carrier::run {

namespace {

using Key = std::pair<std::string, std::uint64_t>;

// A walk that has finished (its shape) or is under way on another thread (its future: the
// shape, nullopt where the order is not walked, or the walk's exception).
struct Slot {
  std::optional<TreeShape> done;
  std::shared_future<std::optional<TreeShape>> running;
};

std::mutex g_cache_mutex;
std::map<Key, Slot>& Cache() {
  static std::map<Key, Slot> cache;
  return cache;
}

std::optional<TreeShape> Walk(const Schedule& s, std::uint64_t n) {
  TreeShape walked;
  if (!WalkShape(s, n, walked)) return std::nullopt;
  return walked;
}

}  // namespace

bool ShapeOfSchedule(const Schedule& s, std::uint64_t n, TreeShape& out) {
  Key key{ToString(s), n};
  std::shared_future<std::optional<TreeShape>> running;
  {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    const auto it = Cache().find(key);
    if (it != Cache().end()) {
      if (it->second.done) {
        out = *it->second.done;
        return true;
      }
      running = it->second.running;
    }
  }
  // A prefetched walk: its result (get() rethrows the walk's ScheduleError here, where the
  // inline walk would have thrown it).
  const std::optional<TreeShape> walked = running.valid() ? running.get() : Walk(s, n);
  if (!walked) return false;
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  Slot& slot = Cache()[std::move(key)];
  if (!slot.done) slot.done = *walked;
  out = *walked;
  return true;
}

ShapePrefetch PrefetchShape(const Schedule& s, std::uint64_t n) {
  ShapePrefetch handle;
  if (!IsShapeWalked(s, n)) return handle;
  Key key{ToString(s), n};
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  Slot& slot = Cache()[std::move(key)];
  if (slot.done || slot.running.valid()) return handle;
  slot.running = std::async(std::launch::async, Walk, s, n).share();
  handle.walk_ = slot.running;
  return handle;
}

ShapePrefetch::~ShapePrefetch() {
  if (walk_.valid()) walk_.wait();
}

}  // namespace carrier::run
