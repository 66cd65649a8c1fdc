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
//
// --op OP replays any one-column op of the op table (sum, lse, softmax, welford, rmsnorm, ...)
// over the row's own tree in every context: the context's tree restricted to the row (pads and
// the buffer prefix are masked positions, their nodes dropped, as a masked kernel skips them),
// run as a trial (run/trial.hpp, oracle engine, --dtype) on one seeded input, so each distinct
// row tree also gets its error against the op's certified reference: the error cost of the
// invariant choice. --format json prints one object (analysis/invariance_study.py builds the
// README's table from it).
#include "core/invariance.hpp"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "cli/args.hpp"
#include "cli/number_format.hpp"
#include "core/carriers/flash_row.hpp"
#include "core/carriers/sum.hpp"
#include "core/fprev.hpp"
#include "core/replay_oracle.hpp"
#include "core/tree_io.hpp"
#include "inputs/generators.hpp"
#include "precision/math_policy.hpp"
#include "registry/registry.hpp"
#include "run/trial.hpp"
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
  return ReplayOracleResult<Sum<double>>(t, std::span<const double>(x));
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
  const AttentionRow::Result r = AttentionRow::Finalize(
      ReplayOracle<AttentionRow>(c.tree, std::span<const FlashInput<float>>(in)));
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

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
// A folder for the row trees' files, removed with everything in it when the scope ends.
class TempFolder {
 public:
  TempFolder() {
    path_ = std::filesystem::temp_directory_path() /
            ("carrier-invariance-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~TempFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string JsonText(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string Num(double x) {
  std::ostringstream os;
  os << std::setprecision(17) << x;
  return os.str();
}

// One group of contexts whose row gives identical bits (every component).
struct OpGroup {
  std::vector<std::uint64_t> contexts;
  std::vector<std::string> trees;  // the row-tree hashes that gave these bits
  std::string first_context;       // its first context's name
  double result = 0, rel_error = 0, ulp_error = 0;
};

// `carrier invariance PROPERTY --op OP`: returns the exit status (0 invariant, 1 not).
int RunOpInvariance(const Args& args, const std::string& property, const std::string& family,
                    std::uint64_t n, std::uint64_t limit, const std::string& op, std::uint64_t seed,
                    bool json) {
  const registry::Entry* entry = registry::Find(op);
  if (entry == nullptr) args.Fail("unknown --op '" + op + "'");
  if (entry->input != registry::InputKind::kColumn)
    args.Fail("--op " + op + " does not take one column (use --carrier attention for attention)");
  run::TrialSpec spec;
  spec.op = op;
  spec.dtype = args.Get("dtype").value_or("fp32");
  spec.schedule = "seq";
  spec.engine = "oracle";
  run::ResolvedTrial base;
  try {
    base = run::ResolveTrial(spec);
  } catch (const run::SpecError& e) {
    args.Fail(e.what());
  }
  const std::string gen_text = args.Get("gen").value_or("normal");
  run::TrialInput input;
  try {
    input = run::MakeInput(base, inputs::ParseGenerator(gen_text), n, seed);
  } catch (const std::exception& e) {
    args.Fail("bad --gen '" + gen_text + "': " + e.what());
  }
  if (input.storage_overflows > 0) args.Fail(run::StorageOverflowText(input, base.storage.name));
  const run::SharedReference shared = run::ComputeReference(base, input);

  TempFolder folder;
  const auto [first, last] = InvarianceContextRange(property, limit);
  struct TreeRun {
    std::string bits;
    run::TrialOutcome got;
  };
  std::map<std::string, TreeRun> by_tree;  // row-tree hash -> its trial
  std::map<std::string, OpGroup> groups;   // bits -> contexts
  std::vector<std::string> order;          // bits in order of first appearance
  for (std::uint64_t k = first; k <= last; ++k) {
    const InvarianceContext c = MakeInvarianceContext(property, family, n, k);
    MergeTree row;
    try {
      row = ToMergeTree(InvarianceRowTree(c, n), "row");
    } catch (const ProbeError& e) {
      args.Fail("family '" + family + "' (" + c.name + ") has lifted tiles, which --op cannot " +
                "restrict to a row: " + e.what());
    }
    const std::string hash = TreeHash(row);
    auto it = by_tree.find(hash);
    if (it == by_tree.end()) {
      const std::filesystem::path file = folder.path() / (hash + ".json");
      std::ofstream(file) << ToJson(row);
      run::TrialSpec s = spec;
      s.schedule = "file:" + file.string();
      TreeRun tr;
      try {
        tr.got = run::RunTrial(run::ResolveTrial(s), input, shared);
      } catch (const run::SpecError& e) {
        args.Fail(std::string("--op ") + op + " cannot run over " + c.name + ": " + e.what());
      }
      for (long double v : tr.got.components) tr.bits += HexFloat(static_cast<double>(v)) + " ";
      it = by_tree.emplace(hash, std::move(tr)).first;
    }
    const TreeRun& tr = it->second;
    auto g = groups.find(tr.bits);
    if (g == groups.end()) {
      order.push_back(tr.bits);
      OpGroup og;
      og.first_context = c.name;
      // A vector output (softmax) is measured normwise (inf-norm, relative); its first entry
      // names the group.
      og.result = static_cast<double>(tr.got.vector_out ? tr.got.components.at(0) : tr.got.result);
      og.rel_error = tr.got.vector_out ? tr.got.normwise_inf : tr.got.rel_error;
      og.ulp_error = tr.got.vector_out ? NAN : tr.got.ulp_error;
      g = groups.emplace(tr.bits, std::move(og)).first;
    }
    g->second.contexts.push_back(k);
    if (std::find(g->second.trees.begin(), g->second.trees.end(), hash) == g->second.trees.end())
      g->second.trees.push_back(hash);
  }
  const run::TrialOutcome& any = by_tree.begin()->second.got;
  const bool vector_out = any.vector_out;
  const double reference = vector_out ? NAN : any.reference;
  double lo = INFINITY, hi = 0;
  for (const auto& [bits, g] : groups) {
    lo = std::min(lo, g.rel_error);
    hi = std::max(hi, g.rel_error);
  }
  const bool invariant = groups.size() == 1;
  const std::string component = vector_out ? std::string("output[0]")
                                : entry->component_names.empty()
                                    ? std::string("result")
                                    : entry->component_names[entry->main];
  const std::string error_name = vector_out ? "normwise error" : "rel error";
  if (json) {
    std::cout << "{\"property\":" << JsonText(property) << ",\"family\":" << JsonText(family)
              << ",\"op\":" << JsonText(op) << ",\"dtype\":" << JsonText(spec.dtype)
              << ",\"n\":" << n << ",\"gen\":" << JsonText(gen_text) << ",\"seed\":" << seed
              << ",\"contexts\":" << last - first + 1 << ",\"row_trees\":" << by_tree.size()
              << ",\"bit_groups\":" << groups.size()
              << ",\"invariant\":" << (invariant ? "true" : "false") << ",\"reference\":"
              << (vector_out ? std::string("null") : JsonText(HexFloat(reference)))
              << ",\"error\":" << JsonText(vector_out ? "normwise_inf" : "relative")
              << ",\"rel_error_min\":" << Num(lo) << ",\"rel_error_max\":" << Num(hi)
              << ",\"groups\":[";
    for (std::size_t i = 0; i < order.size(); ++i) {
      const OpGroup& g = groups[order[i]];
      std::cout << (i ? "," : "") << "{\"contexts\":" << JsonText(Ranges(g.contexts))
                << ",\"first\":" << JsonText(g.first_context)
                << ",\"result\":" << JsonText(HexFloat(g.result))
                << ",\"rel_error\":" << Num(g.rel_error)
                << ",\"ulp_error\":" << (vector_out ? std::string("null") : Num(g.ulp_error))
                << "}";
    }
    std::cout << "]}\n";
    return invariant ? 0 : 1;
  }
  std::cout << "property        " << property << "\n"
            << "family          " << family << "\n"
            << "row             " << op << ", n = " << n << " inputs, --gen " << gen_text
            << " seed " << seed << ", " << spec.dtype << " (" << component << " measured)\n"
            << "contexts        " << last - first + 1 << " (" << property << " " << first << ".."
            << last << ")\n"
            << "row trees       " << by_tree.size() << " distinct\n"
            << "output bits     " << groups.size() << " distinct\n"
            << "reference       "
            << (vector_out ? std::string("certified, per output")
                           : component + " = " + HexFloat(reference) + " (certified)")
            << "\n";
  for (std::size_t i = 0; i < order.size(); ++i) {
    const OpGroup& g = groups[order[i]];
    std::cout << "  bits " << i + 1 << "  " << property << " " << Ranges(g.contexts) << ": "
              << component << " = " << HexFloat(g.result) << ", " << error_name << " "
              << g.rel_error;
    if (!vector_out) std::cout << " (" << g.ulp_error << " ulp)";
    std::cout << ", e.g. " << g.first_context << "\n";
  }
  if (invariant) {
    std::cout << "verdict         invariant: identical bits in every context\n";
    return 0;
  }
  std::cout << "verdict         NOT invariant: the row's outputs depend on the " << property
            << " (witness: this input, --gen " << gen_text << " --seed " << seed << ")\n"
            << "error cost      " << error_name << " " << lo << " .. " << hi
            << " across the groups\n";
  return 1;
}
#endif

}  // namespace

int RunInvariance(const std::vector<std::string>& argv) {
  Args args("invariance", argv,
            {"family", "n", "max-batch", "max-pad", "offsets", "carrier", "seed", "op", "dtype",
             "gen", "format"},
            {}, 1);
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
  const bool json = args.Choice("format", {"text", "json"}, "text") == "json";
  if (auto op = args.Get("op")) {
    if (args.Get("carrier")) args.Fail("give either --op or --carrier, not both");
    try {
      (void)BuildTree(FamilySchedule(family, 1, n), n);
    } catch (const std::exception& e) {
      args.Fail("bad --family '" + family + "': " + e.what());
    }
#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
    return RunOpInvariance(args, property, family, n, limit, *op, seed, json);
#else
    args.Fail("--op needs a build with MPFR (the certified references)");
#endif
  }
  if (args.Get("dtype") || args.Get("gen") || json)
    args.Fail("--dtype, --gen and --format go with --op");
  if (carrier == "attention") {
    if (n > (std::uint64_t{1} << 16)) args.Fail("--carrier attention needs --n at most 2^16");
    try {
      (void)BuildTree(FamilySchedule(family, 1, n), n);
      return RunAttentionInvariance(property, family, n, limit, seed);
    } catch (const std::exception& e) {
      args.Fail("bad --family '" + family + "': " + e.what());
    }
  }
  InvarianceResult r;
  try {
    (void)BuildTree(FamilySchedule(family, 1, n), n);
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
    "                          [--op OP [--dtype T] [--gen G] [--format text|json]]\n"
    "\n"
    "Checks whether a row of N inputs is reduced by the same tree (core/invariance.hpp) when\n"
    "  batch      the batch has B = 1..max-batch rows (default 64),\n"
    "  padding    the row is padded with p = 0..max-pad identity inputs (default 64),\n"
    "  alignment  the row starts at offset 0..K-1 of a buffer whose chunk grid starts at 0.\n"
    "Families: splits:S (a fixed split count, omp:S), splitsize:T[:pairwise] (a fixed split\n"
    "size, blocked:T), heuristic:W (split-KV: max(1, W / B) splits per row, as FlashAttention's\n"
    "num_splits heuristic), switch:T1@N:T2 (split size T1 below N tokens in the call, T2 from N\n"
    "on: a block size chosen by token count, vLLM issue 27433), or any schedule. Exit 0 when\n"
    "invariant; 1 when not, with an FPRev\n"
    "mask on which the two contexts' row sums differ (both replayed).\n"
    "--carrier attention replays one query row of FlashAttention-2's (m, l, O) carrier (head\n"
    "dim 64, fp32, seeded scores and values; pads are masked keys) in every context and groups\n"
    "the contexts by the bits of its outputs: exit 0 when one group, 1 otherwise.\n"
    "--op OP replays a one-column op of the op table (sum, lse, softmax, welford, rmsnorm, ...)\n"
    "over the row's own tree in each context (pads and prefix masked: their nodes dropped), in\n"
    "--dtype (default fp32) on --gen (default normal, --seed), groups the contexts by the bits\n"
    "of every output and gives each group's error against the op's certified reference.\n"
    "  e.g. carrier invariance batch --family heuristic:132 --n 4096\n"
    "       carrier invariance padding --family splits:4 --n 1000\n"
    "       carrier invariance padding --family splitsize:256 --n 1000\n"
    "       carrier invariance batch --family heuristic:132 --n 4096 --carrier attention\n"
    "       carrier invariance batch --family switch:128@8192:256 --n 4096 --op rmsnorm\n";

}  // namespace carrier::cli
