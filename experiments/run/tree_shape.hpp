// experiments/run/tree_shape.hpp: what a trial reports about its merge tree (canonical text,
// TreeStats, TreeHash, permutes) without materialising the tree.
//
// Contract
//   ShapeOfSchedule(s, n) returns, for every schedule s and length n that BuildTree accepts,
//   exactly what BuildTree(s, n) gives: schedule = tree.schedule, stats = ComputeStats(tree)
//   (every field, the doubles bit for bit), hash = TreeHash(tree) (the exact form), permutes =
//   tree.permutes; and it throws the same ScheduleError where BuildTree throws one.
//   tests/experiments/test_engine_equivalence.cpp compares the two over the replay test
//   matrix's schedules and lengths.
//   How: seq, reverse, pairwise, blocked, strided and random (and omp over those) are walked
//   by recursion over the schedule's structure, visiting the tree's chains and combines in the
//   shape BuildTree gives them and folding each node's (hash, leaf count, max and summed leaf
//   depth, combine depth) Merkle-style from its children — the same expressions in
//   ComputeStats and TreeHash64, so evaluation order cannot change a bit. Memory: O(depth)
//   records (O(K) for strided:K, O(P) for omp:P), not O(n). Other kinds (cuda, canonical,
//   file, mma, numpy), strided with more lanes than inputs and omp with more chunks than
//   inputs go through BuildTree (their trees are small or have no structure to walk).
//   Cost: a few hashes per input (about 10 ns per input on the 2-core machine; pairwise:1 is
//   walked a level at a time in regions of the fast replay's plan, so that independent nodes'
//   hashes overlap); results are cached per (schedule text, n) for the process, since a sweep
//   asks again for every op, dtype and input of a cell.
// Threads: reentrant; the cache is guarded by a mutex (two threads asking for the same new key
// may both compute it; both results are equal).
#pragma once

#include <cstdint>
#include <string>

#include "core/merge_tree.hpp"
#include "core/schedule.hpp"

namespace carrier::run {

struct TreeShape {
  std::string schedule;  // the canonical text (MergeTree::schedule)
  TreeStats stats;
  std::string hash;  // TreeHash(tree), TreeForm::kExact
  bool permutes = false;
};

// The shape of BuildTree(s, n) by the walk (see the contract), cached; false (out untouched)
// where the contract says BuildTree (the caller builds the tree and uses ShapeOfTree).
bool ShapeOfSchedule(const Schedule& s, std::uint64_t n, TreeShape& out);

// Whether ShapeOfSchedule(s, n) walks (true) or leaves the tree to the caller, without walking.
bool WalkableKind(const Schedule& s, std::uint64_t n);

// The walk alone, uncached (for the tests): as ShapeOfSchedule.
bool WalkShape(const Schedule& s, std::uint64_t n, TreeShape& out);

// The same fields from an explicit tree.
TreeShape ShapeOfTree(const MergeTree& t);

}  // namespace carrier::run
