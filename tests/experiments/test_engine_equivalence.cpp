// The trial runner's two engines (run::TrialSpec::engine) give the same outcome.
//
// Contract held: for every trial spec, RunTrial under engine "fast" (core/replay.hpp over
// the schedule, Emulated compute, the fast exact references, run/tree_shape.hpp's walked
// tree statistics and hash) and under engine "oracle" (core ReplayOracle over BuildTree, the MPFR
// references, ComputeStats and TreeHash of the built tree) agree in every outcome field but the
// timings, bit for bit (NaN matching NaN); their references agree in every field a row prints;
// and a spec one engine refuses the other refuses with the same message. The matrix: the op
// table's trial ops x compute types (fp32, fp64, the emulated formats in every deterministic
// rounding mode and sr, mpfr, two-level) x the replay test matrix's schedules
// (tests/support/replay_check.hpp, plus the kinds built from outside) x lengths around
// the unrolled and lane sizes. A second test compares the walked tree shapes with BuildTree
// directly, over the same schedules and more lengths, including the fallbacks.
// On failure it prints the spec, n and the input generator, which reproduce the trial with
// `carrier eval ... --engine fast|oracle`.
#include <sys/wait.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/merge_tree.hpp"
#include "core/random_splits.hpp"
#include "core/schedule.hpp"
#include "core/tree_hash.hpp"
#include "inputs/generators.hpp"
#include "registry/registry.hpp"
#include "run/tree_shape.hpp"
#include "run/trial.hpp"
#include "support/replay_check.hpp"

using namespace carrier;

namespace {

// The replay matrix plus the kinds whose trees come from outside (walked: never; fallbacks).
std::vector<std::string> Schedules() {
  std::vector<std::string> s = test::ReplaySchedules();
  for (const char* extra : {"canonical:4", "numpy", "strided:64", "omp:64",
                            "omp:2:seq:pairwise:3:lift", "blocked:1024", "pairwise:1024", "reverse",
                            "omp:3:seq:pairwise", "omp:2:pairwise:pairwise", "splitk:5:reverse"})
    s.push_back(extra);
  return s;
}

bool SameBits(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}
bool SameBits(long double a, long double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

std::string Describe(const run::TrialSpec& s, std::uint64_t n, const std::string& gen) {
  return "carrier eval --op " + s.op + " --dtype " + s.dtype + " --acc '" + s.acc + "' --round " +
         s.round + " --schedule " + s.schedule + " --gen " + gen + " --n " + std::to_string(n) +
         " --seed 1" + (s.head_dim ? " --head-dim " + std::to_string(s.head_dim) : "");
}

// Every field RunTrial fills but `seconds`.
void RequireSameOutcome(const run::TrialOutcome& a, const run::TrialOutcome& b) {
  REQUIRE(a.schedule_used == b.schedule_used);
  REQUIRE(a.n == b.n);
  REQUIRE(a.components.size() == b.components.size());
  for (std::size_t i = 0; i < a.components.size(); ++i) {
    INFO("component " << i << ": " << static_cast<double>(a.components[i]) << " vs "
                      << static_cast<double>(b.components[i]));
    REQUIRE(SameBits(a.components[i], b.components[i]));
  }
  REQUIRE(a.index == b.index);
  REQUIRE(a.main == b.main);
  REQUIRE(a.vector_out == b.vector_out);
  REQUIRE(SameBits(a.result, b.result));
  REQUIRE(SameBits(a.reference, b.reference));
  REQUIRE(SameBits(a.abs_error, b.abs_error));
  REQUIRE(SameBits(a.rel_error, b.rel_error));
  REQUIRE(SameBits(a.ulp_error, b.ulp_error));
  REQUIRE(a.reference_zero == b.reference_zero);
  REQUIRE(a.special_mismatch == b.special_mismatch);
  REQUIRE(SameBits(a.normwise_inf, b.normwise_inf));
  REQUIRE(SameBits(a.normwise_2, b.normwise_2));
  REQUIRE(SameBits(a.componentwise, b.componentwise));
  REQUIRE(a.zero_components == b.zero_components);
  REQUIRE(SameBits(a.cond, b.cond));
  REQUIRE(a.has_bound == b.has_bound);
  REQUIRE(SameBits(a.bound, b.bound));
  REQUIRE(a.bound_relative == b.bound_relative);
  REQUIRE(a.bound_rigorous == b.bound_rigorous);
  REQUIRE(a.bound_vacuous == b.bound_vacuous);
  REQUIRE(a.bound_formula == b.bound_formula);
  REQUIRE(SameBits(a.error_to_bound, b.error_to_bound));
  REQUIRE(SameBits(a.u, b.u));
  REQUIRE(a.tree_max_depth == b.tree_max_depth);
  REQUIRE(a.tree_hash == b.tree_hash);
  REQUIRE(SameBits(a.tree_mean_depth, b.tree_mean_depth));
}

void RequireSameReference(const run::SharedReference& a, const run::SharedReference& b) {
  REQUIRE(a.tier == b.tier);
  REQUIRE(a.ref.op == b.ref.op);
  REQUIRE(a.ref.count == b.ref.count);
  REQUIRE(a.ref.index == b.ref.index);
  REQUIRE(a.ref.cert.certified == b.ref.cert.certified);
  REQUIRE(a.ref.cert.precision_bits == b.ref.cert.precision_bits);
  REQUIRE(a.ref.cert.note == b.ref.cert.note);
  REQUIRE(a.ref.as_double.size() == b.ref.as_double.size());
  for (std::size_t i = 0; i < a.ref.as_double.size(); ++i)
    REQUIRE(SameBits(a.ref.as_double[i], b.ref.as_double[i]));
  REQUIRE(a.ref.as_long_double.size() == b.ref.as_long_double.size());
  for (std::size_t i = 0; i < a.ref.as_long_double.size(); ++i)
    REQUIRE(SameBits(a.ref.as_long_double[i], b.ref.as_long_double[i]));
}

struct Tally {
  long trials = 0, refused = 0, references = 0, unpacked = 0;
};

// One (op, dtype, acc, round) over every schedule and length: both engines, compared.
void CheckCell(run::TrialSpec spec, const std::vector<std::uint64_t>& lengths,
               const std::vector<std::string>& schedules, Tally& tally) {
  for (const std::string gen_text : {"normal", "uniform01"}) {
    const inputs::GeneratorSpec gen = inputs::ParseGenerator(gen_text);
    for (const std::uint64_t n : lengths) {
      std::optional<run::TrialInput> input;
      std::optional<run::SharedReference> ref_fast, ref_oracle;
      // The same values as plain doubles (TrialInput::a), where MakeInput packed them into
      // TrialInput::column: the fast engine must give the same outcome from either.
      std::optional<run::TrialInput> unpacked;
      std::optional<run::SharedReference> ref_unpacked;
      for (const std::string& schedule : schedules) {
        spec.schedule = schedule;
        run::TrialSpec fast_spec = spec, oracle_spec = spec;
        fast_spec.engine = "fast";
        oracle_spec.engine = "oracle";
        INFO(Describe(spec, n, gen_text));
        std::string err_fast, err_oracle;
        std::optional<run::ResolvedTrial> tf, to;
        try {
          tf = run::ResolveTrial(fast_spec);
        } catch (const run::SpecError& e) {
          err_fast = e.what();
        }
        try {
          to = run::ResolveTrial(oracle_spec);
        } catch (const run::SpecError& e) {
          err_oracle = e.what();
        }
        REQUIRE(err_fast == err_oracle);
        if (!tf) {
          ++tally.refused;
          continue;
        }
        if (!input) {
          input = run::MakeInput(*tf, gen, n, 1);
          ref_fast = run::ComputeReference(*tf, *input);
          ref_oracle = run::ComputeReference(*to, *input);
          RequireSameReference(*ref_fast, *ref_oracle);
          ++tally.references;
          if (run::HeldInColumn(*input)) {
            unpacked = *input;
            unpacked->a = input->column.ToDoubles();
            unpacked->column = {};
            if (!input->column_b.empty()) {  // pairs
              unpacked->b = input->column_b.ToDoubles();
              unpacked->column_b = {};
            }
            unpacked->id = run::NewInputId();
            ref_unpacked = run::ComputeReference(*tf, *unpacked);
            RequireSameReference(*ref_fast, *ref_unpacked);
          }
        }
        std::optional<run::TrialOutcome> of, oo;
        try {
          of = run::RunTrial(*tf, *input, *ref_fast);
        } catch (const std::exception& e) {
          err_fast = e.what();
        }
        try {
          oo = run::RunTrial(*to, *input, *ref_oracle);
        } catch (const std::exception& e) {
          err_oracle = e.what();
        }
        INFO("fast error: '" << err_fast << "'; oracle error: '" << err_oracle << "'");
        REQUIRE(err_fast == err_oracle);
        REQUIRE(of.has_value() == oo.has_value());
        if (!of) {
          ++tally.refused;
          continue;
        }
        RequireSameOutcome(*of, *oo);
        ++tally.trials;
        if (unpacked) {
          INFO("the same input as doubles (not packed), engine fast");
          RequireSameOutcome(*of, run::RunTrial(*tf, *unpacked, *ref_unpacked));
          ++tally.unpacked;
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("walked tree shapes equal BuildTree's statistics, hash and text", "[fast][engine]") {
  long walked = 0, built = 0, refused = 0, both_forms = 0;
  for (const std::string& text : Schedules()) {
    const Schedule s = ParseSchedule(text);
    for (const std::uint64_t n :
         {1,  2,  3,   4,   5,    7,    8,    9,    31,   32,   33,    63,
          64, 65, 100, 257, 1000, 1025, 4096, 4097, 4099, 8193, 12289, 20000}) {
      INFO("schedule " << text << ", n " << n);
      std::optional<MergeTree> tree;
      std::string err_tree, err_walk;
      try {
        tree = BuildTree(s, n);
      } catch (const ScheduleError& e) {
        err_tree = e.what();
      }
      carrier::TreeShape shape;
      bool ok = false;
      try {
        ok = carrier::WalkShape(s, n, shape);
        REQUIRE(ok == carrier::IsShapeWalked(s, n));
      } catch (const ScheduleError& e) {
        err_walk = e.what();
      }
      if (!tree) {  // the walk may leave the refusal to BuildTree, or give the same one
        REQUIRE((!ok || !err_walk.empty()));
        if (!err_walk.empty()) REQUIRE(err_walk == err_tree);
        ++refused;
        continue;
      }
      REQUIRE(err_walk.empty());
      if (!ok) {
        ++built;
        continue;
      }
      const carrier::TreeShape want = carrier::ShapeOfTree(*tree);
      REQUIRE(shape.schedule == want.schedule);
      REQUIRE(shape.hash == want.hash);
      REQUIRE(shape.permutes == want.permutes);
      REQUIRE(shape.stats.n == want.stats.n);
      REQUIRE(shape.stats.chains == want.stats.chains);
      REQUIRE(shape.stats.combines == want.stats.combines);
      REQUIRE(shape.stats.longest_chain == want.stats.longest_chain);
      REQUIRE(shape.stats.combine_depth == want.stats.combine_depth);
      REQUIRE(shape.stats.max_leaf_depth == want.stats.max_leaf_depth);
      REQUIRE(SameBits(shape.stats.mean_leaf_depth, want.stats.mean_leaf_depth));
      // The pairwise and random regions' hashes and the random regions' splits in the other
      // form (scalar where the vector one ran).
      const bool vector = carrier::ShapeWalker::ShapeHashesVectorised();
      if (vector || carrier::ShapeWalker::UseShapeHashesVectorised(true)) {
        carrier::ShapeWalker::UseShapeHashesVectorised(!vector);
        const bool splits_were = carrier::replay_detail::RandomSplitsVectorised();
        const bool splits = carrier::replay_detail::UseRandomSplitsVectorised(!vector);
        carrier::TreeShape other;
        REQUIRE(carrier::WalkShape(s, n, other));
        carrier::ShapeWalker::UseShapeHashesVectorised(vector);
        carrier::replay_detail::UseRandomSplitsVectorised(splits_were);
        INFO("region hashes and splits " << (vector ? "scalar" : "vectorised") << " (splits "
                                         << (splits ? "vectorised" : "scalar") << ")");
        REQUIRE(other.hash == want.hash);
        REQUIRE(SameBits(other.stats.mean_leaf_depth, want.stats.mean_leaf_depth));
        ++both_forms;
      }
      // The cached path returns the same.
      carrier::TreeShape cached;
      REQUIRE(run::ShapeOfSchedule(s, n, cached));
      REQUIRE(cached.hash == want.hash);
      ++walked;
    }
  }
  std::cout << "tree shapes: " << walked << " walked and equal to BuildTree's (" << both_forms
            << " in both forms of the region hashes, scalar and AVX-512), " << built
            << " left to BuildTree, " << refused << " refused by BuildTree\n";
  REQUIRE(walked > 500);
}

namespace {

// The message of the ScheduleError f() throws; empty where it throws none.
template <class F>
std::string ScheduleErrorOf(F&& f) {
  try {
    f();
  } catch (const ScheduleError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("a prefetched shape walk gives ShapeOfSchedule the walk's shape, or its refusal",
          "[fast][engine]") {
  // Lengths no other case asks for, so that each key is new to the process's cache.
  long prefetched = 0;
  std::uint64_t n = 70001;
  for (const std::string& text : Schedules()) {
    const Schedule s = ParseSchedule(text);
    INFO("schedule " << text << ", n " << n);
    carrier::TreeShape want, got;
    bool ok = false, got_ok = false;
    const std::string err_walk = ScheduleErrorOf([&] { ok = carrier::WalkShape(s, n, want); });
    std::optional<run::ShapePrefetch> ahead;
    ahead.emplace(run::PrefetchShape(s, n));
    const std::string err_got = ScheduleErrorOf([&] { got_ok = run::ShapeOfSchedule(s, n, got); });
    ahead.reset();
    REQUIRE(err_got == err_walk);
    REQUIRE(got_ok == ok);
    if (ok && err_walk.empty()) {
      REQUIRE(got.hash == want.hash);
      REQUIRE(got.schedule == want.schedule);
      REQUIRE(got.stats.combines == want.stats.combines);
      REQUIRE(SameBits(got.stats.mean_leaf_depth, want.stats.mean_leaf_depth));
      ++prefetched;
    }
    ++n;
  }
  // A walk that refuses its order (more empty lanes than any tree may hold): the prefetched
  // walk's ScheduleError comes out of ShapeOfSchedule, with the walk's message.
  const Schedule s = ParseSchedule("strided:4000000000");
  carrier::TreeShape shape;
  const std::string err_walk = ScheduleErrorOf([&] { carrier::WalkShape(s, 3, shape); });
  INFO("strided:4000000000 over 3 inputs: walk '" << err_walk << "'");
  REQUIRE_FALSE(err_walk.empty());
  const run::ShapePrefetch ahead = run::PrefetchShape(s, 3);
  REQUIRE(ScheduleErrorOf([&] { run::ShapeOfSchedule(s, 3, shape); }) == err_walk);
  std::cout << "prefetched shape walks: " << prefetched
            << " equal to the walk's; a refusal rethrown by ShapeOfSchedule\n";
  REQUIRE(prefetched > 20);
}

TEST_CASE("engine fast equals engine oracle over the replay matrix", "[fast][engine]") {
  // The fast path exists where it should (else the comparison below would be oracle vs oracle).
  for (const char* op : {"sum", "neumaier", "kahan", "max", "argmax", "lse", "welford", "norm2",
                         "dot", "affine", "prod", "fabsum-comp"}) {
    INFO("op " << op);
    REQUIRE(registry::Find(op)->replay != nullptr);
  }
  for (const char* op :
       {"sum", "neumaier", "kahan", "welford", "norm2", "var-twopass", "fabsum-comp"}) {
    INFO("op " << op);
    REQUIRE(registry::Find(op)->fast_reference != nullptr);
  }
  Tally tally;
  const std::vector<std::string> all = Schedules();
  const std::vector<std::uint64_t> lengths = {1, 7, 33, 300};
  struct Cell {
    const char* op;
    const char* dtype;
    const char* acc;
    std::vector<const char*> rounds;
  };
  const std::vector<const char*> emulated_modes = {"rne", "rna", "rz", "ru", "rd", "ro", "sr"};
  std::vector<Cell> cells;
  for (const char* op :
       {"sum", "neumaier", "kahan", "max", "argmax", "lse", "softmax", "welford", "norm2", "dot",
        "affine", "prod", "var-twopass", "var-textbook", "var-shifted", "fabsum-comp"}) {
    cells.push_back({op, "fp32", "same", {"rne"}});
    cells.push_back({op, "fp64", "same", {"rne"}});
    cells.push_back({op, "bf16", "same", emulated_modes});
    cells.push_back({op, "fp16", "fp32", {"rne"}});
  }
  for (const char* op : {"sum", "kahan", "lse", "welford"}) {
    cells.push_back({op, "fp16", "same", emulated_modes});
    cells.push_back({op, "fp8e4m3", "same", {"rne", "rz", "sr"}});
    cells.push_back({op, "tf32", "same", {"rne", "rd"}});
    cells.push_back({op, "fp32", "mpfr:80", {"rne"}});
    cells.push_back({op, "bf16", "bf16>fp32", {"rne"}});
  }
  for (const Cell& c : cells) {
    for (const char* round : c.rounds) {
      run::TrialSpec spec;
      spec.op = c.op;
      spec.dtype = c.dtype;
      spec.acc = c.acc;
      spec.round = round;
      // Every schedule on the one-precision cells of rne; the rest on a cover of the kinds.
      const bool full = std::string(round) == "rne" || std::string(round) == "sr";
      std::vector<std::string> schedules =
          full ? all : std::vector<std::string>{"seq",       "pairwise",
                                                "blocked:7", "strided:4:tile:3",
                                                "random:1",  "omp:3:pairwise:strided:4",
                                                "cuda:32"};
      CheckCell(spec, lengths, schedules, tally);
    }
  }
  run::TrialSpec att;
  att.op = "attention";
  att.dtype = "fp32";
  att.acc = "same";
  att.head_dim = 64;
  CheckCell(att, {1, 9}, {"seq", "blocked:4:lift", "pairwise"}, tally);
  std::cout << "engines: " << tally.trials << " trials equal in every field, " << tally.refused
            << " refused alike, " << tally.references << " references equal; " << tally.unpacked
            << " fast trials equal on the input packed and as doubles\n";
  REQUIRE(tally.trials > 10000);
  REQUIRE(tally.unpacked > 5000);
}

TEST_CASE("a packed input read a window at a time gives the oracle's outcome past the window",
          "[fast][engine]") {
  // run::TrialInput::column (and ::column_b for the pairs of dot and affine) is read by the
  // fast engine kReplayWindow (2^16) inputs at a time and by the references and bounds kChunk
  // at a time: lengths past both, on every layout.
  Tally tally;
  const std::vector<std::string> schedules = {
      "seq",      "pairwise",   "blocked:64",     "blocked:100000", "blocked:64:pairwise",
      "random:1", "strided:32", "omp:2:pairwise", "pairwise:70000", "reverse"};
  for (const char* op :
       {"sum", "kahan", "lse", "welford", "max", "argmax", "prod", "dot", "affine"})
    for (const char* dtype : {"bf16", "fp8e4m3", "fp32"})
      for (const char* acc : {"same", "fp64"}) {
        run::TrialSpec spec;
        spec.op = op;
        spec.dtype = dtype;
        spec.acc = acc;
        CheckCell(spec, {140001}, schedules, tally);
      }
  std::cout << "past the window: " << tally.trials << " trials equal, " << tally.unpacked
            << " equal packed and as doubles, " << tally.refused << " refused alike\n";
  REQUIRE(tally.unpacked > 250);
}

TEST_CASE("a sweep thread's kept input conversions give every trial its own conversion's outcome",
          "[fast][engine]") {
  // registry.hpp ConvertedInput: inside a ConvertedInputScope, a replay keeps its converted
  // input for the thread's next trial with the same (input id, Input type, format, rounding).
  // The sequence below alternates two inputs of one length and dtype (a cache keyed on the
  // length, or on nothing, would hand one input's copy to the other), runs formats of one
  // dynamic Input type on one input (fp16 stored, acc bf16 / fp8e4m3 / tf32 under rz: a key
  // without the format would reuse a copy rounded to another format), and stochastic
  // rounding (never kept: its conversion draws from the stream). Every outcome must equal the
  // same trial run alone, without the scope.
  struct Step {
    const char* op;
    const char* dtype;
    const char* acc;
    const char* round;
    const char* schedule;
    int input;  // 0 or 1
  };
  const std::vector<Step> steps = {
      {"sum", "bf16", "same", "rne", "pairwise", 0},
      {"kahan", "bf16", "same", "rne", "seq", 0},
      {"sum", "bf16", "same", "rne", "random:1", 1},
      {"lse", "bf16", "same", "rne", "seq", 0},
      {"welford", "bf16", "same", "rne", "blocked:7", 1},
      {"sum", "fp16", "bf16", "rz", "seq", 2},
      {"sum", "fp16", "fp8e4m3", "rz", "seq", 2},
      {"kahan", "fp16", "tf32", "rz", "pairwise", 2},
      {"sum", "fp16", "bf16", "rz", "random:2", 3},
      {"sum", "bf16", "same", "sr", "pairwise", 0},
      {"sum", "bf16", "same", "sr", "pairwise", 0},
      {"dot", "bf16", "same", "rne", "pairwise", 0},
      {"argmax", "bf16", "same", "rne", "seq", 1},
      {"sum", "fp32", "same", "rne", "pairwise", 4},
      {"kahan", "fp32", "same", "rne", "seq", 5},
      {"sum", "fp32", "same", "rne", "random:1", 4},
      {"sum", "fp32", "same", "rne", "seq", 5},
      // a built tree (cuda:, not walked): the column decoded, its fp32 conversion kept
      {"sum", "fp32", "same", "rne", "cuda:32", 5},
  };
  const std::uint64_t n = 1000;
  auto resolve = [](const Step& st) {
    run::TrialSpec spec;
    spec.op = st.op;
    spec.dtype = st.dtype;
    spec.acc = st.acc;
    spec.round = st.round;
    spec.schedule = st.schedule;
    return run::ResolveTrial(spec);
  };
  // Inputs 0/1 (bf16), 2/3 (fp16), 4/5 (fp32): each pair of one length and dtype, other seeds;
  // made for each step's op (pairs for dot) once, then reused as a sweep reuses them.
  std::map<std::pair<int, std::string>, run::TrialInput> inputs;
  auto input_for = [&](const Step& st, const run::ResolvedTrial& t) -> const run::TrialInput& {
    const auto key = std::make_pair(st.input, std::string(st.op) == "dot" ? "pairs" : "column");
    auto it = inputs.find(key);
    if (it == inputs.end())
      it = inputs
               .emplace(key, run::MakeInput(t, inputs::ParseGenerator("normal"), n,
                                            static_cast<std::uint64_t>(11 + st.input)))
               .first;
    return it->second;
  };
  std::vector<run::TrialOutcome> alone;
  for (const Step& st : steps) {
    const run::ResolvedTrial t = resolve(st);
    const run::TrialInput& in = input_for(st, t);
    alone.push_back(run::RunTrial(t, in, run::ComputeReference(t, in)));
  }
  {
    const registry::ConvertedInputScope keep;
    for (int pass = 0; pass < 2; ++pass) {
      for (std::size_t i = 0; i < steps.size(); ++i) {
        const Step& st = steps[i];
        INFO("pass " << pass << " step " << i << ": --op " << st.op << " --dtype " << st.dtype
                     << " --acc " << st.acc << " --round " << st.round << " --schedule "
                     << st.schedule << " --gen normal --n " << n << " --seed " << 11 + st.input);
        const run::ResolvedTrial t = resolve(st);
        const run::TrialInput& in = input_for(st, t);
        RequireSameOutcome(run::RunTrial(t, in, run::ComputeReference(t, in)), alone[i]);
      }
    }
    REQUIRE(registry::ThreadConvertedInput().data != nullptr);  // the last step kept one
  }
  REQUIRE(registry::ThreadConvertedInput().data == nullptr);  // the scope's end freed it
  std::cout << "kept conversions: " << 2 * steps.size() << " trials equal to their own runs\n";
}

#ifdef CARRIER_EXE
namespace {

struct CliRun {
  int code = -1;
  std::string out;
};

CliRun Cli(const std::string& args) {
  CliRun r;
  const std::string cmd = std::string(CARRIER_EXE) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, got);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// eval's JSON without the two timing fields.
std::string WithoutTimes(std::string json) {
  for (const char* key : {"\"reference_seconds\":", "\"seconds\":"}) {
    const auto at = json.find(key);
    if (at == std::string::npos) continue;
    const auto end = json.find_first_of(",}", at);
    json.erase(at, end - at);
  }
  return json;
}

}  // namespace

TEST_CASE(
    "eval --engine gives the same JSON under both engines and bad engine or n or memory exit 2",
    "[fast][engine]") {
  for (const char* cell : {"--op sum --dtype fp32 --schedule pairwise",
                           "--op welford --dtype bf16 --schedule blocked:64",
                           "--op lse --dtype fp16 --acc fp32 --schedule random:3",
                           "--op kahan --dtype bf16 --round rz --schedule strided:16"}) {
    const std::string base = std::string("eval ") + cell + " --gen normal --n 100000 --format json";
    const CliRun fast = Cli(base + " --engine fast");
    const CliRun oracle = Cli(base + " --engine oracle");
    INFO(base << "\nfast: " << fast.out << "\noracle: " << oracle.out);
    REQUIRE(fast.code == 0);
    REQUIRE(oracle.code == 0);
    REQUIRE(WithoutTimes(fast.out) == WithoutTimes(oracle.out));
  }
  const CliRun bad = Cli("eval --op sum --dtype fp32 --gen normal --n 16 --engine turbo");
  INFO(bad.out);
  REQUIRE(bad.code == 2);
  REQUIRE(bad.out.find("--engine must be one of fast, oracle") != std::string::npos);
  const CliRun big = Cli("eval --op sum --dtype fp32 --gen normal --n 2^31");
  INFO(big.out);
  REQUIRE(big.code == 2);
  REQUIRE(big.out.find("at most 2^30") != std::string::npos);
  // The oracle's 2^31-node tree at n = 2^30 (about 200 GiB) exceeds any machine this runs on:
  // one line naming the bytes needed, before anything is generated.
  const CliRun mem =
      Cli("eval --op sum --dtype fp32 --gen normal --n 2^30 --schedule pairwise --engine oracle");
  INFO(mem.out);
  REQUIRE(mem.code == 2);
  // (4 stored + 8 decoded + 4 fp32 copy + 192 tree) bytes per value, run/memory.hpp.
  REQUIRE(mem.out.find("needs about 223338299392 bytes") != std::string::npos);
  REQUIRE(std::count(mem.out.begin(), mem.out.end(), '\n') == 1);
}
#endif
