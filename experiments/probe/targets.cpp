// experiments/probe/targets.cpp: the black-box sums of targets.hpp.
#include "probe/targets.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cli/number_format.hpp"
#include "core/schedule.hpp"
#include "core/tree_hash.hpp"

#ifndef CARRIER_SOURCE_DIR
#define CARRIER_SOURCE_DIR "."
#endif

namespace carrier::probe {

namespace {

// Sparse inputs written into one dense buffer: only the previous input's runs are reset when
// the background stays, so a mask over 10^6 values costs a few stores.
class MaskedBuffer {
 public:
  explicit MaskedBuffer(std::uint64_t n) : x_(n, 0.0) {}
  const std::vector<double>& Apply(const MaskedInput& in) {
    if (!has_background_ || in.background != background_) {
      std::fill(x_.begin(), x_.end(), in.background);
      background_ = in.background;
      has_background_ = true;
    } else {
      for (const MaskRun& r : runs_)
        for (std::uint64_t k = 0; k < r.count; ++k) x_[r.first + k * r.stride] = background_;
    }
    for (const MaskRun& r : in.runs)
      for (std::uint64_t k = 0; k < r.count; ++k) x_[r.first + k * r.stride] = r.value;
    runs_ = in.runs;
    return x_;
  }

 private:
  std::vector<double> x_;
  std::vector<MaskRun> runs_;
  double background_ = 0;
  bool has_background_ = false;
};

}  // namespace

// A target's text as one short line: control bytes (newlines included) as \n, \r, \t or \xHH,
// cut after kShown characters, so an error message stays one line whatever the target printed.
std::string OneLine(const std::string& text) {
  constexpr std::size_t kShown = 120;
  std::string out;
  for (std::size_t i = 0; i < text.size() && out.size() < kShown; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (out.size() >= kShown) out += "...";
  return out;
}

namespace {

std::string OneLineQuoted(const std::string& text) { return "'" + OneLine(text) + "'"; }

std::string SecondsText(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

double ParseNumber(const std::string& text, const std::string& who) {
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s, &end);
  const bool read = end != s;  // before the trailing whitespace: a blank reply is no number
  while (end && *end && std::isspace(static_cast<unsigned char>(*end))) ++end;
  if (!read || (end && *end) || text.size() != std::strlen(s))
    throw TargetError(who + ": expected one number, got " + OneLineQuoted(text));
  return v;
}

namespace {

// ---- python targets: one child process, line protocol of target.py -----------------------

class PythonTarget : public Target {
 public:
  PythonTarget(const std::string& name, const std::string& dtype, std::uint64_t n,
               double timeout_seconds)
      : name_(name), timeout_(timeout_seconds) {
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
    in_fd_ = from_child[0];
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
    if (in_fd_ >= 0) close(in_fd_);
    if (pid_ > 0) {
      if (hung_) kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  std::vector<double> Evaluate(const std::vector<MaskedInput>& batch) override {
    std::vector<double> out;
    for (std::size_t at = 0; at < batch.size(); at += kMaxBatch) {
      const std::size_t k = std::min(kMaxBatch, batch.size() - at);
      std::string text = "b " + std::to_string(k) + "\n";
      for (std::size_t q = at; q < at + k; ++q) {
        text += "v " + cli::HexFloat(batch[q].background);
        for (const MaskRun& r : batch[q].runs)
          text += " " + std::to_string(r.first) + " " + std::to_string(r.count) + " " +
                  std::to_string(r.stride) + " " + cli::HexFloat(r.value);
        text += "\n";
      }
      text.pop_back();
      Send(text);
      std::istringstream is(ReadLine());
      std::string tok;
      std::size_t got = 0;
      while (is >> tok) {
        out.push_back(ParseNumber(tok, name_));
        ++got;
      }
      if (got != k)
        throw TargetError(name_ + ": the driver answered " + std::to_string(got) + " of " +
                          std::to_string(k) + " inputs");
    }
    return out;
  }
  double Values(const std::vector<double>& x) override {
    std::string line = "x";
    line.reserve(x.size() * 24);
    for (double v : x) line += " " + cli::HexFloat(v);
    Send(line);
    return ParseNumber(ReadLine(), name_);
  }
  std::string Description() const override { return description_; }

 private:
  void Send(const std::string& line) {
    if (std::fputs((line + "\n").c_str(), out_) < 0 || std::fflush(out_) != 0)
      throw TargetError(name_ + ": the driver process exited");
  }
  // One line from the driver, waiting at most timeout_ seconds for it (a driver that stops
  // answering is killed when the target is destroyed, not waited for forever).
  std::string ReadLine() {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_);
    for (;;) {
      const std::size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        if (line.rfind("error ", 0) == 0) throw TargetError(name_ + ": " + line.substr(6));
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      pollfd fd{in_fd_, POLLIN, 0};
      const int ready =
          left > 0 ? poll(&fd, 1, static_cast<int>(std::min<long long>(left, 1000))) : 0;
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) {
        if (left > 0) continue;
        hung_ = true;
        throw TargetError(name_ + ": no answer within " + SecondsText(timeout_) +
                          " s (--timeout sets the limit per call)");
      }
      char buf[65536];
      const ssize_t got = read(in_fd_, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        if (buffer_.empty()) throw TargetError(name_ + ": the driver process exited");
        std::string line;
        line.swap(buffer_);
        return line;
      }
      buffer_.append(buf, static_cast<std::size_t>(got));
    }
  }
  std::string name_;
  double timeout_;
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  int in_fd_ = -1;
  std::string buffer_;  // what the driver wrote past the last line read
  bool hung_ = false;
  std::string description_;
};

// ---- shared-library symbol ---------------------------------------------------------------

class LibTarget : public Target {
 public:
  LibTarget(const std::string& text, const std::string& dtype, std::uint64_t n, TargetOp op)
      : text_(text), fp32_(dtype == "fp32"), dot_(op == TargetOp::kDot), n_(n) {
    if (dtype != "fp32" && dtype != "fp64")
      throw TargetError(text + ": a LIB.so:SYMBOL target takes fp32 or fp64, not " + dtype);
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
  std::vector<double> Evaluate(const std::vector<MaskedInput>& batch) override {
    std::vector<double> out;
    for (const MaskedInput& in : batch) out.push_back(Values(masked_.Apply(in)));
    return out;
  }
  double Values(const std::vector<double>& x) override {
    // A dot takes a = x[0..K-1] and b = x[K..2K-1] (n = 2K).
    const std::size_t k = x.size() / 2;
    if (fp32_) {
      buf32_.assign(x.begin(), x.end());
      if (dot_)
        return reinterpret_cast<float (*)(const float*, const float*, std::size_t)>(fn_)(
            buf32_.data(), buf32_.data() + k, k);
      return reinterpret_cast<float (*)(const float*, std::size_t)>(fn_)(buf32_.data(),
                                                                         buf32_.size());
    }
    if (dot_)
      return reinterpret_cast<double (*)(const double*, const double*, std::size_t)>(fn_)(
          x.data(), x.data() + k, k);
    return reinterpret_cast<double (*)(const double*, std::size_t)>(fn_)(x.data(), x.size());
  }
  std::string Description() const override {
    return text_ + " (dlopen, " + std::string(fp32_ ? "float" : "double") +
           (dot_ ? " f(const T* a, const T* b, size_t k))" : " f(const T*, size_t))");
  }

 private:
  std::string text_;
  bool fp32_;
  bool dot_;
  std::uint64_t n_;
  MaskedBuffer masked_{n_};
  void* handle_ = nullptr;
  void* fn_ = nullptr;
  std::vector<float> buf32_;
};

// ---- any executable ----------------------------------------------------------------------

class ExecTarget : public Target {
 public:
  ExecTarget(const std::string& command, const std::string& dtype, std::uint64_t n,
             double timeout_seconds)
      : command_(command), fp32_(dtype == "fp32"), n_(n), timeout_(timeout_seconds) {
    if (command.empty()) throw TargetError("exec: give a command: exec:COMMAND");
    char tmpl[] = "/tmp/carrier_probe_XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0) throw TargetError("exec: cannot create a temporary file");
    close(fd);
    path_ = tmpl;
  }
  ~ExecTarget() override { std::remove(path_.c_str()); }
  std::vector<double> Evaluate(const std::vector<MaskedInput>& batch) override {
    // One process per batch of at most kMaxValuesPerProcess values (and kMaxBatch vectors).
    constexpr std::uint64_t kMaxValuesPerProcess = 1 << 20;
    const std::size_t per = static_cast<std::size_t>(std::clamp<std::uint64_t>(
        kMaxValuesPerProcess / std::max<std::uint64_t>(n_, 1), 1, kMaxBatch));
    std::vector<double> out;
    for (std::size_t at = 0; at < batch.size(); at += per) {
      const std::size_t k = std::min(per, batch.size() - at);
      std::vector<std::vector<double>> xs;
      for (std::size_t q = at; q < at + k; ++q) xs.push_back(masked_.Apply(batch[q]));
      const std::vector<double> got = RunBatch(xs);
      out.insert(out.end(), got.begin(), got.end());
    }
    return out;
  }
  double Values(const std::vector<double>& x) override { return RunBatch({x})[0]; }
  std::string Description() const override {
    return "exec:" + command_ + " (batches of vectors on stdin)";
  }

 private:
  struct Run {
    std::string out, err;
    int status = 0;
    bool timed_out = false;
  };
  // The vectors back to back on one process's stdin; its K numbers.
  std::vector<double> RunBatch(const std::vector<std::vector<double>>& xs) {
    {
      std::ofstream f(path_);
      for (const auto& x : xs)
        for (double v : x)
          f << cli::HexFloat(fp32_ ? static_cast<double>(static_cast<float>(v)) : v) << "\n";
      if (!f) throw TargetError(who() + ": cannot write its input to " + path_);
    }
    const Run r = RunOnce(xs.size());
    if (r.timed_out)
      throw TargetError(who() + ": no answer within " + SecondsText(timeout_) +
                        " s (killed; --timeout sets the limit per process)");
    if (WIFSIGNALED(r.status))
      throw TargetError(who() + ": killed by signal " + std::to_string(WTERMSIG(r.status)) + " (" +
                        strsignal(WTERMSIG(r.status)) + ")" + StderrNote(r.err));
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0)
      throw TargetError(who() + ": exited with code " + std::to_string(WEXITSTATUS(r.status)) +
                        StderrNote(r.err));
    std::vector<double> got;
    std::istringstream is(r.out);
    std::string tok;
    while (is >> tok) got.push_back(ParseNumber(tok, who()));
    if (got.size() != xs.size() || r.out.find('\0') != std::string::npos)
      throw TargetError(who() + ": expected " + std::to_string(xs.size()) + " number" +
                        (xs.size() == 1 ? "" : "s (one per vector)") + ", got " +
                        OneLineQuoted(r.out));
    return got;
  }
  std::string who() const { return "exec:" + OneLine(command_); }
  static std::string StderrNote(const std::string& err) {
    return err.empty() ? "" : "; its stderr: " + OneLineQuoted(err);
  }

  // sh -c COMMAND in its own process group, stdin from the values file, stdout and stderr
  // read through pipes (at most kMaxOutput bytes each are kept) until both close, the child
  // exits, or timeout_ seconds pass (then the whole group is killed).
  Run RunOnce(std::size_t vectors) {
    // The environment is built before fork: the child only calls async-signal-safe functions.
    std::vector<std::string> env_text;
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "CARRIER_PROBE_N=", 16) != 0 &&
          std::strncmp(*e, "CARRIER_PROBE_VECTORS=", 22) != 0)
        env_text.emplace_back(*e);
    env_text.push_back("CARRIER_PROBE_N=" + std::to_string(n_));
    env_text.push_back("CARRIER_PROBE_VECTORS=" + std::to_string(vectors));
    std::vector<char*> envp;
    for (std::string& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);
    constexpr std::size_t kMaxOutput = 1 << 16;
    int out_pipe[2], err_pipe[2];
    if (pipe(out_pipe) != 0) throw TargetError(who() + ": pipe failed");
    if (pipe(err_pipe) != 0) {
      close(out_pipe[0]);
      close(out_pipe[1]);
      throw TargetError(who() + ": pipe failed");
    }
    const pid_t pid = fork();
    if (pid < 0) throw TargetError(who() + ": fork failed");
    if (pid == 0) {
      setpgid(0, 0);
      const int in = open(path_.c_str(), O_RDONLY);
      if (in >= 0) dup2(in, 0);
      dup2(out_pipe[1], 1);
      dup2(err_pipe[1], 2);
      close(out_pipe[0]);
      close(err_pipe[0]);
      char* argv[] = {const_cast<char*>("sh"), const_cast<char*>("-c"),
                      const_cast<char*>(command_.c_str()), nullptr};
      execve("/bin/sh", argv, envp.data());
      _exit(127);
    }
    setpgid(pid, pid);
    close(out_pipe[1]);
    close(err_pipe[1]);
    Run r;
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    std::string* sinks[2] = {&r.out, &r.err};
    int open_fds = 2;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_);
    while (open_fds > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) {
        r.timed_out = true;
        break;
      }
      const int ready = poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
      if (ready < 0 && errno != EINTR) break;
      for (int k = 0; k < 2; ++k) {
        if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char buf[4096];
        const ssize_t got = read(fds[k].fd, buf, sizeof buf);
        if (got > 0) {
          if (sinks[k]->size() < kMaxOutput) sinks[k]->append(buf, static_cast<std::size_t>(got));
        } else if (got == 0 || errno != EINTR) {
          close(fds[k].fd);
          fds[k].fd = -1;
          --open_fds;
        }
      }
    }
    if (r.timed_out) kill(-pid, SIGKILL);
    for (const pollfd& f : fds)
      if (f.fd >= 0) close(f.fd);
    // The output pipes are closed: a child still running past its deadline is killed.
    int status = 0;
    for (;;) {
      const pid_t w = waitpid(pid, &status, r.timed_out ? 0 : WNOHANG);
      if (w == pid) break;
      if (w < 0 && errno != EINTR) break;
      if (w == 0) {
        if (std::chrono::steady_clock::now() >= deadline) {
          r.timed_out = true;
          kill(-pid, SIGKILL);
        } else {
          usleep(1000);
        }
      }
    }
    r.status = status;
    return r;
  }

  std::string command_;
  bool fp32_;
  std::uint64_t n_;
  double timeout_;
  MaskedBuffer masked_{n_};
  std::string path_;
};

}  // namespace

std::unique_ptr<Target> MakeTarget(const std::string& text, const std::string& dtype,
                                   std::uint64_t n, double timeout_seconds, TargetOp op) {
  if (text == "numpy.sum" || text == "numpy.add.reduce:strided" || text == "python.sum" ||
      text == "numpy.dot" || text == "numpy.matmul" || text == "torch.sum" ||
      text == "torch.logsumexp" || text == "torch.matmul")
    return std::make_unique<PythonTarget>(text, dtype, n, timeout_seconds);
  if (text.rfind("exec:", 0) == 0)
    return std::make_unique<ExecTarget>(text.substr(5), dtype, n, timeout_seconds);
  const std::size_t colon = text.rfind(':');
  if (colon != std::string::npos && text.substr(0, colon).find(".so") != std::string::npos)
    return std::make_unique<LibTarget>(text, dtype, n, op);
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
std::vector<std::string> CandidateSchedules(std::uint64_t n) { return Candidates(n); }

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
