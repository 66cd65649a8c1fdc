// experiments/inputs/generators.hpp: deterministic input generators.
//
// A generator is named by text, DIST[:asc|:desc]: uniform01 (U[0,1)), uniform11 (U[-1,1)),
// normal (N(0,1)), lognormal (exp of N(0,1)); `:asc`/`:desc` sort the values; or ill:COND, a
// sum with condition number sum|x| / |sum x| near COND (Ogita, Rump & Oishi, "Accurate sum and
// dot product", SISC 26(6), 2005, Algorithm 6.1 GenDot, specialised to sums): the first half
// has random signs and exponents spread over [0, log2(COND)/2], the second half exponents
// falling linearly to 0, each minus the running exact sum so the total cancels; the values
// are rounded to the storage format as they are made (the cancellation is computed from the
// rounded values) and then shuffled; or offset:MU, MU + N(0,1) (a variance with condition
// number kappa = sqrt(1 + MU^2 / sigma^2) about sqrt(1 + MU^2), Chan, Golub & LeVeque 1983). The
// achieved condition number is reported by whoever computes the certified reference. Values come
// from a counter-based SplitMix64 stream of (seed, index), so value i does not depend on how
// many values are drawn or on the thread that draws them; normals use Box-Muller (the cosine
// branch) on the pair (2i, 2i+1), with the project's own log, cos(2 pi u) and exp
// (inputs/portable_math.hpp: IEEE +, -, *, /, sqrt and bit operations only), so the values are
// the same bits on every machine, compiler and libm. The values are doubles; callers round
// them to their storage type.
//
// Version: kGeneratorVersion names the streams (reported as `generator` by eval and in sweep
// manifests). carrier-gen/2 replaced carrier-gen/1 (glibc's log and cos): uniform01,
// uniform11, student, ill and p4016 streams are unchanged; normal, offset, lognormal, outliers
// and exact:/blockscaled: over them draw new values (README.md, "Input generators").
//
// exact[:DIST] (DIST as above, default normal): order-insensitive sums (RepDL's
// LinearOpCorrectness idea). The DIST values are rounded to the grid q = 2^(E - b), E the
// exponent of the largest |x| and b = p - 1 - ceil(log2 n) with p the storage format's
// precision (found by probing the storage rounding): then every value and every partial sum of
// any subset is a multiple of q below 2^(p + E - b), so every addition is exact and every
// merge order, kernel and backend gives the same bits, namely the exact sum. This holds for a
// compute format at least as precise as the storage format (not --acc narrower) and for sums
// (sum, kahan, dot's products are not on the grid). With b < 1 (n too large for the format)
// the generator refuses.
//
// blockscaled:B[:DIST] (DIST as above, default normal; B >= 1, or 0 for one block): per-block
// scaled quantisation, the FP8 recipe of DeepSeek-V3 (arXiv 2412.19437, section 3.3: 1x128
// activation tiles, scale = max|x| / 448 per tile). The DIST values are cut into consecutive
// blocks of B (B = 0: the whole vector, per-tensor scaling; the last block may be shorter);
// each block is divided by s = max|x_block| / M, M the storage format's largest finite value
// (probed through the storage rounding, as `exact:` probes its precision; 1 without one), so
// the block's largest value lands on M, and rounded to the storage format. The returned values
// are the quantised q (what a matrix unit multiplies); the scales are not returned: a scale
// multiplies a whole block's partial sum, so a relative accumulation error does not depend on
// it when it is a power of two (and only at the compute format's level otherwise). An all-zero
// block stays zero. The division runs in double (DeepSeek's kernel divides in fp32; the two
// differ only where x / s in fp32 lands on a rounding tie of the storage format).
//
// outliers[:P[:S[:C]]] (defaults P = 0.01, S = 100, C = n): LLM activation outlier channels
// (Dettmers et al., LLM.int8(), arXiv 2208.07339: a few hidden dimensions carry values ~100x
// the rest). N(0,1) values (the same draws as `normal` with the same seed); value i belongs to
// channel i mod C, and exactly round(P C) of the C channels, picked from the seed alone (the
// channels with the smallest SplitMix64 hashes of (seed, channel)), are multiplied by S. With
// C = n every position is its own channel; in a matmul's A (M x K, row-major) C = K makes the
// outliers whole K columns. C may not exceed n; picking the channels holds 8 bytes per channel.
//
// student[:NU] (default NU = 3): Student's t with NU > 0 degrees of freedom, heavy tailed
// (variance NU / (NU - 2) for NU > 2, infinite for NU <= 2), by Bailey's polar method
// (Mathematics of Computation 62(206), 1994): U, V uniform in (-1, 1) until W = U^2 + V^2 is
// in (0, 1], then T = U sqrt(NU (W^(-2/NU) - 1) / W). Value i's uniforms are a stream of its
// own (seed, i), so each value depends on (seed, i) alone.
//
// p4016 (P4016R0 Appendix K's demonstrators): a 64-bit LCG, state = state *
// 6364136223846793005 + 1442695040888963407, value (top 53 bits - 2^52) / 2^52 in [-1, 1),
// from state = --seed; the paper's seed is 0x243F6A8885A308D3 = 2611923443488327891.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace carrier::inputs {

struct GeneratorSpec {
  std::string dist;   // uniform01 | uniform11 | normal | lognormal | ill | offset | outliers | ...
  std::string order;  // "" | asc | desc
  double cond = 0;    // ill: target condition number (>= 1)
  double offset = 0;  // offset: the mean MU
  std::string base;   // exact, blockscaled: the generator whose values are transformed
  std::string text;   // as given

  std::uint64_t block = 0;     // blockscaled: the block length B (0: one block)
  double fraction = 0.01;      // outliers: the fraction P of channels scaled
  double scale = 100;          // outliers: the factor S
  std::uint64_t channels = 0;  // outliers: C (0: n, every position its own channel)
  double nu = 3;               // student: degrees of freedom
  const std::string& Text() const { return text; }
};

// One line of help per generator family: syntax, what it draws, an example that parses
// (tests/experiments/test_help_tables.cpp parses every example; `--gen` help and the unknown-
// generator error are built from this table: registry::ExpandHelp {GENERATORS}).
struct GeneratorDoc {
  const char* syntax;
  const char* what;
  const char* example;
};
inline constexpr GeneratorDoc kGeneratorDocs[] = {
    {"uniform01[:asc|:desc]", "U[0,1), optionally sorted", "uniform01"},
    {"uniform11[:asc|:desc]", "U[-1,1), optionally sorted", "uniform11:desc"},
    {"normal[:asc|:desc]", "N(0,1) (Box-Muller), optionally sorted", "normal"},
    {"lognormal[:asc|:desc]", "exp of N(0,1), optionally sorted", "lognormal:asc"},
    {"ill:COND", "a sum with condition number about COND (Ogita-Rump-Oishi GenDot)", "ill:1e8"},
    {"offset:MU", "MU + N(0,1): a variance with condition number about sqrt(1 + MU^2)",
     "offset:1e4"},
    {"exact[:DIST]", "DIST on a grid where every order's sum is exact (default normal)",
     "exact:uniform11"},
    {"blockscaled:B[:DIST]", "DIST scaled per block of B to the dtype's max, then rounded (FP8)",
     "blockscaled:128"},
    {"outliers[:P[:S[:C]]]",
     "N(0,1), round(P C) of C channels (value i: channel i mod C, default n) times S "
     "(default P 0.01, S 100): LLM outlier channels",
     "outliers:0.01:100"},
    {"student[:NU]", "Student's t with NU degrees of freedom (default 3): heavy tails",
     "student:3"},
    {"p4016", "P4016R0 Appendix K's LCG values in [-1,1) from --seed", "p4016"},
};

// Throws std::invalid_argument with a one-line message naming the bad part.
GeneratorSpec ParseGenerator(const std::string& text);

// `round` maps a double to the nearest value of the storage format (identity by default);
// every returned value is already rounded.
using RoundFn = double (*)(double, const void* context);
std::vector<double> Generate(const GeneratorSpec& spec, std::uint64_t n, std::uint64_t seed,
                             RoundFn round = nullptr, const void* context = nullptr);

// Whether `spec` draws each value from (seed, index) alone (uniform01, uniform11, normal,
// offset, lognormal, student, unsorted): then DrawPieces draws it a piece at a time.
bool Chunked(const GeneratorSpec& spec);
inline constexpr std::uint64_t kDrawPiece = 4096;
// A Chunked generator's values (Generate's, unrounded) drawn on the pass threads
// (precision/parallel_pass.hpp) a piece at a time, none of them held beyond its piece:
// piece(lo, values) gets values [lo, lo + size) (at most kDrawPiece) in a buffer of the calling
// thread's, valid for the call, and may change them in place. Calls come from several threads at
// once, each thread's in increasing lo; every index once. Throws std::invalid_argument for a
// generator that is not Chunked.
void DrawPieces(const GeneratorSpec& spec, std::uint64_t n, std::uint64_t seed,
                const std::function<void(std::uint64_t, std::span<double>)>& piece);

// The i-th uniform in [0, 1) of stream `seed` (53 random bits).
double UniformAt(std::uint64_t seed, std::uint64_t i);

// The generator version of every stream above (a manifest and eval field).
inline constexpr const char* kGeneratorVersion = "carrier-gen/2";

// out[j] = BoxMuller(u1[j], u2[j]) (portable_math.hpp) for j < n: the vectorised transform
// the normal family draws through, exported so a test can compare it with the scalar function.
void BoxMullerBlock(const double* u1, const double* u2, std::size_t n, double* out);

}  // namespace carrier::inputs
