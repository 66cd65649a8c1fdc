// core/dot_arithmetic.hpp: a dot product's arithmetic node by node, for the trees `carrier probe
// dot:... --dtype fp32|fp64` recovers from IEEE dots that are not one format throughout
// (OpenBLAS's x86_64 sdot: FMA lanes in fp32, a tail and the final join in a double).
//
// Contract. A DotArithmetic goes with a MergeTree (core/merge_tree.hpp) over the K pairs of a
// dot and says how each of its nodes computes:
//   format        fp32 or fp64: the inputs' format, of every node not listed below, and of the
//                 result (the root's value is rounded to it once, at the end);
//   push          how a chain in `format` adds a product: mul-add s + round(a*b) (carrier's
//                 Dot), or fma round(s + a*b) (IEEE 754 fusedMultiplyAdd); a chain's first
//                 product goes onto +0, as in every replay; or per-input: input i's product is
//                 added fused (fma) when fused[i], else rounded first, wherever it joins a
//                 partial sum in `format` (a chain step, or a combine with a one-input chain:
//                 OpenBLAS's AVX-512 sdot folds two one-product lanes with a plain add, then
//                 adds the next products to the fold by FMA);
//   wide          per node (chains 0..C-1, then combines), whether it computes in fp64 instead
//                 (format fp32 only); an fp64 node's consumer must be fp64 too (the fp64
//                 nodes are closed upward: CheckDotArithmetic). A chain in fp64 adds each
//                 product in fp64 after rounding it to fp32 (wide_products kRounded: C's
//                 `double d += x[i] * y[i]` over floats) or exactly (kExact: float * float is
//                 exact in a double, so this is also fma in fp64); a combine in fp64 adds its
//                 operands in fp64.
// ReplayDotArithmetic gives the result (a value of `format`, as a double) bit for bit.
// In a tree file (core/tree_io.hpp) it is the optional top-level key
//   "dot_arithmetic": {"format": "fp32"|"fp64", "push": "mul-add"|"fma"|"per-input",
//                      "fused_inputs": [I, ...], "fp64_nodes": [ID, ...],
//                      "fp64_products": "fp32"|"exact"}
// ("fused_inputs", "fp64_nodes" and "fp64_products" may be left out: none, none, fp32);
// TreeFromJson skips it (the order alone), ReadDotArithmetic parses it, and `carrier eval --op dot`
// replays it (experiments/ops/pairs.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/merge_tree.hpp"

namespace carrier {

enum class DotPush { kMulAdd, kFma, kPerInput };
enum class WideProducts { kRounded, kExact };

struct DotArithmetic {
  bool fp32 = true;  // format fp32 (else fp64)
  DotPush push = DotPush::kMulAdd;
  WideProducts wide_products = WideProducts::kRounded;
  std::vector<std::uint8_t> wide;   // per node; empty: none
  std::vector<std::uint8_t> fused;  // per input (push kPerInput); shorter: the rest rounded
  bool Wide(std::uint64_t node) const { return node < wide.size() && wide[node] != 0; }
  // Whether input i's product joins a partial sum in `format` with one rounding.
  bool Fuses(std::uint64_t i) const {
    return push == DotPush::kFma ||
           (push == DotPush::kPerInput && i < fused.size() && fused[i] != 0);
  }
  bool AnyWide() const {
    for (std::uint8_t w : wide)
      if (w) return true;
    return false;
  }
};

// "" when `a` fits tree `t` (node count, fp64 nodes only under format fp32, closed upward),
// else one line naming the first problem.
inline std::string CheckDotArithmetic(const MergeTree& t, const DotArithmetic& a) {
  if (!a.wide.empty() && a.wide.size() != t.NodeCount())
    return "the arithmetic names " + std::to_string(a.wide.size()) + " nodes, the tree has " +
           std::to_string(t.NodeCount());
  if (!a.fp32 && a.AnyWide()) return "fp64 nodes need format fp32";
  if (a.push != DotPush::kPerInput && !a.fused.empty()) return "fused inputs need push per-input";
  if (a.fused.size() > t.n)
    return "the arithmetic names fused input " + std::to_string(a.fused.size() - 1) +
           ", the tree has " + std::to_string(t.n) + " inputs";
  if (t.UsesFusedNode() || t.UsesTileLift()) return "a dot arithmetic takes push chains only";
  const std::uint64_t c = t.chains.size();
  for (std::uint64_t m = 0; m < t.combines.size(); ++m)
    for (std::uint64_t operand : {t.combines[m].left, t.combines[m].right})
      if (a.Wide(operand) && !a.Wide(c + m))
        return "node " + std::to_string(operand) + " is fp64 but its consumer, node " +
               std::to_string(c + m) + ", is fp32 (the fp64 nodes must be closed upward)";
  return "";
}

// The dot of (a_i, b_i), i < t.n, values of the format, under tree t and arithmetic ar (checked
// by the caller: CheckDotArithmetic).
inline double ReplayDotArithmetic(const MergeTree& t, const DotArithmetic& ar,
                                  std::span<const double> a, std::span<const double> b) {
  const std::uint64_t nodes = t.NodeCount();
  if (nodes == 0) return 0.0;
  std::vector<double> v(nodes);  // every node's value (an fp32 value is exact in a double)
  for (std::uint64_t k = 0; k < t.chains.size(); ++k) {
    const Chain& ch = t.chains[k];
    const bool wide = ar.fp32 && ar.Wide(k);
    double s = 0.0;
    for (std::uint64_t j = 0; j < ch.count; ++j) {
      const std::uint64_t i = ch.first + j * ch.stride;
      if (!ar.fp32) {
        s = ar.Fuses(i) ? std::fma(a[i], b[i], s) : s + a[i] * b[i];
      } else if (wide) {
        const double exact = a[i] * b[i];  // 24 + 24 bits: exact in a double
        s += ar.wide_products == WideProducts::kExact
                 ? exact
                 : static_cast<double>(static_cast<float>(exact));
      } else {
        const float x = static_cast<float>(a[i]), y = static_cast<float>(b[i]),
                    f = static_cast<float>(s);
        s = ar.Fuses(i) ? std::fma(x, y, f) : static_cast<double>(f + x * y);
      }
    }
    v[k] = s;
  }
  for (std::uint64_t m = 0; m < t.combines.size(); ++m) {
    const std::uint64_t id = t.chains.size() + m;
    const std::uint64_t lid = t.combines[m].left, rid = t.combines[m].right;
    const double l = v[lid], r = v[rid];
    // Per-input pushes: a one-input chain whose product is fused joins the other operand by
    // one fma (the right operand's product first, as a kernel adds the next product).
    auto fused_single = [&](std::uint64_t node) -> std::int64_t {
      if (ar.push != DotPush::kPerInput || node >= t.chains.size()) return -1;
      const Chain& ch = t.chains[node];
      return ch.count == 1 && ar.Fuses(ch.first) ? static_cast<std::int64_t>(ch.first) : -1;
    };
    const std::int64_t fr = fused_single(rid), fl = fr < 0 ? fused_single(lid) : -1;
    if (!ar.fp32 && (fr >= 0 || fl >= 0)) {
      const auto i = static_cast<std::size_t>(fr >= 0 ? fr : fl);
      v[id] = std::fma(a[i], b[i], fr >= 0 ? l : r);
    } else if (ar.fp32 && !ar.Wide(id) && (fr >= 0 || fl >= 0)) {
      const auto i = static_cast<std::size_t>(fr >= 0 ? fr : fl);
      v[id] = std::fma(static_cast<float>(a[i]), static_cast<float>(b[i]),
                       static_cast<float>(fr >= 0 ? l : r));
    } else {
      v[id] = !ar.fp32 || ar.Wide(id)
                  ? l + r
                  : static_cast<double>(static_cast<float>(l) + static_cast<float>(r));
    }
  }
  const double root = v[t.Root()];
  return ar.fp32 ? static_cast<double>(static_cast<float>(root)) : root;
}

// The "dot_arithmetic" value (one line of JSON, no key).
inline std::string DotArithmeticJson(const DotArithmetic& a) {
  std::string s = std::string("{\"format\":\"") + (a.fp32 ? "fp32" : "fp64") + "\",\"push\":\"" +
                  (a.push == DotPush::kFma        ? "fma"
                   : a.push == DotPush::kPerInput ? "per-input"
                                                  : "mul-add") +
                  "\",";
  if (a.push == DotPush::kPerInput) {
    s += "\"fused_inputs\":[";
    bool first_input = true;
    for (std::uint64_t i = 0; i < a.fused.size(); ++i)
      if (a.fused[i]) {
        s += (first_input ? "" : ",") + std::to_string(i);
        first_input = false;
      }
    s += "],";
  }
  s += "\"fp64_nodes\":[";
  bool first = true;
  for (std::uint64_t k = 0; k < a.wide.size(); ++k)
    if (a.wide[k]) {
      s += (first ? "" : ",") + std::to_string(k);
      first = false;
    }
  return s + "],\"fp64_products\":\"" +
         (a.wide_products == WideProducts::kExact ? "exact" : "fp32") + "\"}";
}

// The "dot_arithmetic" of a tree file's text, sized to a tree of `nodes` nodes; nullopt when the
// key is absent. Throws ScheduleError (one line, starting with origin) for a malformed value.
// Defined in core/tree_io.cpp (nlohmann-json stays out of core headers).
std::optional<DotArithmetic> ReadDotArithmetic(std::string_view text, const std::string& origin,
                                               std::uint64_t nodes);

}  // namespace carrier
