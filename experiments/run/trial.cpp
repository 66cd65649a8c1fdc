#include "run/trial.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <span>
#include <type_traits>

#include "backends/backends.hpp"
#include "cli/args.hpp"
#include "core/attention.hpp"
#include "core/carriers/all.hpp"
#include "core/merge_tree.hpp"
#include "core/replay.hpp"
#include "precision/bounds.hpp"
#include "precision/emulated.hpp"
#include "precision/math_policy.hpp"
#include "precision/metrics.hpp"
#include "precision/mpfr_scalar.hpp"
#include "precision/op_bounds.hpp"
#include "precision/scalars.hpp"
#include "registry/registry.hpp"

namespace carrier::run {

namespace {

using Clock = std::chrono::steady_clock;

bool TwoColumns(const std::string& op) { return op == "dot" || op == "affine"; }
bool IsVariance(const std::string& op) {
  return op == "welford" || op == "var-twopass" || op == "var-textbook";
}

template <class T>
long double L(const T& v) {
  return static_cast<long double>(v);
}

// core/attention.hpp's shape for a schedule: blocked:BC:lift is the kernel's order (key tiles
// of BC); any other schedule is the per-row merge order of a non-causal head, where block_c
// plays no part.
AttentionShape AttentionShapeFor(const std::string& schedule, std::size_t n, std::size_t d) {
  const Schedule s = ParseSchedule(schedule);
  if (s.kind == ScheduleKind::kBlocked && s.outer == OuterOrder::kSeq && s.lift)
    return AttentionShapeFromSchedule(schedule, n, d, false);
  AttentionShape shape;
  shape.seq_len = n;
  shape.head_dim = d;
  CheckAttentionShape(shape);
  return shape;
}

struct Computed {
  std::vector<long double> components;
  std::int64_t index = -1;
};

template <class T, class Exp>
Computed Compute(const std::string& op, const MergeTree& tree, const TrialInput& in,
                 std::uint64_t head_dim) {
  Computed out;
  const auto& a = in.a;
  const auto& b = in.b;
  std::vector<T> x;
  x.reserve(a.size());
  for (double v : a) x.push_back(static_cast<T>(v));
  const std::span<const T> xs(x);
  auto pairs = [&] {
    std::vector<ValuePair<T>> p;
    p.reserve(a.size());
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
  } else if (op == "var-twopass") {
    // Pass 1: the mean; pass 2: the centred squares, both through the same tree.
    const T count = T(static_cast<double>(x.size()));
    const T mean = Sum<T>::Finalize(Replay<Sum<T>>(tree, xs)) / count;
    std::vector<T> d2;
    d2.reserve(x.size());
    for (const T& v : x) {
      const T d = v - mean;
      d2.push_back(d * d);
    }
    const T m2 = Sum<T>::Finalize(Replay<Sum<T>>(tree, std::span<const T>(d2)));
    out.components = {L(mean), L(m2 / count), L(m2 / T(static_cast<double>(x.size() - 1)))};
  } else if (op == "var-textbook") {
    // One pass carrying (sum x, sum x^2): two Sum replays over the same tree are exactly that
    // pair carrier, component by component.
    const T count = T(static_cast<double>(x.size()));
    std::vector<T> sq;
    sq.reserve(x.size());
    for (const T& v : x) sq.push_back(v * v);
    const T s1 = Sum<T>::Finalize(Replay<Sum<T>>(tree, xs));
    const T s2 = Sum<T>::Finalize(Replay<Sum<T>>(tree, std::span<const T>(sq)));
    const T m2 = s2 - s1 * s1 / count;
    out.components = {L(s1 / count), L(m2 / count), L(m2 / T(static_cast<double>(x.size() - 1)))};
  } else if (op == "norm2") {
    out.components = {L(ScaledNorm2<T>::Finalize(Replay<ScaledNorm2<T>>(tree, xs)))};
  } else if (op == "dot") {
    const auto p = pairs();
    out.components = {L(Dot<T>::Finalize(Replay<Dot<T>>(tree, std::span<const ValuePair<T>>(p))))};
  } else if (op == "affine") {
    const auto p = pairs();
    const auto r = Affine<T>::Finalize(Replay<Affine<T>>(tree, std::span<const ValuePair<T>>(p)));
    out.components = {L(r.a), L(r.b)};
  } else if (op == "attention") {
    // fp32/fp64 natively; an emulated format (bf16, fp16, ...) under the caller's
    // EmulationScope, so every score product and sum, exp, rescale by exp(m_old - m_new),
    // l and o update and the final o / l round into that format, as a kernel computing in it.
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, Emulated<DynamicFormatTag, kDynamicRounding>>) {
      const std::size_t n = in.n, d = head_dim;
      const double* q = a.data();
      const AttentionShape shape = AttentionShapeFor(tree.schedule, n, d);
      const std::vector<T> o = AttentionForwardReplay<T, Exp, double>(
          q, q + n * d, q + 2 * n * d, shape, ParseSchedule(tree.schedule));
      out.components.reserve(o.size());
      for (const T& v : o) out.components.push_back(L(v));
    } else {
      throw SpecError("attention computes in fp32, fp64 or an emulated format (acc), not mpfr");
    }
  } else {
    throw SpecError("op '" + op + "' has no replay");
  }
  return out;
}

template <class T>
Computed ComputeWithExp(const std::string& exp, const std::string& op, const MergeTree& tree,
                        const TrialInput& in, std::uint64_t head_dim) {
  if (exp == "portable") {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      return Compute<T, PortableExp>(op, tree, in, head_dim);
    }
    throw SpecError("exp portable needs compute type fp32 or fp64 (native compute)");
  }
  if (exp == "fast") return Compute<T, FastExp>(op, tree, in, head_dim);
  return Compute<T, LibmExp>(op, tree, in, head_dim);
}

// ---- Two-level accumulation (acc "INNER>OUTER", ResolvedTrial::mixed) ----

using Emu = Emulated<DynamicFormatTag, kDynamicRounding>;

// A state field from INNER to OUTER through double: exact for every INNER here (float, double
// and emulated values are doubles), then OUTER's constructor rounds once — exactly, since
// ResolveTrial admits only pairs where every INNER value is an OUTER value. (Mpfr has no
// constructor from an emulated value, hence the double in between.) Counts are copied.
struct ViaDouble {
  template <class To, class From>
  static To Cast(const From& v) {
    if constexpr (std::is_integral_v<To>) {
      return static_cast<To>(v);
    } else {
      return To(static_cast<double>(v));
    }
  }
};

// The second stochastic stream (OUTER's) of a trial with round = sr: a SplitMix step away from
// INNER's, so the two levels never reuse the same random bits.
std::uint64_t OuterSrSeed(std::uint64_t seed) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL;  // SplitMix64's finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The chains in Ci under INNER's emulation scope (when Ci computes in an emulated format),
// then the combines in Co under OUTER's: ReplayMixedChains + ReplayCombines, i.e. ReplayMixed
// with each phase in its own thread-local format.
template <class Ci, class Co>
typename Co::Result MixedResult(const ResolvedTrial& t, const MergeTree& tree,
                                const std::vector<double>& a) {
  std::vector<typename Co::State> states;
  {
    std::optional<EmulationScope> scope;
    if constexpr (std::is_same_v<typename Ci::Scalar, Emu>)
      scope.emplace(t.inner.format, t.rounding, t.spec.sr_seed);
    std::vector<typename Ci::Input> x;
    x.reserve(a.size());
    for (double v : a) x.push_back(typename Ci::Input(v));
    states = ReplayMixedChains<Ci, Co>(tree, std::span<const typename Ci::Input>(x),
                                       StateFieldCast<Ci, Co, ViaDouble>{});
  }
  std::optional<EmulationScope> scope;
  if constexpr (std::is_same_v<typename Co::Scalar, Emu>)
    scope.emplace(t.compute.format, t.rounding, OuterSrSeed(t.spec.sr_seed));
  return Co::Finalize(ReplayCombines<Co>(tree, std::move(states)));
}

template <class Ti, class To, class Exp>
Computed ComputeMixed(const ResolvedTrial& t, const MergeTree& tree, const TrialInput& in) {
  Computed out;
  const std::string& op = t.spec.op;
  if (op == "sum") {
    out.components = {L(MixedResult<Sum<Ti>, Sum<To>>(t, tree, in.a))};
  } else if (op == "kahan") {
    out.components = {L(MixedResult<Compensated<Ti>, Compensated<To>>(t, tree, in.a))};
  } else if (op == "lse") {
    out.components = {L(MixedResult<OnlineSoftmax<Ti, Exp>, OnlineSoftmax<To, Exp>>(t, tree, in.a).lse)};
  } else if (op == "welford") {
    const auto r = MixedResult<Welford<Ti>, Welford<To>>(t, tree, in.a);
    out.components = {L(r.mean), L(r.var_population), L(r.var_sample)};
  } else {
    throw SpecError("acc '" + t.compute.text + "' (two-level) has no replay for op '" + op + "'");
  }
  return out;
}

template <class Ti, class To>
Computed ComputeMixedExp(const ResolvedTrial& t, const MergeTree& tree, const TrialInput& in) {
  const std::string& exp = t.spec.exp;
  if (exp == "portable") {
    if constexpr ((std::is_same_v<Ti, float> || std::is_same_v<Ti, double>) &&
                  (std::is_same_v<To, float> || std::is_same_v<To, double>)) {
      return ComputeMixed<Ti, To, PortableExp>(t, tree, in);
    }
    throw SpecError("exp portable needs native compute types (fp32 or fp64) on both levels");
  }
  if (exp == "fast") return ComputeMixed<Ti, To, FastExp>(t, tree, in);
  return ComputeMixed<Ti, To, LibmExp>(t, tree, in);
}

template <class Ti>
Computed ComputeMixedOuter(const ResolvedTrial& t, const MergeTree& tree, const TrialInput& in) {
  switch (t.compute.kind) {
    case ComputeKind::kFloat:
      if constexpr (!std::is_same_v<Ti, double>) return ComputeMixedExp<Ti, float>(t, tree, in);
      break;
    case ComputeKind::kDouble:
      return ComputeMixedExp<Ti, double>(t, tree, in);
    case ComputeKind::kEmulated:
      if constexpr (std::is_same_v<Ti, Emu>) return ComputeMixedExp<Emu, Emu>(t, tree, in);
      break;
    case ComputeKind::kMpfr: {
      MpfrPrecisionScope scope(t.compute.mpfr_bits);
      return ComputeMixedExp<Ti, Mpfr>(t, tree, in);
    }
  }
  throw SpecError("acc '" + t.compute.text + "': this pair of compute types is not built");
}

Computed ComputeMixedAny(const ResolvedTrial& t, const MergeTree& tree, const TrialInput& in) {
  switch (t.inner.kind) {
    case ComputeKind::kFloat:
      return ComputeMixedOuter<float>(t, tree, in);
    case ComputeKind::kDouble:
      return ComputeMixedOuter<double>(t, tree, in);
    case ComputeKind::kEmulated:
      return ComputeMixedOuter<Emu>(t, tree, in);
    case ComputeKind::kMpfr:
      break;
  }
  throw SpecError("acc '" + t.compute.text + "': the inner type cannot be mpfr");
}

// Per chain k of the tree: its rounded pushes (count - 1, its longest in-chain path) and the
// combines above it that round (those whose other operand is not empty; ComputeStats' rule).
// The FABsum bound's max over chains of D_in u_in + D_out u_out (RunTrial).
double MixedDepthCoefficient(const MergeTree& tree, double u_in, double u_out,
                             std::uint64_t* d_in_max, std::uint64_t* d_out_max) {
  const std::size_t c = tree.chains.size();
  std::vector<std::uint64_t> count(tree.NodeCount(), 0), above(tree.NodeCount(), 0);
  for (std::size_t k = 0; k < c; ++k) count[k] = tree.chains[k].count;
  for (std::size_t m = 0; m < tree.combines.size(); ++m)
    count[c + m] = count[tree.combines[m].left] + count[tree.combines[m].right];
  for (std::size_t m = tree.combines.size(); m-- > 0;) {
    const auto& op = tree.combines[m];
    above[op.left] = above[c + m] + (count[op.right] > 0 ? 1 : 0);
    above[op.right] = above[c + m] + (count[op.left] > 0 ? 1 : 0);
  }
  double worst = 0;
  *d_in_max = 0;
  *d_out_max = 0;
  for (std::size_t k = 0; k < c; ++k) {
    if (count[k] == 0) continue;
    const double v = static_cast<double>(count[k] - 1) * u_in + static_cast<double>(above[k]) * u_out;
    if (v >= worst) {
      worst = v;
      *d_in_max = count[k] - 1;
      *d_out_max = above[k];
    }
  }
  return worst;
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
  try {
    c.format = ParseFormat(text);
  } catch (const std::exception& e) {
    throw SpecError(e.what());
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

double RoundStorage(double v, const void* ctx) {
  return RoundToFormat(v, *static_cast<const Format*>(ctx), Rounding::kNearestEven);
}

long double SumAbsTerms(const std::string& op, const TrialInput& in) {
  long double s = 0;
  for (std::size_t i = 0; i < in.a.size(); ++i)
    s += std::fabs(op == "dot" ? static_cast<long double>(in.a[i]) * in.b[i]
                               : static_cast<long double>(in.a[i]));
  return s;
}

// The certified output of every query row (core/attention.hpp's exact scores, then
// ReferenceAttention per row), concatenated row-major like the replay's output. Certified when
// every row is; the tier and precision of the least precise row.
reference::Reference AttentionReference(const TrialInput& in, std::uint64_t d,
                                        SharedReference& bound_parts) {
  const std::size_t n = in.n;
  const double* q = in.a.data();
  AttentionShape shape;
  shape.seq_len = n;
  shape.head_dim = d;
  const std::span<const double> v(q + 2 * n * d, n * d);
  reference::Reference all;
  all.op = "attention";
  all.count = n;
  all.cert.certified = true;
  all.cert.correctly_rounded = true;
  all.cert.precision_bits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::vector<double> scores = AttentionScoresExact(q, q + n * d, shape, i);
    const reference::Reference r = reference::ReferenceAttention(scores, v, d);
    all.as_double.insert(all.as_double.end(), r.as_double.begin(), r.as_double.end());
    all.as_long_double.insert(all.as_long_double.end(), r.as_long_double.begin(),
                              r.as_long_double.end());
    if (i == 0 || r.cert.precision_bits < all.cert.precision_bits) {
      all.cert.precision_bits = r.cert.precision_bits;
      all.cert.tier = r.cert.tier;
    }
    all.cert.certified = all.cert.certified && r.cert.certified;
    all.cert.correctly_rounded = all.cert.correctly_rounded && r.cert.correctly_rounded;
    if (!r.cert.certified && all.cert.note.empty())
      all.cert.note = "row " + std::to_string(i) + ": " + r.cert.note;
    // The bound's ingredients (SharedReference), in long double from the exact scores.
    long double m = -INFINITY, total = 0, qmax = 0;
    for (double sc : scores) m = std::max<long double>(m, sc);
    std::vector<long double> w(n);
    for (std::size_t k = 0; k < n; ++k) total += (w[k] = std::exp(static_cast<long double>(scores[k]) - m));
    for (std::size_t k = 0; k < n; ++k) {
      w[k] /= total;
      long double qk = 0;
      for (std::size_t c = 0; c < d; ++c) qk += std::fabs(static_cast<long double>(q[i * d + c]) * q[n * d + k * d + c]);
      qmax = std::max(qmax, qk / std::sqrt(static_cast<long double>(d)));
    }
    for (std::size_t j = 0; j < d; ++j) {
      const long double o = std::fabs(r.as_long_double[j]);
      long double a = 0, b = 0;
      for (std::size_t k = 0; k < n; ++k) {
        const long double t = w[k] * (std::fabs(static_cast<long double>(v[k * d + j])) + o);
        a += t;
        b += t * (m - scores[k]);
      }
      bound_parts.attention_a.push_back(static_cast<double>(a));
      bound_parts.attention_b.push_back(static_cast<double>(b));
    }
    bound_parts.attention_q.push_back(static_cast<double>(qmax));
  }
  return all;
}

}  // namespace

const std::vector<std::string>& BuiltinOps() {
  static const std::vector<std::string> ops = {"sum",     "kahan",   "max",   "argmax", "lse",
                                               "softmax", "welford", "norm2", "dot",    "affine"};
  return ops;
}

const std::vector<std::string>& RunnerOps() {
  static const std::vector<std::string> ops = [] {
    auto v = BuiltinOps();
    v.insert(v.end(), {"var-twopass", "var-textbook", "attention"});
    return v;
  }();
  return ops;
}

const std::vector<std::uint64_t>& AttentionHeadDims() {
  static const std::vector<std::uint64_t> dims = {64, 128};  // core/attention.hpp's menu
  return dims;
}

namespace {

// acc "INNER>OUTER" (see ResolvedTrial::mixed). Every INNER value must be an OUTER value, so the
// conversion between the levels is exact: INNER's precision at most OUTER's and its exponent
// range (subnormals included) inside OUTER's; mpfr:BITS as OUTER has fp64's range or wider.
void ResolveMixed(ResolvedTrial& t, const std::string& acc, std::size_t gt) {
  const std::string& op = t.spec.op;
  if (op != "sum" && op != "kahan" && op != "lse" && op != "welford")
    throw SpecError("acc '" + acc + "' (two-level accumulation) applies to ops sum kahan lse "
                    "welford, not '" + op + "'");
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
  const Format& fi = t.inner.format;
  const Format& fo = t.compute.format;
  const bool outer_mpfr = t.compute.kind == ComputeKind::kMpfr;
  const int p_out = outer_mpfr ? static_cast<int>(t.compute.mpfr_bits) : fo.precision;
  const bool fits = fi.precision <= p_out &&
                    (outer_mpfr ? (fi.emax <= fo.emax && fi.emin - fi.precision >= fo.emin - 53)
                                : (fi.emax <= fo.emax && fi.emin >= fo.emin &&
                                   fi.emin - fi.precision >= fo.emin - fo.precision));
  if (!fits)
    throw SpecError("acc '" + acc + "': inner " + in_text + " is wider than outer " + out_text +
                    " (every inner value must be an outer value: precision and exponent range)");
}

}  // namespace

ResolvedTrial ResolveTrial(const TrialSpec& spec) {
  ResolvedTrial t;
  t.spec = spec;
  const auto& ops = RunnerOps();
  if (std::find(ops.begin(), ops.end(), spec.op) == ops.end()) {
    t.user = registry::Find(spec.op);
    if (!t.user) {
      std::string list;
      for (const auto& o : ops) list += (list.empty() ? "" : " ") + o;
      throw SpecError("unknown op '" + spec.op + "'; ops: " + list + registry::NamesSuffix());
    }
  }
  try {
    t.storage = ParseFormat(spec.dtype);
  } catch (const std::exception& e) {
    throw SpecError(e.what());
  }
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
  if (spec.exp != "libm" && spec.exp != "portable" && spec.exp != "fast")
    throw SpecError("exp policy '" + spec.exp + "' is not one of libm portable fast");
  if (t.user && spec.exp != "libm")
    throw SpecError("exp " + spec.exp + " applies to the built-in ops only; user carrier '" +
                    spec.op + "' uses its scalar's own functions");
  auto native = [](const ComputeSpec& c) {
    return c.kind == ComputeKind::kFloat || c.kind == ComputeKind::kDouble;
  };
  if (spec.exp == "portable" && (!native(t.compute) || (t.mixed && !native(t.inner))))
    throw SpecError("exp portable needs compute type fp32 or fp64 (native compute)");
  if (spec.backend != "replay" && spec.backend != "simd" && spec.backend != "omp" &&
      spec.backend != "cuda")
    throw SpecError("backend '" + spec.backend + "' is not one of replay simd omp cuda");
  if (t.mixed && spec.backend != "replay")
    throw SpecError("acc '" + acc + "' (two-level) runs on backend replay only, not " +
                    spec.backend);
  // An empty schedule on a kernel backend is that backend's native one (backends.hpp): the
  // kernel picks it and RunTrial reports it as schedule_used.
  if (spec.schedule.empty() && spec.backend == "replay")
    throw SpecError("backend replay needs a schedule (seq, pairwise, blocked:T, ...)");
  try {
    if (!spec.schedule.empty()) t.schedule = ParseSchedule(spec.schedule);
  } catch (const ScheduleError& e) {
    throw SpecError(e.what());
  }
  if (spec.op == "attention") {
    const auto& dims = AttentionHeadDims();
    if (std::find(dims.begin(), dims.end(), spec.head_dim) == dims.end()) {
      std::string list;
      for (auto d : dims) list += (list.empty() ? "" : " ") + std::to_string(d);
      throw SpecError("attention head_dim " + std::to_string(spec.head_dim) +
                      " is not built; head_dim: " + list);
    }
    if (t.compute.kind == ComputeKind::kMpfr || t.mixed)
      throw SpecError("attention computes in one format, fp32, fp64 or an emulated one (acc "
                      "bf16, fp16, ...), not '" + t.compute.text + "'");
    if (t.compute.kind == ComputeKind::kEmulated && spec.backend != "replay")
      throw SpecError("attention in emulated " + t.compute.text + " runs on backend replay only, "
                      "not " + spec.backend);
  }
  return t;
}

std::string ReferenceKey(const ResolvedTrial& t) {
  const std::string& op = t.spec.op;
  if (op == "sum" || op == "kahan") return "sum";
  if (IsVariance(op)) return "welford";
  if (op == "attention") return "attention:" + std::to_string(t.spec.head_dim);
  return op;
}

TrialInput MakeInput(const ResolvedTrial& t, const inputs::GeneratorSpec& gen, std::uint64_t n,
                     std::uint64_t seed) {
  TrialInput in;
  const std::string& op = t.spec.op;
  in.n = n;
  if (op == "attention") {
    // q and k (n x head_dim each) from the generator, v normal: a = q, k, v concatenated.
    const std::uint64_t nd = n * t.spec.head_dim;
    in.a = inputs::Generate(gen, nd, seed, RoundStorage, &t.storage);
    const auto k = inputs::Generate(gen, nd, seed + 1, RoundStorage, &t.storage);
    const auto v = inputs::Generate(inputs::ParseGenerator("normal"), nd, seed + 2, RoundStorage,
                                    &t.storage);
    in.a.insert(in.a.end(), k.begin(), k.end());
    in.a.insert(in.a.end(), v.begin(), v.end());
  } else {
    in.a = inputs::Generate(gen, n, seed, RoundStorage, &t.storage);
    if (TwoColumns(op)) in.b = inputs::Generate(gen, n, seed + 1, RoundStorage, &t.storage);
  }
  in.text = gen.Text() + " seed " + std::to_string(seed);
  return in;
}

TrialInput MakeInputFromValues(const ResolvedTrial& t, std::vector<double> a,
                               std::vector<double> b, std::string text) {
  TrialInput in;
  in.a = std::move(a);
  in.b = std::move(b);
  in.n = in.a.size();
  for (auto& v : in.a) v = RoundStorage(v, &t.storage);
  for (auto& v : in.b) v = RoundStorage(v, &t.storage);
  in.text = std::move(text);
  return in;
}

SharedReference ComputeReference(const ResolvedTrial& t, const TrialInput& in) {
  SharedReference out;
  const auto t0 = Clock::now();
  const std::string& op = t.spec.op;
  if (t.user) {
    const registry::CarrierReference ur = t.user->reference(in.a);
    auto& ref = out.ref;
    ref.op = op;
    ref.count = in.a.size();
    ref.as_double = ur.as_double;
    ref.as_long_double = ur.as_long_double;
    ref.cert.certified = ur.certified;
    ref.cert.precision_bits = ur.precision_bits;
    ref.cert.note = ur.certified ? "the carrier itself in MPFR at p and 2p bits, agreeing to "
                                   "2^-100 relative per component (the mpfr tier's assumption)"
                                 : ur.note;
    out.tier = "mpfr-carrier";
  } else {
    if (TwoColumns(op)) {
      std::vector<ValuePair<double>> pairs;
      pairs.reserve(in.a.size());
      for (std::size_t i = 0; i < in.a.size(); ++i) pairs.push_back({in.a[i], in.b[i]});
      out.ref = op == "dot" ? reference::ReferenceDot(pairs) : reference::ReferenceAffine(pairs);
    } else if (op == "attention") {
      out.ref = AttentionReference(in, t.spec.head_dim, out);
    } else {
      out.ref = reference::ReferenceFor(IsVariance(op) ? "welford" : op, in.a);
    }
    out.tier = std::string(reference::TierName(out.ref.cert.tier));
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

TrialOutcome RunTrial(const ResolvedTrial& t, const TrialInput& in, const SharedReference& shared) {
  const std::string& op = t.spec.op;
  const reference::Reference& ref = shared.ref;
  TrialOutcome o;
  o.n = in.n;
  if (o.n == 0) throw SpecError("empty input");
  Computed got;
  MergeTree tree;
  const auto t1 = Clock::now();
  if (t.spec.backend == "replay") {
    tree = BuildTree(t.schedule, o.n);
    if (tree.permutes && (op == "argmax" || op == "affine" || (t.user && !t.user->commutative)))
      throw SpecError("schedule '" + tree.schedule + "' reorders inputs, but " + op +
                      "'s combine is not commutative");
    auto replay = [&](registry::ScalarKind k, auto&& builtin) {
      if (t.user)
        got.components = t.user->replay(k, tree, in.a);
      else
        got = builtin();
    };
    const std::string& exp = t.spec.exp;
    const std::uint64_t hd = t.spec.head_dim;
    if (t.mixed) got = ComputeMixedAny(t, tree, in);
    else switch (t.compute.kind) {
      case ComputeKind::kFloat:
        replay(registry::ScalarKind::kFloat,
               [&] { return ComputeWithExp<float>(exp, op, tree, in, hd); });
        break;
      case ComputeKind::kDouble:
        replay(registry::ScalarKind::kDouble,
               [&] { return ComputeWithExp<double>(exp, op, tree, in, hd); });
        break;
      case ComputeKind::kEmulated: {
        EmulationScope scope(t.compute.format, t.rounding, t.spec.sr_seed);
        replay(registry::ScalarKind::kEmulated, [&] {
          return ComputeWithExp<Emulated<DynamicFormatTag, kDynamicRounding>>(exp, op, tree, in, hd);
        });
        break;
      }
      case ComputeKind::kMpfr: {
        MpfrPrecisionScope scope(t.compute.mpfr_bits);
        replay(registry::ScalarKind::kMpfr,
               [&] { return ComputeWithExp<Mpfr>(exp, op, tree, in, hd); });
        break;
      }
    }
    o.seconds = std::chrono::duration<double>(Clock::now() - t1).count();
  } else {
    if (t.user) throw backends::Unavailable("backend " + t.spec.backend + " runs the built-in ops only");
    if (op == "var-twopass" || op == "var-textbook" || op == "affine")
      throw backends::Unavailable("backend " + t.spec.backend + " has no op " + op);
    backends::Request req;
    req.op = op;
    req.storage = t.storage.name;
    req.acc = t.compute.text;
    req.exp = t.spec.exp;
    req.schedule = t.spec.schedule;
    req.a = in.a;
    req.b = in.b;
    req.head_dim = t.spec.head_dim;
    backends::Result r = t.spec.backend == "simd" ? backends::RunSimd(req)
                         : t.spec.backend == "omp" ? backends::RunOmp(req)
                                                   : backends::RunCuda(req);
    got.components = std::move(r.components);
    got.index = r.index;
    o.seconds = r.seconds;
    try {
      tree = BuildTree(r.schedule, o.n);
    } catch (const ScheduleError& e) {
      throw SpecError("backend " + t.spec.backend + " reported schedule '" + r.schedule +
                      "', which does not build: " + e.what());
    }
  }
  o.schedule_used = tree.schedule;
  o.components = got.components;
  o.index = got.index;

  const TreeStats stats = ComputeStats(tree);
  o.tree_max_depth = stats.max_leaf_depth;
  o.tree_mean_depth = stats.mean_leaf_depth;
  o.main = IsVariance(op) ? 1 : op == "affine" ? 1 : 0;
  auto unit_roundoff = [&](const ComputeSpec& c) {
    return c.kind == ComputeKind::kMpfr ? std::ldexp(1.0, -static_cast<int>(c.mpfr_bits))
                                        : UnitRoundoff(c.format, t.rounding);
  };
  o.u = unit_roundoff(t.mixed ? t.inner : t.compute);
  o.vector_out = op == "softmax" || op == "attention";
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
  } else {
    if (got.components.size() <= o.main || ref.as_long_double.size() <= o.main)
      throw SpecError("result or reference lacks component " + std::to_string(o.main));
    const ScalarError se = MeasureScalar(got.components[o.main], ref.as_long_double[o.main],
                                         t.compute.format);
    o.result = got.components[o.main];
    o.reference = ref.as_double[o.main];
    o.abs_error = se.abs;
    o.rel_error = se.rel;
    o.ulp_error = se.ulps;
    o.reference_zero = se.reference_zero;
    o.special_mismatch = se.special_mismatch;
  }

  // Condition numbers (FORMAT.md).
  if (op == "sum" || op == "kahan" || op == "dot") {
    const long double exact = ref.as_long_double[0];
    o.cond = exact == 0 ? INFINITY : static_cast<double>(SumAbsTerms(op, in) / std::fabs(exact));
  } else if (IsVariance(op)) {
    // kappa = sqrt(sum x^2 / (n var)) (Chan, Golub & LeVeque 1983), from the stored values.
    long double sq = 0;
    for (double v : in.a) sq += static_cast<long double>(v) * v;
    const long double nvar = ref.as_long_double[1] * static_cast<long double>(o.n);
    o.cond = nvar == 0 ? INFINITY : static_cast<double>(std::sqrt(sq / nvar));
  }

  // attention: FlashRow's first-order FA2 bound per component (flash_row.hpp),
  //   |o^_j - o_j| <= u |o_j| + sum_i w_i (|v_ij| + |o_j|) (D (2u + u_e) + u + u (M - s_i)),
  // plus the scores' rounding: each is a d-term dot product and one scaling in the compute
  // type, |s^_i - s_i| <= (gamma_{d+1} + u) Q (Q = max_i sum_c |q_c k_ic| / sqrt(d)), which
  // moves o_j by at most 2 max_i |s^_i - s_i| sum_i w_i (|v_ij| + |o_j|) to first order.
  // Reported normwise, like abs_error: bound = max_j bound_j / max_j |o_j| (a componentwise
  // relative bound says little here: outputs near zero come from cancelling terms), and
  // error_to_bound = abs_error (= ||o^ - o||_inf / ||o||_inf) / bound.
  if (op == "attention" && shared.attention_a.size() == ref.as_long_double.size()) {
    const double ue = ExpError(t.compute, t.spec.exp, o.u);
    const double dd = static_cast<double>(t.spec.head_dim);
    const double gamma = (dd + 1) * o.u / (1 - (dd + 1) * o.u);
    const double depth = static_cast<double>(stats.max_leaf_depth);
    double worst = 0, norm = 0;
    for (std::size_t idx = 0; idx < ref.as_long_double.size(); ++idx) {
      const double oj = std::fabs(static_cast<double>(ref.as_long_double[idx]));
      const double score_err = 2 * (gamma + o.u) * shared.attention_q[idx / t.spec.head_dim];
      const double bj = o.u * oj + shared.attention_a[idx] * (depth * (2 * o.u + ue) + o.u + score_err) +
                        o.u * shared.attention_b[idx];
      worst = std::max(worst, bj);
      norm = std::max(norm, oj);
    }
    o.has_bound = true;
    o.bound = norm > 0 ? worst / norm : INFINITY;
    o.bound_relative = true;
    o.bound_rigorous = false;
    o.bound_formula = "max_j [u|o_j| + A_j (D (2u + u_e) + u + 2 (gamma_{d+1} + u) Q) + u B_j] / "
                      "max_j |o_j| (normwise)";
    o.bound_vacuous = !std::isfinite(o.bound) || !std::isfinite(o.abs_error);
    o.error_to_bound = o.bound_vacuous ? NAN : o.bound > 0 ? o.abs_error / o.bound
                                                           : (o.abs_error == 0 ? 0.0 : INFINITY);
  }

  // The a-priori bound (none for user carriers and the two variance formulas).
  if (!t.user && op != "var-twopass" && op != "var-textbook" && op != "attention") {
    BoundContext ctx{stats.max_leaf_depth, stats.combines, o.u, ExpError(t.compute, t.spec.exp, o.u),
                     ExpError(t.compute, t.spec.exp, o.u), t.compute.format.MinSubnormal()};
    if (t.mixed) {
      // Every rounding of a two-level run is within u_inner (OUTER is not narrower) and the
      // level change is exact, so the op's one-precision bound at u = u_inner holds (kahan,
      // lse, welford; sum gets the sharper FABsum form below).
      ctx.u_exp = ctx.u_log = std::max(ExpError(t.inner, t.spec.exp, o.u),
                                       ExpError(t.compute, t.spec.exp, unit_roundoff(t.compute)));
      ctx.eta = std::max(t.inner.format.MinSubnormal(), t.compute.format.MinSubnormal());
    }
    std::vector<ValuePair<double>> pairs;
    if (TwoColumns(op))
      for (std::size_t i = 0; i < in.a.size(); ++i) pairs.push_back({in.a[i], in.b[i]});
    const long double exact_main = o.vector_out ? 0 : ref.as_long_double[o.main];
    const long double exact_mean = op == "welford" ? ref.as_long_double[0] : 0;
    const OpBound ob = BoundForOp(op, ctx, in.a, pairs, exact_main, exact_mean);
    o.has_bound = true;
    o.bound = ob.bound.value;
    o.bound_relative = ob.relative;
    o.bound_rigorous = ob.bound.rigorous;
    o.bound_formula = ob.bound.formula;
    o.bound_vacuous = std::isinf(ob.bound.value);
    const double err = o.vector_out ? o.componentwise : ob.relative ? o.rel_error : o.abs_error;
    // gamma_D is infinite once D u >= 1: the bound then says nothing, and no ratio is given.
    if (t.mixed) o.bound_formula += " with u = u_inner (two-level; every rounding within u_inner)";
    if (t.mixed && op == "sum") {
      // FABsum's bound (Blanchard, Higham & Mary 2020, first order): an input in a chain of L
      // values passes at most L - 1 rounded INNER additions, the exact conversion, and the
      // rounded OUTER combines above its chain, so |s^ - s| <= max_k ((L_k - 1) u_in +
      // D_out,k u_out) sum|x| + O(u^2). For blocked:b that is (b - 1) u_in + (n/b - 1) u_out
      // (seq outer) or (b - 1) u_in + ceil(log2(n/b)) u_out (pairwise outer).
      std::uint64_t d_in = 0, d_out = 0;
      const double coeff = MixedDepthCoefficient(tree, o.u, unit_roundoff(t.compute), &d_in, &d_out);
      o.bound = coeff * static_cast<double>(SumAbsTerms(op, in));
      o.bound_relative = false;
      o.bound_rigorous = false;
      o.bound_formula = "((L-1) u_in + D_out u_out) sum|x|, max over chains (FABsum, first order; "
                        "blocked:b: L = b, D_out = n/b - 1 seq or ceil(log2(n/b)) pairwise); "
                        "here L-1 = " + std::to_string(d_in) + ", D_out = " + std::to_string(d_out);
      o.bound_vacuous = coeff >= 1 || !std::isfinite(o.bound);
    }
    o.error_to_bound = o.bound_vacuous ? NAN
                       : o.bound > 0 ? err / o.bound
                                     : (err == 0 ? 0.0 : INFINITY);
  }
  return o;
}

void ReleaseThreadCaches() { MpfrReleaseThreadCaches(); }

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR
