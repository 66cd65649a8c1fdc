// The kernel-faithful attention model (precision/attention_model.hpp): in fp64 every algorithm
// is the exact softmax(QK^T/sqrt(d))V to rounding level; Br changes no bit; the round-to-odd
// path agrees bit for bit with native fp32; rounding roles change the result the way the
// contract says; bad shapes and a missing matrix unit are one-line errors; FlashAttention-4's
// lazy rescale and rounded reciprocal give the hand-derived values.
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "precision/attention_model.hpp"

using namespace carrier;

namespace {

struct Qkv {
  std::vector<double> q, k, v;
};

Qkv RandomQkv(std::size_t n, std::size_t d, std::uint64_t seed, const Format& in) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> nd(0.0, 1.0);
  Qkv x;
  for (auto* t : {&x.q, &x.k, &x.v}) {
    std::vector<double> raw(n * d);
    for (double& r : raw) r = nd(rng);
    *t = StoreAttentionInputs(raw, in);
  }
  return x;
}

// softmax(QK^T / sqrt(d)) V in long double, the textbook three-pass way.
std::vector<double> Naive(const Qkv& x, std::size_t n, std::size_t d) {
  std::vector<double> out(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<long double> s(n);
    long double m = -INFINITY;
    for (std::size_t j = 0; j < n; ++j) {
      long double dot = 0;
      for (std::size_t c = 0; c < d; ++c) dot += (long double)x.q[i * d + c] * x.k[j * d + c];
      s[j] = dot / std::sqrt((long double)d);
      m = std::max(m, s[j]);
    }
    long double sum = 0;
    for (auto& e : s) sum += (e = std::exp(e - m));
    for (std::size_t c = 0; c < d; ++c) {
      long double o = 0;
      for (std::size_t j = 0; j < n; ++j) o += s[j] * x.v[j * d + c];
      out[i * d + c] = (double)(o / sum);
    }
  }
  return out;
}

AttentionModelSpec Spec(std::size_t n, std::size_t d, std::size_t br, std::size_t bc,
                        AttentionAlgorithm a, const std::string& policy) {
  AttentionModelSpec s;
  s.seq_len = n;
  s.head_dim = d;
  s.block_r = br;
  s.block_c = bc;
  s.algorithm = a;
  s.policy = ParsePrecisionPolicy(policy);
  return s;
}

}  // namespace

TEST_CASE("attention model: in fp64 all three algorithms are the exact attention", "[fast]") {
  const std::size_t n = 100, d = 16;
  const Qkv x = RandomQkv(n, d, 7, Fp64());
  const auto naive = Naive(x, n, d);
  for (auto a :
       {AttentionAlgorithm::kFa2, AttentionAlgorithm::kFa1, AttentionAlgorithm::kBaseline}) {
    for (std::size_t bc : {1, 7, 32, 100, 256}) {
      const auto o = AttentionModel(x.q, x.k, x.v, Spec(n, d, 16, bc, a, "in=fp64"));
      const Deviation dev = MeasureDeviation(o, naive);
      INFO("algorithm " << AttentionAlgorithmName(a) << " Bc " << bc << " n " << n << " d " << d
                        << " seed 7: max deviation from long double " << dev.max);
      CHECK(dev.max < 1e-13);
    }
  }
}

TEST_CASE("attention model: the query-row block Br changes no bit", "[fast]") {
  const std::size_t n = 64, d = 8;
  const Qkv x = RandomQkv(n, d, 11, BF16());
  for (auto a : {AttentionAlgorithm::kFa2, AttentionAlgorithm::kFa1}) {
    const auto ref = AttentionModel(x.q, x.k, x.v, Spec(n, d, 1, 16, a, "all-bf16"));
    for (std::size_t br : {3, 16, 64, 128}) {
      INFO("algorithm " << AttentionAlgorithmName(a) << " Br " << br << " Bc 16 all-bf16 seed 11");
      CHECK(AttentionModel(x.q, x.k, x.v, Spec(n, d, br, 16, a, "all-bf16")) == ref);
    }
  }
}

TEST_CASE("attention model: round-to-odd arithmetic equals native fp32 bit for bit", "[fast]") {
  // custom:p=24,emin=-126,emax=127 is fp32's value set, computed through the generic
  // (fp64 round-to-odd, then one rounding) path instead of float arithmetic.
  const std::size_t n = 48, d = 16;
  const Qkv x = RandomQkv(n, d, 3, BF16());
  const std::string f32 = "custom:p=24,emin=-126,emax=127";
  for (auto a :
       {AttentionAlgorithm::kFa2, AttentionAlgorithm::kFa1, AttentionAlgorithm::kBaseline}) {
    const auto native = AttentionModel(x.q, x.k, x.v, Spec(n, d, 16, 16, a, "in=bf16,acc=fp32"));
    const auto generic = AttentionModel(x.q, x.k, x.v, Spec(n, d, 16, 16, a, "in=bf16,acc=" + f32));
    INFO("algorithm " << AttentionAlgorithmName(a) << " n " << n << " d " << d << " seed 3");
    CHECK(native == generic);
  }
}

TEST_CASE("attention model: roles round where the contract says", "[fast]") {
  const std::size_t n = 256, d = 32;
  const Qkv x = RandomQkv(n, d, 5, BF16());
  const auto golden =
      AttentionModel(x.q, x.k, x.v, Spec(n, d, 64, 64, AttentionAlgorithm::kBaseline, "in=fp64"));
  auto dev = [&](AttentionAlgorithm a, const std::string& pol) {
    return MeasureDeviation(AttentionModel(x.q, x.k, x.v, Spec(n, d, 64, 64, a, pol)), golden);
  };
  // The output role alone: with fp32 everywhere else and out=bf16, every output is the golden
  // value rounded to bf16 up to the fp32 error, so the deviation is at most half a bf16 ulp of
  // the largest output plus a little.
  const Deviation out_only = dev(AttentionAlgorithm::kFa2, "in=bf16,acc=fp32,out=bf16");
  const Deviation fp32 = dev(AttentionAlgorithm::kFa2, "in=bf16,acc=fp32");
  const Deviation all_bf16 = dev(AttentionAlgorithm::kFa2, "all-bf16");
  double max_out = 0;
  for (double g : golden) max_out = std::max(max_out, std::fabs(g));
  INFO("fp32 " << fp32.max << " out=bf16 " << out_only.max << " all-bf16 " << all_bf16.max
               << " max|O| " << max_out << " (n 256 d 32 Bc 64 seed 5)");
  CHECK(fp32.max < 1e-5);
  CHECK(out_only.max <= max_out * std::ldexp(1.0, -8) + 1e-5);
  CHECK(out_only.max > fp32.max);
  CHECK(all_bf16.max > out_only.max);
  // A state kept in bf16 rounds l and O every tile: more deviation with more tiles.
  const Deviation state16 = dev(AttentionAlgorithm::kFa2, "in=bf16,acc=fp32,state=bf16");
  CHECK(state16.max > fp32.max);
}

TEST_CASE("attention model: bad shapes and inputs a matrix unit cannot take are errors", "[fast]") {
  const Qkv x = RandomQkv(4, 2, 1, Fp32());
  auto msg = [&](AttentionModelSpec s) {
    try {
      AttentionModel(x.q, x.k, x.v, s);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(msg(Spec(4, 2, 0, 2, AttentionAlgorithm::kFa2, "in=fp32")).find("positive") !=
        std::string::npos);
  CHECK(msg(Spec(5, 2, 2, 2, AttentionAlgorithm::kFa2, "in=fp32")).find("seq_len x head_dim") !=
        std::string::npos);
  // fp32 inputs are not the f16 values an Ampere f16 instruction multiplies.
  CHECK(msg(Spec(4, 2, 2, 2, AttentionAlgorithm::kFa2, "in=fp32,mma=ampere")).find("not a") !=
        std::string::npos);
  CHECK(msg(Spec(4, 2, 2, 2, AttentionAlgorithm::kFa2, "in=fp64,acc=fp64@rz")).find("rne") !=
        std::string::npos);
  CHECK_THROWS_AS(ParseAttentionAlgorithm("fa3"), std::invalid_argument);
}

TEST_CASE("attention model: kernel presets run their products through the matrix unit", "[fast]") {
  const std::size_t n = 128, d = 64;
  const Qkv x = RandomQkv(n, d, 9, BF16());
  const auto golden =
      AttentionModel(x.q, x.k, x.v, Spec(n, d, 64, 64, AttentionAlgorithm::kBaseline, "in=fp64"));
  // The same policy with IEEE fp32 products and with Ampere's fused k8 steps (F = 24, RZ):
  // different bits, the same accuracy class (both dominated by P and O in bf16).
  const std::string ieee = "in=bf16,acc=fp32,p=bf16,out=bf16";
  const auto a = AttentionModel(x.q, x.k, x.v, Spec(n, d, 64, 64, AttentionAlgorithm::kFa2, ieee));
  const auto m = AttentionModel(x.q, x.k, x.v,
                                Spec(n, d, 64, 64, AttentionAlgorithm::kFa2, "fa2-ampere-bf16"));
  const Deviation da = MeasureDeviation(a, golden), dm = MeasureDeviation(m, golden);
  INFO("IEEE fp32 products: max " << da.max << "; mma ampere-bf16: max " << dm.max
                                  << " (n 128 d 64 Bc 64 seed 9)");
  CHECK(a != m);
  CHECK(dm.max < 4 * da.max + 1e-6);
  CHECK(dm.max > 0);
  // An explicit matrix_dot is used as given: a unit that adds nothing leaves O = 0.
  AttentionModelSpec zero = Spec(n, d, 64, 64, AttentionAlgorithm::kFa2, "fa2-hopper-bf16");
  zero.matrix_dot = [](double c, const double*, const double*, std::size_t) { return c; };
  for (double o : AttentionModel(x.q, x.k, x.v, zero)) CHECK(o == 0.0);
}

namespace {

AttentionModelSpec ArithSpec(std::size_t n, std::size_t d, std::size_t bc, AttentionAlgorithm a,
                             const std::string& text) {
  const AttentionArithmetic ar = ParseAttentionArithmetic(text);
  AttentionModelSpec s = Spec(n, d, 16, bc, a, "in=fp64");
  s.policy = ar.policy;
  s.elementwise = ar.elementwise;
  return s;
}

}  // namespace

TEST_CASE("attention arithmetic: torch-FORMAT and ew= parse to the roles the contract names",
          "[fast]") {
  const AttentionArithmetic t = ParseAttentionArithmetic("torch-bf16");
  INFO("torch-bf16 -> " << ToString(t.policy));
  CHECK(t.policy == ParsePrecisionPolicy("in=bf16,acc=fp32,state=bf16,s=bf16,p=bf16,out=bf16"));
  REQUIRE(t.elementwise.has_value());
  CHECK(t.elementwise->format == BF16());
  // Wider than fp32: the format is its own accumulate type.
  const AttentionArithmetic t64 = ParseAttentionArithmetic("torch-fp64");
  CHECK(t64.policy == ParsePrecisionPolicy("in=fp64"));
  // ew= is split off anywhere but the front; the rest is the policy (presets included).
  const AttentionArithmetic e = ParseAttentionArithmetic("fa2-ampere-bf16,ew=fp16@rz");
  CHECK(e.policy == ParsePrecisionPolicy("fa2-ampere-bf16"));
  REQUIRE(e.elementwise.has_value());
  CHECK(e.elementwise->format == Fp16());
  CHECK(e.elementwise->rounding == Rounding::kTowardZero);
  CHECK_FALSE(ParseAttentionArithmetic("all-bf16").elementwise.has_value());
  auto msg = [](const std::string& text) {
    try {
      ParseAttentionArithmetic(text);
    } catch (const std::invalid_argument& ex) {
      return std::string(ex.what());
    }
    return std::string("(accepted)");
  };
  CHECK(msg("torch-bf17").find("bf17") != std::string::npos);
  CHECK(msg("ew=bf16,in=fp16").find("first item") != std::string::npos);
  CHECK(msg("in=bf16,ew=bf16,ew=fp16").find("twice") != std::string::npos);
  CHECK(msg("in=bf16,ew=bf17").find("ew=bf17") != std::string::npos);
  CHECK(msg("in=bf16,ew=bf16@zz").find("ew=bf16@zz") != std::string::npos);
}

TEST_CASE("attention model: tensor-op granularity rounds each tensor op and nothing else",
          "[fast]") {
  const std::size_t n = 96, d = 16;
  const Qkv x = RandomQkv(n, d, 21, BF16());
  const auto golden =
      AttentionModel(x.q, x.k, x.v, Spec(n, d, 16, 16, AttentionAlgorithm::kBaseline, "in=fp64"));
  for (auto a : {AttentionAlgorithm::kFa1, AttentionAlgorithm::kFa2}) {
    const std::string alg = AttentionAlgorithmName(a);
    // In fp64 the tensor-op form is still the exact attention to rounding level.
    const Deviation d64 = MeasureDeviation(
        AttentionModel(x.q, x.k, x.v, ArithSpec(n, d, 16, a, "torch-fp64")), golden);
    INFO(alg << " torch-fp64 max " << d64.max << " (n 96 d 16 Bc 16 seed 21)");
    CHECK(d64.max < 1e-13);
    // ew in bf16 rounds more than the same roles without it: different bits, more deviation.
    const auto plain = AttentionModel(
        x.q, x.k, x.v,
        ArithSpec(n, d, 16, a, "in=bf16,acc=fp32,state=bf16,s=bf16,p=bf16,out=bf16"));
    const auto torch = AttentionModel(x.q, x.k, x.v, ArithSpec(n, d, 16, a, "torch-bf16"));
    const Deviation dp = MeasureDeviation(plain, golden), dt = MeasureDeviation(torch, golden);
    INFO(alg << " without ew: mean " << dp.mean << "; torch-bf16: mean " << dt.mean);
    CHECK(plain != torch);
    CHECK(dt.mean > dp.mean);
  }
  // ew equal to acc (fp32) rounds nothing new in FA1, whose operation order is unchanged.
  CHECK(
      AttentionModel(x.q, x.k, x.v, ArithSpec(n, d, 16, AttentionAlgorithm::kFa1, "torch-fp32")) ==
      AttentionModel(x.q, x.k, x.v, ArithSpec(n, d, 16, AttentionAlgorithm::kFa1, "in=fp32")));
  // The baseline is one framework softmax and two matmuls: ew changes no bit of it.
  CHECK(AttentionModel(x.q, x.k, x.v,
                       ArithSpec(n, d, 16, AttentionAlgorithm::kBaseline, "eager-bf16,ew=bf16")) ==
        AttentionModel(x.q, x.k, x.v,
                       ArithSpec(n, d, 16, AttentionAlgorithm::kBaseline, "eager-bf16")));
}

TEST_CASE("attention model: FlashAttention-4's lazy rescale and rounded reciprocal", "[fast]") {
  // Two keys in tiles of one (d = 1, so the score is the key; both queries are 1, output row 0):
  // s = (0, delta), v = (0, 1). Every role fp64 except those named; the exact answer is
  // e^delta / (1 + e^delta).
  auto run = [](double delta, const std::string& policy) {
    const std::vector<double> q = {1.0, 1.0}, k = {0.0, delta}, v = {0.0, 1.0};
    return AttentionModel(q, k, v, Spec(2, 1, 1, 1, AttentionAlgorithm::kFa2, policy))[0];
  };
  // delta = 1 is 1.44 log2 units: under rescale=8 the second tile keeps m = 0, so its P value
  // is e^1 = 2.718.., which e4m3 rounds to 2.75: O = 2.75, l = 1 + e, result 2.75 / (1 + e).
  // Rescaling every tile (rescale absent) makes that P value exp(0) = 1, exact in e4m3.
  const double e = std::exp(1.0);
  const double lazy = run(1.0, "in=fp64,p=fp8e4m3,rescale=8");
  const double eager = run(1.0, "in=fp64,p=fp8e4m3");
  // delta = 5 (7.2 log2 units) still keeps m: e^5 = 148.41.. rounds to 144 in e4m3 (spacing 16
  // above 128); delta = 6 (8.66 units) rescales: exact again.
  const double lazy5 = run(5.0, "in=fp64,p=fp8e4m3,rescale=8");
  const double lazy6 = run(6.0, "in=fp64,p=fp8e4m3,rescale=8");
  std::cout << "lazy rescale, delta 1: " << lazy << " (eager " << eager << "), delta 5: " << lazy5
            << ", delta 6: " << lazy6 << "\n";
  CHECK(std::fabs(lazy - 2.75 / (1 + e)) < 1e-15);
  CHECK(std::fabs(eager - e / (1 + e)) < 1e-15);
  CHECK(std::fabs(lazy5 - 144 / (1 + std::exp(5.0))) < 1e-15);
  CHECK(std::fabs(lazy6 - std::exp(6.0) / (1 + std::exp(6.0))) < 1e-15);
  // In fp64 the lazy rescale is the same mathematics: the exact attention.
  const std::size_t n = 100, d = 16;
  const Qkv x = RandomQkv(n, d, 7, Fp64());
  const auto o = AttentionModel(x.q, x.k, x.v,
                                Spec(n, d, 16, 7, AttentionAlgorithm::kFa2, "in=fp64,rescale=8"));
  CHECK(MeasureDeviation(o, Naive(x, n, d)).max < 1e-13);
  // recip=bf16: O (= 1 after the rescale) times 1/l rounded to bf16: l = 1 + e^-1, 1/l =
  // 0.73105.. -> 187 * 2^-8 = 0.73046875.
  CHECK(run(1.0, "in=fp64,recip=bf16") == 0.73046875);
  CHECK(run(1.0, "in=fp64,recip=fp64") == run(1.0, "in=fp64"));
  // The text form round-trips; a negative threshold is refused.
  const PrecisionPolicy p = ParsePrecisionPolicy("in=bf16,acc=fp32,rescale=8,recip=fp32@rz");
  CHECK(ToString(p).find(",rescale=8,recip=fp32@rz") != std::string::npos);
  CHECK(ParsePrecisionPolicy(ToString(p)) == p);
  CHECK(ParsePrecisionPolicy("fa4-blackwell-bf16").rescale == 8.0);
  CHECK(ParsePrecisionPolicy("fa4-blackwell-fp8").rescale == 0.0);
  CHECK(ParsePrecisionPolicy("fa4-blackwell-fp8").pscale == 256.0);
  CHECK_THROWS_AS(ParsePrecisionPolicy("in=bf16,rescale=-1"), std::invalid_argument);
}
