// experiments/registry/registry.hpp: the op table. Every op the CLI knows — the built-in
// carriers (experiments/ops/), the trial runner's compound ops (var-twopass, var-textbook,
// attention), the laws counterexamples and the user carriers (experiments/user_carriers/) —
// is one Entry, registered once, and every verb looks it up by name: nothing above kernels/
// compares op names. An entry states, once:
//   name, summary             the CLI name and a one-line description (the --help lists and
//                             every "must be one of" message are generated from the table)
//   input, components, main   what a trial feeds it (one column, pairs, attention Q/K/V) and
//                             what it returns (component names; empty = one per input, a
//                             vector output) and which component eval measures
//   replay_oracle, replay_mixed  how to replay it over a MergeTree for every compute type
//                             (ScalarKind x ExpKind; the caller holds the EmulationScope /
//                             MpfrPrecisionScope) and, where it exists, the two-level
//                             (INNER>OUTER) replay
//   policy_replay             where the op runs every role of a precision policy itself
//                             (attention), that replay; else policies go through the shorthand
//   replay                    the fast engine's replay (core/replay.hpp) from the
//                             Schedule itself (or a tree when given one): the same Replayed
//                             as `replay_oracle` bit for bit; null: `replay_oracle` serves both
//                             engines
//   fast_reference            the same Reference as `reference` field for field, faster
//                             (precision/reference/fast_sum.hpp); null: `reference` serves both
//   reference, reference_key  its certified reference (precision/reference) and the key of
//                             the ops that share one on the same input
//   bound, mixed_bound, cond  its a-priori bound, a typed function in precision/op_bounds.hpp
//                             (null: none), the two-level one, and its condition number
//   laws, derive              the hooks of `carrier laws` / `carrier derive` (null: none)
//   backends                  the fast backends that run it, each with the schedules it
//                             realises; backend replay runs every entry with a replay
// Contract of a registered user carrier (CARRIER_REGISTER, ops/register.hpp): a template CT<T>
// such that CT<T> is a core Carrier (core/carrier.hpp) for T = float, double, the emulated
// formats and Mpfr, with Input = T (one column of scalars) and only ScalarTraits / the
// scalar's operators used inside; optionally a Third Homomorphism Theorem derivation D. Its
// reference is CT<Mpfr> folded at p and 2p bits (p = 128, doubling up to kMpfrCapBits),
// certified when the two agree to 2^-100 relative per component (tier "mpfr-carrier"); it
// declares no a-priori bound. Built-ins use the same makers (ops/register.hpp) and add their
// references, bounds and kernels.
// Entries are created by static registration objects (CARRIER_REGISTER, CARRIER_REGISTER_OP)
// in sources linked whole into every binary that uses the table (experiments/CMakeLists.txt:
// the carrier_ops library is linked with WHOLE_ARCHIVE; user carriers are compiled into the
// executable), so the linker cannot drop them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "precision/op_bounds.hpp"

namespace carrier {
class StoredColumn;
struct MergeTree;
struct Schedule;
struct PrecisionPolicy;
namespace cli::laws {
struct Options;
}
namespace run {
struct ResolvedTrial;
struct TrialInput;
struct SharedReference;
}  // namespace run
namespace backends {
struct Request;
struct Result;
}  // namespace backends
}  // namespace carrier

namespace carrier::registry {

// The compute type of a replay; the caller holds the EmulationScope / MpfrPrecisionScope.
// kFloat128 (precision/float128.hpp) exists in builds with CARRIER_HAVE_FLOAT128 only (a replay
// asked for it elsewhere throws std::invalid_argument).
enum class ScalarKind { kFloat, kDouble, kEmulated, kMpfr, kFloat128 };

// The compute types that are neither a Format (precision/format.hpp) nor mpfr:BITS, each named
// once here so that ResolveTrial, the sweep config's check and the --acc help take them from
// one list: fp128 (IEEE binary128, Boost.Multiprecision's float128) where the build has it
// (CARRIER_HAVE_FLOAT128: not README command (a)'s main-job build).
struct NamedComputeType {
  std::string name;
  std::string summary;
  ScalarKind kind;
  int precision;  // p in bits, the implicit bit included (the bound's u is 2^-p, rne)
};
const std::vector<NamedComputeType>& NamedComputeTypes();
// The entry named `name`, or null.
const NamedComputeType* FindComputeType(const std::string& name);
// The exp policy (precision/math_policy.hpp) of the ops that call exp.
enum class ExpKind { kLibm, kPortable, kFast };
// "libm" "portable" "fast", in ExpKind's order.
const std::vector<std::string>& ExpNames();
// Throws std::invalid_argument naming the choices.
ExpKind ParseExp(const std::string& text);

enum class InputKind {
  kColumn,     // one column of numbers: TrialInput::column (or ::a)
  kPairs,      // (a_i, b_i): TrialInput::column and ::column_b (or ::a and ::b), from seeds
               // seed and seed + 1
  kAttention,  // q, k, v (n x head_dim each) concatenated in TrialInput::a
};
const char* InputKindName(InputKind k);  // "column" "pairs" "attention q/k/v"

inline constexpr long kMpfrStartBits = 128;
inline constexpr long kMpfrCapBits = 4096;

// The MPFR reference of a registered carrier, per component of Finalize.
struct CarrierReference {
  std::vector<double> as_double;
  std::vector<long double> as_long_double;
  bool certified = false;
  long precision_bits = 0;  // p of the agreeing pair (values computed at 2p)
  std::string note;         // why not certified; empty otherwise
};

// What a replay returns: the components in the entry's order (a vector output: one per
// output) and, for argmax, the index.
struct Replayed {
  std::vector<long double> components;
  std::int64_t index = -1;
  // Compute types wider than long double (fp128): per component, the remainder the long
  // double rounding of `components` dropped, so that components[i] + residual[i] is the
  // computed value exactly (precision/float128.hpp SplitToLongDouble). Empty otherwise.
  std::vector<long double> residual;
};

// Where the replay reads its input: a (and b for pairs), the reduction's length n (attention:
// the sequence length) and the head dimension (attention). id: the input's identity
// (run::TrialInput::id, unique per input made in this process, never reused), or 0; with a
// non-zero id and a ConvertedInputScope on the thread, the replay's conversion of the input to
// the carrier's Input type is kept for the thread's next trial on the same input.
struct ReplayInput {
  std::span<const double> a;
  std::span<const double> b;
  std::uint64_t n = 0;
  std::uint64_t head_dim = 0;
  std::uint64_t id = 0;
  // A one-column input held packed (run::TrialInput::column; `a` then empty), and for pairs
  // the second column (::column_b; `b` then empty): given only to `replay` (the fast engine)
  // without a tree, which reads them a window at a time (ops/register.hpp).
  const StoredColumn* column = nullptr;
  const StoredColumn* column_b = nullptr;
};

// The input of the thread's last replay converted to its carrier's Input type (ops/register.hpp
// CachedInputs): a sweep runs every schedule and every op of an input on it, and the ops whose
// Input types agree (sum, kahan, lse, welford in one compute type) read the same converted
// copy, so each thread converts an input once per Input type instead of once per trial (the
// conversion rounds every element and, at n = 2^28, faults in up to 2 GB of fresh pages).
// Active only inside a ConvertedInputScope (the sweep's workers); elsewhere (eval, Python)
// every replay converts its own copy and frees it. Keyed by (id, Input type, the thread's
// emulated format and rounding), so a dynamic emulated type never reads another format's copy.
struct ConvertedInput {
  bool enabled = false;
  std::uint64_t id = 0;
  const void* type = nullptr;  // &typeid(Input)
  std::string context;         // the emulation context of a dynamic emulated Input
  std::shared_ptr<const void> data;
  bool in_place = false;  // the input converts to itself: read the stored doubles, no copy
};
inline ConvertedInput& ThreadConvertedInput() {
  thread_local ConvertedInput c;
  return c;
}
// Frees the thread's kept conversion unless it is of input `id` (a sweep worker calls it before
// the next trial's input is made, so a finished input's copy never overlaps the next input).
inline void DropConvertedInputUnless(std::uint64_t id) {
  ConvertedInput& c = ThreadConvertedInput();
  if (c.id != id) {
    c.data.reset();
    c.in_place = false;
    c.id = 0;
  }
}
// Enables the cache on this thread for the scope's life and frees it at the end.
class ConvertedInputScope {
 public:
  ConvertedInputScope() {
    ThreadConvertedInput() = ConvertedInput{};
    ThreadConvertedInput().enabled = true;
  }
  ~ConvertedInputScope() { ThreadConvertedInput() = ConvertedInput{}; }
  ConvertedInputScope(const ConvertedInputScope&) = delete;
  ConvertedInputScope& operator=(const ConvertedInputScope&) = delete;
};

using ReplayOracleFn = Replayed (*)(ScalarKind, ExpKind, const MergeTree&, const ReplayInput&);
// The fast engine: by `tree` when it is not null, else by the schedule without building its tree
// (core/replay.hpp). Emulated compute runs as Emulated (precision/emulated.hpp), not as its
// oracle.
using ReplayFn = Replayed (*)(ScalarKind, ExpKind, const Schedule&, const MergeTree* tree,
                              const ReplayInput&);
// The replay under a whole precision policy (precision/precision_policy.hpp), every role as the
// policy says (run/trial.hpp ResolvedTrial::per_role), in the order `schedule` declares; sr_seed
// seeds a stochastic role's stream. Throws std::invalid_argument (one line) for a schedule or
// input the policy's kernel cannot take.
using PolicyReplayFn = Replayed (*)(const PrecisionPolicy&, const Schedule&, std::uint64_t sr_seed,
                                    const ReplayInput&);
// The two-level replay: chains in t.inner, combines in t.compute (run/trial.hpp's mixed).
using MixedReplayFn = Replayed (*)(const run::ResolvedTrial&, const MergeTree&, const ReplayInput&);
// Fills ref.ref (and the bound's data-dependent parts where the op has some) and ref.tier.
using ReferenceFn = void (*)(const run::TrialInput&, std::uint64_t head_dim,
                             run::SharedReference& ref);
using BackendFn = backends::Result (*)(const backends::Request&);

// One fast backend that runs the op: its name (simd omp cuda) and the schedules it realises,
// in the schedule grammar's words (for --help and the refusal messages).
struct BackendEntry {
  std::string name;
  std::string schedules;
  BackendFn run = nullptr;
};

struct Entry {
  std::string name;
  std::string summary;
  int rank = 1000;    // listing order: built-ins by rank, then user carriers by name
  bool user = false;  // registered by CARRIER_REGISTER (a user carrier)
  InputKind input = InputKind::kColumn;
  // C::Input is the compute scalar itself (one column, no index): a replay in fp64, or in an
  // emulated format holding every stored value, reads the stored doubles in place (no copy).
  bool input_is_scalar = false;
  bool commutative = false;    // kCommutative: may a schedule permute the inputs?
  std::size_t components = 0;  // number of result components; 0 = one per input (vector)
  std::vector<std::string> component_names;
  std::size_t main = 0;                  // the component eval measures
  bool uses_exp = false;                 // honours --exp (else only libm is accepted)
  bool mpfr_compute = true;              // may compute in mpfr:BITS
  bool emulated_on_backends = true;      // false: an emulated compute type runs on replay only
  std::vector<std::uint64_t> head_dims;  // attention: the head dims built (required flag)
  bool fused_schedules = false;          // accepts mma:PROFILE schedules (core/mma.hpp; pairs only)
  std::string reference_key;  // ops sharing a reference on one input share it (empty: name)
  ReplayOracleFn replay_oracle = nullptr;  // null: laws/derive only (no trial)
  ReplayFn replay = nullptr;               // null: the fast engine runs `replay_oracle`
  MixedReplayFn replay_mixed = nullptr;
  // Runs every role of a precision policy itself (attention: prod, s, p, state, out and an mma
  // profile, as real kernels do); null: the op runs the policies --dtype/--acc/--round can say
  // (ToShorthand), through `replay` or `replay_oracle`.
  PolicyReplayFn policy_replay = nullptr;
  // Checks, before anything runs, that the op's policy replay can take policy `p` under
  // `schedule`; throws std::invalid_argument (one line) naming what it cannot. Null: none.
  void (*check_policy)(const PrecisionPolicy& p, const Schedule& schedule) = nullptr;
  ReferenceFn reference = nullptr;
  ReferenceFn fast_reference = nullptr;  // null: the fast engine uses `reference`
  // The reference the fast engine uses reads the packed columns (run::TrialInput::column, and
  // ::column_b for pairs) a chunk at a time instead of decoding them whole (run/memory.hpp
  // counts the difference).
  bool column_reference = false;
  OpBoundFn bound = nullptr;
  MixedBoundFn mixed_bound = nullptr;  // null: `bound` at u = u_inner
  ConditionFn cond = nullptr;          // null: cond is NaN
  std::vector<BackendEntry> backends;
  int (*laws)(const cli::laws::Options&) = nullptr;
  int (*derive)(std::uint64_t trials, std::uint64_t seed) = nullptr;

  bool vector_out() const { return components == 0; }
  const BackendEntry* Backend(const std::string& backend) const;
};

// Adds an entry (a duplicate name aborts with a message at start-up); returns true.
bool Register(const Entry& e);
// The entry named `name`, or null.
const Entry* Find(const std::string& name);
// User carriers' names, sorted.
std::vector<std::string> Names();
// Names() joined by spaces, with a leading space when not empty ("" when none): for the
// "must be one of" lists.
std::string NamesSuffix();

// What an unknown-op error appends: README command (a)'s build (CARRIER_MAIN_JOB_ONLY, which
// defines CARRIER_MAIN_JOB_ONLY_BUILD) compiles only the default study's ops.
inline const char* MainJobOpsNote() {
#if defined(CARRIER_MAIN_JOB_ONLY_BUILD)
  return " (this build, configured by scripts/run-main.sh with CARRIER_MAIN_JOB_ONLY=ON, has only "
         "the default study's ops; bash scripts/run-tests.sh builds every op)";
#else
  return "";
#endif
}

// README command (a)'s build replays only the compute types the default study uses: fp32 and
// the emulated formats (bf16, fp16, ...), not fp64, mpfr:BITS or two-level INNER>OUTER, which
// would triple the compile time of every op. True in a full build.
inline constexpr bool kMainJobComputeOnly =
#if defined(CARRIER_MAIN_JOB_ONLY_BUILD)
    true;
#else
    false;
#endif
// The one-line refusal of such a compute type in that build ("" in a full build).
inline std::string MainJobComputeNote(const std::string& compute) {
  if (!kMainJobComputeOnly) return "";
  return "compute type '" + compute +
         "' is not in this build (scripts/run-main.sh's CARRIER_MAIN_JOB_ONLY=ON build replays "
         "fp32 and the emulated formats only; bash scripts/run-tests.sh builds every compute "
         "type)";
}

// Every entry in listing order (built-ins by rank, then user carriers by name).
std::vector<const Entry*> All();
// Names of the entries with a replay (eval and sweep), a laws hook, a derive hook, and those
// a fast backend runs; each in listing order.
std::vector<std::string> TrialOps();
std::vector<std::string> LawsOps();
std::vector<std::string> DeriveOps();
std::vector<std::string> BackendOps(const std::string& backend);
std::string Join(const std::vector<std::string>& v, const char* sep = " ");
// "NAME  SUMMARY [backends]" lines of the entries in `names`, each indented by `indent`
// spaces, for --help.
std::string Describe(const std::vector<std::string>& names, std::size_t indent = 2);
// A verb's help text with the table's lists filled in: {TRIAL_OPS} {LAWS_OPS} {DERIVE_OPS}
// (Describe lines), {MIXED_OPS} (names with a two-level replay), {HEAD_DIMS}, {NAMED_ACC}
// (the NamedComputeTypes' names, each followed by a space; empty when the build has none).
std::string ExpandHelp(const std::string& help);
// The fast backends any entry names, plus replay first: "replay simd omp cuda".
std::vector<std::string> BackendNames();

}  // namespace carrier::registry
