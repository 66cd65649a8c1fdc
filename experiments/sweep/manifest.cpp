#include "sweep/manifest.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <optional>
#include <string>

#include "inputs/generators.hpp"
#include "io/json.hpp"
#include "sweep/csv.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include <cstdint>
// <cstdint> first: mpfr.h declares its intmax_t functions only after it.
#include <mpfr.h>

#if __has_include(<boost/version.hpp>)  // not installed for README command (a)'s build
#include <boost/version.hpp>
#define CARRIER_MANIFEST_BOOST 1
#endif
#endif
#if defined(CARRIER_MANIFEST_HWY) && CARRIER_MANIFEST_HWY
#include <hwy/highway.h>
#include <hwy/targets.h>
#endif

#ifndef CARRIER_VERSION
#define CARRIER_VERSION "unknown"
#endif
#ifndef CARRIER_SOURCE_DIR
#define CARRIER_SOURCE_DIR "."
#endif
#ifndef CARRIER_CXX_FLAGS
#define CARRIER_CXX_FLAGS ""
#endif
#ifndef CARRIER_BUILD_TYPE
#define CARRIER_BUILD_TYPE ""
#endif

namespace carrier::sweep {

namespace {

// First line of a shell command's output ("" when it fails or prints nothing).
std::string Shell(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r");
  if (!p) return "";
  char buf[512];
  std::string out;
  if (fgets(buf, sizeof buf, p)) out = buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string CpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const auto c = line.find(':');
      return c == std::string::npos ? line : line.substr(c + 2);
    }
  return "";
}

std::string Null(const std::string& s) { return s.empty() ? "null" : io::JsonQuote(s); }

struct Machine {
  std::string git_commit, git_dirty, cpu, simd, gpu;
};

const Machine& GetMachine() {
  static const Machine m = [] {
    Machine x;
    const std::string git = "git -C '" + std::string(CARRIER_SOURCE_DIR) + "' ";
    x.git_commit = Shell(git + "rev-parse HEAD");
    if (!x.git_commit.empty())
      x.git_dirty = Shell(git + "status --porcelain --untracked-files=no | head -n1").empty()
                        ? "false"
                        : "true";
    x.cpu = CpuModel();
#if defined(CARRIER_MANIFEST_HWY) && CARRIER_MANIFEST_HWY
    const std::int64_t targets = hwy::SupportedTargets();
    x.simd = targets ? hwy::TargetName(targets & -targets) : "";
#endif
    x.gpu = Shell(
        "command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name "
        "--format=csv,noheader | head -n1");
    return x;
  }();
  return m;
}

}  // namespace

std::optional<std::string> ManifestField(const std::string& json, const std::string& key) {
  return io::JsonMemberText(json, key);
}

std::string ManifestGenerator(const std::string& json) {
  const auto g = ManifestField(json, "generator");
  return !g || *g == "null" ? std::string() : io::JsonUnquote(*g);
}

std::string GeneratorName(const std::string& generator) {
  return generator.empty() ? std::string("none recorded") : generator;
}

std::string UtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string ManifestJson(const ManifestRun& r) {
  const Machine& m = GetMachine();
  std::string mpfr, boost, hwy;
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  mpfr = mpfr_get_version();
#endif
#if defined(CARRIER_MANIFEST_BOOST)
  boost = BOOST_LIB_VERSION;
#endif
#if defined(CARRIER_MANIFEST_HWY) && CARRIER_MANIFEST_HWY
  hwy =
      std::to_string(HWY_MAJOR) + "." + std::to_string(HWY_MINOR) + "." + std::to_string(HWY_PATCH);
#endif
  io::JsonObject j;
  j.String("carrier_version", CARRIER_VERSION);
  j.Raw("git_commit", Null(m.git_commit));
  j.Raw("git_dirty", m.git_dirty.empty() ? "null" : m.git_dirty);
  j.String("compiler", std::string("g++ ") + __VERSION__);
  j.String("cxx_flags", std::string(CARRIER_CXX_FLAGS) + " (" + CARRIER_BUILD_TYPE + ")");
  j.Raw("cpu_model", Null(m.cpu));
  j.Raw("simd_target", Null(m.simd));
  j.Raw("gpu", Null(m.gpu));
  j.Raw("mpfr_version", Null(mpfr));
  j.Raw("highway_version", Null(hwy));
  j.Raw("boost_version", Null(boost));
  // The input streams' version: the same config under another generator draws other inputs.
  if (!r.generator) {
    j.String("generator", inputs::kGeneratorVersion);
  } else if (r.generator->empty()) {
    j.Raw("generator", "null");
  } else {
    j.String("generator", *r.generator);
  }
  j.String("config_path", r.config_path);
  j.String("config_hash", r.config_hash);
  j.String("start_time", r.start_time);
  j.Raw("end_time", Null(r.end_time));
  j.Raw("trials_total", std::to_string(r.trials_total));
  j.Raw("trials_in_shard", std::to_string(r.trials_in_shard));
  j.Raw("trials_done", std::to_string(r.trials_done));
  j.Raw("trials_failed", std::to_string(r.trials_failed));
  j.Raw("shard", Null(r.shard));
  j.Raw("jobs", std::to_string(r.jobs));
  j.Number("wall_seconds", CsvNumber(r.wall_seconds));
  j.Number("reference_seconds_total", CsvNumber(r.reference_seconds_total));
  j.Number("trial_seconds_total", CsvNumber(r.trial_seconds_total));
  // The config text last: it is the only multi-line value (escaped onto one line).
  j.String("config", r.config_text);
  return j.Pretty() + "\n";
}

}  // namespace carrier::sweep
