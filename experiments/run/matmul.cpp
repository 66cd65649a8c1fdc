// experiments/run/matmul.cpp: the matrix product as M N dot trials (run/matmul.hpp).
#include "run/matmul.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

#include "precision/block_scaled.hpp"
#include "run/memory.hpp"

namespace carrier::run {

namespace {

std::string ShapeText(const MatmulShape& s) {
  return std::to_string(s.m) + " x " + std::to_string(s.n) + " x " + std::to_string(s.k);
}

// Bytes per stored value of the storage format (precision/stored_column.hpp's layouts).
std::uint64_t StoredBytes(const Format& f) {
  switch (StoredColumn::LayoutFor(&f)) {
    case StoredColumn::Layout::kCode8:
      return 1;
    case StoredColumn::Layout::kCode16:
      return 2;
    case StoredColumn::Layout::kFloat:
      return 4;
    case StoredColumn::Layout::kDouble:
      break;
  }
  return 8;
}

// Block-scaled storage also keeps each value's element and (at most) one scale (ScaledOperand).
std::uint64_t ScaledBytes(const Format& f) { return LooksBlockScaled(f.name) ? 16 : 0; }

// What RunMatmul keeps per output: the result and the reference (long double, 16 bytes each),
// five doubles (errors, ratio, two times) and two flags.
constexpr std::uint64_t kOutputBytes = 16 + 16 + 5 * 8 + 2;

}  // namespace

void CheckMatmulShape(const MatmulShape& s) {
  for (const auto& [name, v] : {std::pair{"m", s.m}, std::pair{"n", s.n}, std::pair{"k", s.k}}) {
    if (v == 0) throw SpecError(std::string("matmul: ") + name + " must be at least 1");
    if (v > kMaxTrialN) throw SpecError(std::string("matmul: ") + name + " must be at most 2^30");
  }
  // M N outputs each hold a result and a reference (and an error); M K and K N inputs.
  const long double outputs = static_cast<long double>(s.m) * s.n;
  if (outputs > static_cast<long double>(kMaxTrialN))
    throw SpecError("matmul " + ShapeText(s) + ": M N = " + std::to_string(s.m * s.n) +
                    " outputs, more than 2^30");
}

std::uint64_t MatmulBytes(const ResolvedTrial& dot, const MatmulShape& s, unsigned threads) {
  const std::uint64_t inputs = s.m * s.k + s.k * s.n;
  // The raw doubles of A and B while they are made, the packed columns, kOutputBytes per
  // output, and per thread one pair of columns decoded plus the replay's copies (8 bytes each
  // side, twice).
  return inputs * (8 + StoredBytes(dot.storage) + ScaledBytes(dot.storage)) +
         kOutputBytes * s.m * s.n + std::uint64_t{threads} * 64 * s.k;
}

void CheckMatmulMemory(const ResolvedTrial& dot, const MatmulShape& s, unsigned threads) {
  const std::uint64_t avail = AvailableBytes();
  if (avail == 0) return;
  // In long double: M K + K N may pass 2^64 bytes before the shape check's limits do.
  const long double need_ld =
      (static_cast<long double>(s.m) * s.k + static_cast<long double>(s.k) * s.n) *
          (8 + StoredBytes(dot.storage) + ScaledBytes(dot.storage)) +
      static_cast<long double>(kOutputBytes) * s.m * s.n + 64.0L * threads * s.k;
  if (need_ld <= avail) return;
  char text[96];
  std::snprintf(text, sizeof text, " needs about %.1f GiB but only %.1f GiB are available",
                static_cast<double>(need_ld) / (1u << 30), static_cast<double>(avail) / (1u << 30));
  throw SpecError("matmul " + ShapeText(s) + text);
}

MatmulInput MakeMatmulInputFromValues(const ResolvedTrial& dot, std::span<const double> a,
                                      std::span<const double> b, const MatmulShape& s,
                                      std::string text) {
  CheckMatmulShape(s);
  if (a.size() != s.m * s.k || b.size() != s.k * s.n)
    throw SpecError("matmul " + ShapeText(s) + " takes " + std::to_string(s.m * s.k) +
                    " values of A and " + std::to_string(s.k * s.n) + " of B, not " +
                    std::to_string(a.size()) + " and " + std::to_string(b.size()));
  MatmulInput in;
  in.shape = s;
  in.text = std::move(text);
  in.a_rows.reserve(s.m);
  in.b_cols.reserve(s.n);
  // Row r of A and column r of B go through dot's own storage rounding as one pair (columns a
  // and b); past the shorter side a row or column is paired with itself and only its column a
  // (or b) kept, its overflows counted once.
  const std::uint64_t rows = std::max(s.m, s.n);
  std::vector<double> row, col;
  for (std::uint64_t r = 0; r < rows; ++r) {
    row.clear();
    col.clear();
    if (r < s.m) row.assign(a.begin() + r * s.k, a.begin() + (r + 1) * s.k);
    if (r < s.n)
      for (std::uint64_t k = 0; k < s.k; ++k) col.push_back(b[k * s.n + r]);
    const bool both = r < s.m && r < s.n;
    if (r >= s.m) row = col;
    if (r >= s.n) col = row;
    TrialInput p = MakeInputFromValues(dot, row, col, "");
    in.storage_overflows += both ? p.storage_overflows : p.storage_overflows / 2;
    if (r < s.m) in.a_rows.push_back(std::move(p.column));
    if (r < s.n) in.b_cols.push_back(std::move(p.column_b));
    if (p.scaled_a && r < s.m) in.a_scaled.push_back(std::move(p.scaled_a));
    if (p.scaled_b && r < s.n) in.b_scaled.push_back(std::move(p.scaled_b));
  }
  return in;
}

MatmulInput MakeMatmulInput(const ResolvedTrial& dot, const inputs::GeneratorSpec& gen,
                            const MatmulShape& s, std::uint64_t seed) {
  CheckMatmulShape(s);
  const std::vector<double> a = inputs::Generate(gen, s.m * s.k, seed);
  const std::vector<double> b = inputs::Generate(gen, s.k * s.n, seed + 1);
  return MakeMatmulInputFromValues(
      dot, a, b, s,
      gen.Text() + " seeds " + std::to_string(seed) + " (A), " + std::to_string(seed + 1) + " (B)");
}

TrialInput MatmulPair(const MatmulInput& in, std::uint64_t i, std::uint64_t j) {
  TrialInput p;
  p.column = in.a_rows.at(i);
  p.column_b = in.b_cols.at(j);
  if (!in.a_scaled.empty()) p.scaled_a = in.a_scaled.at(i);
  if (!in.b_scaled.empty()) p.scaled_b = in.b_scaled.at(j);
  p.n = in.shape.k;
  p.id = 0;  // no kept conversion: every output is a new pair
  p.text = "row " + std::to_string(i) + " of A, column " + std::to_string(j) + " of B";
  return p;
}

unsigned MatmulThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

MatmulOutcome RunMatmul(const ResolvedTrial& dot, const MatmulInput& in, unsigned threads,
                        std::atomic<std::uint64_t>* done) {
  const auto t0 = std::chrono::steady_clock::now();
  const MatmulShape& s = in.shape;
  const std::uint64_t outputs = s.m * s.n;
  MatmulOutcome out;
  out.shape = s;
  out.c.assign(outputs, 0);
  out.reference.assign(outputs, 0);
  std::vector<double> rel(outputs, NAN), abs(outputs, NAN), ratio(outputs, NAN);
  std::vector<char> bounded(outputs, 0), certified(outputs, 0);
  std::vector<double> ref_seconds(outputs, 0), seconds(outputs, 0);
  TrialOutcome first;  // output 0's tree columns (every output has the same K, so the same tree)
  reference::Reference first_ref;
  std::string first_tier;
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  std::mutex mutex;
  auto work = [&] {
    try {
      for (std::uint64_t at; !stop && (at = next.fetch_add(1)) < outputs;) {
        const TrialInput pair = MatmulPair(in, at / s.n, at % s.n);
        const SharedReference ref = ComputeReference(dot, pair);
        TrialOutcome o = RunTrial(dot, pair, ref);
        out.c[at] = o.components.at(o.main);
        out.reference[at] = ref.ref.as_long_double.at(o.main);
        abs[at] = o.abs_error;
        rel[at] = o.rel_error;
        bounded[at] = o.has_bound;
        ratio[at] = o.error_to_bound;
        certified[at] = ref.ref.cert.certified;
        ref_seconds[at] = ref.seconds;
        seconds[at] = o.seconds;
        if (at == 0) {
          std::lock_guard<std::mutex> lock(mutex);
          first = std::move(o);
          first_ref = ref.ref;
          first_tier = ref.tier;
        }
        if (done) done->fetch_add(1, std::memory_order_relaxed);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!error) error = std::current_exception();
      stop = true;
    }
    ReleaseThreadCaches();
  };
  threads = static_cast<unsigned>(std::clamp<std::uint64_t>(threads, 1, outputs));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);

  out.threads = threads;
  out.schedule_used = first.schedule_used;
  out.tree_hash = first.tree_hash;
  out.tree_max_depth = first.tree_max_depth;
  out.tree_mean_depth = first.tree_mean_depth;
  out.u = first.u;
  out.reference_tier = first_tier;
  out.reference_bits = first_ref.cert.precision_bits;
  out.has_bound = true;
  long double diff2 = 0, ref2 = 0, max_diff = 0, max_ref = 0;
  std::vector<double> finite_rel;
  finite_rel.reserve(outputs);
  for (std::uint64_t i = 0; i < outputs; ++i) {
    out.reference_seconds += ref_seconds[i];
    out.seconds += seconds[i];
    if (!certified[i]) {
      if (out.certified)
        out.reference_note = "output " + std::to_string(i / s.n) + "," + std::to_string(i % s.n) +
                             ": the reference is not certified";
      out.certified = false;
    }
    out.has_bound = out.has_bound && bounded[i];
    if (std::isnan(out.c[i]) || std::isnan(out.reference[i]) || std::isnan(rel[i])) {
      ++out.nan_outputs;
      continue;
    }
    if (out.reference[i] == 0) ++out.zero_reference_outputs;
    const long double d = out.c[i] - out.reference[i];
    diff2 += d * d;
    ref2 += out.reference[i] * out.reference[i];
    max_diff = std::max(max_diff, std::fabs(d));
    max_ref = std::max(max_ref, std::fabs(out.reference[i]));
    out.max_abs_error = std::max(out.max_abs_error, abs[i]);
    out.max_rel_error = std::max(out.max_rel_error, rel[i]);
    finite_rel.push_back(rel[i]);
    if (!std::isnan(ratio[i]))
      out.max_error_to_bound = std::isnan(out.max_error_to_bound)
                                   ? ratio[i]
                                   : std::max(out.max_error_to_bound, ratio[i]);
  }
  if (!out.has_bound) out.max_error_to_bound = NAN;
  if (finite_rel.empty()) {
    out.max_abs_error = out.max_rel_error = out.median_rel_error = NAN;
  } else {
    const std::size_t mid = finite_rel.size() / 2;
    std::nth_element(finite_rel.begin(), finite_rel.begin() + mid, finite_rel.end());
    out.median_rel_error = finite_rel[mid];
    if (finite_rel.size() % 2 == 0) {  // the mean of the two middle values
      const double below = *std::max_element(finite_rel.begin(), finite_rel.begin() + mid);
      out.median_rel_error = (below + finite_rel[mid]) / 2;
    }
  }
  // A zero C: the normwise errors are 0 when C^ is zero too, else inf (as componentwise).
  out.normwise_fro_error = static_cast<double>(ref2 > 0 ? std::sqrt(diff2) / std::sqrt(ref2)
                                                        : (diff2 > 0 ? INFINITY : 0));
  out.normwise_max_error =
      static_cast<double>(max_ref > 0 ? max_diff / max_ref : (max_diff > 0 ? INFINITY : 0));
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR
