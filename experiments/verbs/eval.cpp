// carrier eval: one reduction, one declared merge order, measured against its certified
// reference and its a-priori bound.
//
// Pipeline: inputs (file or generator) -> rounded to the storage format (rne) -> converted to
// the compute type -> Replay of the schedule's tree -> the result, beside the certified
// reference of the op on the STORED values (precision/reference), the error metrics
// (precision/metrics.hpp) and the bound for the tree's depth (precision/op_bounds.hpp).
//
// An op that is not built in may be a registered user carrier (experiments/registry/): it is
// replayed the same way; its reference is the carrier itself in MPFR at p and 2p bits,
// certified when they agree to 2^-100 relative (reference_tier "mpfr-carrier"), and it has no
// a-priori bound (reported as unavailable).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/number_format.hpp"
#include "verbs/verbs.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include "core/carriers/all.hpp"
#include "core/replay.hpp"
#include "inputs/generators.hpp"
#include "inputs/read_numbers.hpp"
#include "precision/emulated.hpp"
#include "precision/format.hpp"
#include "precision/math_policy.hpp"
#include "precision/metrics.hpp"
#include "precision/mpfr_scalar.hpp"
#include "precision/op_bounds.hpp"
#include "precision/reference/reference.hpp"
#include "precision/rounding.hpp"
#include "precision/scalars.hpp"
#include "registry/registry.hpp"

namespace carrier::cli {

namespace {

const std::vector<std::string> kOps = {"sum",     "kahan",   "max",   "argmax", "lse",
                                       "softmax", "welford", "norm2", "dot",    "affine"};

bool TwoColumns(const std::string& op) { return op == "dot" || op == "affine"; }

// The compute type as the dispatcher sees it.
enum class ComputeKind { kFloat, kDouble, kEmulated, kMpfr };

struct ComputeSpec {
  ComputeKind kind = ComputeKind::kDouble;
  Format format;     // for kMpfr: a p-bit format with fp64's exponent range (for ulps)
  long mpfr_bits = 0;
  std::string text;  // as given
};

// What a replay produced: components as long double (exact for every type but Mpfr, whose
// values are rounded to nearest).
struct Computed {
  std::vector<long double> components;
  std::int64_t index = -1;  // argmax
  std::string schedule;
};

template <class T>
long double L(const T& v) {
  return static_cast<long double>(v);
}

template <class T, class Exp>
Computed Compute(const std::string& op, const MergeTree& tree, std::span<const double> a,
                 std::span<const double> b) {
  Computed out;
  out.schedule = tree.schedule;
  std::vector<T> x;
  x.reserve(a.size());
  for (double v : a) x.push_back(static_cast<T>(v));
  const std::span<const T> xs(x);
  auto pairs = [&] {
    std::vector<ValuePair<T>> p;
    for (std::size_t i = 0; i < a.size(); ++i) p.push_back({static_cast<T>(a[i]), static_cast<T>(b[i])});
    return p;
  };
  if (op == "sum") {
    out.components = {L(Sum<T>::Finalize(Replay<Sum<T>>(tree, xs)))};
  } else if (op == "kahan") {
    out.components = {L(Compensated<T>::Finalize(Replay<Compensated<T>>(tree, xs)))};
  } else if (op == "max") {
    out.components = {L(Max<T>::Finalize(Replay<Max<T>>(tree, xs)))};
  } else if (op == "argmax") {
    std::vector<IndexedValue<T>> iv;
    for (std::size_t i = 0; i < x.size(); ++i) iv.push_back({x[i], static_cast<std::int64_t>(i)});
    const auto s = Replay<ArgMax<T>>(tree, std::span<const IndexedValue<T>>(iv));
    out.components = {L(s.value)};
    out.index = s.index;
  } else if (op == "lse") {
    using C = OnlineSoftmax<T, Exp>;
    out.components = {L(C::Finalize(Replay<C>(tree, xs)).lse)};
  } else if (op == "softmax") {
    using C = OnlineSoftmax<T, Exp>;
    const auto s = Replay<C>(tree, xs);
    for (const T& v : x) out.components.push_back(L(C::SoftmaxOutput(v, s)));
  } else if (op == "welford") {
    const auto r = Welford<T>::Finalize(Replay<Welford<T>>(tree, xs));
    out.components = {L(r.mean), L(r.var_population), L(r.var_sample)};
  } else if (op == "norm2") {
    out.components = {L(ScaledNorm2<T>::Finalize(Replay<ScaledNorm2<T>>(tree, xs)))};
  } else if (op == "dot") {
    const auto p = pairs();
    out.components = {L(Dot<T>::Finalize(Replay<Dot<T>>(tree, std::span<const ValuePair<T>>(p))))};
  } else if (op == "affine") {
    const auto p = pairs();
    const auto r = Affine<T>::Finalize(Replay<Affine<T>>(tree, std::span<const ValuePair<T>>(p)));
    out.components = {L(r.a), L(r.b)};
  }
  return out;
}

template <class T>
Computed ComputeWithExp(const std::string& exp, const std::string& op, const MergeTree& tree,
                        std::span<const double> a, std::span<const double> b) {
  if (exp == "portable") {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      return Compute<T, PortableExp>(op, tree, a, b);
    }
    throw UsageError("carrier eval: --exp portable needs --acc fp32 or fp64 (native compute)");
  }
  if (exp == "fast") return Compute<T, FastExp>(op, tree, a, b);
  return Compute<T, LibmExp>(op, tree, a, b);
}

ComputeSpec ParseCompute(const Args& args, const std::string& text, Rounding rounding) {
  ComputeSpec c;
  c.text = text;
  if (text.rfind("mpfr:", 0) == 0) {
    auto bits = ParseCountText(text.substr(5));
    if (!bits || *bits < 2 || *bits > (1u << 20))
      args.Fail("--acc mpfr:BITS needs BITS between 2 and 2^20, got '" + text.substr(5) + "'");
    c.kind = ComputeKind::kMpfr;
    c.mpfr_bits = static_cast<long>(*bits);
    c.format = Fp64();
    c.format.precision = static_cast<int>(std::min<long>(c.mpfr_bits, 53));
    return c;
  }
  try {
    c.format = ParseFormat(text);
  } catch (const std::exception& e) {
    args.Fail(e.what());
  }
  const bool nearest = rounding == Rounding::kNearestEven;
  if (c.format == Fp32() && nearest) {
    c.kind = ComputeKind::kFloat;
  } else if (c.format == Fp64()) {
    if (!nearest)
      args.Fail("--round " + std::string(RoundingName(rounding)) +
                " needs an emulated compute format (p <= 26); fp64 computes in rne only");
    c.kind = ComputeKind::kDouble;
  } else {
    if (!IsEmulableFormat(c.format))
      args.Fail("compute format '" + text + "' cannot be emulated (needs p <= 26)");
    c.kind = ComputeKind::kEmulated;
  }
  return c;
}

// Relative error of the exp/log policy in the compute format (bounds.hpp's u_e, u_l).
double ExpError(const ComputeSpec& c, const std::string& exp, double u) {
  switch (c.kind) {
    case ComputeKind::kMpfr:
      return u;  // MPFR's exp is correctly rounded
    case ComputeKind::kEmulated:
      return u + 0x1.0p-52;  // libm's double result, rounded once into the format
    default:
      if (exp == "portable") return 2 * u * kPortableExpMaxUlpF32;
      return 2 * u;  // libm: within one ulp (glibc documents <= 1 ulp for exp/log)
  }
}

std::string JsonNumber(long double v, ComputeKind kind) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  if (kind == ComputeKind::kFloat) return Shortest(static_cast<float>(v));
  if (kind == ComputeKind::kMpfr) return Shortest(v);
  return Shortest(static_cast<double>(v));
}
std::string JsonDouble(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  return Shortest(v);
}
std::string Text(const std::string& json_number) {
  if (!json_number.empty() && json_number.front() == '"')
    return json_number.substr(1, json_number.size() - 2);
  return json_number;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

int RunEval(const std::vector<std::string>& argv) {
  Args args("eval", argv,
            {"op", "dtype", "acc", "round", "schedule", "exp", "input", "gen", "n", "seed",
             "format", "backend", "sr-seed"},
            {"allow-nonfinite"});
  std::vector<std::string> ops = kOps;
  for (const auto& n : registry::Names())
    if (std::find(kOps.begin(), kOps.end(), n) == kOps.end()) ops.push_back(n);
  if (args.Get("op") && *args.Get("op") == "attention")
    args.Fail("--op attention needs query/key/value inputs, which arrive with the "
              "FlashAttention issue; ops now: sum kahan max argmax lse softmax welford "
              "norm2 dot affine" + registry::NamesSuffix());
  const std::string op = args.Choice("op", ops, "");
  if (op.empty()) args.Require("op");
  // A registered user carrier (built-in names take precedence).
  const registry::Entry* user =
      std::find(kOps.begin(), kOps.end(), op) == kOps.end() ? registry::Find(op) : nullptr;
  const std::string dtype = args.Require("dtype");
  Format storage;
  try {
    storage = ParseFormat(dtype);
  } catch (const std::exception& e) {
    args.Fail(e.what());
  }
  Rounding rounding = Rounding::kNearestEven;
  if (auto r = args.Get("round")) {
    try {
      rounding = ParseRounding(*r);
    } catch (const std::exception& e) {
      args.Fail(e.what());
    }
  }
  const ComputeSpec compute = ParseCompute(args, args.Get("acc").value_or(dtype), rounding);
  const std::string exp = args.Choice("exp", {"libm", "portable", "fast"}, "libm");
  if (user && exp != "libm")
    args.Fail("--exp " + exp + " applies to the built-in ops only; user carrier '" + op +
              "' uses its scalar's own functions");
  const std::string backend = args.Choice("backend", {"replay", "simd", "omp", "cuda"}, "replay");
  if (backend != "replay")
    args.Fail("--backend " + backend + " is not built yet (the SIMD/OpenMP and CUDA issues add "
              "it); use --backend replay");
  const std::string format_out = args.Choice("format", {"text", "json"}, "text");
  Schedule schedule;
  try {
    schedule = ParseSchedule(args.Get("schedule").value_or("seq"));
  } catch (const ScheduleError& e) {
    args.Fail(e.what());
  }
  const bool allow_nonfinite = args.Has("allow-nonfinite");
  const std::uint64_t seed = args.Count("seed", 1);
  const std::uint64_t sr_seed = args.Count("sr-seed", seed);

  // Inputs, rounded to the storage format.
  const bool two = TwoColumns(op);
  std::vector<double> a, b;
  std::string input_text;
  if (args.Get("input") && args.Get("gen")) args.Fail("give either --input FILE or --gen DIST, not both");
  auto round_storage = [](double v, const void* ctx) {
    return RoundToFormat(v, *static_cast<const Format*>(ctx), Rounding::kNearestEven);
  };
  if (auto path = args.Get("input")) {
    if (args.Get("n")) args.Fail("--n goes with --gen; a file's length is its own");
    try {
      auto cols = inputs::ReadNumbersFile(*path, two ? 2 : 1, allow_nonfinite);
      a = std::move(cols.a);
      b = std::move(cols.b);
    } catch (const inputs::InputError& e) {
      throw UsageError("carrier eval: " + std::string(e.what()));
    }
    for (auto& v : a) v = round_storage(v, &storage);
    for (auto& v : b) v = round_storage(v, &storage);
    input_text = "file:" + *path;
  } else if (auto gen = args.Get("gen")) {
    inputs::GeneratorSpec spec;
    try {
      spec = inputs::ParseGenerator(*gen);
    } catch (const std::exception& e) {
      args.Fail(e.what());
    }
    const std::uint64_t n = args.RequireCount("n");
    if (n == 0) args.Fail("--n must be at least 1");
    if (n > (std::uint64_t{1} << 26)) args.Fail("--n must be at most 2^26 for eval");
    a = inputs::Generate(spec, n, seed, round_storage, &storage);
    if (two) b = inputs::Generate(spec, n, seed + 1, round_storage, &storage);
    input_text = spec.Text() + " seed " + std::to_string(seed);
  } else {
    args.Fail("give the input: --input FILE (or - for stdin) or --gen DIST --n N");
  }
  std::vector<ValuePair<double>> pairs;
  for (std::size_t i = 0; i < b.size(); ++i) pairs.push_back({a[i], b[i]});

  // The certified reference of the stored values.
  const auto t0 = std::chrono::steady_clock::now();
  reference::Reference ref;
  if (user) {
    const registry::CarrierReference ur = user->reference(a);
    ref.op = op;
    ref.count = a.size();
    ref.as_double = ur.as_double;
    ref.as_long_double = ur.as_long_double;
    ref.cert.certified = ur.certified;
    ref.cert.precision_bits = ur.precision_bits;
    ref.cert.note = ur.certified ? "the carrier itself in MPFR at p and 2p bits, agreeing to "
                                   "2^-100 relative per component (the mpfr tier's assumption)"
                                 : ur.note;
  } else if (op == "dot") {
    ref = reference::ReferenceDot(pairs);
  } else if (op == "affine") {
    ref = reference::ReferenceAffine(pairs);
  } else {
    ref = reference::ReferenceFor(op, a);
  }
  const auto t1 = std::chrono::steady_clock::now();

  // The replay in the compute type.
  const MergeTree tree = BuildTree(schedule, a.size());
  if (tree.permutes && (op == "argmax" || op == "affine" || (user && !user->commutative)))
    args.Fail("schedule '" + tree.schedule + "' reorders inputs, but " + op +
              "'s combine is not commutative");
  Computed got;
  got.schedule = tree.schedule;
  auto replay = [&](registry::ScalarKind k, auto&& builtin) {
    if (user)
      got.components = user->replay(k, tree, a);
    else
      got = builtin();
  };
  switch (compute.kind) {
    case ComputeKind::kFloat:
      replay(registry::ScalarKind::kFloat,
             [&] { return ComputeWithExp<float>(exp, op, tree, a, b); });
      break;
    case ComputeKind::kDouble:
      replay(registry::ScalarKind::kDouble,
             [&] { return ComputeWithExp<double>(exp, op, tree, a, b); });
      break;
    case ComputeKind::kEmulated: {
      EmulationScope scope(compute.format, rounding, sr_seed);
      replay(registry::ScalarKind::kEmulated, [&] {
        return ComputeWithExp<Emulated<DynamicFormatTag, kDynamicRounding>>(exp, op, tree, a, b);
      });
      break;
    }
    case ComputeKind::kMpfr: {
      if (exp == "portable") args.Fail("--exp portable needs --acc fp32 or fp64 (native compute)");
      MpfrPrecisionScope scope(compute.mpfr_bits);
      replay(registry::ScalarKind::kMpfr,
             [&] { return ComputeWithExp<Mpfr>(exp, op, tree, a, b); });
      break;
    }
  }
  const auto t2 = std::chrono::steady_clock::now();

  // Main component, metrics, bound.
  const TreeStats stats = ComputeStats(tree);
  const std::size_t main = op == "welford" ? 1 : op == "affine" ? 1 : 0;
  const double u = compute.kind == ComputeKind::kMpfr ? std::ldexp(1.0, -static_cast<int>(compute.mpfr_bits))
                                                      : UnitRoundoff(compute.format, rounding);
  BoundContext ctx{stats.max_leaf_depth, stats.combines, u, ExpError(compute, exp, u),
                   ExpError(compute, exp, u), compute.format.MinSubnormal()};
  const bool vector_out = op == "softmax";
  const long double exact_main = vector_out || ref.as_long_double.empty() ? 0 : ref.as_long_double[main];
  const long double exact_mean = op == "welford" ? ref.as_long_double[0] : 0;
  OpBound ob;
  if (user) {
    ob.bound.value = NAN;  // a registered carrier declares no a-priori bound
    ob.relative = true;
  } else {
    ob = BoundForOp(op, ctx, a, pairs, exact_main, exact_mean);
  }

  std::vector<std::pair<std::string, std::string>> fields;  // key, JSON value
  auto add = [&](const std::string& k, const std::string& v) { fields.push_back({k, v}); };
  add("op", JsonString(op));
  add("dtype", JsonString(storage.name));
  add("acc", JsonString(compute.text));
  add("round", JsonString(std::string(RoundingName(rounding))));
  if (rounding == Rounding::kStochastic) add("sr_seed", std::to_string(sr_seed));
  add("exp", JsonString(exp));
  add("backend", JsonString(backend));
  add("schedule", JsonString(got.schedule));
  add("tree_max_depth", std::to_string(stats.max_leaf_depth));
  add("tree_mean_depth", JsonDouble(stats.mean_leaf_depth));
  add("n", std::to_string(a.size()));
  add("input", JsonString(input_text));
  double err_for_ratio = 0;
  if (vector_out) {
    std::vector<long double> refv(ref.as_long_double.begin(), ref.as_long_double.end());
    const VectorError ve = MeasureVector(got.components, refv);
    add("normwise_inf_error", JsonDouble(ve.normwise_inf));
    add("normwise_2_error", JsonDouble(ve.normwise_2));
    add("componentwise_error", JsonDouble(ve.componentwise));
    add("zero_reference_components", std::to_string(ve.zero_components));
    err_for_ratio = ve.componentwise;
  } else {
    const ScalarError se = MeasureScalar(got.components[main], ref.as_long_double[main], compute.format);
    add("result", JsonNumber(got.components[main], compute.kind));
    add("reference", JsonDouble(ref.as_double[main]));
    if (op == "argmax") {
      add("result_index", std::to_string(got.index));
      add("reference_index", std::to_string(ref.index));
    }
    if (user) {
      // The other components of a multi-component user carrier.
      for (std::size_t k = 1; k < got.components.size() && k < ref.as_double.size(); ++k) {
        add("result_c" + std::to_string(k), JsonNumber(got.components[k], compute.kind));
        add("reference_c" + std::to_string(k), JsonDouble(ref.as_double[k]));
      }
    }
    if (op == "welford") {
      add("result_mean", JsonNumber(got.components[0], compute.kind));
      add("reference_mean", JsonDouble(ref.as_double[0]));
    }
    if (op == "affine") {
      add("result_a", JsonNumber(got.components[0], compute.kind));
      add("reference_a", JsonDouble(ref.as_double[0]));
    }
    if (op == "sum" || op == "kahan" || op == "dot") {
      // The summation condition number sum|t_i| / |sum t_i| of the terms t (products for dot).
      long double abs_sum = 0;
      for (std::size_t i = 0; i < a.size(); ++i)
        abs_sum += std::fabs(op == "dot" ? static_cast<long double>(a[i]) * b[i] : a[i]);
      const long double exact = ref.as_long_double[0];
      add("condition_number", JsonDouble(exact == 0 ? INFINITY : static_cast<double>(abs_sum / std::fabs(exact))));
    }
    add("abs_error", JsonDouble(se.abs));
    add("rel_error", JsonDouble(se.rel));
    add("ulp_error", JsonDouble(se.ulps));
    add("reference_is_zero", se.reference_zero ? "true" : "false");
    add("special_value_mismatch", se.special_mismatch ? "true" : "false");
    err_for_ratio = ob.relative ? se.rel : se.abs;
  }
  add("reference_tier", JsonString(user ? std::string("mpfr-carrier")
                                        : std::string(reference::TierName(ref.cert.tier))));
  add("reference_precision_bits", std::to_string(ref.cert.precision_bits));
  add("reference_certified", ref.cert.certified ? "true" : "false");
  if (!ref.cert.note.empty()) add("reference_note", JsonString(ref.cert.note));
  if (user) {
    add("bound", JsonString("unavailable"));
    add("bound_kind", JsonString("unavailable"));
    add("bound_formula", JsonString("none: a registered user carrier declares no a-priori bound"));
    add("error_to_bound", JsonDouble(NAN));
    add("bound_vacuous", "false");
  } else {
    add("bound", JsonDouble(ob.bound.value));
    add("bound_kind", JsonString(std::string(ob.relative ? "relative" : "absolute") +
                                 (ob.bound.rigorous ? ", rigorous" : ", first-order estimate")));
    add("bound_formula", JsonString(ob.bound.formula));
    const double ratio = ob.bound.value > 0 ? err_for_ratio / ob.bound.value
                                            : (err_for_ratio == 0 ? 0.0 : INFINITY);
    add("error_to_bound", std::isinf(ob.bound.value) ? JsonDouble(NAN) : JsonDouble(ratio));
    // gamma_D is infinite once D u >= 1: the bound then says nothing, and no ratio is given.
    add("bound_vacuous", std::isinf(ob.bound.value) ? "true" : "false");
  }
  add("u", JsonDouble(u));
  add("reference_seconds", JsonDouble(std::chrono::duration<double>(t1 - t0).count()));
  add("compute_seconds", JsonDouble(std::chrono::duration<double>(t2 - t1).count()));

  if (format_out == "json") {
    std::cout << "{";
    for (std::size_t i = 0; i < fields.size(); ++i)
      std::cout << (i ? "," : "") << JsonString(fields[i].first) << ":" << fields[i].second;
    std::cout << "}\n";
  } else {
    for (const auto& [k, v] : fields)
      std::cout << std::left << std::setw(27) << k << Text(v) << "\n";
  }
  return ref.cert.certified ? 0 : 1;
}

}  // namespace carrier::cli

#else  // no MPFR

namespace carrier::cli {
int RunEval(const std::vector<std::string>&) {
  throw UsageError("carrier eval: this build has no MPFR (configured with CARRIER_WITH_MPFR=OFF "
                   "or without libmpfr-dev), so it has no certified references");
}
}  // namespace carrier::cli

#endif
