// carrier bench: the SIMD and OpenMP kernels timed against a plain scalar loop compiled with the
// same flags, the two-pass SIMD versions of log-sum-exp and variance, native against pinned
// mode, and (with --peers) numpy/scipy on the same sizes, dtypes and data in the same run.
//
// Data: x_i = 8 u_i - 4 with u_i = (SplitMix64(seed + i) >> 11) 2^-53, rounded to the storage
// type; scripts/bench_peers.py generates the same values with numpy's uint64 arithmetic. Each
// timing is the min and the median of R repeats (R scaled so each size runs ~2^25 elements in
// all, between 3 and 200); GB/s counts the bytes of input read once.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "io/atomic_file.hpp"
#include "util/stats.hpp"
#include "verbs/verbs.hpp"

#if defined(CARRIER_HAVE_SIMD_KERNELS) && CARRIER_HAVE_SIMD_KERNELS

#include "core/carrier.hpp"
#include "core/hash.hpp"
#include "kernels/simd/simd.hpp"
#if defined(CARRIER_HAVE_OMP_KERNELS) && CARRIER_HAVE_OMP_KERNELS
#include <omp.h>

#include "kernels/omp/omp.hpp"
#endif
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include "precision/reference/reference.hpp"
#endif

namespace carrier::cli {
namespace {

// The bench case whose peer rows carry variance values (scripts/bench_peers.py's label).
constexpr const char* kVarianceCase = "welford";

double BenchValue(std::uint64_t seed, std::uint64_t i) {
  return 8.0 * (static_cast<double>(SplitMix64(seed + i) >> 11) * 0x1.0p-53) - 4.0;
}

template <class TS>
std::vector<TS> Data(std::uint64_t seed, std::size_t n) {
  std::vector<TS> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<TS, float> || std::is_same_v<TS, double>) {
      x[i] = static_cast<TS>(BenchValue(seed, i));
    } else {
      x[i] = TS(BenchValue(seed, i));
    }
  }
  return x;
}

struct BenchRow {
  std::string op, dtype, impl;
  std::size_t n = 0;
  double min_s = 0, median_s = 0;
  std::size_t bytes_per_elem = 0;
  std::string note;
};

// Keeps the optimiser from dropping a result.
volatile double g_sink = 0;

template <class F>
BenchRow Time(const std::string& op, const std::string& dtype, const std::string& impl,
              std::size_t n, std::size_t bytes, int repeats, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    t.push_back(util::Seconds([&] { g_sink = g_sink + static_cast<double>(f()); }));
  }
  BenchRow row{op,    dtype, impl, n, *std::min_element(t.begin(), t.end()), util::Median(t),
               bytes, ""};
  return row;
}

// Plain scalar loops, compiled with the project's flags (-O3 in Release, -ffp-contract=off, no
// -ffast-math: so the compiler may not vectorise or reorder the fp reductions).
template <class TS>
float ToF(TS v) {
  if constexpr (std::is_same_v<TS, float>)
    return v;
  else
    return v.ToFloat();
}

template <class TS>
auto ScalarSum(const std::vector<TS>& x) {
  using T = simd::Compute<TS>;
  T s = 0;
  for (const TS& v : x) {
    if constexpr (std::is_same_v<TS, double>)
      s += v;
    else
      s += ToF(v);
  }
  return s;
}

struct Peer {
  std::string op, dtype, impl;
  std::size_t n;
  double min_s, median_s;
  double value;
};

std::vector<Peer> RunPeers(const std::string& sizes, std::uint64_t seed, int max_repeats) {
  const std::string cmd =
      "/usr/bin/python3 " CARRIER_SOURCE_DIR "/scripts/bench_peers.py --sizes " + sizes +
      " --seed " + std::to_string(seed) + " --max-repeats " + std::to_string(max_repeats);
  std::vector<Peer> peers;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) throw UsageError("bench: cannot run " + cmd);
  char line[512];
  bool header = true;  // the script's first line names the columns
  while (std::fgets(line, sizeof line, p) != nullptr) {
    if (header) {
      header = false;
      continue;
    }
    std::istringstream is(line);
    Peer r;
    std::string n, mn, md, val;
    if (!std::getline(is, r.op, ',') || !std::getline(is, r.dtype, ',') ||
        !std::getline(is, r.impl, ',') || !std::getline(is, n, ',') || !std::getline(is, mn, ',') ||
        !std::getline(is, md, ',') || !std::getline(is, val))
      continue;
    r.n = std::stoull(n);
    r.min_s = std::stod(mn);
    r.median_s = std::stod(md);
    r.value = std::stod(val);
    peers.push_back(r);
  }
  const int rc = pclose(p);
  if (rc != 0)
    throw UsageError("bench: the peers script failed (exit " + std::to_string(rc) + "): " + cmd);
  return peers;
}

}  // namespace

int RunBench(const std::vector<std::string>& argv) {
  Args args("bench", argv, {"sizes", "seed", "lanes", "max-repeats", "csv"}, {"peers", "quick"});
  // Probed before the measurements, so a bad path fails at once rather than after minutes;
  // written whole at the end (io/atomic_file.hpp), so an existing file survives a failed run.
  const std::optional<std::string> csv_path = args.Get("csv");
  if (csv_path) {
    std::ofstream probe(*csv_path + ".tmp");
    if (!probe) args.Fail("--csv: cannot write '" + *csv_path + "'");
    probe.close();
    std::remove((*csv_path + ".tmp").c_str());
  }
  std::string sizes_text =
      args.Get("sizes").value_or(args.Has("quick") ? "12,16,20" : "12,16,20,24,26");
  std::vector<int> pows;
  {
    std::istringstream is(sizes_text);
    std::string tok;
    while (std::getline(is, tok, ',')) {
      const auto v = ParseCountText(tok);
      if (!v || *v < 4 || *v > 28)
        args.Fail("--sizes takes powers of two as exponents 4..28, e.g. 12,16,20, got '" + tok +
                  "'");
      pows.push_back(static_cast<int>(*v));
    }
    if (pows.empty()) args.Fail("--sizes is empty");
  }
  const std::uint64_t seed = args.Count("seed", 1);
  const std::uint64_t lanes = args.Count("lanes", 32);
  if (lanes != 16 && lanes != 32 && lanes != 64)
    args.Fail("--lanes must be 16, 32 or 64 (pinned K)");
  const int max_repeats =
      static_cast<int>(std::min<std::uint64_t>(args.Count("max-repeats", 200), 10000));
  if (max_repeats < 1) args.Fail("--max-repeats must be positive");

  const Schedule pinned = Schedule::Strided(lanes);
  const Schedule pinned_tiles = Schedule::StridedTiles(lanes, 16, true);
  std::vector<BenchRow> rows;
  std::map<std::string, double> var_values;  // "impl" -> fp64 population variance at 2^24
  std::cerr << "bench: target " << simd::CurrentTarget() << ", pinned K = " << lanes << "\n";

  for (int p : pows) {
    const std::size_t n = std::size_t{1} << p;
    const int reps =
        std::max(3, std::min(max_repeats, static_cast<int>((std::size_t{1} << 25) / n)));
    std::cerr << "bench: n = 2^" << p << " (" << reps << " repeats)\n";
    const auto f32 = Data<float>(seed, n);
    const auto f64 = Data<double>(seed, n);
    const auto h16 = Data<Half>(seed, n);
    const auto b16 = Data<BFloat16>(seed, n);
    using L32 = OnlineSoftmax<float, PortableExp>;
    using L64 = OnlineSoftmax<double, PortableExp>;
    const Schedule native_sum32 = simd::NativeSchedule<Sum<float>, float>();
    const Schedule native_lse32 = simd::NativeSchedule<L32, float>();
    const Schedule native_w64 = simd::NativeSchedule<Welford<double>, double>();

    // sum
    rows.push_back(Time("sum", "fp32", "scalar loop", n, 4, reps, [&] { return ScalarSum(f32); }));
    rows.push_back(Time("sum", "fp32", "simd " + ToString(pinned), n, 4, reps,
                        [&] { return simd::Reduce<Sum<float>, float>(f32.data(), n, pinned).s; }));
    rows.push_back(Time("sum", "fp32", "simd native " + ToString(native_sum32), n, 4, reps, [&] {
      return simd::Reduce<Sum<float>, float>(f32.data(), n, native_sum32).s;
    }));
    rows.push_back(Time("sum", "fp64", "scalar loop", n, 8, reps, [&] { return ScalarSum(f64); }));
    rows.push_back(Time("sum", "fp64", "simd " + ToString(pinned), n, 8, reps, [&] {
      return simd::Reduce<Sum<double>, double>(f64.data(), n, pinned).s;
    }));
    rows.push_back(Time("sum", "fp16", "simd " + ToString(pinned), n, 2, reps,
                        [&] { return simd::Reduce<Sum<float>, Half>(h16.data(), n, pinned).s; }));
    rows.push_back(Time("sum", "bf16", "scalar loop", n, 2, reps, [&] { return ScalarSum(b16); }));
    rows.push_back(Time("sum", "bf16", "simd " + ToString(pinned), n, 2, reps, [&] {
      return simd::Reduce<Sum<float>, BFloat16>(b16.data(), n, pinned).s;
    }));
    // neumaier (Compensated)
    rows.push_back(Time("neumaier", "fp64", "scalar loop", n, 8, reps, [&] {
      return Compensated<double>::Finalize(Fold<Compensated<double>>(f64.data(), n));
    }));
    rows.push_back(Time("neumaier", "fp64", "simd " + ToString(pinned), n, 8, reps, [&] {
      return Compensated<double>::Finalize(
          simd::Reduce<Compensated<double>, double>(f64.data(), n, pinned));
    }));
    // max, argmax, norm2, dot
    rows.push_back(Time("max", "fp32", "scalar loop", n, 4, reps,
                        [&] { return Fold<Max<float>>(f32.data(), n).m; }));
    rows.push_back(Time("max", "fp32", "simd " + ToString(pinned), n, 4, reps,
                        [&] { return simd::Reduce<Max<float>, float>(f32.data(), n, pinned).m; }));
    rows.push_back(Time("argmax", "fp32", "simd seq", n, 4, reps, [&] {
      return simd::Reduce<ArgMax<float>, float>(f32.data(), n, Schedule::Seq()).index;
    }));
    rows.push_back(Time("norm2", "fp32", "scalar loop", n, 4, reps, [&] {
      return ScaledNorm2<float>::Finalize(Fold<ScaledNorm2<float>>(f32.data(), n));
    }));
    rows.push_back(Time("norm2", "fp32", "simd " + ToString(pinned), n, 4, reps, [&] {
      return ScaledNorm2<float>::Finalize(
          simd::Reduce<ScaledNorm2<float>, float>(f32.data(), n, pinned));
    }));
    rows.push_back(Time("dot", "fp32", "simd " + ToString(pinned), n, 8, reps, [&] {
      return simd::ReduceDot<float>(f32.data(), f32.data(), n, pinned).s;
    }));
    // lse
    rows.push_back(Time("lse", "fp32", "scalar loop", n, 4, std::max(3, reps / 4),
                        [&] { return L32::Finalize(Fold<L32>(f32.data(), n)).lse; }));
    rows.push_back(Time("lse", "fp32", "simd " + ToString(pinned), n, 4, reps, [&] {
      return L32::Finalize(simd::Reduce<L32, float>(f32.data(), n, pinned)).lse;
    }));
    rows.push_back(Time("lse", "fp32", "simd " + ToString(pinned_tiles), n, 4, reps, [&] {
      return L32::Finalize(simd::Reduce<L32, float>(f32.data(), n, pinned_tiles)).lse;
    }));
    rows.push_back(Time("lse", "fp32", "simd native " + ToString(native_lse32), n, 4, reps, [&] {
      return L32::Finalize(simd::Reduce<L32, float>(f32.data(), n, native_lse32)).lse;
    }));
    rows.push_back(Time("lse", "fp32", "simd two-pass", n, 4, reps,
                        [&] { return L32::Finalize(simd::TwoPassLse<float>(f32.data(), n)).lse; }));
    {
      using F32 = OnlineSoftmax<float, simd::VectorFastExp>;
      const Schedule native_fast = simd::NativeSchedule<F32, float>();
      rows.push_back(Time(
          "lse", "fp32", "simd vecfast native " + ToString(native_fast), n, 4, reps,
          [&] { return F32::Finalize(simd::Reduce<F32, float>(f32.data(), n, native_fast)).lse; }));
      rows.push_back(Time("lse", "fp32", "simd vecfast two-pass", n, 4, reps, [&] {
        return F32::Finalize(simd::TwoPassLseFast<float>(f32.data(), n)).lse;
      }));
    }
    rows.push_back(Time("lse", "fp64", "simd " + ToString(pinned_tiles), n, 8, reps, [&] {
      return L64::Finalize(simd::Reduce<L64, double>(f64.data(), n, pinned_tiles)).lse;
    }));
#if defined(CARRIER_HAVE_OMP_KERNELS) && CARRIER_HAVE_OMP_KERNELS
    {
      const Schedule omp2 = ParseSchedule("omp:2:seq:" + ToString(native_lse32));
      const int initial = omp_get_max_threads();
      omp_set_num_threads(1);
      rows.push_back(Time("lse", "fp32", ToString(omp2) + " 1 thread", n, 4, reps, [&] {
        return L32::Finalize(omp::Reduce<L32, float>(f32.data(), n, omp2)).lse;
      }));
      omp_set_num_threads(2);
      rows.push_back(Time("lse", "fp32", ToString(omp2) + " 2 threads", n, 4, reps, [&] {
        return L32::Finalize(omp::Reduce<L32, float>(f32.data(), n, omp2)).lse;
      }));
      omp_set_num_threads(initial);
    }
#endif
    // variance
    rows.push_back(Time("welford", "fp64", "scalar loop", n, 8, std::max(3, reps / 4), [&] {
      return Welford<double>::Finalize(Fold<Welford<double>>(f64.data(), n)).var_population;
    }));
    rows.push_back(Time("welford", "fp64", "simd " + ToString(pinned), n, 8, reps, [&] {
      return Welford<double>::Finalize(simd::Reduce<Welford<double>, double>(f64.data(), n, pinned))
          .var_population;
    }));
    rows.push_back(Time("welford", "fp64", "simd native " + ToString(native_w64), n, 8, reps, [&] {
      return Welford<double>::Finalize(
                 simd::Reduce<Welford<double>, double>(f64.data(), n, native_w64))
          .var_population;
    }));
    rows.push_back(Time("welford", "fp64", "simd two-pass", n, 8, reps, [&] {
      return Welford<double>::Finalize(simd::TwoPassVariance<double>(f64.data(), n)).var_population;
    }));
#if defined(CARRIER_HAVE_OMP_KERNELS) && CARRIER_HAVE_OMP_KERNELS
    // Chunks of 4096 merged pairwise: the accuracy of a pairwise tree at the cost of one thread.
    const Schedule var_tree =
        ParseSchedule("omp:" + std::to_string(std::max<std::size_t>(1, n / 4096)) +
                      ":pairwise:" + ToString(native_w64));
    {
      const int initial = omp_get_max_threads();
      omp_set_num_threads(1);
      rows.push_back(Time("welford", "fp64", ToString(var_tree) + " 1 thread", n, 8, reps, [&] {
        return Welford<double>::Finalize(
                   omp::Reduce<Welford<double>, double>(f64.data(), n, var_tree))
            .var_population;
      }));
      if (p == 24)
        var_values[ToString(var_tree) + " 1 thread"] =
            Welford<double>::Finalize(omp::Reduce<Welford<double>, double>(f64.data(), n, var_tree))
                .var_population;
      omp_set_num_threads(initial);
    }
#endif
    if (p == 24) {
      var_values["simd native " + ToString(native_w64)] =
          Welford<double>::Finalize(
              simd::Reduce<Welford<double>, double>(f64.data(), n, native_w64))
              .var_population;
      var_values["simd two-pass"] =
          Welford<double>::Finalize(simd::TwoPassVariance<double>(f64.data(), n)).var_population;
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
      const reference::Reference ref =
          reference::ReferenceWelford(std::span<const double>(f64.data(), n));
      var_values["reference"] = ref.as_double.at(1);
#endif
    }
  }

  std::vector<Peer> peers;
  if (args.Has("peers")) {
    std::string list;
    for (int p : pows) list += (list.empty() ? "" : ",") + std::to_string(p);
    peers = RunPeers(list, seed, max_repeats);
    for (const Peer& pr : peers) {
      const std::size_t bytes = pr.dtype == "fp64" ? 8 : pr.dtype == "fp32" ? 4 : 2;
      rows.push_back({pr.op, pr.dtype, pr.impl, pr.n, pr.min_s, pr.median_s, bytes, ""});
      // The peers' variance rows (the bench case label, not an op-table lookup).
      if (pr.op == kVarianceCase && pr.n == (std::size_t{1} << 24)) var_values[pr.impl] = pr.value;
    }
  }

  // One table.
  std::printf("%-8s %-5s %10s  %-52s %12s %12s %9s %9s\n", "op", "dtype", "n", "implementation",
              "min ms", "median ms", "GB/s", "ns/elem");
  for (const BenchRow& r : rows) {
    std::printf("%-8s %-5s %10zu  %-52s %12.4f %12.4f %9.2f %9.3f\n", r.op.c_str(), r.dtype.c_str(),
                r.n, r.impl.c_str(), r.min_s * 1e3, r.median_s * 1e3,
                static_cast<double>(r.n * r.bytes_per_elem) / r.median_s * 1e-9,
                r.median_s / static_cast<double>(r.n) * 1e9);
  }
  if (csv_path) {
    // analysis/README.md's bench schema: one case per (op, dtype, n), seconds = the median.
    std::ostringstream csv;
    csv << "case,variant,seconds,min_seconds,n,device\n" << std::setprecision(17);
    for (const BenchRow& r : rows)
      csv << r.op << ' ' << r.dtype << " 2^" << std::countr_zero(r.n) << ',' << '"' << r.impl << '"'
          << ',' << r.median_s << ',' << r.min_s << ',' << r.n << ',' << simd::CurrentTarget()
          << '\n';
    try {
      io::WriteFileAtomic(*csv_path, csv.str());
    } catch (const io::IoError& e) {
      throw UsageError("bench: --csv: " + std::string(e.what()));
    }
  }
  auto find = [&](const std::string& op, const std::string& dtype, std::size_t n,
                  const std::string& prefix) -> const BenchRow* {
    for (const BenchRow& r : rows)
      if (r.op == op && r.dtype == dtype && r.n == n && r.impl.rfind(prefix, 0) == 0) return &r;
    return nullptr;
  };
  std::printf("\nratios (medians measured side by side in this run; target in brackets)\n");
  auto ratio = [&](const std::string& what, const BenchRow* num, const BenchRow* den,
                   const std::string& target) {
    if (num == nullptr || den == nullptr) {
      std::printf("  %-72s n/a (size or peer not run)\n", what.c_str());
      return;
    }
    std::printf("  %-72s %8.2f  [%s]\n", what.c_str(), num->median_s / den->median_s,
                target.c_str());
  };
  const std::size_t n16 = std::size_t{1} << 16, n20 = std::size_t{1} << 20,
                    n24 = std::size_t{1} << 24, n26 = std::size_t{1} << 26;
  ratio("fp32 sum 2^16: scalar loop / simd " + ToString(pinned), find("sum", "fp32", n16, "scalar"),
        find("sum", "fp32", n16, "simd strided"), ">= 10");
  ratio("fp32 sum 2^16: scalar loop / simd native", find("sum", "fp32", n16, "scalar"),
        find("sum", "fp32", n16, "simd native"), ">= 10");
  ratio("fp32 lse 2^26: two-pass simd / one-pass native (tiles)",
        find("lse", "fp32", n26, "simd two-pass"), find("lse", "fp32", n26, "simd native"),
        ">= 1.2");
  ratio("fp32 lse 2^26, vecfast exp: two-pass simd / one-pass native (tiles)",
        find("lse", "fp32", n26, "simd vecfast two-pass"),
        find("lse", "fp32", n26, "simd vecfast native"), ">= 1.2");
  ratio("fp32 lse 2^26: scipy.special.logsumexp / one-pass native vecfast",
        find("lse", "fp32", n26, "scipy"), find("lse", "fp32", n26, "simd vecfast native"), ">= 3");
  ratio("fp32 lse 2^26: portable / vecfast exp, one-pass native",
        find("lse", "fp32", n26, "simd native"), find("lse", "fp32", n26, "simd vecfast native"),
        "report");
  ratio("fp32 lse 2^26: scipy.special.logsumexp / one-pass native",
        find("lse", "fp32", n26, "scipy"), find("lse", "fp32", n26, "simd native"), ">= 3");
  ratio("fp64 variance 2^24: numpy.var / simd native welford",
        find("welford", "fp64", n24, "numpy"), find("welford", "fp64", n24, "simd native"),
        ">= 2.5");
  ratio("fp64 variance 2^24: numpy.var / omp:4096:pairwise welford, 1 thread",
        find("welford", "fp64", n24, "numpy"), find("welford", "fp64", n24, "omp:4096:pairwise"),
        ">= 2.5");
  ratio("fp64 neumaier 2^26: simd neumaier / simd sum (time)",
        find("neumaier", "fp64", n26, "simd"), find("sum", "fp64", n26, "simd"), "<= 1.25");
  {
    const BenchRow* b = find("sum", "bf16", n26, "simd");
    const BenchRow* f = find("sum", "fp32", n26, "simd strided");
    ratio("bf16 sum 2^26: elements/s of bf16 storage / fp32 storage", f, b, ">= 1.6");
  }
  ratio("omp:2 lse 2^20: 1 thread / 2 threads",
        find("lse", "fp32", n20,
             "omp:2:seq:" +
                 ToString(simd::NativeSchedule<OnlineSoftmax<float, PortableExp>, float>()) + " 1"),
        find("lse", "fp32", n20,
             "omp:2:seq:" +
                 ToString(simd::NativeSchedule<OnlineSoftmax<float, PortableExp>, float>()) + " 2"),
        ">= 1.7");
  {
    // Threads are the most sensitive to other load on a shared 2-core machine: the ratio of the
    // minima (the least disturbed repeats) is printed beside the medians.
    const std::string omp_prefix =
        "omp:2:seq:" + ToString(simd::NativeSchedule<OnlineSoftmax<float, PortableExp>, float>());
    const BenchRow* one = find("lse", "fp32", n20, omp_prefix + " 1");
    const BenchRow* two = find("lse", "fp32", n20, omp_prefix + " 2");
    if (one != nullptr && two != nullptr)
      std::printf("  %-72s %8.2f  [>= 1.7]\n",
                  "omp:2 lse 2^20: 1 thread / 2 threads, ratio of the minima",
                  one->min_s / two->min_s);
  }
  ratio("omp:2 lse 2^20: simd native (no omp) / omp 2 threads",
        find("lse", "fp32", n20, "simd native"),
        find("lse", "fp32", n20,
             "omp:2:seq:" +
                 ToString(simd::NativeSchedule<OnlineSoftmax<float, PortableExp>, float>()) + " 2"),
        "(context)");
  for (std::size_t n : {n16, n26}) {
    const std::string sz = n == n16 ? "2^16" : "2^26";
    ratio("pinned/native time, fp32 sum " + sz, find("sum", "fp32", n, "simd strided"),
          find("sum", "fp32", n, "simd native"), "report");
    ratio("pinned/native time, fp32 lse " + sz + " (strided:K push / native tiles)",
          find("lse", "fp32", n, "simd strided:" + std::to_string(lanes)),
          find("lse", "fp32", n, "simd native"), "report");
    ratio("pinned/native time, fp32 lse " + sz + " (" + ToString(pinned_tiles) + " / native)",
          find("lse", "fp32", n, "simd " + ToString(pinned_tiles)),
          find("lse", "fp32", n, "simd native"), "report");
    ratio("pinned/native time, fp64 welford " + sz + " (strided:K push / native tiles)",
          find("welford", "fp64", n, "simd strided"), find("welford", "fp64", n, "simd native"),
          "report");
  }
  if (var_values.count("reference")) {
    const double ref = var_values["reference"];
    std::printf("\nfp64 population variance at 2^24 against the certified reference %.17g:\n", ref);
    for (const auto& [impl, v] : var_values)
      if (impl != "reference")
        std::printf("  %-52s %.17g  relative error %.3e\n", impl.c_str(), v,
                    std::fabs(v - ref) / std::fabs(ref));
  }
  return 0;
}

}  // namespace carrier::cli

#else

namespace carrier::cli {

int RunBench(const std::vector<std::string>& argv) {
  Args args("bench", argv, {"sizes", "seed", "lanes", "max-repeats", "csv"}, {"peers", "quick"});
  // Probed before the measurements, so a bad path fails at once rather than after minutes;
  // written whole at the end (io/atomic_file.hpp), so an existing file survives a failed run.
  const std::optional<std::string> csv_path = args.Get("csv");
  if (csv_path) {
    std::ofstream probe(*csv_path + ".tmp");
    if (!probe) args.Fail("--csv: cannot write '" + *csv_path + "'");
    probe.close();
    std::remove((*csv_path + ".tmp").c_str());
  }
  args.Fail(
      "bench needs the SIMD kernels, which are not built (Highway was not found at configure "
      "time)");
}

}  // namespace carrier::cli

#endif
