#include "studies/attention_deviation.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "inputs/generators.hpp"

namespace carrier::studies {

std::vector<AttentionDeviationRow> RunAttentionDeviation(const AttentionDeviationSpec& spec,
                                                         bool progress) {
  std::vector<AttentionArithmetic> policies;
  for (const auto& text : spec.policies) {
    policies.push_back(ParseAttentionArithmetic(text));
  }
  if (spec.baselines.size() > 1 && spec.baselines.size() != spec.policies.size()) {
    throw std::invalid_argument("attention deviation: " + std::to_string(spec.baselines.size()) +
                                " baselines for " + std::to_string(spec.policies.size()) +
                                " policies (give one, or one per policy)");
  }
  std::vector<AttentionArithmetic> baselines;
  for (const auto& text : spec.baselines) baselines.push_back(ParseAttentionArithmetic(text));
  // The baseline of policy i and its text ("" when the policy's own).
  auto baseline_of = [&](std::size_t i) -> std::pair<const AttentionArithmetic*, std::string> {
    if (baselines.empty()) return {nullptr, ""};
    const std::size_t j = baselines.size() == 1 ? 0 : i;
    return {&baselines[j], spec.baselines[j]};
  };
  // FA and BA must see the same inputs: refused before any input is generated.
  for (std::size_t pi = 0; pi < policies.size(); ++pi) {
    const auto baseline = baseline_of(pi).first;
    const auto& in = policies[pi].policy.in.format;
    if (baseline && baseline->policy.in.format != in) {
      throw std::invalid_argument("attention deviation: the baseline stores its inputs in " +
                                  baseline->policy.in.format.name + ", policy '" +
                                  spec.policies[pi] + "' in " + in.name +
                                  " (FA and BA must see the same inputs)");
    }
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> tiles = spec.tiles;
  if (tiles.empty()) {
    for (std::uint64_t br : spec.block_r) {
      for (std::uint64_t bc : spec.block_c) {
        if (!spec.square_only || br == bc) tiles.emplace_back(br, bc);
      }
    }
  }
  const inputs::GeneratorSpec gen = inputs::ParseGenerator(spec.dist);
  const std::size_t d = spec.head_dim;
  // The rows of one (n, trial) input: golden, then per policy BA and the FA of every cell.
  auto run_input = [&](std::uint64_t n, std::uint64_t t) {
    std::vector<AttentionDeviationRow> rows;
    const std::uint64_t seed = spec.seed + 3 * t;
    const auto raw_q = inputs::Generate(gen, n * d, seed);
    const auto raw_k = inputs::Generate(gen, n * d, seed + 1);
    const auto raw_v = inputs::Generate(gen, n * d, seed + 2);
    for (std::size_t pi = 0; pi < policies.size(); ++pi) {
      const PrecisionPolicy& pol = policies[pi].policy;
      const auto q = StoreAttentionInputs(raw_q, pol.in.format);
      const auto k = StoreAttentionInputs(raw_k, pol.in.format);
      const auto v = StoreAttentionInputs(raw_v, pol.in.format);
      AttentionModelSpec ms;
      ms.seq_len = n;
      ms.head_dim = d;
      ms.sr_seed = seed;
      ms.algorithm = AttentionAlgorithm::kBaseline;
      ms.policy = Fp64Policy();
      const auto golden = AttentionModel(q, k, v, ms);
      const auto [baseline, baseline_text] = baseline_of(pi);
      ms.policy = baseline ? baseline->policy : pol;
      const auto ba = AttentionModel(q, k, v, ms);
      const Deviation ba_dev = MeasureDeviation(ba, golden);
      ms.policy = pol;
      ms.elementwise = policies[pi].elementwise;
      for (AttentionAlgorithm a : spec.algorithms) {
        // Br changes no bit: one FA per Bc, reported under every Br that asks for it.
        std::map<std::uint64_t, std::vector<double>> by_bc;
        for (const auto& [br, bc] : tiles) {
          auto it = by_bc.find(bc);
          if (it == by_bc.end()) {
            ms.algorithm = a;
            ms.block_r = br;
            ms.block_c = bc;
            it = by_bc.emplace(bc, AttentionModel(q, k, v, ms)).first;
          }
          const std::vector<double>& fa = it->second;
          AttentionDeviationRow r;
          r.policy = spec.policies[pi];
          r.baseline = baseline_text;
          r.algorithm = AttentionAlgorithmName(a);
          r.n = n;
          r.d = d;
          r.br = br;
          r.bc = bc;
          r.trial = t;
          r.seed = seed;
          r.fa = MeasureDeviation(fa, golden);
          r.ba = ba_dev;
          r.fa_ba = MeasureDeviation(fa, ba);
          rows.push_back(r);
        }
      }
    }
    return rows;
  };
  const std::size_t total = spec.seq_lens.size() * spec.trials;
  std::vector<std::vector<AttentionDeviationRow>> slots(total);
  std::vector<std::exception_ptr> errors(total);
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex print;
  const bool tty = progress && isatty(STDERR_FILENO);
  const auto start = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (std::size_t i = next.fetch_add(1); i < total; i = next.fetch_add(1)) {
      try {
        slots[i] = run_input(spec.seq_lens[i / spec.trials], i % spec.trials);
      } catch (...) {
        errors[i] = std::current_exception();
      }
      const std::size_t finished = done.fetch_add(1) + 1;
      if (tty) {
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const std::lock_guard<std::mutex> lock(print);
        std::fprintf(stderr, "\rattention-deviation: %zu/%zu inputs, %.0f s", finished, total, s);
        if (finished < total)
          std::fprintf(stderr, " (about %.0f s left)",
                       s / static_cast<double>(finished) * static_cast<double>(total - finished));
        std::fprintf(stderr, "    ");
      }
    }
  };
  const unsigned threads =
      static_cast<unsigned>(std::min<std::size_t>(std::max(1u, spec.jobs), total));
  std::vector<std::thread> pool;
  for (unsigned j = 1; j < threads; ++j) pool.emplace_back(worker);
  worker();
  for (std::thread& th : pool) th.join();
  if (tty) std::fprintf(stderr, "\n");
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  std::vector<AttentionDeviationRow> rows;
  for (auto& slot : slots) rows.insert(rows.end(), slot.begin(), slot.end());
  return rows;
}

}  // namespace carrier::studies
