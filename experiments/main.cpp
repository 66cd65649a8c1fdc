// carrier: the command-line workbench. Verbs in the git style; `carrier VERB --help` for each.
// Exit codes: 0 success, 1 an internal failure, 2 bad input (one line on stderr naming it).
#include <algorithm>
#include <climits>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "registry/registry.hpp"
#include "verbs/verbs.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#ifndef CARRIER_VERSION
#define CARRIER_VERSION "unknown"
#endif

namespace carrier::cli {

const Verb kVerbs[] = {
    {"bench",
     "time the SIMD/OpenMP kernels against scalar loops, two-pass versions and numpy/scipy",
     "usage: carrier bench [--sizes P,P,...] [--quick] [--peers] [--lanes K] [--seed S]\n"
     "                     [--max-repeats R] [--csv FILE]\n"
     "\n"
     "Times each SIMD kernel (min and median of repeats, GB/s, ns per element) at n = 2^P for\n"
     "P in --sizes (default 12,16,20,24,26; --quick: 12,16,20) against a plain scalar loop\n"
     "compiled with the same flags, the two-pass SIMD log-sum-exp and variance, native against\n"
     "pinned (strided:K, --lanes K = 16|32|64, default 32) mode, and omp:2 with 1 and 2 threads.\n"
     "--peers also runs scripts/bench_peers.py (numpy.sum, scipy.special.logsumexp, numpy.var on\n"
     "the same values) and prints one table, then the ratios of the issue's targets and the\n"
     "fp64 variance errors at 2^24 against the certified reference. Not part of the tests.\n"
     "--csv FILE also writes every row (case, variant, median and min seconds) in the bench\n"
     "schema of analysis/README.md: /usr/bin/python3 -m analysis perf-bars --csv FILE ...\n",
     RunBench},
    {"demo", "log-sum-exp, variance and sum in fp32 through four merge orders",
     "usage: carrier demo [--n N] [--seed S]\n"
     "\n"
     "Reduces n = 10^6 fp32 values x = 100 + N(0,1) (seed 42) with OnlineSoftmax (log-sum-exp),\n"
     "Welford (population variance) and Sum through the schedules seq, pairwise, blocked:64 and\n"
     "strided:16, and prints each result with its relative difference from the op's certified\n"
     "reference (precision/reference; \"reference: certified\" in the header) and the tree's max\n"
     "leaf depth.\n"
     "\n"
     "  --n N      number of values (default 1000000; 1e6 and 2^20 forms accepted)\n"
     "  --seed S   generator seed (default 42)\n",
     RunDemo},
    {"derive", "derive a combine by the Third Homomorphism Theorem and compare it",
     "usage: carrier derive OP [--trials N] [--seed S]\n"
     "\n"
     "The Third Homomorphism Theorem (Gibbons 1996; Morita et al. 2007) as a construction, in\n"
     "fp64. First checks that the leftward fold (push at the back) and the rightward fold (push\n"
     "at the front) of OP agree on N random lists; if not, OP is not a list homomorphism and the\n"
     "list, both folds and both answers are printed (exit 1). Then derives\n"
     "Combine(a, b) = h(h°(a) ++ h°(b)) from a weak right inverse h° (core/derivations/) and\n"
     "prints its largest relative difference from the hand-written combine over N pairs of\n"
     "states (exit 0 when within 2^-40, 1 otherwise).\n"
     "\n"
     "  OP         an op with a derivation (from the op table; naive-mean and naive-lse are\n"
     "             counterexamples that must be rejected; user carriers registered with a\n"
     "             derivation are listed too):\n"
     "{DERIVE_OPS}"
     "  --trials N random lists and random pairs (default 1000)\n"
     "  --seed S   generator seed (default 1)\n",
     RunDerive},
    {"equiv", "whether two schedules build the same tree; if not, an input that tells them apart",
     kEquivHelp, RunEquiv},
    {"explain", "which orders, formats and matrix-unit profiles reproduce observed outputs",
     kExplainHelp, RunExplain},
    {"eval", "one reduction against its certified reference and a-priori bound",
     "usage: carrier eval --op OP --dtype T [--acc T] [--round MODE] [--schedule S]\n"
     "                    [--exp POLICY] (--input FILE | --gen DIST --n N [--seed S])\n"
     "                    [--format text|json] [--allow-nonfinite] [--sr-seed S]\n"
     "                    [--backend replay|simd|omp|cuda] [--head-dim D] [--engine fast|oracle]\n"
     "                    [--max-seconds S] [--threads T]\n"
     "\n"
     "Rounds the inputs to the storage format T (round to nearest even), reduces them in the\n"
     "compute format (--acc) through the schedule's merge tree, and prints the\n"
     "result, the certified reference of the op on the stored values (with the tier and\n"
     "precision that certified it), the absolute, relative and ulp errors, the a-priori bound\n"
     "for the tree's depth and the ratio to it. Numbers are shortest round-trip decimals;\n"
     "non-finite values are inf, -inf, nan (strings in JSON). Exit 1 if the reference could\n"
     "not be certified.\n"
     "\n"
     "  --op OP        one of the op table's trial ops (attention: --n keys, --head-dim D,\n"
     "                 --acc fp32|fp64 or an emulated format such as bf16 on the replay\n"
     "                 backend; a user carrier's reference is the carrier in MPFR at p and 2p\n"
     "                 bits, tier mpfr-carrier, with no a-priori bound):\n"
     "{TRIAL_OPS}"
     "  --dtype T      storage: fp8e4m3 fp8e4m3sat fp8e5m2 fp16 bf16 tf32 fp32 fp64\n"
     "                 custom:p=P,emin=E,emax=E[,subnormals=0][,inf=0][,saturate=1]\n"
     "  --acc T        compute format (default T; fp32 for fp16/bf16 on simd, omp, cuda, the\n"
     "                 type those kernels have; the defaults line says so): as --dtype, or\n"
     "                 {NAMED_ACC}mpfr:BITS; or INNER>OUTER, two-level\n"
     "                 accumulation (FABsum): chains/tiles in INNER, combines in OUTER, e.g.\n"
     "                 --acc 'fp16>fp32' --schedule blocked:32 (ops {MIXED_OPS},\n"
     "                 backend replay; INNER a format no wider than OUTER, OUTER a format or\n"
     "                 mpfr:BITS; u is INNER's, sum's bound (b-1)u_in + D_out u_out)\n"
     "  --round MODE   compute rounding: rne rna rz ru rd ro sr (default rne; sr is seeded\n"
     "                 by --sr-seed, default the --seed)\n"
     "  --precision P  precision by role instead of --dtype/--acc/--round: role=FORMAT[@MODE]\n"
     "                 items (in prod acc combine state s p out; e.g. in=bf16,acc=fp32) or a\n"
     "                 preset (precision/precision_policy.cpp). attention runs every role\n"
     "                 (FA2's key tiles: --schedule seq or blocked:BC:lift; replay, exp libm;\n"
     "                 its bound is then the role bound); the other ops run policies with in,\n"
     "                 acc and combine only. Prints role_bound (terms by role). Presets:\n"
     "{PRESETS}"
     "  --schedule S   merge order; default seq on replay, the kernel's native schedule on\n"
     "                 simd, omp, cuda (printed as schedule); increasing, decreasing,\n"
     "                 insertion, psum: orders decided per input (Higham 1993); or one of\n"
     "{SCHEDULES}"
     "                 mma: profiles:\n"
     "{MMA_PROFILES}"
     "  --exp POLICY   libm, portable (fp32/fp64 compute), fast; default libm, but portable\n"
     "                 for lse, softmax, attention on simd, omp, cuda (the exp they replay)\n"
     "  --input FILE   one number per line, decimal or hex float ('-' = stdin); dot and\n"
     "                 affine take two columns (a b); '#' lines are comments\n"
     "  --gen DIST     a generator (values from a counter-based stream of --seed):\n"
     "{GENERATORS}"
     "  --n N --seed S generator size (at most 2^30, and what memory allows: else one line\n"
     "                 naming the bytes needed, exit 2) and seed (default seed 1)\n"
     "  --backend B    replay (default: the schedule's merge tree replayed), simd, omp, cuda\n"
     "                 (the fast kernels; exit 2 with the reason when not built or no device)\n"
     "  --engine E     backend replay's engine: fast (default: core/replay.hpp, no tree\n"
     "                 built for seq reverse pairwise blocked strided random omp, fast exact\n"
     "                 references) or oracle (core ReplayOracle of the built tree, the\n"
     "                 definition); both print the same numbers, only the times differ\n"
     "  --head-dim D   attention's head dimension ({HEAD_DIMS})\n"
     "  --op matmul --m M --n N --k K  an M x N x K product C = A B whose every output is op\n"
     "                 dot on row i of A and column j of B under these flags (schedule, mma\n"
     "                 profile, precision), each against its exact reference; prints the max,\n"
     "                 median and normwise errors over the M N outputs. --gen: A (M x K) from\n"
     "                 --seed, B (K x N) from --seed + 1; --input: A then B, row by row.\n"
     "                 --threads T (default every core), --outputs FILE (CSV i,j,result,\n"
     "                 reference as hex floats); sizes past memory or --max-seconds: exit 2\n"
     "  --allow-nonfinite  accept nan/inf in an input file, and finite inputs that overflow\n"
     "                 the storage format (reported as storage_overflow); without it both\n"
     "                 are refused (special-value studies)\n"
     "  --max-seconds S  before a trial of n >= 4096 (attention: 512) generated inputs, its\n"
     "                 time is measured on smaller trials and scaled; past S seconds (default\n"
     "                 1800; 0: no limit) it is refused with the n that fits\n"
     "  --threads T    threads for the passes that split without changing a bit (generation,\n"
     "                 storage rounding and packing, the exact references, the bounds' sums,\n"
     "                 and from T = 2 the tree shape's walk beside them; default every core);\n"
     "                 every output is the same for every T\n",
     RunEval},
    {"invariance", "batch, padding and alignment invariance of a schedule family, with witnesses",
     kInvarianceHelp, RunInvariance},
    {"laws", "check a carrier's algebraic laws against its declarations",
     "usage: carrier laws OP [--dtype T] [--trials N] [--seed S]\n"
     "\n"
     "Prints one table of verdicts, each with the figures behind it, on random lists and\n"
     "adversarial ones (signed zeros, huge dynamic range, ties, -inf where it means something):\n"
     "  identity (bitwise, finite inputs), in the working format T;\n"
     "  associativity in exact arithmetic: Combine(Combine(a,b),c) against\n"
     "    Combine(a,Combine(b,c)) in MPFR at 64, 128, 256 and 512 bits, with the observed slope\n"
     "    (log2 of the gap per 64-bit step: about -64 when associative, about 0 when not);\n"
     "  the associativity defect in T, in ulps of the result (max, median, fraction nonzero);\n"
     "  homomorphism h(x ++ y) against Combine(h x, h y) on every split, exactly (MPFR 256\n"
     "    bits) and in T (bitwise agreement, relative difference);\n"
     "  commutativity in exact arithmetic, and whether it is bitwise in T (which decides\n"
     "    whether a GPU xor butterfly may be used); push == combine(lift); the pad input.\n"
     "Each measured property is compared with the carrier's declaration. Exit 0 when every\n"
     "declaration matches, 1 when one is refuted (the evidence is printed), 2 for bad input.\n"
     "\n"
     "  OP         an op with laws (from the op table; the counterexamples naive-mean and\n"
     "             naive-lse must fail; user carriers of experiments/user_carriers/ too):\n"
     "{LAWS_OPS}"
     "  --dtype T  working format (default fp32): fp8e4m3 fp8e5m2 fp16 bf16 tf32 fp32 fp64 or\n"
     "             custom:p=P,emin=E,emax=E\n"
     "  --trials N triples of lists (default 300)\n"
     "  --seed S   generator seed (default 1)\n",
     RunLaws},
    {"merge", "join the output folders of sharded sweeps into one", kMergeHelp, RunMerge},
    {"probe", "recover the merge tree of a black-box sum (numpy, torch, a .so, an executable)",
     kProbeHelp, RunProbe},
    {"quantize", "round an array to a block-scaled format (MX, NVFP4): codes, scales, values",
     "usage: carrier quantize --dtype F (--input FILE | --gen DIST --n N [--seed S])\n"
     "                        [--rows R --cols C] [--format csv|json]\n"
     "\n"
     "Rounds the values (a file of one number per line, nan and inf allowed, or a generator)\n"
     "to the block-scaled format F in blocks along each row of the R x C row-major matrix (a\n"
     "vector when --rows/--cols are left out; required for :2dB formats) and prints every\n"
     "element's code, element value, block, block scale code and value, the per-tensor scale and\n"
     "the dequantised value = element * scale * tensor_scale (exact). precision/block_scaled.hpp\n"
     "states each scale rule and its source.\n"
     "\n"
     "Formats: mxfp8e4m3 mxfp8e5m2 mxfp6e3m2 mxfp6e2m3 mxfp4 mxint8 (32 elements, E8M0 scale,\n"
     "OCP floor rule), nvfp4 (e2m1, 16, UE4M3 scale, fp32 tensor scale), mx:ELEM:B:SCALE:RULE;\n"
     "suffixes :RULE (floor ceil even rceil cudnn for e8m0; rn ru for ue4m3), :4/6, :2dB.\n"
     "  e.g. carrier quantize --dtype nvfp4 --gen normal --n 64\n"
     "       carrier quantize --dtype mxfp8e4m3:rceil --input x.txt --format json\n"
     "       carrier quantize --dtype nvfp4:2d16 --gen normal --n 1024 --rows 32 --cols 32\n",
     RunQuantize},
    {"reference-bench", "time the certified log-sum-exp reference against plain MPFR",
     "usage: carrier reference-bench [--n N] [--seed S] [--dtype T] [--repeats R] [--gen DIST]\n"
     "\n"
     "Times, side by side in one run, the certified log-sum-exp reference (fast tier), the\n"
     "escalating MPFR reference and plain MPFR at 256 bits per element over the same N\n"
     "(default 10^6) fp32 values, and prints the times, ratios and agreement. A last line\n"
     "times the lse and softmax bounds' exps, exp(x - max) rounded to long double, against\n"
     "glibc's expl on the same values.\n",
     RunReferenceBench},
    {"replay-bench",
     "time fast replay, fast emulation and the fast exact sum against oracle, SIMD and MPFR",
     "usage: carrier replay-bench [--n N[,N...]] [--seed S] [--repeats R] [--oracle-repeats "
     "R] [--no-trial] [--xsum LIB.so]\n\nTimes side by side in one run (default n = 2^20 and "
     "2^24): Replay vs ReplayOracle for seq,\nblocked:64, pairwise, random:1, strided:32 in fp32 "
     "and emulated bf16/fp16 (rne, rz), the SIMD\nSum kernels, the sum references and mpfr_sum; "
     "prints ns/element, bit checks and the targets.\nThe trial section times the input "
     "generator's normal stream (carrier-gen/2 against\ncarrier-gen/1's glibc formula), then runs "
     "`carrier eval` (sum "
     "bf16 pairwise, lse fp32 "
     "blocked:64, dot fp32 seq)\nend to end as a process against its engine plus its reference "
     "alone (--no-trial: skip it).\n--xsum LIB.so adds xsum's large accumulator (a library you "
     "built from Radford Neal's\nxsum.c) on the same doubles as the exact references.\nThe "
     "defaults take minutes (about 2.5 on a 2-core machine, most "
     "of it at 2^24: "
     "the oracle\n"
     "rows build and replay every tree); each size after the first is announced with an estimate\n"
     "scaled from the one before, and a terminal shows a ticker. --n 2^20 alone takes seconds.\n",
     RunReplayBench},  // NOLINT(whitespace/line_length)
    {"study", "paper experiments that are not sweep grids (stagnation, lse-mnist, ...)", kStudyHelp,
     RunStudy},
    {"sweep", "run a TOML grid of trials into a tidy CSV and a manifest", kSweepHelp, RunSweep},
    {"tree", "print the merge tree a schedule builds",
     "usage: carrier tree --schedule S --n N [--format text|dot|json] [--max-nodes M]\n"
     "                    [--max-seconds S]\n"
     "\n"
     "Builds the explicit merge tree of schedule S over N inputs and prints it: text (statistics\n"
     "and a drawing when it has at most M nodes, default 256), Graphviz DOT, or JSON.\n"
     "\n"
     "Schedules (:lift: leaf chains lifted whole, as the SIMD kernels do):\n"
     "{SCHEDULES}"
     "                 mma: profiles (core/mma.hpp):\n"
     "{MMA_PROFILES}"
     "  e.g. carrier tree --schedule blocked:4:pairwise --n 16\n"
     "       carrier tree --schedule cuda:64:2:blocked:shfl:pairwise --n 300\n"
     "       carrier tree --schedule strided:8 --n 64 --format dot > tree.dot\n"
     "         (Graphviz DOT; render it with Graphviz's dot -Tpng, Debian package graphviz,\n"
     "         which carrier does not install)\n"
     "       carrier tree --schedule omp:2:pairwise:strided:4:tile:2:lift --n 40\n",
     RunTree},
};
const std::size_t kVerbCount = sizeof(kVerbs) / sizeof(kVerbs[0]);

// Defined here, not in verbs/study.cpp: the main job's build (CARRIER_MAIN_JOB_ONLY) leaves the
// study verb out but keeps its help.
std::string StudyHelp(const std::string& name) {
  // Each study's section of kStudyHelp starts with "\n  NAME " and runs to the next blank line.
  const std::string help = kStudyHelp;
  const auto at = help.find("\n\n  " + name + " ");
  if (at == std::string::npos) return help;
  const auto end = help.find("\n\n", at + 2);
  return help.substr(0, help.find('\n') + 1) +
         help.substr(at + 1, end == std::string::npos ? std::string::npos : end - at);
}

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
        // A study's help is its own section; op lists come from the op table.
        const bool study = first == "study" && !rest.empty() && rest[0].rfind("-", 0) != 0;
        std::cout << registry::ExpandHelp(study ? StudyHelp(rest[0]) : kVerbs[i].help);
        return 0;
      }
    return kVerbs[i].run(rest);
  }
  if (first.rfind("-", 0) == 0)
    throw UsageError("carrier: unknown flag '" + first + "' (see carrier --help)");
  throw UsageError("carrier: unknown verb '" + first + "' (see carrier --help)");
}

}  // namespace carrier::cli

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // A trial allocates and frees buffers of the same few sizes (eval's cost-estimate trials, the
  // generator's blocks, the references' scratch): served from the heap up to 32 MiB and kept
  // there once freed, each is faulted in once per process instead of once per use (glibc's
  // default maps most of them afresh). A sum bf16 pairwise eval at 2^24 spent 12% less CPU.
  // Advice on memory reuse only: no value changes.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
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
