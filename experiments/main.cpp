// carrier: the command-line workbench. Verbs in the git style; `carrier VERB --help` for each.
// Exit codes: 0 success, 1 an internal failure, 2 bad input (one line on stderr naming it).
#include <algorithm>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "verbs/verbs.hpp"

#ifndef CARRIER_VERSION
#define CARRIER_VERSION "unknown"
#endif

namespace carrier::cli {

const Verb kVerbs[] = {
    {"demo", "log-sum-exp, variance and sum in fp32 through four merge orders",
     "usage: carrier demo [--n N] [--seed S]\n"
     "\n"
     "Reduces n = 10^6 fp32 values x = 100 + N(0,1) (seed 42) with OnlineSoftmax (log-sum-exp),\n"
     "Welford (population variance) and Sum through the schedules seq, pairwise, blocked:64 and\n"
     "strided:16, and prints each result with its relative difference from a long double\n"
     "computation and the tree's max leaf depth.\n"
     "\n"
     "  --n N      number of values (default 1000000; 1e6 and 2^20 forms accepted)\n"
     "  --seed S   generator seed (default 42)\n",
     RunDemo},
    {"eval", "one reduction against its certified reference and a-priori bound",
     "usage: carrier eval --op OP --dtype T [--acc T] [--round MODE] [--schedule S]\n"
     "                    [--exp POLICY] (--input FILE | --gen DIST --n N [--seed S])\n"
     "                    [--format text|json] [--allow-nonfinite] [--sr-seed S]\n"
     "\n"
     "Rounds the inputs to the storage format T (round to nearest even), reduces them in the\n"
     "compute format (--acc, default T) through the schedule's merge tree, and prints the\n"
     "result, the certified reference of the op on the stored values (with the tier and\n"
     "precision that certified it), the absolute, relative and ulp errors, the a-priori bound\n"
     "for the tree's depth and the ratio to it. Numbers are shortest round-trip decimals;\n"
     "non-finite values are inf, -inf, nan (strings in JSON). Exit 1 if the reference could\n"
     "not be certified.\n"
     "\n"
     "  --op OP        sum kahan max argmax lse softmax welford norm2 dot affine\n"
     "  --dtype T      storage: fp8e4m3 fp8e4m3sat fp8e5m2 fp16 bf16 tf32 fp32 fp64\n"
     "                 custom:p=P,emin=E,emax=E[,subnormals=0][,inf=0][,saturate=1]\n"
     "  --acc T        compute format: as --dtype, or mpfr:BITS\n"
     "  --round MODE   compute rounding: rne rna rz ru rd ro sr (default rne; sr is seeded\n"
     "                 by --sr-seed, default the --seed)\n"
     "  --schedule S   merge order (default seq; see carrier tree --help)\n"
     "  --exp POLICY   libm (default), portable (fp32/fp64 compute), fast\n"
     "  --input FILE   one number per line, decimal or hex float ('-' = stdin); dot and\n"
     "                 affine take two columns (a b); '#' lines are comments\n"
     "  --gen DIST     uniform01 uniform11 normal lognormal (each with :asc or :desc), or\n"
     "                 ill:COND (a sum with condition number about COND)\n"
     "  --n N --seed S generator size and seed (default seed 1)\n"
     "  --backend B    replay (the only backend so far)\n"
     "  --allow-nonfinite  accept nan/inf in an input file (special-value studies)\n",
     RunEval},
    {"reference-bench", "time the certified log-sum-exp reference against plain MPFR",
     "usage: carrier reference-bench [--n N] [--seed S] [--dtype T] [--repeats R] [--gen DIST]\n"
     "\n"
     "Times, side by side in one run, the certified log-sum-exp reference (fast tier), the\n"
     "escalating MPFR reference and plain MPFR at 256 bits per element over the same N\n"
     "(default 10^6) fp32 values, and prints the times, ratios and agreement.\n",
     RunReferenceBench},
    {"tree", "print the merge tree a schedule builds",
     "usage: carrier tree --schedule S --n N [--format text|dot|json] [--max-nodes M]\n"
     "\n"
     "Builds the explicit merge tree of schedule S over N inputs and prints it: text (statistics\n"
     "and a drawing when it has at most M nodes, default 256), Graphviz DOT, or JSON.\n"
     "\n"
     "Schedules: seq | reverse | pairwise[:LEAF][:lift] | blocked:TILE[:seq|pairwise][:lift] |\n"
     "           strided:K | random:SEED\n"
     "  e.g. carrier tree --schedule blocked:4:pairwise --n 16\n"
     "       carrier tree --schedule strided:8 --n 64 --format dot | dot -Tpng > tree.png\n",
     RunTree},
};
const std::size_t kVerbCount = sizeof(kVerbs) / sizeof(kVerbs[0]);

namespace {

void PrintUsage(std::ostream& os) {
  os << "usage: carrier [--help] [--version] VERB [ARGS]\n\n"
        "carrier runs carrier-state reductions (sum, log-sum-exp, Welford variance, ...) through\n"
        "declared merge orders and measures what the order does to the result.\n\nverbs:\n";
  std::size_t width = 0;
  for (std::size_t i = 0; i < kVerbCount; ++i) width = std::max(width, std::strlen(kVerbs[i].name));
  for (std::size_t i = 0; i < kVerbCount; ++i)
    os << "  " << kVerbs[i].name << std::string(width + 2 - std::strlen(kVerbs[i].name), ' ')
       << kVerbs[i].summary << "\n";
  os << "\n'carrier VERB --help' describes one verb.\n";
}

}  // namespace

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    PrintUsage(std::cerr);
    return 2;
  }
  const std::string& first = args[0];
  if (first == "--help" || first == "-h" || first == "help") {
    PrintUsage(std::cout);
    return 0;
  }
  if (first == "--version") {
    std::cout << "carrier " << CARRIER_VERSION << "\n";
    return 0;
  }
  for (std::size_t i = 0; i < kVerbCount; ++i) {
    if (first != kVerbs[i].name) continue;
    std::vector<std::string> rest(args.begin() + 1, args.end());
    for (const auto& a : rest)
      if (a == "--help" || a == "-h") {
        std::cout << kVerbs[i].help;
        return 0;
      }
    return kVerbs[i].run(rest);
  }
  if (first.rfind("-", 0) == 0) throw UsageError("carrier: unknown flag '" + first + "' (see carrier --help)");
  throw UsageError("carrier: unknown verb '" + first + "' (see carrier --help)");
}

}  // namespace carrier::cli

int main(int argc, char** argv) {
  try {
    return carrier::cli::Main(argc, argv);
  } catch (const carrier::cli::UsageError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "carrier: internal error: " << e.what() << "\n";
    return 1;
  }
}
