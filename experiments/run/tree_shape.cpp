// experiments/run/tree_shape.cpp: ShapeOfSchedule (tree_shape.hpp), the walk's cache.
#include "run/tree_shape.hpp"

#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace carrier::run {

namespace {

std::mutex g_cache_mutex;
std::map<std::pair<std::string, std::uint64_t>, TreeShape>& Cache() {
  static std::map<std::pair<std::string, std::uint64_t>, TreeShape> cache;
  return cache;
}

}  // namespace

bool ShapeOfSchedule(const Schedule& s, std::uint64_t n, TreeShape& out) {
  std::pair<std::string, std::uint64_t> key{ToString(s), n};
  {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    const auto it = Cache().find(key);
    if (it != Cache().end()) {
      out = it->second;
      return true;
    }
  }
  TreeShape walked;
  if (!WalkShape(s, n, walked)) return false;
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  Cache().emplace(std::move(key), walked);
  out = std::move(walked);
  return true;
}

}  // namespace carrier::run
