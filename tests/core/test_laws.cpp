// The law checkers themselves: they pass lawful carriers and catch unlawful ones with a
// printed counterexample (a checker that cannot fail would prove nothing).
#include <catch2/catch.hpp>
#include <iostream>
#include <span>
#include <vector>

#include "core/carriers/all.hpp"
#include "core/laws.hpp"
#include "support/test_support.hpp"

using namespace carrier;
using carrier::test::Rng;

namespace {

// The mean without a count: Combine averages the two halves. Not a homomorphism.
struct NaiveMean {
  using Scalar = double;
  using Input = double;
  using Result = double;
  struct State {
    double mean;
    auto Tie() const { return std::tie(mean); }
  };
  static constexpr const char* kName = "naive-mean";
  static constexpr bool kCommutative = true;
  static constexpr bool kBitwiseCommutative = true;
  static constexpr bool kPushIsCombineLift = true;
  static constexpr bool kHasPadInput = false;
  static State Identity() { return {0.0}; }  // not an identity for (a + b) / 2
  static State Lift(double x) { return {x}; }
  static State Combine(const State& a, const State& b) { return {(a.mean + b.mean) / 2}; }
  static double Finalize(const State& s) { return s.mean; }
  static std::array<double, 1> Components(double r) { return {r}; }
};
static_assert(Carrier<NaiveMean>);

template <class C>
std::vector<typename C::State> RandomStates(Rng& rng, int count) {
  std::vector<typename C::State> states;
  for (int i = 0; i < count; ++i) {
    std::vector<typename C::Input> x(1 + rng.Below(20));
    for (auto& v : x) v = static_cast<typename C::Input>(rng.Normal() * 10);
    states.push_back(Fold<C>(x.data(), x.size()));
  }
  return states;
}

}  // namespace

TEST_CASE("law checkers pass lawful carriers", "[fast][laws]") {
  const std::uint64_t seed = 99;
  Rng rng(seed);
  const auto states = RandomStates<Sum<double>>(rng, test::Trials(200));
  const auto id = CheckIdentity<Sum<double>>(states);
  const auto comm = CheckBitwiseCommutative<Sum<double>>(states);
  const auto pad = CheckPadInput<Sum<double>>(states);
  std::vector<double> inputs(states.size());
  for (auto& v : inputs) v = rng.Normal();
  const auto push = CheckPushIsCombineLift<Sum<double>>(states, inputs);
  INFO("seed=" << seed << " " << id.counterexample << comm.counterexample << pad.counterexample
               << push.counterexample);
  CHECK(id.Holds());
  CHECK(comm.Holds());
  CHECK(pad.Holds());
  CHECK(push.Holds());
  CHECK(id.checked == 2 * states.size());

  std::vector<double> ints(1000);
  for (auto& v : ints) v = static_cast<double>(rng.Below(1000));
  std::vector<std::size_t> splits = {0, 1, 17, 500, 999, 1000};
  const auto hom = CheckHomomorphism<Sum<double>>(ints, splits);
  CHECK(hom.Holds());
  CHECK(hom.checked == splits.size());
}

TEST_CASE("law checkers catch unlawful carriers and print the evidence", "[fast][laws]") {
  Rng rng(123);
  const auto states = RandomStates<NaiveMean>(rng, 50);
  const auto id = CheckIdentity<NaiveMean>(states);
  std::cout << "naive mean, identity: " << id.violations << "/" << id.checked
            << " violations; first: " << id.counterexample << "\n";
  CHECK_FALSE(id.Holds());
  CHECK(id.counterexample.find("Combine(Identity, s)") != std::string::npos);

  std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 100};
  std::vector<std::size_t> splits = {1, 2, 5};
  const auto hom = CheckHomomorphism<NaiveMean>(x, splits);
  std::cout << "naive mean, homomorphism: " << hom.counterexample << "\n";
  CHECK_FALSE(hom.Holds());
  CHECK(hom.max_rel_diff > 0.1);

  // ArgMax sends ties to the earlier segment, so swapping operands changes the index.
  std::vector<ArgMax<float>::State> ties = {{2.0f, 0}, {2.0f, 5}};
  const auto comm = CheckBitwiseCommutative<ArgMax<float>>(ties);
  std::cout << "argmax, bitwise commutativity: " << comm.counterexample << "\n";
  CHECK_FALSE(comm.Holds());
}
