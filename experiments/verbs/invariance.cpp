// carrier invariance: does a schedule family keep a row's tree fixed across batch sizes,
// padding or chunk alignment? Decided on trees (core/invariance.hpp); a failure comes with an
// FPRev mask on which the row's sum differs between the two contexts, replayed to confirm.
#include "core/invariance.hpp"

#include <cmath>
#include <iostream>

#include "cli/args.hpp"
#include "core/carriers/sum.hpp"
#include "core/replay.hpp"
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

}  // namespace

int RunInvariance(const std::vector<std::string>& argv) {
  Args args("invariance", argv, {"family", "n", "max-batch", "max-pad", "offsets"}, {}, 1);
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
    "\n"
    "Checks whether a row of N inputs is reduced by the same tree (core/invariance.hpp) when\n"
    "  batch      the batch has B = 1..max-batch rows (default 64),\n"
    "  padding    the row is padded with p = 0..max-pad identity inputs (default 64),\n"
    "  alignment  the row starts at offset 0..K-1 of a buffer whose chunk grid starts at 0.\n"
    "Families: splits:S (a fixed split count, omp:S), splitsize:T[:pairwise] (a fixed split\n"
    "size, blocked:T), heuristic:W (split-KV: max(1, W / B) splits per row, as FlashAttention's\n"
    "num_splits heuristic), or any schedule. Exit 0 when invariant; 1 when not, with an FPRev\n"
    "mask on which the two contexts' row sums differ (both replayed).\n"
    "  e.g. carrier invariance batch --family heuristic:132 --n 4096\n"
    "       carrier invariance padding --family splits:4 --n 1000\n"
    "       carrier invariance padding --family splitsize:256 --n 1000\n";

}  // namespace carrier::cli
