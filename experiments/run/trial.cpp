// experiments/run/trial.cpp: the trial runner's execution half (trial.hpp): inputs, reference,
// the reduction and its measurement. Every op-specific part — input kind, replay, reference,
// bound, condition number, backends — is a lookup in the op table
// (experiments/registry/registry.hpp); this file times the calls and assembles the outcome.
// Resolving a spec is run/resolve.cpp.
#include "run/trial.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <mutex>

#include "backends/backends.hpp"
#include "cli/args.hpp"
#include "core/merge_tree.hpp"
#include "core/schedule.hpp"
#include "core/tree_hash.hpp"
#include "io/tree_file.hpp"
#include "precision/block_scaled.hpp"
#include "precision/bounds.hpp"
#include "precision/dot_split.hpp"
#include "precision/emulated.hpp"
#include "precision/emulated_oracle.hpp"
#include "precision/math_policy.hpp"
#include "precision/metrics.hpp"
#include "precision/metrics_exact.hpp"
#include "precision/mpfr_scalar.hpp"
#include "precision/op_bounds.hpp"
#include "precision/parallel_pass.hpp"
#include "precision/role_bounds.hpp"
#include "precision/round_array.hpp"
#include "precision/scalars.hpp"
#include "registry/registry.hpp"
#include "run/scaled_dot.hpp"
#include "run/tree_shape.hpp"

namespace carrier::run {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kFloat128Emin = -16382;  // binary128's smallest normal exponent (float128.hpp)

double Seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The exp/log error model of the compute type (precision/op_bounds.hpp ExpRelativeError).
double ExpError(const ComputeSpec& c, const std::string& exp, double u) {
  switch (c.kind) {
    case ComputeKind::kMpfr:
      return ExpRelativeError(ExpArithmetic::kMpfr, u);
    case ComputeKind::kEmulated:
      return ExpRelativeError(ExpArithmetic::kEmulated, u);
    default:
      return ExpRelativeError(registry::ParseExp(exp) == registry::ExpKind::kPortable
                                  ? ExpArithmetic::kNativePortable
                                  : ExpArithmetic::kNativeLibm,
                              u);
  }
}

// RoundToFormat(v, storage, rne). The common case, a value in a normal binade below the top
// one of a format with p <= 26, is RoundNormal's (precision/emulated.hpp: RoundToFormat's
// own result there, restated inline); everything else is RoundToFormat itself.
double RoundStorage(double v, const void* ctx) {
  const Format& f = *static_cast<const Format*>(ctx);
  double out;
  if (f.precision <= 26 && emulated_detail::RoundNormal(v, f, Rounding::kNearestEven, &out))
    return out;
  return RoundToFormat(v, f, Rounding::kNearestEven);
}

// Every value of v rounded to storage in place: RoundArray (precision/round_array.hpp; equal to
// RoundToFormat and so to RoundStorage bit for bit), split over the pass threads.
void RoundStoragePass(const Format& storage, std::span<double> v) {
  SplitPass(v.size(), PassParts(v.size()), [&](std::size_t, std::uint64_t lo, std::uint64_t hi) {
    const std::span<double> part = v.subspan(lo, hi - lo);
    RoundArray(part, part, storage, Rounding::kNearestEven);
  });
}

// fp128 (rne only) and mpfr:BITS: 2^-p; a format: its unit roundoff under the rounding.
double UnitRoundoffOf(const ComputeSpec& c, Rounding r) {
  if (c.kind == ComputeKind::kFloat128) return std::ldexp(1.0, -c.format.precision);
  return c.kind == ComputeKind::kMpfr ? std::ldexp(1.0, -static_cast<int>(c.mpfr_bits))
                                      : UnitRoundoff(c.format, r);
}

// The bound's underflow term: the format's smallest subnormal; binary128's, 2^-16494, is below
// every double (and no operation on stored doubles underflows there), so 0.
double EtaOf(const ComputeSpec& c) {
  return c.kind == ComputeKind::kFloat128 ? 0.0 : c.format.MinSubnormal();
}

registry::ScalarKind ScalarKindOf(ComputeKind k) {
  switch (k) {
    case ComputeKind::kFloat:
      return registry::ScalarKind::kFloat;
    case ComputeKind::kDouble:
      return registry::ScalarKind::kDouble;
    case ComputeKind::kEmulated:
      return registry::ScalarKind::kEmulated;
    case ComputeKind::kFloat128:
      return registry::ScalarKind::kFloat128;
    case ComputeKind::kMpfr:
      break;
  }
  return registry::ScalarKind::kMpfr;
}

// A Higham 1993 ordering's tree (core/adaptive_tree.hpp) decided in the trial's compute arithmetic
// (ResolveTrial admits fp64, fp32 and emulated formats with a deterministic rounding), so the
// replay in that arithmetic follows the additions the decisions saw.
MergeTree BuildDataTree(const ResolvedTrial& t, const TrialInput& in) {
  std::vector<double> decoded;  // the builder takes a vector: a packed column decoded
  if (HeldInColumn(in)) decoded = in.column.ToDoubles();
  const std::vector<double>& values = HeldInColumn(in) ? decoded : in.a;
  switch (t.compute.kind) {
    case ComputeKind::kDouble:
      return BuildAdaptiveTree(t.adaptive_order, values, [](double a, double b) { return a + b; });
    case ComputeKind::kFloat:
      return BuildAdaptiveTree(t.adaptive_order, values, [](double a, double b) {
        return static_cast<double>(static_cast<float>(a) + static_cast<float>(b));
      });
    case ComputeKind::kEmulated: {
      EmulationScope scope(t.compute.format, t.rounding, t.spec.sr_seed);
      return BuildAdaptiveTree(t.adaptive_order, values, [](double a, double b) {
        return static_cast<double>(EmulatedOracleDynamic(a) + EmulatedOracleDynamic(b));
      });
    }
    case ComputeKind::kMpfr:
    case ComputeKind::kFloat128:
      break;
  }
  throw SpecError("schedule " + t.spec.schedule + " cannot be decided in " + t.compute.text);
}

// The reduction itself: the entry's replay over the schedule's tree, or its backend's kernel
// (which reports the schedule it ran; its tree is built for the measurement). The fast engine
// (TrialSpec::engine) builds no tree where run/tree_shape.hpp walks the schedule: `tree` is
// then left empty and `shape` alone describes it; otherwise shape = ShapeOfTree(tree).
registry::Replayed ExecuteSplit(const ResolvedTrial& t, const TrialInput& in, MergeTree& tree,
                                TreeShape& shape, double& seconds);

registry::Replayed Execute(const ResolvedTrial& t, const TrialInput& in, MergeTree& tree,
                           TreeShape& shape, double& seconds) {
  if (t.policy && !t.policy->split.empty()) return ExecuteSplit(t, in, tree, shape, seconds);
  const registry::Entry& e = *t.op;
  registry::Replayed got;
  if (t.per_role) {
    // A precision policy run role by role by the op's own replay (ResolveTrial admits replay
    // and a schedule the replay realises); the schedule's shape describes its merge order.
    const auto t0 = Clock::now();
    try {
      if (!ShapeOfSchedule(t.schedule, in.n, shape)) {
        tree = BuildTree(t.schedule, in.n);
        shape = ShapeOfTree(tree);
      }
      const registry::ReplayInput ri{in.a, in.b, in.n, t.spec.head_dim, in.id};
      got = e.policy_replay(*t.policy, t.schedule, t.spec.sr_seed, ri);
    } catch (const ScheduleError& err) {
      throw SpecError(err.what());
    } catch (const SpecError&) {
      throw;
    } catch (const std::invalid_argument& ex) {
      throw SpecError(ex.what());
    }
    seconds = Seconds(t0);
    return got;
  }
  if (t.scaled_mma) {  // block scales applied in the matrix unit (run/scaled_dot.hpp)
    const auto t0 = Clock::now();
    try {
      if (!ShapeOfSchedule(t.schedule, in.n, shape)) {
        tree = BuildTree(t.schedule, in.n);
        shape = ShapeOfTree(tree);
      }
    } catch (const ScheduleError& err) {
      throw SpecError(err.what());
    }
    got = RunScaledDot(t, in);
    seconds = Seconds(t0);
    return got;
  }
  if (t.spec.backend == "replay") {
    const auto t0 = Clock::now();
    const bool fast = t.spec.engine == "fast" && e.replay && !t.mixed;
    bool walked = false;
    if (t.adaptive) {  // a data-decided order (core/adaptive_tree.hpp): always a built tree
      tree = BuildDataTree(t, in);
      shape = ShapeOfTree(tree);
    } else {
      try {  // a file:PATH tree whose n is not the input's is bad input
        if (fast) walked = ShapeOfSchedule(t.schedule, in.n, shape);
        if (!walked) {
          tree = BuildTree(t.schedule, in.n);
          shape = ShapeOfTree(tree);
        }
      } catch (const ScheduleError& err) {
        throw SpecError(err.what());
      }
    }
    if (shape.permutes && !e.commutative)
      throw SpecError("schedule '" + shape.schedule + "' reorders inputs, but " + e.name +
                      "'s combine is not commutative");
    registry::ReplayInput ri{in.a, in.b, in.n, t.spec.head_dim, in.id};
    // Columns held packed: the fast engine's walk reads them a window at a time; every other
    // replay (the oracle, a built tree, two levels) gets them decoded.
    std::vector<double> scratch, scratch_b;
    if (HeldInColumn(in)) {
      if (fast && walked && !t.mixed) {
        ri.column = &in.column;
        if (HeldInColumns(in)) ri.column_b = &in.column_b;
      } else {
        ri.a = ColumnValues(in, scratch);
        ri.b = ColumnBValues(in, scratch_b);
      }
    }
    const registry::ExpKind exp = registry::ParseExp(t.spec.exp);
    auto replay = [&](registry::ScalarKind k) {
      if (!fast) return e.replay_oracle(k, exp, tree, ri);
      return e.replay(k, exp, t.schedule, walked ? nullptr : &tree, ri);
    };
    try {
      if (t.mixed) {
        got = e.replay_mixed(t, tree, ri);
      } else if (t.compute.kind == ComputeKind::kEmulated) {
        EmulationScope scope(t.compute.format, t.rounding, t.spec.sr_seed);
        got = replay(registry::ScalarKind::kEmulated);
      } else if (t.compute.kind == ComputeKind::kMpfr) {
        MpfrPrecisionScope scope(t.compute.mpfr_bits);
        got = replay(registry::ScalarKind::kMpfr);
      } else {
        got = replay(ScalarKindOf(t.compute.kind));
      }
    } catch (const SpecError&) {
      throw;
    } catch (const std::invalid_argument& ex) {
      throw SpecError(ex.what());
    }
    seconds = Seconds(t0);
    return got;
  }
  backends::Request req;
  req.op = e.name;
  req.storage = t.storage.name;
  req.acc = t.compute.text;
  req.exp = t.spec.exp;
  req.schedule = t.spec.schedule;
  std::vector<double> scratch, scratch_b;  // the kernels take doubles (copied to their storage)
  req.a = ColumnValues(in, scratch);
  req.b = ColumnBValues(in, scratch_b);
  req.head_dim = t.spec.head_dim;
  backends::Result r = backends::RunBackend(t.spec.backend, req);
  got.components = std::move(r.components);
  got.index = r.index;
  seconds = r.seconds;
  try {
    tree = BuildTree(io::LoadSchedule(r.schedule), in.n);
    shape = ShapeOfTree(tree);
  } catch (const ScheduleError& ex) {
    throw SpecError("backend " + t.spec.backend + " reported schedule '" + r.schedule +
                    "', which does not build: " + ex.what());
  }
  return got;
}

StoredColumn PackColumn(const ResolvedTrial& t, std::vector<double>& values);

// A split dot algorithm (precision/dot_split.hpp; ResolveTrial admits dot, in=fp32, acc=fp32,
// backend replay): both columns cut into parts, each listed pair of parts run as a dot of its
// own in fp32 through the trial's schedule (the same replay, engine and tree as any fp32 dot;
// the parts' products are exact in fp32), the partial dots added in the algorithm's order.
// `seconds` covers the splitting, the partial dots' replays (each as Execute times a replay,
// getting the schedule's tree or shape included: the walked shape is kept per schedule and n,
// so the parts after the first find it) and their sum.
registry::Replayed ExecuteSplit(const ResolvedTrial& t, const TrialInput& in, MergeTree& tree,
                                TreeShape& shape, double& seconds) {
  const DotSplitAlgorithm* alg = FindDotSplit(t.policy->split);
  if (!alg) throw SpecError("unknown split dot algorithm '" + t.policy->split + "'");
  std::vector<double> scratch, scratch_b;
  const std::span<const double> a = ColumnValues(in, scratch), b = ColumnBValues(in, scratch_b);
  auto t0 = Clock::now();
  auto a_parts = SplitOperands(std::vector<double>(a.begin(), a.end()), *alg);
  auto b_parts = SplitOperands(std::vector<double>(b.begin(), b.end()), *alg);
  ResolvedTrial part = t;  // the same fp32 dot on the parts, without the split
  part.policy.reset();
  part.storage = alg->part;
  // Packed in the part format, as any stored column (the fast engine reads them in place).
  std::vector<StoredColumn> a_columns, b_columns;
  for (auto& v : a_parts) a_columns.push_back(PackColumn(part, v));
  for (auto& v : b_parts) b_columns.push_back(PackColumn(part, v));
  seconds = Seconds(t0);
  std::vector<float> partial;
  partial.reserve(alg->products.size());
  for (const auto& [i, j] : alg->products) {
    TrialInput pair;
    pair.column = a_columns[i];
    pair.column_b = b_columns[j];
    pair.n = in.n;
    pair.id = 0;  // no kept conversion: every pair of parts is a new input
    double s = 0;
    const registry::Replayed got = Execute(part, pair, tree, shape, s);
    seconds += s;
    partial.push_back(static_cast<float>(got.components.at(t.op->main)));
  }
  t0 = Clock::now();
  registry::Replayed out;
  out.components.assign(1, CombinePartialDots(*alg, partial));
  seconds += Seconds(t0);
  return out;
}

// Errors against the reference: normwise and componentwise for a vector output, else the
// main component's absolute, relative and ulp errors.
void MeasureErrors(const ResolvedTrial& t, const registry::Replayed& got,
                   const reference::Reference& ref, TrialOutcome& o) {
  if (o.vector_out) {
    if (got.components.size() != ref.as_long_double.size())
      throw SpecError("result has " + std::to_string(got.components.size()) +
                      " components, the reference " + std::to_string(ref.as_long_double.size()));
    const VectorError ve = MeasureVector(got.components, ref.as_long_double);
    o.normwise_inf = ve.normwise_inf;
    o.normwise_2 = ve.normwise_2;
    o.componentwise = ve.componentwise;
    o.zero_components = ve.zero_components;
    o.special_mismatch = ve.special_mismatch;
    o.abs_error = ve.normwise_inf;
    o.rel_error = ve.componentwise;
    o.ulp_error = NAN;
    o.result = NAN;
    o.reference = NAN;
    return;
  }
  if (got.components.size() <= o.main || ref.as_long_double.size() <= o.main)
    throw SpecError("result or reference lacks component " + std::to_string(o.main));
  ScalarError se;
  if (t.compute.kind == ComputeKind::kFloat128) {
    // Wider than long double: the result exactly (hi + residual) against the reference's MPFR
    // value, which must resolve errors far below u = 2^-p (precision/metrics_exact.hpp).
    const int p = t.compute.format.precision;
    const std::string what = "acc " + t.compute.text + " with op " + t.spec.op;
    if (got.residual.size() != got.components.size())
      throw SpecError(what + ": the op's replay does not report its result beyond long double");
    if (ref.value.size() <= o.main)
      throw SpecError(what + ": the reference keeps no MPFR value to measure against");
    if (!(ref.cert.error_bound_log2 <= -(p + 8)))
      throw SpecError(what + ": the " + std::string(reference::TierName(ref.cert.tier)) +
                      " reference is certified to 2^" + std::to_string(ref.cert.error_bound_log2) +
                      " relative, not the 2^-" + std::to_string(p + 8) + " that measuring u = 2^-" +
                      std::to_string(p) + " needs");
    se = MeasureScalarExact(got.components[o.main], got.residual[o.main], ref.value[o.main].get(),
                            p, kFloat128Emin);
  } else {
    se = MeasureScalar(got.components[o.main], ref.as_long_double[o.main],
                       t.out ? *t.out : t.compute.format);
  }
  o.result = got.components[o.main];
  o.reference = ref.as_double[o.main];
  o.abs_error = se.abs;
  o.rel_error = se.rel;
  o.ulp_error = se.ulps;
  o.reference_zero = se.reference_zero;
  o.special_mismatch = se.special_mismatch;
}

// The measured error over the bound. No ratio where either side is not a number (a NaN result
// has no error to compare) or the bound is vacuous; an infinite error (the result overflowed)
// against a finite bound is inf, vacuous or not: nothing bounds it.
double ErrorToBound(double err, double bound, bool vacuous) {
  return std::isinf(err) && std::isfinite(bound)           ? INFINITY
         : vacuous || std::isnan(err) || std::isnan(bound) ? NAN
         : bound > 0                                       ? err / bound
                                                           : (err == 0 ? 0.0 : INFINITY);
}

// The a-priori bound of the entry (precision/op_bounds.hpp) for the executed tree and its
// ratio to the measured error (none: has_bound false).
void MeasureBound(const ResolvedTrial& t, const BoundInputs& bi, const MergeTree& tree,
                  const TreeStats& stats, TrialOutcome& o) {
  const registry::Entry& e = *t.op;
  if (!e.bound) return;
  // A NaN reference (a NaN among the inputs) has no a-priori bound: none is reported, rather
  // than a rigorous 0 "no rounding".
  bool nan_reference = std::isnan(bi.Exact());
  if (o.vector_out)
    for (const long double r : bi.exact) nan_reference = nan_reference || std::isnan(r);
  if (nan_reference) {
    o.bound_note = "none: the reference is NaN (a NaN input), so there is no error to bound";
    return;
  }
  const double u_exp = ExpError(t.compute, t.spec.exp, o.u);
  BoundContext ctx{stats.max_leaf_depth, stats.combines, o.u, u_exp, u_exp, EtaOf(t.compute)};
  if (t.mixed) {
    // Every rounding of a two-level run is within u_inner (OUTER is not narrower) and the
    // level change is exact, so the op's one-precision bound at u = u_inner holds.
    ctx.u_exp = ctx.u_log =
        std::max(ExpError(t.inner, t.spec.exp, o.u),
                 ExpError(t.compute, t.spec.exp, UnitRoundoffOf(t.compute, t.rounding)));
    ctx.eta = std::max(t.inner.format.MinSubnormal(), t.compute.format.MinSubnormal());
  }
  OpBound ob = e.bound(ctx, bi);
  std::string formula = std::string(ob.bound.formula) + ob.detail;
  if (t.mixed) formula += " with u = u_inner (two-level; every rounding within u_inner)";
  if (t.mixed && e.mixed_bound) {
    ob = e.mixed_bound(bi, tree, o.u, UnitRoundoffOf(t.compute, t.rounding));
    formula = std::string(ob.bound.formula) + ob.detail;
  }
  // An mma: tree (core/mma.hpp) is not an IEEE chain: the fused steps' own bound.
  if (t.schedule.kind() == ScheduleKind::kMma) {
    ob = MmaDotOpBound(tree, stats.longest_chain, stats.max_leaf_depth, o.u, bi);
    formula = std::string(ob.bound.formula) + ob.detail;
  }
  if (t.out) {
    // The result rounded once more, to out (rne): |fl(x) - x| <= u_out |x| + eta_out / 2 with
    // |x| <= |y| + B (absolute) or |x| <= |y| (1 + B) (relative, a normal result in out).
    const double u_out = t.out->UnitRoundoff();
    const double b = ob.bound.value;
    if (ob.relative && !ob.normwise) {
      ob.bound.value = b + u_out * (1 + b);
      formula += " + u(out) (1 + B), the rounding to out=" + t.out->name;
    } else {
      double y = 0;
      if (o.vector_out) {
        for (const long double r : bi.exact) y = std::max(y, std::fabs(static_cast<double>(r)));
      } else {
        y = std::fabs(static_cast<double>(bi.Exact()));
      }
      ob.bound.value = b + u_out * (y + b) + t.out->MinSubnormal() / 2;
      formula += " + u(out) (|y| + B) + eta(out)/2, the rounding to out=" + t.out->name;
    }
  }
  o.has_bound = true;
  o.bound = ob.bound.value;
  o.bound_relative = ob.relative;
  o.bound_rigorous = ob.bound.rigorous;
  o.bound_formula = formula;
  const double err = ob.normwise    ? o.abs_error
                     : o.vector_out ? o.componentwise
                     : ob.relative  ? o.rel_error
                                    : o.abs_error;
  // gamma_D is infinite once D u >= 1: the bound then says nothing, and no ratio is given.
  o.bound_vacuous = ob.vacuous || std::isinf(o.bound) ||
                    (ob.normwise && (!std::isfinite(o.bound) || !std::isfinite(err)));
  o.error_to_bound = ErrorToBound(err, o.bound, o.bound_vacuous);
}

// The policy's bound by role (precision/role_bounds.hpp) for the executed tree, against the
// exact result on the stored inputs (the reference's), so without the `in` term; none for an op
// without a role bound, an mma: or data-decided tree, or a NaN reference. The exp term: the
// exp of the policy's acc role in the trial's arithmetic (a per-role replay rounds libm's exp
// to acc).
void MeasureRoleBound(const ResolvedTrial& t, const BoundInputs& bi, const TreeStats& stats,
                      TrialOutcome& o) {
  const registry::Entry& e = *t.op;
  if (!t.policy || !e.bound || t.adaptive || t.schedule.kind() == ScheduleKind::kMma) return;
  bool nan_reference = std::isnan(bi.Exact());
  for (const long double r : bi.exact) nan_reference = nan_reference || std::isnan(r);
  if (nan_reference) {
    if (t.per_role)
      o.bound_note = "none: the reference is NaN (a NaN input), so there is no error to bound";
    return;
  }
  const PrecisionPolicy& policy = *t.policy;
  const ComputeKind kind = t.compute.kind;
  const ExpArithmetic how = kind == ComputeKind::kEmulated ? ExpArithmetic::kEmulated
                            : kind == ComputeKind::kMpfr   ? ExpArithmetic::kMpfr
                            : t.spec.exp == "portable"     ? ExpArithmetic::kNativePortable
                                                           : ExpArithmetic::kNativeLibm;
  const double u_exp = ExpRelativeError(how, RoleUnitRoundoff(policy.acc));
  RoleBound rb;
  if (!RoleBoundFor(e.bound, policy, stats, bi, u_exp, u_exp, false, rb)) return;
  o.has_role_bound = true;
  o.role_bound = rb.value;
  o.role_bound_relative = rb.relative;
  o.role_bound_rigorous = rb.rigorous;
  o.role_bound_note = RoleBoundNote(rb);
  if (!t.per_role) return;
  // Run role by role, the policy's bound is the trial's: the one-precision bound at acc's u
  // would leave out the narrower s, p, state and out roles.
  o.has_bound = true;
  o.bound_note.clear();
  o.bound = rb.value;
  o.bound_relative = rb.relative;
  o.bound_rigorous = rb.rigorous;
  o.bound_formula = o.role_bound_note;
  const double err = o.vector_out ? o.normwise_inf : rb.relative ? o.rel_error : o.abs_error;
  o.bound_vacuous = !std::isfinite(o.bound);
  o.error_to_bound = ErrorToBound(err, o.bound, o.bound_vacuous);
}

// Counts the stored values of one generated chunk that are not finite: the generators draw
// finite values only, so each is a storage overflow. `offset` is the chunk's first index; chunks
// may come in any order (the least index is kept as the first).
void CountOverflows(std::span<const double> stored, std::uint64_t offset, TrialInput& in) {
  for (std::size_t i = 0; i < stored.size(); ++i) {
    if (std::isfinite(stored[i])) continue;
    if (in.storage_overflows++ == 0 || offset + i < in.first_overflow) {
      in.first_overflow = offset + i;
      in.first_overflow_value = NAN;  // the drawn value is not kept
    }
  }
}

// A column of the generator's values from `seed`, rounded to the storage format: a piece at a
// time (inputs::DrawPieces), never all n as doubles, where the generator draws each value from
// (seed, index) alone. Storage overflows are counted into `in` (offset: the column's first
// index in the input).
StoredColumn GenerateColumn(const ResolvedTrial& t, const inputs::GeneratorSpec& gen,
                            std::uint64_t n, std::uint64_t seed, std::uint64_t offset,
                            TrialInput& in) {
  StoredColumn::Builder column(&t.storage, n);
  if (!inputs::Chunked(gen)) {  // generators that use the storage format while drawing
    const std::vector<double> v = inputs::Generate(gen, n, seed, RoundStorage, &t.storage);
    CountOverflows(v, offset, in);
    column.Append(v);
    return column.Finish();
  }
  // The counter-based ones draw each value and then round it, a piece at a time on the pass
  // thread that drew it, while it is in cache: rounded by RoundArray (its block arithmetic,
  // which the compiler vectorises, instead of a call per value: the same values as
  // RoundStorage's), its overflows counted, and encoded into its place in the column. No block
  // of doubles is held, written out to memory and read back.
  column.Size(n);
  std::mutex overflow_mutex;
  inputs::DrawPieces(gen, n, seed, [&](std::uint64_t lo, std::span<double> piece) {
    RoundArray(piece, piece, t.storage, Rounding::kNearestEven);
    if (!std::all_of(piece.begin(), piece.end(), [](double v) { return std::isfinite(v); })) {
      const std::lock_guard<std::mutex> lock(overflow_mutex);
      CountOverflows(piece, offset + lo, in);
    }
    column.Put(lo, piece);
  });
  return column.Finish();
}

// Rounds `values` to storage in place, counting the finite values that stop being finite.
void RoundToStorage(const ResolvedTrial& t, std::vector<double>& values, std::uint64_t offset,
                    TrialInput& in) {
  std::vector<double> stored = values;
  RoundStoragePass(t.storage, stored);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isfinite(values[i]) && !std::isfinite(stored[i]) && in.storage_overflows++ == 0) {
      in.first_overflow = offset + i;
      in.first_overflow_value = values[i];
    }
  }
  values.swap(stored);
}

// Stored values (already rounded) moved into a column; `values` is left empty.
StoredColumn PackColumn(const ResolvedTrial& t, std::vector<double>& values) {
  StoredColumn::Builder column(&t.storage, values.size());
  column.Append(values);
  values = {};
  return column.Finish();
}

// Block-scaled storage (ResolveTrial: t.storage is BlockScaledStorageFormat, named after the
// format): the format, or nullopt for plain storage.
std::optional<BlockScaledFormat> BlocksOf(const ResolvedTrial& t) {
  if (!LooksBlockScaled(t.storage.name)) return std::nullopt;
  return ParseBlockScaledFormat(t.storage.name);
}

// Quantises `values` (one tensor: rows x cols, row-major) in place to the block-scaled format,
// counting the finite values that became NaN (a block whose scale the format cannot hold).
// `keep` (pairs): the elements and scales a block-scaled matrix unit reads (ScaledOperand).
void QuantizeStorage(const BlockScaledFormat& f, std::vector<double>& values, std::size_t rows,
                     std::uint64_t offset, TrialInput& in,
                     std::shared_ptr<const ScaledOperand>* keep = nullptr) {
  if (values.empty()) return;
  BlockScaledResult q = Quantize(f, values, rows, values.size() / rows);
  if (keep) {
    auto op = std::make_shared<ScaledOperand>();
    op->elements = std::move(q.elements);
    op->scales = std::move(q.scales);
    op->tensor_scale = q.tensor_scale;
    *keep = std::move(op);
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isfinite(values[i]) && !std::isfinite(q.values[i]) && in.storage_overflows++ == 0) {
      in.first_overflow = offset + i;
      in.first_overflow_value = values[i];
    }
  }
  values = std::move(q.values);
}

}  // namespace

std::string StorageOverflowText(const TrialInput& in, const std::string& dtype) {
  char value[64] = "";
  if (!std::isnan(in.first_overflow_value))
    std::snprintf(value, sizeof value, " (%.17g)", in.first_overflow_value);
  return std::to_string(in.storage_overflows) + " finite input value" +
         (in.storage_overflows == 1 ? "" : "s") + " overflow " + dtype +
         " on storage (the first at index " + std::to_string(in.first_overflow) + value +
         "), becoming inf or NaN";
}

std::uint64_t NewInputId() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1);
}

TrialInput MakeInput(const ResolvedTrial& t, const inputs::GeneratorSpec& gen, std::uint64_t n,
                     std::uint64_t seed) {
  TrialInput in;
  in.n = n;
  in.id = NewInputId();
  if (const auto blocks = BlocksOf(t)) {
    // Each tensor drawn whole, then quantised block by block (NVFP4's tensor scale needs the
    // whole tensor's max): a column, each column of the pairs, or q, k and v as n x head_dim.
    switch (t.op->input) {
      case registry::InputKind::kAttention: {
        const std::uint64_t nd = n * t.spec.head_dim;
        const std::size_t rows = static_cast<std::size_t>(n);
        in.a = inputs::Generate(gen, nd, seed);
        auto k = inputs::Generate(gen, nd, seed + 1);
        auto v = inputs::Generate(inputs::ParseGenerator("normal"), nd, seed + 2);
        QuantizeStorage(*blocks, in.a, rows, 0, in);
        QuantizeStorage(*blocks, k, rows, nd, in);
        QuantizeStorage(*blocks, v, rows, 2 * nd, in);
        in.a.insert(in.a.end(), k.begin(), k.end());
        in.a.insert(in.a.end(), v.begin(), v.end());
        break;
      }
      case registry::InputKind::kPairs: {
        auto a = inputs::Generate(gen, n, seed);
        auto b = inputs::Generate(gen, n, seed + 1);
        QuantizeStorage(*blocks, a, 1, 0, in, &in.scaled_a);
        QuantizeStorage(*blocks, b, 1, n, in, &in.scaled_b);
        in.column = PackColumn(t, a);
        in.column_b = PackColumn(t, b);
        break;
      }
      case registry::InputKind::kColumn: {
        auto a = inputs::Generate(gen, n, seed);
        QuantizeStorage(*blocks, a, 1, 0, in);
        in.column = PackColumn(t, a);
        break;
      }
    }
    in.text = gen.Text() + " seed " + std::to_string(seed);
    return in;
  }
  switch (t.op->input) {
    case registry::InputKind::kAttention: {
      // q and k (n x head_dim each) from the generator, v normal: a = q, k, v concatenated.
      const std::uint64_t nd = n * t.spec.head_dim;
      in.a = inputs::Generate(gen, nd, seed, RoundStorage, &t.storage);
      const auto k = inputs::Generate(gen, nd, seed + 1, RoundStorage, &t.storage);
      const auto v = inputs::Generate(inputs::ParseGenerator("normal"), nd, seed + 2, RoundStorage,
                                      &t.storage);
      in.a.insert(in.a.end(), k.begin(), k.end());
      in.a.insert(in.a.end(), v.begin(), v.end());
      CountOverflows(in.a, 0, in);
      break;
    }
    case registry::InputKind::kPairs:
      in.column = GenerateColumn(t, gen, n, seed, 0, in);
      in.column_b = GenerateColumn(t, gen, n, seed + 1, n, in);
      break;
    case registry::InputKind::kColumn:
      in.column = GenerateColumn(t, gen, n, seed, 0, in);
      break;
  }
  in.text = gen.Text() + " seed " + std::to_string(seed);
  return in;
}

TrialInput MakeInputFromValues(const ResolvedTrial& t, std::vector<double> a, std::vector<double> b,
                               std::string text) {
  TrialInput in;
  in.id = NewInputId();
  in.a = std::move(a);
  in.b = std::move(b);
  in.n = in.a.size();
  if (const auto blocks = BlocksOf(t)) {  // each column one tensor (files hold vectors)
    const bool pairs = t.op->input == registry::InputKind::kPairs;
    QuantizeStorage(*blocks, in.a, 1, 0, in, pairs ? &in.scaled_a : nullptr);
    QuantizeStorage(*blocks, in.b, 1, in.a.size(), in, pairs ? &in.scaled_b : nullptr);
  }
  RoundToStorage(t, in.a, 0, in);
  RoundToStorage(t, in.b, in.a.size(), in);
  if (t.op->input == registry::InputKind::kColumn) in.column = PackColumn(t, in.a);
  if (t.op->input == registry::InputKind::kPairs && in.b.size() == in.a.size()) {
    in.column_b = PackColumn(t, in.b);
    in.column = PackColumn(t, in.a);
  }
  in.text = std::move(text);
  return in;
}

namespace {

// Whether a pass over n inputs is worth a thread of its own beside the trial's main thread: from
// 2^16 inputs, and only where the caller allows more than one thread (eval --threads 1 keeps to
// one). The shape walk's prefetch and the condition number ask it.
bool OwnThreadPays(std::uint64_t n) { return n >= (std::uint64_t{1} << 16) && PassThreads() >= 2; }

}  // namespace

ShapePrefetch PrefetchTrialShape(const ResolvedTrial& t, std::uint64_t n) {
  // Execute's paths that read ShapeOfSchedule: a per-role policy, a scaled matrix unit, and
  // the fast engine's replay of a schedule (not a data-decided one, not two levels).
  const bool split = t.policy && !t.policy->split.empty();
  const bool fast = t.spec.backend == "replay" && t.spec.engine == "fast" && t.op->replay &&
                    !t.mixed && !t.adaptive;
  if (split || !OwnThreadPays(n) || !(t.per_role || t.scaled_mma || fast)) return {};
  return PrefetchShape(t.schedule, n);
}

SharedReference ComputeReference(const ResolvedTrial& t, const TrialInput& in) {
  SharedReference out;
  const auto t0 = Clock::now();
  const bool fast = t.spec.engine == "fast" && t.op->fast_reference;
  (fast ? t.op->fast_reference : t.op->reference)(in, t.spec.head_dim, out);
  if (out.ref.op.empty()) out.ref.op = t.spec.op;
  out.seconds = Seconds(t0);
  return out;
}

TrialOutcome RunTrial(const ResolvedTrial& t, const TrialInput& in, const SharedReference& shared) {
  const registry::Entry& e = *t.op;
  const reference::Reference& ref = shared.ref;
  TrialOutcome o;
  o.n = in.n;
  if (o.n == 0) throw SpecError("empty input");
  o.main = e.main;
  o.vector_out = e.vector_out();

  std::vector<ValuePair<double>> pairs;
  BoundInputs bi = BoundInputsOf(in, e.input == registry::InputKind::kPairs, pairs);
  bi.exact = ref.as_long_double;
  bi.main = o.vector_out ? ref.as_long_double.size() : o.main;  // vector: no main component
  bi.head_dim = t.spec.head_dim;
  bi.attention_a = shared.attention_a;
  bi.attention_b = shared.attention_b;
  bi.attention_q = shared.attention_q;
  bi.memo = shared.bound_memo.get();
  // The condition number reads the input and the reference alone: where OwnThreadPays it is
  // computed on a thread of its own while the engine runs (a sum's is a pass over the whole
  // input), and waited for after it.
  std::future<double> cond_ahead;
  if (e.cond && OwnThreadPays(in.n))
    cond_ahead = std::async(std::launch::async, [&] { return e.cond(bi); });

  MergeTree tree;  // empty where the fast engine walked the schedule (MeasureBound: not needed)
  TreeShape shape;
  registry::Replayed got = Execute(t, in, tree, shape, o.seconds);
  // The out role (TrialSpec::out): the result as delivered, rounded once from the compute type
  // (at most fp64, so the conversion to double is exact).
  if (t.out)
    for (long double& c : got.components)
      c = RoundToFormat(static_cast<double>(c), *t.out, Rounding::kNearestEven);
  o.schedule_used = shape.schedule;
  o.components = got.components;
  o.index = got.index;

  const TreeStats& stats = shape.stats;
  o.tree_max_depth = stats.max_leaf_depth;
  o.tree_hash = shape.hash;
  o.tree_mean_depth = stats.mean_leaf_depth;
  o.u = UnitRoundoffOf(t.mixed ? t.inner : t.compute, t.rounding);
  MeasureErrors(t, got, ref, o);

  if (e.cond) o.cond = cond_ahead.valid() ? cond_ahead.get() : e.cond(bi);
  if (t.policy && !t.policy->split.empty()) {
    // Not derived yet: the parts' truncation and the partial dots' roundings together.
    o.bound_note = "none: no a-priori bound is derived for split=" + t.policy->split +
                   " (XLA's split dot algorithms)";
    return o;
  }
  if (!t.per_role) MeasureBound(t, bi, tree, stats, o);
  MeasureRoleBound(t, bi, stats, o);
  return o;
}

void ReleaseThreadCaches() { MpfrReleaseThreadCaches(); }

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR
