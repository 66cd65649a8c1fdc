// The verbs a CARRIER_MAIN_JOB_ONLY build leaves out (cmake/CarrierOptions.cmake): README
// command (a) compiles only what the default study runs. Each refuses with one line (exit 2)
// naming the configuration that builds it; nothing here computes anything.
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "verbs/verbs.hpp"

namespace carrier::cli {

namespace {

[[noreturn]] void NotBuilt(const std::string& verb) {
  throw UsageError("carrier " + verb +
                   ": not in this build (configured with "
                   "CARRIER_MAIN_JOB_ONLY=ON by scripts/run-main.sh, which builds only the main "
                   "job's verbs); bash scripts/run-tests.sh, or cmake -DCARRIER_MAIN_JOB_ONLY=OFF, "
                   "builds every verb");
}

}  // namespace

const char kStudyHelp[] =
    "usage: carrier study NAME ...\n"
    "  not in this build: configure with -DCARRIER_MAIN_JOB_ONLY=OFF (README command (b)).\n";
const char kProbeHelp[] =
    "usage: carrier probe TARGET ...\n"
    "  not in this build: configure with -DCARRIER_MAIN_JOB_ONLY=OFF (README command (b)).\n";
const char kEquivHelp[] =
    "usage: carrier equiv ...\n"
    "  not in this build: configure with -DCARRIER_MAIN_JOB_ONLY=OFF (README command (b)).\n";
const char kExplainHelp[] =
    "usage: carrier explain ...\n"
    "  not in this build: configure with -DCARRIER_MAIN_JOB_ONLY=OFF (README command (b)).\n";
const char kInvarianceHelp[] =
    "usage: carrier invariance ...\n"
    "  not in this build: configure with -DCARRIER_MAIN_JOB_ONLY=OFF (README command (b)).\n";

int RunLaws(const std::vector<std::string>&) { NotBuilt("laws"); }
int RunDerive(const std::vector<std::string>&) { NotBuilt("derive"); }
int RunStudy(const std::vector<std::string>&) { NotBuilt("study"); }
int RunBench(const std::vector<std::string>&) { NotBuilt("bench"); }
int RunDemo(const std::vector<std::string>&) { NotBuilt("demo"); }
int RunReferenceBench(const std::vector<std::string>&) { NotBuilt("reference-bench"); }
int RunReplayBench(const std::vector<std::string>&) { NotBuilt("replay-bench"); }
int RunProbe(const std::vector<std::string>&) { NotBuilt("probe"); }
int RunEquiv(const std::vector<std::string>&) { NotBuilt("equiv"); }
int RunInvariance(const std::vector<std::string>&) { NotBuilt("invariance"); }
int RunExplain(const std::vector<std::string>&) { NotBuilt("explain"); }

}  // namespace carrier::cli
