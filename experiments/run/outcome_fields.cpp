#include "run/outcome_fields.hpp"

#include <cmath>
#include <stdexcept>

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include "cli/number_format.hpp"
#include "precision/rounding.hpp"
#include "registry/registry.hpp"
#include "sweep/csv.hpp"
#endif

namespace carrier::run {

namespace {

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

using R = OutcomeRecord;
using Pairs = std::vector<std::pair<std::string, std::string>>;

// Eval's numbers through the project's formatter (Shortest, in the compute type's own
// precision); io::JsonNumberText quotes nan, inf and -inf, which JSON has no numbers for.
std::string JsonNumber(long double v, ComputeKind kind) {
  if (kind == ComputeKind::kFloat) return io::JsonNumberText(cli::Shortest(static_cast<float>(v)));
  if (kind == ComputeKind::kMpfr) return io::JsonNumberText(cli::Shortest(v));
  return io::JsonNumberText(cli::Shortest(static_cast<double>(v)));
}
std::string JsonDouble(double v) { return io::JsonNumberText(cli::Shortest(v)); }
// Strings through nlohmann-json's escaping (io/json.hpp): quotes, backslashes and every
// control character, so an --input path with a control character stays valid JSON.
std::string JsonString(const std::string& s) { return io::JsonQuote(s); }
std::string BoolText(bool b) { return b ? "true" : "false"; }
// The CSV's numbers: 17 significant digits, nan, inf, -inf (FORMAT.md).
std::string Num(double v) { return sweep::CsvNumber(v); }

// A bound's kind as each output spells it: eval "relative, rigorous", the CSV "relative
// rigorous" (and "first-order estimate" / "first-order").
std::string EvalKind(bool relative, bool rigorous) {
  return std::string(relative ? "relative" : "absolute") +
         (rigorous ? ", rigorous" : ", first-order estimate");
}
std::string CsvKind(bool relative, bool rigorous) {
  return std::string(relative ? "relative" : "absolute") +
         (rigorous ? " rigorous" : " first-order");
}

const TrialOutcome& O(const R& r) { return *r.outcome; }
// An op matmul record (run/matmul.hpp): eval --op matmul prints the parameters, the tree, its
// own errors (max, median and normwise over the outputs), the reference and the timings.
const MatmulOutcome& M(const R& r) { return *r.matmul; }
// The CSV's bound columns: a bound that is there and not vacuous.
bool CsvHasBound(const R& r) { return O(r).has_bound && !O(r).bound_vacuous; }

// When eval prints a field.
bool Always(const R&) { return true; }
bool Matmul(const R& r) { return r.matmul != nullptr; }
bool OneTrial(const R& r) { return r.matmul == nullptr; }
bool Generated(const R& r) { return !r.generator.empty(); }
bool Scalar(const R& r) { return OneTrial(r) && !O(r).vector_out; }
bool VectorOut(const R& r) { return OneTrial(r) && O(r).vector_out; }
bool HasRoleBound(const R& r) { return OneTrial(r) && O(r).has_role_bound; }
bool StorageOverflowed(const R& r) { return r.storage_overflows > 0; }

#define CARRIER_OUTCOME_FIELD(name, column, ...) \
  OutcomeField {                                 \
    name, column, OutcomeFormat { __VA_ARGS__ }  \
  }
using Field = OutcomeField;

#else  // no MPFR: no trials, the CSV's column names alone (merge and summary read trials.csv)

struct Field {
  const char* name;
  int csv_column;
};
#define CARRIER_OUTCOME_FIELD(name, column, ...) \
  Field { name, column }

#endif

// The schema, in eval's print order. Each entry: name, trials.csv column (-1: eval only), and
// {when eval prints it, eval's JSON value (or pairs), the CSV cell, whether the cell is
// measured}. The parameters come first (the CSV also has the sweep's own: trial_id, trial,
// input_seed, mn, status, error), then the tree, the input, the errors, the reference, the
// bounds, u and the timings.
const std::vector<Field>& Table() {
  static const std::vector<Field> table = {
      CARRIER_OUTCOME_FIELD(
          "trial_id", 0, .csv = [](const R& r) { return std::to_string(r.trial_id); }),
      CARRIER_OUTCOME_FIELD(
          "op", 1, .in_eval = Always, .json = [](const R& r) { return JsonString(r.op); },
          .csv = [](const R& r) { return r.op; }),
      CARRIER_OUTCOME_FIELD(
          "dtype", 2, .in_eval = Always, .json = [](const R& r) { return JsonString(r.dtype); },
          .csv = [](const R& r) { return r.dtype; }),
      CARRIER_OUTCOME_FIELD(
          "acc", 3, .in_eval = Always, .json = [](const R& r) { return JsonString(r.acc); },
          .csv = [](const R& r) { return r.acc; }),
      CARRIER_OUTCOME_FIELD(
          "round", 4, .in_eval = Always, .json = [](const R& r) { return JsonString(r.round); },
          .csv = [](const R& r) { return r.round; }),
      CARRIER_OUTCOME_FIELD(
          "out", -1, .in_eval = [](const R& r) { return !r.out.empty(); },
          .json = [](const R& r) { return JsonString(r.out); }),
      // The policy as given: dtype, acc and round are its shorthand.
      CARRIER_OUTCOME_FIELD(
          "precision", 5, .in_eval = [](const R& r) { return r.precision.has_value(); },
          .json = [](const R& r) { return JsonString(*r.precision); },
          .csv = [](const R& r) { return r.precision.value_or(""); }),
      CARRIER_OUTCOME_FIELD(
          "sr_seed", -1, .in_eval = [](const R& r) { return r.sr_seed.has_value(); },
          .json = [](const R& r) { return std::to_string(*r.sr_seed); }),
      CARRIER_OUTCOME_FIELD(
          "exp", 6, .in_eval = Always, .json = [](const R& r) { return JsonString(r.exp); },
          .csv = [](const R& r) { return r.exp; }),
      CARRIER_OUTCOME_FIELD(
          "backend", 8, .in_eval = Always, .json = [](const R& r) { return JsonString(r.backend); },
          .csv = [](const R& r) { return r.backend; }),
      CARRIER_OUTCOME_FIELD(
          "head_dim", 11, .in_eval = [](const R& r) { return r.attention; },
          .json = [](const R& r) { return std::to_string(r.head_dim); },
          .csv = [](const R& r) { return r.head_dim ? std::to_string(r.head_dim) : ""; }),
      CARRIER_OUTCOME_FIELD(
          "schedule", 7, .in_eval = Always,
          .json = [](const R& r) { return JsonString(r.schedule); },
          .csv = [](const R& r) { return r.schedule; }),
      CARRIER_OUTCOME_FIELD(
          "schedule_used", 17, .in_eval = Always,
          .json =
              [](const R& r) {
                return JsonString(r.matmul ? M(r).schedule_used : O(r).schedule_used);
              },
          .csv = [](const R& r) { return r.matmul ? r.matmul->schedule_used : O(r).schedule_used; },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "defaults", -1, .in_eval = [](const R& r) { return !r.defaults.empty(); },
          .json = [](const R& r) { return JsonString(r.defaults); }),
      CARRIER_OUTCOME_FIELD(
          "tree_max_depth", 32, .in_eval = Always,
          .json =
              [](const R& r) {
                return std::to_string(r.matmul ? M(r).tree_max_depth : O(r).tree_max_depth);
              },
          .csv =
              [](const R& r) {
                return std::to_string(r.matmul ? r.matmul->tree_max_depth : O(r).tree_max_depth);
              },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "tree_mean_depth", 33, .in_eval = Always,
          .json =
              [](const R& r) {
                return JsonDouble(r.matmul ? M(r).tree_mean_depth : O(r).tree_mean_depth);
              },
          .csv =
              [](const R& r) {
                return Num(r.matmul ? r.matmul->tree_mean_depth : O(r).tree_mean_depth);
              },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "tree_hash", 34, .in_eval = Always,
          .json = [](const R& r) { return JsonString(r.matmul ? M(r).tree_hash : O(r).tree_hash); },
          .csv = [](const R& r) { return r.matmul ? r.matmul->tree_hash : O(r).tree_hash; },
          .measured = true),
      // op matmul's shape M x N x K: eval prints m, n (r.n), k.
      CARRIER_OUTCOME_FIELD(
          "m", -1, .in_eval = Matmul,
          .json = [](const R& r) { return std::to_string(M(r).shape.m); }),
      CARRIER_OUTCOME_FIELD(
          "n", 9, .in_eval = Always, .json = [](const R& r) { return std::to_string(r.n); },
          .csv = [](const R& r) { return std::to_string(r.n); }),
      CARRIER_OUTCOME_FIELD(
          "k", -1, .in_eval = Matmul,
          .json = [](const R& r) { return std::to_string(M(r).shape.k); }),
      CARRIER_OUTCOME_FIELD(
          "input", 10, .in_eval = Always, .json = [](const R& r) { return JsonString(r.input); },
          .csv = [](const R& r) { return r.input; }),
      // The generator version (inputs::kGeneratorVersion) when the input was generated; a
      // sweep's manifest.json carries it once for all its rows.
      CARRIER_OUTCOME_FIELD(
          "generator", -1, .in_eval = Generated,
          .json = [](const R& r) { return JsonString(r.generator); }),
      // op matmul's errors over its M N outputs (run/matmul.hpp). The CSV has the median
      // componentwise relative error and ||C^ - C||_F / ||C||_F (normwise_error); its abs_error,
      // rel_error, error_to_bound columns hold the max ones.
      CARRIER_OUTCOME_FIELD(
          "outputs", -1, .in_eval = Matmul,
          .json = [](const R& r) { return std::to_string(M(r).shape.m * M(r).shape.n); }),
      CARRIER_OUTCOME_FIELD(
          "max_abs_error", -1, .in_eval = Matmul,
          .json = [](const R& r) { return JsonDouble(M(r).max_abs_error); }),
      CARRIER_OUTCOME_FIELD(
          "max_rel_error", -1, .in_eval = Matmul,
          .json = [](const R& r) { return JsonDouble(M(r).max_rel_error); }),
      CARRIER_OUTCOME_FIELD(
          "median_rel_error", 36, .in_eval = Matmul,
          .json = [](const R& r) { return JsonDouble(M(r).median_rel_error); },
          .csv = [](const R& r) -> std::string {
            return r.matmul ? Num(r.matmul->median_rel_error) : "";
          },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "normwise_fro_error", -1, .in_eval = Matmul,
          .json = [](const R& r) { return JsonDouble(M(r).normwise_fro_error); }),
      CARRIER_OUTCOME_FIELD(
          "normwise_max_error", -1, .in_eval = Matmul,
          .json = [](const R& r) { return JsonDouble(M(r).normwise_max_error); }),
      CARRIER_OUTCOME_FIELD(
          "zero_reference_outputs", -1, .in_eval = Matmul,
          .json = [](const R& r) { return std::to_string(M(r).zero_reference_outputs); }),
      CARRIER_OUTCOME_FIELD(
          "nan_outputs", -1, .in_eval = Matmul,
          .json = [](const R& r) { return std::to_string(M(r).nan_outputs); }),
      CARRIER_OUTCOME_FIELD(
          "max_error_to_bound", -1, .in_eval = Matmul,
          .json =
              [](const R& r) {
                return M(r).has_bound ? JsonDouble(M(r).max_error_to_bound)
                                      : JsonString("unavailable");
              }),
      CARRIER_OUTCOME_FIELD(
          "trial", 12, .csv = [](const R& r) { return std::to_string(r.trial); }),
      CARRIER_OUTCOME_FIELD(
          "input_seed", 13, .csv = [](const R& r) { return std::to_string(r.input_seed); }),
      CARRIER_OUTCOME_FIELD(
          "mn", 14, .csv = [](const R& r) { return r.mn; }),
      CARRIER_OUTCOME_FIELD(
          "status", 15, .csv = [](const R& r) { return r.status; }),
      CARRIER_OUTCOME_FIELD(
          "error", 16, .csv = [](const R& r) { return r.error; }),
      CARRIER_OUTCOME_FIELD(
          "storage_overflow", -1, .in_eval = StorageOverflowed,
          .json = [](const R& r) { return std::to_string(r.storage_overflows); }),
      CARRIER_OUTCOME_FIELD(
          "storage_overflow_note", -1, .in_eval = StorageOverflowed,
          .json = [](const R& r) { return JsonString(r.storage_overflow_note); }),
      // Vector outputs (softmax, attention): normwise and componentwise errors.
      CARRIER_OUTCOME_FIELD(
          "normwise_inf_error", -1, .in_eval = VectorOut,
          .json = [](const R& r) { return JsonDouble(O(r).normwise_inf); }),
      CARRIER_OUTCOME_FIELD(
          "normwise_2_error", -1, .in_eval = VectorOut,
          .json = [](const R& r) { return JsonDouble(O(r).normwise_2); }),
      CARRIER_OUTCOME_FIELD(
          "componentwise_error", -1, .in_eval = VectorOut,
          .json = [](const R& r) { return JsonDouble(O(r).componentwise); }),
      CARRIER_OUTCOME_FIELD(
          "zero_reference_components", -1, .in_eval = VectorOut,
          .json = [](const R& r) { return std::to_string(O(r).zero_components); }),
      // Scalar outputs: eval prints the main component as computed, the CSV the outcome's result.
      CARRIER_OUTCOME_FIELD(
          "result", 18, .in_eval = Scalar,
          .json = [](const R& r) { return JsonNumber(O(r).components[O(r).main], r.kind); },
          .csv = [](const R& r) -> std::string {
            if (r.matmul || O(r).vector_out) return "";
            return Num(static_cast<double>(O(r).result));
          },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "reference", 19, .in_eval = Scalar,
          .json = [](const R& r) { return JsonDouble(r.ref->ref.as_double[O(r).main]); },
          .csv = [](const R& r) -> std::string {
            return r.matmul || O(r).vector_out ? "" : Num(O(r).reference);
          },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "result_index", -1,
          .in_eval = [](const R& r) { return Scalar(r) && r.ref->ref.index >= 0; },
          .json = [](const R& r) { return std::to_string(O(r).index); }),
      CARRIER_OUTCOME_FIELD(
          "reference_index", -1,
          .in_eval = [](const R& r) { return Scalar(r) && r.ref->ref.index >= 0; },
          .json = [](const R& r) { return std::to_string(r.ref->ref.index); }),
      // The other components, by the entry's names (a user carrier's: c1, c2, ...).
      CARRIER_OUTCOME_FIELD(
          "result_NAME, reference_NAME", -1, .in_eval = Scalar,
          .json_each =
              [](const R& r) {
                Pairs out;
                const TrialOutcome& o = O(r);
                const auto& ref = r.ref->ref.as_double;
                const auto& names = r.entry->component_names;
                for (std::size_t k = 0; k < o.components.size() && k < ref.size(); ++k) {
                  if (k == o.main) continue;
                  const std::string name = k < names.size() ? names[k] : "c" + std::to_string(k);
                  out.emplace_back("result_" + name, JsonNumber(o.components[k], r.kind));
                  out.emplace_back("reference_" + name, JsonDouble(ref[k]));
                }
                return out;
              }),
      CARRIER_OUTCOME_FIELD(
          "cond", 35, .in_eval = [](const R& r) { return Scalar(r) && r.entry->cond != nullptr; },
          .json = [](const R& r) { return JsonDouble(O(r).cond); },
          .csv = [](const R& r) -> std::string {
            return r.matmul || std::isnan(O(r).cond) ? "" : Num(O(r).cond);
          },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "abs_error", 23, .in_eval = Scalar,
          .json = [](const R& r) { return JsonDouble(O(r).abs_error); },
          .csv =
              [](const R& r) { return Num(r.matmul ? r.matmul->max_abs_error : O(r).abs_error); },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "rel_error", 24, .in_eval = Scalar,
          .json = [](const R& r) { return JsonDouble(O(r).rel_error); },
          .csv =
              [](const R& r) { return Num(r.matmul ? r.matmul->max_rel_error : O(r).rel_error); },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "ulp_error", 25, .in_eval = Scalar,
          .json = [](const R& r) { return JsonDouble(O(r).ulp_error); },
          .csv = [](const R& r) -> std::string {
            return r.matmul || O(r).vector_out ? "" : Num(O(r).ulp_error);
          },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "reference_is_zero", -1, .in_eval = Scalar,
          .json = [](const R& r) { return BoolText(O(r).reference_zero); }),
      CARRIER_OUTCOME_FIELD(
          "special_value_mismatch", -1, .in_eval = Scalar,
          .json = [](const R& r) { return BoolText(O(r).special_mismatch); }),
      // The reference: a failed row has these when its reference was computed.
      CARRIER_OUTCOME_FIELD(
          "reference_tier", 20, .in_eval = Always,
          .json =
              [](const R& r) { return JsonString(r.matmul ? M(r).reference_tier : r.ref->tier); },
          .csv = [](const R& r) -> std::string {
            return r.matmul ? r.matmul->reference_tier : r.ref ? r.ref->tier : "";
          }),
      CARRIER_OUTCOME_FIELD(
          "reference_bits", 21, .in_eval = Always,
          .json =
              [](const R& r) {
                return r.matmul ? std::to_string(M(r).reference_bits)
                                : std::to_string(r.ref->ref.cert.precision_bits);
              },
          .csv = [](const R& r) -> std::string {
            if (r.matmul) return std::to_string(r.matmul->reference_bits);
            return r.ref ? std::to_string(r.ref->ref.cert.precision_bits) : "";
          }),
      CARRIER_OUTCOME_FIELD(
          "reference_certified", 22, .in_eval = Always,
          .json =
              [](const R& r) {
                return BoolText(r.matmul ? M(r).certified : r.ref->ref.cert.certified);
              },
          .csv = [](const R& r) -> std::string {
            if (r.matmul) return BoolText(r.matmul->certified);
            return r.ref ? BoolText(r.ref->ref.cert.certified) : "";
          }),
      CARRIER_OUTCOME_FIELD(
          "reference_note", -1,
          .in_eval =
              [](const R& r) {
                return r.matmul ? !M(r).reference_note.empty() : !r.ref->ref.cert.note.empty();
              },
          .json =
              [](const R& r) {
                return JsonString(r.matmul ? M(r).reference_note : r.ref->ref.cert.note);
              }),
      // The a-priori bound. Eval prints "unavailable" where there is none; the CSV leaves bound
      // and error_to_bound empty where there is none or it is vacuous, with kind "none". An op
      // matmul row: the largest output's ratio to its own dot bound.
      CARRIER_OUTCOME_FIELD(
          "bound", 26, .in_eval = OneTrial,
          .json =
              [](const R& r) {
                return O(r).has_bound ? JsonDouble(O(r).bound) : JsonString("unavailable");
              },
          .csv = [](const R& r) -> std::string {
            return !r.matmul && CsvHasBound(r) ? Num(O(r).bound) : "";
          },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "bound_kind", 27, .in_eval = OneTrial,
          .json =
              [](const R& r) {
                const TrialOutcome& o = O(r);
                return JsonString(o.has_bound ? EvalKind(o.bound_relative, o.bound_rigorous)
                                              : "unavailable");
              },
          .csv = [](const R& r) -> std::string {
            if (r.matmul) return r.matmul->has_bound ? "max over outputs of each dot's" : "none";
            return CsvHasBound(r) ? CsvKind(O(r).bound_relative, O(r).bound_rigorous) : "none";
          },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "bound_formula", -1, .in_eval = OneTrial,
          .json =
              [](const R& r) {
                const TrialOutcome& o = O(r);
                if (o.has_bound) return JsonString(o.bound_formula);
                return JsonString(!o.bound_note.empty() ? o.bound_note
                                  : r.user
                                      ? "none: a registered user carrier declares no a-priori bound"
                                      : "none: the op table has no a-priori bound for " + r.op);
              }),
      CARRIER_OUTCOME_FIELD(
          "error_to_bound", 28, .in_eval = OneTrial,
          .json = [](const R& r) { return JsonDouble(O(r).has_bound ? O(r).error_to_bound : NAN); },
          .csv = [](const R& r) -> std::string {
            if (r.matmul) return r.matmul->has_bound ? Num(r.matmul->max_error_to_bound) : "";
            return CsvHasBound(r) ? Num(O(r).error_to_bound) : "";
          },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "bound_vacuous", -1, .in_eval = OneTrial,
          .json = [](const R& r) { return BoolText(O(r).has_bound && O(r).bound_vacuous); }),
      // A precision policy's bound term by role (precision/role_bounds.hpp), against the exact
      // result on the stored inputs: trials with a policy whose op has a role bound.
      CARRIER_OUTCOME_FIELD(
          "role_bound", 29, .in_eval = HasRoleBound,
          .json = [](const R& r) { return JsonDouble(O(r).role_bound); },
          .csv = [](const R& r) -> std::string {
            return !r.matmul && HasRoleBound(r) ? Num(O(r).role_bound) : "";
          },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "role_bound_kind", 30, .in_eval = HasRoleBound,
          .json =
              [](const R& r) {
                return JsonString(EvalKind(O(r).role_bound_relative, O(r).role_bound_rigorous));
              },
          .csv = [](const R& r) -> std::string {
            if (r.matmul || !HasRoleBound(r)) return "";
            return CsvKind(O(r).role_bound_relative, O(r).role_bound_rigorous);
          },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "role_bound_note", -1, .in_eval = HasRoleBound,
          .json = [](const R& r) { return JsonString(O(r).role_bound_note); }),
      CARRIER_OUTCOME_FIELD(
          "u", 31, .in_eval = Always,
          .json = [](const R& r) { return JsonDouble(r.matmul ? M(r).u : O(r).u); },
          .csv = [](const R& r) { return Num(r.matmul ? r.matmul->u : O(r).u); }, .measured = true),
      CARRIER_OUTCOME_FIELD(
          "threads", -1, .in_eval = Matmul,
          .json = [](const R& r) { return std::to_string(M(r).threads); }),
      CARRIER_OUTCOME_FIELD(
          "normwise_error", 37,
          .csv = [](const R& r)
              -> std::string { return r.matmul ? Num(r.matmul->normwise_fro_error) : ""; },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "reference_seconds", 39, .in_eval = Always,
          .json = [](const R& r) { return JsonDouble(r.reference_seconds); },
          .csv = [](const R& r) { return Num(r.reference_seconds); }),
      CARRIER_OUTCOME_FIELD(
          "seconds", 38, .in_eval = Always,
          .json = [](const R& r) { return JsonDouble(r.matmul ? M(r).seconds : O(r).seconds); },
          .csv = [](const R& r) { return Num(r.matmul ? r.matmul->seconds : O(r).seconds); },
          .measured = true),
      CARRIER_OUTCOME_FIELD(
          "wall_seconds", -1, .in_eval = Matmul,
          .json = [](const R& r) { return JsonDouble(M(r).wall_seconds); }),
  };
  return table;
}

#undef CARRIER_OUTCOME_FIELD

}  // namespace

const std::vector<std::string>& OutcomeCsvColumns() {
  // By column number; a gap or a column given twice is a mistake in the table above.
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> cols;
    for (const auto& f : Table()) {
      if (f.csv_column < 0) continue;
      const auto c = static_cast<std::size_t>(f.csv_column);
      if (cols.size() <= c) cols.resize(c + 1);
      if (!cols[c].empty())
        throw std::logic_error("outcome schema: csv column " + std::to_string(c) + " is both " +
                               cols[c] + " and " + f.name);
      cols[c] = f.name;
    }
    for (std::size_t c = 0; c < cols.size(); ++c)
      if (cols[c].empty())
        throw std::logic_error("outcome schema: no field has csv column " + std::to_string(c));
    return cols;
  }();
  return columns;
}

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

const std::vector<OutcomeField>& OutcomeFields() { return Table(); }

io::JsonObject EvalOutcomeJson(const OutcomeRecord& r) {
  io::JsonObject fields;
  for (const auto& f : Table()) {
    if (!f.format.in_eval || !f.format.in_eval(r)) continue;
    if (f.format.json_each) {
      for (auto& [k, v] : f.format.json_each(r)) fields.Raw(k, v);
    } else {
      fields.Raw(f.name, f.format.json(r));
    }
  }
  return fields;
}

std::vector<std::string> CsvOutcomeRow(const OutcomeRecord& r) {
  const bool measured = r.outcome || r.matmul;
  std::vector<std::string> row(OutcomeCsvColumns().size());
  for (const auto& f : Table())
    if (f.csv_column >= 0 && (measured || !f.format.measured))
      row[static_cast<std::size_t>(f.csv_column)] = f.format.csv(r);
  return row;
}

#endif

}  // namespace carrier::run
