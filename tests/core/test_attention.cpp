// core/attention.hpp, the CPU replay of the FlashAttention forward kernel: it performs exactly
// the operations its header lists (checked against a second, hand-written implementation of
// those steps), it approximates long double attention to fp32's precision, causal masking and
// tile skipping see the keys the header says, and shapes the kernel cannot run are one-line
// ScheduleErrors.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/attention.hpp"
#include "support/test_support.hpp"

namespace {

using carrier::AttentionShape;

std::vector<float> Normal(std::size_t count, std::uint64_t seed) {
  carrier::test::Rng rng(seed);
  std::vector<float> x(count);
  for (auto& v : x) v = static_cast<float>(rng.Normal());
  return x;
}

// The header's steps written out again by hand (no FlashRow): per row, scores in order, then
// per tile of block_c: max, p = (s == max) ? 1 : exp(s - max), l += p, o += p v in key order;
// tiles folded as sa = (m == M) ? 1 : exp(m - M), l = la sa + lb sb, o = oa sa + ob sb; o / l.
// T is the compute scalar (float, or the bf16 scalar below); inputs convert to T once.
template <class T>
std::vector<T> HandWritten(const std::vector<float>& q, const std::vector<float>& k,
                           const std::vector<float>& v, const AttentionShape& sh) {
  using std::exp;
  using std::sqrt;
  const std::size_t d = sh.head_dim;
  const T scale = T(1) / sqrt(static_cast<T>(d));
  const T ninf = -carrier::ScalarTraits<T>::Infinity();
  std::vector<T> out(sh.seq_len * d);
  for (std::size_t i = 0; i < sh.seq_len; ++i) {
    const std::size_t keys = carrier::AttentionRowKeys(sh, i);
    T m = ninf, l = T(0);
    std::vector<T> o(d, T(0));
    for (std::size_t k0 = 0; k0 < keys; k0 += sh.block_c) {
      const std::size_t k1 = std::min(keys, k0 + sh.block_c);
      std::vector<T> s(k1 - k0);
      for (std::size_t j = k0; j < k1; ++j) {
        T acc = T(0);
        for (std::size_t c = 0; c < d; ++c)
          acc = acc + static_cast<T>(q[i * d + c]) * static_cast<T>(k[j * d + c]);
        s[j - k0] = (sh.causal && j > i) ? ninf : acc * scale;
      }
      T tm = ninf;
      for (T x : s) tm = std::max(tm, x);
      T tl = T(0);
      std::vector<T> to(d, T(0));
      for (std::size_t j = k0; j < k1; ++j) {
        if (s[j - k0] == ninf) continue;
        const T p = s[j - k0] == tm ? T(1) : exp(s[j - k0] - tm);
        tl = tl + p;
        for (std::size_t c = 0; c < d; ++c) to[c] = to[c] + p * static_cast<T>(v[j * d + c]);
      }
      if (k0 == 0) {
        m = tm;
        l = tl;
        o = to;
        continue;
      }
      const T big = std::max(m, tm);
      const T sa = m == big ? T(1) : exp(m - big);
      const T sb = tm == big ? T(1) : exp(tm - big);
      l = l * sa + tl * sb;
      for (std::size_t c = 0; c < d; ++c) o[c] = o[c] * sa + to[c] * sb;
      m = big;
    }
    for (std::size_t c = 0; c < d; ++c) out[i * d + c] = o[c] / l;
  }
  return out;
}

// A bfloat16 compute scalar written for this test only (core tests do not link
// precision/emulated_oracle.hpp): a double holding a bf16 value; + - * / sqrt and exp compute in
// double and round once to nearest even at 8 bits. For + - * / sqrt that double rounding is
// innocuous (53 >= 2 * 8 + 2, Figueroa 1995), so each is the correctly rounded bf16 result;
// exp is libm's double result rounded. Test values stay far inside bf16's normal range, so no
// subnormal or overflow handling. It checks that the replay is written against ScalarTraits
// and the operators only, i.e. really computes in a narrow T when asked to.
struct Bf16T {
  double x = 0;
  static double Round(double v) {
    if (!std::isfinite(v) || v == 0) return v;
    int e = 0;
    const double m = std::frexp(v, &e);  // |m| in [0.5, 1): 8 bits are m * 2^8 rounded
    return std::ldexp(std::nearbyint(std::ldexp(m, 8)), e - 8);
  }
  Bf16T() = default;
  template <class A, class = std::enable_if_t<std::is_arithmetic_v<A>>>
  explicit Bf16T(A a) : x(Round(static_cast<double>(a))) {}
  explicit operator double() const { return x; }
  friend Bf16T operator+(Bf16T a, Bf16T b) { return Bf16T(a.x + b.x); }
  friend Bf16T operator-(Bf16T a, Bf16T b) { return Bf16T(a.x - b.x); }
  friend Bf16T operator*(Bf16T a, Bf16T b) { return Bf16T(a.x * b.x); }
  friend Bf16T operator/(Bf16T a, Bf16T b) { return Bf16T(a.x / b.x); }
  friend Bf16T operator-(Bf16T a) { return Bf16T(-a.x); }
  friend Bf16T sqrt(Bf16T a) { return Bf16T(std::sqrt(a.x)); }
  friend Bf16T exp(Bf16T a) { return Bf16T(std::exp(a.x)); }
  friend bool operator==(Bf16T a, Bf16T b) { return a.x == b.x; }
  friend bool operator<(Bf16T a, Bf16T b) { return a.x < b.x; }
  friend bool operator>(Bf16T a, Bf16T b) { return a.x > b.x; }
};

}  // namespace

namespace carrier {
template <>
struct ScalarTraits<Bf16T> {
  static Bf16T Zero() { return Bf16T(0.0); }
  static Bf16T One() { return Bf16T(1.0); }
  static Bf16T Infinity() { return Bf16T(std::numeric_limits<double>::infinity()); }
  static Bf16T QuietNaN() { return Bf16T(std::numeric_limits<double>::quiet_NaN()); }
  static bool IsNaN(Bf16T a) { return std::isnan(a.x); }
  static bool SignBit(Bf16T a) { return std::signbit(a.x); }
};
}  // namespace carrier

namespace {

// Largest |out - softmax(q k^T / sqrt(d)) v| over the head, the reference in long double from
// the exact scores (non-causal).
template <class T>
double WorstVsLongDouble(const std::vector<T>& out, const std::vector<float>& q,
                         const std::vector<float>& k, const std::vector<float>& v,
                         const AttentionShape& sh) {
  const std::size_t d = sh.head_dim;
  double worst = 0;
  for (std::size_t i = 0; i < sh.seq_len; ++i) {
    const auto s = carrier::AttentionScoresExact(q.data(), k.data(), sh, i);
    long double m = -INFINITY, l = 0;
    for (double x : s) m = std::max<long double>(m, x);
    std::vector<long double> o(d, 0);
    for (std::size_t j = 0; j < sh.seq_len; ++j) {
      const long double p = std::exp(static_cast<long double>(s[j]) - m);
      l += p;
      for (std::size_t c = 0; c < d; ++c) o[c] += p * v[j * d + c];
    }
    for (std::size_t c = 0; c < d; ++c)
      worst = std::max(
          worst, static_cast<double>(std::fabs(
                     static_cast<long double>(static_cast<double>(out[i * d + c])) - o[c] / l)));
  }
  return worst;
}

}  // namespace

TEST_CASE("attention replay performs the steps its header lists", "[fast][attention]") {
  std::size_t rows = 0;
  for (std::size_t d : {64u, 128u})
    for (std::size_t n : {1u, 5u, 64u, 130u})
      for (std::size_t bc : {1u, 16u, 64u, 200u})
        for (bool causal : {false, true}) {
          const AttentionShape sh{n, d, 32, bc, causal};
          const std::uint64_t seed = 100 * n + d + bc;
          const auto q = Normal(n * d, seed), k = Normal(n * d, seed + 1),
                     v = Normal(n * d, seed + 2);
          const auto replay = carrier::AttentionForwardReplay<float, carrier::LibmExp>(
              q.data(), k.data(), v.data(), sh);
          const auto hand = HandWritten<float>(q, k, v, sh);
          INFO("seq_len " << n << " head_dim " << d << " block_c " << bc << " causal " << causal
                          << " seed " << seed);
          REQUIRE(replay.size() == hand.size());
          for (std::size_t e = 0; e < hand.size(); ++e) {
            INFO("output " << e << ": replay " << carrier::test::Exact(replay[e]) << ", by hand "
                           << carrier::test::Exact(hand[e]));
            REQUIRE(std::memcmp(&replay[e], &hand[e], sizeof(float)) == 0);
          }
          rows += n;
        }
  std::cout << "attention rows equal to the hand-written steps: " << rows << "\n";
}

TEST_CASE("attention replay in a bf16 compute type performs the listed steps in bf16",
          "[fast][attention]") {
  // The inputs are bf16 values (as the sweep stores them), so converting them into T is exact
  // and the only roundings are the ones the header lists, each in bf16.
  for (std::size_t n : {5u, 130u})
    for (std::size_t bc : {16u, 64u, 200u}) {
      const AttentionShape sh{n, 64, 64, bc, false};
      const std::uint64_t seed = 7000 + n + bc;
      auto q = Normal(n * 64, seed), k = Normal(n * 64, seed + 1), v = Normal(n * 64, seed + 2);
      for (auto* x : {&q, &k, &v})
        for (auto& e : *x) e = static_cast<float>(Bf16T::Round(e));
      const auto replay = carrier::AttentionForwardReplay<Bf16T, carrier::LibmExp>(
          q.data(), k.data(), v.data(), sh);
      const auto hand = HandWritten<Bf16T>(q, k, v, sh);
      const auto f32 = carrier::AttentionForwardReplay<float, carrier::LibmExp>(q.data(), k.data(),
                                                                                v.data(), sh);
      INFO("seq_len " << n << " head_dim 64 block_c " << bc << " seed " << seed);
      REQUIRE(replay.size() == hand.size());
      for (std::size_t e = 0; e < hand.size(); ++e) {
        INFO("output " << e << ": replay " << replay[e].x << ", by hand " << hand[e].x);
        REQUIRE(replay[e].x == hand[e].x);
        REQUIRE(replay[e].x == Bf16T::Round(replay[e].x));  // a bf16 value
      }
      const double e16 = WorstVsLongDouble(replay, q, k, v, sh);
      const double e32 = WorstVsLongDouble(f32, q, k, v, sh);
      std::cout << "attention n " << n << " Bc " << bc << ": worst abs error bf16 compute " << e16
                << ", fp32 compute " << e32 << "\n";
      // u(bf16) / u(fp32) = 2^16: the bf16 error must be far above fp32's, yet a small fraction
      // of the outputs' size (means of N(0,1) values).
      CHECK(e16 > 100 * e32);
      CHECK(e16 < 0.25);
    }
}

TEST_CASE("attention replay approximates long double attention", "[fast][attention]") {
  double worst = 0;
  for (std::size_t n : {17u, 256u})
    for (bool causal : {false, true}) {
      const AttentionShape sh{n, 64, 64, 32, causal};
      const auto q = Normal(n * 64, 7), k = Normal(n * 64, 8), v = Normal(n * 64, 9);
      const auto out = carrier::AttentionForwardReplay<float, carrier::LibmExp>(q.data(), k.data(),
                                                                                v.data(), sh);
      for (std::size_t i = 0; i < n; ++i) {
        const auto s = carrier::AttentionScoresExact(q.data(), k.data(), sh, i);
        long double m = -INFINITY, l = 0;
        for (double x : s) m = std::max<long double>(m, x);
        std::vector<long double> o(64, 0);
        for (std::size_t j = 0; j < n; ++j) {
          if (s[j] == -INFINITY) continue;
          const long double p = std::exp(static_cast<long double>(s[j]) - m);
          l += p;
          for (std::size_t c = 0; c < 64; ++c) o[c] += p * v[j * 64 + c];
        }
        for (std::size_t c = 0; c < 64; ++c)
          worst = std::max(worst, static_cast<double>(std::fabs(out[i * 64 + c] - o[c] / l)));
      }
    }
  std::cout << "attention replay (fp32, libm exp) vs long double: worst abs error " << worst
            << "\n";
  // Outputs are means of N(0,1) values; 64-term fp32 dot products and <= 256-term sums.
  CHECK(worst < 1e-5);
  CHECK(worst > 0);  // fp32 really was used
}

TEST_CASE("causal rows reduce the keys their kernel block reads", "[fast][attention]") {
  const AttentionShape sh{100, 64, 32, 16, true};
  CHECK(carrier::AttentionRowKeys(sh, 0) == 32);
  CHECK(carrier::AttentionRowKeys(sh, 31) == 32);
  CHECK(carrier::AttentionRowKeys(sh, 40) == 64);
  CHECK(carrier::AttentionRowKeys(sh, 99) == 100);
  AttentionShape full = sh;
  full.causal = false;
  CHECK(carrier::AttentionRowKeys(full, 0) == 100);
  // Row 0 sees only key 0: its output is v_0 exactly (p = 1, l = 1, o = +0 + 1 * v).
  const auto q = Normal(100 * 64, 1), k = Normal(100 * 64, 2), v = Normal(100 * 64, 3);
  const auto out =
      carrier::AttentionForwardReplay<float, carrier::LibmExp>(q.data(), k.data(), v.data(), sh);
  for (std::size_t c = 0; c < 64; ++c) CHECK(out[c] == v[c]);
}

TEST_CASE("attention shapes the kernel cannot run are one-line errors", "[fast][attention]") {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const carrier::ScheduleError& e) {
      std::cout << "  " << e.what() << "\n";
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  const std::vector<float> x(64 * 32, 1.0f);
  CHECK(message([&] {
          carrier::AttentionForwardReplay<float, carrier::LibmExp>(
              x.data(), x.data(), x.data(), AttentionShape{2, 32, 64, 64, false});
        }).find("head_dim must be 64 or 128") != std::string::npos);
  CHECK(message([] {
          carrier::AttentionShapeFromSchedule("blocked:64", 10, 64, false);
        }).find("blocked:BC:lift") != std::string::npos);
  CHECK(message([] {
          carrier::AttentionShapeFromSchedule("pairwise", 10, 64, false);
        }).find("blocked:BC:lift") != std::string::npos);
  CHECK(carrier::AttentionShapeFromSchedule("blocked:32:lift", 10, 128, true).block_c == 32);
  CHECK(message([] {
          carrier::CheckAttentionKernelShape(AttentionShape{10, 64, 64, 48, false});
        }).find("16, 32, 64 or 128") != std::string::npos);
  CHECK(message([] {
          carrier::CheckAttentionKernelShape(AttentionShape{10, 64, 2048, 64, false});
        }).find("at most 1024") != std::string::npos);
  CHECK(message([] {
          carrier::CheckAttentionKernelShape(AttentionShape{10, 128, 1024, 128, false});
        }).find("shared memory") != std::string::npos);
  CHECK(message([] {
          carrier::CheckAttentionKernelShape(AttentionShape{10, 128, 64, 64, false});
        }) == "(accepted)");
}
