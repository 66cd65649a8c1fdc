// core/orders/file.hpp: file:PATH, the tree saved in PATH (core/tree_io.hpp: the JSON that
// `carrier tree --format json` and `carrier probe` write), validated and replayed as it is;
// its n must be the input's. Core reads no files: the caller loads the tree into the Schedule
// (FileParams::tree; experiments/io/tree_file.hpp LoadTrees reads, limits and parses the file)
// before anything is built, and Build refuses a schedule whose tree was never loaded.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/merge_tree.hpp"
#include "core/orders/order.hpp"

namespace carrier::orders {

struct FileParams {
  std::string path{};  // the JSON tree's path, as given
  // The tree saved in path, read and validated by experiments/ (experiments/io/tree_file.hpp
  // LoadTrees) before core builds it; unset (as ParseSchedule leaves it) is refused in one
  // line, since core reads no files. Compared by identity: a loaded schedule equals its
  // copies, not a fresh parse of its text.
  std::shared_ptr<const MergeTree> tree{};
  friend bool operator==(const FileParams&, const FileParams&) = default;
};

struct File {
  using Params = FileParams;
  static constexpr ScheduleKind kKind = ScheduleKind::kFile;
  static constexpr std::string_view kHead = "file";
  static constexpr ScheduleKindDoc kDoc = {
      kKind, "file:TREE.json", "a saved tree (carrier tree --format json, carrier probe)",
      "file:tree.json"};
  static Params Parse(std::string_view text, const std::vector<std::string_view>&) {
    using schedule_detail::Fail;
    // The path is the rest of the text (it may contain ':').
    const std::string_view path =
        text.substr(text.find(':') == std::string_view::npos ? text.size() : text.find(':') + 1);
    if (path.empty()) Fail(text, "file needs a path: file:TREE.json");
    if (path.find('"') != std::string_view::npos || path.find('\\') != std::string_view::npos)
      Fail(text, "the path may not contain '\"' or '\\'");
    Params s;
    s.path = std::string(path);
    return s;
  }
  static std::string Print(const Params& s) { return "file:" + s.path; }
  // The loaded tree, whose n must be the input's, named "file:PATH" so that a trial replaying
  // it reports where its order came from.
  static MergeTree Build(const Params& s, std::uint64_t n) {
    const std::string name = "file:" + s.path;
    if (!s.tree)
      throw ScheduleError(name +
                          ": the tree was not loaded (core reads no files; "
                          "experiments/io/tree_file.hpp LoadTrees reads it first)");
    if (s.tree->n != n)
      throw ScheduleError(name + ": the tree is over n = " + std::to_string(s.tree->n) +
                          " inputs, but the input has " + std::to_string(n));
    MergeTree t = *s.tree;
    t.schedule = name;
    return t;
  }
};

}  // namespace carrier::orders
