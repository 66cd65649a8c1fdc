// experiments/io/atomic_file.hpp: every file carrier writes goes through here.
//
// Contract.
// - WriteFileAtomic(path, text): text goes to "<path>.tmp", which is fsync'ed and renamed over
//   path, then the folder is fsync'ed. A reader, a crash or a power cut at any instant finds the
//   old file, no file, or the whole new one: never a truncated one. On any failure (ENOSPC,
//   EROFS, EACCES, EIO, ...) the temporary is removed, path is untouched, and IoError is thrown
//   with one line: "cannot write PATH: REASON".
// - AppendFile: an O_APPEND file of records (a sweep's trials.csv). Append(record) is one
//   write(2) of one whole record, so a kill leaves whole records plus at most one partial tail
//   (which --resume drops). When a write fails, the file is cut back to its length before the
//   record, so it stays valid up to its last whole record, and IoError names file and reason.
// - DirLock: an advisory flock(2) on an output folder, taken without waiting. The kernel drops
//   it when the holder exits or crashes, so a stale lock cannot outlive its process. A second
//   writer on the same folder gets IoError at once instead of interleaving rows.
// - StopOnSignals: while alive, SIGINT and SIGTERM set StopSignal() instead of killing the
//   process, once (SA_RESETHAND: a second Ctrl-C kills at once, which is still safe, see above).
//
// Fault injection, for tests only: the environment variable CARRIER_FAULT=POINT@K:MODE acts on
// the K-th write (1-based, counted per process) to POINT. POINT is a file's base name
// (trials.csv, manifest.json, config.toml: WriteFileAtomic) or `row` (AppendFile records).
// MODE is one of
//   crash   the write completes, then the process _exits with kFaultExitCode (as kill -9 would);
//   torn    half the bytes are written, then _exit (a temporary that is never renamed, or a
//           partial row);
//   enospc, erofs, eio   half the bytes are written, then the write fails with that errno (the
//           real error path runs: clean-up, message, exit code);
//   sigint, sigterm      the write completes, then the writing thread raises the signal;
//   pause   the write completes, then the writer waits (up to 30 s) until a stop signal.
// Unset, the switch costs one getenv per process. A malformed value is an IoError.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "cli/args.hpp"

namespace carrier::io {

// Exit code of an injected crash (distinct from 0/1/2 and from 128+signal).
inline constexpr int kFaultExitCode = 86;

// One line naming the file and the reason; exit code 2 through main's UsageError handler.
class IoError : public cli::UsageError {
 public:
  using cli::UsageError::UsageError;
};

namespace internal {

enum class FaultMode { kNone, kCrash, kTorn, kErrno, kSignal, kPause };

struct Fault {
  FaultMode mode = FaultMode::kNone;
  int err = 0;     // kErrno
  int signal = 0;  // kSignal
};

struct FaultSpec {
  std::string point;
  long k = 0;
  Fault fault;
};

inline FaultSpec ParseFaultSpec() {
  FaultSpec s;
  const char* env = std::getenv("CARRIER_FAULT");
  if (env == nullptr || *env == '\0') return s;
  const std::string v = env;
  const auto at = v.find('@'), colon = v.find(':', at == std::string::npos ? 0 : at);
  const auto bad = [&] {
    return IoError("CARRIER_FAULT='" + v +
                   "': expected POINT@K:MODE with K >= 1 and MODE one of "
                   "crash torn enospc erofs eio sigint sigterm pause");
  };
  if (at == std::string::npos || colon == std::string::npos || at == 0) throw bad();
  s.point = v.substr(0, at);
  char* end = nullptr;
  const std::string k = v.substr(at + 1, colon - at - 1);
  s.k = std::strtol(k.c_str(), &end, 10);
  if (k.empty() || *end != '\0' || s.k < 1) throw bad();
  const std::string m = v.substr(colon + 1);
  Fault& f = s.fault;
  if (m == "crash")
    f.mode = FaultMode::kCrash;
  else if (m == "torn")
    f.mode = FaultMode::kTorn;
  else if (m == "enospc")
    f = {FaultMode::kErrno, ENOSPC, 0};
  else if (m == "erofs")
    f = {FaultMode::kErrno, EROFS, 0};
  else if (m == "eio")
    f = {FaultMode::kErrno, EIO, 0};
  else if (m == "sigint")
    f = {FaultMode::kSignal, 0, SIGINT};
  else if (m == "sigterm")
    f = {FaultMode::kSignal, 0, SIGTERM};
  else if (m == "pause")
    f.mode = FaultMode::kPause;
  else
    throw bad();
  return s;
}

// The fault for this write to `point` (kNone almost always). Thread-safe.
inline Fault NextFault(const std::string& point) {
  static const FaultSpec spec = ParseFaultSpec();
  if (spec.fault.mode == FaultMode::kNone || point != spec.point) return {};
  static std::mutex m;
  static long count = 0;
  std::lock_guard<std::mutex> lock(m);
  return ++count == spec.k ? spec.fault : Fault{};
}

inline std::atomic<int>& StopFlag() {
  static std::atomic<int> flag{0};
  return flag;
}

[[noreturn]] inline void Crash() { _exit(kFaultExitCode); }

// What a fault does once its write is complete.
inline void AfterWrite(const Fault& f) {
  if (f.mode == FaultMode::kCrash) Crash();
  // raise(): delivered to this thread before it returns, so the stop point is exact.
  if (f.mode == FaultMode::kSignal) std::raise(f.signal);
  if (f.mode == FaultMode::kPause)
    for (int i = 0; i < 3000 && StopFlag().load() == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// Writes all of [p, p+n) (retrying short writes and EINTR); 0 or the errno.
inline int WriteAll(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return 0;
}

inline std::string Reason(int err) { return std::strerror(err); }

inline std::string Basename(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

inline std::string Dirname(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace internal

// 0 while running normally; SIGINT or SIGTERM once one arrived inside a StopOnSignals.
inline int StopSignal() { return internal::StopFlag().load(); }

inline void WriteFileAtomic(const std::string& path, const std::string& text) {
  using namespace internal;
  const Fault f = NextFault(Basename(path));
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError("cannot write " + path + ": " + Reason(errno));
  const bool half = f.mode == FaultMode::kTorn || f.mode == FaultMode::kErrno;
  int err = WriteAll(fd, text.data(), half ? text.size() / 2 : text.size());
  if (f.mode == FaultMode::kTorn) Crash();
  if (err == 0 && f.mode == FaultMode::kErrno) err = f.err;
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    throw IoError("cannot write " + path + ": " + Reason(err));
  }
  // The rename is durable once the folder is synced; a folder that cannot be opened for that
  // (unusual permissions) still has the whole file, so this step is best effort.
  const int dfd = ::open(Dirname(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  AfterWrite(f);
}

class AppendFile {
 public:
  // `point` names this file's records for CARRIER_FAULT.
  AppendFile(std::string path, std::string point)
      : path_(std::move(path)), point_(std::move(point)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd_ < 0) throw IoError("cannot append to " + path_ + ": " + internal::Reason(errno));
  }
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;
  ~AppendFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Not thread-safe: callers serialise records (the runner holds its write mutex).
  void Append(const std::string& record) {
    using namespace internal;
    const Fault f = NextFault(point_);
    struct stat st;
    const off_t before = ::fstat(fd_, &st) == 0 ? st.st_size : -1;
    const bool half = f.mode == FaultMode::kTorn || f.mode == FaultMode::kErrno;
    int err = WriteAll(fd_, record.data(), half ? record.size() / 2 : record.size());
    if (f.mode == FaultMode::kTorn) Crash();
    if (err == 0 && f.mode == FaultMode::kErrno) err = f.err;
    if (err != 0) {
      // Drop whatever part of the record reached the file; if even that fails, the partial
      // tail is what --resume drops.
      if (before >= 0 && ::ftruncate(fd_, before) != 0) {
      }
      throw IoError("cannot write " + path_ + ": " + Reason(err));
    }
    AfterWrite(f);
  }

  // Flushes the records to the device (before a manifest that counts them is written).
  void Sync() {
    if (::fdatasync(fd_) != 0)
      throw IoError("cannot write " + path_ + ": " + internal::Reason(errno));
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_, point_;
  int fd_ = -1;
};

class DirLock {
 public:
  // dir must exist. `who` opens the message ("carrier sweep").
  DirLock(const std::string& dir, const std::string& who) {
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) throw IoError(who + ": cannot open " + dir + ": " + internal::Reason(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd_);
      fd_ = -1;
      if (err == EWOULDBLOCK)
        throw IoError(who + ": " + dir +
                      " is in use by another carrier sweep or merge (it holds "
                      "the folder's lock); wait for it to finish, or give another -o folder");
      throw IoError(who + ": cannot lock " + dir + ": " + internal::Reason(err));
    }
  }
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock() {
    if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the lock
  }

 private:
  int fd_ = -1;
};

class StopOnSignals {
 public:
  StopOnSignals() {
    internal::StopFlag().store(0);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = [](int sig) { internal::StopFlag().store(sig); };
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
  ~StopOnSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_, old_term_;
};

}  // namespace carrier::io
