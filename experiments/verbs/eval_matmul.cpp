// carrier eval --op matmul: an M x N x K product C = A B, every output a dot of length K through
// the declared K order (run/matmul.hpp), measured against the exact reference of each output.
// The flags are eval's for op dot (--dtype/--acc/--round or --precision, --schedule, --exp,
// --backend, --engine, --gen/--seed or --input) plus --m --n --k and --outputs FILE (one CSV row
// per output). This file parses and prints; the product is run/matmul.cpp's.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/cost.hpp"
#include "cli/number_format.hpp"
#include "cli/progress.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include "backends/backends.hpp"
#include "inputs/generators.hpp"
#include "inputs/read_numbers.hpp"
#include "io/json.hpp"
#include "precision/precision_policy.hpp"
#include "registry/registry.hpp"
#include "run/defaults.hpp"
#include "run/matmul.hpp"
#include "run/outcome_fields.hpp"
#include "run/trial.hpp"
#include "verbs/trial_flags.hpp"

namespace carrier::cli {

namespace {

std::string Text(const std::string& json_number) {
  if (!json_number.empty() && json_number.front() == '"')
    return json_number.substr(1, json_number.size() - 2);
  return json_number;
}

std::string PerDot(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g ms", seconds * 1e3);
  return buf;
}

}  // namespace

// Called by RunEval when --op is matmul.
int RunEvalMatmul(const std::vector<std::string>& argv) {
  Args args("eval", argv,
            {"op",      "dtype",     "acc",    "round",       "schedule", "exp",    "input",
             "gen",     "m",         "n",      "k",           "seed",     "format", "backend",
             "sr-seed", "precision", "engine", "max-seconds", "threads",  "outputs"},
            {"allow-nonfinite"});
  const std::uint64_t seed = args.Count("seed", 1);
  run::TrialSpec spec;
  spec.op = "dot";  // every output is one dot trial
  const std::vector<std::string> defaults = ReadTrialFlags(args, spec, seed);
  const std::string format_out = args.Choice("format", {"text", "json"}, "text");
  const run::ResolvedTrial trial = ResolveOrFail(args, spec);
  run::MatmulShape shape;
  shape.m = args.RequireCount("m");
  shape.n = args.RequireCount("n");
  shape.k = args.RequireCount("k");
  const unsigned threads = static_cast<unsigned>(
      std::min<std::uint64_t>(args.Count("threads", run::MatmulThreads()), 1024));
  if (threads == 0) args.Fail("--threads must be at least 1");
  const double max_seconds = args.Seconds("max-seconds", kDefaultMaxSeconds);
  try {  // sizes and memory before anything is made: one line, exit 2
    run::CheckMatmulShape(shape);
    run::CheckMatmulMemory(trial, shape, threads);
  } catch (const run::SpecError& e) {
    args.Fail(e.what());
  }
  const bool allow_nonfinite = args.Has("allow-nonfinite");
  const std::uint64_t outputs = shape.m * shape.n;

  // The cost: one dot of length K timed (cli/cost.hpp, from 2^10 up, linear in K), times M N
  // over the threads. File inputs are timed on generated normal values of the same length.
  const auto gen_text = args.Get("gen");
  if (args.Get("input") && gen_text) args.Fail("give either --input FILE or --gen DIST, not both");
  if (!args.Get("input") && !gen_text)
    args.Fail("give the input: --gen DIST (A from --seed, B from --seed + 1) or --input FILE");
  inputs::GeneratorSpec gspec;
  try {
    gspec = inputs::ParseGenerator(gen_text.value_or("normal"));
  } catch (const std::exception& e) {
    args.Fail(e.what());
  }
  CostEstimate cost = EstimateCost(shape.k, 1024, 1, [&](std::uint64_t len) {
    try {
      const run::TrialInput small = run::MakeInput(trial, gspec, len, seed);
      run::RunTrial(trial, small, run::ComputeReference(trial, small));
      return true;
    } catch (const std::exception&) {
      return false;
    }
  });
  if (cost.known) {
    const double per_dot = cost.seconds;
    cost.seconds = per_dot * static_cast<double>(outputs) / threads;
    if (max_seconds > 0 && cost.seconds > max_seconds)
      args.Fail("--op matmul " + std::to_string(shape.m) + " x " + std::to_string(shape.n) + " x " +
                std::to_string(shape.k) + " would take about " + SecondsText(cost.seconds) + " (" +
                std::to_string(outputs) + " dots of " + PerDot(per_dot) +
                " each, measured at k = " + std::to_string(cost.m) + ", on " +
                std::to_string(threads) + " threads), past the limit of " +
                SecondsText(max_seconds) + " (--max-seconds)");
  }

  run::MatmulInput input;
  if (const auto path = args.Get("input")) {
    // One number per line: A row by row (M K values), then B row by row (K N values).
    std::vector<double> all;
    try {
      all = inputs::ReadNumbersFile(*path, 1, allow_nonfinite).a;
    } catch (const inputs::InputError& e) {
      throw UsageError("carrier eval: " + std::string(e.what()));
    }
    const std::uint64_t na = shape.m * shape.k;
    if (all.size() != na + shape.k * shape.n)
      args.Fail("--input " + *path + " has " + std::to_string(all.size()) +
                " numbers; --op matmul with --m --n --k wants M K (A, row by row) + K N (B, row " +
                "by row) = " + std::to_string(na + shape.k * shape.n));
    try {
      input = run::MakeMatmulInputFromValues(trial, std::span<const double>(all).first(na),
                                             std::span<const double>(all).subspan(na), shape,
                                             "file:" + *path);
    } catch (const run::SpecError& e) {
      args.Fail(e.what());
    }
  } else {
    try {
      input = run::MakeMatmulInput(trial, gspec, shape, seed);
    } catch (const std::invalid_argument& e) {
      args.Fail(e.what());
    }
  }
  if (input.storage_overflows > 0 && !allow_nonfinite)
    args.Fail(std::to_string(input.storage_overflows) + " finite input value" +
              (input.storage_overflows == 1 ? "" : "s") + " overflow " + trial.storage.name +
              " on storage, becoming inf or NaN (pass --allow-nonfinite to study overflow)");

  std::atomic<std::uint64_t> done{0};
  std::optional<Ticker> ticker;
  if (!cost.known || cost.seconds > 2)
    ticker.emplace(
        "carrier eval matmul " + std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" +
            std::to_string(shape.k),
        cost.known ? cost.seconds : -1,
        [&] { return std::to_string(done.load()) + "/" + std::to_string(outputs) + " outputs"; });
  run::MatmulOutcome got;
  try {
    got = run::RunMatmul(trial, input, threads, &done);
  } catch (const run::SpecError& e) {
    args.Fail(e.what());
  } catch (const backends::Unavailable& e) {
    args.Fail(e.what());
  }
  ticker.reset();

  if (const auto path = args.Get("outputs")) {
    std::ofstream f(*path);
    f << "i,j,result,reference\n";
    for (std::uint64_t at = 0; at < outputs; ++at)
      f << at / shape.n << "," << at % shape.n << "," << HexFloat(static_cast<double>(got.c[at]))
        << "," << HexFloat(static_cast<double>(got.reference[at])) << "\n";
    if (!f) args.Fail("--outputs " + *path + ": cannot write it");
  }

  // The outcome schema (run/outcome_fields.hpp) decides which fields print and how, as for
  // every other op: a record holding the matmul outcome alone.
  run::OutcomeRecord record;
  record.op = run::kMatmulOp;
  record.dtype = trial.storage.name;
  record.acc = trial.compute.text;
  record.round = std::string(RoundingName(trial.rounding));
  if (trial.out) record.out = trial.out->name;
  record.precision = args.Get("precision");
  record.exp = spec.exp;
  record.backend = spec.backend;
  record.schedule = spec.schedule;
  for (const auto& d : defaults) record.defaults += (record.defaults.empty() ? "" : "; ") + d;
  record.n = shape.n;
  record.input = input.text;
  if (gen_text) record.generator = inputs::kGeneratorVersion;
  record.matmul = &got;
  record.reference_seconds = got.reference_seconds;
  const io::JsonObject fields = run::EvalOutcomeJson(record);
  if (format_out == "json") {
    std::cout << fields.Compact() << "\n";
  } else {
    for (const auto& [k, v] : fields.Members())
      std::cout << std::left << std::setw(27) << k << Text(v) << "\n";
  }
  return got.certified ? 0 : 1;
}

}  // namespace carrier::cli

#else  // no MPFR

namespace carrier::cli {
int RunEvalMatmul(const std::vector<std::string>&) {
  throw UsageError(
      "carrier eval: this build has no MPFR (configured with CARRIER_WITH_MPFR=OFF "
      "or without libmpfr-dev), so it has no certified references");
}
}  // namespace carrier::cli

#endif
