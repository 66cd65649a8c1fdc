// The sweep's guards against other writers and a hostile machine (experiments/io/atomic_file.hpp,
// experiments/sweep/runner.hpp): a second sweep on a folder in use is refused with one line
// (and the lock is gone once the first exits, by signal or crash); --resume with another config
// names both hashes; a disk that fills up (injected ENOSPC/EIO at every kind of write, and a
// real full tmpfs) or a read-only folder gives one line naming the file and reason, exit 2,
// trials.csv valid up to its last whole row, and --resume completes once the cause is gone;
// SIGINT/SIGTERM stop the run after the rows in flight, print the --resume command and exit
// 128 + signal; a precision naming a matrix unit or split dots (XLA's FAST_ACCUM, _X3) for an op
// without matrix products is one line, exit 2, before anything is written.
#include <signal.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "sweep_test_util.hpp"

using namespace sweep_test;

namespace {

// `ENV carrier ARGS` started in the background (stdout, stderr to files); Wait() gives the
// exit code (128 + signal when killed).
struct Background {
  pid_t pid = -1;
  std::string out, err;
  Background(const std::vector<std::string>& args, const std::string& env_name,
             const std::string& env_value) {
    static int counter = 0;
    out = Tmp() + "/bg" + std::to_string(counter) + ".out";
    err = Tmp() + "/bg" + std::to_string(counter++) + ".err";
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      if (!env_name.empty()) setenv(env_name.c_str(), env_value.c_str(), 1);
      if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(120);
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(CARRIER_EXE));
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(CARRIER_EXE, argv.data());
      _exit(121);
    }
  }
  int Wait() {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

// Polls (up to 30 s) until csv holds at least `rows` whole rows.
bool WaitForRows(const std::string& csv, int rows) {
  for (int i = 0; i < 3000; ++i) {
    if (Exists(csv) && WholeRows(csv) >= rows) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A tmpfs mounted for one test case (root only; the case is skipped with the reason when the
// mount is refused), unmounted on scope exit.
struct TmpfsMount {
  std::string dir;
  bool ok = false;
  explicit TmpfsMount(const std::string& size) : dir(Tmp() + "/mnt") {
    std::system(("mkdir -p " + dir).c_str());
    ok = std::system(
             ("mount -t tmpfs -o size=" + size + " tmpfs " + dir + " 2>/dev/null").c_str()) == 0;
  }
  bool Remount(const std::string& opts) {
    return std::system(("mount -o remount," + opts + " " + dir).c_str()) == 0;
  }
  ~TmpfsMount() {
    if (ok) std::system(("umount " + dir).c_str());
  }
};

// The one-line refusal of an I/O fault: exit 2, a single stderr line naming `file` and `reason`.
void CheckIoFailure(const Run& r, const std::string& file, const std::string& reason) {
  std::cout << "    exit " << r.code << ": " << r.err;
  INFO("stderr: " << r.err << "stdout: " << r.out);
  CHECK(r.code == 2);
  CHECK(Lines(r.err) == 1);
  CHECK(r.err.find(file) != std::string::npos);
  CHECK(r.err.find(reason) != std::string::npos);
}

}  // namespace

TEST_CASE("sweep: a second sweep on a folder in use is refused, and the lock dies with its holder",
          "[fast][sweep][guards]") {
  const std::string cfg = Write("small.toml", kSmallConfig);
  const std::string full = Tmp() + "/full", dir = Tmp() + "/busy";
  REQUIRE(Carrier("sweep " + cfg + " --jobs 1 --quiet -o " + full).code == 0);
  // The first sweep pauses after its second row (until a signal), holding the folder's lock.
  Background first({"sweep", cfg, "--jobs", "1", "--quiet", "-o", dir}, "CARRIER_FAULT",
                   "row@2:pause");
  REQUIRE(WaitForRows(dir + "/trials.csv", 2));
  const std::string before = Slurp(dir + "/trials.csv");
  for (const std::string extra : {"", " --resume"}) {
    Run second = Carrier("sweep " + cfg + " --jobs 1 --quiet -o " + dir + extra);
    std::cout << "  second sweep" << extra << ": exit " << second.code << ": " << second.err;
    INFO("stderr: " << second.err);
    CHECK(second.code == 2);
    CHECK(Lines(second.err) == 1);
    CHECK(second.err.find(dir + " is in use by another carrier sweep") != std::string::npos);
  }
  CHECK(Slurp(dir + "/trials.csv") == before);  // nothing interleaved
  // SIGTERM: the row in flight is finished, the manifest updated, the resume command printed.
  kill(first.pid, SIGTERM);
  const int code = first.Wait();
  const std::string err = Slurp(first.err);
  std::cout << "  first sweep after SIGTERM: exit " << code << ": " << err;
  INFO("stderr: " << err);
  CHECK(code == 128 + SIGTERM);
  CHECK(err.find("stopped by SIGTERM") != std::string::npos);
  CHECK(err.find("continue with: carrier sweep " + cfg + " --resume -o " + dir) !=
        std::string::npos);
  std::size_t tail = 1;
  CHECK(WholeRows(dir + "/trials.csv", &tail) >= 2);
  CHECK(tail == 0);
  CHECK(Slurp(dir + "/manifest.json").find("\"end_time\": null") != std::string::npos);
  // The lock went with the process.
  Run resumed = Carrier("sweep " + cfg + " --jobs 1 --resume --quiet -o " + dir);
  INFO("resume stderr: " << resumed.err);
  REQUIRE(resumed.code == 0);
  CHECK(SameRows(full + "/trials.csv", dir + "/trials.csv"));
  // And with a crashed holder (no clean-up at all).
  const std::string crashed = Tmp() + "/crashed";
  REQUIRE(Carrier("sweep " + cfg + " --quiet -o " + crashed, "CARRIER_FAULT=row@1:crash").code ==
          86);
  Run after_crash = Carrier("sweep " + cfg + " --resume --quiet -o " + crashed);
  CHECK(after_crash.code == 0);
  CHECK(SameRows(full + "/trials.csv", crashed + "/trials.csv"));
  Cleanup();
}

TEST_CASE("sweep: SIGINT stops after the rows in flight, prints how to resume, exits 130",
          "[fast][sweep][guards]") {
  const std::string cfg = Write("small.toml", kSmallConfig);
  const std::string full = Tmp() + "/full";
  REQUIRE(Carrier("sweep " + cfg + " --jobs 1 --quiet -o " + full).code == 0);
  for (const char* jobs : {"1", "2"}) {
    const std::string dir = Tmp() + "/int" + jobs;
    // The signal arrives (asynchronously, from the process itself) right after row 3.
    Run r = Carrier("sweep " + cfg + " --jobs " + jobs + " --quiet -o " + dir,
                    "CARRIER_FAULT=row@3:sigint");
    std::size_t tail = 1;
    const int whole = WholeRows(dir + "/trials.csv", &tail);
    std::cout << "  --jobs " << jobs << ", SIGINT after row 3: exit " << r.code << ", " << whole
              << " whole rows: " << r.err;
    INFO("stderr: " << r.err << "stdout: " << r.out);
    CHECK(r.code == 128 + SIGINT);
    CHECK(Lines(r.err) == 1);
    CHECK(r.err.find("stopped by SIGINT") != std::string::npos);
    CHECK(r.err.find("continue with: carrier sweep " + cfg + " --resume -o " + dir) !=
          std::string::npos);
    CHECK(r.out.find("summary:") == std::string::npos);
    CHECK(tail == 0);
    if (std::string(jobs) == "1") CHECK(whole == 3);  // nothing else was in flight
    CHECK(whole >= 3);
    CHECK(whole < kSmallRows);
    Run resumed = Carrier("sweep " + cfg + " --jobs " + jobs + " --resume --quiet -o " + dir);
    INFO("resume stderr: " << resumed.err);
    REQUIRE(resumed.code == 0);
    CHECK(SameRows(full + "/trials.csv", dir + "/trials.csv"));
  }
  Cleanup();
}

TEST_CASE("sweep: a matrix-unit or split precision for an op without matrix products is refused",
          "[fast][sweep][guards]") {
  // XLA's FAST_ACCUM names Hopper's FP8 matrix unit (mma=hopper-fp8) and the _X3 names split
  // dots: an op with no products refuses either before anything is written; dot and matmul run
  // them (FAST_ACCUM as the mma:hopper-fp8 order, X3 as partial dots).
  auto config = [](const std::string& op, const std::string& precision) {
    return "[grid]\nop = [\"" + op + "\"]\nprecision = [\"" + precision +
           "\"]\nn = [64]\ninput = [\"normal\"]\nmn = [\"2x2\"]\n";
  };
  for (const std::string op : {"sum", "max", "lse"}) {
    for (const std::string precision :
         {"ALG_DOT_ANY_F8_ANY_F8_F32_FAST_ACCUM", "ALG_DOT_BF16_BF16_F32_X3"}) {
      const std::string cfg = Write("bad_" + op + ".toml", config(op, precision));
      const std::string dir = Tmp() + "/bad_" + op;
      const Run r = Carrier("sweep " + cfg + " --quiet -o " + dir);
      std::cout << "  op " << op << ", " << precision << ": exit " << r.code << ": " << r.err;
      INFO("stderr: " << r.err);
      CHECK(r.code == 2);
      CHECK(Lines(r.err) == 1);
      CHECK(r.err.find("[grid] precision = '" + precision + "'") != std::string::npos);
      CHECK(r.err.find("not op " + op) != std::string::npos);
      CHECK_FALSE(Exists(dir + "/trials.csv"));
      CHECK_FALSE(Exists(dir));
    }
  }
  for (const std::string op : {"dot", "matmul"}) {
    for (const std::string precision :
         {"ALG_DOT_ANY_F8_ANY_F8_F32_FAST_ACCUM", "ALG_DOT_BF16_BF16_F32_X3"}) {
      const std::string cfg = Write("good_" + op + ".toml", config(op, precision));
      const std::string dir = Tmp() + "/good_" + op;
      const Run r = Carrier("sweep " + cfg + " --quiet -o " + dir);
      INFO("stderr: " << r.err);
      REQUIRE(r.code == 0);
      const std::string csv = Slurp(dir + "/trials.csv");
      INFO(csv);
      CHECK(WholeRows(dir + "/trials.csv") == 1);
      CHECK(csv.find(",ok,") != std::string::npos);
      if (precision.find("FAST_ACCUM") != std::string::npos)
        CHECK(csv.find("mma:hopper-fp8") != std::string::npos);
      std::system(("rm -rf " + dir).c_str());
    }
  }
  Cleanup();
}

TEST_CASE("sweep: --resume with another config is refused naming both hashes",
          "[fast][sweep][guards]") {
  const std::string cfg = Write("small.toml", kSmallConfig);
  const std::string other = Write("other.toml", std::string(kSmallConfig) + "# changed\n");
  const std::string dir = Tmp() + "/a", dir_other = Tmp() + "/b";
  REQUIRE(Carrier("sweep " + cfg + " --quiet -o " + dir).code == 0);
  REQUIRE(Carrier("sweep " + other + " --quiet -o " + dir_other).code == 0);
  const auto hash = [](const std::string& manifest) {
    const auto p = manifest.find("\"config_hash\": \"");
    return p == std::string::npos ? std::string("?") : manifest.substr(p + 16, 16);
  };
  const std::string h = hash(Slurp(dir + "/manifest.json")),
                    h_other = hash(Slurp(dir_other + "/manifest.json"));
  REQUIRE(h != h_other);
  const std::string before = Slurp(dir + "/trials.csv");
  Run r = Carrier("sweep " + other + " --resume --quiet -o " + dir);
  std::cout << "  " << r.err;
  INFO("stderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(Lines(r.err) == 1);
  CHECK(r.err.find("hash " + h + ", this config " + h_other) != std::string::npos);
  CHECK(Slurp(dir + "/trials.csv") == before);
  Cleanup();
}

TEST_CASE(
    "sweep: an injected full disk or I/O error at any write is one line, exit 2, whole rows, "
    "and --resume completes",
    "[fast][sweep][guards]") {
  const std::string cfg = Write("small.toml", kSmallConfig);
  const std::string full = Tmp() + "/full";
  REQUIRE(Carrier("sweep " + cfg + " --jobs 1 --quiet -o " + full).code == 0);
  struct Case {
    std::string fault, file, reason;
    int rows_left;  // whole rows the failure leaves (-1: no trials.csv)
  };
  const Case cases[] = {
      {"config.toml@1:enospc", "/config.toml", "No space left on device", -1},
      {"manifest.json@1:enospc", "/manifest.json", "No space left on device", -1},
      {"trials.csv@1:enospc", "/trials.csv", "No space left on device", -1},
      {"row@1:enospc", "/trials.csv", "No space left on device", 0},
      {"row@4:enospc", "/trials.csv", "No space left on device", 3},
      {"row@6:eio", "/trials.csv", "Input/output error", 5},
      {"manifest.json@2:enospc", "/manifest.json", "No space left on device", kSmallRows},
      {"row@2:erofs", "/trials.csv", "Read-only file system", 1},
  };
  for (const auto& c : cases) {
    const std::string dir = Tmp() + "/" + c.fault;
    std::cout << "  CARRIER_FAULT=" << c.fault << "\n";
    INFO("CARRIER_FAULT=" << c.fault << " carrier sweep " << cfg << " -o " << dir);
    Run r = Carrier("sweep " + cfg + " --jobs 1 --quiet -o " + dir, "CARRIER_FAULT=" + c.fault);
    CheckIoFailure(r, dir + c.file, c.reason);
    if (c.rows_left >= 0) {
      CHECK(r.err.find("continue with: carrier sweep " + cfg + " --resume -o " + dir) !=
            std::string::npos);
      std::size_t tail = 1;
      CHECK(WholeRows(dir + "/trials.csv", &tail) == c.rows_left);
      CHECK(tail == 0);
    } else {
      CHECK(!Exists(dir + "/trials.csv"));
    }
    CHECK(!Exists(dir + c.file + ".tmp"));  // the failed temporary is removed
    Run resumed = Carrier("sweep " + cfg + " --jobs 1 --resume --quiet -o " + dir);
    INFO("resume stderr: " << resumed.err);
    REQUIRE(resumed.code == 0);
    CHECK(SameRows(full + "/trials.csv", dir + "/trials.csv"));
  }
  // merge: a failed write is one line and leaves no trials.csv (the merge can be rerun).
  std::string shards;
  for (int k = 1; k <= 2; ++k) {
    const std::string d = Tmp() + "/shard" + std::to_string(k);
    REQUIRE(Carrier("sweep " + cfg + " --quiet --shard " + std::to_string(k) + "/2 -o " + d).code ==
            0);
    shards += " " + d;
  }
  for (const std::string file : {"config.toml", "manifest.json", "trials.csv"}) {
    const std::string out = Tmp() + "/merge_" + file;
    std::cout << "  merge, CARRIER_FAULT=" << file << "@1:enospc\n";
    Run r = Carrier("merge" + shards + " --quiet -o " + out, "CARRIER_FAULT=" + file + "@1:enospc");
    CheckIoFailure(r, out + "/" + file, "No space left on device");
    CHECK(!Exists(out + "/trials.csv"));
    CHECK(Carrier("merge" + shards + " --quiet -o " + out).code == 0);
    CHECK(SameRows(full + "/trials.csv", out + "/trials.csv"));
  }
  Cleanup();
}

TEST_CASE("sweep: a real full tmpfs and a read-only folder; --resume completes once fixed",
          "[fast][sweep][guards]") {
  // 8 trials per cell: 48 rows, about 15 KB of CSV, into a 12 KB tmpfs.
  const std::string cfg_text = [] {
    std::string t = kSmallConfig;
    t.insert(t.find("[grid]"), "trials = 8\n");
    return t;
  }();
  const std::string cfg = Write("big.toml", cfg_text);
  const std::string full = Tmp() + "/full";
  REQUIRE(Carrier("sweep " + cfg + " --jobs 2 --quiet -o " + full).code == 0);
  {
    TmpfsMount mnt("12k");
    if (!mnt.ok) {
      WARN(
          "skipped: cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN); the injected "
          "ENOSPC case covers the error path");
      return;
    }
    const std::string dir = mnt.dir + "/out";
    Run r = Carrier("sweep " + cfg + " --jobs 2 --quiet -o " + dir);
    std::cout << "  12 KB tmpfs:\n";
    CheckIoFailure(r, mnt.dir + "/out/", "No space left on device");
    std::size_t tail = 1;
    const int whole = Exists(dir + "/trials.csv") ? WholeRows(dir + "/trials.csv", &tail) : 0;
    std::cout << "    trials.csv: " << whole << " whole rows, partial tail "
              << (Exists(dir + "/trials.csv") ? tail : 0) << "\n";
    if (Exists(dir + "/trials.csv")) {
      CHECK(tail == 0);
      Rows(dir + "/trials.csv");  // every row parses with the right field count
    }
    REQUIRE(mnt.Remount("size=4m"));
    Run resumed = Carrier("sweep " + cfg + " --jobs 2 --resume --quiet -o " + dir);
    INFO("resume stderr: " << resumed.err);
    REQUIRE(resumed.code == 0);
    CHECK(SameRows(full + "/trials.csv", dir + "/trials.csv"));
  }
  {
    TmpfsMount mnt("4m");
    REQUIRE(mnt.ok);
    const std::string dir = mnt.dir + "/out";
    REQUIRE(
        Carrier("sweep " + cfg + " --jobs 1 --quiet -o " + dir, "CARRIER_FAULT=row@5:torn").code ==
        86);
    const std::string before = Slurp(dir + "/trials.csv");
    REQUIRE(mnt.Remount("ro"));
    std::cout << "  read-only folder, --resume:\n";
    CheckIoFailure(Carrier("sweep " + cfg + " --jobs 1 --resume --quiet -o " + dir),
                   dir + "/trials.csv", "Read-only file system");
    CHECK(Slurp(dir + "/trials.csv") == before);
    std::cout << "  read-only parent, a new folder:\n";
    CheckIoFailure(Carrier("sweep " + cfg + " --quiet -o " + mnt.dir + "/new"), mnt.dir + "/new",
                   "Read-only file system");
    REQUIRE(mnt.Remount("rw"));
    Run resumed = Carrier("sweep " + cfg + " --jobs 2 --resume --quiet -o " + dir);
    INFO("resume stderr: " << resumed.err);
    REQUIRE(resumed.code == 0);
    CHECK(SameRows(full + "/trials.csv", dir + "/trials.csv"));
  }
  Cleanup();
}
