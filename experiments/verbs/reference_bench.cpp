// carrier reference-bench: the certified log-sum-exp reference, timed three ways side by side.
//
// Draws n values (default 10^6, generator `normal`, seed 42), rounds them to the storage
// format (--dtype, default fp32, round to nearest even) and computes log-sum-exp of the stored
// values with (1) the fast certified tier (fixed-point exp with a proven bound, the default
// reference), (2) the mpfr tier (p and 2p bits, escalating), (3) plain MPFR at 256 bits per
// element (not certified: the baseline). Each is run --repeats times, interleaved so that
// machine noise hits all three alike; the table gives median times, the ratio to the fast tier,
// the precision each used, and each value's relative difference from the mpfr tier's value.
// A last line times the lse bound's exps (exp(x_i - max) to long double) by the fixed-point
// kernel against glibc's expl, and counts the values where they differ.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/number_format.hpp"
#include "inputs/generators.hpp"
#include "precision/format.hpp"
#include "precision/rounding.hpp"
#include "util/stats.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include "precision/reference/fixed_exp.hpp"
#include "precision/reference/reference.hpp"
#endif

namespace carrier::cli {

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

namespace {

using util::Median;
using util::Seconds;

// |a - b| / |b| of two MPFR values (0 when equal).
double RelDiff(mpfr_srcptr a, mpfr_srcptr b) {
  if (mpfr_equal_p(a, b)) return 0;
  reference::MpfrValue t(64);
  mpfr_sub(t.get(), a, b, MPFR_RNDA);
  mpfr_div(t.get(), t.get(), b, MPFR_RNDA);
  return std::fabs(mpfr_get_d(t.get(), MPFR_RNDU));
}

// Three significant digits, plain notation where short ("0.0552", "36.6").
std::string G3(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

// A log2 bound as "2^-111.0" ("exact" for -inf).
std::string Log2Text(double e) {
  if (std::isinf(e) && e < 0) return "exact";
  char buf[32];
  std::snprintf(buf, sizeof buf, "2^%.1f", e);
  return buf;
}

struct ReferenceRow {
  std::string method;
  std::vector<double> times;
  std::string precision;
  std::string certified;
  reference::MpfrValue value;
};

}  // namespace

int RunReferenceBench(const std::vector<std::string>& argv) {
  Args args("reference-bench", argv, {"n", "seed", "dtype", "repeats", "gen"});
  const std::uint64_t n = args.Count("n", 1000000);
  const std::uint64_t seed = args.Count("seed", 42);
  const std::uint64_t repeats = args.Count("repeats", 3);
  const std::string dtype = args.Get("dtype").value_or("fp32");
  const std::string gen = args.Get("gen").value_or("normal");
  if (n < 1) args.Fail("--n must be at least 1");
  if (n > 100000000) args.Fail("--n must be at most 10^8 (the MPFR methods take about 5 us each)");
  if (repeats < 1 || repeats > 99) args.Fail("--repeats must be between 1 and 99");
  Format format;
  inputs::GeneratorSpec spec;
  try {
    format = ParseFormat(dtype);
  } catch (const std::invalid_argument& e) {
    args.Fail(std::string("--dtype: ") + e.what());
  }
  try {
    spec = inputs::ParseGenerator(gen);
  } catch (const std::invalid_argument& e) {
    args.Fail(std::string("--gen: ") + e.what());
  }

  std::vector<double> x = inputs::Generate(spec, n, seed);
  for (double& v : x) v = RoundToFormat(v, format, Rounding::kNearestEven);

  using reference::Method;
  reference::Options escalate;
  escalate.method = Method::kEscalate;
  reference::Reference fast_ref, mpfr_ref;
  std::vector<ReferenceRow> rows(3);
  rows[0].method = "fast tier (certified)";
  rows[1].method = "mpfr tier (p, 2p, escalating)";
  rows[2].method = "plain MPFR, 256 bits/element";
  for (std::uint64_t r = 0; r < repeats; ++r) {
    rows[0].times.push_back(Seconds([&] { fast_ref = reference::ReferenceLse(x); }));
    rows[1].times.push_back(Seconds([&] { mpfr_ref = reference::ReferenceLse(x, escalate); }));
    rows[2].times.push_back(Seconds([&] { rows[2].value = reference::PlainMpfrLse(x, 256); }));
  }
  auto describe = [](const reference::Reference& ref) {
    std::ostringstream p;
    if (ref.cert.tier == reference::Tier::kMpfr) {
      p << ref.cert.precision_bits << " & " << 2 * ref.cert.precision_bits << " bits";
    } else {
      p << std::string(reference::TierName(ref.cert.tier)) << " " << ref.cert.precision_bits
        << "-bit";
    }
    return p.str();
  };
  auto certificate = [](const reference::Reference& ref) {
    std::string c = ref.cert.certified ? "yes, " + Log2Text(ref.cert.error_bound_log2) : "NO";
    return c + (ref.cert.correctly_rounded ? ", CR" : "");
  };
  rows[0].precision = describe(fast_ref);
  rows[0].certified = certificate(fast_ref);
  rows[0].value = fast_ref.value.at(0);
  rows[1].precision = describe(mpfr_ref);
  rows[1].certified = certificate(mpfr_ref);
  rows[1].value = mpfr_ref.value.at(0);
  rows[2].precision = "256 bits";
  rows[2].certified = "no (baseline)";

  const double t_fast = Median(rows[0].times);
  std::cout << "carrier reference-bench: log-sum-exp of n = " << n << " " << format.name
            << " values (" << spec.Text() << ", seed " << seed << "), median of " << repeats
            << " run(s) each, one thread\n\n";
  std::cout << std::left << std::setw(31) << "method" << std::setw(12) << "median s"
            << std::setw(12) << "x fast" << std::setw(20) << "precision" << std::setw(24)
            << "certified (bound)" << std::setw(26) << "lse (double)"
            << "rel. diff vs mpfr tier\n";
  std::cout << std::string(149, '-') << "\n";
  for (const ReferenceRow& row : rows) {
    const double t = Median(row.times);
    std::cout << std::left << std::setw(31) << row.method << std::setw(12) << G3(t) << std::setw(12)
              << G3(t / t_fast) << std::setw(20) << row.precision << std::setw(24) << row.certified
              << std::setw(26) << Shortest(row.value.ToDouble())
              << Sig(RelDiff(row.value.get(), rows[1].value.get()), 3) << "\n";
  }
  const double plain_ratio = Median(rows[2].times) / t_fast;
  std::cout << "\ntarget: fast tier <= 1 s: " << (t_fast <= 1.0 ? "met" : "NOT met") << " ("
            << G3(t_fast)
            << " s); plain MPFR 256 / fast >= 20: " << (plain_ratio >= 20 ? "met" : "NOT met")
            << " (" << G3(plain_ratio) << "x)\n";
  // The lse and softmax bounds' exps (precision/op_bounds.cpp): exp(x_i - M) rounded to long
  // double by the fixed-point kernel (reference::ExpShiftedLongDouble), against glibc's expl
  // of the same argument (what the bounds called before), one thread, interleaved.
  {
    const double mx = *std::max_element(x.begin(), x.end());
    std::vector<long double> by_kernel(x.size()), by_expl(x.size());
    std::vector<double> t_kernel, t_expl;
    for (std::uint64_t r = 0; r < repeats; ++r) {
      t_kernel.push_back(
          Seconds([&] { reference::ExpShiftedLongDouble(x, mx, by_kernel.data()); }));
      t_expl.push_back(Seconds([&] {
        for (std::size_t i = 0; i < x.size(); ++i)
          by_expl[i] = std::exp(static_cast<long double>(x[i]) - mx);
      }));
    }
    std::uint64_t differ = 0;
    for (std::size_t i = 0; i < x.size(); ++i) differ += by_kernel[i] != by_expl[i] ? 1 : 0;
    const double per = 1e9 / static_cast<double>(n);
    std::cout << "\nbound exps, exp(x_i - max) to long double: fixed-point kernel "
              << G3(Median(t_kernel) * per) << " ns/value, glibc expl " << G3(Median(t_expl) * per)
              << " ns/value (" << G3(Median(t_expl) / Median(t_kernel)) << "x); they differ in "
              << differ << " of " << n
              << " values (the kernel's are correctly rounded; expl's x87 f2xm1 is not)\n";
  }
  if (!fast_ref.cert.note.empty()) std::cout << "fast tier note: " << fast_ref.cert.note << "\n";
  if (!mpfr_ref.cert.note.empty()) std::cout << "mpfr tier note: " << mpfr_ref.cert.note << "\n";
  return 0;
}

#else

int RunReferenceBench(const std::vector<std::string>& argv) {
  Args args("reference-bench", argv, {"n", "seed", "dtype", "repeats", "gen"});
  args.Fail("this build has no MPFR (CARRIER_WITH_MPFR=OFF): certified references need it");
}

#endif

}  // namespace carrier::cli
