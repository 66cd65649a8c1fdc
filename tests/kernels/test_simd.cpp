// tests/kernels/test_simd.cpp: the SIMD kernels equal ReplayOracle of their declared schedule bit
// for bit, on every Highway target compiled into this binary and supported by the CPU.
//
// Each case: a storage type, a carrier, a schedule, a size n (around K, K*T, powers of two,
// random), an input kind (special values included), a misaligned start, and NaN in the memory
// after the input (a read past the end shows up as NaN). The expected state is
// ReplayOracle<C>(BuildTree(schedule, n), inputs promoted to the compute type); the comparison is
// StatesBitEqual. Failures print target, storage, carrier, schedule, n, kind, seed and both
// states.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "core/merge_tree.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"
#include "hwy/targets.h"
#include "kernel_test_util.hpp"
#include "kernels/simd/simd.hpp"

namespace carrier::test {
namespace {

// Sizes up to 2^9 (+1); unoptimised (sanitizer) builds stop at 2^7 to stay within seconds.
#ifdef NDEBUG
constexpr int kMaxPow = 9;
#else
constexpr int kMaxPow = 7;
#endif

struct Tally {
  long cases = 0;
  long failures = 0;
};

template <class TS>
std::vector<TS> Stored(const std::vector<double>& v, std::size_t offset, std::size_t tail) {
  std::vector<TS> buf(offset + v.size() + tail, ToStorage<TS>(std::nan("")));
  for (std::size_t i = 0; i < v.size(); ++i) buf[offset + i] = ToStorage<TS>(v[i]);
  return buf;
}

template <class C, class TS>
void CheckReduce(const char* target, const std::vector<double>& values, std::size_t offset,
                 const Schedule& s, int kind, std::uint64_t seed, Tally& tally) {
  using T = simd::Compute<TS>;
  const std::size_t n = values.size();
  const std::vector<TS> buf = Stored<TS>(values, offset, 80);
  const TS* x = buf.data() + offset;
  std::vector<typename C::Input> in(n);
  for (std::size_t i = 0; i < n; ++i) {
    const T v = static_cast<T>(ToComputeValue(x[i]));
    if constexpr (std::is_same_v<typename C::Input, T>) {
      in[i] = v;
    } else {
      in[i] = {v, static_cast<std::int64_t>(i)};
    }
  }
  const typename C::State got = simd::Reduce<C, TS>(x, n, s);
  const typename C::State want =
      ReplayOracle<C>(BuildTree(s, n), std::span<const typename C::Input>(in.data(), n));
  ++tally.cases;
  if (!StatesBitEqual<C>(got, want)) {
    if (++tally.failures <= 8)
      std::printf(
          "MISMATCH target=%s storage=%s carrier=%s schedule=%s n=%zu kind=%d seed=%llu "
          "offset=%zu\n  simd   %s\n  replay %s\n  inputs %s\n",
          target, StorageName<TS>(), C::kName, ToString(s).c_str(), n, kind,
          static_cast<unsigned long long>(seed), offset, StateText<C>(got).c_str(),
          StateText<C>(want).c_str(), Join(values, 24).c_str());
  }
}

template <class TS>
void CheckDot(const char* target, const std::vector<double>& a, const std::vector<double>& b,
              std::size_t offset, const Schedule& s, int kind, std::uint64_t seed, Tally& tally) {
  using T = simd::Compute<TS>;
  using C = Dot<T>;
  const std::size_t n = a.size();
  const std::vector<TS> ba = Stored<TS>(a, offset, 80), bb = Stored<TS>(b, offset + 1, 80);
  std::vector<typename C::Input> in(n);
  for (std::size_t i = 0; i < n; ++i)
    in[i] = {static_cast<T>(ToComputeValue(ba[offset + i])),
             static_cast<T>(ToComputeValue(bb[offset + 1 + i]))};
  const auto got = simd::ReduceDot<TS>(ba.data() + offset, bb.data() + offset + 1, n, s);
  const auto want =
      ReplayOracle<C>(BuildTree(s, n), std::span<const typename C::Input>(in.data(), n));
  ++tally.cases;
  if (!StatesBitEqual<C>(got, want) && ++tally.failures <= 8)
    std::printf(
        "MISMATCH target=%s storage=%s carrier=dot schedule=%s n=%zu kind=%d seed=%llu\n"
        "  simd %s replay %s\n",
        target, StorageName<TS>(), ToString(s).c_str(), n, kind,
        static_cast<unsigned long long>(seed), StateText<C>(got).c_str(),
        StateText<C>(want).c_str());
}

template <class C, class TS>
void SweepCarrier(const char* target, const std::vector<Schedule>& schedules, std::uint64_t seed,
                  Tally& tally) {
  Rng rng(seed);
  for (const Schedule& s : schedules) {
    const auto* strided = s.If<carrier::orders::StridedParams>();
    const std::size_t k = strided ? strided->lanes : 32;
    const std::size_t tile_elems = strided && strided->tile ? strided->tile * strided->lanes : 0;
    for (std::size_t n : Sizes(k, tile_elems, kMaxPow, 3, rng)) {
      for (int kind = 0; kind < kInputKinds; ++kind) {
        const std::uint64_t case_seed = rng.Next();
        Rng data(case_seed);
        CheckReduce<C, TS>(target, MakeInput(kind, n, data), case_seed % 4, s, kind, case_seed,
                           tally);
      }
    }
  }
}

std::vector<Schedule> PushSchedules() {
  return {Schedule::Strided(16), Schedule::Strided(32), Schedule::Strided(64)};
}

std::vector<Schedule> TileSchedules() {
  std::vector<Schedule> s = PushSchedules();
  for (auto [k, t] : {std::pair{16, 1}, std::pair{32, 3}, std::pair{64, 16}, std::pair{16, 7}})
    s.push_back(Schedule::StridedTiles(k, t, true));
  return s;
}

template <class TS>
void SweepStorage(const char* target, std::uint64_t seed, Tally& tally) {
  using T = simd::Compute<TS>;
  SweepCarrier<Sum<T>, TS>(target, PushSchedules(), seed + 1, tally);
  SweepCarrier<Compensated<T>, TS>(target, PushSchedules(), seed + 2, tally);
  SweepCarrier<Max<T>, TS>(target, PushSchedules(), seed + 3, tally);
  SweepCarrier<ScaledNorm2<T>, TS>(target, PushSchedules(), seed + 4, tally);
  SweepCarrier<OnlineSoftmax<T, PortableExp>, TS>(target, TileSchedules(), seed + 5, tally);
  SweepCarrier<Welford<T>, TS>(target, TileSchedules(), seed + 6, tally);
  SweepCarrier<OnlineSoftmax<T, simd::VectorFastExp>, TS>(target, TileSchedules(), seed + 9, tally);
  SweepCarrier<ArgMax<T>, TS>(target, {Schedule::Seq()}, seed + 7, tally);
  Rng rng(seed + 8);
  for (const Schedule& s : PushSchedules())
    for (std::size_t n : Sizes(s.As<carrier::orders::StridedParams>().lanes, 0, kMaxPow, 3, rng))
      for (int kind = 0; kind < kInputKinds; ++kind) {
        const std::uint64_t case_seed = rng.Next();
        Rng data(case_seed);
        const auto a = MakeInput(kind, n, data), b = MakeInput(kind == 1 ? 0 : kind, n, data);
        CheckDot<TS>(target, a, b, case_seed % 4, s, kind, case_seed, tally);
      }
}

TEST_CASE("simd kernels equal ReplayOracle of their schedule on every target", "[fast][simd]") {
  const auto targets = hwy::SupportedAndGeneratedTargets();
  REQUIRE(!targets.empty());
  for (std::int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    const char* name = hwy::TargetName(target);
    Tally tally;
    SweepStorage<float>(name, 100, tally);
    SweepStorage<double>(name, 200, tally);
    SweepStorage<Half>(name, 300, tally);
    SweepStorage<BFloat16>(name, 400, tally);
    std::printf("target %-6s: %ld reductions compared with ReplayOracle, %ld mismatches\n", name,
                tally.cases, tally.failures);
    CHECK(simd::CurrentTarget() == std::string(name));
    CHECK(tally.failures == 0);
  }
  hwy::SetSupportedTargetsForTest(0);
}

// The vector portable exp is PortableExp::Exp, checked through the softmax output pass with the
// row state (0, 1): output = (x == 0) ? 1 : Exp(x) / 1 = Exp(x) exactly.
template <class T>
long ExpMismatches(const char* target) {
  std::vector<T> x;
  const double lo = std::is_same_v<T, float> ? -110.0 : -760.0;
  const double hi = std::is_same_v<T, float> ? 95.0 : 720.0;
  const int count = 1 << 18;
  for (int i = 0; i < count; ++i) x.push_back(static_cast<T>(lo + (hi - lo) * i / count));
  Rng rng(7);
  for (int i = 0; i < 4096; ++i) x.push_back(static_cast<T>(rng.Normal() * 1e-3));
  for (T v : {T(0), -T(0), std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
              std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::denorm_min(),
              std::numeric_limits<T>::max(), std::numeric_limits<T>::lowest(), T(88.7), T(89.0),
              T(-103.9), T(-104.0), T(709.7), T(-745.2)})
    x.push_back(v);
  std::vector<T> out(x.size());
  simd::SoftmaxOutputs<T>(x.data(), x.size(), {T(0), T(1)}, out.data());
  long bad = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const T want = x[i] == T(0) ? T(1) : PortableExp::Exp<T>(x[i]);
    if (!FieldBitEqual(out[i], want) && ++bad <= 4)
      std::printf("EXP MISMATCH target=%s x=%a simd=%a scalar=%a\n", target,
                  static_cast<double>(x[i]), static_cast<double>(out[i]),
                  static_cast<double>(want));
  }
  return bad;
}

template <class TS>
long SoftmaxMismatches(const char* target, std::uint64_t seed) {
  using T = simd::Compute<TS>;
  using C = OnlineSoftmax<T, PortableExp>;
  Rng rng(seed);
  long bad = 0;
  for (int kind : {0, 1, 2, 3, 5}) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{17},
                          std::size_t{100}, std::size_t{1031}}) {
      const std::vector<double> v = MakeInput(kind, n, rng);
      std::vector<TS> x(n);
      std::vector<T> xc(n);
      for (std::size_t i = 0; i < n; ++i) {
        x[i] = ToStorage<TS>(v[i]);
        xc[i] = static_cast<T>(ToComputeValue(x[i]));
      }
      const auto s = ReplayOracle<C>(BuildTree(Schedule::Seq(), n), std::span<const T>(xc));
      for (SoftmaxEmptyRow policy : {SoftmaxEmptyRow::kNaN, SoftmaxEmptyRow::kZeros}) {
        std::vector<T> out(n);
        simd::SoftmaxOutputs<TS>(x.data(), n, s, out.data(), policy);
        for (std::size_t i = 0; i < n; ++i) {
          const T want = C::SoftmaxOutput(xc[i], s, policy);
          if (!FieldBitEqual(out[i], want) && ++bad <= 4)
            std::printf(
                "SOFTMAX MISMATCH target=%s storage=%s kind=%d n=%zu i=%zu x=%a simd=%a "
                "scalar=%a\n",
                target, StorageName<TS>(), kind, n, i, static_cast<double>(xc[i]),
                static_cast<double>(out[i]), static_cast<double>(want));
        }
      }
    }
  }
  return bad;
}

TEST_CASE("simd portable exp and softmax outputs equal the scalar ones on every target",
          "[fast][simd]") {
  for (std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    const char* name = hwy::TargetName(target);
    const long exp_f = ExpMismatches<float>(name), exp_d = ExpMismatches<double>(name);
    const long sm = SoftmaxMismatches<float>(name, 1) + SoftmaxMismatches<double>(name, 2) +
                    SoftmaxMismatches<Half>(name, 3) + SoftmaxMismatches<BFloat16>(name, 4);
    std::printf("target %-6s: exp mismatches fp32 %ld fp64 %ld, softmax output mismatches %ld\n",
                name, exp_f, exp_d, sm);
    CHECK(exp_f == 0);
    CHECK(exp_d == 0);
    CHECK(sm == 0);
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST_CASE("the fast vector exp policy keeps its documented error bound", "[fast][simd]") {
  // Sampled (the bound was measured over every float in the range, see fast_exp.hpp).
  double worst = 0, worst_x = 0;
  Rng rng(5);
  for (int i = 0; i < (1 << 20); ++i) {
    const float x = i < (1 << 19) ? static_cast<float>(-87.0 + (88.72 - -87.0) * i / (1 << 19))
                                  : static_cast<float>(rng.Uniform(-87.0, 88.72));
    const double want = std::exp(static_cast<double>(x));
    const double ulp = std::ldexp(1.0, std::ilogb(static_cast<float>(want)) - 23);
    const double err = std::fabs(static_cast<double>(simd::VectorFastExp::Exp(x)) - want) / ulp;
    if (err > worst) {
      worst = err;
      worst_x = x;
    }
  }
  std::printf("VectorFastExp fp32: worst sampled error %.2f ulp at x = %a (bound %.0f)\n", worst,
              worst_x, simd::kVectorFastExpMaxUlpF32);
  CHECK(worst <= simd::kVectorFastExpMaxUlpF32);
  CHECK(simd::VectorFastExp::Exp(0.0f) == 1.0f);
  CHECK(simd::VectorFastExp::Exp(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(std::isnan(simd::VectorFastExp::Exp(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::isinf(simd::VectorFastExp::Exp(89.0f)));
}

TEST_CASE("simd schedules outside the realised set are refused with one line", "[fast][simd]") {
  std::vector<float> x(10, 1.0f);
  auto refused = [&](auto reduce, const char* text) {
    try {
      reduce(ParseSchedule(text));
    } catch (const ScheduleError& e) {
      const std::string what = e.what();
      INFO(what);
      CHECK(what.find('\n') == std::string::npos);
      CHECK(what.find(text) != std::string::npos);
      return true;
    }
    return false;
  };
  auto sum = [&](const Schedule& s) { simd::Reduce<Sum<float>, float>(x.data(), x.size(), s); };
  auto argmax = [&](const Schedule& s) {
    simd::Reduce<ArgMax<float>, float>(x.data(), x.size(), s);
  };
  CHECK(refused(sum, "pairwise"));
  CHECK(refused(sum, "strided:8"));
  CHECK(refused(sum, "strided:16:tile:4:lift"));
  CHECK(refused(argmax, "strided:16"));
  CHECK_FALSE(refused(sum, "strided:32"));
  // Native schedules are realisable and name the lane count of the running target.
  const Schedule native = simd::NativeSchedule<OnlineSoftmax<float, PortableExp>, float>();
  std::printf("native lse schedule on %s: %s\n", simd::CurrentTarget().c_str(),
              ToString(native).c_str());
  CHECK_NOTHROW(simd::CheckRealisable<OnlineSoftmax<float, PortableExp>, float>(native));
}

}  // namespace
}  // namespace carrier::test
