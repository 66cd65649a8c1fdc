// experiments/run/trial.hpp: one trial of carrier's measurement, shared by `carrier eval` (one
// trial, printed) and `carrier sweep` (many, as CSV rows).
//
// A trial is (op, storage dtype, compute type, rounding, exp policy, schedule, backend) applied
// to one input. It runs in three steps so that a sweep can share the expensive middle one:
//   1. ResolveTrial: parse and check the parameters. Throws SpecError (one line, no flag names)
//      for a value or combination that cannot run; eval turns it into exit 2, sweep into a
//      failed row.
//   2. MakeInput + ComputeReference: the stored input (rounded to the storage dtype, rne) and
//      its certified reference. Both depend only on ReferenceKey(trial) and the input's
//      generator, n, seed and head_dim, so one reference serves every schedule, compute type,
//      rounding, exp policy and backend of that input.
//   3. RunTrial: the reduction (core Replay, or the oracle ReplayOracle, for backend replay;
//   experiments/backends for simd,
//      omp, cuda, whose Unavailable propagates) and its measurement: errors against the
//      reference (precision/metrics.hpp), the a-priori bound for the executed tree's depth
//      (precision/op_bounds.hpp) and the ratio, with the columns of experiments/sweep/FORMAT.md.
// Thread safety: every function may run on several threads at once. EmulatedOracle arithmetic keeps
// its format and stochastic-rounding stream in a thread_local context and Mpfr its working
// precision in a thread_local (never Boost's process-wide default_precision), so concurrent
// trials never share mutable state; the reference functions are documented thread-safe.
//
// Every op-specific part (input kind, replay, reference, bound, backends) is the op's entry in
// the op table (experiments/registry/registry.hpp, registered in experiments/ops/); this
// runner only looks it up. The compound ops (FORMAT.md): var-twopass (mean by Sum through the
// schedule, then the Sum of (x - mean)^2 through the same schedule, divided by n) and var-textbook
// (the one-pass formula (sum x^2 - (sum x)^2 / n) / n, both sums through the schedule), each in the
// compute type and measured against Welford's certified population variance; and attention
// (one head of FlashAttention-2's forward pass, non-causal, n = the sequence length:
// core/attention.hpp's AttentionForwardReplay with every row merged in the schedule's order,
// blocked:Bc:lift being the kernel's key tiles of Bc; measured normwise and componentwise over
// all n x head_dim outputs against the per-row certified references; fp32/fp64 compute; its
// bound is FlashRow's first-order FA2 bound (core/carriers/flash_row.hpp) plus the first-order
// effect of the scores' own rounding, normwise: see FORMAT.md).
//
// Two-level accumulation (acc "INNER>OUTER", ResolvedTrial::mixed): chains in INNER, combines
// in OUTER through core/replay_oracle.hpp's ReplayMixed (FABsum's shape), for the ops whose entry
// has a two-level replay (sum neumaier kahan lse welford), on backend replay; sum's bound is
// FABsum's first-order max_k ((L_k-1) u_in + D_out,k u_out) sum|x| (blocked:b: (b-1) u_in + (n/b-1
// or ceil(log2(n/b))) u_out), the others' their one-precision bound at u = u_inner.
#pragma once

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/adaptive_tree.hpp"
#include "core/schedule.hpp"
#include "inputs/generators.hpp"
#include "precision/format.hpp"
#include "precision/op_bounds.hpp"
#include "precision/precision_policy.hpp"
#include "precision/reference/reference.hpp"
#include "precision/rounding.hpp"
#include "precision/stored_column.hpp"
#include "run/tree_shape.hpp"

namespace carrier::registry {
struct Entry;
}

namespace carrier::run {

// A parameter value or combination that cannot run; the message is one line and names it.
class SpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The built-in trial ops of the op table in listing order (sum neumaier kahan max argmax lse
// softmax welford norm2 dot affine prod var-twopass var-textbook attention); RunnerOps is the
// same list (kept for callers of the older pair); registry::TrialOps() adds user carriers.
const std::vector<std::string>& BuiltinOps();
const std::vector<std::string>& RunnerOps();
const std::vector<std::uint64_t>& AttentionHeadDims();  // attention's entry: 64 128

struct TrialSpec {
  std::string op;
  std::string dtype;
  std::string acc;  // empty or "same": the storage dtype; else a format or mpfr:BITS; or
                    // "INNER>OUTER", two-level accumulation (ResolvedTrial::mixed)
  std::string round = "rne";
  std::string exp = "libm";
  std::string schedule = "seq";  // empty on backend simd/omp/cuda: the kernel's native one
  std::string backend = "replay";
  std::uint64_t head_dim = 0;  // attention only
  std::uint64_t sr_seed = 1;   // the stochastic rounding stream (round = sr)
  // Backend replay's engine (Engines()): "fast", core/replay.hpp over the schedule (no
  // tree built for the structured kinds; emulated compute as precision/emulated.hpp) and
  // the entry's fast reference; or "oracle", core ReplayOracle over BuildTree and the entry's
  // reference. Both give the same outcome in every field but the timings (held by
  // tests/experiments/test_engine_equivalence.cpp). Ops without a fast replay (softmax,
  // attention, var-twopass, var-textbook), two-level accumulation and stochastic rounding
  // (Replay's own fallback) run the oracle's evaluation under either name.
  std::string engine = "fast";
  // Empty: the result stays in the compute type. Else a format the result is rounded to (rne)
  // before it is measured, and whose ulps ulp_error counts: a precision policy's out role where
  // it differs from the compute type (eval --precision in=bf16,acc=fp32,combine=fp64 delivers
  // fp32). The a-priori bound gains the rounding: B + u_out (1 + B) relative, B + u_out (|y| + B)
  // + eta_out / 2 absolute. Compute types of at most fp64 (ResolveTrial).
  std::string out;
  // A precision policy by role (eval --precision, the sweep grid's `precision`), typed; when set
  // it replaces dtype, acc, round and out (ResolveTrial). An op whose entry runs policies itself
  // (registry Entry::policy_replay: attention) runs every role of it; every other op runs the
  // policies its --dtype/--acc/--round shorthand can say (ToShorthand) and refuses the rest.
  std::optional<PrecisionPolicy> precision;
};

// "fast" "oracle": the values of TrialSpec::engine.
const std::vector<std::string>& Engines();

// kFloat128: a named compute type of the op table (registry::NamedComputeTypes: fp128, IEEE
// binary128), in builds that have it; backend replay, rne, one level, measured exactly (the
// replay's residual, against the reference's exact or certified value, which must be certified
// to 2^-(p + 8) relative or the trial is refused: RunTrial).
enum class ComputeKind { kFloat, kDouble, kEmulated, kMpfr, kFloat128 };

struct ComputeSpec {
  ComputeKind kind = ComputeKind::kDouble;
  // For kMpfr: a p-bit format with fp64's exponent range (for ulps). For kFloat128: fp64 with
  // precision 113 and name "fp128", for its name and precision only (ulps, u and the underflow
  // term come from precision/float128.hpp's constants; Format's double-based helpers cannot
  // represent binary128's range).
  Format format;
  long mpfr_bits = 0;
  std::string text;  // as given (the dtype's name for "same")
};

struct ResolvedTrial {
  TrialSpec spec;
  Format storage;
  // The compute type of the result. For acc "INNER>OUTER" (mixed) it is OUTER's, with text the
  // whole pair, and `inner` is INNER's: every chain (tile) runs in INNER, each chain's state
  // is converted exactly to OUTER (ResolveTrial requires every INNER value to be an OUTER
  // value) and every combine runs in OUTER — core/replay_oracle.hpp's ReplayMixed, FABsum's shape
  // (Blanchard, Higham & Mary 2020). Ops with a two-level replay, backend replay only; INNER is
  // a format (not mpfr), OUTER a format or mpfr:BITS. EmulatedOracle levels both round with
  // `round`; OUTER's stochastic stream is seeded from sr_seed mixed once (not the inner stream's).
  // The outcome's u is INNER's unit roundoff; ulp_error is in OUTER's format.
  ComputeSpec compute;
  bool mixed = false;
  ComputeSpec inner;
  Rounding rounding = Rounding::kNearestEven;
  Schedule schedule;
  // Schedule increasing, decreasing, insertion or psum (core/adaptive_tree.hpp, Higham 1993's
  // orderings): the tree is built from each
  // input in the compute arithmetic (one column, backend replay, a commutative combine, a
  // deterministic rounding, not mixed, not mpfr); `schedule` is then unused.
  bool adaptive = false;
  AdaptiveOrder adaptive_order = AdaptiveOrder::kInsertion;
  // TrialSpec::out, where it differs from the compute type's format.
  std::optional<Format> out;
  // TrialSpec::precision, as resolved. per_role: the op's policy replay runs it role by role
  // (storage = in, compute = acc with acc's rounding, for the outcome's u and the dtype/acc/round
  // it is listed under; `out` stays empty: the policy's out role is the replay's own last step).
  std::optional<PrecisionPolicy> policy;
  bool per_role = false;
  // An mma: schedule that applies block scales (run/scaled_dot.hpp): a block-scaled profile
  // (blackwell-mxf8, -mxf4, -nvf4) on its block-scaled storage, or an unscaled profile on
  // storage with fp32 block scales applied at each promotion (DeepGEMM). Execute then runs
  // RunScaledDot on the input's codes and scales (TrialInput::scaled_a, scaled_b).
  bool scaled_mma = false;
  const registry::Entry* user = nullptr;  // a registered user carrier, else null
  const registry::Entry* op = nullptr;    // the op's table entry (never null once resolved)
};

// Throws SpecError.
ResolvedTrial ResolveTrial(const TrialSpec& spec);

// Ops sharing a reference on the same input (the entry's reference_key): sum, neumaier and
// kahan -> "sum"; welford, var-twopass and var-textbook -> "welford"; attention ->
// "attention:<head_dim>"; otherwise the op.
std::string ReferenceKey(const ResolvedTrial& t);

// The stored input, by the entry's input kind. One column: a. Pairs (dot, affine): (a, b)
// from seeds seed and seed + 1.
// attention: a = q, k, v concatenated (each n x head_dim, row-major): q and k from the
// generator (seeds seed, seed + 1), v normal (seed + 2), as backends.hpp's cuda backend takes.
// Every value already rounded to the storage format (rne).
// One-column inputs (InputKind kColumn) are held in `column` instead of `a`, and pairs in
// `column` and `column_b` instead of `a` and `b`: in the fewest bytes that keep every stored
// value bit for bit (precision/stored_column.hpp: 1 byte per value for fp8, 2 for bf16 and
// fp16, 4 for tf32 and fp32, 8 for fp64), and `a` and `b` are empty. The fast engine's replay,
// the chunked references and the bounds read the columns a chunk at a time; every other reader
// takes ColumnValues / ColumnBValues (a column decoded for it alone).
// One operand of a block-scaled storage as a block-scaled matrix unit reads it
// (precision/block_scaled.hpp's BlockScaledResult, 1 x n): element values (unscaled), one scale
// per block along the vector, and NVFP4's per-tensor decode scale (1 for the other formats).
struct ScaledOperand {
  std::vector<double> elements;
  std::vector<double> scales;
  double tensor_scale = 1;
};

struct TrialInput {
  std::vector<double> a;  // attention; an input made by hand (tests)
  std::vector<double> b;
  StoredColumn column;
  StoredColumn column_b;  // pairs: the second column (b)
  std::uint64_t n = 0;    // the reduction's length (attention: the sequence length)
  std::string text;       // how it was made, for eval's output
  // Unique per input MakeInput or MakeInputFromValues made in this process (never 0, never
  // reused): the key of a replay's kept conversion (registry.hpp ConvertedInput). An input
  // changed after it was made must be given a new id (NewInputId) or 0.
  std::uint64_t id = 0;
  // Finite values that rounding to the storage format made infinite or NaN (1000 in fp8e4m3,
  // 70000 in fp16): an input the trial cannot stand for, flagged rather than measured as if it
  // were data (eval refuses it without --allow-nonfinite; a sweep row gets status
  // storage_overflow). first_overflow is the index of the first one (in a, then b), and
  // first_overflow_value its value before rounding.
  std::uint64_t storage_overflows = 0;
  std::uint64_t first_overflow = 0;
  double first_overflow_value = 0;
  // Pairs in block-scaled storage (MakeInput, MakeInputFromValues): each column's elements and
  // scales beside its dequantised values, for ResolvedTrial::scaled_mma; null otherwise.
  std::shared_ptr<const ScaledOperand> scaled_a, scaled_b;
};
std::uint64_t NewInputId();
// One line naming a storage overflow of `in` (storage_overflows > 0) in format `dtype`.
std::string StorageOverflowText(const TrialInput& in, const std::string& dtype);
// Whether column a is held in TrialInput::column (then TrialInput::a is empty); for pairs,
// column b in TrialInput::column_b too (HeldInColumns).
inline bool HeldInColumn(const TrialInput& in) { return in.a.empty() && !in.column.empty(); }
inline bool HeldInColumns(const TrialInput& in) {
  return HeldInColumn(in) && in.b.empty() && in.column_b.size() == in.column.size();
}
// A column as doubles: `values` itself, the column's own doubles (fp64 storage), or the column
// decoded into `scratch` (8 bytes per value for as long as the caller keeps it).
inline std::span<const double> DecodedValues(const std::vector<double>& values,
                                             const StoredColumn& column,
                                             std::vector<double>& scratch) {
  if (!values.empty() || column.empty()) return values;
  if (column.layout() == StoredColumn::Layout::kDouble) return column.Doubles();
  scratch = column.ToDoubles();
  return scratch;
}
// Column a (TrialInput::a or ::column) and column b (::b or ::column_b) as doubles.
inline std::span<const double> ColumnValues(const TrialInput& in, std::vector<double>& scratch) {
  return DecodedValues(in.a, in.column, scratch);
}
inline std::span<const double> ColumnBValues(const TrialInput& in, std::vector<double>& scratch) {
  return DecodedValues(in.b, in.column_b, scratch);
}
// The stored input as a bound reads it (BoundInputs x, column, pairs, column_b and n): packed
// columns are read in place; pairs given as two vectors are zipped into `pairs` (which must
// outlive the result). `is_pairs`: the op's input kind is pairs.
inline BoundInputs BoundInputsOf(const TrialInput& in, bool is_pairs,
                                 std::vector<ValuePair<double>>& pairs) {
  BoundInputs bi;
  bi.x = in.a;
  bi.n = in.n;
  if (HeldInColumn(in)) bi.column = &in.column;
  if (!is_pairs) return bi;
  if (HeldInColumns(in)) {
    bi.column_b = &in.column_b;
    return bi;
  }
  pairs = ZipPairs(in.a, in.b);
  bi.pairs = pairs;
  return bi;
}

TrialInput MakeInput(const ResolvedTrial& t, const inputs::GeneratorSpec& gen, std::uint64_t n,
                     std::uint64_t seed);
// From numbers already read (a file): rounds them to the storage format.
TrialInput MakeInputFromValues(const ResolvedTrial& t, std::vector<double> a, std::vector<double> b,
                               std::string text);

struct SharedReference {
  reference::Reference ref;
  double seconds = 0;  // time to compute it
  std::string tier;    // "exact", "fast", "mpfr" or "mpfr-carrier" (user carriers)
  // attention only, the data-dependent parts of its bound (RunTrial): per output component j
  // of row i, A = sum_k w_k (|v_kj| + |o_ij|) and B = sum_k w_k (|v_kj| + |o_ij|) (M_i - s_ik),
  // with w the exact softmax weights of the row, s its exact scores, M_i their maximum and o
  // the reference output; per row, Q_i = max_k sum_c |q_ic k_kc| / sqrt(d) (scales the error of
  // the scores the replay forms in the compute type). Row-major like the outputs.
  std::vector<double> attention_a, attention_b, attention_q;
  // The bounds' schedule-independent sums over this input (precision/op_bounds.hpp): computed
  // by the first trial that needs one, reused by the input's other trials (copies share it).
  std::shared_ptr<BoundMemo> bound_memo = std::make_shared<BoundMemo>();
};
SharedReference ComputeReference(const ResolvedTrial& t, const TrialInput& input);

// Everything one trial measured. Scalar ops fill result..ulp_error; softmax and attention
// (vector_out) fill the vector errors, abs_error = normwise inf, rel_error = componentwise.
struct TrialOutcome {
  std::string schedule_used;
  std::uint64_t n = 0;
  std::vector<long double> components;  // as computed (see backends.hpp for the layout)
  std::int64_t index = -1;              // argmax
  std::size_t main = 0;                 // index of the main component
  bool vector_out = false;
  long double result = 0;
  double reference = 0;
  double abs_error = 0, rel_error = 0, ulp_error = 0;
  bool reference_zero = false, special_mismatch = false;
  double normwise_inf = 0, normwise_2 = 0, componentwise = 0;
  std::size_t zero_components = 0;
  double cond = NAN;       // see FORMAT.md; NaN when undefined for the op
  bool has_bound = false;  // false: user carrier or an op without an a-priori bound
  std::string bound_note;  // why there is no bound when the op has one (a NaN reference)
  double bound = NAN;
  bool bound_relative = true, bound_rigorous = false, bound_vacuous = false;
  std::string bound_formula;
  double error_to_bound = NAN;
  // A precision policy's bound term by term (precision/role_bounds.hpp RoleBoundFor), against the
  // exact result on the stored inputs (so without the `in` term): trials with a policy
  // (TrialSpec::precision) whose op has a role bound (not mma:/adaptive trees). For a per-role
  // trial it is also the trial's bound (bound, bound_formula, error_to_bound above).
  bool has_role_bound = false;
  double role_bound = NAN;
  bool role_bound_relative = false, role_bound_rigorous = false;
  std::string role_bound_note;
  double u = 0;
  std::uint64_t tree_max_depth = 0;
  std::string tree_hash;  // core/tree_hash.hpp TreeHash of the executed tree (bit-classes)
  double tree_mean_depth = 0;
  double seconds = 0;  // the reduction alone (replay or kernel)
};

// Starts the walk of the trial's tree shape over n inputs ahead (run/tree_shape.hpp
// PrefetchShape) where RunTrial will read that walk, n is large enough (2^16 inputs) for a
// thread of its own to pay and the caller allows more than one thread (PassThreads() >= 2:
// eval --threads 1 keeps to one); keep the handle until RunTrial has returned.
ShapePrefetch PrefetchTrialShape(const ResolvedTrial& t, std::uint64_t n);

// Runs the reduction and measures it. Throws SpecError (e.g. a permuting schedule for a
// non-commutative op) and backends::Unavailable.
TrialOutcome RunTrial(const ResolvedTrial& t, const TrialInput& input, const SharedReference& ref);

// Frees the calling thread's MPFR caches; worker threads call it before they end.
void ReleaseThreadCaches();

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR
