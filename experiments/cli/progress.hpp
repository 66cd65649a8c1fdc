// experiments/cli/progress.hpp: a progress line for long verb steps, on a terminal only.
//
// Ticker(what, eta_seconds) starts a thread that, while the object lives and only if stderr is
// a terminal, rewrites one stderr line every second: "<what>: 12 s elapsed (estimate 40 s)".
// The destructor stops the thread and clears the line. Pipes and files get nothing, so scripts
// and tests read the same output as before. Thread-safe to construct from any thread; one
// Ticker at a time per process is the intended use.
#pragma once

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace carrier::cli {

class Ticker {
 public:
  Ticker(std::string what, double eta_seconds) : what_(std::move(what)), eta_(eta_seconds) {
    if (!isatty(STDERR_FILENO)) return;
    thread_ = std::thread([this] { Loop(); });
  }
  ~Ticker() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;

 private:
  void Loop() {
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; })) {
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "\r\033[K%s: %.0f s elapsed (estimate %.0f s)", what_.c_str(), s, eta_);
      std::fflush(stderr);
    }
  }

  std::string what_;
  double eta_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace carrier::cli
