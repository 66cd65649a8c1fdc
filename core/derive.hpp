// core/derive.hpp: the Third Homomorphism Theorem as a construction (Gibbons 1996; Morita,
// Morihata, Matsuzaki, Hu & Takeichi, "Automatic inversion generates divide-and-conquer
// parallel programs", PLDI 2007).
//
// Theorem    A list function h that is both a leftward fold (h(x ++ [a]) = h(x) <| a) and a
//            rightward fold (h([a] ++ x) = a |> h(x)) is a list homomorphism, and for ANY weak
//            right inverse h° (h(h°(s)) = s for every s in h's range) its combine is
//              Combine(a, b) = h(h°(a) ++ h°(b)).
// Derivation D, a struct of static functions:
//   Input, State                   the list element and h's value;
//   kName                          a short name;
//   Empty()                        h([]);
//   PushBack(s, x), PushFront(x, s) the two folds' steps;
//   Inverse(s) -> vector<Input>    h°: a short list whose h is s;
//   Combine(a, b)                  the hand-written combine, compared with the derived one;
//   Distance(a, b) -> long double  relative difference of two states (0 = equal);
//   Describe(s), DescribeInput(x)  printable text (hex floats where exactness matters);
//   Answer(s)                      the finalized result, in decimal;
//   RandomList(rng)                a random (possibly adversarial) input list.
// DeriveReport says whether the folds agree (if not, h is not a list homomorphism and the
// counterexample is the list, both folds' states and both answers), how well h(h°(s)) = s
// holds, and the largest relative difference between the derived and the hand-written
// combine. Folds run in floating point, so "agree" means Distance <= tolerance; a genuine
// non-homomorphism differs at O(1), far above the rounding level.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace carrier {

struct DeriveReport {
  std::string name;
  std::uint64_t trials = 0;
  bool folds_agree = true;
  long double max_fold_diff = 0;     // foldl against foldr
  long double max_inverse_diff = 0;  // h(h°(s)) against s
  long double max_combine_diff = 0;  // derived against hand-written combine
  std::size_t max_inverse_length = 0;
  std::string counterexample;
  bool Holds(long double tolerance) const {
    return folds_agree && max_inverse_diff <= tolerance && max_combine_diff <= tolerance;
  }
};

template <class D>
typename D::State FoldLeftward(const std::vector<typename D::Input>& x) {
  typename D::State s = D::Empty();
  for (const auto& v : x) s = D::PushBack(s, v);
  return s;
}

template <class D>
typename D::State FoldRightward(const std::vector<typename D::Input>& x) {
  typename D::State s = D::Empty();
  for (auto it = x.rbegin(); it != x.rend(); ++it) s = D::PushFront(*it, s);
  return s;
}

// Combine(a, b) = h(h°(a) ++ h°(b)), h computed by the leftward fold.
template <class D>
typename D::State DerivedCombine(const typename D::State& a, const typename D::State& b) {
  std::vector<typename D::Input> list = D::Inverse(a);
  const std::vector<typename D::Input> right = D::Inverse(b);
  list.insert(list.end(), right.begin(), right.end());
  return FoldLeftward<D>(list);
}

template <class D>
std::string DescribeList(const std::vector<typename D::Input>& x) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (i) os << ", ";
    if (i == 12 && x.size() > 13) {
      os << "... (" << x.size() << " values)";
      break;
    }
    os << D::DescribeInput(x[i]);
  }
  os << "]";
  return os.str();
}

// Runs the whole construction: `trials` random lists for the fold check, then `trials` pairs
// of states (h of random lists) for the inverse and the combine.
template <class D>
DeriveReport Derive(std::uint64_t trials, std::uint64_t seed, long double tolerance) {
  DeriveReport r;
  r.name = D::kName;
  r.trials = trials;
  std::mt19937_64 rng(seed);
  for (std::uint64_t t = 0; t < trials; ++t) {
    const auto x = D::RandomList(rng);
    const auto left = FoldLeftward<D>(x);
    const auto right = FoldRightward<D>(x);
    const long double d = D::Distance(left, right);
    r.max_fold_diff = std::max(r.max_fold_diff, d);
    if (!(d <= tolerance) && r.folds_agree) {
      r.folds_agree = false;
      std::ostringstream os;
      os << "not a list homomorphism: the leftward and rightward folds of the same list differ\n"
         << "  seed " << seed << ", trial " << t << ", list (n = " << x.size()
         << ") = " << DescribeList<D>(x) << "\n"
         << "  leftward fold  (push at the back)  = " << D::Describe(left) << ", answer "
         << D::Answer(left) << "\n"
         << "  rightward fold (push at the front) = " << D::Describe(right) << ", answer "
         << D::Answer(right) << "\n"
         << "  relative difference " << static_cast<double>(d);
      r.counterexample = os.str();
    }
  }
  if (!r.folds_agree) return r;
  for (std::uint64_t t = 0; t < trials; ++t) {
    const auto x = D::RandomList(rng);
    const auto y = D::RandomList(rng);
    const auto a = FoldLeftward<D>(x);
    const auto b = FoldLeftward<D>(y);
    const auto inv = D::Inverse(a);
    r.max_inverse_length = std::max(r.max_inverse_length, inv.size());
    r.max_inverse_diff = std::max(r.max_inverse_diff, D::Distance(FoldLeftward<D>(inv), a));
    const auto derived = DerivedCombine<D>(a, b);
    const auto hand = D::Combine(a, b);
    const long double d = D::Distance(derived, hand);
    if (d > r.max_combine_diff && d > tolerance && r.counterexample.empty()) {
      std::ostringstream os;
      os << "derived and hand-written combine differ: seed " << seed << ", trial " << t
         << "\n  a = " << D::Describe(a) << ", b = " << D::Describe(b)
         << "\n  h(h°(a) ++ h°(b)) = " << D::Describe(derived)
         << "\n  Combine(a, b)     = " << D::Describe(hand);
      r.counterexample = os.str();
    }
    r.max_combine_diff = std::max(r.max_combine_diff, d);
  }
  return r;
}

}  // namespace carrier
