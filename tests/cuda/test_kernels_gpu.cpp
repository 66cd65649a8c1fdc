// kernels/cuda on a GPU: every block/grid reduction equals ReplayOracle(BuildTree(schedule, n)) bit
// for bit, for every carrier and storage/compute pair compiled, every schedule variant, n around
// warp, block and tile sizes and 2^20 + 7, special values included; schedules a kernel must
// refuse are refused; the attention kernel equals its CPU replay (portable exp) bit for bit,
// stays within a few ulps of it with the fast exp, and matches long double attention to the
// input precision's tolerance.
//
// Exits 77 (CTest: Skipped) when no GPU is present. CARRIER_TEST_MULTIPLIER scales the seeds.
#define CATCH_CONFIG_RUNNER
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/attention.hpp"
#include "core/replay_oracle.hpp"
#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/reduce.hpp"
#include "support/test_support.hpp"

namespace {

using carrier::BFloat16;
using carrier::Half;

template <class S>
std::string StorageName() {
  if constexpr (std::is_same_v<S, Half>) return "fp16";
  if constexpr (std::is_same_v<S, BFloat16>) return "bf16";
  if constexpr (std::is_same_v<S, float>) return "fp32";
  return "fp64";
}

// n values x ~ N(0, 4) (or uniform in [-1, 1) + 100 for mode 1), stored as S; mode 2 sprinkles
// -0, +-inf and one NaN; mode 3 is all -inf.
template <class S>
std::vector<S> Inputs(std::size_t n, std::uint64_t seed, int mode) {
  carrier::test::Rng rng(seed);
  std::vector<S> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    double v = mode == 1 ? 100 + rng.Uniform(-1, 1) : rng.Normal() * 4;
    if (mode == 2) {
      const std::uint64_t r = rng.Below(50);
      if (r == 0) v = -0.0;
      if (r == 1) v = std::numeric_limits<double>::infinity();
      if (r == 2) v = -std::numeric_limits<double>::infinity();
    }
    if (mode == 3) v = -std::numeric_limits<double>::infinity();
    x[i] = S(v);
  }
  if (mode == 2 && n > 3) x[n / 3] = S(std::numeric_limits<double>::quiet_NaN());
  return x;
}

template <class C, class S>
std::vector<typename C::Input> CarrierInputs(const std::vector<S>& x) {
  using T = typename C::Scalar;
  std::vector<typename C::Input> in(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if constexpr (std::is_same_v<typename C::Input, carrier::IndexedValue<T>>) {
      in[i] = {static_cast<T>(x[i]), static_cast<std::int64_t>(i)};
    } else {
      in[i] = static_cast<T>(x[i]);
    }
  }
  return in;
}

template <class F>
void PrintField(std::ostream& os, const F& f) {
  if constexpr (std::is_array_v<F>) {
    for (std::size_t i = 0; i < std::extent_v<F>; ++i) PrintField(os, f[i]);
  } else if constexpr (std::is_integral_v<F>) {
    os << f;
  } else {
    os << carrier::test::Exact(static_cast<double>(f));
  }
}

template <class C>
std::string StateText(const typename C::State& s) {
  std::ostringstream os;
  std::apply([&](const auto&... f) { ((os << " ", PrintField(os, f)), ...); }, s.Tie());
  return os.str();
}

// Whether the kernel must refuse (C, schedule, n) (reduce.hpp's rules that depend on C).
template <class C>
bool MustRefuse(const carrier::CudaSchedule& s, std::uint64_t n) {
  if (s.warp == carrier::CudaWarpTree::kXorButterfly && !C::kBitwiseCommutative) return true;
  if (s.lift && !carrier::HasTileLift<C>) return true;
  return !C::kCommutative && s.arrangement == carrier::CudaArrangement::kStriped &&
         n > s.GridBlocks(n) * s.threads;
}

struct Counts {
  std::size_t equal = 0, refused = 0;
};

template <class C, class S>
void CheckReduce(const std::string& text, std::size_t n, std::uint64_t seed, int mode,
                 Counts& counts) {
  const carrier::Schedule schedule = carrier::ParseSchedule(text);
  const std::vector<S> x = Inputs<S>(n, seed, mode);
  INFO("carrier " << C::kName << ", storage " << StorageName<S>() << ", compute "
                  << (std::is_same_v<typename C::Scalar, float> ? "fp32" : "fp64") << ", schedule "
                  << text << ", n = " << n << ", seed " << seed << ", mode " << mode);
  const carrier::CudaSchedule& cuda = schedule.As<carrier::orders::CudaParams>().cuda;
  if (MustRefuse<C>(cuda, n)) {
    CHECK_THROWS_AS((carrier::cuda::Reduce<C, S>(x.data(), n, cuda)), carrier::ScheduleError);
    ++counts.refused;
    return;
  }
  const auto device = carrier::cuda::Reduce<C, S>(x.data(), n, cuda);
  const auto in = CarrierInputs<C>(x);
  const auto replay = carrier::ReplayOracle<C>(carrier::BuildTree(schedule, n),
                                               std::span<const typename C::Input>(in));
  INFO("device:" << StateText<C>(device) << "\nreplay:" << StateText<C>(replay));
  REQUIRE(carrier::StatesBitEqual<C>(device, replay));
  ++counts.equal;
}

template <class S, class T>
void CheckAllCarriers(const std::string& text, std::size_t n, std::uint64_t seed, int mode,
                      Counts& counts) {
  CheckReduce<carrier::Sum<T>, S>(text, n, seed, mode, counts);
  CheckReduce<carrier::Compensated<T>, S>(text, n, seed, mode, counts);
  CheckReduce<carrier::Max<T>, S>(text, n, seed, mode, counts);
  CheckReduce<carrier::ArgMax<T>, S>(text, n, seed, mode, counts);
  CheckReduce<carrier::cuda::LsePortable<T>, S>(text, n, seed, mode, counts);
  CheckReduce<carrier::Welford<T>, S>(text, n, seed, mode, counts);
  CheckReduce<carrier::ScaledNorm2<T>, S>(text, n, seed, mode, counts);
}

std::vector<std::string> Variants(int threads, int items) {
  std::vector<std::string> out;
  for (const char* arrange : {"blocked", "striped"})
    for (const char* warp : {"shfl", "xor"})
      for (const char* block : {"seq", "pairwise"})
        for (const char* grid : {"auto", "5"}) {
          const std::string base = "cuda:" + std::to_string(threads) + ":" + std::to_string(items) +
                                   ":" + arrange + ":" + warp + ":" + block + ":" + grid;
          out.push_back(base);
          if (std::string(grid) == "auto") out.push_back(base + ":lift");
        }
  return out;
}

template <class S, class T>
void SweepTypes(Counts& counts) {
  for (int threads : {32, 256, 1024}) {
    for (int items : {1, 4}) {
      const std::size_t tile = static_cast<std::size_t>(threads) * items;
      for (const auto& text : Variants(threads, items))
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{31}, std::size_t{32},
                              std::size_t{33}, tile - 1, tile, tile + 1, 3 * tile + 5})
          for (int mode : {0, 2}) CheckAllCarriers<S, T>(text, n, 4000 + n, mode, counts);
    }
  }
  // Large n: a few schedules, both the one-tile-per-thread grid and a persistent grid.
  for (const char* text :
       {"cuda:256:4:blocked:shfl:seq:auto", "cuda:256:8:striped:shfl:pairwise:264",
        "cuda:1024:16:blocked:xor:pairwise:auto:lift", "cuda:32:1:striped:xor:seq:7"})
    CheckAllCarriers<S, T>(text, (std::size_t{1} << 20) + 7, 77, 1, counts);
  // All -inf (log-sum-exp's -inf, never NaN), through a grid pass.
  CheckAllCarriers<S, T>("cuda:256:2:blocked:shfl:pairwise:auto", 5000, 5, 3, counts);
}

}  // namespace

TEST_CASE("every cuda reduction equals the replay of its schedule", "[gpu]") {
  Counts counts;
  SweepTypes<Half, float>(counts);
  SweepTypes<BFloat16, float>(counts);
  SweepTypes<float, float>(counts);
  SweepTypes<float, double>(counts);
  SweepTypes<double, double>(counts);
  std::cout << "device: " << carrier::cuda::DeviceName()
            << "\nreductions bit-equal to replay: " << counts.equal
            << ", refused as required: " << counts.refused << "\n";
}

namespace {

template <class S>
std::vector<S> AttentionInputs(std::size_t elems, std::uint64_t seed, double scale) {
  carrier::test::Rng rng(seed);
  std::vector<S> x(elems);
  for (auto& v : x) v = S(rng.Normal() * scale);
  return x;
}

// softmax(q k^T / sqrt(d)) v in long double, row i, over the keys the row sees.
template <class S>
std::vector<long double> ExactRow(const std::vector<S>& q, const std::vector<S>& k,
                                  const std::vector<S>& v, const carrier::AttentionShape& sh,
                                  std::size_t i) {
  const std::vector<double> scores = carrier::AttentionScoresExact(q.data(), k.data(), sh, i);
  long double m = -INFINITY;
  for (double s : scores) m = std::max<long double>(m, s);
  std::vector<long double> o(sh.head_dim, 0.0L);
  long double l = 0;
  for (std::size_t j = 0; j < scores.size(); ++j) {
    if (scores[j] == -INFINITY) continue;
    const long double p = std::exp(static_cast<long double>(scores[j]) - m);
    l += p;
    for (std::size_t c = 0; c < sh.head_dim; ++c)
      o[c] += p * static_cast<long double>(static_cast<double>(v[j * sh.head_dim + c]));
  }
  for (auto& x : o) x /= l;
  return o;
}

template <class S>
void CheckAttention(const carrier::AttentionShape& sh, std::uint64_t seed, double& worst_fast,
                    double& worst_exact, std::size_t& equal) {
  const std::size_t elems = sh.seq_len * sh.head_dim;
  const auto q = AttentionInputs<S>(elems, seed, 1.0);
  const auto k = AttentionInputs<S>(elems, seed + 1, 1.0);
  const auto v = AttentionInputs<S>(elems, seed + 2, 1.0);
  INFO("storage " << StorageName<S>() << ", seq_len " << sh.seq_len << ", head_dim " << sh.head_dim
                  << ", block_r " << sh.block_r << ", block_c " << sh.block_c << ", causal "
                  << sh.causal << ", seed " << seed);
  const auto gpu =
      carrier::cuda::AttentionForward<S, carrier::PortableExp>(q.data(), k.data(), v.data(), sh);
  const auto cpu = carrier::AttentionForwardReplay<float, carrier::PortableExp>(q.data(), k.data(),
                                                                                v.data(), sh);
  REQUIRE(gpu.size() == cpu.size());
  for (std::size_t e = 0; e < elems; ++e) {
    INFO("output " << e << ": gpu " << carrier::test::Exact(gpu[e]) << ", replay "
                   << carrier::test::Exact(cpu[e]));
    REQUIRE(carrier::ScalarTraits<float>::BitEqual(gpu[e], cpu[e]));
  }
  ++equal;
  const auto fast =
      carrier::cuda::AttentionForward<S, carrier::FastExp>(q.data(), k.data(), v.data(), sh);
  const auto fast_cpu =
      carrier::AttentionForwardReplay<float, carrier::FastExp>(q.data(), k.data(), v.data(), sh);
  for (std::size_t i = 0; i < sh.seq_len; ++i) {
    const auto exact = ExactRow(q, k, v, sh, i);
    for (std::size_t c = 0; c < sh.head_dim; ++c) {
      const std::size_t e = i * sh.head_dim + c;
      // Outputs are weighted means of |v| ~ 1 values: an absolute scale of 1 is the right
      // yardstick (componentwise relative error is unbounded where o_j cancels to ~0).
      worst_fast = std::max(worst_fast, std::fabs(double(fast[e]) - double(fast_cpu[e])));
      worst_exact = std::max(worst_exact, std::fabs(double(cpu[e]) - double(exact[c])));
    }
  }
}

}  // namespace

TEST_CASE("the attention kernel equals its replay and matches long double attention", "[gpu]") {
  double worst_fast = 0, worst_exact = 0;
  std::size_t equal = 0;
  for (std::size_t d : {64u, 128u})
    for (std::size_t bc : {16u, 32u, 64u, 128u})
      for (std::size_t br : {32u, 64u})
        for (bool causal : {false, true})
          for (std::size_t n : {1u, 17u, 64u, 200u}) {
            const carrier::AttentionShape sh{n, d, br, bc, causal};
            if (carrier::AttentionKernelSharedBytes(sh) > 160 * 1024) continue;
            CheckAttention<Half>(sh, 900 + n, worst_fast, worst_exact, equal);
            CheckAttention<BFloat16>(sh, 900 + n, worst_fast, worst_exact, equal);
          }
  std::cout << "attention shapes bit-equal to replay: " << equal
            << "; worst |fast gpu - fast replay| " << worst_fast
            << "; worst |portable - long double| " << worst_exact << "\n";
  // fp32 compute over <= 200 keys with |v| ~ 1: a few hundred fp32 roundings per output at most.
  CHECK(worst_exact < 2e-5);
  CHECK(worst_fast < 2e-5);
}

int main(int argc, char** argv) {
  if (carrier::cuda::DeviceCount() == 0) {
    std::cout << "no CUDA device: skipped\n";
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
