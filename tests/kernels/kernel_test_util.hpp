// tests/kernels/kernel_test_util.hpp: what the SIMD and OpenMP kernel tests share: the sizes
// around a lane count, input generators with special values, storage conversion, state printing.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "core/carrier.hpp"
#include "precision/bfloat16.hpp"
#include "precision/half.hpp"
#include "support/test_support.hpp"

namespace carrier::test {

template <class TS>
const char* StorageName() {
  if constexpr (std::is_same_v<TS, float>)
    return "fp32";
  else if constexpr (std::is_same_v<TS, double>)
    return "fp64";
  else if constexpr (std::is_same_v<TS, Half>)
    return "fp16";
  else
    return "bf16";
}

template <class TS>
TS ToStorage(double v) {
  if constexpr (std::is_same_v<TS, float> || std::is_same_v<TS, double>) {
    return static_cast<TS>(v);
  } else {
    return TS(v);
  }
}

template <class TS>
auto ToComputeValue(TS v) {
  if constexpr (std::is_same_v<TS, float> || std::is_same_v<TS, double>) {
    return v;
  } else {
    return v.ToFloat();
  }
}

// n in {0, 1, 2, 3, 7, K-1, K, K+1, 2K+3, 2^p - 1, 2^p, 2^p + 1 (p = 4..max_pow), tile multiples
// +-1, and `randoms` random sizes below 2^max_pow}.
inline std::vector<std::size_t> Sizes(std::size_t k, std::size_t tile_elems, int max_pow,
                                      int randoms, Rng& rng) {
  std::vector<std::size_t> n = {0, 1, 2, 3, 7, k - 1, k, k + 1, 2 * k + 3};
  for (int p = 4; p <= max_pow; ++p)
    for (std::size_t d : {std::size_t{0}, std::size_t{1}, std::size_t{2}})
      n.push_back((std::size_t{1} << p) + d - 1);
  if (tile_elems > 1)
    for (std::size_t m : {1, 2, 3})
      for (std::size_t d : {std::size_t{0}, std::size_t{1}, std::size_t{2}})
        n.push_back(m * tile_elems + d - 1);
  for (int i = 0; i < randoms; ++i) n.push_back(rng.Below(std::size_t{1} << max_pow));
  return n;
}

// Input kinds: 0 normal(0,1)*scale; 1 the same with NaN, +inf, -inf, +-0 sprinkled; 2 all -inf
// with a few zeros; 3 wide range (exponents spread, for exp and norm2 rescaling); 4 ties and
// signed zeros (small integers); 5 one +inf among finite values.
inline constexpr int kInputKinds = 6;

inline std::vector<double> MakeInput(int kind, std::size_t n, Rng& rng) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (kind) {
      case 0:
        x[i] = rng.Normal() * 3.0;
        break;
      case 1: {
        const std::uint64_t r = rng.Below(40);
        x[i] = r == 0   ? std::nan("")
               : r == 1 ? inf
               : r == 2 ? -inf
               : r == 3 ? -0.0
               : r == 4 ? 0.0
                        : rng.Normal() * 10.0;
        break;
      }
      case 2:
        x[i] = rng.Below(50) == 0 ? (rng.Below(2) ? 0.0 : -0.0) : -inf;
        break;
      case 3:
        x[i] = rng.Uniform(-130.0, 20.0) * (rng.Below(8) == 0 ? 1e-3 : 1.0);
        break;
      case 4:
        x[i] = static_cast<double>(static_cast<int>(rng.Below(5)) - 2) *
               (rng.Below(2) ? 1.0 : -1.0) * (rng.Below(3) == 0 ? 0.0 : 1.0);
        break;
      default:
        x[i] = rng.Uniform(-5.0, 5.0);
        break;
    }
  }
  if (kind == 5 && n > 0) x[rng.Below(n)] = inf;
  return x;
}

template <Carrier C>
std::string StateText(const typename C::State& s) {
  std::ostringstream os;
  os << "(";
  bool first = true;
  std::apply(
      [&](const auto&... f) {
        ((os << (first ? "" : ", ") <<
          [&] {
            std::ostringstream o;
            if constexpr (std::is_integral_v<std::decay_t<decltype(f)>>) {
              o << f;
            } else {
              o << std::hexfloat << static_cast<double>(f);
            }
            first = false;
            return o.str();
          }()),
         ...);
      },
      s.Tie());
  os << ")";
  return os.str();
}

}  // namespace carrier::test
