// carrier explain: which configurations of the library reproduce observed outputs bit for bit
// (run/explain.hpp does the search; this file reads the flags and prints the report).
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/number_format.hpp"
#include "cli/progress.hpp"
#include "verbs/verbs.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include "inputs/read_numbers.hpp"
#include "run/explain.hpp"

namespace carrier::cli {

namespace {

// One observed value: a hex float (0x1.8p+3), a decimal, inf, -inf or nan; nothing else.
double ParseObserved(const Args& args, const std::string& text) {
  if (text.empty()) args.Fail("--observed has an empty value");
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || (errno == ERANGE && std::isfinite(v) && v != 0))
    args.Fail("--observed value '" + text + "' is not a number (hex float or decimal)");
  return v;
}

}  // namespace

int RunExplain(const std::vector<std::string>& argv) {
  Args args("explain", argv,
            {"op", "n", "gen", "seed", "dtype", "input", "observed", "observed-file", "search",
             "threads"},
            {"json"});
  run::ExplainSpec spec;
  spec.op = args.Choice("op", {"sum", "dot"}, "");
  if (spec.op.empty()) args.Require("op");
  const bool dot = spec.op == "dot";
  spec.dtype = args.Get("dtype").value_or("");
  if (args.Get("input") && args.Get("gen")) args.Fail("give either --input FILE or --gen DIST");
  if (auto path = args.Get("input")) {
    if (args.Get("n") || args.Get("seed")) args.Fail("--n and --seed go with --gen");
    try {
      auto cols = inputs::ReadNumbersFile(*path, dot ? 2 : 1, false);
      spec.a = std::move(cols.a);
      spec.b = std::move(cols.b);
    } catch (const inputs::InputError& e) {
      throw UsageError("carrier explain: " + std::string(e.what()));
    }
    spec.input_text = "file:" + *path;
    if (spec.a.empty()) args.Fail("--input " + *path + " holds no numbers");
  } else if (auto gen = args.Get("gen")) {
    spec.gen = *gen;
    spec.n = args.RequireCount("n");
    if (spec.n == 0) args.Fail("--n must be at least 1");
    if (spec.n > (std::uint64_t{1} << 24)) args.Fail("--n must be at most 2^24 for explain");
    spec.seed = args.Count("seed", 1);
  } else {
    args.Fail("give the input: --input FILE or --gen DIST --n N [--seed S]");
  }
  if (args.Get("observed") && args.Get("observed-file"))
    args.Fail("give either --observed HEX[,HEX...] or --observed-file FILE");
  if (auto obs = args.Get("observed")) {
    std::string cur;
    for (std::size_t i = 0; i <= obs->size(); ++i) {
      if (i == obs->size() || (*obs)[i] == ',') {
        spec.observed.push_back(ParseObserved(args, cur));
        cur.clear();
      } else {
        cur += (*obs)[i];
      }
    }
  } else if (auto path = args.Get("observed-file")) {
    try {
      spec.observed = inputs::ReadNumbersFile(*path, 1, true).a;
    } catch (const inputs::InputError& e) {
      throw UsageError("carrier explain: " + std::string(e.what()));
    }
    if (spec.observed.empty()) args.Fail("--observed-file " + *path + " holds no numbers");
  } else {
    args.Fail("give the observed outputs: --observed HEX[,HEX...] or --observed-file FILE");
  }
  spec.search = args.Get("search").value_or("");
  const std::uint64_t threads = args.Count("threads", 0);
  if (threads > 1024) args.Fail("--threads must be at most 1024");
  spec.threads = static_cast<unsigned>(threads);

  run::ExplainProgress progress;
  run::ExplainResult r;
  {
    Ticker ticker("carrier explain " + spec.op, -1, [&progress] {
      return "; orders " + std::to_string(progress.orders_done.load()) + "/" +
             std::to_string(progress.orders_total.load()) + ", " +
             std::to_string(progress.replays.load()) + " replays";
    });
    try {
      r = run::Explain(spec, &progress);
    } catch (const run::SpecError& e) {
      args.Fail(e.what());
    }
  }
  if (args.Has("json")) {
    std::cout << run::ExplainJson(r) << "\n";
  } else {
    std::cout << "op            " << r.op << " over n = " << r.n << " " << r.dtype << " inputs ("
              << r.input << ")\n"
              << "reference     " << Shortest(r.reference) << " (" << HexFloat(r.reference) << ", "
              << r.reference_tier << (r.reference_certified ? ", certified" : ", NOT certified")
              << ")\n"
              << "searched      " << r.orders << " orders (" << r.trees << " distinct trees) x "
              << r.precisions << " precisions: " << r.candidates << " candidates\n"
              << "pruned        " << r.pruned_value_set << " by value set, " << r.pruned_direction
              << " by rounding direction, " << r.shared_tree << " by a shared tree hash, "
              << r.pruned_bound << " (tree, precision) pairs by the a-priori bound\n"
              << "replayed      " << r.replays << " on " << r.threads << " threads in "
              << Shortest(r.seconds) << " s (reference " << Shortest(r.reference_seconds)
              << " s)\n";
    for (std::size_t k = 0; k < r.observed.size(); ++k) {
      const run::ExplainObservation& ob = r.observed[k];
      std::cout << "\nobserved " << k + 1 << "    " << HexFloat(ob.value) << " ("
                << Shortest(ob.value) << "): " << ob.matches.size()
                << " matching configurations in " << ob.groups.size() << " groups\n"
                << "  error       abs " << Shortest(ob.abs_error) << ", rel "
                << Shortest(ob.rel_error) << ", " << Shortest(ob.ulp_error) << " ulps of "
                << ob.ulp_format << "\n";
      for (const run::ExplainGroup& g : ob.groups) {
        std::cout << "  tree " << g.tree_hash << "  " << g.precision << ":";
        std::size_t shown = 0;
        for (const std::string& s : g.schedules) {
          if (shown++ == 12) {
            std::cout << " ... (" << g.schedules.size() << " orders)";
            break;
          }
          std::cout << " " << s;
        }
        std::cout << "\n";
      }
    }
    if (r.observed.size() >= 2) std::cout << "\ndifference    " << r.difference << "\n";
  }
  for (const auto& ob : r.observed)
    if (ob.matches.empty()) return 1;
  return 0;
}

}  // namespace carrier::cli

#else  // no MPFR

namespace carrier::cli {
int RunExplain(const std::vector<std::string>&) {
  throw UsageError(
      "carrier explain: this build has no MPFR (configured with CARRIER_WITH_MPFR=OFF "
      "or without libmpfr-dev), so it has no certified references");
}
}  // namespace carrier::cli

#endif

namespace carrier::cli {

const char kExplainHelp[] =
    "usage: carrier explain --op sum|dot (--input FILE | --gen DIST --n N [--seed S])\n"
    "                       (--observed X[,X...] | --observed-file FILE) [--dtype T]\n"
    "                       [--search SPACE] [--threads T] [--json]\n"
    "\n"
    "Finds every configuration of the library (merge order, accumulation format and rounding,\n"
    "output rounding; for dot also matrix-unit profiles and promotion intervals) whose replay\n"
    "of the inputs gives each observed output bit for bit, groups them by tree hash and\n"
    "precision, and prints each observation's error against the certified reference. With two\n"
    "observations it names the smallest difference between a configuration of the first and\n"
    "one of the second. Before replaying it drops what cannot match: precisions whose format\n"
    "cannot hold the observed value, rd/ru/rz on the wrong side of the exact sum, trees whose\n"
    "a-priori bound is below the observed error, and orders whose tree hash was already\n"
    "replayed. Exit 0 when every observation has a match, 1 when one has none.\n"
    "\n"
    "  --op OP          sum, or dot (two columns a b)\n"
    "  --input FILE     one number per line (dot: two), decimal or hex float\n"
    "  --gen DIST       a generator, with --n N (at most 2^24) and --seed S (default 1), as in\n"
    "                   carrier eval\n"
    "  --dtype T        storage format (default: the narrowest predefined format holding every\n"
    "                   value of a file; fp32 for generated inputs)\n"
    "  --observed X,... observed outputs, hex floats (0x1.8p+3) or decimals\n"
    "  --observed-file FILE  the same, one per line\n"
    "  --search SPACE   ';'-separated KEY=LIST items (LIST comma-separated), each replacing a\n"
    "                   default: orders=library|SCHEDULE,... (library: seq reverse pairwise[:L]\n"
    "                   blocked:B[:pairwise] strided:S omp:C[...] splitk:S[:pairwise]\n"
    "                   cuda:T:I:blocked|striped:shfl|xor canonical:L[:bisect] numpy torch:L,\n"
    "                   powers of two below n), acc=FORMAT,... (fp8e4m3 fp8e5m2 fp16 bf16 tf32\n"
    "                   fp32 fp64), round=MODE,... (rne rna rz ru rd ro; fp64 rne only),\n"
    "                   out=FORMAT,...|none (fp32 bf16 fp16: an fp32/fp64 accumulator rounded\n"
    "                   once to a narrower output), mma=all|none|PROFILE,... and\n"
    "                   promote=all|none|N,... (dot: every profile whose input format holds the\n"
    "                   inputs, every power-of-two promotion interval below n; promotions\n"
    "                   added in fp32 and fp64)\n"
    "  --threads T      worker threads (default: every hardware thread)\n"
    "  --json           one JSON object instead of the text report\n"
    "  e.g. carrier explain --op sum --gen normal --n 100000 --observed 0x1.3d2ep+8,0x1.3d2f2p+8\n"
    "       carrier explain --op dot --input pairs.txt --observed 0x1.02p+4 --search mma=hopper\n";

}  // namespace carrier::cli
