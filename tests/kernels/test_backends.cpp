// tests/kernels/test_backends.cpp: the simd and omp backends of eval/sweep (backends.hpp) run
// the kernels, name a schedule that ReplayOracle accepts, and give ReplayOracle's bits for it;
// requests they cannot serve throw Unavailable with one line.
#include <catch2/catch.hpp>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "backends/backends.hpp"
#include "core/merge_tree.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"
#include "kernel_test_util.hpp"
#include "kernels/simd/simd.hpp"

namespace carrier::test {
namespace {

using backends::Request;

std::vector<double> Values(std::size_t n, std::uint64_t seed, bool as_float) {
  Rng rng(seed);
  std::vector<double> v(n);
  for (auto& x : v)
    x = as_float ? static_cast<double>(static_cast<float>(rng.Normal())) : rng.Normal();
  return v;
}

template <class C>
typename C::Result ReplayOf(const std::string& schedule, const std::vector<double>& v) {
  using T = typename C::Scalar;
  std::vector<T> x(v.begin(), v.end());
  return C::Finalize(ReplayOracle<C>(BuildTree(schedule, x.size()), std::span<const T>(x)));
}

TEST_CASE("simd and omp backends report a schedule whose replay has their bits",
          "[fast][backends]") {
  for (auto run : {&backends::RunSimd, &backends::RunOmp}) {
    const bool is_simd = run == &backends::RunSimd;
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{100}, std::size_t{3001}}) {
      for (const std::string& sched :
           {std::string(), std::string(is_simd ? "strided:16" : "omp:3:pairwise:strided:16")}) {
        const auto v32 = Values(n, 11 + n, true);
        const auto v64 = Values(n, 12 + n, false);
        Request r{.op = "lse",
                  .storage = "fp32",
                  .acc = "fp32",
                  .exp = "portable",
                  .schedule = sched,
                  .a = v32};
        const auto lse = run(r);
        INFO((is_simd ? "simd" : "omp")
             << " n=" << n << " requested '" << sched << "' ran '" << lse.schedule << "'");
        REQUIRE(lse.components.size() == 1);
        CHECK(FieldBitEqual(static_cast<float>(lse.components[0]),
                            ReplayOf<OnlineSoftmax<float, PortableExp>>(lse.schedule, v32).lse));
        r = {.op = "welford",
             .storage = "fp64",
             .acc = "fp64",
             .exp = "portable",
             .schedule = sched,
             .a = v64};
        const auto w = run(r);
        const auto wr = ReplayOf<Welford<double>>(w.schedule, v64);
        REQUIRE(w.components.size() == 3);
        CHECK(FieldBitEqual(static_cast<double>(w.components[0]), wr.mean));
        CHECK(FieldBitEqual(static_cast<double>(w.components[1]), wr.var_population));
        r = {.op = "sum",
             .storage = "fp32",
             .acc = "fp32",
             .exp = "portable",
             .schedule = sched,
             .a = v32};
        const auto s = run(r);
        CHECK(FieldBitEqual(static_cast<float>(s.components[0]),
                            ReplayOf<Sum<float>>(s.schedule, v32)));
        r = {.op = "argmax",
             .storage = "fp32",
             .acc = "fp32",
             .exp = "portable",
             .schedule = "",
             .a = v32};
        const auto am = run(r);
        const auto amr = [&] {
          std::vector<IndexedValue<float>> in;
          for (std::size_t i = 0; i < n; ++i)
            in.push_back({static_cast<float>(v32[i]), static_cast<std::int64_t>(i)});
          return ArgMax<float>::Finalize(ReplayOracle<ArgMax<float>>(
              BuildTree(am.schedule, n), std::span<const IndexedValue<float>>(in)));
        }();
        CHECK(am.index == amr.index);
        std::printf("%s n=%zu: lse ran %s, welford ran %s, argmax ran %s\n",
                    is_simd ? "simd" : "omp", n, lse.schedule.c_str(), w.schedule.c_str(),
                    am.schedule.c_str());
      }
    }
  }
}

TEST_CASE("simd and omp backends refuse what they do not run with one line", "[fast][backends]") {
  const std::vector<double> v = {1.0, 2.0};
  const std::vector<Request> bad = {
      {.op = "lse", .storage = "fp32", .acc = "fp32", .exp = "libm", .schedule = "", .a = v},
      {.op = "sum", .storage = "fp32", .acc = "fp64", .exp = "portable", .schedule = "", .a = v},
      {.op = "sum",
       .storage = "fp32",
       .acc = "fp32",
       .exp = "portable",
       .schedule = "pairwise",
       .a = v},
      {.op = "affine", .storage = "fp32", .acc = "fp32", .exp = "portable", .schedule = "", .a = v},
  };
  for (auto run : {&backends::RunSimd, &backends::RunOmp})
    for (const Request& r : bad) {
      try {
        run(r);
        FAIL("accepted op " << r.op << " schedule '" << r.schedule << "'");
      } catch (const backends::Unavailable& e) {
        const std::string what = e.what();
        std::printf("refused: %s\n", what.c_str());
        CHECK(what.find('\n') == std::string::npos);
      }
    }
}

}  // namespace
}  // namespace carrier::test
