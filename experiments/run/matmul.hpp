// experiments/run/matmul.hpp: an M x N x K matrix product C = A B in which every output C_ij is
// op `dot` on (row i of A, column j of B): the same resolved dot trial (schedule, mma profile
// and promotion interval, split-K, precision by role), the same storage rounding
// (MakeInputFromValues, so whatever storage role dot takes applies here) and the same fast exact
// reference (the dot entry's fast_reference: ReferenceDotFast), per output. So C_ij equals
// `carrier eval --op dot` on that row and column bit for bit, and the product's errors are the
// distribution of M N dot errors: max, median, normwise.
//
// Contract
//   Input: A row-major (M x K), B row-major (K x N), generated A from `seed` and B from
//   `seed + 1` (M K and K N values of the generator in row-major order), or given. Each row of A
//   and each column of B is rounded to storage as dot's columns a and b are, and held packed
//   (precision/stored_column.hpp: 1..8 bytes per value). Memory: the packed A and B, the raw
//   doubles while they are made, M N results and references, O(K) per thread; time: M N dots
//   of length K (each an exact superaccumulator reference and a replay), on `threads` threads.
//   No MPFR per element: ReferenceDotFast is exact (certified) at accumulator speed.
//   Statistics over the M N outputs (e_ij = |C^_ij - C_ij|, C the exact references):
//     max_abs_error      max e_ij
//     max_rel_error      max e_ij / |C_ij| (componentwise; a zero reference counts 0 when the
//                        result is 0 too, else inf), as eval --op dot's rel_error
//     median_rel_error   the median of those (the mean of the two middle ones for an even count)
//     normwise_fro_error ||C^ - C||_F / ||C||_F
//     normwise_max_error max e_ij / max |C_ij|
//     max_error_to_bound the largest ratio of an output's error to its own a-priori dot bound
//   NaN results or references: counted (nan_outputs) and left out of the statistics.
// Thread safety: RunTrial and ComputeReference are thread-safe (run/trial.hpp); each worker
// frees its MPFR caches before it ends.
#pragma once

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "inputs/generators.hpp"
#include "run/trial.hpp"

namespace carrier::run {

// The op name eval, the Python module and the README use; the trial runs op `dot`.
inline constexpr const char* kMatmulOp = "matmul";

struct MatmulShape {
  std::uint64_t m = 0, n = 0, k = 0;
};

// Throws SpecError (one line) for a zero size or one above kMaxTrialN.
void CheckMatmulShape(const MatmulShape& s);
// About what the product holds at its peak (see the contract); threads: the workers.
std::uint64_t MatmulBytes(const ResolvedTrial& dot, const MatmulShape& s, unsigned threads);
// Throws SpecError "M x N x K needs about X bytes ... but only Y are available".
void CheckMatmulMemory(const ResolvedTrial& dot, const MatmulShape& s, unsigned threads);

struct MatmulInput {
  MatmulShape shape;
  std::vector<StoredColumn> a_rows;  // M rows of A (K values), stored as dot's column a
  std::vector<StoredColumn> b_cols;  // N columns of B (K values), stored as dot's column b
  // Block-scaled storage: each row's and column's elements and scales (TrialInput::scaled_a,
  // scaled_b), for a dot through a block-scaled matrix unit (run/scaled_dot.hpp); else empty.
  std::vector<std::shared_ptr<const ScaledOperand>> a_scaled, b_scaled;
  std::string text;
  std::uint64_t storage_overflows = 0;
};

// `dot` is a resolved trial of op dot. Throws SpecError when a or b has the wrong length.
MatmulInput MakeMatmulInputFromValues(const ResolvedTrial& dot, std::span<const double> a,
                                      std::span<const double> b, const MatmulShape& s,
                                      std::string text);
MatmulInput MakeMatmulInput(const ResolvedTrial& dot, const inputs::GeneratorSpec& gen,
                            const MatmulShape& s, std::uint64_t seed);
// Output (i, j)'s dot input: row i of A and column j of B, as eval --op dot holds a file's pairs.
TrialInput MatmulPair(const MatmulInput& in, std::uint64_t i, std::uint64_t j);

struct MatmulOutcome {
  MatmulShape shape;
  std::vector<long double> c;          // the results, row-major M x N
  std::vector<long double> reference;  // the exact references, row-major
  double max_abs_error = 0, max_rel_error = 0, median_rel_error = 0;
  double normwise_fro_error = 0, normwise_max_error = 0;
  std::uint64_t zero_reference_outputs = 0, nan_outputs = 0;
  bool has_bound = false;
  double max_error_to_bound = NAN;
  bool certified = true;
  std::string reference_tier, reference_note;
  long reference_bits = 0;
  std::string schedule_used, tree_hash;
  std::uint64_t tree_max_depth = 0;
  double tree_mean_depth = 0;
  double u = 0;
  double reference_seconds = 0;  // summed over the outputs (CPU time)
  double seconds = 0;            // the replays, summed over the outputs (CPU time)
  double wall_seconds = 0;
  unsigned threads = 1;
};

// The threads RunMatmul uses by default: every core.
unsigned MatmulThreads();
// Runs the M N dots on `threads` threads; `done` (if given) counts finished outputs, for a
// progress line. Throws SpecError (the first output's error) and backends::Unavailable.
MatmulOutcome RunMatmul(const ResolvedTrial& dot, const MatmulInput& in, unsigned threads,
                        std::atomic<std::uint64_t>* done = nullptr);

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR
