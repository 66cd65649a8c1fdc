// carrier study NAME: the paper experiments that are not sweep grids (experiments/studies/).
//
// Each study parses its own flags strictly (cli::Args: bad input is one line and exit 2),
// computes everything first and then writes its CSV whole (studies/csv_out.hpp), so a failed
// run never leaves a partial or clobbered file.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/args.hpp"
#include "cli/cost.hpp"
#include "precision/format.hpp"
#include "precision/rounding.hpp"
#include "studies/attention_deviation.hpp"
#include "studies/csv_out.hpp"
#include "studies/lse_mnist.hpp"
#include "studies/softmax_passes.hpp"
#include "studies/stagnation.hpp"
#include "verbs/verbs.hpp"

namespace carrier::cli {

const char kStudyHelp[] =
    "usage: carrier study NAME [options] [-o FILE]\n"
    "\n"
    "Runs one paper experiment (papers/*/reproduce.sh call these) and writes its CSV to -o\n"
    "FILE (written whole or not at all) or to stdout. Bad input: one line, exit 2.\n"
    "\n"
    "  stagnation --series harmonic|ones --dtype fp16|bf16|fp32 [--round MODE] [--seed S]\n"
    "             [--max-terms N]\n"
    "      Recursive summation of 1/k (each term rounded to nearest even into the format) or of\n"
    "      ones, every addition rounded with MODE (rne default; rna rz ru rd ro sr; sr seeded\n"
    "      by S, default 0), until the first term whose addition leaves the sum unchanged with\n"
    "      certainty (under sr only a zero term or an infinite sum does), or N terms (default\n"
    "      2^22). One row: series,dtype,round,seed,stagnation_term (empty when none),\n"
    "      stagnation_value (the sum then, or after N terms),exact_partial_sum_at_stagnation\n"
    "      (the exact sum of the mathematical terms up to that term).\n"
    "\n"
    "  lse-mnist [--input FILE] [--dtype fp16,bf16]\n"
    "      Blanchard, Higham & Higham 2021: each vector of FILE (CSV: a header, then one vector\n"
    "      per row; default papers/bhh2021-lse-softmax/data/bhh2021_mnist_presoftmax.csv) is\n"
    "      rounded to each format (list; also fp8e4m3 fp8e5m2 tf32) and log-sum-exp and\n"
    "      softmax are computed there (rne) by lse-basic, lse-shifted, softmax-basic,\n"
    "      softmax-shifted, softmax-shifted-nodiv and softmax-basic-nodiv\n"
    "      (studies/lse_mnist.hpp). One row per\n"
    "      dtype,vector,algorithm: overflow (an exp or the sum overflowed), value (lse, or\n"
    "      softmax at the largest x), err_fp32_u (relative error against the same algorithm in\n"
    "      fp32, in units of the format's u; softmax: componentwise max over the components\n"
    "      not below the smallest normal), err_ref_u (the same against the certified\n"
    "      reference), err_ref_norm_u (softmax normwise), bound_u (leading term of the error\n"
    "      bound), max_x, sum_g (softmax: the sum of the computed g). Needs MPFR.\n"
    "\n"
    "  softmax-passes [--count-n N] [--n LIST] [--repeats R] [--seed S] [--scale X]\n"
    "                 [--timing FILE] [--batch LIST] [--topk K]\n"
    "      Milakov & Gimelshein 2018: naive, safe, online (their Algorithm 3) and online-branch\n"
    "      (one exp per element) softmax as plain fp32 loops (studies/softmax_passes.hpp) on\n"
    "      N(0,1)*X values (X default 4, seed S default 42). -o gets, per variant, the loads,\n"
    "      stores and exps per element counted on N (default 1000) values and the largest\n"
    "      relative difference from an fp64 softmax. --timing FILE also times every variant\n"
    "      at each n of LIST (default 1e3,1e4,1e5,1e6,1e7), R repeats (default 7) interleaved,\n"
    "      one thread: min and median seconds, the speed-up over safe (SIMD variants over\n"
    "      simd-safe) and the largest relative error; with the SIMD kernels built also\n"
    "      simd-safe and simd-online (kernels/simd, PortableExp). --batch LIST (default 1)\n"
    "      times BATCH rows of n values each, row by row (the paper's batched shape; batch x n\n"
    "      at most 4*10^8). --topk K adds Softmax+TopK: safe-topk (safe softmax, then a TopK\n"
    "      pass over y) and online-topk (one fused pass), counted and timed alike.\n"
    "\n"
    "  attention-deviation --precision LIST [--baseline-precision LIST] [--algorithm fa2,fa1]\n"
    "                      [--n LIST] [--block-r LIST] [--block-c LIST] [--square]\n"
    "                      [--tiles BRxBC;...] [--head-dim D] [--trials T] [--seed S] [--gen G]\n"
    "                      [--max-seconds S] [--jobs J]\n"
    "      Golden et al. 2024: per policy of LIST (';'-separated precision policies or presets,\n"
    "      each optionally with ew=FORMAT, or torch-FORMAT: precision/attention_model.hpp), n,\n"
    "      trial and tile, |FA - golden|, |BA - golden| and |FA - BA| (max, mean, std over the\n"
    "      n x d outputs); golden = the baseline in fp64 on the same stored inputs; BA under\n"
    "      the baseline LIST when given (one for all, or one per policy; e.g. eager-bf16), else\n"
    "      under each policy. --tiles lists (Br, Bc) pairs\n"
    "      instead of the Br x Bc grid. Defaults: fa2, n 256,1024, Br = Bc = 64, D 64, T 10,\n"
    "      S 1, G normal. The (n, trial) inputs run on J threads (default: the cores); the\n"
    "      rows do not depend on J. Before it starts, one trial is timed at smaller n and scaled\n"
    "      (n^2, divided by J); past --max-seconds (default 1800; 0: no limit) it is refused\n"
    "      with the --trials or n that fits. A terminal shows the inputs done and the time left.\n";

namespace {

// The rounding modes a study accepts, by their CLI names.
Rounding ParseRoundingFlag(const Args& args, const std::string& text) {
  try {
    return ParseRounding(text);
  } catch (const std::invalid_argument& e) {
    args.Fail(std::string("--round: ") + e.what());
  }
}

int StudyStagnation(const std::vector<std::string>& argv) {
  Args args("study stagnation", argv, {"series", "dtype", "round", "seed", "max-terms", "o"});
  studies::StagnationSpec spec;
  const std::string series = args.Choice("series", {"harmonic", "ones"}, "");
  if (series.empty()) args.Fail("missing required flag --series (harmonic or ones)");
  spec.series = series == "harmonic" ? studies::Series::kHarmonic : studies::Series::kOnes;
  const std::string dtype = args.Choice("dtype", {"fp16", "bf16", "fp32"}, "");
  if (dtype.empty()) args.Fail("missing required flag --dtype (fp16, bf16 or fp32)");
  spec.format = ParseFormat(dtype);
  const std::string round = args.Get("round").value_or("rne");
  spec.rounding = ParseRoundingFlag(args, round);
  spec.seed = args.Count("seed", 0);
  spec.max_terms = args.Count("max-terms", std::uint64_t{1} << 22);
  if (spec.max_terms < 1 || spec.max_terms > (std::uint64_t{1} << 32))
    args.Fail("--max-terms must be between 1 and 2^32, got " + std::to_string(spec.max_terms));

  const studies::StagnationResult r = studies::RunStagnation(spec);
  std::ostringstream csv;
  csv << "series,dtype,round,seed,stagnation_term,stagnation_value,"
         "exact_partial_sum_at_stagnation\n";
  csv << series << "," << dtype << "," << RoundingName(spec.rounding) << "," << spec.seed << ","
      << (r.stagnated ? std::to_string(r.term) : std::string()) << "," << studies::Field(r.value)
      << "," << studies::Field(static_cast<double>(r.exact_partial_sum)) << "\n";
  studies::WriteCsv(args.Get("o").value_or(""), csv.str(), "carrier study stagnation");
  return 0;
}

// A comma-separated list of format names, each one of `allowed`.
std::vector<Format> FormatList(const Args& args, const std::string& flag, const std::string& text,
                               const std::vector<std::string>& allowed) {
  std::vector<Format> formats;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string name =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      args.Fail("--" + flag + ": '" + name + "' is not one of " + list);
    }
    formats.push_back(ParseFormat(name));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return formats;
}

int StudyLseMnist(const std::vector<std::string>& argv) {
  Args args("study lse-mnist", argv, {"input", "dtype", "o"});
  const std::string input =
      args.Get("input").value_or("papers/bhh2021-lse-softmax/data/bhh2021_mnist_presoftmax.csv");
  const std::vector<Format> formats =
      FormatList(args, "dtype", args.Get("dtype").value_or("fp16,bf16"),
                 {"fp8e4m3", "fp8e5m2", "fp16", "bf16", "tf32"});
#if !(defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR)
  args.Fail("needs the certified references, and this carrier was built without MPFR");
#endif
  const auto vectors = studies::ReadVectorsCsv(input);
  const auto rows = studies::RunLseMnist(vectors, formats);
  std::ostringstream csv;
  csv << "dtype,vector,algorithm,overflow,value,err_fp32_u,err_ref_u,err_ref_norm_u,bound_u,"
         "max_x,sum_g\n";
  for (const auto& r : rows)
    csv << r.dtype << "," << r.vector << "," << r.algorithm << "," << (r.overflow ? 1 : 0) << ","
        << studies::Field(r.value) << "," << studies::Field(r.err_fp32_u) << ","
        << studies::Field(r.err_ref_u) << "," << studies::Field(r.err_ref_norm_u) << ","
        << studies::Field(r.bound_u) << "," << studies::Field(r.max_x) << ","
        << studies::Field(r.sum_g) << "\n";
  studies::WriteCsv(args.Get("o").value_or(""), csv.str(), "carrier study lse-mnist");
  return 0;
}

// A comma-separated list of counts (1000, 1e6, 2^20 forms).
std::vector<std::uint64_t> CountList(const Args& args, const std::string& flag,
                                     const std::string& text) {
  std::vector<std::uint64_t> counts;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto v = ParseCountText(item);
    if (!v) args.Fail("--" + flag + ": '" + item + "' is not a count (e.g. 1000, 1e6, 2^20)");
    counts.push_back(*v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return counts;
}

int StudySoftmaxPasses(const std::vector<std::string>& argv) {
  Args args("study softmax-passes", argv,
            {"n", "count-n", "repeats", "seed", "scale", "o", "timing", "batch", "topk"});
  const std::uint64_t count_n = args.Count("count-n", 1000);
  const std::uint64_t repeats = args.Count("repeats", 7);
  const std::uint64_t seed = args.Count("seed", 42);
  const std::uint64_t topk = args.Count("topk", 0);
  const std::vector<std::uint64_t> sizes =
      CountList(args, "n", args.Get("n").value_or("1e3,1e4,1e5,1e6,1e7"));
  const std::vector<std::uint64_t> batches =
      CountList(args, "batch", args.Get("batch").value_or("1"));
  double scale = 4;
  if (auto text = args.Get("scale")) {
    char* end = nullptr;
    scale = std::strtod(text->c_str(), &end);
    if (text->empty() || *end != '\0' || !std::isfinite(scale) || !(scale > 0))
      args.Fail("--scale must be a positive finite number, got '" + *text + "'");
  }
  if (count_n < 1 || count_n > 100000000) args.Fail("--count-n must be between 1 and 10^8");
  if (repeats < 1 || repeats > 1000) args.Fail("--repeats must be between 1 and 1000");
  if (topk > 1000) args.Fail("--topk must be between 1 and 1000 (0: no Softmax+TopK rows)");
  for (std::uint64_t n : sizes)
    if (n < 1 || n > 200000000) args.Fail("--n values must be between 1 and 2*10^8");
  for (std::uint64_t b : batches)
    if (b < 1 || b > 100000) args.Fail("--batch values must be between 1 and 10^5");
  // batch x n floats are held twice (x and y): refuse what the machine cannot hold.
  constexpr std::uint64_t kMaxElements = 400000000;  // 3.2 GB of fp32 x and y
  for (std::uint64_t b : batches)
    for (std::uint64_t n : sizes)
      if (b * n > kMaxElements)
        args.Fail("--batch " + std::to_string(b) + " x --n " + std::to_string(n) +
                  " exceeds 4*10^8 values (3.2 GB of fp32 input and output)");

  std::ostringstream passes;
  passes << "variant,n,loads_per_element,stores_per_element,accesses_per_element,"
            "exps_per_element,max_rel_error\n";
  std::vector<studies::SoftmaxPassCount> counts = studies::CountSoftmaxPasses(count_n, seed, scale);
  if (topk > 0)
    for (const auto& c : studies::CountTopKPasses(count_n, seed, scale, topk)) counts.push_back(c);
  for (const auto& c : counts)
    passes << c.variant << "," << count_n << "," << studies::Field(c.loads_per_element) << ","
           << studies::Field(c.stores_per_element) << ","
           << studies::Field(c.loads_per_element + c.stores_per_element) << ","
           << studies::Field(c.exps_per_element) << "," << studies::Field(c.max_rel_error) << "\n";
  std::ostringstream timing;
  if (args.Get("timing")) {
    timing << "variant,batch,n,repeats,min_seconds,median_seconds,speedup_min_vs_safe,"
              "speedup_median_vs_safe,max_rel_error\n";
    for (std::uint64_t batch : batches) {
      for (std::uint64_t n : sizes) {
        auto rows = studies::TimeSoftmax(n, repeats, seed, scale, batch);
        if (topk > 0)
          for (const auto& r : studies::TimeSoftmaxTopK(n, batch, repeats, seed, scale, topk))
            rows.push_back(r);
        // Each variant against its own family's safe one (plain loops: safe; SIMD: simd-safe;
        // Softmax+TopK: safe-topk).
        auto find = [&](const std::string& name) {
          return *std::find_if(rows.begin(), rows.end(),
                               [&](const auto& r) { return r.variant == name; });
        };
        for (const auto& r : rows) {
          const std::string base = r.variant.rfind("simd-", 0) == 0              ? "simd-safe"
                                   : r.variant.find("topk") != std::string::npos ? "safe-topk"
                                                                                 : "safe";
          const auto& safe = find(base);
          timing << r.variant << "," << r.batch << "," << r.n << "," << r.repeats << ","
                 << studies::Field(r.min_seconds) << "," << studies::Field(r.median_seconds) << ","
                 << studies::Field(safe.min_seconds / r.min_seconds) << ","
                 << studies::Field(safe.median_seconds / r.median_seconds) << ","
                 << studies::Field(r.max_rel_error) << "\n";
        }
      }
    }
  }
  studies::WriteCsv(args.Get("o").value_or(""), passes.str(), "carrier study softmax-passes");
  if (args.Get("timing"))
    studies::WriteCsv(*args.Get("timing"), timing.str(), "carrier study softmax-passes");
  return 0;
}

// A ';'-separated list of non-empty items (policies contain commas).
std::vector<std::string> SemicolonList(const Args& args, const std::string& flag,
                                       const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t semi = text.find(';', start);
    items.push_back(
        text.substr(start, semi == std::string::npos ? std::string::npos : semi - start));
    if (items.back().empty()) args.Fail("--" + flag + ": empty item in '" + text + "'");
    if (semi == std::string::npos) break;
    start = semi + 1;
  }
  return items;
}

int StudyAttentionDeviation(const std::vector<std::string>& argv) {
  Args args("study attention-deviation", argv,
            {"precision", "baseline-precision", "algorithm", "n", "block-r", "block-c", "tiles",
             "head-dim", "trials", "seed", "gen", "o", "max-seconds", "jobs"},
            {"square"});
  studies::AttentionDeviationSpec spec;
  spec.policies = SemicolonList(args, "precision", args.Require("precision"));
  for (const auto& a : SemicolonList(args, "algorithm", [&] {
         std::string t = args.Get("algorithm").value_or("fa2");
         for (char& c : t) c = c == ',' ? ';' : c;
         return t;
       }())) {
    if (a == "baseline") args.Fail("--algorithm: the baseline is always computed; give fa2, fa1");
    try {
      spec.algorithms.push_back(ParseAttentionAlgorithm(a));
    } catch (const std::invalid_argument& e) {
      args.Fail(std::string("--algorithm: ") + e.what());
    }
  }
  spec.seq_lens = CountList(args, "n", args.Get("n").value_or("256,1024"));
  spec.block_r = CountList(args, "block-r", args.Get("block-r").value_or("64"));
  spec.block_c = CountList(args, "block-c", args.Get("block-c").value_or("64"));
  spec.square_only = args.Has("square");
  if (args.Has("baseline-precision")) {
    spec.baselines = SemicolonList(args, "baseline-precision", *args.Get("baseline-precision"));
  }
  if (args.Has("tiles")) {
    if (args.Has("block-r") || args.Has("block-c") || args.Has("square")) {
      args.Fail("--tiles lists (Br, Bc) pairs; give it without --block-r, --block-c, --square");
    }
    for (const auto& item : SemicolonList(args, "tiles", *args.Get("tiles"))) {
      const std::size_t x = item.find('x');
      const auto br = x == std::string::npos ? std::nullopt : ParseCountText(item.substr(0, x));
      const auto bc = x == std::string::npos ? std::nullopt : ParseCountText(item.substr(x + 1));
      if (!br || !bc) args.Fail("--tiles: '" + item + "' is not BRxBC (e.g. 64x128)");
      spec.tiles.emplace_back(*br, *bc);
    }
  }
  spec.head_dim = args.Count("head-dim", 64);
  spec.trials = args.Count("trials", 10);
  spec.seed = args.Count("seed", 1);
  spec.dist = args.Get("gen").value_or("normal");
  const std::uint64_t jobs = args.Count("jobs", std::max(1u, std::thread::hardware_concurrency()));
  if (jobs < 1 || jobs > 1024) args.Fail("--jobs must be from 1 to 1024");
  spec.jobs = static_cast<unsigned>(jobs);
  for (std::uint64_t n : spec.seq_lens)
    if (n < 1 || n > 16384) args.Fail("--n values must be between 1 and 16384");
  for (const auto* list : {&spec.block_r, &spec.block_c})
    for (std::uint64_t b : *list)
      if (b < 1 || b > 16384) args.Fail("--block-r / --block-c values must be between 1 and 16384");
  for (const auto& [br, bc] : spec.tiles)
    if (br < 1 || br > 16384 || bc < 1 || bc > 16384)
      args.Fail("--tiles: Br and Bc must be between 1 and 16384");
  if (spec.head_dim < 1 || spec.head_dim > 1024) args.Fail("--head-dim must be between 1 and 1024");
  if (spec.trials < 1 || spec.trials > 10000) args.Fail("--trials must be between 1 and 10000");
  // Cost before work: one trial at the largest n, measured on smaller n (cli/cost.hpp, scaled
  // as n^2: the n x n scores), times the trials and the other lengths' shares.
  const double max_seconds = args.Seconds("max-seconds", kDefaultMaxSeconds);
  const std::uint64_t n_max = *std::max_element(spec.seq_lens.begin(), spec.seq_lens.end());
  studies::AttentionDeviationSpec one = spec;
  one.trials = 1;
  const CostEstimate per_trial = EstimateCost(n_max, 64, 2, [&](std::uint64_t m) {
    one.seq_lens = {m};
    try {
      studies::RunAttentionDeviation(one, false);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  });
  if (per_trial.known) {
    double share = 0;  // the lengths' costs relative to the largest's
    for (std::uint64_t n : spec.seq_lens)
      share += std::pow(static_cast<double>(n) / static_cast<double>(n_max), 2);
    // The inputs run spec.jobs at a time (at most one per input).
    const double parallel = static_cast<double>(std::min<std::uint64_t>(
        spec.jobs, spec.seq_lens.size() * static_cast<std::uint64_t>(spec.trials)));
    const double total = per_trial.seconds * share * static_cast<double>(spec.trials) / parallel;
    if (max_seconds > 0 && total > max_seconds) {
      const auto fit =
          static_cast<std::uint64_t>(max_seconds * parallel / (per_trial.seconds * share));
      args.Fail("carrier study attention-deviation would take about " + SecondsText(total) +
                " (one trial at n = " + std::to_string(n_max) + ": about " +
                SecondsText(per_trial.seconds) + ", measured at n = " +
                std::to_string(per_trial.m) + " and scaled as n^2), past the limit of " +
                SecondsText(max_seconds) + " (--max-seconds): " +
                (fit >= 1 ? "--trials " + std::to_string(fit) + " fits"
                          : "n <= " + std::to_string(FittingN(per_trial, max_seconds)) +
                                " fits one trial"));
    }
  }
  std::vector<studies::AttentionDeviationRow> rows;
  try {
    rows = studies::RunAttentionDeviation(spec, true);
  } catch (const std::invalid_argument& e) {
    args.Fail(e.what());
  }
  std::ostringstream csv;
  csv << "policy,baseline,algorithm,n,head_dim,block_r,block_c,trial,seed,fa_max,fa_mean,fa_std,"
         "ba_max,ba_mean,ba_std,fa_ba_max,fa_ba_mean,fa_ba_std\n";
  for (const auto& r : rows) {
    csv << '"' << r.policy << '"' << ",\"" << r.baseline << "\"," << r.algorithm << "," << r.n
        << "," << r.d << "," << r.br << "," << r.bc << "," << r.trial << "," << r.seed;
    for (const Deviation* d : {&r.fa, &r.ba, &r.fa_ba})
      csv << "," << studies::Field(d->max) << "," << studies::Field(d->mean) << ","
          << studies::Field(d->stddev);
    csv << "\n";
  }
  studies::WriteCsv(args.Get("o").value_or(""), csv.str(), "carrier study attention-deviation");
  return 0;
}

struct Study {
  const char* name;
  int (*run)(const std::vector<std::string>& argv);
};

const Study kStudies[] = {
    {"stagnation", StudyStagnation},
    {"lse-mnist", StudyLseMnist},
    {"softmax-passes", StudySoftmaxPasses},
    {"attention-deviation", StudyAttentionDeviation},
};

}  // namespace

int RunStudy(const std::vector<std::string>& argv) {
  std::string names;
  for (const Study& s : kStudies) names += (names.empty() ? "" : ", ") + std::string(s.name);
  if (argv.empty() || argv[0].rfind("-", 0) == 0)
    throw UsageError("carrier study: missing study NAME (one of " + names +
                     "; see carrier study --help)");
  // -o FILE is the project's spelling for the output (as in `carrier sweep`); cli::Args knows
  // only --flags, so it travels as --o.
  std::vector<std::string> rest;
  for (std::size_t i = 1; i < argv.size(); ++i)
    rest.push_back(argv[i] == "-o" ? std::string("--o") : argv[i]);
  for (const Study& s : kStudies)
    if (argv[0] == s.name) return s.run(rest);
  throw UsageError("carrier study: unknown study '" + argv[0] + "' (one of " + names +
                   "; see carrier study --help)");
}

}  // namespace carrier::cli
