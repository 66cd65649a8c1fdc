// The fp128 compute type (precision/float128.hpp, registry::NamedComputeTypes): the op table's
// replays in Float128 equal hand-written __float128 loops bit for bit (seq and pairwise, both
// engines), `carrier eval --acc fp128` runs and measures an error below fp64's on the same input
// with u = 2^-113 in the bound, and every misuse is a one-line error with exit 2.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/merge_tree.hpp"
#include "core/schedule.hpp"
#include "precision/float128.hpp"
#include "registry/registry.hpp"
#include "support/cli_support.hpp"

#if defined(CARRIER_HAVE_FLOAT128) && CARRIER_HAVE_FLOAT128

namespace {

using carrier_test::Carrier;
using carrier_test::CheckRejected;
__extension__ typedef __float128 Q;  // GCC's own binary128, not the Boost wrapper

// A reproducible column with mixed signs and magnitudes (so that every rounding matters).
std::vector<double> Column(std::size_t n, std::uint64_t seed) {
  std::vector<double> x;
  std::uint64_t s = seed;
  for (std::size_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const double u = static_cast<double>(s >> 11) * 0x1p-53;  // [0, 1)
    x.push_back((u - 0.3) * std::ldexp(1.0, static_cast<int>((s >> 3) % 40) - 20) + 0x1p-30);
  }
  return x;
}

// The registry's replay (both engines) of `op` in fp128: the value hi + residual of component k.
std::vector<Q> Replayed(const std::string& op, const std::string& schedule,
                        const std::vector<double>& a, const std::vector<double>& b) {
  namespace reg = carrier::registry;
  const reg::Entry* e = reg::Find(op);
  REQUIRE(e != nullptr);
  const carrier::Schedule s = carrier::ParseSchedule(schedule);
  const carrier::MergeTree tree = carrier::BuildTree(s, a.size());
  const reg::ReplayInput in{a, b, a.size(), 0};
  const reg::Replayed oracle =
      e->replay_oracle(reg::ScalarKind::kFloat128, reg::ExpKind::kLibm, tree, in);
  REQUIRE(oracle.residual.size() == oracle.components.size());
  std::vector<Q> out;
  for (std::size_t k = 0; k < oracle.components.size(); ++k)
    out.push_back(static_cast<Q>(oracle.components[k]) + static_cast<Q>(oracle.residual[k]));
  if (e->replay) {  // the fast engine, by the schedule (no tree) and by the tree
    for (const carrier::MergeTree* t : {static_cast<const carrier::MergeTree*>(nullptr), &tree}) {
      const reg::Replayed f = e->replay(reg::ScalarKind::kFloat128, reg::ExpKind::kLibm, s, t, in);
      REQUIRE(f.components == oracle.components);
      REQUIRE(f.residual == oracle.residual);
    }
  }
  return out;
}

bool SameBits(Q a, Q b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::string Show(Q v) {
  std::ostringstream os;
  const long double hi = static_cast<long double>(v);
  os << std::hexfloat << hi << " + " << static_cast<long double>(v - static_cast<Q>(hi));
  return os.str();
}

// Each op as a hand-written __float128 program: a sequential loop, and the same steps over the
// pairwise tree (PairwiseMid: the left half takes the extra element; each leaf one push from the
// identity).
struct SumState {
  Q s;
};
struct KahanState {
  Q s, c;
};
struct NeumaierState {
  Q s, c;
};
struct WelfordState {
  std::uint64_t n;
  Q mean, m2;
};

template <class S, class Leaf, class Combine>
S Pairwise(std::size_t lo, std::size_t hi, Leaf leaf, Combine combine) {
  if (hi - lo == 1) return leaf(lo);
  const std::size_t mid = lo + (hi - lo + 1) / 2;
  const S a = Pairwise<S>(lo, mid, leaf, combine);
  const S b = Pairwise<S>(mid, hi, leaf, combine);
  return combine(a, b);
}

Q NeumaierErr(Q s, Q x, Q t) {
  return (s >= 0 ? s : -s) >= (x >= 0 ? x : -x) ? (s - t) + x : (x - t) + s;
}

WelfordState WelfordPush(WelfordState st, Q x) {
  const std::uint64_t n = st.n + 1;
  const Q delta = x - st.mean;
  const Q mean = st.mean + delta / static_cast<Q>(n);
  return {n, mean, st.m2 + delta * (x - mean)};
}

WelfordState WelfordCombine(WelfordState a, WelfordState b) {
  const std::uint64_t n = a.n + b.n;
  const Q tn = static_cast<Q>(n), ta = static_cast<Q>(a.n), tb = static_cast<Q>(b.n);
  const Q delta = b.mean - a.mean;
  return {n, a.mean + delta * (tb / tn), (a.m2 + b.m2) + (delta * delta) * ((ta * tb) / tn)};
}

// {mean, var_population, var_sample}
std::vector<Q> WelfordResult(WelfordState s) {
  return {s.mean, s.m2 / static_cast<Q>(s.n), s.m2 / static_cast<Q>(s.n - 1)};
}

std::vector<Q> HandWritten(const std::string& op, bool pairwise, const std::vector<double>& a,
                           const std::vector<double>& b) {
  const std::size_t n = a.size();
  auto x = [&](std::size_t i) { return static_cast<Q>(a[i]); };
  if (op == std::string("sum")) {
    if (!pairwise) {
      Q s = 0;
      for (std::size_t i = 0; i < n; ++i) s += x(i);
      return {s};
    }
    return {Pairwise<SumState>(
                0, n, [&](std::size_t i) { return SumState{Q(0) + x(i)}; },
                [](SumState p, SumState q) { return SumState{p.s + q.s}; })
                .s};
  }
  if (op == std::string("dot")) {
    auto prod = [&](std::size_t i) { return static_cast<Q>(a[i]) * static_cast<Q>(b[i]); };
    if (!pairwise) {
      Q s = 0;
      for (std::size_t i = 0; i < n; ++i) s += prod(i);
      return {s};
    }
    return {Pairwise<SumState>(
                0, n, [&](std::size_t i) { return SumState{Q(0) + prod(i)}; },
                [](SumState p, SumState q) { return SumState{p.s + q.s}; })
                .s};
  }
  if (op == std::string("kahan")) {  // Kahan 1965: y = x - c; t = s + y; c = (t - s) - y
    auto combine = [](KahanState p, KahanState q) {
      const Q y = q.s - p.c;
      const Q t = p.s + y;
      return KahanState{t, ((t - p.s) - y) + q.c};
    };
    if (!pairwise) {
      KahanState st{x(0), 0};
      for (std::size_t i = 1; i < n; ++i) st = combine(st, {x(i), 0});
      return {st.s};
    }
    return {Pairwise<KahanState>(
                0, n,
                [&](std::size_t i) {
                  return KahanState{x(i), 0};
                },
                combine)
                .s};
  }
  if (op == std::string("neumaier")) {
    NeumaierState st{0, 0};
    if (!pairwise) {
      for (std::size_t i = 0; i < n; ++i) {
        const Q t = st.s + x(i);
        st = {t, st.c + NeumaierErr(st.s, x(i), t)};
      }
    } else {
      st = Pairwise<NeumaierState>(
          0, n,
          [&](std::size_t i) {
            const Q t = Q(0) + x(i);
            return NeumaierState{t, Q(0) + NeumaierErr(Q(0), x(i), t)};
          },
          [](NeumaierState p, NeumaierState q) {
            const Q t = p.s + q.s;
            const Q bb = t - p.s;
            return NeumaierState{t, (p.c + q.c) + ((p.s - (t - bb)) + (q.s - bb))};
          });
    }
    return {st.s + st.c};
  }
  // welford
  WelfordState st{0, 0, 0};
  if (!pairwise) {
    for (std::size_t i = 0; i < n; ++i) st = WelfordPush(st, x(i));
  } else {
    st = Pairwise<WelfordState>(
        0, n,
        [&](std::size_t i) {
          return WelfordPush({0, 0, 0}, x(i));
        },
        WelfordCombine);
  }
  return WelfordResult(st);
}

// The value of `key` in eval's text output.
std::string Field(const std::string& out, const std::string& key) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + " ", 0) == 0) return line.substr(line.find_first_not_of(' ', key.size()));
  return "<missing>";
}

}  // namespace

TEST_CASE("fp128: replay equals a hand-written __float128 loop bit for bit", "[fast][fp128]") {
  for (std::size_t n : {1u, 2u, 7u, 100u, 1001u}) {
    const std::vector<double> a = Column(n, 11 + n), b = Column(n, 12 + n);
    for (const char* op : {"sum", "kahan", "neumaier", "dot", "welford"}) {
      if (std::string(op) == "welford" && n < 2) continue;  // var_sample of one value is NaN
      for (const char* schedule : {"seq", "pairwise"}) {
        const std::vector<Q> got = Replayed(op, schedule, a, b);
        const std::vector<Q> want = HandWritten(op, std::string(schedule) == "pairwise", a, b);
        INFO("op " << op << ", schedule " << schedule << ", n " << n << ", column seed " << 11 + n
                   << " (b: " << 12 + n << "), acc fp128");
        REQUIRE(got.size() == want.size());
        for (std::size_t k = 0; k < got.size(); ++k) {
          INFO("component " << k << ": replay " << Show(got[k]) << ", loop " << Show(want[k]));
          CHECK(SameBits(got[k], want[k]));
        }
      }
    }
  }
  std::cout << "  fp128 replay == __float128 loops: sum kahan neumaier dot welford, seq and "
               "pairwise, n 1 2 7 100 1001, both engines\n";
}

TEST_CASE("fp128: eval --acc fp128 measures an error below fp64's, u = 2^-113", "[fast][fp128]") {
  // Sums of doubles are often exact in binary128 (113 bits span most inputs' exponents): an
  // ill-conditioned sum shows fp64's loss against fp128's (near) exactness. Products and
  // divisions round in fp128 too: dot and welford on lognormal data have a nonzero fp128 error
  // far below long double's 2^-64, which only the exact measurement (metrics_exact.hpp) sees.
  struct Case {
    const char* op;
    const char* gen;
    bool rounds;  // the fp128 result is known to carry a rounding error on this input
  };
  for (const Case& c :
       {Case{"sum", "ill:1e30", false}, Case{"kahan", "ill:1e30", false},
        Case{"neumaier", "ill:1e30", false}, Case{"dot", "lognormal", true},
        Case{"welford", "lognormal", true}, Case{"var-twopass", "lognormal", true}}) {
    const std::string base = std::string("eval --op ") + c.op + " --dtype fp64 --gen " + c.gen +
                             " --n 4096 --seed 5 --schedule seq";
    const auto q = Carrier(base + " --acc fp128");
    const auto d = Carrier(base + " --acc fp64");
    INFO("carrier " << base << " --acc fp128|fp64\nfp128: " << q.out << q.err << "\nfp64: " << d.out
                    << d.err);
    REQUIRE(q.code == 0);
    REQUIRE(d.code == 0);
    const double e128 = std::stod(Field(q.out, "rel_error"));
    const double e64 = std::stod(Field(d.out, "rel_error"));
    std::cout << "  " << c.op << " " << c.gen << " n 4096 seed 5 seq: rel_error fp128 " << e128
              << ", fp64 " << e64 << "; error_to_bound fp128 " << Field(q.out, "error_to_bound")
              << "\n";
    CHECK(Field(q.out, "acc") == "fp128");
    CHECK(std::stod(Field(q.out, "u")) == std::ldexp(1.0, -113));
    CHECK(Field(q.out, "reference_certified") == "true");
    CHECK(e128 < e64);
    const std::string ratio = Field(q.out, "error_to_bound");  // var-twopass declares no bound
    if (ratio != "nan" && ratio != "<missing>") CHECK(std::stod(ratio) <= 1.0);
    if (c.rounds) {
      CHECK(e128 > 0);
      CHECK(e128 < 1e-30);  // about n u = 2^12 2^-113 = 4e-31, far below long double's 5e-20
    }
  }
}

TEST_CASE("fp128: norm2's bound stays positive below double's u", "[fast][fp128]") {
  // (1+u)^2 sqrt(1 + gamma) - 1 evaluated in double is 0 for u = 2^-113 (op_bounds.cpp).
  const auto q =
      Carrier("eval --op norm2 --dtype fp64 --gen lognormal --n 4096 --seed 5 --acc fp128");
  INFO(q.out << q.err);
  REQUIRE(q.code == 0);
  const double bound = std::stod(Field(q.out, "bound"));
  const double err = std::stod(Field(q.out, "abs_error"));
  std::cout << "  norm2 fp128 lognormal n 4096: abs_error " << err << ", bound " << bound << "\n";
  CHECK(bound > 0);
  CHECK(err <= bound);
}

TEST_CASE("fp128: misuse is a one-line error, exit 2", "[fast][fp128]") {
  const std::string base = "eval --op sum --dtype fp64 --gen normal --n 16 ";
  CheckRejected(base + "--acc fp129", "fp128");  // the message lists fp128 among the choices
  CheckRejected(base + "--acc FP128", "fp128");
  CheckRejected(base + "--acc fp128 --round rz", "rne");
  CheckRejected(base + "--acc fp128 --backend simd", "replay");
  CheckRejected(base + "--acc 'fp64>fp128' --schedule blocked:4", "one level");
  CheckRejected(base + "--acc fp128 --exp portable", "portable");
  CheckRejected(base + "--acc fp128 --schedule insertion", "fp128");
  CheckRejected("eval --op softmax --dtype fp64 --gen normal --n 16 --acc fp128", "vector");
  CheckRejected("eval --op lse --dtype fp64 --gen normal --n 16 --acc fp128", "certified");
  CheckRejected("eval --op sum --dtype fp128 --gen normal --n 16", "compute type only");
}

#endif  // CARRIER_HAVE_FLOAT128
