// experiments/python/module.cpp: carrier._carrier, the compiled half of `import carrier`
// (carrier/__init__.py is the other). Drivers only, as the CLI: every number comes from the
// public trial API (run::ResolveTrial, MakeInput, ComputeReference, RunTrial), core's
// BuildTree and the CLI verbs themselves.
//
// Contracts:
//  - eval reads a float64 C-contiguous numpy array through the buffer protocol, in place (no
//    Python-side conversion); other dtypes or layouts are converted once by numpy. The trial API
//    then keeps its own copy rounded to the storage format (the stored input it certifies).
//  - The GIL is released while the reference, the reduction, a tree, a sweep or the laws run.
//  - Every refusal (SpecError, backends::Unavailable, the CLI's UsageError, a bad schedule or
//    generator) is a Python ValueError carrying the same one-line message as the CLI.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "backends/backends.hpp"
#include "cli/args.hpp"
#include "core/merge_tree.hpp"
#include "core/schedule.hpp"
#include "inputs/generators.hpp"
#include "run/defaults.hpp"
#include "run/memory.hpp"
#include "run/trial.hpp"
#include "verbs/verbs.hpp"

namespace py = pybind11;

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
  } catch (const std::invalid_argument& e) {
    Bad(e.what());
  }
}

struct EvalResult {
  std::string op, dtype, acc, round, exp, backend, schedule, input, tier, defaults;
  std::uint64_t n = 0;
  double result = NAN, reference = NAN;
  bool certified = false;
  long reference_bits = 0;
  py::dict errors, bound, tree;
  std::vector<double> components;
};

EvalResult Eval(const std::string& op, py::object x, const std::string& dtype,
                const std::string& acc, const std::string& rounding, const std::string& schedule,
                const std::string& backend, const std::string& exp, const std::string& gen,
                std::uint64_t n, std::uint64_t seed, std::uint64_t head_dim) {
  run::TrialSpec spec;
  spec.op = op;
  spec.dtype = dtype;
  spec.acc = acc;
  spec.round = rounding;
  spec.exp = exp;
  spec.schedule = schedule;
  spec.backend = backend;
  spec.head_dim = head_dim;
  spec.sr_seed = seed;
  const std::vector<std::string> notes = run::ApplyDefaults(spec);
  run::ResolvedTrial trial = Guarded([&] { return run::ResolveTrial(spec); });
  run::TrialInput input;
  if (!x.is_none()) {
    if (!gen.empty()) Bad("give either x (an array) or gen (a generator), not both");
    auto arr = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(x);
    if (!arr) Bad("x must be a one-dimensional array of numbers");
    if (arr.ndim() != 1)
      Bad("x must be one-dimensional, got " + std::to_string(arr.ndim()) + " dimensions");
    if (arr.size() == 0) Bad("x is empty");
    const double* p = arr.data();
    const std::size_t size = static_cast<std::size_t>(arr.size());
    for (std::size_t i = 0; i < size; ++i)
      if (!std::isfinite(p[i])) Bad("x[" + std::to_string(i) + "] is not finite (nan or inf)");
    input = Guarded([&] {
      return run::MakeInputFromValues(trial, std::vector<double>(p, p + size), {}, "numpy array");
    });
  } else {
    if (gen.empty()) Bad("give the input: x (an array) or gen (a generator) with n");
    if (n == 0) Bad("n must be at least 1");
    if (n > run::kMaxTrialN) Bad("n must be at most 2^30 for eval");
    // Before anything is generated: one line naming the bytes needed, as the CLI's eval.
    Guarded([&] { run::CheckTrialMemory(trial, n, 1, gen); });
    inputs::GeneratorSpec g = Guarded([&] { return inputs::ParseGenerator(gen); });
    input = Guarded([&] { return run::MakeInput(trial, g, n, seed); });
  }
  const run::SharedReference shared = Guarded([&] { return run::ComputeReference(trial, input); });
  const run::TrialOutcome o = Guarded([&] { return run::RunTrial(trial, input, shared); });

  EvalResult r;
  r.op = op;
  r.dtype = trial.storage.name;
  r.acc = trial.compute.text;
  r.round = spec.round;
  r.exp = spec.exp;
  r.backend = spec.backend;
  r.schedule = o.schedule_used;
  r.input = input.text;
  r.n = o.n;
  r.tier = shared.tier;
  r.certified = shared.ref.cert.certified;
  r.reference_bits = shared.ref.cert.precision_bits;
  for (const auto& d : notes) r.defaults += (r.defaults.empty() ? "" : "; ") + d;
  for (long double c : o.components) r.components.push_back(static_cast<double>(c));
  if (o.vector_out) {
    r.errors["normwise_inf"] = o.normwise_inf;
    r.errors["normwise_2"] = o.normwise_2;
    r.errors["componentwise"] = o.componentwise;
  } else {
    r.result = static_cast<double>(o.components.at(o.main));
    r.reference = shared.ref.as_double.at(o.main);
    r.errors["abs"] = o.abs_error;
    r.errors["rel"] = o.rel_error;
    r.errors["ulp"] = o.ulp_error;
  }
  r.bound["available"] = o.has_bound;
  r.bound["value"] = o.bound;
  r.bound["ratio"] = o.error_to_bound;
  r.bound["relative"] = o.bound_relative;
  r.bound["rigorous"] = o.bound_rigorous;
  r.bound["vacuous"] = o.bound_vacuous;
  r.bound["formula"] = o.bound_formula;
  r.bound["u"] = o.u;
  r.tree["max_depth"] = o.tree_max_depth;
  r.tree["mean_depth"] = o.tree_mean_depth;
  r.tree["seconds"] = o.seconds;
  return r;
}

struct Tree {
  MergeTree tree;
  TreeStats stats;
};

Tree MakeTree(const std::string& schedule, std::uint64_t n) {
  if (n > (std::uint64_t{1} << 26)) Bad("n must be at most 2^26 for carrier.tree (explicit trees)");
  return Guarded([&] {
    Tree t;
    t.tree = BuildTree(ParseSchedule(schedule), n);
    t.stats = ComputeStats(t.tree);
    return t;
  });
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

}  // namespace
}  // namespace carrier::python

PYBIND11_MODULE(_carrier, m) {
  using namespace carrier::python;
  namespace cli = carrier::cli;
  m.doc() = "carrier: carrier-state reductions under declared merge orders (compiled part)";
  py::class_<EvalResult>(m, "EvalResult")
      .def_readonly("op", &EvalResult::op)
      .def_readonly("dtype", &EvalResult::dtype)
      .def_readonly("acc", &EvalResult::acc)
      .def_readonly("round", &EvalResult::round)
      .def_readonly("exp", &EvalResult::exp)
      .def_readonly("backend", &EvalResult::backend)
      .def_readonly("schedule", &EvalResult::schedule,
                    "the schedule executed (replays to the same bits)")
      .def_readonly("input", &EvalResult::input)
      .def_readonly("n", &EvalResult::n)
      .def_readonly("result", &EvalResult::result)
      .def_readonly("reference", &EvalResult::reference)
      .def_readonly("tier", &EvalResult::tier)
      .def_readonly("certified", &EvalResult::certified)
      .def_readonly("reference_bits", &EvalResult::reference_bits)
      .def_readonly("errors", &EvalResult::errors)
      .def_readonly("bound", &EvalResult::bound)
      .def_readonly("tree", &EvalResult::tree)
      .def_readonly("defaults", &EvalResult::defaults)
      .def_readonly("components", &EvalResult::components)
      .def_property_readonly("ratio", [](const EvalResult& r) { return r.bound["ratio"]; })
      .def("__repr__", [](const EvalResult& r) {
        std::ostringstream s;
        s.precision(17);
        s << "EvalResult(op=" << r.op << ", dtype=" << r.dtype << ", acc=" << r.acc
          << ", schedule=" << r.schedule << ", n=" << r.n << ", result=" << r.result
          << ", reference=" << r.reference << ", tier=" << r.tier << ")";
        return s.str();
      });
  m.def("_eval", &Eval, py::arg("op"), py::arg("x"), py::arg("dtype"), py::arg("acc"),
        py::arg("rounding"), py::arg("schedule"), py::arg("backend"), py::arg("exp"),
        py::arg("gen"), py::arg("n"), py::arg("seed"), py::arg("head_dim"));
  py::class_<Tree>(m, "Tree")
      .def_property_readonly("stats",
                             [](const Tree& t) {
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
                               return d;
                             })
      .def_property_readonly("schedule", [](const Tree& t) { return t.tree.schedule; })
      .def("to_json", [](const Tree& t) { return carrier::ToJson(t.tree); })
      .def("to_dot", [](const Tree& t) { return carrier::ToDot(t.tree); })
      .def(
          "to_text",
          [](const Tree& t, std::uint64_t max_nodes) { return carrier::ToText(t.tree, max_nodes); },
          py::arg("max_nodes") = 256)
      .def("__repr__", [](const Tree& t) {
        return "Tree(" + t.tree.schedule + ", n=" + std::to_string(t.tree.n) + ", " +
               std::to_string(t.tree.NodeCount()) + " nodes)";
      });
  m.def("tree", &MakeTree, py::arg("schedule"), py::arg("n"));
  m.def("_run_laws", [](std::vector<std::string> argv) {
    int code = 0;
    std::string out = RunVerb(cli::RunLaws, std::move(argv), &code);
    return py::make_tuple(code, out);
  });
  m.def("_run_sweep", [](std::vector<std::string> argv) {
    int code = 0;
    std::string out = RunVerb(cli::RunSweep, std::move(argv), &code);
    return py::make_tuple(code, out);
  });
}
