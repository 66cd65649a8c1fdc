// tests/kernels/test_omp.cpp: omp:P[:seq|pairwise]:INNER gives the same bits with 1 and 2
// threads (and with whatever OMP_NUM_THREADS the process started with), and those bits are
// ReplayOracle of the schedule's tree. Failures print schedule, n, kind, seed and the states.
#include <omp.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "core/merge_tree.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"
#include "kernel_test_util.hpp"
#include "kernels/omp/omp.hpp"

namespace carrier::test {
namespace {

struct Tally {
  long cases = 0;
  long failures = 0;
};

template <class C, class TS>
void CheckOmp(const std::vector<double>& values, const Schedule& s, int kind, std::uint64_t seed,
              Tally& tally) {
  using T = simd::Compute<TS>;
  const std::size_t n = values.size();
  std::vector<TS> x(n);
  std::vector<typename C::Input> in(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = ToStorage<TS>(values[i]);
    const T v = static_cast<T>(ToComputeValue(x[i]));
    if constexpr (std::is_same_v<typename C::Input, T>) {
      in[i] = v;
    } else {
      in[i] = {v, static_cast<std::int64_t>(i)};
    }
  }
  const Schedule run = omp::Executed<C, TS>(s);
  const auto want = ReplayOracle<C>(BuildTree(run, n), std::span<const typename C::Input>(in));
  const int initial = omp_get_max_threads();
  for (int threads : {1, 2, initial}) {
    if (threads == initial && (initial == 1 || initial == 2)) continue;  // already run
    omp_set_num_threads(threads);
    const auto got = omp::Reduce<C, TS>(x.data(), n, s);
    ++tally.cases;
    if (!StatesBitEqual<C>(got, want) && ++tally.failures <= 8)
      std::printf(
          "MISMATCH threads=%d storage=%s carrier=%s schedule=%s (ran %s) n=%zu kind=%d "
          "seed=%llu\n  omp    %s\n  replay %s\n",
          threads, StorageName<TS>(), C::kName, ToString(s).c_str(), ToString(run).c_str(), n, kind,
          static_cast<unsigned long long>(seed), StateText<C>(got).c_str(),
          StateText<C>(want).c_str());
  }
  omp_set_num_threads(initial);
}

template <class C, class TS>
void Sweep(const std::vector<std::string>& inners, std::uint64_t seed, Tally& tally) {
  Rng rng(seed);
  for (const std::string& inner : inners)
    for (int parts : {1, 2, 3, 7})
      for (const char* outer : {"seq", "pairwise"}) {
        const Schedule s = ParseSchedule("omp:" + std::to_string(parts) + ":" + outer +
                                         (inner.empty() ? "" : ":" + inner));
        for (std::size_t n : {std::size_t{0}, std::size_t{5}, std::size_t{33}, std::size_t{1000},
                              std::size_t{4099}})
          for (int kind : {1, 3}) {
            const std::uint64_t case_seed = rng.Next();
            Rng data(case_seed);
            CheckOmp<C, TS>(MakeInput(kind, n, data), s, kind, case_seed, tally);
          }
      }
}

TEST_CASE("omp results are identical for 1 and 2 threads and equal ReplayOracle", "[fast][omp]") {
  Tally tally;
  const std::vector<std::string> push = {"strided:16", "strided:64", ""};
  const std::vector<std::string> tiles = {"strided:32:tile:4:lift", ""};
  Sweep<Sum<float>, float>(push, 1, tally);
  Sweep<Compensated<double>, double>(push, 2, tally);
  Sweep<Max<float>, Half>(push, 3, tally);
  Sweep<ScaledNorm2<float>, BFloat16>(push, 4, tally);
  Sweep<OnlineSoftmax<float, PortableExp>, float>(tiles, 5, tally);
  Sweep<OnlineSoftmax<double, PortableExp>, double>({"strided:16"}, 6, tally);
  Sweep<Welford<double>, double>(tiles, 7, tally);
  Sweep<Welford<float>, BFloat16>({"strided:32"}, 8, tally);
  Sweep<ArgMax<float>, float>({"seq", ""}, 9, tally);
  std::printf("omp: %ld runs compared with ReplayOracle (threads 1, 2 and %d), %ld mismatches\n",
              tally.cases, omp_get_max_threads(), tally.failures);
  CHECK(tally.failures == 0);
}

TEST_CASE("omp refuses schedules it does not realise with one line", "[fast][omp]") {
  std::vector<float> x(8, 1.0f);
  for (const char* text : {"strided:16", "omp:2:seq:pairwise", "omp:2:seq:strided:8"}) {
    INFO(text);
    try {
      omp::Reduce<Sum<float>, float>(x.data(), x.size(), ParseSchedule(text));
      FAIL("accepted " << text);
    } catch (const ScheduleError& e) {
      const std::string what = e.what();
      INFO(what);
      CHECK(what.find('\n') == std::string::npos);
    }
  }
}

}  // namespace
}  // namespace carrier::test
