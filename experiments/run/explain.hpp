// experiments/run/explain.hpp: forensics. Which configurations of the library reproduce
// observed outputs bit for bit (`carrier explain`, carrier.explain in Python)?
//
// Given an op (sum or dot), its inputs and one or more observed outputs, Explain enumerates a
// search space of configurations, replays each one that survives the cheap invariants below on
// the inputs, and keeps those whose result has the observed bits:
//   orders      by default every order the library knows for n (LibraryOrders: seq, reverse,
//               pairwise[:L], blocked:B[:pairwise] and strided:S over powers of two, omp:C,
//               splitk:S[:INNER], cuda:... presets, canonical:L, numpy, torch:LANES); for dot
//               also every mma:PROFILE[:promote:N] whose input format holds every input
//               (N over the powers of two that are multiples of the profile's k, below n)
//   precisions  acc in fp8e4m3 fp8e5m2 fp16 bf16 tf32 fp32 fp64 under rne rna rz ru rd ro (fp64:
//               rne), and a wide accumulator rounded once to a narrower output (acc fp64 or
//               fp32, rne, out fp32 bf16 fp16); mma orders add their promotions in fp32 or fp64
// Cheap invariants, each exact (never drops a configuration that could match):
//   value set   a precision whose final format cannot hold any observed value is not replayed
//   direction   rd (ru) never lands above (below) the exact sum (each rounding is one-sided and
//               the sum is monotone in its operands): an observed value above (below) the
//               certified reference rules rd (ru) out; rz likewise where every term has one sign
//   bound       |computed - exact| <= gamma_D(u) sum|terms| (+ the out rounding) for a tree of
//               leaf depth D, where no partial sum can overflow (every finite format): an
//               observed error beyond it rules that (tree, precision) out
//   tree hash   orders whose trees hash equal (core/tree_hash.hpp, exact form) give equal bits
//               in every precision: one replay serves them all
// The replays are the op table's fast engine (core/replay.hpp), the same arithmetic as
// `carrier eval --engine fast`, on every thread asked for (one tree per worker at a time).
// Matches are grouped by (tree hash, precision); each observation's error is measured against
// the op's certified reference (run/trial.hpp ComputeReference). With two or more observations,
// `difference` names the smallest change between a configuration matching the first and one
// matching the second (same tree and another precision; or the same precision and an order
// differing in one parameter, e.g. blocked:256 vs blocked:128, or promotion 128 vs none).
// Errors: SpecError (one line) for bad input or search text.
#pragma once

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "run/trial.hpp"

namespace carrier::run {

struct ExplainSpec {
  std::string op;            // sum or dot
  std::string dtype;         // storage; empty: the narrowest predefined format holding every given
                             // value (given inputs) or fp32 (generated)
  std::vector<double> a, b;  // given inputs (b: dot's second column), or
  std::string gen;           // a generator (inputs/generators.hpp) with n and seed
  std::uint64_t n = 0, seed = 1;
  std::string input_text;  // how the given inputs were read, for the report
  std::vector<double> observed;
  // Empty: the defaults above. Else ';'-separated KEY=LIST items, LIST comma-separated:
  //   orders=library|SCHEDULE,...  acc=FORMAT,...  round=MODE,...  out=FORMAT,...|none
  //   mma=all|none|PROFILE,...     promote=all|none|N,...
  // `library` may be mixed with schedules (orders=library,random:7).
  std::string search;
  unsigned threads = 0;  // 0: every hardware thread
};

struct ExplainConfig {
  std::string schedule;   // as given (canonical text)
  std::string precision;  // "fp32 rne", "fp64 rne > fp32"
  std::string acc, round, out;
  std::string tree_hash;
};

struct ExplainGroup {
  std::string tree_hash, precision;
  std::vector<std::string> schedules;
};

struct ExplainObservation {
  double value = 0;
  std::vector<ExplainConfig> matches;
  std::vector<ExplainGroup> groups;  // matches by (tree hash, precision), in search order
  double abs_error = 0, rel_error = 0, ulp_error = 0;
  std::string ulp_format;  // the format the ulps are counted in (the first match's output)
};

struct ExplainResult {
  std::string op, dtype, input;
  std::uint64_t n = 0;
  double reference = 0;
  std::string reference_tier;
  bool reference_certified = false;
  std::size_t orders = 0, trees = 0, precisions = 0;
  std::uint64_t candidates = 0;  // orders x precisions that apply to them
  std::uint64_t pruned_value_set = 0, pruned_direction = 0, pruned_bound = 0, shared_tree = 0;
  std::uint64_t replays = 0;
  std::vector<ExplainObservation> observed;
  std::string difference;  // empty with one observation
  unsigned threads = 1;
  double seconds = 0, reference_seconds = 0;
};

// Counters a progress line may read while Explain runs (from another thread).
struct ExplainProgress {
  std::atomic<std::uint64_t> orders_total{0}, orders_done{0}, replays{0};
};

// Throws SpecError.
ExplainResult Explain(const ExplainSpec& spec, ExplainProgress* progress = nullptr);

// The library's orders for n inputs (the default `orders`), as canonical texts (ToString); the
// mma orders of a dot are added by Explain from the profiles whose input format holds the input.
std::vector<std::string> LibraryOrders(std::uint64_t n);

// The result as one JSON object (the verb's --json, Python's carrier.explain).
std::string ExplainJson(const ExplainResult& r);

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR
