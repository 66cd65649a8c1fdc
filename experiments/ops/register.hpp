// experiments/ops/register.hpp: the makers that turn a carrier template into an op-table
// Entry (registry.hpp), used alike by the built-ins (experiments/ops/*.cpp) and by user
// carriers (experiments/user_carriers/*.cpp). Include it from the one .cpp that registers an
// op; it pulls in the laws and derive machinery, so it is not for headers.
//
//   CARRIER_REGISTER("range", Range, "running (min, max); result max - min");
//   CARRIER_REGISTER_DERIVABLE("range", Range, RangeDerivation, "...");
//   CARRIER_REGISTER_OP(SumOp())  a built-in: an Entry built with CarrierOp<F>() and completed
//
// A family F names the carrier for a compute scalar T and an exp policy E:
// Plain<CT>::C<T, E> = CT<T> (the exp policy plays no part) and WithExp<CE>::C<T, E> =
// CE<T, E>. CarrierOp<F>() fills the replay for every compute type (float, double, the
// emulated formats, Mpfr; exp portable only on float and double), the two-level replay
// (MixedOf<F>), the laws hook and the declared properties; the caller adds the reference,
// the bound and the backends.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "core/carrier.hpp"
#include "core/carriers/pairs.hpp"
#include "core/exp_policy.hpp"
#include "core/replay.hpp"
#include "core/replay_oracle.hpp"
#include "precision/math_policy.hpp"
#include "precision/stored_column.hpp"
#include "registry/registry.hpp"
#include "verbs/derive_run.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include "precision/emulated.hpp"
#include "precision/emulated_oracle.hpp"
#include "precision/float128.hpp"
#include "precision/mpfr_scalar.hpp"
#include "precision/reference/fast_sum.hpp"
#include "precision/reference/reference.hpp"
#include "precision/scalars.hpp"
#include "run/mixed.hpp"
#include "run/trial.hpp"
#include "verbs/laws_run.hpp"
#endif

namespace carrier::registry {

template <template <class> class CT>
struct Plain {
  template <class T, class E>
  using C = CT<T>;
  template <class T>
  using L = CT<T>;  // the carrier `carrier laws` checks
  static constexpr bool kUsesExp = false;
};
template <template <class, class> class CE>
struct WithExp {
  template <class T, class E>
  using C = CE<T, E>;
  template <class T>
  using L = CE<T, LibmExp>;
  static constexpr bool kUsesExp = true;
};

// carrier derive needs no MPFR (it runs in fp64). README command (a)'s build
// (CARRIER_MAIN_JOB_ONLY_BUILD) has neither the laws nor the derive verb, so it instantiates
// neither hook: that halves the compile time of an op's source.
template <class D>
int DeriveOf(std::uint64_t trials, std::uint64_t seed) {
#if defined(CARRIER_MAIN_JOB_ONLY_BUILD)
  (void)trials;
  (void)seed;
  return 2;  // unreachable: verbs/not_in_main_job.cpp refuses `derive` first
#else
  return cli::derive::RunOne<D>(trials, seed);
#endif
}

// The result's components as long double; argmax's index apart (IndexedValue results).
// One component into out.components; a Float128 value also leaves the remainder of its long
// double rounding in out.residual (Replayed's contract).
template <class T>
void AppendValue(const T& v, Replayed& out) {
#if defined(CARRIER_HAVE_FLOAT128) && CARRIER_HAVE_FLOAT128
  if constexpr (std::is_same_v<T, Float128>) {
    long double hi = 0, lo = 0;
    SplitToLongDouble(v, hi, lo);
    out.components.push_back(hi);
    out.residual.push_back(lo);
    return;
  }
#endif
  out.components.push_back(static_cast<long double>(v));
}

// The result's components as long double; argmax's index apart (IndexedValue results).
template <class C>
void AppendComponents(const typename C::Result& r, Replayed& out) {
  if constexpr (requires { r.index; }) {
    AppendValue(r.value, out);
    out.index = r.index;
  } else {
    for (const auto& v : C::Components(r)) AppendValue(v, out);
  }
}

// The stored input as C's Input: one column, (a_i, b_i) pairs, or (x_i, i) for argmax.
template <class C>
std::vector<typename C::Input> ToInputs(const ReplayInput& in) {
  using T = typename C::Scalar;
  using I = typename C::Input;
  std::vector<I> x;
  x.reserve(in.a.size());
  for (std::size_t i = 0; i < in.a.size(); ++i) {
    if constexpr (std::is_same_v<I, T>) {
      x.push_back(static_cast<T>(in.a[i]));
    } else if constexpr (std::is_same_v<I, ValuePair<T>>) {
      x.push_back({static_cast<T>(in.a[i]), static_cast<T>(in.b[i])});
    } else {
      static_assert(std::is_same_v<I, IndexedValue<T>>,
                    "an input kind the table has no reader for");
      x.push_back({static_cast<T>(in.a[i]), static_cast<std::int64_t>(i)});
    }
  }
  return x;
}

// Whether converting stored doubles to scalar T is a pure function of T and the thread's
// emulation context (format and rounding; `context` names them): float, double and the
// emulated types under a deterministic rounding. Not under stochastic rounding, whose every
// conversion draws from the thread's stream (a kept copy would leave the stream where another
// trial's draws put it), nor Mpfr (its precision is the thread's) and Float128.
template <class T>
bool PureConversion(std::string& context) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return true;
  } else if constexpr (requires {
                         typename T::FormatTag;
                         T::GetFormat();
                         T::GetRounding();
                       }) {
    const auto r = T::GetRounding();
    if (r == decltype(r)::kStochastic) return false;
    context = T::GetFormat().name + "|" + std::to_string(static_cast<int>(r));
    return true;
  } else {
    return false;
  }
}

// Whether C's Input is its compute scalar and that scalar is one double: double itself, or an
// emulated value type (EmulatedOracle, Emulated) whose only member is a double holding a value of
// its format. Then the replay can read the stored doubles in place (InPlaceInputs).
template <class C>
inline constexpr bool kInputIsOneDouble = [] {
  using I = typename C::Input;
  if constexpr (!std::is_same_v<I, typename C::Scalar>) {
    return false;
  } else if constexpr (std::is_same_v<I, double>) {
    return true;
  } else if constexpr (requires(const I& v) {
                         { v.Value() } -> std::same_as<double>;
                         I::FromFormatValue(0.0);
                       }) {
    return sizeof(I) == sizeof(double) && alignof(I) == alignof(double) &&
           std::is_standard_layout_v<I> && std::is_trivially_copyable_v<I>;
  } else {
    return false;
  }
}();

// Whether converting each stored value to I (in the thread's emulation context) gives the same
// double bit for bit: then the converted copy would equal the stored doubles, and the replay
// reads those instead (a bf16 input stored as bf16 values, fp64 compute). One pass, no copy;
// false at the first value that would change (rounded, a NaN payload canonicalised).
template <class I>
bool ConvertsToItself(std::span<const double> a) {
  if constexpr (std::is_same_v<I, double>) {
    return true;
  } else {
    for (const double v : a)
      if (std::bit_cast<std::uint64_t>(static_cast<I>(v).Value()) !=
          std::bit_cast<std::uint64_t>(v))
        return false;
    return true;
  }
}

// The stored doubles as C's Input, read in place (kInputIsOneDouble<C>, ConvertsToItself): the
// values are the ones ToInputs would copy, bit for bit. The replay only reads them.
template <class C>
std::span<const typename C::Input> InPlaceInputs(const ReplayInput& in) {
  using I = typename C::Input;
  if constexpr (std::is_same_v<I, double>) {
    return in.a;
  } else {
    // An array of one-double standard-layout objects and an array of doubles share their
    // layout; nothing writes through either while the replay reads.
    return {reinterpret_cast<const I*>(in.a.data()), in.a.size()};  // NOLINT
  }
}

// Whether the thread's kept conversion is of input `id` to I in `context`; Keep records one
// (a copy in `data`, or in_place: the check's outcome that the input converts to itself).
template <class I>
bool KeptFor(const ConvertedInput& c, std::uint64_t id, const std::string& context) {
  return c.id == id && c.type == &typeid(I) && c.context == context;
}
template <class I>
void Keep(ConvertedInput& c, std::uint64_t id, std::string context, bool in_place,
          std::shared_ptr<const void> data) {
  c.data = std::move(data);
  c.in_place = in_place;
  c.id = id;
  c.type = &typeid(I);
  c.context = std::move(context);
}

// ToInputs(in), or the stored doubles read in place when the conversion would not change them
// (the compute copy then costs no memory at all: eval and sweep hold the stored input alone),
// or the thread's kept copy (registry.hpp ConvertedInput); `own` holds the conversion when
// none is kept.
template <class C>
std::span<const typename C::Input> CachedInputs(const ReplayInput& in,
                                                std::vector<typename C::Input>& own) {
  using I = typename C::Input;
  ConvertedInput& c = ThreadConvertedInput();
  std::string context;
  const bool pure = PureConversion<typename C::Scalar>(context);
  const bool keep = c.enabled && in.id != 0 && pure;
  const bool kept = keep && KeptFor<I>(c, in.id, context);
  if constexpr (kInputIsOneDouble<C>) {
    if (kept && c.in_place) return InPlaceInputs<C>(in);
    if (pure && !kept && ConvertsToItself<I>(in.a)) {
      // remember the outcome of the check, not a copy
      if (keep) Keep<I>(c, in.id, std::move(context), true, nullptr);
      return InPlaceInputs<C>(in);
    }
  }
  if (!keep) {
    own = ToInputs<C>(in);
    return own;
  }
  if (!kept || c.data == nullptr) {
    c.data.reset();  // the previous copy goes before the next is made (peak memory)
    Keep<I>(c, in.id, std::move(context), false,
            std::make_shared<const std::vector<I>>(ToInputs<C>(in)));
  }
  return *static_cast<const std::vector<I>*>(c.data.get());
}

template <class C>
Replayed ReplayOracleCarrier(const MergeTree& tree, const ReplayInput& in) {
  std::vector<typename C::Input> own;
  const std::span<const typename C::Input> x = CachedInputs<C>(in, own);
  Replayed out;
  AppendComponents<C>(C::Finalize(ReplayOracle<C>(tree, x)), out);
  return out;
}

// Whether C reads one column: Input is its scalar, or (argmax) the scalar with its index.
template <class C>
inline constexpr bool kColumnInput =
    std::is_same_v<typename C::Input, typename C::Scalar> ||
    std::is_same_v<typename C::Input, IndexedValue<typename C::Scalar>>;

// C's Input for stored value v at index i: the conversion ToInputs makes (one column).
template <class C>
typename C::Input ColumnInput(double v, std::uint64_t i) {
  using T = typename C::Scalar;
  using I = typename C::Input;
  if constexpr (std::is_same_v<I, T>) {
    (void)i;
    return static_cast<T>(v);
  } else {
    return {static_cast<T>(v), static_cast<std::int64_t>(i)};
  }
}

// Whether every value of the packed column converts to C's Input as itself (CachedInputs's
// in-place test), remembered in the thread's ConvertedInput like that test's outcome (a sweep
// asks once per input, compute type and rounding). A coded column's values all come from its
// code table, so where every table entry converts to itself (a bf16 column into bf16 compute:
// 2^16 entries) so does the column, without decoding it; otherwise one decoding pass decides.
template <class C>
bool ColumnConvertsToItself(const ReplayInput& in) {
  using I = typename C::Input;
  ConvertedInput& c = ThreadConvertedInput();
  std::string context;
  if (!PureConversion<typename C::Scalar>(context)) return false;
  const bool keep = c.enabled && in.id != 0;
  if (keep && KeptFor<I>(c, in.id, context) && c.data == nullptr) return c.in_place;
  const std::span<const double> table = in.column->CodeValues();
  bool same = !table.empty() && ConvertsToItself<I>(table);
  if (!same) {
    same = true;
    in.column->ForEachChunk(
        [&](std::uint64_t, std::span<const double> v) { same = same && ConvertsToItself<I>(v); });
  }
  if (keep) Keep<I>(c, in.id, std::move(context), same, nullptr);
  return same;
}

// Whether C reads pairs (a_i, b_i) of its scalar (dot, affine).
template <class C>
inline constexpr bool kPairInput = std::is_same_v<typename C::Input, ValuePair<typename C::Scalar>>;

// The fast engine over packed columns (ReplayInput::column, and column_b for pairs) without a
// tree: ReplayWindowed (core/replay.hpp) decodes a window of values at a time into C's
// Input, converted as ToInputs converts them (read as they are where that changes no value), so
// the state is ReplayCarrier's on the decoded doubles, bit for bit.
template <class C>
requires kPairInput<C>
typename C::State ReplayColumn(const Schedule& s, const ReplayInput& in) {
  using T = typename C::Scalar;
  const StoredColumn& a = *in.column;
  const StoredColumn& b = *in.column_b;
  auto fill = [&](std::uint64_t lo, std::size_t count, typename C::Input* out) {
    ForEachChunkOfPairs(
        a, b, lo, lo + count,
        [&](std::uint64_t at, std::span<const double> va, std::span<const double> vb) {
          typename C::Input* o = out + (at - lo);
          for (std::size_t i = 0; i < va.size(); ++i)
            o[i] = {static_cast<T>(va[i]), static_cast<T>(vb[i])};
        });
  };
  return ReplayWindowed<C>(s, a.size(), fill);
}

template <class C>
requires kColumnInput<C>
typename C::State ReplayColumn(const Schedule& s, const ReplayInput& in) {
  using I = typename C::Input;
  const StoredColumn& column = *in.column;
  bool same = false;
  if constexpr (kInputIsOneDouble<C>) same = ColumnConvertsToItself<C>(in);
  auto fill = [&](std::uint64_t lo, std::size_t count, I* out) {
    if constexpr (kInputIsOneDouble<C>) {
      if (same) {  // one-double inputs share the layout of doubles (InPlaceInputs)
        column.Read(lo, count, reinterpret_cast<double*>(out));  // NOLINT
        return;
      }
    }
    double buf[StoredColumn::kChunk];
    for (std::size_t done = 0; done < count;) {
      const std::size_t k = std::min(count - done, StoredColumn::kChunk);
      column.Read(lo + done, k, buf);
      for (std::size_t i = 0; i < k; ++i) out[done + i] = ColumnInput<C>(buf[i], lo + done + i);
      done += k;
    }
  };
  return ReplayWindowed<C>(s, column.size(), fill);
}

// The fast engine (core/replay.hpp): the same state as ReplayOracleCarrier bit for bit, by the
// tree when one is given, else by the schedule without building the tree (a packed column:
// ReplayColumn, never given a tree: run/trial.cpp decodes it for those).
template <class C>
Replayed ReplayCarrier(const Schedule& s, const MergeTree* tree, const ReplayInput& in) {
  if (in.column != nullptr) {
    if constexpr (kColumnInput<C> || kPairInput<C>) {
      const bool columns_match =
          kColumnInput<C> ? in.column_b == nullptr
                          : in.column_b != nullptr && in.column_b->size() == in.column->size();
      if (tree == nullptr && columns_match) {
        Replayed out;
        AppendComponents<C>(C::Finalize(ReplayColumn<C>(s, in)), out);
        return out;
      }
    }
    throw std::logic_error(
        "ReplayCarrier: packed columns need a carrier of that many columns, no tree");
  }
  std::vector<typename C::Input> own;
  const std::span<const typename C::Input> xs = CachedInputs<C>(in, own);
  Replayed out;
  AppendComponents<C>(C::Finalize(tree ? Replay<C>(*tree, xs) : Replay<C>(s, xs)), out);
  return out;
}

// Float128 (precision/float128.hpp) where the build has it; false otherwise.
template <class T>
inline constexpr bool kIsFloat128 =
#if defined(CARRIER_HAVE_FLOAT128) && CARRIER_HAVE_FLOAT128
    std::is_same_v<T, Float128>;
#else
    false;
#endif

template <class T>
inline constexpr bool kNativeScalar = std::is_same_v<T, float> || std::is_same_v<T, double>;

// Calls body.template operator()<E>() with the exp policy of kind e (portable: float and
// double only).
template <class T, class Body>
decltype(auto) WithExpKind(ExpKind e, Body&& body) {
  if (e == ExpKind::kPortable) {
    if constexpr (kNativeScalar<T>) {
      return body.template operator()<PortableExp>();
    } else {
      throw std::invalid_argument("exp portable needs compute type fp32 or fp64 (native compute)");
    }
  }
  if (e == ExpKind::kFast) return body.template operator()<FastExp>();
  return body.template operator()<LibmExp>();
}

// F's carrier in T under the exp policy e (families without exp: LibmExp, never used).
template <class F, class T, class Body>
decltype(auto) WithExpPolicy(ExpKind e, Body&& body) {
  if constexpr (!F::kUsesExp) {
    return body.template operator()<typename F::template C<T, LibmExp>>();
  } else {
    return WithExpKind<T>(
        e, [&]<class E>() { return body.template operator()<typename F::template C<T, E>>(); });
  }
}

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

using EmuOracle = EmulatedOracle<DynamicFormatTag, kDynamicRounding>;

// Calls body.template operator()<T>() with the compute scalar of kind k (kFloat128: Float128
// where the build has it, else std::invalid_argument).
template <class Body>
decltype(auto) WithScalar(ScalarKind k, Body&& body) {
  switch (k) {
    case ScalarKind::kFloat:
      return body.template operator()<float>();
    case ScalarKind::kDouble:
#if defined(CARRIER_MAIN_JOB_ONLY_BUILD)
      throw std::invalid_argument(MainJobComputeNote("fp64"));  // ResolveTrial refuses it first
#else
      return body.template operator()<double>();
#endif
    case ScalarKind::kEmulated:
      return body.template operator()<EmuOracle>();
    case ScalarKind::kFloat128:
#if defined(CARRIER_HAVE_FLOAT128) && CARRIER_HAVE_FLOAT128
      return body.template operator()<Float128>();
#else
      throw std::invalid_argument("compute type fp128 is not built into this binary");
#endif
    case ScalarKind::kMpfr:
      break;
  }
#if defined(CARRIER_MAIN_JOB_ONLY_BUILD)
  throw std::invalid_argument(MainJobComputeNote("mpfr"));
#else
  return body.template operator()<Mpfr>();
#endif
}

template <class F>
Replayed ReplayOracleOf(ScalarKind k, ExpKind e, const MergeTree& tree, const ReplayInput& in) {
  return WithScalar(k, [&]<class T>() {
    return WithExpPolicy<F, T>(e, [&]<class C>() { return ReplayOracleCarrier<C>(tree, in); });
  });
}

// The fast engine's compute scalars: as WithScalar, with Emulated (the same bits as EmuOracle in
// every operation, precision/emulated.hpp) for the emulated kind.
// bf16 and fp16 in rne (the studies' common case) run as the static-tag Emulated, whose
// rounding has the format's masks as constants (inline, no format read per operation): the
// same bits, since a static tag's operations are the dynamic type's with that format and mode
// fixed (engine_equivalence_tests compares both with the oracle). The main-job build, whose
// compile time is budgeted, keeps the dynamic type alone.
template <class Body>
decltype(auto) WithFastScalar(ScalarKind k, Body&& body) {
  if (k == ScalarKind::kEmulated) {
#if !defined(CARRIER_MAIN_JOB_ONLY_BUILD)
    const EmulationContext& ctx = ThreadEmulationContext();
    if (ctx.format != nullptr && ctx.rounding == Rounding::kNearestEven) {
      if (*ctx.format == BF16Tag::Get())
        return body.template operator()<Emulated<BF16Tag, Rounding::kNearestEven>>();
      if (*ctx.format == Fp16Tag::Get())
        return body.template operator()<Emulated<Fp16Tag, Rounding::kNearestEven>>();
    }
#endif
    return body.template operator()<EmulatedDynamic>();
  }
  return WithScalar(k, std::forward<Body>(body));
}

template <class F>
Replayed ReplayOf(ScalarKind k, ExpKind e, const Schedule& s, const MergeTree* tree,
                  const ReplayInput& in) {
  return WithFastScalar(k, [&]<class T>() {
    return WithExpPolicy<F, T>(e, [&]<class C>() { return ReplayCarrier<C>(s, tree, in); });
  });
}

template <class F>
Replayed MixedOf(const run::ResolvedTrial& t, const MergeTree& tree, const ReplayInput& in) {
#if defined(CARRIER_MAIN_JOB_ONLY_BUILD)
  (void)tree;
  (void)in;
  throw run::SpecError(MainJobComputeNote(t.compute.text));  // ResolveTrial refuses it first
#else
  return run::WithMixedPair(t, [&]<class Ti, class To>() {
    if constexpr (F::kUsesExp && !(kNativeScalar<Ti> && kNativeScalar<To>)) {
      if (t.spec.exp == "portable")
        throw run::SpecError(
            "exp portable needs native compute types (fp32 or fp64) on both "
            "levels");
    }
    const ExpKind e = ParseExp(t.spec.exp);
    auto body = [&]<class E>() {
      using Ci = typename F::template C<Ti, E>;
      using Co = typename F::template C<To, E>;
      Replayed out;
      AppendComponents<Co>(run::MixedResult<Ci, Co>(t, tree, in.a), out);
      return out;
    };
    if constexpr (!F::kUsesExp) {
      return body.template operator()<LibmExp>();
    } else {
      if constexpr (kNativeScalar<Ti> && kNativeScalar<To>) {
        if (e == ExpKind::kPortable) return body.template operator()<PortableExp>();
      }
      if (e == ExpKind::kFast) return body.template operator()<FastExp>();
      return body.template operator()<LibmExp>();
    }
  });
#endif
}

template <template <class> class CT, bool kNegInf = false, bool kAffine = false>
int LawsOf(const cli::laws::Options& o) {
  return cli::laws::RunLawsFor<CT>(o, cli::laws::OpTraits{kNegInf, kAffine});
}

// CT<Mpfr>'s sequential fold of the inputs (a span or a StoredColumn) at `bits`, per component
// (values keep `bits`): Fold's pushes from Identity, each input converted as it is pushed.
template <template <class> class CT, class X>
std::vector<Mpfr> MpfrComponents(const X& a, long bits) {
  using C = CT<Mpfr>;
  MpfrPrecisionScope scope(bits);
  typename C::State s = C::Identity();
  ForEachChunkOf(a, [&](std::uint64_t, std::span<const double> chunk) {
    for (double v : chunk) s = PushOne<C>(s, Mpfr(v));
  });
  const auto c = C::Components(C::Finalize(s));
  return std::vector<Mpfr>(c.begin(), c.end());
}

// Agreement of two MPFR values to 2^-100 relative (specials: the same special).
inline bool AgreeTo2m100(const Mpfr& lo, const Mpfr& hi, long bits) {
  using S = ScalarTraits<Mpfr>;
  if (S::IsNaN(lo) || S::IsNaN(hi)) return S::IsNaN(lo) && S::IsNaN(hi);
  if (S::IsInf(lo) || S::IsInf(hi)) return lo == hi;
  MpfrPrecisionScope scope(bits);
  const Mpfr diff = abs(hi - lo);
  const Mpfr tol = abs(hi) * Mpfr(0x1p-100);
  return diff <= tol;  // hi == 0: only an exact zero agrees
}

// The carrier itself in MPFR: p and 2p bits, p = 128 doubling to the cap (a: a span or a
// StoredColumn).
template <template <class> class CT, class X>
CarrierReference ReferenceOf(const X& a) {
  CarrierReference r;
  for (long p = kMpfrStartBits; 2 * p <= kMpfrCapBits; p *= 2) {
    const auto lo = MpfrComponents<CT>(a, p);
    const auto hi = MpfrComponents<CT>(a, 2 * p);
    bool agree = true;
    for (std::size_t i = 0; i < lo.size(); ++i) agree = agree && AgreeTo2m100(lo[i], hi[i], 4 * p);
    r.as_double.clear();
    r.as_long_double.clear();
    for (const auto& v : hi) {
      r.as_double.push_back(static_cast<double>(v));
      r.as_long_double.push_back(static_cast<long double>(v));
    }
    r.precision_bits = p;
    if (agree) {
      r.certified = true;
      return r;
    }
  }
  r.note = "the carrier in MPFR did not settle to 2^-100 relative between " +
           std::to_string(kMpfrCapBits / 2) + " and " + std::to_string(kMpfrCapBits) + " bits";
  return r;
}

// ReferenceOf<CT> as the table's reference hook (tier "mpfr-carrier").
template <template <class> class CT>
void CarrierReferenceHook(const run::TrialInput& in, std::uint64_t, run::SharedReference& out) {
  const bool packed = run::HeldInColumn(in);  // then read a chunk at a time
  const CarrierReference ur =
      packed ? ReferenceOf<CT>(in.column) : ReferenceOf<CT>(std::span<const double>(in.a));
  auto& ref = out.ref;
  ref.count = packed ? in.column.size() : in.a.size();
  ref.as_double = ur.as_double;
  ref.as_long_double = ur.as_long_double;
  ref.cert.certified = ur.certified;
  ref.cert.precision_bits = ur.precision_bits;
  ref.cert.note = ur.certified ? "the carrier itself in MPFR at p and 2p bits, agreeing to "
                                 "2^-100 relative per component (the mpfr tier's assumption)"
                               : ur.note;
  out.tier = "mpfr-carrier";
}

// A precision/reference function of one column as the table's reference hook (a packed input,
// run::TrialInput::column, decoded for it).
template <reference::Reference (*F)(std::span<const double>, const reference::Options&)>
void ColumnReference(const run::TrialInput& in, std::uint64_t, run::SharedReference& out) {
  std::vector<double> scratch;
  out.ref = F(run::ColumnValues(in, scratch), reference::Options{});
  out.tier = std::string(reference::TierName(out.ref.cert.tier));
}
// The same where FC is F over a StoredColumn (the same Reference), read a chunk at a time from
// a packed input.
template <reference::Reference (*F)(std::span<const double>, const reference::Options&),
          reference::Reference (*FC)(const StoredColumn&, const reference::Options&)>
void PackedColumnReference(const run::TrialInput& in, std::uint64_t head_dim,
                           run::SharedReference& out) {
  if (!run::HeldInColumn(in)) return ColumnReference<F>(in, head_dim, out);
  out.ref = FC(in.column, reference::Options{});
  out.tier = std::string(reference::TierName(out.ref.cert.tier));
}
// The same for reference functions without options (precision/reference/fast_sum.hpp's,
// ReferenceMax, ReferenceArgMax), each with its StoredColumn form FC.
template <reference::Reference (*F)(std::span<const double>),
          reference::Reference (*FC)(const StoredColumn&)>
void FastColumnReference(const run::TrialInput& in, std::uint64_t, run::SharedReference& out) {
  if (run::HeldInColumn(in)) {
    out.ref = FC(in.column);
  } else {
    out.ref = F(in.a);
  }
  out.tier = std::string(reference::TierName(out.ref.cert.tier));
}
// The pairs (a_i, b_i) of two columns as F reads them (16 bytes per pair, for as long as F runs).
template <reference::Reference (*F)(std::span<const ValuePair<double>>)>
reference::Reference DecodedPairs(const StoredColumn& a, const StoredColumn& b) {
  return F(ZipPairs(a.ToDoubles(), b.ToDoubles()));
}
// The same for the pair ops: F over the pairs, or FC over the two packed columns
// (run::HeldInColumns; the same Reference: FC reads them a chunk at a time, or is
// DecodedPairs<F>).
template <reference::Reference (*F)(std::span<const ValuePair<double>>),
          reference::Reference (*FC)(const StoredColumn&, const StoredColumn&)>
void PairsReference(const run::TrialInput& in, std::uint64_t, run::SharedReference& out) {
  out.ref = run::HeldInColumns(in) ? FC(in.column, in.column_b) : F(ZipPairs(in.a, in.b));
  out.tier = std::string(reference::TierName(out.ref.cert.tier));
}

#endif  // CARRIER_HAVE_MPFR

// The part of an entry a carrier family determines: properties, components, replays, laws.
template <class F, bool kNegInf = false, bool kAffine = false>
Entry CarrierOp(const char* name, const char* summary) {
  using C = typename F::template C<double, LibmExp>;
  Entry e;
  e.name = name;
  e.summary = summary;
  e.commutative = C::kCommutative;
  if constexpr (requires(typename C::Result r) { r.index; }) {
    e.components = 1;
  } else {
    e.components = kComponentCount<C>;
  }
  e.uses_exp = F::kUsesExp;
  if constexpr (std::is_same_v<typename C::Input, ValuePair<double>>) e.input = InputKind::kPairs;
  e.input_is_scalar = std::is_same_v<typename C::Input, typename C::Scalar>;
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.replay_oracle = &ReplayOracleOf<F>;
  e.replay = &ReplayOf<F>;
#if !defined(CARRIER_MAIN_JOB_ONLY_BUILD)
  e.laws = &LawsOf<F::template L, kNegInf, kAffine>;
#endif
#endif
  return e;
}

// A user carrier (registry.hpp's contract): one column, its own MPFR reference, no bound.
template <template <class> class CT>
Entry MakeEntry(const char* name, const char* summary) {
  static_assert(std::is_same_v<typename CT<double>::Input, double>,
                "a registered carrier takes one column of scalars (Input = T)");
  Entry e = CarrierOp<Plain<CT>>(name, summary);
  e.user = true;
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
  e.reference = &CarrierReferenceHook<CT>;  // reads a packed column by chunks
  e.column_reference = true;
#endif
  return e;
}

template <template <class> class CT, class D>
Entry MakeEntry(const char* name, const char* summary) {
  Entry e = MakeEntry<CT>(name, summary);
  e.derive = &DeriveOf<D>;
  return e;
}

}  // namespace carrier::registry

// Each registration names its flag carrier_registered_<__COUNTER__>: unique within a translation
// unit also when a unity build joins several ops files into one (__LINE__ was not).
#define CARRIER_REGISTRY_CAT2(a, b) a##b
#define CARRIER_REGISTRY_CAT(a, b) CARRIER_REGISTRY_CAT2(a, b)

// Registers the carrier template CT under NAME (a string literal) with a one-line SUMMARY.
#define CARRIER_REGISTER(NAME, CT, SUMMARY)                                             \
  namespace {                                                                           \
  [[maybe_unused]] const bool CARRIER_REGISTRY_CAT(carrier_registered_, __COUNTER__) =  \
      ::carrier::registry::Register(::carrier::registry::MakeEntry<CT>(NAME, SUMMARY)); \
  }

// The same, with a Third Homomorphism Theorem derivation D for `carrier derive NAME`.
#define CARRIER_REGISTER_DERIVABLE(NAME, CT, D, SUMMARY)                                   \
  namespace {                                                                              \
  [[maybe_unused]] const bool CARRIER_REGISTRY_CAT(carrier_registered_, __COUNTER__) =     \
      ::carrier::registry::Register(::carrier::registry::MakeEntry<CT, D>(NAME, SUMMARY)); \
  }

// A built-in: the argument is an expression of type Entry (experiments/ops/ call a function
// that builds it, so no preprocessor directive sits inside the macro's arguments).
#define CARRIER_REGISTER_OP(...)                                                       \
  namespace {                                                                          \
  [[maybe_unused]] const bool CARRIER_REGISTRY_CAT(carrier_registered_, __COUNTER__) = \
      ::carrier::registry::Register(__VA_ARGS__);                                      \
  }
