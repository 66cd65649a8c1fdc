// experiments/io/tree_file.hpp: file:PATH schedules, read here so that core reads no files.
//
// core/orders/file.hpp builds a file: order from the tree held in the Schedule
// (Schedule::tree) and refuses, in one line, one whose tree was never loaded. Every place in
// experiments/ that turns schedule text from a user (a flag, a config, a search space, the
// Python module) into something core builds goes through LoadSchedule, or LoadTrees where the
// text was parsed already; a schedule core itself composes (nothing but its own kinds) needs
// neither.
//
// - ReadTreeFile(path, origin): the text (io::ReadTextFile, at most kMaxTreeFileBytes), parsed
//   and validated by core's TreeFromJson with `origin` naming the problem. Throws
//   std::runtime_error "PATH: why" when the file cannot be read as text, ScheduleError "ORIGIN:
//   why" when its text is not a valid tree (both one line).
// - LoadTreeFile(path, n): ReadTreeFile with origin "file:PATH", read errors as ScheduleError
//   "file:PATH: why", a tree whose n is not the given one refused, the tree's schedule named
//   "file:PATH" (a trial that replays it reports where its order came from).
// - LoadTrees(s): s with the tree of every file: order in it (s itself, or the INNER of omp and
//   splitk) read as LoadTreeFile reads it; its n is checked when core builds it (the order's n
//   is known only then: an INNER runs over a chunk). Schedules loaded while another still holds
//   the same path's tree share it (one copy, one read: a sweep resolves every trial before it
//   runs one). Throws ScheduleError (one line).
// - LoadSchedule(text): ParseSchedule(text), then LoadTrees.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/merge_tree.hpp"
#include "core/schedule.hpp"

namespace carrier::io {

// A tree file's size limit (2 GiB: a probe's tree over 10^7 inputs is about 700 MB).
inline constexpr std::uint64_t kMaxTreeFileBytes = std::uint64_t{2} << 30;

MergeTree ReadTreeFile(const std::string& path, const std::string& origin);
MergeTree LoadTreeFile(const std::string& path, std::uint64_t n);
Schedule LoadTrees(Schedule s);
Schedule LoadSchedule(std::string_view text);

}  // namespace carrier::io
