// experiments/sweep/summary.cpp: the summary table `carrier sweep` and `carrier merge` print
// from a trials.csv (sweep/runner.hpp PrintSummary): per op and format group, the worst and the
// best merge order by median relative error, and each one's largest error / bound.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli/number_format.hpp"
#include "sweep/csv.hpp"
#include "sweep/runner.hpp"
#include "util/stats.hpp"

namespace carrier::sweep {

namespace {

using util::Median;

// A CSV number cell: empty is NaN; "inf" and "-inf" as written by the sweep.
double ParseDouble(const std::string& s) {
  if (s.empty()) return NAN;
  try {
    return std::stod(s);
  } catch (const std::exception&) {
    return s == "inf" ? INFINITY : s == "-inf" ? -INFINITY : NAN;
  }
}

}  // namespace

void PrintSummary(const std::string& csv_path) {
  const CsvFile f = ReadTrialsCsv(csv_path);
  const auto& cols = CsvColumns();
  auto col = [&](const char* name) {
    return static_cast<std::size_t>(std::find(cols.begin(), cols.end(), name) - cols.begin());
  };
  const std::size_t c_op = col("op"), c_dtype = col("dtype"), c_acc = col("acc"),
                    c_round = col("round"), c_backend = col("backend"), c_sched = col("schedule"),
                    c_status = col("status"), c_rel = col("rel_error"),
                    c_ratio = col("error_to_bound"), c_precision = col("precision");
  struct Sched {
    std::vector<double> rel;
    double max_ratio = NAN;
  };
  std::map<std::string, std::map<std::string, Sched>> groups;  // group -> schedule -> data
  std::vector<std::string> order;
  std::uint64_t failed = 0;
  for (const auto& line : f.rows) {
    const auto fld = SplitCsvLine(line);
    if (fld[c_status] != "ok") {
      ++failed;
      continue;
    }
    std::string g = fld[c_op] + " " + fld[c_dtype];
    if (fld[c_acc] != "same" && fld[c_acc] != fld[c_dtype]) g += " acc " + fld[c_acc];
    if (fld[c_round] != "rne") g += " " + fld[c_round];
    if (fld[c_backend] != "replay") g += " " + fld[c_backend];
    if (!fld[c_precision].empty()) g += " (" + fld[c_precision] + ")";
    if (!groups.count(g)) order.push_back(g);
    Sched& s = groups[g][fld[c_sched]];
    const double rel = ParseDouble(fld[c_rel]);
    if (!std::isnan(rel)) s.rel.push_back(rel);  // a NaN result (NaN input) has no error
    const double r = ParseDouble(fld[c_ratio]);
    if (!std::isnan(r)) s.max_ratio = std::isnan(s.max_ratio) ? r : std::max(s.max_ratio, r);
  }
  std::printf(
      "\nsummary: per op and format, the worst and the best merge order by median relative\n"
      "error over its trials (and the largest error/bound of that order; '-' = no bound)\n\n");
  std::printf("%-26s %-22s %-10s %-9s   %-22s %-10s %-9s\n", "op / format", "worst order",
              "median err", "err/bound", "best order", "median err", "err/bound");
  std::printf("%s\n", std::string(116, '-').c_str());
  auto ratio = [](double r) { return std::isnan(r) ? std::string("-") : cli::Sig(r, 2); };
  for (const auto& g : order) {
    std::string worst, best;
    double wv = -1, bv = INFINITY;
    for (const auto& [sched, s] : groups[g]) {
      const double m = Median(s.rel);
      if (m > wv || worst.empty()) wv = m, worst = sched;
      if (m < bv || best.empty()) bv = m, best = sched;
    }
    const Sched& w = groups[g][worst];
    const Sched& b = groups[g][best];
    if (groups[g].size() > 1 && wv == bv) {
      std::printf("%-26s every order gives median %s (err/bound up to %s)\n", g.c_str(),
                  cli::Sig(wv, 2).c_str(), ratio(w.max_ratio).c_str());
      continue;
    }
    std::printf("%-26s %-22s %-10s %-9s   %-22s %-10s %-9s\n", g.c_str(), worst.c_str(),
                cli::Sig(wv, 2).c_str(), ratio(w.max_ratio).c_str(), best.c_str(),
                cli::Sig(bv, 2).c_str(), ratio(b.max_ratio).c_str());
  }
  if (failed)
    std::printf(
        "(%llu failed or flagged trials not summarised; see the status and error columns)\n",
        static_cast<unsigned long long>(failed));
}

}  // namespace carrier::sweep
