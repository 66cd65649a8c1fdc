// carrier probe: recover the merge tree of a black-box sum (FPRev's masked inputs), verify it
// by replay on random data, and name the schedule that builds the same tree, if any.
//
// The numerics live in core/fprev.hpp (recovery) and core/tree_hash.hpp (identity); the
// targets in experiments/probe/targets.cpp. This file parses flags, drives and prints.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "cli/args.hpp"
#include "cli/progress.hpp"
#include "core/carriers/dot.hpp"
#include "core/carriers/sum.hpp"
#include "core/dot_arithmetic.hpp"
#include "core/fprev.hpp"
#include "core/mma.hpp"
#include "core/replay_oracle.hpp"
#include "core/schedule.hpp"
#include "core/tree_hash.hpp"
#include "io/json.hpp"
#include "io/text_file.hpp"
#include "io/tree_file.hpp"
#include "precision/bfloat16.hpp"
#include "probe/targets.hpp"
#include "verbs/verbs.hpp"

namespace carrier::cli {

namespace {

template <class T>
double ReplayAs(const MergeTree& t, const std::vector<double>& x) {
  std::vector<T> v(x.begin(), x.end());
  return static_cast<double>(ReplayOracleResult<Sum<T>>(t, std::span<const T>(v)));
}

bool SameBits(double a, double b) { return ScalarTraits<double>::BitEqual(a, b); }

// Random input k of a stream: signs mixed, magnitudes over 2^-8..2^7, stored in the format.
std::vector<double> RandomInput(std::uint64_t n, std::uint64_t seed, std::uint64_t k, bool fp32) {
  std::vector<double> x(n);
  std::uint64_t state = seed * 0x9e3779b97f4a7c15ULL + k;
  for (auto& v : x) {
    state = tree_detail::Mix(state);
    const double u = static_cast<double>(state >> 11) * 0x1.0p-53;
    const double e = std::ldexp(1.0, static_cast<int>(state % 16) - 8);
    v = (2 * u - 1) * e;
    if (fp32) v = static_cast<float>(v);
  }
  return x;
}

std::string Seconds(double s) {
  std::ostringstream os;
  os.precision(s < 10 ? 2 : 3);
  os << s << " s";
  return os.str();
}

// From this n on, --method auto proves a library schedule before trying FPRev's recursion
// (whose Theta(n log n) calls of n values each pass minutes here).
constexpr std::uint64_t kLibraryFrom = 1 << 14;
constexpr std::uint64_t kCalibrationCalls = 16;

}  // namespace

// ---- carrier probe dot:TARGET: a black-box dot product's matrix-unit accumulation ---------
//
// Hypotheses: every mma: profile (core/mma.hpp) whose input format holds --dtype, alone or
// promoted every N products (N = the profile's k times a power of two, below --k). Test
// vectors: Fasi et al.'s (PeerJ CS 7:e330, 2021) generalised into families over every
// position and exponent, in the spirit of Khattak and Mikaitis (arXiv 2512.07004):
//   fraction  +B, -B, +-2^-j B in one group: the small term survives iff j <= F (its sign
//             tells truncation from flooring);
//   group     +B, -B at inputs 0, 1 and a tiny term at input g: it survives iff g starts a
//             new fused step or a promoted chain;
//   promote   a tiny term at input 0, then +B, -B at g, g + 1: it survives only across a
//             promotion (in a fused chain the accumulator is cut with the terms);
//   rounding  B plus 1.5 * 2^-d B: truncation, RZ and RNE of the output differ;
//   random    format values of mixed sign over 2^-4..2^4.
// The search is adaptive: each step asks the target the pool vector that splits the
// hypotheses still alive into the most classes, until no vector splits them; the survivor
// is then checked on fresh random inputs before it is printed.
namespace {

struct DotHypothesis {
  std::string text;
  const MmaProfile* profile = nullptr;
  std::uint64_t promote = 0;
  MergeTree tree;
};

using DotPairs = std::vector<ValuePair<float>>;

struct FormatRange {
  int emin, emax, precision;  // normal exponents; significand bits with the implicit one
};

std::optional<FormatRange> DotFormat(const std::string& dtype) {
  if (dtype == "fp16") return FormatRange{-14, 15, 11};
  if (dtype == "bf16") return FormatRange{-126, 127, 8};
  if (dtype == "tf32") return FormatRange{-126, 127, 11};
  if (dtype == "fp8e4m3") return FormatRange{-6, 8, 4};
  if (dtype == "fp8e5m2") return FormatRange{-14, 15, 3};
  return std::nullopt;
}

// A product of value mant * 2^e (mant 1 or 1.5, any sign) as two normal factors.
ValuePair<float> Term(double mant, int e, const FormatRange& r) {
  int ea = e / 2;
  if (ea > r.emax) ea = r.emax;
  if (ea < r.emin) ea = r.emin;
  int eb = e - ea;
  if (eb > r.emax) {
    ea += eb - r.emax;
    eb = r.emax;
  } else if (eb < r.emin) {
    ea -= r.emin - eb;
    eb = r.emin;
  }
  return {static_cast<float>(std::ldexp(mant, ea)), static_cast<float>(std::ldexp(1.0, eb))};
}

DotPairs RandomPairs(std::uint64_t k, std::uint64_t seed, const FormatRange& r) {
  DotPairs x(k);
  std::uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 0xd07;
  auto value = [&] {
    state = tree_detail::Mix(state);
    const double u = static_cast<double>(state >> 11) * 0x1.0p-53;
    const double m =
        std::floor((1 + u) * std::ldexp(1.0, r.precision - 1)) / std::ldexp(1.0, r.precision - 1);
    const int e = static_cast<int>((state >> 3) % 9) - 4;
    return static_cast<float>(((state & 1) ? -1 : 1) * std::ldexp(m, e));
  };
  for (auto& p : x) p = {value(), value()};
  return x;
}

double DotReplay(const MergeTree& t, const DotPairs& x) {
  return static_cast<double>(
      ReplayOracleResult<Dot<float>>(t, std::span<const ValuePair<float>>(x)));
}

std::string NodeText(const MmaNode& n) {
  return std::to_string(n.terms) +
         " products + the accumulator per fused step, F = " + std::to_string(n.frac_bits) +
         " fraction bits, aligned terms " +
         (n.align == MmaAlign::kTruncate ? "truncated" : "floored") + ", output " +
         std::string(MmaOutputName(n.output)) +
         (n.two_stage ? ", two stages (products, then with the accumulator)" : "");
}

// ---- IEEE dot products (--dtype fp32 | fp64): a recovered tree x a push rule --------------
//
// With b = 1 every step of an IEEE dot rounds like a sum: round(s + a*1) is round(s + a)
// whether the product is rounded first or fused (FMA). So the dot of (x, ones) is a sum of x
// whose merge tree FPRev recovers (core/fprev.hpp). The hypotheses are then that tree with
// each chain step one of
//   mul-add  s + round(a*b): the product rounded to the format, then added (carrier's Dot);
//   fma      round(s + a*b): IEEE 754 fusedMultiplyAdd, the exact product added and rounded
//            once (an FMA unit's accumulator lanes, OpenBLAS's Haswell kernels);
// and the combines of chains IEEE additions in the format. Fresh random inputs with full
// significands decide between them.
//
// An fp32 dot may add in a double in places (OpenBLAS's x86_64 sdot: FMA lanes in fp32 over
// the first n & -32 products, the rest and the lanes' sum in a double). So the masks' M
// absorbs ones in fp64 too (the tree is then the order of every addition, whatever its
// format), one input per internal node tells whether it keeps fp64's bits, and one more
// whether the fp64 additions take their products rounded to fp32 or exact; the tree and
// this per-node arithmetic (core/dot_arithmetic.hpp) are replayed together, and -o FILE
// saves both for carrier eval --op dot --schedule file:FILE.

// Describes inputs as ranges ("x[0..991]", "x[3:99:8]", or a count).
std::string InputsText(std::vector<std::uint64_t> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return "no inputs";
  if (v.size() == 1) return "x[" + std::to_string(v[0]) + "]";
  const std::uint64_t stride = v[1] - v[0];
  for (std::size_t q = 1; q < v.size(); ++q)
    if (v[q] - v[q - 1] != stride) return std::to_string(v.size()) + " inputs";
  return "x[" + std::to_string(v.front()) + (stride == 1 ? ".." : ":") + std::to_string(v.back()) +
         (stride == 1 ? "" : ":" + std::to_string(stride)) + "]";
}

// x + y rounded once to bf16 (RNE): the exact sum (TwoSum) rounded to odd in a double first,
// which then rounds to bf16 as the exact sum would (53 >= 8 + 2 bits).
double AddBf16(double x, double y) {
  double hi = x + y;
  const double yv = hi - x;
  const double lo = (x - (hi - yv)) + (y - yv);
  if (lo != 0 && (std::bit_cast<std::uint64_t>(hi) & 1) == 0)
    hi = std::nextafter(hi, lo > 0 ? HUGE_VAL : -HUGE_VAL);
  return BFloat16(hi).ToDouble();
}

// A dot of bf16 values in bf16 throughout, under tree t: each chain step s + round(a*b)
// (mul-add: the product, exact in a double, rounded to bf16 first, as C++'s bf16 types do) or
// round(s + a*b) (fma); combines bf16 additions.
double ReplayBf16Dot(const MergeTree& t, DotPush push, std::span<const double> a,
                     std::span<const double> b) {
  std::vector<double> v(t.NodeCount());
  for (std::uint64_t c = 0; c < t.chains.size(); ++c) {
    double s = 0.0;
    for (std::uint64_t j = 0; j < t.chains[c].count; ++j) {
      const std::uint64_t i = t.chains[c].first + j * t.chains[c].stride;
      const double p = a[i] * b[i];  // 8 + 8 bits: exact
      s = AddBf16(s, push == DotPush::kFma ? p : BFloat16(p).ToDouble());
    }
    v[c] = s;
  }
  for (std::uint64_t m = 0; m < t.combines.size(); ++m)
    v[t.chains.size() + m] = AddBf16(v[t.combines[m].left], v[t.combines[m].right]);
  return t.NodeCount() ? v[t.Root()] : 0.0;
}

// T: float for fp32 and bf16 (dtype says which), double for fp64.
template <class T>
int RunIeeeDotProbe(const std::string& target_text, const std::string& dtype, std::uint64_t k,
                    std::uint64_t verify, std::uint64_t seed, double timeout,
                    const std::optional<std::string>& output,
                    const std::function<void(const std::string&)>& fail) {
  // bf16 (torch.matmul): the format bf16, its "wide" nodes would be fp32's (refused below).
  const bool bf16 = dtype == "bf16";
  const bool fp32 = std::is_same_v<T, float> && !bf16, fp64 = std::is_same_v<T, double>;
  const std::string narrow = bf16 ? "bf16" : "fp32", wider = bf16 ? "fp32" : "fp64";
  const int kept = bf16 ? -12 : -30;  // 1 + 2^kept - 1 is 2^kept in the wider format, 0 in narrow
  std::unique_ptr<probe::Target> exec;
  try {
    exec = probe::MakeTarget(target_text, dtype, 2 * k, timeout, probe::TargetOp::kDot);
  } catch (const probe::TargetError& e) {
    fail(e.what());
  }
  // The target on sparse inputs over the 2K values; with b_ones, the b half is held at 1 (the
  // sum x -> dot(x, ones)) unless the input sets it itself after that.
  auto evaluate = [&](const std::vector<MaskedInput>& batch, bool b_ones) {
    std::vector<double> out;
    for (std::size_t at = 0; at < batch.size(); at += probe::kMaxBatch) {
      std::vector<MaskedInput> part;
      for (std::size_t q = at; q < std::min(batch.size(), at + probe::kMaxBatch); ++q) {
        MaskedInput in = batch[q];
        if (b_ones && in.background != 1.0) in.runs.insert(in.runs.begin(), {k, k, 1, 1.0});
        part.push_back(std::move(in));
      }
      std::vector<double> got;
      try {
        got = exec->Evaluate(part);
      } catch (const probe::TargetError& e) {
        fail(e.what());
      }
      out.insert(out.end(), got.begin(), got.end());
    }
    return out;
  };
  // M absorbs a partial sum of ones in an fp64 node too (a wider accumulator inside an fp32
  // dot, OpenBLAS's sdot tail), and stays finite and exact in fp32 (2^67 at K = 4096).
  const double m = MaskMagnitude(k, 53);
  ProbeStats stats;
  BinaryTree recovered;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    recovered = RecoverSumTreeBatched(
        k,
        [&](const std::vector<MaskRequest>& requests) {
          std::vector<MaskedInput> batch;
          for (const MaskRequest& r : requests)
            for (std::uint64_t j : r.js)
              batch.push_back(MaskedInput{1.0, {{r.i, 1, 1, m}, {j, 1, 1, -m}}});
          const std::vector<double> flat = evaluate(batch, true);
          std::vector<std::vector<double>> out;
          std::size_t at = 0;
          for (const MaskRequest& r : requests) {
            out.emplace_back(flat.begin() + at, flat.begin() + at + r.js.size());
            at += r.js.size();
          }
          return out;
        },
        stats);
  } catch (const ProbeError& e) {
    std::cout << "target          " << exec->Description() << "\n"
              << "result          the dot with b = 1 is no tree of additions (in " << dtype
              << (fp32 || bf16 ? " or " + wider : "")
              << "; an exact or multi-term accumulator?): " << e.what() << " after " << stats.calls
              << " calls\n";
    return 1;
  }

  // Per node (fp32 targets): does it add in fp32 or in fp64? Node v (not the root) gets 1 at
  // an input of its left operand, 2^-30 at one of its right operand and -1 at one of its
  // sibling's, 0 elsewhere: v keeps 1 + 2^-30 only in fp64, and its parent's cancellation
  // (exact in either format) leaves 2^-30 or 0, which every later addition of zeros keeps.
  // The root's format is seen only through its operands (double rounding of a sum of two
  // fp32 values through fp64 is innocuous): it is fp64 when an operand is.
  const std::uint64_t n_int = recovered.internal.size();
  const std::uint64_t total = k + n_int;
  std::vector<std::uint64_t> lo(total), parent(total, tree_hash_detail::kAbsent);
  for (std::uint64_t i = 0; i < k; ++i) lo[i] = i;
  for (std::uint64_t q = 0; q < n_int; ++q) {
    const auto& ch = recovered.internal[q].children;
    lo[k + q] = std::min(lo[ch[0]], lo[ch[1]]);
    parent[ch[0]] = parent[ch[1]] = k + q;
  }
  std::vector<std::uint8_t> wide(n_int, 0);
  std::uint64_t node_calls = 0;
  if ((fp32 || bf16) && n_int > 1) {
    std::vector<MaskedInput> batch;
    std::vector<std::uint64_t> asked;
    for (std::uint64_t q = 0; q < n_int; ++q) {
      const std::uint64_t v = k + q;
      if (v == recovered.root) continue;
      const auto& ch = recovered.internal[q].children;
      const auto& pc = recovered.internal[parent[v] - k].children;
      const std::uint64_t sibling = pc[0] == v ? pc[1] : pc[0];
      batch.push_back(MaskedInput{0.0,
                                  {{lo[ch[0]], 1, 1, 1.0},
                                   {lo[ch[1]], 1, 1, std::ldexp(1.0, kept)},
                                   {lo[sibling], 1, 1, -1.0}}});
      asked.push_back(q);
    }
    const std::vector<double> got = evaluate(batch, true);
    node_calls = got.size();
    for (std::size_t r = 0; r < asked.size(); ++r) {
      if (got[r] == std::ldexp(1.0, kept)) {
        wide[asked[r]] = 1;
      } else if (got[r] != 0) {
        std::ostringstream os;
        os << std::hexfloat << got[r];
        std::cout << "target          " << exec->Description() << "\n"
                  << "result          the addition joining inputs " << lo[k + asked[r]]
                  << ".. is neither " << narrow << " nor " << wider << ": 1 + 2^" << kept
                  << " - 1 gave " << os.str() << " (2^" << kept << " in " << wider << ", 0 in "
                  << narrow << ")\n";
        return 1;
      }
    }
    if (bf16)
      for (std::size_t r = 0; r < asked.size(); ++r)
        if (wide[asked[r]]) {
          std::cout << "target          " << exec->Description() << "\n"
                    << "result          the addition joining inputs " << lo[k + asked[r]]
                    << ".. keeps fp32's bits (1 + 2^-12 - 1 gave 2^-12): a bf16 dot with a "
                       "wider accumulator, which carrier's bf16 dot replay (bf16 throughout) "
                       "does not model\n";
          return 1;
        }
    const auto& rc = recovered.internal[recovered.root - k].children;
    for (std::uint64_t c : rc)
      if (c >= k && wide[c - k]) wide[recovered.root - k] = 1;
    for (std::uint64_t q = 0; q < n_int; ++q)
      for (std::uint64_t c : recovered.internal[q].children)
        if (c >= k && wide[c - k] && !wide[q]) {
          std::cout << "target          " << exec->Description() << "\n"
                    << "result          the addition over inputs from " << lo[c]
                    << " adds in fp64 but the one above it (from " << lo[k + q]
                    << ") rounds to fp32: the fp64 additions are not closed upward, which "
                       "carrier's replay assumes\n";
          return 1;
        }
  }
  std::vector<std::uint64_t> merge_node;
  const MergeTree tree =
      ToMergeTree(recovered, "probe:" + target_text, fp32 ? &wide : nullptr, &merge_node);
  // The MergeTree nodes' formats: a chain's pushes, or (one input alone) its consumer's.
  DotArithmetic arith;
  arith.fp32 = fp32;
  arith.wide.assign(tree.NodeCount(), 0);
  std::vector<std::uint64_t> wide_inputs;
  for (std::uint64_t x = k; x < total; ++x)
    if (wide[x - k]) arith.wide[merge_node[x]] = 1;
  for (std::uint64_t i = 0; i < k; ++i)
    if (parent[i] != tree_hash_detail::kAbsent && wide[parent[i] - k]) {
      arith.wide[merge_node[i]] = 1;
      wide_inputs.push_back(i);
    }
  if (const std::string why = CheckDotArithmetic(tree, arith); !why.empty())
    fail("internal: the recovered arithmetic does not fit its tree: " + why);

  // The products of the fp64 nodes: rounded to fp32 first, or exact? Input i (an fp64 node's
  // operand) gets the product (1 + 2^-23)^2 = 1 + 2^-22 + 2^-46 and an input j of its
  // sibling -(1 + 2^-22): the fp64 node leaves 2^-46 of an exact product, 0 of a rounded one.
  std::string products_note;
  if (!wide_inputs.empty()) {
    const std::uint64_t i = wide_inputs[0];
    const auto& pc = recovered.internal[parent[i] - k].children;
    const std::uint64_t j = lo[pc[0] == i ? pc[1] : pc[0]];
    const double a = 1 + std::ldexp(1.0, -23);
    const double got = evaluate({MaskedInput{0.0,
                                             {{k, k, 1, 1.0},
                                              {i, 1, 1, a},
                                              {k + i, 1, 1, a},
                                              {j, 1, 1, -(1 + std::ldexp(1.0, -22))}}}},
                                false)[0];
    node_calls += 1;
    if (got == std::ldexp(1.0, -46)) {
      arith.wide_products = WideProducts::kExact;
    } else if (got != 0) {
      std::ostringstream os;
      os << std::hexfloat << got;
      std::cout << "target          " << exec->Description() << "\n"
                << "result          the fp64 additions' products are neither exact nor rounded "
                   "to fp32: (1 + 2^-23)^2 - (1 + 2^-22) gave "
                << os.str() << " (2^-46 exact, 0 rounded)\n";
      return 1;
    }
  }
  // Per input (fp32 and fp64 targets): is its product fused into the partial sum it joins? Input
  // i gets a = b = 1 + 2^-(h+1) (h = half the format's fraction bits, rounded up), whose product
  // 1 + 2^-h + 2^-(2h+2) needs more bits than the format keeps, and an input of its sibling's
  // subtree -(1 + 2^-h) (b = 1): the addition leaves 2^-(2h+2) if it fuses i's product, 0 if the
  // product was rounded first (to 1 + 2^-h: an eighth of an ulp or less, no tie). A kernel may
  // fuse some products and not others (OpenBLAS's AVX-512 sdot adds two one-product lanes, then
  // the next products to that sum by FMA); fp64 nodes' products were decided above.
  std::vector<std::uint8_t> fused_in(k, 0);
  if (!bf16 && k > 1) {
    const int h = fp32 ? 12 : 27;
    const double half = 1 + std::ldexp(1.0, -(h + 1)), cancel = -(1 + std::ldexp(1.0, -h));
    const double left = std::ldexp(1.0, -(2 * h + 2));
    std::vector<MaskedInput> batch;
    std::vector<std::uint64_t> asked;
    for (std::uint64_t i = 0; i < k; ++i) {
      const std::uint64_t v = parent[i];
      if (v == tree_hash_detail::kAbsent || (fp32 && wide[v - k])) continue;
      const auto& pc = recovered.internal[v - k].children;
      const std::uint64_t j = lo[pc[0] == i ? pc[1] : pc[0]];
      batch.push_back(MaskedInput{
          0.0, {{k, k, 1, 1.0}, {i, 1, 1, half}, {k + i, 1, 1, half}, {j, 1, 1, cancel}}});
      asked.push_back(i);
    }
    const std::vector<double> got = evaluate(batch, false);
    node_calls += got.size();
    for (std::size_t r = 0; r < asked.size(); ++r) {
      if (got[r] == left) {
        fused_in[asked[r]] = 1;
      } else if (got[r] != 0) {
        std::ostringstream os;
        os << std::hexfloat << got[r];
        std::cout << "target          " << exec->Description() << "\n"
                  << "result          the addition of input " << asked[r]
                  << "'s product neither fuses it nor rounds it to " << dtype << " first: (1 + 2^-"
                  << h + 1 << ")^2 - (1 + 2^-" << h << ") gave " << os.str() << " (2^-" << 2 * h + 2
                  << " fused, 0 rounded)\n";
        return 1;
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Fresh random inputs, full significands: which push rule replays the target.
  auto fresh = [&](std::uint64_t r, std::uint64_t stream, std::vector<double>& a,
                   std::vector<double>& b) {
    std::vector<double> x = RandomInput(2 * k, seed * 7919 + stream, r, !fp64);
    if (bf16)
      for (double& v : x) v = BFloat16(v).ToDouble();
    a.assign(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(k));
    b.assign(x.begin() + static_cast<std::ptrdiff_t>(k), x.end());
    try {
      return exec->Values(x);
    } catch (const probe::TargetError& e) {
      fail(e.what());
    }
    return 0.0;
  };
  DotArithmetic plain_ar = arith, fused_ar = arith, per_ar = arith;
  plain_ar.push = DotPush::kMulAdd;
  fused_ar.push = DotPush::kFma;
  per_ar.push = DotPush::kPerInput;
  per_ar.fused = fused_in;
  std::uint64_t plain = 0, fused = 0, per = 0;
  std::string first_miss;
  std::vector<double> a, b;
  for (std::uint64_t r = 0; r < verify; ++r) {
    const double want = fresh(r, 0xd07, a, b);
    const double pa = bf16 ? ReplayBf16Dot(tree, DotPush::kMulAdd, a, b)
                           : ReplayDotArithmetic(tree, plain_ar, a, b);
    const double fa =
        bf16 ? ReplayBf16Dot(tree, DotPush::kFma, a, b) : ReplayDotArithmetic(tree, fused_ar, a, b);
    plain += SameBits(pa, want);
    fused += SameBits(fa, want);
    if (!bf16) per += SameBits(ReplayDotArithmetic(tree, per_ar, a, b), want);
    if (!SameBits(pa, want) && !SameBits(fa, want) && first_miss.empty()) {
      std::ostringstream os;
      os << "random input " << r << ": target " << std::hexfloat << want << ", mul-add " << pa
         << ", fma " << fa;
      first_miss = os.str();
    }
  }
  const std::vector<std::string> named = probe::MatchingSchedules(tree);
  std::string order = named.empty() ? "no named schedule (the tree follows)" : named[0];
  for (std::size_t q = 1; q < named.size(); ++q) order += (q == 1 ? " (also " : ", ") + named[q];
  if (named.size() > 1) order += ")";
  std::cout << "target          " << exec->Description() << "\n"
            << "k               " << k << " products of " << dtype << " inputs\n"
            << "order           " << order << ": recovered as the sum x -> dot(x, ones) by FPRev, "
            << stats.calls << " target calls in " << stats.batches << " rounds"
            << (node_calls ? ", " + std::to_string(node_calls) + " more for the node formats" : "")
            << ", " << Seconds(seconds) << "\n"
            << "tree hash       " << TreeHash(tree) << "\n";
  if (bf16) std::cout << "formats         every addition in bf16 (no node keeps fp32's bits)\n";
  if (fp32) {
    std::uint64_t wide_nodes = 0;
    for (std::uint8_t w : arith.wide) wide_nodes += w;
    std::cout << "formats         ";
    if (wide_nodes == 0) {
      std::cout << "every addition in fp32\n";
    } else {
      const std::uint64_t c = tree.chains.size();
      std::string list;
      for (std::uint64_t x = 0; x < tree.NodeCount(); ++x) {
        if (!arith.wide[x]) continue;
        list += list.empty() ? "" : "; ";
        if (x < c) {
          std::vector<std::uint64_t> in;
          for (std::uint64_t j = 0; j < tree.chains[x].count; ++j)
            in.push_back(tree.chains[x].first + j * tree.chains[x].stride);
          list += "the products of " + InputsText(in);
        } else {
          // The inputs under each operand of the combine.
          auto under = [&](std::uint64_t node) {
            std::vector<std::uint64_t> in;
            for (std::uint64_t i = 0; i < k; ++i)
              for (std::uint64_t y = i; y != tree_hash_detail::kAbsent; y = parent[y])
                if (merge_node[y] == node) {
                  in.push_back(i);
                  break;
                }
            return InputsText(in);
          };
          const CombineOp& op = tree.combines[x - c];
          list += std::string(x == tree.Root() ? "the final join" : "the join") + " of " +
                  under(op.left) + " with " + under(op.right);
        }
      }
      std::cout << "fp64 (" << wide_nodes << " of " << tree.NodeCount() << " nodes): " << list
                << "; every other addition in fp32";
      std::sort(wide_inputs.begin(), wide_inputs.end());
      if (!wide_inputs.empty() && wide_inputs.back() == k - 1 &&
          wide_inputs.back() - wide_inputs.front() + 1 == wide_inputs.size()) {
        const std::uint64_t n1 = wide_inputs.front();
        std::cout << " (products " << n1 << ".." << k - 1 << " in fp64, n1 = " << n1;
        if (n1 > 0) std::cout << " = " << (n1 & -n1) << " * " << n1 / (n1 & -n1);
        std::cout << ")";
      }
      std::cout << "; the result rounded to fp32\n";
      if (!wide_inputs.empty())
        std::cout << "fp64 products  "
                  << (arith.wide_products == WideProducts::kExact
                          ? " exact (float * float in a double), each added with one rounding"
                          : " rounded to fp32, then added in fp64 (C's double d += x[i] * y[i])")
                  << "\n";
    }
  }
  // The per-input flags come from targeted inputs, so they decide when they replay; a uniform
  // rule is named instead where it gives the same arithmetic: every product after a chain's
  // first fused (fma) or none (mul-add), and a one-input chain's product, added by a combine,
  // rounded first (as both uniform rules add it). Random inputs alone can miss a difference.
  auto same_as = [&](bool fma) {
    for (std::uint64_t c = 0; c < tree.chains.size(); ++c) {
      if (arith.Wide(c)) continue;
      const Chain& ch = tree.chains[c];
      if (ch.count == 1 && c != tree.Root() && fused_in[ch.first]) return false;
      for (std::uint64_t j = 1; j < ch.count; ++j)
        if ((fused_in[ch.first + j * ch.stride] != 0) != fma) return false;
    }
    return true;
  };
  const bool per_ok = !bf16 && per == verify;
  const bool as_fma = per_ok ? same_as(true) : fused == verify;
  const bool as_mul_add = per_ok ? same_as(false) : plain == verify;
  const bool per_input = per_ok && !as_fma && !as_mul_add;
  // Both uniform rules fit where no product is added to a partial sum: fma, as before.
  const bool use_fma = as_fma && (!as_mul_add || fused == verify);
  const bool ok = as_fma || as_mul_add || per_input;
  if (!ok) {
    std::cout << "result          no push rule replays the target: mul-add agrees on " << plain
              << ", fma on " << fused << (bf16 ? "" : ", per input on " + std::to_string(per))
              << " of " << verify << " fresh random inputs (" << first_miss << ")\n";
    return 1;
  }
  arith.push = per_input ? DotPush::kPerInput : use_fma ? DotPush::kFma : DotPush::kMulAdd;
  if (per_input) arith.fused = fused_in;
  const std::string rule = per_input ? "per-input" : use_fma ? "fma" : "mul-add";
  const std::string where = arith.AnyWide() ? "each fp32 chain step" : "each chain step";
  std::vector<std::uint64_t> fused_list, rounded_list;
  for (std::uint64_t i = 0; i < k; ++i)
    if (parent[i] != tree_hash_detail::kAbsent && !(fp32 && wide[parent[i] - k]))
      (fused_in[i] ? fused_list : rounded_list).push_back(i);
  std::cout << "push            "
            << (per_input ? "per input: the products of " + InputsText(fused_list) +
                                " join their partial sum with one rounding (fma), those of " +
                                InputsText(rounded_list) + " are rounded to " + dtype +
                                " first (a product added to nothing is rounded either way)"
                : use_fma ? "fma: " + where +
                                " rounds s + a*b once (IEEE 754 fusedMultiplyAdd, the "
                                "product exact)"
                          : "mul-add: " + where + " rounds a*b to " + dtype + ", then s + (a*b)")
            << (use_fma && as_mul_add ? " (mul-add gives the same bits)" : "") << "\n"
            << "combine         " << dtype << " addition (RNE) of the chains' partial sums"
            << (arith.AnyWide() ? " (fp64 where named above)" : "") << "\n"
            << "verified        "
            << (per_input ? per
                : use_fma ? fused
                          : plain)
            << " of " << verify << " fresh random inputs: replay of the tree with " << rule
            << " pushes == target, bit for bit (mul-add " << plain << ", fma " << fused
            << (bf16 ? "" : ", per input " + std::to_string(per)) << ")\n";
  const bool plain_replay = rule == "mul-add" && !arith.AnyWide() && !named.empty();
  if (bf16) {
    // carrier's Dot in an emulated bf16 is the mul-add rule; an fma chain has no eval replay.
    if (plain_replay)
      std::cout << "replay          carrier eval --op dot --dtype bf16 --acc bf16 --schedule "
                << named[0] << "\n";
    else
      std::cout << "note            carrier eval replays a bf16 dot with rounded products over a "
                   "named schedule only; this one is "
                << (named.empty() ? "an unnamed tree" : "fma") << " (the tree follows)\n";
    if (named.empty()) std::cout << ToText(tree);
    return 0;
  }
  if (output) {
    // The tree and its arithmetic, read back as carrier eval reads them and checked on other
    // fresh inputs before the line that replays it is printed.
    std::string json = ToJson(tree);
    json =
        json.substr(0, json.rfind('}')) + ",\"dot_arithmetic\":" + DotArithmeticJson(arith) + "}\n";
    {
      std::ofstream f(*output);
      if (!f || !(f << json) || !f.flush()) fail("cannot write -o " + *output);
    }
    std::uint64_t same = 0;
    std::string miss;
    try {
      const MergeTree back = io::LoadTreeFile(*output, k);
      const std::optional<DotArithmetic> back_ar = ReadDotArithmetic(
          io::ReadTextFile(*output, io::kMaxTreeFileBytes), *output, back.NodeCount());
      if (!back_ar || !CheckDotArithmetic(back, *back_ar).empty())
        fail("internal: " + *output + " does not read back");
      for (std::uint64_t r = 0; r < verify; ++r) {
        const double want = fresh(r, 0x5eed, a, b);
        const double got = ReplayDotArithmetic(back, *back_ar, a, b);
        same += SameBits(got, want);
        if (!SameBits(got, want) && miss.empty()) {
          std::ostringstream os;
          os << " (random input " << r << ": target " << std::hexfloat << want << ", file " << got
             << ")";
          miss = os.str();
        }
      }
    } catch (const std::exception& e) {
      fail(std::string("internal: ") + e.what());
    }
    std::cout << "saved           " << *output << ": the tree and each node's arithmetic "
              << "(\"dot_arithmetic\"), read back: " << same << " of " << verify
              << " other fresh inputs replay bit for bit" << miss << "\n";
    if (same != verify) return 1;
    std::cout << "replay          carrier eval --op dot --dtype " << dtype << " --acc " << dtype
              << " --schedule file:" << *output << "\n";
  } else if (plain_replay) {
    std::cout << "replay          carrier eval --op dot --dtype " << dtype << " --schedule "
              << named[0] << "\n";
  } else {
    std::cout << "note            carrier eval's dot rounds each product in one format: give "
                 "-o FILE to save the tree with its "
              << (arith.AnyWide() ? "per-node formats" : "fma pushes")
              << " for carrier eval --schedule file:FILE\n";
  }
  if (named.empty()) std::cout << ToText(tree);
  return 0;
}

int RunDotProbe(const std::vector<std::string>& argv_in) {
  std::vector<std::string> argv = argv_in;
  for (auto& a : argv)
    if (a == "-o") a = "--output";
  Args args("probe", argv, {"dtype", "k", "verify", "seed", "timeout", "output"}, {}, 1);
  const std::string target_text = args.Positional()[0].substr(4);
  const std::string dtype =
      args.Choice("dtype", {"fp16", "bf16", "tf32", "fp8e4m3", "fp8e5m2", "fp32", "fp64"}, "fp16");
  const std::uint64_t k = args.Count("k", 64);
  if (k < 4 || k > 4096) args.Fail("--k must be in [4, 4096]");
  const std::uint64_t verify = args.Count("verify", 8);
  if (verify == 0) args.Fail("--verify must be at least 1");
  const std::uint64_t seed = args.Count("seed", 1);
  const double timeout = args.Seconds("timeout", probe::kDefaultTargetTimeoutSeconds);
  if (timeout <= 0) args.Fail("--timeout must be more than 0 seconds");
  // An IEEE dot: fp32 and fp64 for every target but carrier's own mma: profiles, and bf16 for
  // torch.matmul (torch's CPU bf16 dot rounds in bf16: an IEEE dot in bf16).
  const std::size_t colon = target_text.rfind(':');
  const bool lib = target_text.rfind("exec:", 0) != 0 && colon != std::string::npos &&
                   target_text.substr(0, colon).find(".so") != std::string::npos;
  if (dtype == "fp32" || dtype == "fp64" || (dtype == "bf16" && target_text == "torch.matmul")) {
    if (target_text != "numpy.dot" && target_text != "numpy.matmul" &&
        target_text != "torch.matmul" && target_text.rfind("exec:", 0) != 0 && !lib)
      args.Fail("--dtype " + dtype + " (an IEEE dot: recovered order x push rule) needs " +
                "dot:numpy.dot, dot:numpy.matmul, dot:torch.matmul, dot:LIB.so:SYMBOL or " +
                "dot:exec:COMMAND, not dot:" + target_text);
    const auto fail = [&](const std::string& why) { args.Fail(why); };
    const std::optional<std::string> output = args.Get("output");
    if (output && output->empty()) args.Fail("-o needs a file name");
    if (dtype == "bf16" && output)
      args.Fail(
          "-o saves an fp32|fp64 dot's arithmetic; a bf16 dot is replayed by the carrier "
          "eval line the probe prints");
    if (dtype == "bf16" && k > 256)
      args.Fail("--k must be at most 256 for bf16 (the masks' sums of ones must be exact)");
    return dtype == "fp64"
               ? RunIeeeDotProbe<double>(target_text, dtype, k, verify, seed, timeout, output, fail)
               : RunIeeeDotProbe<float>(target_text, dtype, k, verify, seed, timeout, output, fail);
  }
  if (lib || target_text == "numpy.matmul" || target_text == "torch.matmul")
    args.Fail("dot:" + target_text + " takes --dtype fp32 or fp64" +
              (target_text == "torch.matmul" ? std::string(" or bf16") : "") +
              " (an IEEE dot), not " + dtype);
  if (args.Get("output")) args.Fail("-o goes with --dtype fp32|fp64 (an IEEE dot's tree)");
  const FormatRange range = *DotFormat(dtype);
  const auto ieee_hint = [&] {
    if (target_text.rfind("mma:", 0) != 0)
      std::cout << "hint            for an IEEE dot (rounded products or FMA): --dtype fp32|fp64\n";
  };

  // The target: carrier's own model (in process) or an executable (the sum protocol over the
  // 2K values a_0..a_{K-1}, b_0..b_{K-1}).
  std::function<std::vector<double>(const std::vector<DotPairs>&)> target;
  std::string description;
  std::unique_ptr<probe::Target> exec;
  if (target_text.rfind("mma:", 0) == 0) {
    MergeTree truth;
    try {
      truth = BuildTree(target_text, k);
    } catch (const ScheduleError& e) {
      args.Fail(e.what());
    }
    if (!MmaInputAccepts(truth.fused.input, dtype))
      args.Fail(target_text + " takes " + std::string(MmaInputName(truth.fused.input)) +
                " inputs, not --dtype " + dtype);
    description = target_text + " (carrier's model of it, run as a black box)";
    target = [truth](const std::vector<DotPairs>& xs) {
      std::vector<double> out;
      for (const DotPairs& x : xs) out.push_back(DotReplay(truth, x));
      return out;
    };
  } else if (target_text.rfind("exec:", 0) == 0 || target_text == "numpy.dot") {
    try {
      exec = probe::MakeTarget(target_text, "fp32", 2 * k, timeout);
    } catch (const probe::TargetError& e) {
      args.Fail(e.what());
    }
    description = exec->Description();
    target = [&](const std::vector<DotPairs>& xs) {
      std::vector<MaskedInput> batch;
      for (const DotPairs& x : xs) {
        MaskedInput in{0.0, {}};
        for (std::uint64_t q = 0; q < k; ++q) {
          in.runs.push_back({q, 1, 1, x[q].a});
          in.runs.push_back({k + q, 1, 1, x[q].b});
        }
        batch.push_back(std::move(in));
      }
      return exec->Evaluate(batch);
    };
  } else {
    args.Fail("unknown dot target '" + target_text +
              "': dot:mma:PROFILE[:promote:N] dot:numpy.dot dot:numpy.matmul dot:torch.matmul "
              "dot:LIB.so:SYMBOL dot:exec:COMMAND");
  }

  std::vector<DotHypothesis> hyps;
  for (const MmaProfile& p : kMmaProfiles) {
    if (!MmaInputAccepts(p.node.input, dtype)) continue;
    for (std::uint64_t promote = 0; promote < k; promote = promote ? 2 * promote : p.k) {
      const std::string text =
          "mma:" + std::string(p.name) + (promote ? ":promote:" + std::to_string(promote) : "");
      hyps.push_back({text, &p, promote, BuildTree(text, k)});
    }
  }

  // The pool of test vectors (see above). B: the big term's exponent; deep: the smallest
  // term's distance below it, both within the format's factors and fp32's output range.
  const int big = dtype == "fp8e4m3" ? 2 * range.emax - 1 : 0;
  const int deep = std::min(28, big - 2 * range.emin);
  std::vector<DotPairs> pool;
  std::vector<std::string> family;
  auto zero = [&] { return DotPairs(k, ValuePair<float>{0.0f, 0.0f}); };
  for (int j = 1; j <= deep; ++j)
    for (double sign : {1.0, -1.0}) {
      DotPairs x = zero();
      x[0] = Term(1, big, range);
      x[1] = Term(-1, big, range);
      x[2] = Term(sign, big - j, range);
      pool.push_back(x);
      family.push_back("fraction");
    }
  for (std::uint64_t g = 2; g < k; ++g) {
    DotPairs x = zero();
    x[0] = Term(1, big, range);
    x[1] = Term(-1, big, range);
    x[g] = Term(1, big - deep, range);
    pool.push_back(x);
    family.push_back("group");
  }
  for (std::uint64_t g = 1; g + 1 < k; ++g) {
    DotPairs x = zero();
    x[0] = Term(1, big - deep, range);
    x[g] = Term(1, big, range);
    x[g + 1] = Term(-1, big, range);
    pool.push_back(x);
    family.push_back("promote");
  }
  for (int d = 8; d <= 26; ++d)
    for (double sign : {1.0, -1.0}) {
      DotPairs x = zero();
      x[0] = Term(1, big, range);
      x[1] = Term(1.5 * sign, big - d, range);
      pool.push_back(x);
      family.push_back("rounding");
    }
  for (std::uint64_t r = 0; r < 16; ++r) {
    pool.push_back(RandomPairs(k, seed * 1000 + r, range));
    family.push_back("random");
  }
  std::vector<std::vector<double>> table(hyps.size(), std::vector<double>(pool.size()));
  for (std::size_t h = 0; h < hyps.size(); ++h)
    for (std::size_t t = 0; t < pool.size(); ++t) table[h][t] = DotReplay(hyps[h].tree, pool[t]);

  std::vector<std::size_t> alive(hyps.size());
  for (std::size_t h = 0; h < hyps.size(); ++h) alive[h] = h;
  std::vector<bool> asked(pool.size(), false);
  std::uint64_t queries = 0;
  std::map<std::string, int> asked_families;
  for (;;) {
    std::size_t best = pool.size(), best_classes = 1;
    for (std::size_t t = 0; t < pool.size(); ++t) {
      if (asked[t]) continue;
      std::vector<std::uint64_t> seen;
      for (std::size_t h : alive) seen.push_back(std::bit_cast<std::uint64_t>(table[h][t]));
      std::sort(seen.begin(), seen.end());
      const std::size_t classes =
          static_cast<std::size_t>(std::unique(seen.begin(), seen.end()) - seen.begin());
      if (classes > best_classes) {
        best = t;
        best_classes = classes;
      }
    }
    if (best == pool.size()) break;
    asked[best] = true;
    double y = 0;
    try {
      y = target({pool[best]})[0];
    } catch (const probe::TargetError& e) {
      args.Fail(e.what());
    }
    ++queries;
    ++asked_families[family[best]];
    std::vector<std::size_t> keep;
    for (std::size_t h : alive)
      if (SameBits(table[h][best], y)) keep.push_back(h);
    if (keep.empty()) {
      std::ostringstream os;
      os << std::hexfloat << y;
      std::cout << "target          " << description << "\n"
                << "result          no mma: profile of the " << hyps.size()
                << " hypotheses (profiles x promotion intervals) gives the target's " << os.str()
                << " on a '" << family[best] << "' test vector (query " << queries << ")\n";
      ieee_hint();
      return 1;
    }
    alive = std::move(keep);
  }

  std::uint64_t adaptive_queries = 0;
  // The survivors against every pool vector not asked yet (one batch): the search stops when
  // no vector splits the survivors, which says nothing about the target yet.
  {
    std::vector<std::size_t> rest;
    std::vector<DotPairs> xs;
    for (std::size_t t = 0; t < pool.size(); ++t)
      if (!asked[t]) {
        rest.push_back(t);
        xs.push_back(pool[t]);
      }
    std::vector<double> ys;
    try {
      ys = target(xs);
    } catch (const probe::TargetError& e) {
      args.Fail(e.what());
    }
    const std::uint64_t adaptive = queries;
    queries += xs.size();
    adaptive_queries = adaptive;
    std::vector<std::size_t> keep;
    std::string first_miss;
    for (std::size_t h : alive) {
      bool ok = true;
      for (std::size_t q = 0; q < rest.size() && ok; ++q) {
        ok = SameBits(table[h][rest[q]], ys[q]);
        if (!ok && first_miss.empty()) first_miss = family[rest[q]];
      }
      if (ok) keep.push_back(h);
    }
    if (keep.empty()) {
      std::cout << "target          " << description << "\n"
                << "result          no mma: profile of the " << hyps.size()
                << " hypotheses (profiles x promotion intervals) gives the target's bits on every "
                   "test vector (first miss: a '"
                << first_miss << "' vector, after " << queries << " queries)\n";
      ieee_hint();
      return 1;
    }
    alive = std::move(keep);
  }

  // Fresh random inputs: the first survivor that replays the target on all of them.
  std::vector<DotPairs> fresh;
  for (std::uint64_t r = 0; r < verify; ++r)
    fresh.push_back(RandomPairs(k, seed * 7919 + r + 1, range));
  std::vector<double> want;
  try {
    want = target(fresh);
  } catch (const probe::TargetError& e) {
    args.Fail(e.what());
  }
  std::size_t chosen = hyps.size();
  std::uint64_t agree = 0;
  for (std::size_t h : alive) {
    std::uint64_t ok = 0;
    for (std::uint64_t r = 0; r < verify; ++r)
      ok += SameBits(DotReplay(hyps[h].tree, fresh[r]), want[r]);
    if (chosen == hyps.size() || ok > agree) {
      chosen = h;
      agree = ok;
    }
    if (ok == verify) break;
  }
  const DotHypothesis& got = hyps[chosen];
  if (agree != verify) {
    std::cout << "target          " << description << "\n"
              << "result          no mma: profile replays the target: the closest, " << got.text
              << ", agrees on " << agree << " of " << verify << " fresh random inputs\n";
    ieee_hint();
    return 1;
  }
  std::string families;
  for (const auto& [name, count] : asked_families)
    families += (families.empty() ? "" : ", ") + std::to_string(count) + " " + name;
  std::string others;
  for (std::size_t h : alive)
    if (h != chosen) others += (others.empty() ? "" : ", ") + hyps[h].text;
  std::cout << "target          " << description << "\n"
            << "k               " << k << " products of " << dtype << " inputs\n"
            << "queries         " << adaptive_queries << " adaptive test vectors (" << families
            << "), then the other " << queries - adaptive_queries << " of the pool's "
            << pool.size() << " in one batch, against " << hyps.size() << " hypotheses\n"
            << "profile         " << got.text << "\n"
            << "fused step      " << NodeText(got.profile->node)
            << " (instruction k = " << got.profile->k << ", " << got.profile->instruction << ")\n"
            << "promotion       "
            << (got.promote ? "every " + std::to_string(got.promote) +
                                  " products the partial goes into an IEEE fp32 accumulator"
                            : std::string("none: the accumulator joins every fused step"))
            << "\n"
            << "same bits       " << (others.empty() ? "no other hypothesis" : others)
            << " on every test vector\n"
            << "verified        " << agree << " of " << verify << " fresh random inputs: replay of "
            << got.text << " == target, bit for bit\n";
  return agree == verify ? 0 : 1;
}

}  // namespace

int RunProbe(const std::vector<std::string>& argv_in) {
  if (std::any_of(argv_in.begin(), argv_in.end(),
                  [](const std::string& a) { return a.rfind("dot:", 0) == 0; }))
    return RunDotProbe(argv_in);
  std::vector<std::string> argv = argv_in;
  for (auto& a : argv)
    if (a == "-o") a = "--output";
  Args args("probe", argv,
            {"dtype", "n", "format", "output", "verify", "seed", "timeout", "method"}, {}, 1);
  if (args.Positional().empty())
    args.Fail(
        "give a TARGET: numpy.sum numpy.add.reduce:strided python.sum torch.sum "
        "torch.logsumexp LIB.so:SYMBOL exec:COMMAND");
  const std::string target_text = args.Positional()[0];
  const std::string dtype = args.Choice("dtype", {"fp32", "fp64"}, "");
  if (dtype.empty()) args.Require("dtype");
  const std::uint64_t n = args.RequireCount("n");
  if (n == 0) args.Fail("--n must be at least 1");
  const int p = dtype == "fp32" ? 24 : 53;
  const bool fp32 = dtype == "fp32";
  if (n >= (std::uint64_t{1} << (p - 1)))
    args.Fail("--n must be below 2^" + std::to_string(p - 1) + " for " + dtype +
              " (the masks' sums of ones must be exact)");
  const std::string method = args.Choice("method", {"auto", "fprev", "library"}, "auto");
  // Every tree costs FPRev at least n - 1 target calls of n values each (a sequential sum; a
  // balanced one about (n/2) log2 n calls): past 3.6e13 evaluated values, ten hours even at
  // 1 ns per value, the probe cannot finish.
  constexpr double kMaxValues = 3.6e13;
  if (method == "fprev" && static_cast<double>(n - 1) * static_cast<double>(n) > kMaxValues)
    args.Fail("--n " + std::to_string(n) + " needs at least " + std::to_string(n - 1) +
              " target calls of " + std::to_string(n) +
              " values each, more than ten hours even at 1 ns per value: use n <= " +
              std::to_string(static_cast<std::uint64_t>(std::sqrt(kMaxValues))) +
              " or --method library");
  const auto output = args.Get("output");
  const std::string format =
      args.Choice("format", {"text", "json", "dot"}, output ? "json" : "text");
  const std::uint64_t verify = args.Count("verify", 8);
  const std::uint64_t seed = args.Count("seed", 1);
  if (target_text == "numpy.dot" || target_text == "numpy.matmul" || target_text == "torch.matmul")
    args.Fail(target_text + " is a dot product: carrier probe dot:" + target_text);
  if (target_text == "torch.logsumexp")
    args.Fail(
        "torch.logsumexp: its terms exp(x - max) are positive, so FPRev's +M/-M masks "
        "cannot cancel and its tree is not observable this way (core/fprev.hpp)");

  const double timeout = args.Seconds("timeout", probe::kDefaultTargetTimeoutSeconds);
  if (timeout <= 0) args.Fail("--timeout must be more than 0 seconds");
  std::unique_ptr<probe::Target> target;
  try {
    target = probe::MakeTarget(target_text, dtype, n, timeout);
  } catch (const probe::TargetError& e) {
    args.Fail(e.what());
  }
  const double m = MaskMagnitude(n, p);
  ProbeStats stats;
  const auto t0 = std::chrono::steady_clock::now();
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  // Every call to the target goes through here: progress counts them, batches go whole.
  std::atomic<std::uint64_t> sent{0};
  auto evaluate = [&](const std::vector<MaskedInput>& batch) {
    std::vector<double> out;
    for (std::size_t at = 0; at < batch.size(); at += probe::kMaxBatch) {
      const std::size_t k = std::min(probe::kMaxBatch, batch.size() - at);
      const std::vector<MaskedInput> part(batch.begin() + at, batch.begin() + at + k);
      const std::vector<double> got = target->Evaluate(part);
      out.insert(out.end(), got.begin(), got.end());
      sent += k;
    }
    return out;
  };
  auto fprev_mask = [&](std::uint64_t i, std::uint64_t j) {
    return MaskedInput{1.0, {{i, 1, 1, m}, {j, 1, 1, -m}}};
  };
  auto values = [&](const std::vector<double>& x) {
    try {
      return target->Values(x);
    } catch (const probe::TargetError& e) {
      args.Fail(e.what());
    }
    return 0.0;
  };

  // Calibration: one round trip of kCalibrationCalls masks (after one call to warm up) gives
  // the cost of one call in a batch, for the estimates.
  double per_call = 0;
  if (n >= 2) {
    try {
      evaluate({fprev_mask(0, n - 1)});  // a first call may load libraries
    } catch (const probe::TargetError& e) {
      args.Fail(e.what());
    }
    const auto c0 = std::chrono::steady_clock::now();
    try {
      std::vector<MaskedInput> batch;
      for (std::uint64_t k = 0; k < kCalibrationCalls; ++k)
        batch.push_back(fprev_mask(0, 1 + k % (n - 1)));
      evaluate(batch);
    } catch (const probe::TargetError& e) {
      args.Fail(e.what());
    }
    per_call = since(c0) / kCalibrationCalls;
  }
  const std::uint64_t calibration = sent.load();

  // The estimate goes to a terminal before the work starts (and into the report at the end).
  const bool on_terminal = isatty(STDERR_FILENO) != 0;
  BinaryTree recovered;
  bool have_tree = false;
  std::string method_note = "FPRev's recursion";
  double estimate_calls = 0;
  std::string planned_text;
  std::atomic<std::uint64_t> planned{0};
  auto start_ticker = [&](const std::string& what, double eta) {
    return std::make_unique<Ticker>(
        "carrier probe " + target_text + " n = " + std::to_string(n) + ", " + what, eta, [&] {
          const std::uint64_t done = sent.load() - calibration;
          return "; " + std::to_string(done) + " target calls" +
                 (planned.load() ? " of " + std::to_string(planned.load()) : planned_text);
        });
  };

  // Library path: the candidates that give the target's bits on random inputs, the first one
  // proven exactly by packed masks (core/fprev.hpp, ProveSumTree).
  if (n >= 3 && (method == "library" || (method == "auto" && n >= kLibraryFrom))) {
    const std::vector<std::string> names = probe::CandidateSchedules(n);
    std::vector<std::vector<double>> xs;
    std::vector<double> ys;
    // Screening inputs: one of mixed signs and magnitudes, two of positive values in [1, 2),
    // whose running sums round at nearly every addition (the most order-sensitive sums), and
    // kWindows sparse ones: 256 such values in one window, zeros elsewhere, which see the
    // order inside the window that a sum of all n values rounds away (zeros add exactly).
    auto positive = [&](double v) {  // v in (-128, 128) -> (1, 2), held by the format
      return fp32 ? static_cast<double>(static_cast<float>(1.5 + v / 256)) : 1.5 + v / 256;
    };
    for (std::uint64_t k = 0; k < 3; ++k) {
      xs.push_back(RandomInput(n, seed + 0x5eed, k, fp32));
      if (k > 0)
        for (double& v : xs.back()) v = positive(v);
      ys.push_back(values(xs.back()));
    }
    constexpr std::uint64_t kWindows = 8, kWindow = 256;
    std::vector<MaskedInput> windows;
    for (std::uint64_t w = 0; w < kWindows; ++w) {
      const std::vector<double> r = RandomInput(kWindow + 1, seed + 0x3a11, w, fp32);
      const std::uint64_t len = std::min(kWindow, n);
      const std::uint64_t start =
          (static_cast<std::uint64_t>(std::fabs(r[kWindow]) * 1e6) * 7919) % (n - len + 1);
      MaskedInput in{0.0, {}};
      for (std::uint64_t k = 0; k < len; ++k) in.runs.push_back({start + k, 1, 1, positive(r[k])});
      windows.push_back(std::move(in));
    }
    try {
      const std::vector<double> got = evaluate(windows);
      for (std::uint64_t w = 0; w < kWindows; ++w) {
        xs.push_back(Materialize(windows[w], n));
        ys.push_back(got[w]);
      }
    } catch (const probe::TargetError& e) {
      args.Fail(e.what());
    }
    // Candidates that pass the random inputs are proven in library order until one holds (two
    // random sums cannot see a difference deep in a tree of 10^6 inputs; the proof can).
    std::string failures;
    std::uint64_t screened = 0;
    constexpr int kMaxProofs = 8;
    int proofs = 0;
    for (const std::string& name : names) {
      if (proofs == kMaxProofs) break;
      MergeTree c;
      try {
        c = BuildTree(name, n);
      } catch (const ScheduleError&) {
        continue;
      }
      ++screened;
      bool same = true;
      for (std::size_t k = 0; k < xs.size() && same; ++k)
        same = SameBits(fp32 ? ReplayAs<float>(c, xs[k]) : ReplayAs<double>(c, xs[k]), ys[k]);
      if (!same) continue;
      ++proofs;
      const BinaryTree predicted = ToBinaryTree(c);
      ProbeStats plan;
      std::string why = ProveSumTree(predicted, p, {}, plan);
      if (why.empty()) {
        planned = plan.calls;
        estimate_calls = static_cast<double>(plan.calls);
        if (on_terminal)
          std::cerr << "carrier probe: proving " << name << ": " << plan.calls
                    << " target calls in " << plan.batches << " rounds, about "
                    << Seconds(estimate_calls * per_call) << " at " << Seconds(per_call)
                    << " per call\n";
        ProbeStats proof;
        {
          const auto ticker = start_ticker("proving " + name, estimate_calls * per_call);
          try {
            why = ProveSumTree(predicted, p, evaluate, proof);
          } catch (const probe::TargetError& e) {
            args.Fail(e.what());
          }
        }
        stats.calls += proof.calls;
        stats.batches += proof.batches;
      }
      if (why.empty()) {
        recovered = predicted;
        have_tree = true;
        method_note = "proof of the library schedule " + name + " (" + std::to_string(screened) +
                      " candidates screened on 3 random inputs and 8 windows" +
                      (failures.empty() ? "" : "; refuted: " + failures) +
                      "; every subtree then checked by packed masks)";
        break;
      }
      failures += (failures.empty() ? "" : "; ") + name + ": " + why;
    }
    if (!have_tree)
      method_note = "FPRev's recursion (" +
                    (failures.empty() ? "none of " + std::to_string(screened) +
                                            " library schedules gave the target's bits on 3 "
                                            "random inputs and 8 windows"
                                      : "no library schedule proven: " + failures) +
                    ")";
    if (!have_tree && method == "library")
      args.Fail(probe::OneLine(target_text) + " (" + dtype + "): " + method_note);
  }

  if (!have_tree && static_cast<double>(n - 1) * static_cast<double>(n) > kMaxValues)
    args.Fail(probe::OneLine(target_text) + " (" + dtype + "): " + method_note +
              ": FPRev's recursion would need at least " + std::to_string(n - 1) +
              " target calls of " + std::to_string(n) + " values each (more than ten hours)");
  if (!have_tree) {
    // FPRev: between n - 1 calls (a sequential sum) and about (n/2) log2 n (a balanced one).
    const double balanced = std::ceil(
        static_cast<double>(n) / 2 * std::log2(static_cast<double>(std::max<std::uint64_t>(n, 2))));
    estimate_calls = balanced;
    planned_text = " (a balanced tree needs about " +
                   std::to_string(static_cast<std::uint64_t>(balanced)) + ", a sequential one " +
                   std::to_string(n - 1) + ")";
    if (n >= 2 && on_terminal)
      std::cerr << "carrier probe: FPRev needs " << n - 1 << " (sequential) to about "
                << static_cast<std::uint64_t>(balanced) << " (balanced) target calls, "
                << Seconds(static_cast<double>(n - 1) * per_call) << " to "
                << Seconds(balanced * per_call) << " at " << Seconds(per_call) << " per call\n";
    const auto ticker = start_ticker("FPRev", balanced * per_call);
    try {
      recovered = RecoverSumTreeBatched(
          n,
          [&](const std::vector<MaskRequest>& requests) {
            std::vector<MaskedInput> batch;
            for (const MaskRequest& r : requests)
              for (std::uint64_t j : r.js) batch.push_back(fprev_mask(r.i, j));
            const std::vector<double> flat = evaluate(batch);
            std::vector<std::vector<double>> out;
            std::size_t at = 0;
            for (const MaskRequest& r : requests) {
              out.emplace_back(flat.begin() + at, flat.begin() + at + r.js.size());
              at += r.js.size();
            }
            return out;
          },
          stats);
    } catch (const ProbeError& e) {
      args.Fail(probe::OneLine(target_text) + " (" + dtype + "): " + e.what() + " after " +
                std::to_string(stats.calls) + " calls");
    } catch (const probe::TargetError& e) {
      args.Fail(e.what());
    }
  }
  const double seconds = since(t0);
  const MergeTree tree = ToMergeTree(recovered, "probe:" + target_text);

  // FPRev's check: the recovered tree, replayed, gives the target's bits on random data.
  std::uint64_t agree = 0;
  std::string first_mismatch;
  for (std::uint64_t k = 0; k < verify; ++k) {
    const std::vector<double> x = RandomInput(n, seed, k, fp32);
    const double want = values(x);
    const double got = fp32 ? ReplayAs<float>(tree, x) : ReplayAs<double>(tree, x);
    if (SameBits(got, want)) {
      ++agree;
    } else if (first_mismatch.empty()) {
      std::ostringstream os;
      os << "random input " << k << " (seed " << seed << "): target " << std::hexfloat << want
         << ", replay " << got;
      first_mismatch = os.str();
    }
  }
  const std::vector<std::string> named = probe::MatchingSchedules(tree);
  const std::string exact_hash = TreeHash(tree), binary_hash = TreeHash(tree, TreeForm::kBinary);

  std::ostringstream report;
  report << "target          " << target->Description() << "\n"
         << "n               " << n << "\n"
         << "method          " << method_note << "\n"
         << "calls           " << stats.calls << " target calls in " << stats.batches << " rounds, "
         << seconds
         << " s (estimate before starting: " << static_cast<std::uint64_t>(estimate_calls)
         << " calls, " << Seconds(estimate_calls * per_call) << " at " << Seconds(per_call)
         << " per call)\n"
         << "verified        " << agree << " of " << verify
         << " random inputs: replay of the recovered tree == target, bit for bit\n";
  if (!first_mismatch.empty()) report << "mismatch        " << first_mismatch << "\n";
  report << "named schedule  ";
  if (named.empty()) {
    report << "none of " << probe::CandidateCount(n) << " candidates"
           << (output ? "; replay it with --schedule file:" + *output : std::string()) << "\n";
  } else {
    for (std::size_t k = 0; k < named.size(); ++k) report << (k ? ", " : "") << named[k];
    report << " (the same tree; --schedule " << named[0] << ")\n";
  }
  report << "tree hash       " << exact_hash << " (binary form " << binary_hash << ")\n";

  std::string body;
  if (format == "dot") {
    body = ToDot(tree);
  } else if (format == "json") {
    std::string names = "[";
    for (std::size_t k = 0; k < named.size(); ++k)
      names += (k ? "," : "") + io::JsonQuote(named[k]);
    io::JsonObject probe_json;
    probe_json.String("target", target_text)
        .String("dtype", dtype)
        .Raw("calls", std::to_string(stats.calls))
        .Raw("batches", std::to_string(stats.batches))
        .Raw("verified", std::to_string(agree))
        .Raw("verify", std::to_string(verify))
        .Raw("named", names + "]")
        .String("tree_hash", exact_hash)
        .String("binary_hash", binary_hash);
    body = "{\"probe\":" + probe_json.Compact() + "," + ToJson(tree).substr(1);
  } else {
    body = report.str() + ToText(tree);
  }
  if (output) {
    std::ofstream f(*output);
    if (!f) args.Fail("cannot write --output " + *output);
    f << body;
    std::cout << report.str();
  } else {
    std::cout << body;
    if (format != "text") std::cerr << report.str();
  }
  return agree == verify ? 0 : 1;
}

}  // namespace carrier::cli

namespace carrier::cli {

const char kProbeHelp[] =
    "usage: carrier probe TARGET --dtype fp32|fp64 --n N [--method auto|fprev|library]\n"
    "                     [--format text|json|dot] [-o FILE] [--verify K] [--seed S]\n"
    "                     [--timeout SECONDS]\n"
    "\n"
    "Recovers the merge tree of a black-box sum of N values by FPRev's method (Xie et al.,\n"
    "arXiv 2411.00442; core/fprev.hpp): inputs that are all 1 except +M at i and -M at j reveal\n"
    "the size of the subtree where i and j meet. FPRev needs n - 1 target calls for a sequential\n"
    "sum and about (n/2) log2 n for a balanced one, each over all n values: hours at n = 10^6.\n"
    "--method library (the default, auto, from n = 16384) first looks for a library schedule\n"
    "(seq, pairwise, blocked, strided, canonical, numpy, torch over powers of two) that gives\n"
    "the target's bits on 3 random inputs and 8 random windows of 256 values (zeros elsewhere),\n"
    "then proves it exactly: every subtree is checked by a mask with 0 outside its parent,\n"
    "several checks packed into one call in separate bit fields (about n/4 calls for numpy's\n"
    "tree in fp32, n/10 in fp64, n - 2 for a sequential sum). When none is proven, auto falls\n"
    "back to FPRev. On a terminal the probe prints its estimate before starting (calls, and\n"
    "time from a timed batch of 16 calls) and then a progress line; the report repeats the\n"
    "estimate next to what it took. It checks the tree by replaying it on K random inputs\n"
    "(default 8; exit 1 unless all agree bit for bit), names the schedules that build the same\n"
    "tree, and prints the tree (text, JSON or DOT). With -o FILE the tree goes to FILE (JSON by\n"
    "default) and can be replayed: carrier eval --schedule file:FILE ...\n"
    "\n"
    "Targets (run through /usr/bin/python3 experiments/probe/target.py where named so):\n"
    "  numpy.sum                 numpy.sum of a contiguous array\n"
    "  numpy.add.reduce:strided  numpy.add.reduce of a view with stride 2\n"
    "  python.sum                the built-in sum over Python floats (fp64 arithmetic)\n"
    "  torch.sum                 torch.sum of a CPU tensor (needs python3-torch)\n"
    "  torch.logsumexp           refused: exp terms are positive, the masks cannot cancel\n"
    "  LIB.so:SYMBOL             dlopen'd function with the C signature T f(const T*, size_t)\n"
    "  numpy.dot numpy.matmul torch.matmul: dot products, probed as dot:TARGET (below)\n"
    "  exec:COMMAND              sh -c COMMAND once per batch of K vectors (K*N <= 2^20, K <=\n"
    "                            4096): its stdin holds the K vectors back to back, N lines\n"
    "                            each, one C99 hex float (%a) per line; CARRIER_PROBE_N=N and\n"
    "                            CARRIER_PROBE_VECTORS=K are in its environment; it prints K\n"
    "                            numbers (decimal or hex, one per vector, separated by white\n"
    "                            space) and exits 0. A process running past --timeout\n"
    "                            (default 300 s) is killed; a failure is reported with its exit\n"
    "                            code or signal and the start of its stderr\n"
    "\n"
    "carrier probe dot:TARGET --k K [--dtype fp16|bf16|tf32|fp8e4m3|fp8e5m2|fp32|fp64]\n"
    "                        [--verify V] [--seed S] [-o FILE (fp32|fp64)]\n"
    "recovers a black-box dot product's matrix-unit accumulation: the mma: profile (and\n"
    "promotion interval) of core/mma.hpp that gives the target's bits. The hypotheses are every\n"
    "profile whose inputs hold --dtype (default fp16), alone or promoted every k * 2^j products;\n"
    "the test vectors generalise Fasi et al.'s (PeerJ CS 7:e330): fraction bits (+B, -B and\n"
    "+-2^-j B in one step), step and promotion boundaries (a tiny term that survives only\n"
    "across one), output rounding (B + 1.5 * 2^-d B) and random format values. Each query is the\n"
    "vector that splits the surviving hypotheses into the most classes; then the rest of the\n"
    "pool is asked in one batch and the survivor is checked on V fresh random inputs (default 8)\n"
    "before its profile, fused step (products per step, F, truncation or flooring, output\n"
    "rounding, one or two stages) and promotion are printed. Exit 1, saying so, when no profile\n"
    "replays the target. Targets: mma:PROFILE[:promote:N] (carrier's own model as a black box),\n"
    "numpy.dot (fp32, through target.py), exec:COMMAND (the exec: protocol above over 2K values\n"
    "per vector, a_0..a_{K-1} then b_0..b_{K-1}, N = 2K; a CUDA harness can serve it).\n"
    "--dtype fp32|fp64 (every target but mma:) probes an IEEE dot instead: FPRev\n"
    "recovers the order as the sum x -> dot(x, ones) (with b = 1 a rounded product and an FMA\n"
    "round alike), then V fresh random inputs decide the push rule: mul-add (the product\n"
    "rounded, then added: carrier eval --op dot replays it with the named schedule printed) or\n"
    "fma (IEEE 754 fusedMultiplyAdd, one rounding per step); combines are IEEE additions. For\n"
    "fp32 each addition is also found to be fp32 or fp64 (the masks absorb ones in fp64 too;\n"
    "one input per node keeps 2^-30 only in fp64; fp64 nodes must be closed upward), and the\n"
    "fp64 nodes' products rounded to fp32 or exact (OpenBLAS's sdot: fp32 FMA lanes, the tail\n"
    "and the final join in a double). -o FILE saves the tree with this per-node arithmetic\n"
    "(\"dot_arithmetic\", core/dot_arithmetic.hpp), checks the file on other fresh inputs and\n"
    "prints carrier eval --op dot --dtype D --acc D --schedule file:FILE, which replays it.\n"
    "IEEE dot targets, with one line each measured here (K = 100, OpenBLAS 0.3.21, torch 1.13):\n"
    "  numpy.dot, numpy.matmul   np.dot(a, b); np.matmul(a, b) of two 1-D arrays (fp32, fp64)\n"
    "    fp32: formats fp64 (2 of 65 nodes): the products of x[96..99]; the final join of\n"
    "    x[0..95] with x[96..99] ... (push fma: OpenBLAS's sdot; the same for both)\n"
    "  torch.matmul              torch.matmul(a, b) of two 1-D CPU tensors (fp32, fp64, bf16)\n"
    "    fp32: the same tree as numpy.dot (torch calls the same sdot); bf16: order seq,\n"
    "    formats every addition in bf16, push mul-add, replay carrier eval --op dot --dtype\n"
    "    bf16 --acc bf16 --schedule seq. --dtype bf16 (K <= 256, no -o) checks per node\n"
    "    that no addition keeps fp32's bits (1 + 2^-12 - 1) and replays in bf16 throughout;\n"
    "    a bf16 dot with a wider accumulator is refused in one line (exit 1)\n"
    "  LIB.so:SYMBOL             float f(const float* a, const float* b, size_t k), or the\n"
    "                            double version for fp64, by dlopen (the sum's loader)\n"
    "    four fp32 lanes and a double tail: formats fp64 (2 of 9 nodes): the products of\n"
    "    x[96..99]; the final join ..., fp64 products exact, push mul-add\n"
    "  exec:COMMAND              the exec: protocol over the 2K values a then b (fp32, fp64)\n"
    "\n"
    "A target that is not a tree of binary additions in the format (a compensated or exact\n"
    "sum, a wider accumulator) is reported as such (exit 2). max and other exact reductions have\n"
    "no observable tree.\n";

}  // namespace carrier::cli
