// experiments/run/outcome_fields.hpp: the outcome schema. One table (outcome_fields.cpp) lists
// every field a trial reports, in eval's print order: its name, its column in the sweep's
// trials.csv (experiments/sweep/FORMAT.md) or none, when eval prints it, and its formatters:
// eval's JSON value and the CSV cell. `carrier eval` (its JSON and text output, --op matmul's
// included) and `carrier sweep` (trials.csv's header and every row) are both produced from it,
// so a new field is one table entry.
//
// The two outputs keep their own spellings where they have always differed, each entry holding
// both: eval's numbers are the project's shortest round-trip text in the compute type's
// precision with nan/inf quoted, the CSV's 17 significant digits (CsvNumber); eval's bound kinds
// read "relative, rigorous", the CSV's "relative rigorous"; eval's result is the main component
// as computed, the CSV's the outcome's result; eval lists the parameters as resolved
// (trial.storage.name, ...), a sweep row as its grid cell wrote them. Changing either output's
// bytes changes committed files (papers/ CSVs are compared byte for byte).
//
// The column names are available in every build (merge and summary read trials.csv without
// MPFR); the formatters, which read run/trial.hpp's outcome, only in builds with MPFR.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR
#include "io/json.hpp"
#include "run/matmul.hpp"
#include "run/trial.hpp"
#endif

namespace carrier::run {

// trials.csv's columns, in order: the table's fields that have a column, by column.
const std::vector<std::string>& OutcomeCsvColumns();

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

// One trial as both outputs report it. The caller fills the parameters from its own source;
// the measured part is pointers to what the trial produced (null where it produced nothing).
struct OutcomeRecord {
  // The trial as listed: eval's as resolved, a sweep row's as its grid cell wrote them.
  std::string op, dtype, acc, round, exp, schedule, backend, input;
  std::string generator;  // eval: the generator version of generated inputs ("" for a file)
  std::optional<std::string> precision;  // eval: only with --precision; a sweep: "" if not swept
  std::string out;                       // eval: the out format where it differs from acc
  std::optional<std::uint64_t> sr_seed;  // eval: under stochastic rounding
  std::uint64_t n = 0;
  std::uint64_t head_dim = 0;           // 0: none (a sweep's non-attention rows)
  bool attention = false;               // eval: the op takes attention's input (prints head_dim)
  std::string defaults;                 // eval: the defaults it filled in, "; "-joined
  std::uint64_t storage_overflows = 0;  // eval: finite inputs the storage format overflowed
  std::string storage_overflow_note;
  // A sweep row's own parameters and status.
  std::uint64_t trial_id = 0, trial = 0, input_seed = 0;
  std::string mn, status, error;

  // The measurement. A failed sweep row has neither outcome nor matmul (and ref only when
  // the reference was computed); an op matmul row and eval --op matmul have matmul alone;
  // eval of any other op has outcome and ref.
  const TrialOutcome* outcome = nullptr;
  const SharedReference* ref = nullptr;
  const MatmulOutcome* matmul = nullptr;
  double reference_seconds = 0;  // eval: the reference's time; a sweep row: this row's share
  ComputeKind kind = ComputeKind::kDouble;  // eval prints results in the compute type's digits
  const registry::Entry* entry = nullptr;   // component names, whether the op has a cond
  bool user = false;                        // a registered user carrier
};

// How one field is printed.
struct OutcomeFormat {
  // When eval prints it (null: never, a CSV-only column).
  bool (*in_eval)(const OutcomeRecord&) = nullptr;
  // Eval's JSON value (JSON text). A field whose `json_each` is set prints its pairs instead
  // (the per-component result_NAME, reference_NAME pairs).
  std::string (*json)(const OutcomeRecord&) = nullptr;
  std::vector<std::pair<std::string, std::string>> (*json_each)(const OutcomeRecord&) = nullptr;
  // The CSV cell, unquoted (CsvLine quotes); null for eval-only fields. `measured`: the cell
  // reads the measurement and is empty on a row that has none (a failed trial).
  std::string (*csv)(const OutcomeRecord&) = nullptr;
  bool measured = false;
};

struct OutcomeField {
  const char* name;
  int csv_column;  // its place in trials.csv; -1: eval only
  OutcomeFormat format;
};

// The table, in eval's print order.
const std::vector<OutcomeField>& OutcomeFields();

// Eval's output: the fields eval prints for this record, in order, as (key, JSON value).
io::JsonObject EvalOutcomeJson(const OutcomeRecord& r);
// One trials.csv row (cells unquoted, OutcomeCsvColumns' order).
std::vector<std::string> CsvOutcomeRow(const OutcomeRecord& r);

#endif  // CARRIER_HAVE_MPFR

}  // namespace carrier::run
