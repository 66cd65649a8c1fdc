// experiments/probe/targets.cpp: the black-box sums of targets.hpp.
#include "probe/targets.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/tree_hash.hpp"

#ifndef CARRIER_SOURCE_DIR
#define CARRIER_SOURCE_DIR "."
#endif

namespace carrier::probe {

namespace {

std::string Hex(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

double ParseNumber(const std::string& text, const std::string& who) {
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s, &end);
  while (end && *end && std::isspace(static_cast<unsigned char>(*end))) ++end;
  if (end == s || (end && *end))
    throw TargetError(who + ": expected one number, got '" + text + "'");
  return v;
}

// ---- python targets: one child process, line protocol of target.py -----------------------

class PythonTarget : public Target {
 public:
  PythonTarget(const std::string& name, const std::string& dtype, std::uint64_t n)
      : name_(name), n_(n) {
    const char* py_env = std::getenv("CARRIER_PYTHON");
    const char* script_env = std::getenv("CARRIER_PROBE_SCRIPT");
    const std::string python = py_env && *py_env ? py_env : "/usr/bin/python3";
    const std::string script = script_env && *script_env ? script_env
                                                         : std::string(CARRIER_SOURCE_DIR) +
                                                               "/experiments/probe/target.py";
    if (access(script.c_str(), R_OK) != 0)
      throw TargetError(name + ": the driver " + script + " is missing (set CARRIER_PROBE_SCRIPT)");
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) throw TargetError(name + ": pipe failed");
    pid_ = fork();
    if (pid_ < 0) throw TargetError(name + ": fork failed");
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[1]);
      close(from_child[0]);
      const std::string ns = std::to_string(n);
      execl(python.c_str(), python.c_str(), script.c_str(), name.c_str(), dtype.c_str(), ns.c_str(),
            static_cast<char*>(nullptr));
      std::fprintf(stdout, "error cannot run %s\n", python.c_str());
      std::fflush(stdout);
      _exit(3);
    }
    close(to_child[0]);
    close(from_child[1]);
    out_ = fdopen(to_child[1], "w");
    in_ = fdopen(from_child[0], "r");
    const std::string first = ReadLine();
    if (first.rfind("ok ", 0) != 0)
      throw TargetError(name + ": " + (first.rfind("error ", 0) == 0 ? first.substr(6) : first));
    description_ = first.substr(3);
  }
  ~PythonTarget() override {
    if (out_) {
      std::fputs("q\n", out_);
      std::fclose(out_);
    }
    if (in_) std::fclose(in_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }
  std::vector<double> Masks(std::uint64_t i, double m,
                            const std::vector<std::uint64_t>& js) override {
    std::string line = "m " + std::to_string(i) + " " + Hex(m);
    for (std::uint64_t j : js) line += " " + std::to_string(j);
    Send(line);
    std::istringstream is(ReadLine());
    std::vector<double> out;
    std::string tok;
    while (is >> tok) out.push_back(ParseNumber(tok, name_));
    return out;
  }
  double Values(const std::vector<double>& x) override {
    std::string line = "x";
    line.reserve(x.size() * 24);
    for (double v : x) line += " " + Hex(v);
    Send(line);
    return ParseNumber(ReadLine(), name_);
  }
  std::string Description() const override { return description_; }

 private:
  void Send(const std::string& line) {
    if (std::fputs((line + "\n").c_str(), out_) < 0 || std::fflush(out_) != 0)
      throw TargetError(name_ + ": the driver process exited");
  }
  std::string ReadLine() {
    std::string line;
    int c;
    while ((c = std::fgetc(in_)) != EOF && c != '\n') line += static_cast<char>(c);
    if (c == EOF && line.empty()) throw TargetError(name_ + ": the driver process exited");
    if (line.rfind("error ", 0) == 0) throw TargetError(name_ + ": " + line.substr(6));
    return line;
  }
  std::string name_;
  std::uint64_t n_;
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  FILE* in_ = nullptr;
  std::string description_;
};

// ---- shared-library symbol ---------------------------------------------------------------

class LibTarget : public Target {
 public:
  LibTarget(const std::string& text, const std::string& dtype, std::uint64_t n)
      : text_(text), fp32_(dtype == "fp32"), n_(n) {
    const std::size_t colon = text.rfind(':');
    const std::string lib = text.substr(0, colon), sym = text.substr(colon + 1);
    if (sym.empty()) throw TargetError(text + ": give the symbol as LIB.so:FUNCTION");
    handle_ = dlopen(lib.find('/') == std::string::npos ? ("./" + lib).c_str() : lib.c_str(),
                     RTLD_NOW | RTLD_LOCAL);
    if (!handle_) throw TargetError(text + ": dlopen failed: " + dlerror());
    fn_ = dlsym(handle_, sym.c_str());
    if (!fn_) throw TargetError(text + ": no symbol '" + sym + "' in " + lib);
  }
  ~LibTarget() override {
    if (handle_) dlclose(handle_);
  }
  std::vector<double> Masks(std::uint64_t i, double m,
                            const std::vector<std::uint64_t>& js) override {
    std::vector<double> x(n_, 1.0), out;
    for (std::uint64_t j : js) {
      x[i] = m;
      x[j] = -m;
      out.push_back(Values(x));
      x[j] = 1.0;
    }
    return out;
  }
  double Values(const std::vector<double>& x) override {
    if (fp32_) {
      buf32_.assign(x.begin(), x.end());
      return reinterpret_cast<float (*)(const float*, std::size_t)>(fn_)(buf32_.data(),
                                                                         buf32_.size());
    }
    return reinterpret_cast<double (*)(const double*, std::size_t)>(fn_)(x.data(), x.size());
  }
  std::string Description() const override {
    return text_ + " (dlopen, " + std::string(fp32_ ? "float" : "double") + " f(const T*, size_t))";
  }

 private:
  std::string text_;
  bool fp32_;
  std::uint64_t n_;
  void* handle_ = nullptr;
  void* fn_ = nullptr;
  std::vector<float> buf32_;
};

// ---- any executable ----------------------------------------------------------------------

class ExecTarget : public Target {
 public:
  ExecTarget(const std::string& command, const std::string& dtype, std::uint64_t n)
      : command_(command), fp32_(dtype == "fp32"), n_(n) {
    if (command.empty()) throw TargetError("exec: give a command: exec:COMMAND");
    char tmpl[] = "/tmp/carrier_probe_XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0) throw TargetError("exec: cannot create a temporary file");
    close(fd);
    path_ = tmpl;
  }
  ~ExecTarget() override { std::remove(path_.c_str()); }
  std::vector<double> Masks(std::uint64_t i, double m,
                            const std::vector<std::uint64_t>& js) override {
    std::vector<double> x(n_, 1.0), out;
    for (std::uint64_t j : js) {
      x[i] = m;
      x[j] = -m;
      out.push_back(Values(x));
      x[j] = 1.0;
    }
    return out;
  }
  double Values(const std::vector<double>& x) override {
    {
      std::ofstream f(path_);
      for (double v : x) f << Hex(fp32_ ? static_cast<double>(static_cast<float>(v)) : v) << "\n";
    }
    const std::string cmd = "(" + command_ + ") < " + path_;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) throw TargetError("exec:" + command_ + ": cannot start");
    std::string text;
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) text += buf;
    const int status = pclose(p);
    if (status != 0)
      throw TargetError("exec:" + command_ + ": exited with status " + std::to_string(status));
    return ParseNumber(text, "exec:" + command_);
  }
  std::string Description() const override { return "exec:" + command_ + " (values on stdin)"; }

 private:
  std::string command_;
  bool fp32_;
  std::uint64_t n_;
  std::string path_;
};

}  // namespace

std::unique_ptr<Target> MakeTarget(const std::string& text, const std::string& dtype,
                                   std::uint64_t n) {
  if (text == "numpy.sum" || text == "numpy.add.reduce:strided" || text == "python.sum" ||
      text == "torch.sum" || text == "torch.logsumexp")
    return std::make_unique<PythonTarget>(text, dtype, n);
  if (text.rfind("exec:", 0) == 0) return std::make_unique<ExecTarget>(text.substr(5), dtype, n);
  const std::size_t colon = text.rfind(':');
  if (colon != std::string::npos && text.substr(0, colon).find(".so") != std::string::npos)
    return std::make_unique<LibTarget>(text, dtype, n);
  throw TargetError("unknown target '" + text +
                    "': numpy.sum numpy.add.reduce:strided python.sum torch.sum "
                    "torch.logsumexp LIB.so:SYMBOL exec:COMMAND");
}

namespace {

std::vector<std::string> Candidates(std::uint64_t n) {
  std::vector<std::string> c = {"seq", "reverse", "pairwise"};
  for (std::uint64_t p = 2; p <= 4096 && p < 2 * n; p *= 2) {
    const std::string ps = std::to_string(p);
    c.push_back("pairwise:" + ps);
    c.push_back("blocked:" + ps);
    c.push_back("blocked:" + ps + ":pairwise");
    c.push_back("strided:" + ps);
    c.push_back("canonical:" + ps);
    c.push_back("canonical:" + ps + ":bisect");
  }
  c.push_back("canonical:1:bisect");
  c.push_back("numpy");
  // torch.sum's cascade with the vector widths of SSE, AVX2 and AVX512 in fp64 and fp32.
  for (const char* lanes : {"2", "4", "8", "16"}) c.push_back(std::string("torch:") + lanes);
  return c;
}

}  // namespace

std::size_t CandidateCount(std::uint64_t n) { return Candidates(n).size(); }

std::vector<std::string> MatchingSchedules(const MergeTree& t) {
  const std::uint64_t want = TreeHash64(t, TreeForm::kBinary);
  std::vector<std::string> out;
  for (const std::string& s : Candidates(t.n)) {
    MergeTree c;
    try {
      c = BuildTree(s, t.n);
    } catch (const ScheduleError&) {
      continue;  // a candidate this build does not know
    }
    if (TreeHash64(c, TreeForm::kBinary) == want) out.push_back(s);
  }
  return out;
}

}  // namespace carrier::probe
