// experiments/cli/progress.hpp: a progress line for long verb steps, on a terminal only.
//
// Ticker(what, eta_seconds[, status]) starts a thread that, while the object lives and only if
// stderr is a terminal, rewrites one stderr line every second: "<what>: 12 s elapsed (estimate
// 40 s)"; no estimate part when eta_seconds <= 0, and status() (called from the ticker's
// thread, so it must read only atomics) appended when given, e.g. "; 1200 target calls".
// The destructor stops the thread and clears the line. Pipes and files get nothing, so scripts
// and tests read the same output as before. Thread-safe to construct from any thread; one
// Ticker at a time per process is the intended use.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace carrier::cli {

class Ticker {
 public:
  Ticker(std::string what, double eta_seconds, std::function<std::string()> status = {})
      : what_(std::move(what)), eta_(eta_seconds), status_(std::move(status)) {
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
      std::string line = what_ + ": " + std::to_string(std::lround(s)) + " s elapsed";
      if (eta_ > 0) line += " (estimate " + std::to_string(std::llround(eta_)) + " s)";
      if (status_) line += status_();
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
      std::fflush(stderr);
    }
  }

  std::string what_;
  double eta_;
  std::function<std::string()> status_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace carrier::cli
