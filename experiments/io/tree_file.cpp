// experiments/io/tree_file.cpp: file:PATH trees read from disk (contract in tree_file.hpp).
#include "io/tree_file.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "core/tree_io.hpp"
#include "io/text_file.hpp"

namespace carrier::io {

namespace {

// The tree of file:PATH, validated but not yet checked against an n.
MergeTree ReadFileOrder(const std::string& path) {
  const std::string name = "file:" + path;
  std::string text;
  try {
    text = ReadTextFile(path, kMaxTreeFileBytes);
  } catch (const std::runtime_error& e) {
    throw ScheduleError("file:" + std::string(e.what()));
  }
  MergeTree t = TreeFromJson(text, name);
  t.schedule = name;
  return t;
}

// The tree of file:PATH shared by every schedule that holds it: a sweep resolves all its trials
// before running one, and they then share one copy (a probe's tree over 10^7 inputs is about
// 700 MB) read once. A path no schedule holds any more is read afresh.
std::shared_ptr<const MergeTree> SharedFileOrder(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<const MergeTree>> held;
  const std::lock_guard<std::mutex> lock(mutex);
  if (std::shared_ptr<const MergeTree> t = held[path].lock()) return t;
  auto t = std::make_shared<const MergeTree>(ReadFileOrder(path));
  held[path] = t;
  return t;
}

}  // namespace

MergeTree ReadTreeFile(const std::string& path, const std::string& origin) {
  return TreeFromJson(ReadTextFile(path, kMaxTreeFileBytes), origin);
}

MergeTree LoadTreeFile(const std::string& path, std::uint64_t n) {
  // Not parsed: any path the caller wrote may be read back.
  const Schedule s =
      orders::FileParams{path, std::make_shared<const MergeTree>(ReadFileOrder(path))};
  return BuildTree(s, n);  // core's check of n (core/orders/file.hpp)
}

Schedule LoadTrees(Schedule s) {  // NOLINT(misc-no-recursion): INNER nests once
  if (orders::FileParams* f = s.If<orders::FileParams>(); f && !f->tree)
    f->tree = SharedFileOrder(f->path);
  if (NestedSchedule* inner = s.Nested(); inner && inner->IsSet())
    *inner = NestedSchedule(LoadTrees(inner->Get()));
  return s;
}

Schedule LoadSchedule(std::string_view text) { return LoadTrees(ParseSchedule(text)); }

}  // namespace carrier::io
