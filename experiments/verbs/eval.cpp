// carrier eval: one reduction, one declared merge order, measured against its certified
// reference and its a-priori bound.
//
// Pipeline (experiments/run/trial.hpp, shared with `carrier sweep`): inputs (file or
// generator) -> rounded to the storage format (rne) -> the certified reference of the op on
// the STORED values (precision/reference) -> the reduction in the compute type (core ReplayOracle
// of the schedule's tree, or the fast engine core/replay.hpp, for backend replay; the
// SIMD/OpenMP/CUDA kernels through experiments/backends for the others) -> the error metrics
// (precision/metrics.hpp) and the bound for the executed tree's depth (precision/op_bounds.hpp).
// This file parses the flags and prints; it computes nothing itself. Its fields carry the sweep
// CSV's names (experiments/sweep/FORMAT.md, "One op table, one outcome schema"): reference_bits,
// cond, seconds, schedule (requested) and schedule_used (executed).
//
// The op is looked up in the op table (experiments/registry/): its input kind, components,
// reference and bound come from its entry. A registered user carrier is replayed the same way;
// its reference is the carrier itself in MPFR at p and 2p bits, certified when they agree to
// 2^-100 relative (reference_tier "mpfr-carrier"), and it has no a-priori bound (reported as
// unavailable).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/cost.hpp"
#include "cli/number_format.hpp"
#include "cli/progress.hpp"
#include "verbs/verbs.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include "backends/backends.hpp"
#include "inputs/generators.hpp"
#include "inputs/read_numbers.hpp"
#include "io/json.hpp"
#include "precision/precision_policy.hpp"
#include "registry/registry.hpp"
#include "run/defaults.hpp"
#include "run/matmul.hpp"
#include "run/memory.hpp"
#include "run/trial.hpp"
#include "verbs/trial_flags.hpp"

namespace carrier::cli {

namespace {

// The cost of a trial of n generated inputs (reference and replay), measured on smaller trials
// of the same spec (cli/cost.hpp) from 2^10 inputs up, scaled linearly, or from 64 rows up
// as n^2 for attention's n x n scores; unknown for file inputs or when a small trial cannot run
// (its own error then comes from the real one).
CostEstimate EstimateTrialCost(const run::ResolvedTrial& trial,
                               const std::optional<std::string>& gen, std::uint64_t seed,
                               std::uint64_t n, bool quadratic) {
  if (!gen) return {};
  return EstimateCost(n, quadratic ? 64 : 1024, quadratic ? 2 : 1, [&](std::uint64_t m) {
    try {
      const run::TrialInput small = run::MakeInput(trial, inputs::ParseGenerator(*gen), m, seed);
      const run::SharedReference ref = run::ComputeReference(trial, small);
      run::RunTrial(trial, small, ref);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  });
}

// Numbers through the project's formatter (Shortest, in the compute type's own precision);
// io::JsonNumberText quotes nan, inf and -inf, which JSON has no numbers for.
std::string JsonNumber(long double v, run::ComputeKind kind) {
  if (kind == run::ComputeKind::kFloat) return io::JsonNumberText(Shortest(static_cast<float>(v)));
  if (kind == run::ComputeKind::kMpfr) return io::JsonNumberText(Shortest(v));
  return io::JsonNumberText(Shortest(static_cast<double>(v)));
}
std::string JsonDouble(double v) { return io::JsonNumberText(Shortest(v)); }
std::string Text(const std::string& json_number) {
  if (!json_number.empty() && json_number.front() == '"')
    return json_number.substr(1, json_number.size() - 2);
  return json_number;
}

// Strings through nlohmann-json's escaping (io/json.hpp): quotes, backslashes and every
// control character, so an --input path with a control character stays valid JSON.
std::string JsonString(const std::string& s) { return io::JsonQuote(s); }

}  // namespace

// eval_matmul.cpp: the M x N x K product of dots (run/matmul.hpp), which takes --m --n --k.
int RunEvalMatmul(const std::vector<std::string>& argv);

int RunEval(const std::vector<std::string>& argv) {
  for (std::size_t i = 0; i < argv.size(); ++i)
    if ((argv[i] == "--op" && i + 1 < argv.size() && argv[i + 1] == run::kMatmulOp) ||
        argv[i] == std::string("--op=") + run::kMatmulOp)
      return RunEvalMatmul(argv);
  Args args("eval", argv,
            {"op", "dtype", "acc", "round", "schedule", "exp", "input", "gen", "n", "seed",
             "format", "backend", "sr-seed", "head-dim", "precision", "engine", "max-seconds"},
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

  // Inputs, rounded to the storage format.
  const bool two = entry.input == registry::InputKind::kPairs;
  run::TrialInput input;
  CostEstimate cost;  // generated inputs: measured before the full input is generated
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
      cost = EstimateTrialCost(trial, gen, seed, n, qkv);
      if (cost.known && max_seconds > 0 && cost.seconds > max_seconds)
        args.Fail(RefusalText("carrier eval --op " + op + " --n " + std::to_string(n), cost,
                              max_seconds, "--max-seconds"));
    }
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
  if (input.n >= (qkv ? 512 : 4096) && (!cost.known || cost.seconds > 2))
    ticker.emplace("carrier eval " + op + " n = " + std::to_string(input.n),
                   cost.known ? cost.seconds : -1);
  const run::SharedReference shared = run::ComputeReference(trial, input);
  const reference::Reference& ref = shared.ref;
  run::TrialOutcome got;
  try {
    got = run::RunTrial(trial, input, shared);
  } catch (const run::SpecError& e) {
    args.Fail(e.what());
  } catch (const backends::Unavailable& e) {
    args.Fail(e.what());
  }
  ticker.reset();
  const run::ComputeKind kind = trial.compute.kind;

  io::JsonObject fields;  // key, JSON value, in print order
  auto add = [&](const std::string& k, const std::string& v) { fields.Raw(k, v); };
  add("op", JsonString(op));
  add("dtype", JsonString(trial.storage.name));
  add("acc", JsonString(trial.compute.text));
  add("round", JsonString(std::string(RoundingName(trial.rounding))));
  if (trial.out) add("out", JsonString(trial.out->name));
  // The policy as given (the sweep CSV's precision column): dtype, acc and round are its
  // shorthand.
  if (const auto pol = args.Get("precision")) add("precision", JsonString(*pol));
  if (trial.rounding == Rounding::kStochastic) add("sr_seed", std::to_string(spec.sr_seed));
  add("exp", JsonString(spec.exp));
  add("backend", JsonString(spec.backend));
  if (qkv) add("head_dim", std::to_string(spec.head_dim));
  add("schedule", JsonString(spec.schedule));
  add("schedule_used", JsonString(got.schedule_used));
  if (!defaults.empty()) {
    std::string joined;
    for (const auto& d : defaults) joined += (joined.empty() ? "" : "; ") + d;
    add("defaults", JsonString(joined));
  }
  add("tree_max_depth", std::to_string(got.tree_max_depth));
  add("tree_mean_depth", JsonDouble(got.tree_mean_depth));
  add("tree_hash", JsonString(got.tree_hash));
  add("n", std::to_string(got.n));
  add("input", JsonString(input.text));
  if (input.storage_overflows > 0) {
    add("storage_overflow", std::to_string(input.storage_overflows));
    add("storage_overflow_note", JsonString(run::StorageOverflowText(input, trial.storage.name)));
  }
  if (got.vector_out) {
    add("normwise_inf_error", JsonDouble(got.normwise_inf));
    add("normwise_2_error", JsonDouble(got.normwise_2));
    add("componentwise_error", JsonDouble(got.componentwise));
    add("zero_reference_components", std::to_string(got.zero_components));
  } else {
    const std::size_t main = got.main;
    add("result", JsonNumber(got.components[main], kind));
    add("reference", JsonDouble(ref.as_double[main]));
    if (ref.index >= 0) {  // argmax
      add("result_index", std::to_string(got.index));
      add("reference_index", std::to_string(ref.index));
    }
    // The other components, by the entry's names (a user carrier's: c1, c2, ...).
    for (std::size_t k = 0; k < got.components.size() && k < ref.as_double.size(); ++k) {
      if (k == main) continue;
      const std::string name =
          k < entry.component_names.size() ? entry.component_names[k] : "c" + std::to_string(k);
      add("result_" + name, JsonNumber(got.components[k], kind));
      add("reference_" + name, JsonDouble(ref.as_double[k]));
    }
    if (entry.cond) add("cond", JsonDouble(got.cond));
    add("abs_error", JsonDouble(got.abs_error));
    add("rel_error", JsonDouble(got.rel_error));
    add("ulp_error", JsonDouble(got.ulp_error));
    add("reference_is_zero", got.reference_zero ? "true" : "false");
    add("special_value_mismatch", got.special_mismatch ? "true" : "false");
  }
  add("reference_tier", JsonString(shared.tier));
  add("reference_bits", std::to_string(ref.cert.precision_bits));
  add("reference_certified", ref.cert.certified ? "true" : "false");
  if (!ref.cert.note.empty()) add("reference_note", JsonString(ref.cert.note));
  if (!got.has_bound) {
    add("bound", JsonString("unavailable"));
    add("bound_kind", JsonString("unavailable"));
    add("bound_formula",
        JsonString(!got.bound_note.empty() ? got.bound_note
                   : user ? "none: a registered user carrier declares no a-priori bound"
                          : "none: the op table has no a-priori bound for " + op));
    add("error_to_bound", JsonDouble(NAN));
    add("bound_vacuous", "false");
  } else {
    add("bound", JsonDouble(got.bound));
    add("bound_kind", JsonString(std::string(got.bound_relative ? "relative" : "absolute") +
                                 (got.bound_rigorous ? ", rigorous" : ", first-order estimate")));
    add("bound_formula", JsonString(got.bound_formula));
    add("error_to_bound", JsonDouble(got.error_to_bound));
    add("bound_vacuous", got.bound_vacuous ? "true" : "false");
  }
  // --precision: the a-priori bound with its terms by role (precision/role_bounds.hpp: which
  // term is which role's, and whether it is rigorous or first order), against the exact
  // result on the stored inputs (the reference's), so without the `in` term (RunTrial). Ops
  // without a role bound (or an mma:/adaptive tree) print none.
  if (got.has_role_bound) {
    add("role_bound", JsonDouble(got.role_bound));
    add("role_bound_kind",
        JsonString(std::string(got.role_bound_relative ? "relative" : "absolute") +
                   (got.role_bound_rigorous ? ", rigorous" : ", first-order estimate")));
    add("role_bound_note", JsonString(got.role_bound_note));
  }
  add("u", JsonDouble(got.u));
  add("reference_seconds", JsonDouble(shared.seconds));
  add("seconds", JsonDouble(got.seconds));

  if (format_out == "json") {
    std::cout << fields.Compact() << "\n";
  } else {
    for (const auto& [k, v] : fields.Members())
      std::cout << std::left << std::setw(27) << k << Text(v) << "\n";
  }
  return ref.cert.certified ? 0 : 1;
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
