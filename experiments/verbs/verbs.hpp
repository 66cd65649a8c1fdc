// experiments/verbs/verbs.hpp: one function per `carrier` verb. Each receives the arguments
// after the verb, returns the process exit code, and throws cli::UsageError for bad input.
#pragma once

#include <string>
#include <vector>

namespace carrier::cli {

struct Verb {
  const char* name;
  const char* summary;
  const char* help;
  int (*run)(const std::vector<std::string>& args);
};

int RunTree(const std::vector<std::string>& args);
int RunBench(const std::vector<std::string>& args);
int RunDemo(const std::vector<std::string>& args);
int RunEval(const std::vector<std::string>& args);
int RunReferenceBench(const std::vector<std::string>& args);
int RunReplayBench(const std::vector<std::string>& args);
int RunLaws(const std::vector<std::string>& args);
int RunDerive(const std::vector<std::string>& args);
int RunStudy(const std::vector<std::string>& args);
int RunSweep(const std::vector<std::string>& args);
int RunMerge(const std::vector<std::string>& args);
int RunProbe(const std::vector<std::string>& args);  // verbs/probe.cpp
int RunEquiv(const std::vector<std::string>& args);  // verbs/equiv.cpp
extern const char kProbeHelp[];
extern const char kEquivHelp[];
int RunInvariance(const std::vector<std::string>& args);  // verbs/invariance.cpp
int RunQuantize(const std::vector<std::string>& args);    // verbs/quantize.cpp
extern const char kInvarianceHelp[];
// verbs/explain.cpp
int RunExplain(const std::vector<std::string>& args);
extern const char kExplainHelp[];
extern const char kSweepHelp[];
extern const char kMergeHelp[];
// The study verb keeps its help beside its studies (verbs/study.cpp).
extern const char kStudyHelp[];
// `carrier study NAME --help`: the usage line and NAME's section of kStudyHelp (all of it for
// a name that is not a study).
std::string StudyHelp(const std::string& name);

extern const Verb kVerbs[];
extern const std::size_t kVerbCount;

}  // namespace carrier::cli
