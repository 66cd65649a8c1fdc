// carrier eval: one reduction, one declared merge order, measured against its certified
// reference and its a-priori bound.
//
// Pipeline (experiments/run/trial.hpp, shared with `carrier sweep`): inputs (file or
// generator) -> rounded to the storage format (rne) -> the certified reference of the op on
// the STORED values (precision/reference) -> the reduction in the compute type (core ReplayOracle
// of the schedule's tree, or the fast engine core/replay.hpp, for backend replay; the
// SIMD/OpenMP/CUDA kernels through experiments/backends for the others) -> the error metrics
// (precision/metrics.hpp) and the bound for the executed tree's depth (precision/op_bounds.hpp).
// This file parses the flags and prints; it computes nothing itself. Which fields it prints, in
// which order and how, is the outcome schema's (experiments/run/outcome_fields.hpp), which also
// writes the sweep CSV's rows, so the fields carry its names (experiments/sweep/FORMAT.md):
// reference_bits, cond, seconds, schedule (requested) and schedule_used (executed).
//
// The op is looked up in the op table (experiments/registry/): its input kind, components,
// reference and bound come from its entry. A registered user carrier is replayed the same way;
// its reference is the carrier itself in MPFR at p and 2p bits, certified when they agree to
// 2^-100 relative (reference_tier "mpfr-carrier"), and it has no a-priori bound (reported as
// unavailable).
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/args.hpp"
#include "cli/cost.hpp"
#include "cli/progress.hpp"
#include "verbs/verbs.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include "backends/backends.hpp"
#include "inputs/generators.hpp"
#include "inputs/read_numbers.hpp"
#include "io/json.hpp"
#include "precision/parallel_pass.hpp"
#include "precision/precision_policy.hpp"
#include "registry/registry.hpp"
#include "run/defaults.hpp"
#include "run/matmul.hpp"
#include "run/memory.hpp"
#include "run/outcome_fields.hpp"
#include "run/trial.hpp"
#include "verbs/trial_flags.hpp"

namespace carrier::cli {

namespace {

// The cost of a trial of n generated inputs (reference and replay), measured on smaller trials
// of the same spec (cli/cost.hpp) from 2^10 inputs up, scaled linearly, or from 64 rows up
// as n^2 for attention's n x n scores; unknown for file inputs or when a small trial cannot run
// (its own error then comes from the real one).
// A trial estimated to take longer shows a progress line (on a terminal).
constexpr double kTickerSeconds = 2;

// Only an estimate at or above clear_below changes what eval does (refuse, show a progress line).
CostEstimate EstimateTrialCost(const run::ResolvedTrial& trial,
                               const std::optional<std::string>& gen, std::uint64_t seed,
                               std::uint64_t n, bool quadratic, double clear_below) {
  if (!gen) return {};
  const auto small_trial = [&](std::uint64_t m) {
    try {
      const run::TrialInput small = run::MakeInput(trial, inputs::ParseGenerator(*gen), m, seed);
      const run::SharedReference ref = run::ComputeReference(trial, small);
      run::RunTrial(trial, small, ref);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  };
  return EstimateCost(n, quadratic ? 64 : 1024, quadratic ? 2 : 1, small_trial, clear_below);
}

// A JSON value as eval's text output prints it: strings (and quoted nan, inf) unquoted.
std::string Text(const std::string& json_number) {
  if (!json_number.empty() && json_number.front() == '"')
    return json_number.substr(1, json_number.size() - 2);
  return json_number;
}

}  // namespace

// eval_matmul.cpp: the M x N x K product of dots (run/matmul.hpp), which takes --m --n --k.
int RunEvalMatmul(const std::vector<std::string>& argv);

int RunEval(const std::vector<std::string>& argv) {
  for (std::size_t i = 0; i < argv.size(); ++i)
    if ((argv[i] == "--op" && i + 1 < argv.size() && argv[i + 1] == run::kMatmulOp) ||
        argv[i] == std::string("--op=") + run::kMatmulOp)
      return RunEvalMatmul(argv);
  Args args(
      "eval", argv,
      {"op", "dtype", "acc", "round", "schedule", "exp", "input", "gen", "n", "seed", "format",
       "backend", "sr-seed", "head-dim", "precision", "engine", "max-seconds", "threads"},
      {"allow-nonfinite"});
  const std::vector<std::string> ops = registry::TrialOps();
  const std::string op = args.Choice("op", ops, "");
  if (op.empty()) args.Require("op");
  const registry::Entry& entry = *registry::Find(op);
  const bool qkv = entry.input == registry::InputKind::kAttention;
  if (!entry.head_dims.empty() && !args.Get("head-dim")) {
    std::string dims;
    for (auto d : entry.head_dims) dims += (dims.empty() ? "" : " ") + std::to_string(d);
    args.Fail("--op " + op + " needs --head-dim D (" + dims +
              "): n queries over --n keys, each "
              "of dimension D");
  }
  if (entry.head_dims.empty() && args.Get("head-dim"))
    args.Fail("--head-dim goes with an op that has head dims (attention), not " + op);
  // --precision ROLES|PRESET (precision/precision_policy.hpp), typed into the trial spec, or the
  // --dtype/--acc/--round shorthand. ResolveTrial decides what the op runs: attention runs every
  // role; the one-precision ops run the policies the shorthand can say (in, acc, combine).
  const std::uint64_t seed = args.Count("seed", 1);
  run::TrialSpec spec;
  spec.op = op;
  const std::vector<std::string> defaults = ReadTrialFlags(args, spec, seed);
  spec.head_dim = args.Count("head-dim", 0);
  const std::string format_out = args.Choice("format", {"text", "json"}, "text");
  const run::ResolvedTrial trial = ResolveOrFail(args, spec);
  const bool allow_nonfinite = args.Has("allow-nonfinite");
  const double max_seconds = args.Seconds("max-seconds", kDefaultMaxSeconds);
  const bool user = trial.user != nullptr;
  // --threads T: the passes that split without changing a bit (precision/parallel_pass.hpp:
  // the counter-based generation and its rounding to storage, packing the stored column, the
  // exact references' scans, the bounds' exp terms) use T threads; the replay itself is one.
  // From T = 2 the tree shape's walk also runs on a thread of its own (PrefetchTrialShape).
  // The default is every core up to the 64 allowed (a larger machine must not refuse it).
  const std::uint64_t threads =
      args.Count("threads", std::clamp(std::thread::hardware_concurrency(), 1u, 64u));
  if (threads < 1 || threads > 64) args.Fail("--threads must be from 1 to 64");
  const PassThreadsScope pass_threads(static_cast<int>(threads));

  // Inputs, rounded to the storage format.
  const bool two = entry.input == registry::InputKind::kPairs;
  run::TrialInput input;
  CostEstimate cost;  // generated inputs: measured before the full input is generated
  // The tree shape's walk, started before the input is drawn (run/trial.hpp PrefetchTrialShape)
  // and waited for at the latest when this scope ends.
  std::optional<run::ShapePrefetch> shape_ahead;
  if (args.Get("input") && args.Get("gen"))
    args.Fail("give either --input FILE or --gen DIST, not both");
  if (auto path = args.Get("input")) {
    if (args.Get("n")) args.Fail("--n goes with --gen; a file's length is its own");
    if (qkv) args.Fail("--op " + op + " takes generated inputs only (--gen DIST --n N)");
    try {
      auto cols = inputs::ReadNumbersFile(*path, two ? 2 : 1, allow_nonfinite);
      input =
          run::MakeInputFromValues(trial, std::move(cols.a), std::move(cols.b), "file:" + *path);
    } catch (const inputs::InputError& e) {
      throw UsageError("carrier eval: " + std::string(e.what()));
    }
  } else if (auto gen = args.Get("gen")) {
    inputs::GeneratorSpec gspec;
    try {
      gspec = inputs::ParseGenerator(*gen);
    } catch (const std::exception& e) {
      args.Fail(e.what());
    }
    const std::uint64_t n = args.RequireCount("n");
    if (n == 0) args.Fail("--n must be at least 1");
    if (n > run::kMaxTrialN) args.Fail("--n must be at most 2^30 for eval");
    try {  // before anything is generated: one line naming the bytes, exit 2
      run::CheckTrialMemory(trial, n, 1, *gen);
    } catch (const run::SpecError& e) {
      args.Fail(e.what());
    }
    // Cost before work: past --max-seconds the trial is refused with the n that fits, before
    // the full input is drawn (attention's q, k, v at n = 2^20 alone take half a minute).
    if (n >= (qkv ? 512u : 4096u)) {
      cost = EstimateTrialCost(
          trial, gen, seed, n, qkv,
          max_seconds > 0 ? std::min(max_seconds, kTickerSeconds) : kTickerSeconds);
      if (cost.known && max_seconds > 0 && cost.seconds > max_seconds)
        args.Fail(RefusalText("carrier eval --op " + op + " --n " + std::to_string(n), cost,
                              max_seconds, "--max-seconds"));
    }
    shape_ahead.emplace(run::PrefetchTrialShape(trial, n));
    try {  // a generator that cannot serve this n (exact:, orders issue 15) is bad input
      input = run::MakeInput(trial, gspec, n, seed);
    } catch (const std::invalid_argument& e) {
      args.Fail(e.what());
    }
  } else {
    args.Fail("give the input: --input FILE (or - for stdin) or --gen DIST --n N");
  }

  // Finite inputs that the storage format cannot hold are not data for the trial: refused, as a
  // non-finite input is, unless special values are what is being studied.
  if (input.storage_overflows > 0 && !allow_nonfinite)
    args.Fail(run::StorageOverflowText(input, trial.storage.name) +
              " (pass --allow-nonfinite to study overflow)");

  // A long trial shows a progress line with its estimate on a terminal.
  std::optional<Ticker> ticker;
  if (input.n >= (qkv ? 512 : 4096) && (!cost.known || cost.seconds > kTickerSeconds))
    ticker.emplace("carrier eval " + op + " n = " + std::to_string(input.n),
                   cost.known ? cost.seconds : -1);
  const run::SharedReference shared = run::ComputeReference(trial, input);
  run::TrialOutcome got;
  try {
    got = run::RunTrial(trial, input, shared);
  } catch (const run::SpecError& e) {
    args.Fail(e.what());
  } catch (const backends::Unavailable& e) {
    args.Fail(e.what());
  }
  ticker.reset();

  // The outcome schema (run/outcome_fields.hpp) decides which fields print and how.
  run::OutcomeRecord record;
  record.op = op;
  record.dtype = trial.storage.name;
  record.acc = trial.compute.text;
  record.round = std::string(RoundingName(trial.rounding));
  if (trial.out) record.out = trial.out->name;
  record.precision = args.Get("precision");
  if (trial.rounding == Rounding::kStochastic) record.sr_seed = spec.sr_seed;
  record.exp = spec.exp;
  record.backend = spec.backend;
  record.attention = qkv;
  record.head_dim = spec.head_dim;
  record.schedule = spec.schedule;
  for (const auto& d : defaults) record.defaults += (record.defaults.empty() ? "" : "; ") + d;
  record.n = got.n;
  record.input = input.text;
  if (args.Get("gen")) record.generator = inputs::kGeneratorVersion;
  record.storage_overflows = input.storage_overflows;
  if (input.storage_overflows > 0)
    record.storage_overflow_note = run::StorageOverflowText(input, trial.storage.name);
  record.outcome = &got;
  record.ref = &shared;
  record.reference_seconds = shared.seconds;
  record.kind = trial.compute.kind;
  record.entry = &entry;
  record.user = user;
  const io::JsonObject fields = run::EvalOutcomeJson(record);

  if (format_out == "json") {
    std::cout << fields.Compact() << "\n";
  } else {
    for (const auto& [k, v] : fields.Members())
      std::cout << std::left << std::setw(27) << k << Text(v) << "\n";
  }
  return shared.ref.cert.certified ? 0 : 1;
}

}  // namespace carrier::cli

#else  // no MPFR

namespace carrier::cli {
int RunEval(const std::vector<std::string>&) {
  throw UsageError(
      "carrier eval: this build has no MPFR (configured with CARRIER_WITH_MPFR=OFF "
      "or without libmpfr-dev), so it has no certified references");
}
}  // namespace carrier::cli

#endif
