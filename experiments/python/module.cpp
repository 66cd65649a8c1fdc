// experiments/python/module.cpp: carrier._carrier, the compiled half of `import carrier`
// (carrier/__init__.py is the other, which checks types, maps numpy dtypes and documents).
// Drivers only, as the CLI: every number comes from the public trial API (run::ResolveTrial,
// MakeInput / MakeInputFromValues, ComputeReference, RunTrial), core's BuildTree, the sweep
// runner (sweep::ParseConfig, RunSweep) and the laws verb itself.
//
// Contracts:
//  - _eval follows `carrier eval` (experiments/verbs/eval.cpp) check for check: the op's input
//    kind decides what it takes (one column: x; pairs, dot and affine: x and y, or x of shape
//    (n, 2); attention q/k/v: q, k and v, each (n, head_dim)), a file (ReadNumbersFile, as
//    --input) or a generator (gen, n, seed). Arrays arrive as float64 C-contiguous numpy arrays
//    (the package converts once) and are copied under the GIL; the trial API then keeps its
//    own copy rounded to the storage format (the stored input it certifies). A wrong shape or
//    kind of input is a ValueError naming what the op takes, never a crash.
//  - _eval returns a dict with the field names of `carrier eval --format json` (and of the sweep
//    CSV): numbers as Python floats and ints, booleans as bools; the package wraps it in
//    carrier.EvalResult.
//  - _round (carrier.round) is precision/round_array.hpp's RoundArray on a float64 or float32
//    C-contiguous array, into a new array of the same shape and dtype or into `out`.
//  - _quantize (carrier.quantize) is precision/block_scaled.hpp's Quantize on a float64
//    C-contiguous array of one dimension (a vector) or two (a row-major matrix: blocks run
//    along rows, or B x B tiles for :2dB): a dict of numpy arrays (codes, elements, values and
//    block of x's shape; scale_codes and scales of shape (block_rows, block_cols)) and the
//    per-tensor scales.
//  - The GIL is released while the reference, the reduction, a tree, a sweep, the laws or a
//    rounding loop run.
//  - Every refusal (SpecError, backends::Unavailable, the CLI's UsageError, ScheduleError, a
//    sweep ConfigError, an input file's InputError, a bad generator) is a Python ValueError
//    carrying the same one-line message as the CLI. Anything else propagates through
//    pybind11's translation (MemoryError, RuntimeError), never past the interpreter.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backends/backends.hpp"
#include "cli/args.hpp"
#include "core/merge_tree.hpp"
#include "core/schedule.hpp"
#include "core/tree_hash.hpp"
#include "core/tree_io.hpp"
#include "inputs/generators.hpp"
#include "inputs/read_numbers.hpp"
#include "io/tree_file.hpp"
#include "precision/block_scaled.hpp"
#include "precision/precision_policy.hpp"
#include "precision/role_bounds.hpp"
#include "precision/round_array.hpp"
#include "precision/rounding.hpp"
#include "registry/registry.hpp"
#include "run/defaults.hpp"
#include "run/explain.hpp"
#include "run/memory.hpp"
#include "run/tree_shape.hpp"
#include "run/trial.hpp"
#include "sweep/config.hpp"
#include "sweep/runner.hpp"
#include "verbs/verbs.hpp"

#if defined(CARRIER_HAVE_TOMLPP) && CARRIER_HAVE_TOMLPP
#include "sweep/default_config.hpp"
#endif

#ifndef CARRIER_VERSION
#define CARRIER_VERSION "unknown"
#endif

namespace py = pybind11;

namespace carrier::cli {
// verbs/eval_matmul.cpp: eval --op matmul (M x N x K dots, run/matmul.hpp).
int RunEvalMatmul(const std::vector<std::string>& argv);
}  // namespace carrier::cli

namespace carrier::python {
namespace {

[[noreturn]] void Bad(const std::string& message) { throw py::value_error(message); }

// Runs f with the GIL released, turning carrier's refusals into ValueError.
template <class F>
auto Guarded(F&& f) {
  try {
    py::gil_scoped_release release;
    return f();
  } catch (const run::SpecError& e) {
    Bad(e.what());
  } catch (const backends::Unavailable& e) {
    Bad(e.what());
  } catch (const cli::UsageError& e) {
    Bad(e.what());
  } catch (const ScheduleError& e) {
    Bad(e.what());
  } catch (const sweep::ConfigError& e) {
    Bad(e.what());
  } catch (const inputs::InputError& e) {
    Bad(std::string("carrier eval: ") + e.what());
  } catch (const std::invalid_argument& e) {
    Bad(e.what());
  }
}

std::string Joined(const std::vector<std::string>& v) { return registry::Join(v, " "); }

// One array argument as (rows, columns, values): a float64 C-contiguous view copied while the
// GIL is held. `name` names it in every message.
struct Array {
  std::vector<double> values;
  py::ssize_t ndim = 0;
  std::vector<py::ssize_t> shape;
};

Array ReadArray(const py::object& obj, const char* name, bool allow_nonfinite) {
  auto arr = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(obj);
  if (!arr) throw py::type_error(std::string(name) + " must be an array of real numbers");
  Array a;
  a.ndim = arr.ndim();
  for (py::ssize_t d = 0; d < arr.ndim(); ++d) a.shape.push_back(arr.shape(d));
  const double* p = arr.data();
  a.values.assign(p, p + arr.size());
  if (!allow_nonfinite)
    for (std::size_t i = 0; i < a.values.size(); ++i)
      if (!std::isfinite(a.values[i])) {
        std::string where = std::to_string(i);
        if (a.ndim == 2 && a.shape[1] > 0)
          where = std::to_string(i / a.shape[1]) + ", " + std::to_string(i % a.shape[1]);
        Bad(std::string(name) + "[" + where +
            "] is not finite (nan or inf; allow_nonfinite=True accepts them, as the CLI's "
            "--allow-nonfinite)");
      }
  return a;
}

std::string ShapeText(const Array& a) {
  std::string s = "(";
  for (std::size_t d = 0; d < a.shape.size(); ++d)
    s += (d ? ", " : "") + std::to_string(a.shape[d]);
  return s + (a.shape.size() == 1 ? ",)" : ")");
}

// Everything carrier.eval passes; the package has checked the types.
struct EvalArgs {
  std::string op;
  py::object x, y, q, k, v;
  std::string input;  // a file (--input); "" for none
  std::string dtype, acc, round, precision, schedule, exp, backend, engine, gen;
  bool schedule_given = false, dtype_given = false, acc_given = false, round_given = false;
  bool precision_given = false, exp_given = false;
  std::uint64_t n = 0, seed = 1, sr_seed = 0, head_dim = 0;
  bool n_given = false, sr_seed_given = false, head_dim_given = false;
  bool allow_nonfinite = false;
};

double D(long double v) { return static_cast<double>(v); }

py::dict Eval(const EvalArgs& a) {
  const registry::Entry* entry = registry::Find(a.op);
  const std::vector<std::string> ops = registry::TrialOps();
  if (!entry || std::find(ops.begin(), ops.end(), a.op) == ops.end())
    Bad("carrier eval: op '" + a.op + "' must be one of: " + Joined(ops) +
        registry::MainJobOpsNote());
  const bool qkv = entry->input == registry::InputKind::kAttention;
  const bool pairs = entry->input == registry::InputKind::kPairs;
  const std::string takes = qkv     ? "q, k and v (each n x head_dim), or gen with n and head_dim"
                            : pairs ? "two columns: x and y (one-dimensional, the same length), "
                                      "x of shape (n, 2), a two-column file (input=) or gen with n"
                                    : "one column: x (one-dimensional), a file (input=) or gen "
                                      "with n";
  auto refuse = [&](const std::string& why) {
    Bad("carrier eval: op " + a.op + " takes " + takes + "; " + why);
  };

  // q, k, v: their head dimension is head_dim's default.
  std::uint64_t head_dim = a.head_dim;
  const bool have_qkv = !a.q.is_none() || !a.k.is_none() || !a.v.is_none();
  const bool have_x = !a.x.is_none() || !a.y.is_none();
  const int sources =
      int(have_x) + int(have_qkv) + int(!a.input.empty()) + int(!a.gen.empty() || a.n_given);
  if (sources > 1)
    Bad("carrier eval: give one input: x (and y), q/k/v, input (a file) or gen with n");
  if (sources == 0) refuse("no input given");
  if (have_qkv && !qkv) refuse("q, k and v are attention's inputs");
  if (have_x && qkv) refuse("not x or y");
  if (!a.input.empty() && qkv)
    Bad("carrier eval: op " + a.op + " takes generated or array inputs only (q, k, v or gen)");
  if (!a.y.is_none() && !pairs) refuse("y is the second column of dot and affine");
  if (!a.x.is_none() || !a.y.is_none()) {
    if (a.x.is_none()) refuse("y without x");
  }

  Array qa, ka, va;
  if (have_qkv) {
    if (a.q.is_none() || a.k.is_none() || a.v.is_none()) refuse("give all three of q, k and v");
    qa = ReadArray(a.q, "q", a.allow_nonfinite);
    ka = ReadArray(a.k, "k", a.allow_nonfinite);
    va = ReadArray(a.v, "v", a.allow_nonfinite);
    for (const Array* m : {&qa, &ka, &va})
      if (m->ndim != 2) refuse("each must be two-dimensional, got shape " + ShapeText(*m));
    if (qa.shape != ka.shape || qa.shape != va.shape)
      refuse("their shapes differ: q " + ShapeText(qa) + ", k " + ShapeText(ka) + ", v " +
             ShapeText(va));
    if (qa.shape[0] == 0) refuse("they are empty (n = 0)");
    const auto d = static_cast<std::uint64_t>(qa.shape[1]);
    if (a.head_dim_given && d != a.head_dim)
      refuse("head_dim=" + std::to_string(a.head_dim) + " but q has " + std::to_string(d) +
             " columns");
    head_dim = d;
  }
  if (!entry->head_dims.empty() && !a.head_dim_given && !have_qkv) {
    std::string dims;
    for (auto d : entry->head_dims) dims += (dims.empty() ? "" : " ") + std::to_string(d);
    Bad("carrier eval: op " + a.op + " needs head_dim (" + dims +
        "): n queries over n keys, each of dimension head_dim");
  }
  if (entry->head_dims.empty() && a.head_dim_given)
    Bad("carrier eval: head_dim goes with an op that has head dims (attention), not " + a.op);
  if (qkv && std::find(entry->head_dims.begin(), entry->head_dims.end(), head_dim) ==
                 entry->head_dims.end()) {
    std::string dims;
    for (auto d : entry->head_dims) dims += (dims.empty() ? "" : " ") + std::to_string(d);
    Bad("carrier eval: head_dim " + std::to_string(head_dim) + " is not built for " + a.op +
        "; allowed: " + dims);
  }

  // precision (a per-role policy, as --precision) or the dtype/acc/round shorthand.
  std::string dtype = a.dtype, acc = a.acc, round = a.round, out;
  if (a.precision_given) {
    if (a.dtype_given || a.acc_given || a.round_given)
      Bad("carrier eval: precision replaces dtype, acc and round: give one or the other");
    try {
      const ShorthandSpec sh = ToShorthand(ParsePrecisionPolicy(a.precision));
      dtype = sh.dtype;
      acc = sh.acc;
      round = sh.round;
      out = sh.out;
    } catch (const std::invalid_argument& e) {
      Bad(std::string("carrier eval: precision: ") + e.what() +
          " (per-role attention: carrier study attention-deviation)");
    }
  } else if (!a.dtype_given) {
    throw py::type_error("carrier.eval() needs dtype= (the storage format) or precision=");
  }
  if (a.exp_given) {
    const auto& names = registry::ExpNames();
    if (std::find(names.begin(), names.end(), a.exp) == names.end())
      Bad("carrier eval: exp '" + a.exp + "' must be one of: " + Joined(names));
  }
  const auto backends = registry::BackendNames();
  if (std::find(backends.begin(), backends.end(), a.backend) == backends.end())
    Bad("carrier eval: backend '" + a.backend + "' must be one of: " + Joined(backends));
  const auto& engines = run::Engines();
  if (std::find(engines.begin(), engines.end(), a.engine) == engines.end())
    Bad("carrier eval: engine '" + a.engine + "' must be one of: " + Joined(engines));
  if (a.schedule_given && a.schedule.empty()) Bad("carrier eval: schedule needs a value");

  run::TrialSpec spec;
  spec.op = a.op;
  spec.dtype = dtype;
  spec.acc = acc;
  spec.round = round;
  spec.out = out;
  spec.exp = a.exp_given ? a.exp : "";
  spec.backend = a.backend;
  spec.schedule = a.schedule_given ? a.schedule : "";
  const std::vector<std::string> notes = run::ApplyDefaults(spec);
  spec.head_dim = head_dim;
  spec.sr_seed = a.sr_seed_given ? a.sr_seed : a.seed;
  spec.engine = a.engine;
  const run::ResolvedTrial trial = Guarded([&] { return run::ResolveTrial(spec); });

  run::TrialInput input;
  if (!a.x.is_none()) {
    Array xa = ReadArray(a.x, "x", a.allow_nonfinite);
    std::vector<double> col_a, col_b;
    if (pairs && a.y.is_none()) {
      if (xa.ndim != 2 || xa.shape[1] != 2) refuse("got x of shape " + ShapeText(xa) + " and no y");
      col_a.reserve(xa.shape[0]);
      col_b.reserve(xa.shape[0]);
      for (py::ssize_t i = 0; i < xa.shape[0]; ++i) {
        col_a.push_back(xa.values[2 * i]);
        col_b.push_back(xa.values[2 * i + 1]);
      }
    } else {
      if (xa.ndim != 1)
        refuse("got x of shape " + ShapeText(xa) + (pairs ? " with y" : "") +
               " (one-dimensional expected)");
      col_a = std::move(xa.values);
      if (pairs) {
        Array ya = ReadArray(a.y, "y", a.allow_nonfinite);
        if (ya.ndim != 1) refuse("got y of shape " + ShapeText(ya) + " (one-dimensional expected)");
        if (ya.values.size() != col_a.size())
          refuse("x has " + std::to_string(col_a.size()) + " values and y " +
                 std::to_string(ya.values.size()));
        col_b = std::move(ya.values);
      }
    }
    if (col_a.empty()) refuse("x is empty");
    if (a.n_given) Bad("carrier eval: n goes with gen; an array's length is its own");
    input = Guarded([&] {
      return run::MakeInputFromValues(trial, std::move(col_a), std::move(col_b),
                                      pairs ? "numpy arrays" : "numpy array");
    });
  } else if (have_qkv) {
    if (a.n_given) Bad("carrier eval: n goes with gen; q's rows are the sequence length");
    std::vector<double> all;
    all.reserve(qa.values.size() * 3);
    for (const Array* m : {&qa, &ka, &va})
      all.insert(all.end(), m->values.begin(), m->values.end());
    input = Guarded([&] {
      // MakeInputFromValues rounds every value to the storage format; attention's input is
      // q, k, v concatenated in `a` with n the sequence length (trial.hpp TrialInput).
      run::TrialInput in = run::MakeInputFromValues(trial, std::move(all), {}, "numpy q, k, v");
      in.n = static_cast<std::uint64_t>(qa.shape[0]);
      in.id = run::NewInputId();
      return in;
    });
  } else if (!a.input.empty()) {
    if (a.n_given) Bad("carrier eval: n goes with gen; a file's length is its own");
    input = Guarded([&] {
      auto cols = inputs::ReadNumbersFile(a.input, pairs ? 2 : 1, a.allow_nonfinite);
      return run::MakeInputFromValues(trial, std::move(cols.a), std::move(cols.b),
                                      "file:" + a.input);
    });
  } else {
    if (a.gen.empty()) Bad("carrier eval: n goes with gen (a generator such as 'normal')");
    if (!a.n_given) Bad("carrier eval: gen needs n (the number of inputs)");
    if (a.n == 0) Bad("carrier eval: n must be at least 1");
    if (a.n > run::kMaxTrialN) Bad("carrier eval: n must be at most 2^30 for eval");
    const inputs::GeneratorSpec g = Guarded([&] { return inputs::ParseGenerator(a.gen); });
    // Before anything is generated: one line naming the bytes needed, as the CLI's eval.
    Guarded([&] { run::CheckTrialMemory(trial, a.n, 1, a.gen); });
    input = Guarded([&] { return run::MakeInput(trial, g, a.n, a.seed); });
  }
  // Finite values the storage format cannot hold are refused, as the CLI's eval refuses them.
  if (input.storage_overflows > 0 && !a.allow_nonfinite)
    Bad("carrier eval: " + run::StorageOverflowText(input, trial.storage.name) +
        " (allow_nonfinite=True studies overflow)");
  const run::SharedReference shared = Guarded([&] { return run::ComputeReference(trial, input); });
  const run::TrialOutcome o = Guarded([&] { return run::RunTrial(trial, input, shared); });
  const reference::Reference& ref = shared.ref;

  // The fields of `carrier eval --format json`, in its order.
  py::dict r;
  r["op"] = a.op;
  r["dtype"] = trial.storage.name;
  r["acc"] = trial.compute.text;
  if (trial.out)
    r["out"] = trial.out->name;
  else
    r["out"] = py::none();
  r["round"] = std::string(RoundingName(trial.rounding));
  r["precision"] = a.precision_given ? py::object(py::str(a.precision)) : py::object(py::none());
  r["sr_seed"] = trial.rounding == Rounding::kStochastic ? py::object(py::int_(spec.sr_seed))
                                                         : py::object(py::none());
  r["exp"] = spec.exp;
  r["backend"] = spec.backend;
  r["engine"] = spec.engine;
  r["head_dim"] = qkv ? py::object(py::int_(spec.head_dim)) : py::object(py::none());
  r["schedule"] = spec.schedule;
  r["schedule_used"] = o.schedule_used;
  std::string defaults;
  for (const auto& d : notes) defaults += (defaults.empty() ? "" : "; ") + d;
  r["defaults"] = defaults;
  r["tree_max_depth"] = o.tree_max_depth;
  r["tree_mean_depth"] = o.tree_mean_depth;
  r["tree_hash"] = o.tree_hash;
  r["n"] = o.n;
  r["input"] = input.text;
  if (!a.gen.empty()) r["generator"] = inputs::kGeneratorVersion;  // as the CLI's eval
  r["vector_out"] = o.vector_out;
  py::list components;
  for (long double c : o.components) components.append(D(c));
  r["components"] = components;
  py::dict named;  // the other components by the entry's names
  if (o.vector_out) {
    r["result"] = py::none();
    r["reference"] = py::none();
    r["normwise_inf_error"] = o.normwise_inf;
    r["normwise_2_error"] = o.normwise_2;
    r["componentwise_error"] = o.componentwise;
    r["zero_reference_components"] = o.zero_components;
    r["abs_error"] = o.abs_error;
    r["rel_error"] = o.rel_error;
    r["ulp_error"] = py::none();
  } else {
    r["result"] = D(o.components.at(o.main));
    r["reference"] = ref.as_double.at(o.main);
    if (ref.index >= 0) {
      r["result_index"] = o.index;
      r["reference_index"] = ref.index;
    }
    for (std::size_t c = 0; c < o.components.size() && c < ref.as_double.size(); ++c) {
      if (c == o.main) continue;
      const std::string name =
          c < entry->component_names.size() ? entry->component_names[c] : "c" + std::to_string(c);
      named[py::str(name)] = py::make_tuple(D(o.components[c]), ref.as_double[c]);
    }
    r["abs_error"] = o.abs_error;
    r["rel_error"] = o.rel_error;
    r["ulp_error"] = o.ulp_error;
    r["reference_is_zero"] = o.reference_zero;
    r["special_value_mismatch"] = o.special_mismatch;
  }
  r["other_components"] = named;
  r["cond"] = entry->cond ? py::object(py::float_(o.cond)) : py::object(py::none());
  r["reference_tier"] = shared.tier;
  r["reference_bits"] = ref.cert.precision_bits;
  r["reference_certified"] = ref.cert.certified;
  r["reference_note"] = ref.cert.note;
  r["bound_available"] = o.has_bound;
  if (!o.has_bound) {
    r["bound"] = py::none();
    r["bound_kind"] = "unavailable";
    r["bound_formula"] = trial.user ? "none: a registered user carrier declares no a-priori bound"
                                    : "none: the op table has no a-priori bound for " + a.op;
    r["error_to_bound"] = NAN;
    r["bound_vacuous"] = false;
  } else {
    r["bound"] = o.bound;
    r["bound_kind"] = std::string(o.bound_relative ? "relative" : "absolute") +
                      (o.bound_rigorous ? ", rigorous" : ", first-order estimate");
    r["bound_formula"] = o.bound_formula;
    r["error_to_bound"] = o.error_to_bound;
    r["bound_vacuous"] = o.bound_vacuous;
  }
  r["bound_relative"] = o.bound_relative;
  r["bound_rigorous"] = o.bound_rigorous;
  // precision: the a-priori bound with its terms by role, as eval.cpp prints it.
  if (a.precision_given && entry->bound && !trial.adaptive &&
      trial.schedule.kind() != ScheduleKind::kMma) {
    const PrecisionPolicy policy = ParsePrecisionPolicy(a.precision);
    RoleBound rb;
    const bool have = Guarded([&] {
      TreeShape shape;
      if (!run::ShapeOfSchedule(trial.schedule, o.n, shape))
        shape = ShapeOfTree(BuildTree(trial.schedule, o.n));
      std::vector<ValuePair<double>> zipped;
      BoundInputs bi = run::BoundInputsOf(input, pairs, zipped);
      bi.exact = ref.as_long_double;
      bi.main = o.vector_out ? ref.as_long_double.size() : o.main;
      bi.head_dim = spec.head_dim;
      bi.attention_a = shared.attention_a;
      bi.attention_b = shared.attention_b;
      bi.attention_q = shared.attention_q;
      const run::ComputeKind kind = trial.compute.kind;
      const ExpArithmetic how = kind == run::ComputeKind::kEmulated ? ExpArithmetic::kEmulated
                                : kind == run::ComputeKind::kMpfr   ? ExpArithmetic::kMpfr
                                : spec.exp == "portable"            ? ExpArithmetic::kNativePortable
                                                                    : ExpArithmetic::kNativeLibm;
      const double u_exp = ExpRelativeError(how, RoleUnitRoundoff(policy.acc));
      return RoleBoundFor(entry->bound, policy, shape.stats, bi, u_exp, u_exp, false, rb);
    });
    if (have) {
      r["role_bound"] = rb.value;
      r["role_bound_kind"] = std::string(rb.relative ? "relative" : "absolute") +
                             (rb.rigorous ? ", rigorous" : ", first-order estimate");
      r["role_bound_note"] = RoleBoundNote(rb);
    }
  }
  r["u"] = o.u;
  r["reference_seconds"] = shared.seconds;
  r["seconds"] = o.seconds;
  return r;
}

struct Tree {
  MergeTree tree;
  TreeStats stats;
};

Tree MakeTree(const std::string& schedule, std::uint64_t n, bool n_given) {
  if (n_given && n > (std::uint64_t{1} << 26))
    Bad("carrier tree: n must be at most 2^26 for carrier.tree (explicit trees)");
  return Guarded([&] {
    const bool from_file = schedule.rfind("file:", 0) == 0;
    if (!n_given) {
      if (!from_file)
        throw cli::UsageError("carrier tree: n is needed (only a file: tree carries its own)");
      std::ifstream f(schedule.substr(5), std::ios::binary);
      if (!f) throw cli::UsageError("carrier tree: cannot open '" + schedule.substr(5) + "'");
      std::stringstream text;
      text << f.rdbuf();
      n = TreeFromJson(text.str(), schedule).n;
    }
    Tree t;
    t.tree = BuildTree(io::LoadSchedule(schedule), n);
    t.stats = ComputeStats(t.tree);
    return t;
  });
}

py::dict TreeStatsDict(const Tree& t) {
  py::dict d;
  d["n"] = t.stats.n;
  d["chains"] = t.stats.chains;
  d["combines"] = t.stats.combines;
  d["longest_chain"] = t.stats.longest_chain;
  d["combine_depth"] = t.stats.combine_depth;
  d["max_leaf_depth"] = t.stats.max_leaf_depth;
  d["mean_leaf_depth"] = t.stats.mean_leaf_depth;
  d["permutes"] = t.tree.permutes;
  d["nodes"] = t.tree.NodeCount();
  d["tree_hash"] = TreeHash(t.tree);
  d["binary_hash"] = TreeHash(t.tree, TreeForm::kBinary);
  return d;
}

// A CLI verb in process, its stdout captured (one verb at a time: std::cout is global).
std::string RunVerb(int (*verb)(const std::vector<std::string>&), std::vector<std::string> argv,
                    int* code) {
  static std::mutex m;
  return Guarded([&] {
    std::lock_guard<std::mutex> lock(m);
    std::ostringstream out;
    std::streambuf* old = std::cout.rdbuf(out.rdbuf());
    try {
      *code = verb(argv);
    } catch (...) {
      std::cout.rdbuf(old);
      throw;
    }
    std::cout.rdbuf(old);
    return out.str();
  });
}

#if defined(CARRIER_HAVE_TOMLPP) && CARRIER_HAVE_TOMLPP
// The config text parsed and checked (sweep::ParseConfig): ConfigError -> ValueError.
sweep::Config ParseSweep(const std::string& text, const std::string& path) {
  return Guarded([&] { return sweep::ParseConfig(text, path); });
}
#else
[[noreturn]] void NoToml() {
  Bad("carrier sweep: this build has no toml++ (Debian: libtomlplusplus-dev; rerun cmake after "
      "installing it), so it cannot read sweep configs");
}
#endif

// The trials a config expands to, as (column names, rows): the sweep's dry run.
py::tuple SweepTrials(const std::string& text, const std::string& path) {
#if defined(CARRIER_HAVE_TOMLPP) && CARRIER_HAVE_TOMLPP
  const sweep::Config cfg = ParseSweep(text, path);
  const std::vector<sweep::TrialParams> trials = Guarded([&] { return sweep::Enumerate(cfg); });
  py::list rows;
  for (const auto& p : trials) {
    py::tuple row = py::make_tuple(
        p.trial_id, p.op, p.precision, p.dtype, p.acc, p.round, p.exp, p.schedule, p.backend, p.n,
        p.input, p.head_dim ? py::object(py::int_(p.head_dim)) : py::object(py::none()), p.trial,
        p.input_seed);
    rows.append(row);
  }
  std::vector<std::string> cols = {"trial_id", "op",       "precision", "dtype",     "acc",
                                   "round",    "exp",      "schedule",  "backend",   "n",
                                   "input",    "head_dim", "trial",     "input_seed"};
  return py::make_tuple(cols, rows, cfg.name);
#else
  (void)text;
  (void)path;
  NoToml();
#endif
}

// Runs a config (its text; `path` names it in messages) into `out` ("" = sweep-NAME); returns
// (exit code, output folder, what it printed on stdout when quiet).
py::tuple RunSweepText(const std::string& text, const std::string& path, const std::string& out,
                       std::uint64_t jobs, bool resume, std::uint64_t shard_k,
                       std::uint64_t shard_n, const std::string& engine, bool quiet) {
#if defined(CARRIER_HAVE_TOMLPP) && CARRIER_HAVE_TOMLPP
  const sweep::Config cfg = ParseSweep(text, path);
  sweep::SweepOptions opt;
  opt.out_dir = out.empty() ? "sweep-" + cfg.name : out;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  if (jobs == 0) jobs = hw;
  if (jobs > 1024) Bad("carrier sweep: jobs must be from 1 to 1024");
  opt.jobs = static_cast<unsigned>(jobs);
  if (engine != "fast" && engine != "oracle")
    Bad("carrier sweep: engine '" + engine + "' must be one of: fast oracle");
  opt.engine = engine;
  opt.resume = resume;
  opt.quiet = quiet;
  if (shard_n != 0 && (shard_k < 1 || shard_k > shard_n))
    Bad("carrier sweep: shard K/N needs 1 <= K <= N, got " + std::to_string(shard_k) + "/" +
        std::to_string(shard_n));
  opt.shard_k = shard_k;
  opt.shard_n = shard_n;
  // quiet: the runner's closing line (printf to stdout) goes to a temporary file instead, and
  // comes back as text; file descriptor 1 is the process's, so for the sweep's duration other
  // threads' stdout goes there too.
  std::FILE* captured = quiet ? std::tmpfile() : nullptr;
  int saved_stdout = -1;
  if (captured) {
    std::fflush(stdout);
    saved_stdout = ::dup(1);
    if (saved_stdout < 0 || ::dup2(::fileno(captured), 1) < 0) {
      if (saved_stdout >= 0) ::close(saved_stdout);
      saved_stdout = -1;
    }
  }
  auto restore = [&] {
    if (saved_stdout < 0) return;
    std::fflush(stdout);
    ::dup2(saved_stdout, 1);
    ::close(saved_stdout);
    saved_stdout = -1;
  };
  int code = 0;
  try {
    code = Guarded([&] { return sweep::RunSweep(cfg, opt); });
  } catch (...) {
    restore();
    if (captured) std::fclose(captured);
    throw;
  }
  restore();
  std::string said;
  if (captured) {
    std::rewind(captured);
    char buf[4096];
    for (std::size_t got; (got = std::fread(buf, 1, sizeof buf, captured)) > 0;)
      said.append(buf, got);
    std::fclose(captured);
  }
  return py::make_tuple(code, opt.out_dir, said);
#else
  (void)text, (void)path, (void)out, (void)jobs, (void)resume, (void)shard_k, (void)shard_n;
  (void)engine, (void)quiet;
  NoToml();
#endif
}

// carrier.round: RoundArray (precision/round_array.hpp) over a C-contiguous float64 or float32
// array of any shape (the package converts everything else), into `out` (None: a new array of
// the same shape and dtype; else an array of that shape and dtype, C-contiguous and writeable,
// which may be x itself). `subnormals` -1 keeps the format's own setting, 0 or 1 overrides it.
// A bad format or mode name is a ValueError with ParseFormat's / ParseRounding's one-line
// message. The loop runs with the GIL released (the caller's references keep both arrays alive).
py::array RoundValues(const py::array& x, const std::string& format, const std::string& rounding,
                      std::uint64_t seed, std::uint64_t counter, int subnormals,
                      const py::object& out_obj) {
  Format f;
  Rounding r;
  try {
    f = ParseFormat(format);
    r = ParseRounding(rounding);
  } catch (const std::invalid_argument& e) {
    Bad(e.what());
  }
  if (subnormals >= 0 && f.subnormals != (subnormals == 1)) {
    f.subnormals = subnormals == 1;
    f.name = CustomFormatName(f.precision, f.emin, f.emax, f.subnormals, f.has_inf, f.saturate,
                              f.top_significand_is_nan);
  }
  if (!(x.flags() & py::array::c_style))
    throw py::type_error("carrier._round: x must be C-contiguous");
  const std::vector<py::ssize_t> shape(x.shape(), x.shape() + x.ndim());
  const auto n = static_cast<std::size_t>(x.size());
  auto run = [&](auto tag) -> py::array {
    using T = decltype(tag);
    py::array_t<T> out;
    if (out_obj.is_none()) {
      out = py::array_t<T>(shape);
    } else {
      out = py::reinterpret_borrow<py::array_t<T>>(out_obj);
      if (!py::isinstance<py::array_t<T>>(out_obj) || out.size() != x.size() ||
          !(out.flags() & py::array::c_style) || !out.writeable())
        throw py::type_error(
            "carrier._round: out must be a writeable C-contiguous array of x's "
            "shape and dtype");
    }
    const T* in = static_cast<const T*>(x.data());
    T* dst = out.mutable_data();
    Guarded([&] {
      RoundArray(std::span<const T>(in, n), std::span<T>(dst, n), f, r, seed, counter);
      return 0;
    });
    return out;
  };
  if (x.dtype().is(py::dtype::of<double>())) return run(double{});
  if (x.dtype().is(py::dtype::of<float>())) {
    if (!RoundsWithinFloat(f))
      Bad("carrier.round: format '" + f.name +
          "' has values that are not float32 values (its precision or exponent range exceeds "
          "fp32's on one side only), so float32 input cannot give float32 output: pass "
          "x.astype(np.float64)");
    return run(float{});
  }
  throw py::type_error("carrier._round: x must be a float64 or float32 array");
}

py::dict QuantizeValues(const py::array& x, const std::string& format) {
  BlockScaledFormat f;
  try {
    f = ParseBlockScaledFormat(format);
  } catch (const std::invalid_argument& e) {
    Bad(e.what());
  }
  if (!x.dtype().is(py::dtype::of<double>()) || !(x.flags() & py::array::c_style))
    throw py::type_error("carrier._quantize: x must be a C-contiguous float64 array");
  if (x.ndim() != 1 && x.ndim() != 2)
    Bad("carrier.quantize: x must have one dimension (a vector) or two (a row-major matrix), "
        "not " +
        std::to_string(x.ndim()));
  if (f.two_d && x.ndim() != 2)
    Bad("carrier.quantize: " + f.name + " has two-dimensional blocks: x must be a matrix");
  const std::size_t rows = x.ndim() == 2 ? static_cast<std::size_t>(x.shape(0)) : 1;
  const std::size_t cols = static_cast<std::size_t>(x.shape(x.ndim() - 1));
  const std::vector<double> in(static_cast<const double*>(x.data()),
                               static_cast<const double*>(x.data()) + x.size());
  const BlockScaledResult q =
      Guarded([&] { return Quantize(f, std::span<const double>(in), rows, cols); });
  const std::vector<py::ssize_t> shape(x.shape(), x.shape() + x.ndim());
  const std::vector<py::ssize_t> bshape = {static_cast<py::ssize_t>(q.block_rows),
                                           static_cast<py::ssize_t>(q.block_cols)};
  auto arr = [](const auto& v, const std::vector<py::ssize_t>& shp) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    py::array_t<T> a(shp);
    std::copy(v.begin(), v.end(), a.mutable_data());
    return a;
  };
  std::vector<std::int64_t> block(q.codes.size());
  for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<std::int64_t>(q.Block(i));
  py::dict d;
  d["format"] = f.name;
  d["codes"] = arr(q.codes, shape);
  d["elements"] = arr(q.elements, shape);
  d["values"] = arr(q.values, shape);
  d["block"] = arr(block, shape);
  d["scale_codes"] = arr(q.scale_codes, bshape);
  d["scales"] = arr(q.scales, bshape);
  d["tensor_scale"] = q.tensor_scale;
  d["encode_scale"] = q.encode_scale;
  return d;
}

// The op table as the package documents and checks it: name -> (input kind, head dims).
py::dict Ops() {
  py::dict d;
  for (const std::string& name : registry::TrialOps()) {
    const registry::Entry* e = registry::Find(name);
    if (!e) continue;
    const char* kind = e->input == registry::InputKind::kColumn  ? "column"
                       : e->input == registry::InputKind::kPairs ? "pairs"
                                                                 : "qkv";
    d[py::str(name)] = py::make_tuple(kind, e->head_dims, e->summary);
  }
  return d;
}

}  // namespace
}  // namespace carrier::python

PYBIND11_MODULE(_carrier, m) {
  using namespace carrier::python;
  namespace cli = carrier::cli;
  m.doc() = "carrier: carrier-state reductions under declared merge orders (compiled part)";
  m.attr("__version__") = CARRIER_VERSION;
  m.def(
      "_eval",
      [](const std::string& op, py::object x, py::object y, py::object q, py::object k,
         py::object v, const std::string& input, py::object dtype, py::object acc, py::object round,
         py::object precision, py::object schedule, py::object exp, const std::string& backend,
         const std::string& engine, const std::string& gen, py::object n, std::uint64_t seed,
         py::object sr_seed, py::object head_dim, bool allow_nonfinite) {
        EvalArgs a;
        a.op = op;
        a.x = std::move(x);
        a.y = std::move(y);
        a.q = std::move(q);
        a.k = std::move(k);
        a.v = std::move(v);
        a.input = input;
        auto text = [](const py::object& o, std::string& out, bool& given) {
          given = !o.is_none();
          if (given) out = o.cast<std::string>();
        };
        auto count = [](const py::object& o, std::uint64_t& out, bool& given) {
          given = !o.is_none();
          if (given) out = o.cast<std::uint64_t>();
        };
        text(dtype, a.dtype, a.dtype_given);
        text(acc, a.acc, a.acc_given);
        text(round, a.round, a.round_given);
        if (!a.round_given) a.round = "rne";
        text(precision, a.precision, a.precision_given);
        text(schedule, a.schedule, a.schedule_given);
        text(exp, a.exp, a.exp_given);
        a.backend = backend;
        a.engine = engine;
        a.gen = gen;
        count(n, a.n, a.n_given);
        a.seed = seed;
        count(sr_seed, a.sr_seed, a.sr_seed_given);
        count(head_dim, a.head_dim, a.head_dim_given);
        a.allow_nonfinite = allow_nonfinite;
        return Eval(a);
      },
      py::arg("op"), py::arg("x"), py::arg("y"), py::arg("q"), py::arg("k"), py::arg("v"),
      py::arg("input"), py::arg("dtype"), py::arg("acc"), py::arg("round"), py::arg("precision"),
      py::arg("schedule"), py::arg("exp"), py::arg("backend"), py::arg("engine"), py::arg("gen"),
      py::arg("n"), py::arg("seed"), py::arg("sr_seed"), py::arg("head_dim"),
      py::arg("allow_nonfinite"));
  py::class_<Tree>(m, "Tree", "The explicit merge tree of a schedule (carrier.tree).")
      .def_property_readonly("stats", &TreeStatsDict,
                             "n, chains, combines, depths, permutes, nodes and the tree hashes")
      .def_property_readonly("schedule", [](const Tree& t) { return t.tree.schedule; })
      .def_property_readonly("n", [](const Tree& t) { return t.tree.n; })
      .def(
          "to_dict",
          [](const Tree& t) {
            py::dict d = TreeStatsDict(t);
            d["schedule"] = t.tree.schedule;
            return d;
          },
          "The schedule and the statistics as one plain dict.")
      .def(
          "to_json", [](const Tree& t) { return carrier::ToJson(t.tree); },
          "The tree as JSON (core/tree_io.hpp; `--schedule file:TREE.json` replays it).")
      .def(
          "to_dot", [](const Tree& t) { return carrier::ToDot(t.tree); }, "Graphviz DOT text.")
      .def(
          "to_text",
          [](const Tree& t, std::uint64_t max_nodes) { return carrier::ToText(t.tree, max_nodes); },
          py::arg("max_nodes") = 256, "Statistics and a drawing (up to max_nodes nodes).")
      .def(py::pickle([](const Tree& t) { return py::make_tuple(t.tree.schedule, t.tree.n); },
                      [](const py::tuple& s) {
                        if (s.size() != 2) Bad("carrier.Tree: bad pickled state");
                        return MakeTree(s[0].cast<std::string>(), s[1].cast<std::uint64_t>(), true);
                      }))
      .def("__repr__", [](const Tree& t) {
        return "Tree(" + t.tree.schedule + ", n=" + std::to_string(t.tree.n) + ", " +
               std::to_string(t.tree.NodeCount()) + " nodes)";
      });
  m.def(
      "_tree",
      [](const std::string& schedule, py::object n) {
        const bool given = !n.is_none();
        return MakeTree(schedule, given ? n.cast<std::uint64_t>() : 0, given);
      },
      py::arg("schedule"), py::arg("n"));
  m.def("_ops", &Ops);
  // carrier explain in process: the search (run/explain.hpp) and its JSON (carrier.explain
  // turns it into a DataFrame).
  m.def(
      "_explain",
      [](const std::string& op, std::vector<double> a, std::vector<double> b,
         const std::string& input, const std::string& gen, std::uint64_t n, std::uint64_t seed,
         const std::string& dtype, std::vector<double> observed, const std::string& search,
         unsigned threads) {
        return Guarded([&] {
          carrier::run::ExplainSpec spec;
          spec.op = op;
          spec.dtype = dtype;
          spec.a = std::move(a);
          spec.b = std::move(b);
          if (!input.empty()) {
            auto cols = carrier::inputs::ReadNumbersFile(input, op == "dot" ? 2 : 1, false);
            spec.a = std::move(cols.a);
            spec.b = std::move(cols.b);
            spec.input_text = "file:" + input;
          }
          spec.gen = gen;
          spec.n = n;
          spec.seed = seed;
          spec.observed = std::move(observed);
          spec.search = search;
          spec.threads = threads;
          return carrier::run::ExplainJson(carrier::run::Explain(spec));
        });
      },
      py::arg("op"), py::arg("a"), py::arg("b"), py::arg("input"), py::arg("gen"), py::arg("n"),
      py::arg("seed"), py::arg("dtype"), py::arg("observed"), py::arg("search"),
      py::arg("threads"));
  m.def("_run_laws", [](std::vector<std::string> argv) {
    int code = 0;
    std::string out = RunVerb(cli::RunLaws, std::move(argv), &code);
    return py::make_tuple(code, out);
  });
  // carrier eval --op matmul in process (verbs/eval_matmul.cpp): carrier.matmul.
  m.def("_run_eval_matmul", [](std::vector<std::string> argv) {
    int code = 0;
    std::string out = RunVerb(cli::RunEvalMatmul, std::move(argv), &code);
    return py::make_tuple(code, out);
  });
  m.def("_run_derive", [](std::vector<std::string> argv) {
    int code = 0;
    std::string out = RunVerb(cli::RunDerive, std::move(argv), &code);
    return py::make_tuple(code, out);
  });
#if defined(CARRIER_HAVE_TOMLPP) && CARRIER_HAVE_TOMLPP
  m.attr("_default_sweep_config") = carrier::sweep::kDefaultConfigText;
#else
  m.attr("_default_sweep_config") = py::none();
#endif
  m.def("_precision_presets", [] {
    std::vector<std::string> names;
    for (const auto& p : carrier::PrecisionPresets()) names.push_back(p.name);
    return names;
  });
  m.def("_round", &RoundValues, py::arg("x"), py::arg("format"), py::arg("rounding"),
        py::arg("seed"), py::arg("counter"), py::arg("subnormals"), py::arg("out"));
  m.def("_quantize", &QuantizeValues, py::arg("x"), py::arg("format"));
  m.def("_sweep_trials", &SweepTrials, py::arg("text"), py::arg("path"));
  m.def("_run_sweep", &RunSweepText, py::arg("text"), py::arg("path"), py::arg("out"),
        py::arg("jobs"), py::arg("resume"), py::arg("shard_k"), py::arg("shard_n"),
        py::arg("engine"), py::arg("quiet"));
}
