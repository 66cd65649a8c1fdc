// carrier invariance: does a schedule family keep a row's tree fixed across batch sizes,
// padding or chunk alignment? Decided on trees (core/invariance.hpp); a failure comes with an
// FPRev mask on which the row's sum differs between the two contexts, replayed to confirm.
//
// --carrier attention replays, in every context, one query row of FlashAttention-2's (m, l, O)
// carrier (FlashRow<float, 64, FA2, PortableExp>: running max, running sum, unnormalised
// output row) over n keys with seeded random scores and values, the pads and the buffer
// prefix being masked keys (score -inf: Identity, their v never read). The contexts are then
// grouped by the bits of the row's 64 outputs: one group is what "batch invariant" means to a
// user (FlashAttention issue 1897: a split count chosen from the batch changes the bits). The
// tree verdict must agree: contexts with one row tree give one output, and a row tree that
// differs gives different bits on the FPRev mask (checked); random data usually shows it too.
#include "core/invariance.hpp"

#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>

#include "cli/args.hpp"
#include "core/carriers/flash_row.hpp"
#include "core/carriers/sum.hpp"
#include "core/replay.hpp"
#include "precision/math_policy.hpp"
#include "verbs/verbs.hpp"

namespace carrier::cli {

namespace {

// The row's witness placed in a context: zeros outside the row (pads, the buffer prefix).
double ReplayRow(const MergeTree& t, std::uint64_t offset, std::uint64_t n, std::uint64_t i,
                 std::uint64_t j, double m) {
  std::vector<double> x(t.n, 0.0);
  for (std::uint64_t k = 0; k < n; ++k) x[offset + k] = 1.0;
  x[offset + i] = m;
  x[offset + j] = -m;
  return ReplayResult<Sum<double>>(t, std::span<const double>(x));
}

constexpr std::size_t kAttentionDim = 64;
using AttentionRow = FlashRow<float, kAttentionDim, FlashVariant::kFA2, PortableExp>;

// Seeded attention row: n scores (normal, scale 2: softmax weights spread over many keys) and
// n value rows of kAttentionDim (normal).
struct AttentionData {
  std::vector<float> scores, values;
};

AttentionData MakeAttentionData(std::uint64_t n, std::uint64_t seed) {
  AttentionData d;
  d.scores.resize(n);
  d.values.resize(n * kAttentionDim);
  std::uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL;
  auto normal = [&] {  // Box-Muller from two 53-bit uniforms
    state = tree_detail::Mix(state);
    const double u1 = (static_cast<double>(state >> 11) + 0.5) * 0x1.0p-53;
    state = tree_detail::Mix(state);
    const double u2 = static_cast<double>(state >> 11) * 0x1.0p-53;
    return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  };
  for (auto& s : d.scores) s = static_cast<float>(2 * normal());
  for (auto& v : d.values) v = static_cast<float>(normal());
  return d;
}

// The row's 64 outputs in context c, as their bit patterns.
std::vector<std::uint32_t> AttentionOutputBits(const InvarianceContext& c, std::uint64_t n,
                                               const AttentionData& d) {
  std::vector<FlashInput<float>> in(c.tree.n, {-std::numeric_limits<float>::infinity(), nullptr});
  for (std::uint64_t k = 0; k < n; ++k)
    in[c.offset + k] = {d.scores[k], d.values.data() + k * kAttentionDim};
  const AttentionRow::Result r =
      AttentionRow::Finalize(Replay<AttentionRow>(c.tree, std::span<const FlashInput<float>>(in)));
  std::vector<std::uint32_t> bits(kAttentionDim);
  for (std::size_t j = 0; j < kAttentionDim; ++j) std::memcpy(&bits[j], &r.o[j], sizeof(float));
  return bits;
}

// "1-4 7 9-12": the context numbers of a group.
std::string Ranges(const std::vector<std::uint64_t>& ks) {
  std::ostringstream os;
  for (std::size_t a = 0; a < ks.size();) {
    std::size_t b = a;
    while (b + 1 < ks.size() && ks[b + 1] == ks[b] + 1) ++b;
    os << (a ? " " : "") << ks[a];
    if (b > a) os << "-" << ks[b];
    a = b + 1;
  }
  return os.str();
}

// Groups the contexts by the attention row's output bits; returns the exit status.
int RunAttentionInvariance(const std::string& property, const std::string& family, std::uint64_t n,
                           std::uint64_t limit, std::uint64_t seed) {
  const AttentionData data = MakeAttentionData(n, seed);
  const auto [first, last] = InvarianceContextRange(property, limit);
  std::map<std::vector<std::uint32_t>, std::vector<std::uint64_t>> by_bits;
  struct TreeClass {
    BinaryTree row;
    std::vector<std::uint32_t> bits;
    std::uint64_t first_context;
  };
  std::vector<TreeClass> trees;  // distinct row trees (FirstDifference decides equality)
  std::vector<std::vector<std::uint32_t>> order;  // groups in order of first appearance
  for (std::uint64_t k = first; k <= last; ++k) {
    const InvarianceContext c = MakeInvarianceContext(property, family, n, k);
    const std::vector<std::uint32_t> bits = AttentionOutputBits(c, n, data);
    if (by_bits.find(bits) == by_bits.end()) order.push_back(bits);
    by_bits[bits].push_back(k);
    BinaryTree row = InvarianceRowTree(c, n);
    const TreeClass* same = nullptr;
    for (const TreeClass& t : trees)
      if (!FirstDifference(t.row, row).found) same = &t;
    if (same == nullptr) {
      trees.push_back({std::move(row), bits, k});
    } else if (same->bits != bits) {
      std::cout << "internal error: context " << k << " has the row tree of context "
                << same->first_context << " but other output bits\n";
      return 3;
    }
  }
  std::cout << "property        " << property << "\n"
            << "family          " << family << "\n"
            << "row             attention, n = " << n << " keys, head dim " << kAttentionDim
            << " (FlashRow FA2, fp32, portable exp; scores, values seed " << seed << ")\n"
            << "contexts        " << last - first + 1 << " (" << property << " " << first << ".."
            << last << ")\n"
            << "row trees       " << trees.size() << " distinct\n"
            << "output bits     " << by_bits.size() << " distinct\n";
  for (std::size_t g = 0; g < order.size(); ++g) {
    const auto& ks = by_bits[order[g]];
    float o0;
    std::memcpy(&o0, &order[g][0], sizeof o0);
    const std::string label = "  bits " + std::to_string(g + 1);
    std::cout << label << std::string(label.size() < 16 ? 16 - label.size() : 1, ' ') << property
              << " " << Ranges(ks) << ": o[0] = " << std::hexfloat << o0 << std::defaultfloat
              << "\n";
  }
  if (by_bits.size() == 1) {
    std::cout << "verdict         invariant: identical bits in every context\n";
    return trees.size() == 1 ? 0 : 3;
  }
  std::cout << "verdict         NOT invariant: the row's outputs depend on the " << property
            << "\n";
  return 1;
}

}  // namespace

int RunInvariance(const std::vector<std::string>& argv) {
  Args args("invariance", argv,
            {"family", "n", "max-batch", "max-pad", "offsets", "carrier", "seed"}, {}, 1);
  if (args.Positional().size() != 1)
    args.Fail("give a property: carrier invariance batch|padding|alignment --family F --n N");
  const std::string property = args.Positional()[0];
  if (property != "batch" && property != "padding" && property != "alignment")
    args.Fail("property must be batch, padding or alignment, got '" + property + "'");
  const std::string family = args.Require("family");
  const std::uint64_t n = args.RequireCount("n");
  if (n < 2 || n > (std::uint64_t{1} << 20)) args.Fail("--n must be in [2, 2^20]");
  const std::uint64_t limit = property == "batch"     ? args.Count("max-batch", 64)
                              : property == "padding" ? args.Count("max-pad", 64)
                                                      : args.Count("offsets", 64);
  if (limit > 4096) args.Fail("the context limit must be at most 4096");
  const std::string carrier = args.Choice("carrier", {"sum", "attention"}, "sum");
  const std::uint64_t seed = args.Count("seed", 1);
  if (carrier == "attention") {
    if (n > (std::uint64_t{1} << 16)) args.Fail("--carrier attention needs --n at most 2^16");
    try {
      (void)BuildTree(FamilySchedule(family, 1), n);
      return RunAttentionInvariance(property, family, n, limit, seed);
    } catch (const std::exception& e) {
      args.Fail("bad --family '" + family + "': " + e.what());
    }
  }
  InvarianceResult r;
  try {
    (void)BuildTree(FamilySchedule(family, 1), n);
    r = CheckInvariance(property, family, n, limit);
  } catch (const std::exception& e) {  // ScheduleError, or a bad number in the family
    args.Fail("bad --family '" + family + "': " + e.what());
  }
  std::cout << "property        " << property << "\n"
            << "family          " << family << "\n"
            << "row             n = " << n << " real inputs (sum, binary form)\n"
            << "contexts        " << r.checked + 1 << " compared\n";
  if (r.invariant) {
    std::cout << "verdict         invariant: the row's tree is the same in every context\n";
    return 0;
  }
  const double m = MaskMagnitude(n + std::max(r.tree_a.n, r.tree_b.n), 53);
  const double a = ReplayRow(r.tree_a, r.offset_a, n, r.diff.i, r.diff.j, m);
  const double b = ReplayRow(r.tree_b, r.offset_b, n, r.diff.i, r.diff.j, m);
  std::cout << "verdict         NOT invariant: " << r.context_a << " and " << r.context_b
            << " reduce the row by different trees\n"
            << "witness         row x[" << r.diff.i << "] = +2^" << std::ilogb(m) << ", x["
            << r.diff.j << "] = -2^" << std::ilogb(m) << ", other row inputs 1, pads and prefix 0\n"
            << "replayed        row sum " << a << " vs " << b << " (fp64)\n";
  return a != b ? 1 : 3;
}

const char kInvarianceHelp[] =
    "usage: carrier invariance batch|padding|alignment --family F --n N\n"
    "                          [--max-batch B] [--max-pad P] [--offsets K]\n"
    "                          [--carrier sum|attention] [--seed S]\n"
    "\n"
    "Checks whether a row of N inputs is reduced by the same tree (core/invariance.hpp) when\n"
    "  batch      the batch has B = 1..max-batch rows (default 64),\n"
    "  padding    the row is padded with p = 0..max-pad identity inputs (default 64),\n"
    "  alignment  the row starts at offset 0..K-1 of a buffer whose chunk grid starts at 0.\n"
    "Families: splits:S (a fixed split count, omp:S), splitsize:T[:pairwise] (a fixed split\n"
    "size, blocked:T), heuristic:W (split-KV: max(1, W / B) splits per row, as FlashAttention's\n"
    "num_splits heuristic), or any schedule. Exit 0 when invariant; 1 when not, with an FPRev\n"
    "mask on which the two contexts' row sums differ (both replayed).\n"
    "--carrier attention replays one query row of FlashAttention-2's (m, l, O) carrier (head\n"
    "dim 64, fp32, seeded scores and values; pads are masked keys) in every context and groups\n"
    "the contexts by the bits of its outputs: exit 0 when one group, 1 otherwise.\n"
    "  e.g. carrier invariance batch --family heuristic:132 --n 4096\n"
    "       carrier invariance padding --family splits:4 --n 1000\n"
    "       carrier invariance padding --family splitsize:256 --n 1000\n"
    "       carrier invariance batch --family heuristic:132 --n 4096 --carrier attention\n";

}  // namespace carrier::cli
