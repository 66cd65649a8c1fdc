// fp32 bit patterns rounded into fp16, bf16, fp8 e4m3, fp8 e5m2 and tf32 by RoundToFormat in
// every deterministic mode (and by the Half / BFloat16 constructors from float and from
// double), compared bit for bit with the independent integer reference
// (reference_rounding.hpp). Prints, per format and mode, the mismatch count (asserted to be 0)
// and the time taken.
//
// Which patterns. Two walks over whole binades (all 2^24 sign x significand patterns of one fp32
// exponent), the rest of each binade checked on sampled blocks of 2^14 significands (the lowest,
// the highest and others that move with the exponent, so an exponent-dependent slip still
// shows):
//   [slow] (every CTest run, CI included): in full the fp32 subnormals, inf/NaN, the binades
//     where the target underflows, from 2^(emin-p-2) to 2^(emin+1), the binades where it
//     overflows, from 2^(emax-1) to 2^(emax+2), and 2^-1 .. 2^1; 16 blocks of every other
//     binade. Between those edges the target's rounding is the same at every exponent (the
//     result of x * 2^k is the result of x, times 2^k), which is what the sampled blocks of
//     each binade confirm. 6.5% of 2^32 for bf16 and tf32, 7% for fp8, 10% for fp16 (31 s on two
//     cores here, against 327 s for the walk below).
//   [.exhaustive] (hidden; `precision_tests "[exhaustive]"` runs it, about 11 CPU-minutes):
//     every binade from 2^(emin-p-2) to 2^(emax+2) in full, so all 2^32 patterns for bf16 and
//     tf32; three blocks of each binade outside (where every input rounds to 0, the smallest
//     subnormal, the largest finite or inf). Run it after any change to the rounding code; it
//     was CI's longest test (327 s of a 2-core run) for what the [slow] walk also finds.
//
// Layout of the work: threads take blocks of positive patterns; for each block the
// reference's mode-independent part (RefDecode) runs once per magnitude, then each mode (and
// each storage-type constructor) checks the block for both signs. Times are per-thread CPU
// time (CLOCK_THREAD_CPUTIME_ID) summed over threads: the machine is shared, and CPU time is
// what stays meaningful when other jobs take cores away. "s/2 cores" is that sum halved,
// i.e. the wall time on two otherwise idle cores; the wall time actually taken is printed
// per format as well.
#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "precision/bfloat16.hpp"
#include "precision/format.hpp"
#include "precision/half.hpp"
#include "precision/rounding.hpp"
#include "reference_rounding.hpp"
#include "rounding_test_util.hpp"

namespace carrier {
namespace {

using test::Mismatch;
using test::RefCore;
using test::RefMode;

constexpr std::uint32_t kBlock = 16384;  // 384 KiB of RefCore: stays in L2
constexpr std::size_t kKeep = 8;

// Checks done per block: the six modes, then optionally the storage type's two constructors.
enum Check { kRne, kRna, kRz, kRu, kRd, kRo, kFromFloat, kFromDouble, kChecks };
constexpr const char* kCheckNames[kChecks] = {"rne", "rna", "rz",      "ru",
                                              "rd",  "ro",  "(float)", "(double)"};
constexpr Rounding kCheckRounding[6] = {Rounding::kNearestEven, Rounding::kNearestAway,
                                        Rounding::kTowardZero,  Rounding::kUp,
                                        Rounding::kDown,        Rounding::kToOdd};

struct Tally {
  std::uint64_t mismatches = 0;
  std::vector<Mismatch> first;
  double seconds = 0;  // CPU seconds, summed over threads
};

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct FormatResult {
  std::array<Tally, kChecks> checks;
  double decode_seconds = 0;  // CPU seconds, summed over threads
  double wall_seconds = 0;
  unsigned threads = 1;
  std::uint64_t patterns = 0;  // fp32 patterns checked, both signs
};

inline void Record(Tally* t, std::uint64_t input, std::uint64_t want, std::uint64_t got) {
  ++t->mismatches;
  if (t->first.size() < kKeep) t->first.push_back({input, want, got});
}

template <RefMode kMode>
void CheckMode(const Format& f, const test::RefFormat& rf, Rounding r, std::uint32_t begin,
               const std::vector<RefCore>& cores, Tally* t) {
  for (std::uint32_t i = 0; i < kBlock; ++i) {
    const std::uint32_t u = begin + i;
    const double x = static_cast<double>(std::bit_cast<float>(u));
    const double got_pos = RoundToFormat(x, f, r);
    const double got_neg = RoundToFormat(-x, f, r);
    const std::uint64_t want_pos = test::RefFinish<kMode>(cores[i], false, rf);
    const std::uint64_t want_neg = test::RefFinish<kMode>(cores[i], true, rf);
    if (!test::RefAgrees(want_pos, got_pos))
      Record(t, u, want_pos, std::bit_cast<std::uint64_t>(got_pos));
    if (!test::RefAgrees(want_neg, got_neg))
      Record(t, u | 0x80000000u, want_neg, std::bit_cast<std::uint64_t>(got_neg));
  }
}

// T(float) or T(double) against the reference's rne; every NaN must give 0x7FFF.
template <class T, bool kFromDoubleArg>
void CheckStorage(const test::RefFormat& rf, std::uint32_t begin, const std::vector<RefCore>& cores,
                  Tally* t) {
  for (std::uint32_t i = 0; i < kBlock; ++i) {
    for (std::uint32_t sign = 0; sign < 2; ++sign) {
      const std::uint32_t u = (begin + i) | (sign << 31);
      const float x = std::bit_cast<float>(u);
      const T h = kFromDoubleArg ? T(static_cast<double>(x)) : T(x);
      const std::uint64_t want = test::RefFinish<RefMode::kRne>(cores[i], sign != 0, rf);
      const std::uint64_t got = std::bit_cast<std::uint64_t>(static_cast<double>(h.ToFloat()));
      const bool ok = want == test::kRefNaN ? h.bits == 0x7FFF : got == want;
      if (!ok) Record(t, u, want, got);
    }
  }
}

enum class Walk { kEdges, kExhaustive };

// The first pattern of every block of positive fp32 patterns this format is checked on (see the
// top of the file): all blocks of the binades walked in full, a sample of every other.
std::vector<std::uint32_t> BlocksToCheck(const Format& f, Walk walk) {
  constexpr std::uint32_t kBlocksPerBinade = (std::uint32_t{1} << 23) / kBlock;
  const int lo = f.emin - f.precision - 2;
  const int hi = f.emax + 2;
  std::vector<std::uint32_t> begins;
  for (std::uint32_t biased = 0; biased < 256; ++biased) {
    const int e = static_cast<int>(biased) - 127;
    const std::uint32_t base = biased << 23;
    const bool in_range = e >= lo && e <= hi;
    const bool edge =
        (e >= lo && e <= f.emin + 1) || (e >= f.emax - 1 && e <= hi) || (e >= -1 && e <= 1);
    const bool full = biased == 0 || biased == 255 || (walk == Walk::kExhaustive ? in_range : edge);
    if (full) {
      for (std::uint32_t b = 0; b < kBlocksPerBinade; ++b) begins.push_back(base + b * kBlock);
      continue;
    }
    // lowest, highest, and some in between that move with the exponent: 14 (distinct: the
    // steps of 36 stay below kBlocksPerBinade - 2) inside the format's range, 1 outside
    const std::uint32_t between = walk == Walk::kEdges && in_range ? 14 : 1;
    begins.push_back(base);
    for (std::uint32_t k = 0; k < between; ++k)
      begins.push_back(base + (1 + (biased * 97 + k * 36) % (kBlocksPerBinade - 2)) * kBlock);
    begins.push_back(base + (kBlocksPerBinade - 1) * kBlock);
  }
  return begins;
}

template <class Storage>  // Half, BFloat16, or void for none
FormatResult CheckFormat(const Format& f, Walk walk) {
  const test::RefFormat rf = test::ToRefFormat(f);
  const std::vector<std::uint32_t> begins = BlocksToCheck(f, walk);
  FormatResult result;
  result.patterns = 2 * static_cast<std::uint64_t>(begins.size()) * kBlock;
  result.threads = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<std::uint32_t> next{0};
  std::mutex mutex;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (unsigned th = 0; th < result.threads; ++th) {
    pool.emplace_back([&] {
      FormatResult local;
      std::vector<RefCore> cores(kBlock);
      for (;;) {
        const std::uint32_t index = next.fetch_add(1);
        if (index >= begins.size()) break;
        const std::uint32_t begin = begins[index];
        const double t0 = ThreadCpuSeconds();
        for (std::uint32_t i = 0; i < kBlock; ++i) cores[i] = test::RefDecode<23, 8>(begin + i, rf);
        double t1 = ThreadCpuSeconds();
        local.decode_seconds += t1 - t0;
        auto lap = [&](Check c) {
          const double now = ThreadCpuSeconds();
          local.checks[c].seconds += now - t1;
          t1 = now;
        };
        CheckMode<RefMode::kRne>(f, rf, kCheckRounding[kRne], begin, cores, &local.checks[kRne]);
        lap(kRne);
        CheckMode<RefMode::kRna>(f, rf, kCheckRounding[kRna], begin, cores, &local.checks[kRna]);
        lap(kRna);
        CheckMode<RefMode::kRz>(f, rf, kCheckRounding[kRz], begin, cores, &local.checks[kRz]);
        lap(kRz);
        CheckMode<RefMode::kRu>(f, rf, kCheckRounding[kRu], begin, cores, &local.checks[kRu]);
        lap(kRu);
        CheckMode<RefMode::kRd>(f, rf, kCheckRounding[kRd], begin, cores, &local.checks[kRd]);
        lap(kRd);
        CheckMode<RefMode::kRo>(f, rf, kCheckRounding[kRo], begin, cores, &local.checks[kRo]);
        lap(kRo);
        if constexpr (!std::is_void_v<Storage>) {
          CheckStorage<Storage, false>(rf, begin, cores, &local.checks[kFromFloat]);
          lap(kFromFloat);
          CheckStorage<Storage, true>(rf, begin, cores, &local.checks[kFromDouble]);
          lap(kFromDouble);
        }
      }
      std::lock_guard<std::mutex> lock(mutex);
      result.decode_seconds += local.decode_seconds;
      for (int c = 0; c < kChecks; ++c) {
        Tally& total = result.checks[c];
        total.mismatches += local.checks[c].mismatches;
        total.seconds += local.checks[c].seconds;
        for (const Mismatch& m : local.checks[c].first)
          if (total.first.size() < kKeep) total.first.push_back(m);
      }
    });
  }
  for (std::thread& t : pool) t.join();
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (Tally& t : result.checks)
    std::sort(t.first.begin(), t.first.end(),
              [](const Mismatch& a, const Mismatch& b) { return a.input < b.input; });
  return result;
}

template <class Storage>
double CheckAndReport(const Format& f, const char* storage_name, Walk walk) {
  const FormatResult r = CheckFormat<Storage>(f, walk);
  const double n = static_cast<double>(r.patterns);
  std::printf("  %-20s %llu fp32 patterns (%.1f%% of 2^32)\n", f.name.c_str(),
              static_cast<unsigned long long>(r.patterns), 100 * n / 4294967296.0);
  const int checks = std::is_void_v<Storage> ? 6 : kChecks;
  for (int c = 0; c < checks; ++c) {
    const Tally& t = r.checks[c];
    const std::string what =
        c < 6 ? f.name + " " + kCheckNames[c] : std::string(storage_name) + kCheckNames[c];
    std::printf("  %-20s mismatches %-6llu %6.1f s/2 cores  %5.2f ns/input\n", what.c_str(),
                static_cast<unsigned long long>(t.mismatches), t.seconds / 2, t.seconds * 1e9 / n);
    INFO(what << ": " << t.mismatches << " of " << r.patterns
              << " fp32 inputs differ from the reference");
    for (const Mismatch& m : t.first)
      UNSCOPED_INFO(what << ": "
                         << test::DescribeMismatch(
                                m, true, f, c < 6 ? kCheckRounding[c] : Rounding::kNearestEven));
    CHECK(t.mismatches == 0);
  }
  double cpu = r.decode_seconds;
  for (const Tally& t : r.checks) cpu += t.seconds;
  std::printf(
      "  %-20s reference decode %.1f s/2 cores; all rows %.1f s/2 cores; wall %.1f s "
      "on %u threads\n",
      f.name.c_str(), r.decode_seconds / 2, cpu / 2, r.wall_seconds, r.threads);
  std::fflush(stdout);
  return cpu / 2;
}

void CheckEveryFormat(Walk walk) {
  double total = 0;
  total += CheckAndReport<Half>(Fp16(), "Half", walk);
  total += CheckAndReport<BFloat16>(BF16(), "BFloat16", walk);
  total += CheckAndReport<void>(Fp8E4M3(), "", walk);
  total += CheckAndReport<void>(Fp8E5M2(), "", walk);
  total += CheckAndReport<void>(TF32(), "", walk);
  std::printf("  total %.1f s/2 cores (CPU time / 2)\n", total);
}

TEST_CASE(
    "RoundToFormat and the Half and BFloat16 constructors match the reference on every fp32 input "
    "of the binades where each format underflows or overflows, and on samples of every other",
    "[slow]") {
  std::printf(
      "fp32 -> format rounding (every pattern of the edge binades, 16 blocks of the others):\n");
  CheckEveryFormat(Walk::kEdges);
}

TEST_CASE(
    "RoundToFormat and the Half and BFloat16 constructors match the reference on every fp32 input "
    "in each format's range (all 2^32 for bf16 and tf32)",
    "[.exhaustive]") {
  std::printf(
      "exhaustive fp32 -> format rounding (every pattern of the binades that matter, per row):\n");
  CheckEveryFormat(Walk::kExhaustive);
}

}  // namespace
}  // namespace carrier
