// experiments/io/tree_file.hpp: file:PATH schedules are read in experiments/, so core reads no
// files. A schedule loaded by LoadSchedule builds the tree LoadTreeFile reads directly (alone
// and as an INNER order), read errors keep their one-line texts, and schedules loaded while
// another holds the same path share one copy of its tree.
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "core/schedule.hpp"
#include "core/tree_hash.hpp"
#include "io/tree_file.hpp"
#include "support/cli_support.hpp"

using namespace carrier;

TEST_CASE("a file: schedule loaded in experiments builds the tree its file holds",
          "[fast][orders][tree_file]") {
  const std::string path = carrier_test::TempPath("tree_file.json");
  const MergeTree saved = BuildTree("pairwise:3", 10);
  std::ofstream(path) << ToJson(saved);

  const Schedule s = io::LoadSchedule("file:" + path);
  REQUIRE(s.As<carrier::orders::FileParams>().tree != nullptr);
  const MergeTree direct = io::LoadTreeFile(path, 10);
  const MergeTree built = BuildTree(s, 10);
  CHECK(built.chains == direct.chains);
  CHECK(built.combines == direct.combines);
  CHECK(built.permutes == direct.permutes);
  CHECK(built.schedule == direct.schedule);
  CHECK(built.schedule == "file:" + path);
  CHECK(built.chains == saved.chains);
  CHECK(built.combines == saved.combines);
  std::cout << "  file:PATH over 10 inputs: " << built.NodeCount() << " nodes, hash "
            << TreeHash(built) << " (direct load " << TreeHash(direct) << ")\n";

  // Shared while held: one read, one copy.
  CHECK(io::LoadSchedule("file:" + path).As<carrier::orders::FileParams>().tree ==
        s.As<carrier::orders::FileParams>().tree);

  // As an INNER order: each of omp:2's chunks over 20 inputs is the saved tree over 10.
  const Schedule omp = io::LoadSchedule("omp:2:file:" + path);
  REQUIRE(omp.Inner().As<carrier::orders::FileParams>().tree != nullptr);
  CHECK(TreeHash(BuildTree(omp, 20)) == TreeHash(BuildTree("omp:2:seq:pairwise:3", 20)));

  // Its n is core's check, with the text LoadTreeFile has always given.
  for (const auto& attempt :
       {+[](const std::string& p) { (void)io::LoadTreeFile(p, 11); },
        +[](const std::string& p) { (void)BuildTree(io::LoadSchedule("file:" + p), 11); }}) {
    try {
      attempt(path);
      FAIL("a tree over 10 inputs built for 11");
    } catch (const ScheduleError& e) {
      CHECK(std::string(e.what()) ==
            "file:" + path + ": the tree is over n = 10 inputs, but the input has 11");
    }
  }
  std::remove(path.c_str());

  // Read errors, at load time, one line each as before the move out of core.
  const std::string missing = carrier_test::TempPath("missing.json");
  for (const std::string& text : {"file:" + missing, "omp:2:pairwise:file:" + missing}) {
    try {
      (void)io::LoadSchedule(text);
      FAIL("loaded " << text);
    } catch (const ScheduleError& e) {
      std::cout << "  " << text << ": " << e.what() << "\n";
      CHECK(std::string(e.what()) == "file:" + missing + ": cannot open for reading");
    }
  }
}
