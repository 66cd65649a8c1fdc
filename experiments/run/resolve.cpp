// experiments/run/resolve.cpp: the trial runner's first step (trial.hpp): a TrialSpec checked
// against the op table (experiments/registry/registry.hpp) and parsed once into a
// ResolvedTrial; SpecError (one line) for anything that cannot run.
#include "run/trial.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <algorithm>

#include "cli/args.hpp"
#include "io/tree_file.hpp"
#include "precision/block_scaled.hpp"
#include "precision/emulated_oracle.hpp"
#include "registry/registry.hpp"
#include "run/scaled_dot.hpp"

namespace carrier::run {

namespace {

ComputeSpec ParseCompute(const std::string& text, Rounding rounding) {
  ComputeSpec c;
  c.text = text;
  if (text.rfind("mpfr:", 0) == 0) {
    auto bits = cli::ParseCountText(text.substr(5));
    if (!bits || *bits < 2 || *bits > (1u << 20))
      throw SpecError("acc mpfr:BITS needs BITS between 2 and 2^20, got '" + text.substr(5) + "'");
    c.kind = ComputeKind::kMpfr;
    c.mpfr_bits = static_cast<long>(*bits);
    c.format = Fp64();
    c.format.precision = static_cast<int>(std::min<long>(c.mpfr_bits, 53));
    return c;
  }
  if (const registry::NamedComputeType* named = registry::FindComputeType(text)) {
    if (rounding != Rounding::kNearestEven)
      throw SpecError("round " + std::string(RoundingName(rounding)) + ": " + text +
                      " computes in rne only");
    c.kind = ComputeKind::kFloat128;
    c.format = Fp64();
    c.format.name = named->name;
    c.format.precision = named->precision;
    return c;
  }
  try {
    c.format = ParseFormat(text);
  } catch (const std::exception& e) {
    std::string names;
    for (const auto& n : registry::NamedComputeTypes()) names += " " + n.name;
    throw SpecError(std::string(e.what()) + "; or a compute type:" + names + " mpfr:BITS" +
                    (text == "fp128" && names.empty() ? " (fp128 is not in this build; bash "
                                                        "scripts/run-tests.sh builds it)"
                                                      : ""));
  }
  const bool nearest = rounding == Rounding::kNearestEven;
  if (c.format == Fp32() && nearest) {
    c.kind = ComputeKind::kFloat;
  } else if (c.format == Fp64()) {
    if (!nearest)
      throw SpecError("round " + std::string(RoundingName(rounding)) +
                      " needs an emulated compute format (p <= 26); fp64 computes in rne only");
    c.kind = ComputeKind::kDouble;
  } else {
    if (!IsEmulableFormat(c.format))
      throw SpecError("compute format '" + text + "' cannot be emulated (needs p <= 26)");
    c.kind = ComputeKind::kEmulated;
  }
  return c;
}

std::vector<std::string> MixedOps() {
  std::vector<std::string> out;
  for (const registry::Entry* e : registry::All())
    if (e->replay_mixed) out.push_back(e->name);
  return out;
}

// acc "INNER>OUTER" (see ResolvedTrial::mixed). Every INNER value must be an OUTER value, so the
// conversion between the levels is exact: INNER's precision at most OUTER's and its exponent
// range (subnormals included) inside OUTER's; mpfr:BITS as OUTER has fp64's range or wider.
void ResolveMixed(ResolvedTrial& t, const std::string& acc, std::size_t gt) {
  if (!t.op->replay_mixed)
    throw SpecError("acc '" + acc + "' (two-level accumulation) applies to ops " +
                    registry::Join(MixedOps()) + ", not '" + t.spec.op + "'");
  const std::string in_text = acc.substr(0, gt), out_text = acc.substr(gt + 1);
  if (in_text.empty() || out_text.empty() || out_text.find('>') != std::string::npos)
    throw SpecError("acc '" + acc + "' is not INNER>OUTER (two compute types, e.g. fp16>fp32)");
  auto side = [&](const std::string& s) {
    return ParseCompute(s == "same" ? t.spec.dtype : s, t.rounding);
  };
  t.inner = side(in_text);
  t.compute = side(out_text);
  t.compute.text = acc;
  t.mixed = true;
  if (t.inner.kind == ComputeKind::kMpfr)
    throw SpecError("acc '" + acc + "': the inner type cannot be mpfr:BITS (outer only)");
  if (t.inner.kind == ComputeKind::kFloat128 || t.compute.kind == ComputeKind::kFloat128)
    throw SpecError("acc '" + acc + "': fp128 computes on one level only, not in INNER>OUTER");
  const Format& fi = t.inner.format;
  const Format& fo = t.compute.format;
  const bool outer_mpfr = t.compute.kind == ComputeKind::kMpfr;
  const int p_out = outer_mpfr ? static_cast<int>(t.compute.mpfr_bits) : fo.precision;
  const bool fits = fi.precision <= p_out &&
                    (outer_mpfr ? (fi.emax <= fo.emax && fi.emin - fi.precision >= fo.emin - 53)
                                : ValuesWithin(fi, fo));
  if (!fits)
    throw SpecError("acc '" + acc + "': inner " + in_text + " is wider than outer " + out_text +
                    " (every inner value must be an outer value: precision and exponent range)");
}

// The op's own restrictions, from its entry (head dims, compute types, backends).
void CheckOpLimits(const ResolvedTrial& t) {
  const registry::Entry& e = *t.op;
  const TrialSpec& spec = t.spec;
  if (!e.head_dims.empty()) {
    const auto& dims = e.head_dims;
    if (std::find(dims.begin(), dims.end(), spec.head_dim) == dims.end()) {
      std::string list;
      for (auto d : dims) list += (list.empty() ? "" : " ") + std::to_string(d);
      throw SpecError(e.name + " head_dim " + std::to_string(spec.head_dim) +
                      " is not built; head_dim: " + list);
    }
  }
  if (!e.mpfr_compute &&
      (t.compute.kind == ComputeKind::kMpfr || t.compute.kind == ComputeKind::kFloat128 || t.mixed))
    throw SpecError(e.name +
                    " computes in one format, fp32, fp64 or an emulated one (acc "
                    "bf16, fp16, ...), not '" +
                    t.compute.text + "'");
  if (t.compute.kind == ComputeKind::kFloat128) {
    // Measured exactly (RunTrial): a scalar result against the reference's exact value.
    if (e.vector_out())
      throw SpecError(e.name + " has a vector output, measured in long double; " + t.compute.text +
                      " is measured for scalar ops only");
    if (spec.backend != "replay")
      throw SpecError("acc " + t.compute.text + " runs on backend replay only, not " +
                      spec.backend);
  }
  if (!e.emulated_on_backends && t.compute.kind == ComputeKind::kEmulated &&
      spec.backend != "replay")
    throw SpecError(e.name + " in emulated " + t.compute.text +
                    " runs on backend replay only, "
                    "not " +
                    spec.backend);
}

std::vector<std::string> PolicyOps() {
  std::vector<std::string> out;
  for (const registry::Entry* e : registry::All())
    if (e->policy_replay) out.push_back(e->name);
  return out;
}

// TrialSpec::precision into the trial: an op that runs policies itself (Entry::policy_replay)
// keeps the typed policy and is listed under dtype = in, acc = acc, round = acc's rounding;
// any other op runs the policy's --dtype/--acc/--round shorthand, or refuses the policy with
// ToShorthand's reason (the role it cannot honour).
void ApplyPolicy(const registry::Entry& e, TrialSpec& spec, ResolvedTrial& t) {
  const PrecisionPolicy& p = *spec.precision;
  t.policy = p;
  if (!p.split.empty()) {
    // XLA's split algorithms (precision/dot_split.hpp) cut fp32 operands into parts and run
    // IEEE fp32 partial dots: the pairs op of matrix products, every computed role fp32.
    const std::string what = "precision split=" + p.split;
    if (!e.fused_schedules || e.policy_replay)
      throw SpecError(what + " applies to op dot and matmul, not '" + e.name + "'");
    if (!(p.in.format == Fp32()))
      throw SpecError(what +
                      " splits fp32 operands (XLA's f32 dot): in=fp32, not in=" + p.in.format.name);
    for (PrecisionRole r : {PrecisionRole::kAcc, PrecisionRole::kCombine})
      if (!(p.Role(r) == RoleArithmetic{}))
        throw SpecError(what + " accumulates and adds the partial dots in fp32 (rne), not " +
                        std::string(PrecisionRoleName(r)) + "=" + p.Role(r).format.name + "@" +
                        std::string(RoundingName(p.Role(r).rounding)));
    if (!p.mma.empty()) throw SpecError(what + " runs IEEE fp32 partial dots, not mma=" + p.mma);
  }
  if (e.policy_replay) {
    t.per_role = true;
    spec.dtype = p.in.format.name;
    spec.acc = p.acc.format.name;
    spec.round = std::string(RoundingName(p.acc.rounding));
    spec.out.clear();
    return;
  }
  PrecisionPolicy shorthand = p;
  if (!p.mma.empty() && e.fused_schedules) {
    // The matrix unit a policy names (an XLA FAST_ACCUM alias, say) is the mma:PROFILE order
    // (core/orders/mma.hpp): it replaces the default seq; an explicit mma order must name the
    // same profile (a promote:N tail is kept).
    const std::string order = "mma:" + p.mma;
    if (spec.schedule == "seq")
      spec.schedule = order;
    else if (spec.schedule != order && spec.schedule.rfind(order + ":", 0) != 0)
      throw SpecError("precision mma=" + p.mma + " runs as --schedule " + order +
                      "[:promote:N], not '" + spec.schedule + "'");
    shorthand.mma.clear();
  }
  shorthand.split.clear();  // checked above; RunTrial runs it (run/trial.cpp)
  try {
    const ShorthandSpec sh = ToShorthand(shorthand);
    spec.dtype = sh.dtype;
    spec.acc = sh.acc;
    spec.round = sh.round;
    spec.out = sh.out;
  } catch (const std::invalid_argument& err) {
    const std::vector<std::string> ops = PolicyOps();
    throw SpecError(std::string(err.what()) +
                    (ops.empty() ? "" : " (every role: op " + registry::Join(ops) + ")"));
  }
}

}  // namespace

const std::vector<std::string>& BuiltinOps() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v;
    for (const registry::Entry* e : registry::All())
      if (e->replay_oracle && !e->user) v.push_back(e->name);
    return v;
  }();
  return ops;
}

const std::vector<std::string>& RunnerOps() { return BuiltinOps(); }

const std::vector<std::uint64_t>& AttentionHeadDims() {
  static const std::vector<std::uint64_t> none;
  const registry::Entry* e = registry::Find("attention");
  return e ? e->head_dims : none;
}

const std::vector<std::string>& Engines() {
  static const std::vector<std::string> kEngines = {"fast", "oracle"};
  return kEngines;
}

ResolvedTrial ResolveTrial(const TrialSpec& given) {
  ResolvedTrial t;
  if (given.engine != "fast" && given.engine != "oracle")
    throw SpecError("unknown engine '" + given.engine + "'; engines: fast oracle");
  t.op = registry::Find(given.op);
  if (!t.op || !t.op->replay_oracle)
    throw SpecError("unknown op '" + given.op + "'; ops: " + registry::Join(registry::TrialOps()) +
                    registry::MainJobOpsNote());
  TrialSpec spec = given;
  if (spec.precision) ApplyPolicy(*t.op, spec, t);
  t.spec = spec;
  if (t.op->user) t.user = t.op;
  if (registry::FindComputeType(spec.dtype))  // stored inputs are doubles (TrialInput)
    throw SpecError("dtype " + spec.dtype + " is a compute type only (--acc " + spec.dtype +
                    "); stored inputs are at most fp64");
  const bool block_scaled = LooksBlockScaled(spec.dtype);
  try {
    if (block_scaled) {
      // Block-scaled storage (precision/block_scaled.hpp): MakeInput quantises the whole input
      // (each column, or attention's q, k and v as n x head_dim matrices) and stores the exact
      // dequantised values as doubles.
      const BlockScaledFormat bf = ParseBlockScaledFormat(spec.dtype);
      if (bf.two_d && t.op->input != registry::InputKind::kAttention)
        throw SpecError("dtype " + bf.name + ": two-dimensional blocks tile a matrix; op " +
                        spec.op + " stores vectors (use 1-D blocks, e.g. " +
                        bf.name.substr(0, bf.name.find(":2d")) + ")");
      if (spec.backend != "replay")
        throw SpecError("dtype " + bf.name + " (block-scaled storage) runs on backend replay " +
                        "only, not " + spec.backend);
      t.storage = BlockScaledStorageFormat(bf);
    } else {
      t.storage = ParseFormat(spec.dtype);
    }
  } catch (const SpecError&) {
    throw;
  } catch (const std::exception& e) {
    throw SpecError(e.what());
  }
  if (block_scaled && (spec.acc.empty() || spec.acc == "same"))
    throw SpecError("dtype " + t.storage.name +
                    " is a block-scaled storage format with no arithmetic of its own: give --acc "
                    "(e.g. fp32)");
  try {
    t.rounding = ParseRounding(spec.round);
  } catch (const std::exception& e) {
    throw SpecError(e.what());
  }
  const std::string acc = spec.acc.empty() || spec.acc == "same" ? spec.dtype : spec.acc;
  if (const auto gt = acc.find('>'); gt != std::string::npos) {
    ResolveMixed(t, acc, gt);
  } else {
    t.compute = ParseCompute(acc, t.rounding);
  }
  if (registry::kMainJobComputeOnly &&
      (t.mixed || t.compute.kind == ComputeKind::kDouble || t.compute.kind == ComputeKind::kMpfr ||
       t.compute.kind == ComputeKind::kFloat128))
    throw SpecError(registry::MainJobComputeNote(acc));
  try {
    registry::ParseExp(spec.exp);
  } catch (const std::invalid_argument& e) {
    throw SpecError(e.what());
  }
  if (t.user && spec.exp != "libm")
    throw SpecError("exp " + spec.exp + " applies to the built-in ops only; user carrier '" +
                    spec.op + "' uses its scalar's own functions");
  auto native = [](const ComputeSpec& c) {
    return c.kind == ComputeKind::kFloat || c.kind == ComputeKind::kDouble;
  };
  if (spec.exp == "portable" && (!native(t.compute) || (t.mixed && !native(t.inner))))
    throw SpecError("exp portable needs compute type fp32 or fp64 (native compute)");
  const auto backends = registry::BackendNames();
  if (std::find(backends.begin(), backends.end(), spec.backend) == backends.end())
    throw SpecError("backend '" + spec.backend + "' is not one of " + registry::Join(backends));
  if (t.mixed && spec.backend != "replay")
    throw SpecError("acc '" + acc + "' (two-level) runs on backend replay only, not " +
                    spec.backend);
  // An empty schedule on a kernel backend is that backend's native one (backends.hpp): the
  // kernel picks it and RunTrial reports it as schedule_used.
  if (spec.schedule.empty() && spec.backend == "replay")
    throw SpecError("backend replay needs a schedule (seq, pairwise, blocked:T, ...)");
  if (ParseAdaptiveOrder(spec.schedule, t.adaptive_order)) {
    // Higham 1993's data-dependent orders: decided in the compute arithmetic, so that
    // arithmetic must be one the decision can run (run/trial.cpp Execute).
    const std::string what = "schedule '" + spec.schedule + "' (an order decided by the data)";
    if (spec.backend != "replay") throw SpecError(what + " runs on backend replay only");
    if (t.op->input != registry::InputKind::kColumn || !t.op->commutative)
      throw SpecError(what + " reorders one column of inputs; op '" + spec.op +
                      "' is not a commutative one-column op");
    if (t.mixed || t.compute.kind == ComputeKind::kMpfr || t.compute.kind == ComputeKind::kFloat128)
      throw SpecError(what + " computes in one format (fp64, fp32 or an emulated one), not '" +
                      t.compute.text + "'");
    if (t.rounding == Rounding::kStochastic)
      throw SpecError(what + " needs a deterministic rounding, not sr");
    t.adaptive = true;
  } else {
    try {  // file:PATH trees are read here: a bad file is bad input
      if (!spec.schedule.empty()) t.schedule = io::LoadSchedule(spec.schedule);
    } catch (const ScheduleError& e) {
      throw SpecError(e.what());
    }
  }
  if (t.policy && !t.policy->split.empty()) {
    const std::string what = "precision split=" + t.policy->split;
    if (spec.backend != "replay") throw SpecError(what + " runs on backend replay only");
    if (t.adaptive || t.schedule.kind() == ScheduleKind::kMma)
      throw SpecError(what + " runs each partial dot in IEEE fp32 through a declared schedule, " +
                      "not '" + spec.schedule + "'");
  }
  if (t.schedule.kind() == ScheduleKind::kMma) {  // a matrix unit's accumulation (core/mma.hpp)
    const MmaProfile& p = *FindMmaProfile(t.schedule.As<orders::MmaParams>().profile);
    const std::string what =
        "schedule '" + spec.schedule + "' (" + std::string(p.instruction) + ")";
    if (!t.op->fused_schedules)
      throw SpecError(what + " applies to " + registry::Join([] {
                        std::vector<std::string> v;
                        for (const auto* e : registry::All())
                          if (e->fused_schedules) v.push_back(e->name);
                        return v;
                      }()) +
                      " only, not '" + spec.op + "'");
    if (spec.backend != "replay") throw SpecError(what + " runs on backend replay only");
    if (t.mixed ||
        (t.compute.kind != ComputeKind::kFloat && t.compute.kind != ComputeKind::kDouble))
      throw SpecError(what + " computes in --acc fp32 or fp64, not '" + t.compute.text + "'");
    if (p.scale != MmaScale::kNone || LooksBlockScaled(t.storage.name))
      CheckScaledMma(p, spec.schedule, t);  // block scales in the unit (run/scaled_dot.hpp)
    else if (!MmaInputAccepts(p.node.input, t.storage.name))
      throw SpecError(what + " multiplies " + std::string(MmaInputName(p.node.input)) +
                      " values, not --dtype " + t.storage.name);
  }
  if (!spec.out.empty()) {
    Format out;
    try {
      out = ParseFormat(spec.out);
    } catch (const std::exception& e) {
      throw SpecError(std::string("out: ") + e.what());
    }
    if (t.compute.kind == ComputeKind::kMpfr || t.compute.kind == ComputeKind::kFloat128)
      throw SpecError("out=" + spec.out + " rounds a result of at most fp64, not acc " +
                      t.compute.text);
    if (!(out == t.compute.format)) t.out = out;
  }
  if (t.per_role) {
    // The policy's formats themselves (a custom: format keeps every field), not their names.
    const PrecisionPolicy& p = *t.policy;
    t.storage = p.in.format;
    t.compute.format = p.acc.format;
    const std::string what = "precision " + ToString(p) + " (op " + spec.op + " by role)";
    if (spec.backend != "replay") throw SpecError(what + " runs on backend replay only");
    if (spec.exp != "libm")
      throw SpecError(what + " computes exp as libm's, rounded to acc; not exp " + spec.exp);
    if (t.adaptive)
      throw SpecError(what + " runs a declared schedule, not '" + spec.schedule + "'");
    if (t.op->check_policy) {
      try {
        t.op->check_policy(p, t.schedule);
      } catch (const std::invalid_argument& e) {
        throw SpecError(e.what());
      }
    }
  }
  CheckOpLimits(t);
  return t;
}

std::string ReferenceKey(const ResolvedTrial& t) {
  const registry::Entry& e = *t.op;
  std::string key = e.reference_key.empty() ? e.name : e.reference_key;
  if (e.input == registry::InputKind::kAttention) key += ":" + std::to_string(t.spec.head_dim);
  return key;
}

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR
