// Deterministic crash injection (experiments/io/atomic_file.hpp, CARRIER_FAULT=POINT@K:MODE):
// a sweep killed right after its K-th row, or in the middle of writing it (a torn row), for
// every K of a small sweep, and killed during (torn) or right after (crash) every other file
// it writes, must --resume to the uninterrupted rows; a merge killed while writing any of its
// files must leave each file whole or absent, and a rerun must give the uninterrupted output.
// Every case prints what it injected and what the crash left, and on failure the command.
#include <catch2/catch.hpp>

#include "sweep_test_util.hpp"

using namespace sweep_test;

namespace {

constexpr int kFaultExit = 86;  // io::kFaultExitCode

// Each file of a sweep folder is absent or whole: config.toml is the config, the manifest is a
// complete JSON object with the config's hash, trials.csv is the header plus whole rows (plus,
// after a torn row, one partial line, reported through *tail).
void CheckFolderWhole(const std::string& dir, const std::string& config_text,
                      const std::string& header, std::size_t* tail) {
  if (Exists(dir + "/config.toml")) CHECK(Slurp(dir + "/config.toml") == config_text);
  if (Exists(dir + "/manifest.json")) {
    const std::string m = Slurp(dir + "/manifest.json");
    CHECK(m.rfind("{\n", 0) == 0);
    CHECK(m.size() >= 2);
    CHECK(m.substr(m.size() - 2) == "}\n");
    CHECK(m.find("\"config_hash\": \"") != std::string::npos);
  }
  *tail = 0;
  if (Exists(dir + "/trials.csv")) {
    const std::string csv = Slurp(dir + "/trials.csv");
    CHECK(csv.rfind(header, 0) == 0);  // the header is never torn
    WholeRows(dir + "/trials.csv", tail);
  }
}

}  // namespace

TEST_CASE("sweep: a crash after or during any row write resumes to the uninterrupted rows",
          "[fast][sweep][faults]") {
  const std::string cfg = Write("small.toml", kSmallConfig);
  const std::string full = Tmp() + "/full";
  Run r = Carrier("sweep " + cfg + " --jobs 1 --quiet -o " + full);
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE(Rows(full + "/trials.csv").size() == kSmallRows);
  const std::string header =
      Slurp(full + "/trials.csv").substr(0, Slurp(full + "/trials.csv").find('\n') + 1);
  int cases = 0;
  for (const char* jobs : {"1", "2"}) {
    for (int k = 1; k <= kSmallRows; ++k) {
      for (const std::string mode : {"crash", "torn"}) {
        const std::string dir = Tmp() + "/row" + std::to_string(k) + mode + jobs;
        const std::string fault = "CARRIER_FAULT=row@" + std::to_string(k) + ":" + mode;
        const std::string args = "sweep " + cfg + " --jobs " + jobs + " --quiet -o " + dir;
        INFO(fault << " carrier " << args);
        Run crashed = Carrier(args, fault);
        INFO("stderr: " << crashed.err);
        REQUIRE(crashed.code == kFaultExit);
        std::size_t tail = 0;
        const int whole = WholeRows(dir + "/trials.csv", &tail);
        std::cout << "  " << fault << " --jobs " << jobs << ": exit " << crashed.code << ", "
                  << whole << " whole rows + " << tail << " bytes of a partial row\n";
        if (mode == "crash") {
          CHECK(whole == k);
          CHECK(tail == 0);
        } else {
          CHECK(whole == k - 1);
          CHECK(tail > 0);
        }
        Run resumed = Carrier("sweep " + cfg + " --jobs " + jobs + " --resume --quiet -o " + dir);
        INFO("resume stderr: " << resumed.err);
        REQUIRE(resumed.code == 0);
        if (mode == "torn")
          CHECK(resumed.err.find("dropped a partial last row") != std::string::npos);
        CHECK(SameRows(full + "/trials.csv", dir + "/trials.csv"));
        CHECK(Slurp(dir + "/manifest.json").find("\"end_time\": \"20") != std::string::npos);
        ++cases;
      }
    }
  }
  // A fault past the last row never fires: the run completes.
  Run past = Carrier("sweep " + cfg + " --jobs 1 --quiet -o " + Tmp() + "/past",
                     "CARRIER_FAULT=row@" + std::to_string(kSmallRows + 1) + ":crash");
  CHECK(past.code == 0);
  std::cout << "  " << cases << " interrupted runs, each resumed to the " << kSmallRows
            << " uninterrupted rows\n";
  Cleanup();
}

TEST_CASE(
    "sweep: a crash during or after any other file write leaves it whole or absent and "
    "resumes",
    "[fast][sweep][faults]") {
  const std::string cfg = Write("small.toml", kSmallConfig);
  const std::string full = Tmp() + "/full";
  REQUIRE(Carrier("sweep " + cfg + " --jobs 1 --quiet -o " + full).code == 0);
  const std::string csv_text = Slurp(full + "/trials.csv");
  const std::string header = csv_text.substr(0, csv_text.find('\n') + 1);
  // The writes of a fresh run, in order: config.toml, manifest.json (start), trials.csv (the
  // header), rows, manifest.json (end).
  const std::vector<std::string> points = {"config.toml@1", "manifest.json@1", "trials.csv@1",
                                           "manifest.json@2"};
  for (const auto& point : points) {
    for (const std::string mode : {"crash", "torn"}) {
      const std::string dir = Tmp() + "/file_" + point + "_" + mode;
      const std::string fault = "CARRIER_FAULT=" + point + ":" + mode;
      INFO(fault << " carrier sweep " << cfg << " -o " << dir);
      Run crashed = Carrier("sweep " + cfg + " --jobs 1 --quiet -o " + dir, fault);
      INFO("stderr: " << crashed.err);
      REQUIRE(crashed.code == kFaultExit);
      std::size_t tail = 0;
      CheckFolderWhole(dir, kSmallConfig, header, &tail);
      CHECK(tail == 0);
      std::cout << "  " << fault << ": config.toml "
                << (Exists(dir + "/config.toml") ? "whole" : "absent") << ", manifest.json "
                << (Exists(dir + "/manifest.json") ? "whole" : "absent") << ", trials.csv "
                << (Exists(dir + "/trials.csv")
                        ? std::to_string(WholeRows(dir + "/trials.csv")) + " rows"
                        : std::string("absent"))
                << "\n";
      Run resumed = Carrier("sweep " + cfg + " --jobs 1 --resume --quiet -o " + dir);
      INFO("resume stderr: " << resumed.err);
      REQUIRE(resumed.code == 0);
      CHECK(SameRows(full + "/trials.csv", dir + "/trials.csv"));
      CHECK(Slurp(dir + "/config.toml") == kSmallConfig);
      CHECK(Slurp(dir + "/manifest.json").find("\"end_time\": \"20") != std::string::npos);
    }
  }
  // A crash inside a resume (at each of its writes) and a second resume.
  for (const std::string fault : {"config.toml@1:torn", "manifest.json@1:torn", "row@1:torn",
                                  "row@2:crash", "manifest.json@2:torn"}) {
    const std::string dir = Tmp() + "/resume_" + fault;
    REQUIRE(
        Carrier("sweep " + cfg + " --jobs 1 --quiet -o " + dir, "CARRIER_FAULT=row@2:crash").code ==
        kFaultExit);
    INFO("CARRIER_FAULT=" << fault << " carrier sweep " << cfg << " --resume -o " << dir);
    Run crashed =
        Carrier("sweep " + cfg + " --jobs 1 --resume --quiet -o " + dir, "CARRIER_FAULT=" + fault);
    INFO("stderr: " << crashed.err);
    CHECK(crashed.code == kFaultExit);
    std::size_t tail = 0;
    CheckFolderWhole(dir, kSmallConfig, header, &tail);
    Run resumed = Carrier("sweep " + cfg + " --jobs 1 --resume --quiet -o " + dir);
    INFO("second resume stderr: " << resumed.err);
    REQUIRE(resumed.code == 0);
    CHECK(SameRows(full + "/trials.csv", dir + "/trials.csv"));
    std::cout << "  resume interrupted by " << fault << " (partial tail " << tail
              << " bytes), resumed again: same rows\n";
  }
  Cleanup();
}

TEST_CASE("merge: a crash while writing any output file leaves it whole or absent",
          "[fast][sweep][faults]") {
  const std::string cfg = Write("small.toml", kSmallConfig);
  std::string shards;
  for (int k = 1; k <= 2; ++k) {
    const std::string d = Tmp() + "/shard" + std::to_string(k);
    REQUIRE(
        Carrier("sweep " + cfg + " --jobs 1 --quiet --shard " + std::to_string(k) + "/2 -o " + d)
            .code == 0);
    shards += " " + d;
  }
  const std::string ref = Tmp() + "/merged";
  Run r = Carrier("merge" + shards + " --quiet -o " + ref);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::vector<std::string> files = {"config.toml", "manifest.json", "trials.csv"};
  for (const auto& file : files) {
    for (const std::string mode : {"crash", "torn"}) {
      const std::string out = Tmp() + "/merge_" + file + "_" + mode;
      const std::string fault = "CARRIER_FAULT=" + file + "@1:" + mode;
      INFO(fault << " carrier merge" << shards << " -o " << out);
      Run crashed = Carrier("merge" + shards + " --quiet -o " + out, fault);
      INFO("stderr: " << crashed.err);
      REQUIRE(crashed.code == kFaultExit);
      std::string left;
      for (const auto& f : files) {
        const bool there = Exists(out + "/" + f);
        left += " " + f + (there ? " whole" : " absent");
        if (there) CHECK(Slurp(out + "/" + f) == Slurp(ref + "/" + f));  // never truncated
      }
      std::cout << "  " << fault << ":" << left << "\n";
      // trials.csv is written last: once it is there the merge is complete; before, a rerun
      // completes it.
      if (!Exists(out + "/trials.csv")) {
        Run again = Carrier("merge" + shards + " --quiet -o " + out);
        INFO("rerun stderr: " << again.err);
        REQUIRE(again.code == 0);
      }
      for (const auto& f : files) CHECK(Slurp(out + "/" + f) == Slurp(ref + "/" + f));
    }
  }
  Cleanup();
}
