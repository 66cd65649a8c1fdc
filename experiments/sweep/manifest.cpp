#include "sweep/manifest.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>

#include "cli/number_format.hpp"
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

std::string Null(const std::string& s) { return s.empty() ? "null" : JsonQuote(s); }

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

std::string JsonQuote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonUnquote(const std::string& raw) {
  if (raw.size() < 2 || raw.front() != '"') return raw;
  std::string out;
  for (std::size_t i = 1; i + 1 < raw.size(); ++i) {
    char c = raw[i];
    if (c == '\\' && i + 2 < raw.size()) {
      c = raw[++i];
      if (c == 'n')
        c = '\n';
      else if (c == 't')
        c = '\t';
      else if (c == 'u') {
        // \uXXXX: four hex digits (JsonQuote writes them for control characters). Anything
        // else is kept as written: a damaged manifest must give resume and merge their one-line
        // error, not an exception from a number parser (tests/fuzz/fuzz_manifest found that).
        unsigned code = 0;
        bool hex = i + 4 < raw.size();
        for (std::size_t k = 1; hex && k <= 4; ++k) {
          const char h = raw[i + k];
          const int d = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                               : -1;
          hex = d >= 0;
          code = code * 16 + static_cast<unsigned>(d < 0 ? 0 : d);
        }
        if (!hex) {
          out += "\\u";
          continue;
        }
        i += 4;
        if (code >= 0x80) {  // UTF-8, as JSON means it
          if (code >= 0x800) {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
          } else {
            out += static_cast<char>(0xC0 | (code >> 6));
          }
          c = static_cast<char>(0x80 | (code & 0x3F));
        } else {
          c = static_cast<char>(code);
        }
      }
    }
    out += c;
  }
  return out;
}

std::optional<std::string> ManifestField(const std::string& json, const std::string& key) {
  // Top-level keys are written one per line as `  "key": value,` by ManifestJson.
  const std::string needle = "\n  " + JsonQuote(key) + ": ";
  auto pos = json.find(needle);
  if (pos == std::string::npos) return std::nullopt;
  pos += needle.size();
  auto end = json.find('\n', pos);
  std::string v = json.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
  if (!v.empty() && v.back() == ',') v.pop_back();
  return v;
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
  std::string j = "{\n";
  auto add = [&](const std::string& k, const std::string& v) {
    j += "  " + JsonQuote(k) + ": " + v + ",\n";
  };
  add("carrier_version", JsonQuote(CARRIER_VERSION));
  add("git_commit", Null(m.git_commit));
  add("git_dirty", m.git_dirty.empty() ? "null" : m.git_dirty);
  add("compiler", JsonQuote(std::string("g++ ") + __VERSION__));
  add("cxx_flags", JsonQuote(std::string(CARRIER_CXX_FLAGS) + " (" + CARRIER_BUILD_TYPE + ")"));
  add("cpu_model", Null(m.cpu));
  add("simd_target", Null(m.simd));
  add("gpu", Null(m.gpu));
  add("mpfr_version", Null(mpfr));
  add("highway_version", Null(hwy));
  add("boost_version", Null(boost));
  add("config_path", JsonQuote(r.config_path));
  add("config_hash", JsonQuote(r.config_hash));
  add("start_time", JsonQuote(r.start_time));
  add("end_time", Null(r.end_time));
  add("trials_total", std::to_string(r.trials_total));
  add("trials_in_shard", std::to_string(r.trials_in_shard));
  add("trials_done", std::to_string(r.trials_done));
  add("trials_failed", std::to_string(r.trials_failed));
  add("shard", Null(r.shard));
  add("jobs", std::to_string(r.jobs));
  add("wall_seconds", CsvNumber(r.wall_seconds));
  add("reference_seconds_total", CsvNumber(r.reference_seconds_total));
  add("trial_seconds_total", CsvNumber(r.trial_seconds_total));
  // The config text last: it is the only multi-line value (escaped onto one line).
  j += "  \"config\": " + JsonQuote(r.config_text) + "\n}\n";
  return j;
}

}  // namespace carrier::sweep
