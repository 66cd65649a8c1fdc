// precision/dot_split.cpp: XLA's split dot algorithms (dot_split.hpp).
#include "precision/dot_split.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace carrier {

namespace {

// x with the low `bits` bits of its fp32 encoding cleared: truncation toward zero to a format
// of 24 - bits significant bits with fp32's exponent range (bf16: 16, tf32: 13).
float ClearLowBits(float x, int bits) {
  std::uint32_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  u &= ~((std::uint32_t{1} << bits) - 1);
  float y = 0;
  std::memcpy(&y, &u, sizeof y);
  return y;
}

// x rounded to nearest even at 24 - bits significant bits, fp32's exponent range (subnormals
// and overflow to inf included: the carry runs into the exponent field); NaN stays NaN.
float RoundLowBitsNearestEven(float x, int bits) {
  if (std::isnan(x)) return x;
  std::uint32_t u = 0;
  std::memcpy(&u, &x, sizeof u);
  const std::uint32_t lsb = (u >> bits) & 1;
  u += ((std::uint32_t{1} << (bits - 1)) - 1) + lsb;
  u &= ~((std::uint32_t{1} << bits) - 1);
  float y = 0;
  std::memcpy(&y, &u, sizeof y);
  return y;
}

}  // namespace

const std::vector<DotSplitAlgorithm>& DotSplitAlgorithms() {
  // (lhs part, rhs part), 0 = hi, 1 = mid (or lo for two parts), 2 = lo.
  static const std::vector<DotSplitAlgorithm> algs = {
      {"bf16x3", "ALG_DOT_BF16_BF16_F32_X3", BF16(), 2, {{1, 0}, {0, 1}, {0, 0}}},
      {"bf16x6",
       "ALG_DOT_BF16_BF16_F32_X6",
       BF16(),
       3,
       {{1, 1}, {0, 2}, {2, 0}, {0, 1}, {1, 0}, {0, 0}}},
      {"bf16x9",
       "ALG_DOT_BF16_BF16_F32_X9",
       BF16(),
       3,
       {{2, 2}, {2, 1}, {1, 2}, {1, 1}, {0, 2}, {2, 0}, {0, 1}, {1, 0}, {0, 0}}},
      {"tf32x3", "ALG_DOT_TF32_TF32_F32_X3", TF32(), 2, {{1, 0}, {0, 1}, {0, 0}}},
  };
  return algs;
}

const DotSplitAlgorithm* FindDotSplit(std::string_view name) {
  for (const auto& a : DotSplitAlgorithms())
    if (a.name == name) return &a;
  return nullptr;
}

std::string DotSplitNames() {
  std::string s;
  for (const auto& a : DotSplitAlgorithms()) s += (s.empty() ? "" : " ") + a.name;
  return s;
}

std::array<float, kMaxDotSplitParts> SplitValue(float x, const DotSplitAlgorithm& alg) {
  const int cleared = 24 - alg.part.precision;  // bf16 16, tf32 13
  std::array<float, kMaxDotSplitParts> parts{};
  float rest = x;
  for (int i = 0; i + 1 < alg.parts; ++i) {
    parts[i] = ClearLowBits(rest, cleared);
    rest = rest - parts[i];  // exact: the cleared bits
  }
  parts[alg.parts - 1] = RoundLowBitsNearestEven(rest, cleared);
  return parts;
}

std::vector<std::vector<double>> SplitOperands(const std::vector<double>& x,
                                               const DotSplitAlgorithm& alg) {
  std::vector<std::vector<double>> out(alg.parts, std::vector<double>(x.size()));
  for (std::size_t k = 0; k < x.size(); ++k) {
    const std::array<float, kMaxDotSplitParts> p = SplitValue(static_cast<float>(x[k]), alg);
    for (int i = 0; i < alg.parts; ++i) out[i][k] = p[i];
  }
  return out;
}

float CombinePartialDots(const DotSplitAlgorithm& alg, const std::vector<float>& partial) {
  if (partial.size() != alg.products.size() || partial.empty())
    throw std::invalid_argument("split " + alg.name + ": " + std::to_string(partial.size()) +
                                " partial dots, expected " + std::to_string(alg.products.size()));
  float r = partial[0];
  for (std::size_t m = 1; m + 1 < partial.size(); ++m) r = r + partial[m];
  if (partial.size() == 1) return r;
  if (std::isnan(r)) r = 0;
  return r + partial.back();
}

}  // namespace carrier
