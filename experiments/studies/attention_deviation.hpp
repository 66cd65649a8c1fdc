// experiments/studies/attention_deviation.hpp: Golden et al. 2024's numeric-deviation
// experiment ("Is Flash Attention Stable?", arXiv 2405.02803) over precision policies,
// algorithms, sequence lengths and tile shapes.
//
// Contract. For every trial t < trials of every n, one head's q, k, v (n x d each) are drawn
// from `dist` (inputs::Generate, seeds seed + 3t, + 1, + 2; independent of the policy) and, per
// policy, stored in its `in` format. Golden = precision/attention_model.hpp's kBaseline under
// Fp64Policy on the same stored inputs (the paper's "golden value": baseline attention in
// fp64). Per (policy, n, trial) the baseline under the policy (BA) is computed once; per
// (fa algorithm, Br, Bc) the flash algorithm (FA). Each row reports |FA - golden|,
// |BA - golden| and |FA - BA| as max / mean / population standard deviation over all n x d
// outputs. Nothing is rounded here: the arithmetic is the model's.
// Policies are read with ParseAttentionArithmetic (a precision policy, optionally `ew=FORMAT`,
// or `torch-FORMAT`). `baselines` name the arithmetic of BA: one text for every policy, or one
// per policy in order (a real kernel's FA against the framework's eager attention, or a
// re-implemented FA against the framework's own attention); empty: BA runs under the policy
// itself (without its elementwise format, which the baseline does not use).
// Tiles: `tiles` (Br, Bc) pairs when not empty, else every Br x Bc (Br == Bc only when
// square_only). Br changes no bit of the model (attention_model.hpp; tested), so FA is
// computed once per (algorithm, Bc) and reported under each Br asked for.
// jobs: the (n, trial) inputs are spread over that many threads; each input's rows are kept
// in its slot and the slots joined in (n, trial) order, so the rows do not depend on jobs.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "precision/attention_model.hpp"

namespace carrier::studies {

struct AttentionDeviationSpec {
  std::vector<std::string> policies;           // precision policy texts (or preset names)
  std::vector<AttentionAlgorithm> algorithms;  // fa2 and / or fa1
  std::vector<std::uint64_t> seq_lens;
  std::vector<std::uint64_t> block_r, block_c;
  bool square_only = false;                                    // only Br == Bc pairs
  std::vector<std::pair<std::uint64_t, std::uint64_t>> tiles;  // (Br, Bc); overrides the above
  std::vector<std::string> baselines;  // BA's arithmetic: none, one, or one per policy
  std::uint64_t head_dim = 64;
  std::uint64_t trials = 10;
  std::uint64_t seed = 1;
  std::string dist = "normal";
  unsigned jobs = 1;
};

struct AttentionDeviationRow {
  std::string policy;    // as given
  std::string baseline;  // BA's arithmetic as given ("" when the policy's own)
  std::string algorithm;
  std::uint64_t n = 0, d = 0, br = 0, bc = 0, trial = 0, seed = 0;
  Deviation fa, ba, fa_ba;
};

// Throws std::invalid_argument (one line) for a bad policy or shape, a baseline count other
// than 0, 1 or the number of policies, a baseline storing its inputs in another format than
// its policy, or inputs a policy's
// matrix unit does not take (the first such error in (n, trial) order, whatever jobs is).
// Policies with mma= run their products through core/mma.hpp. progress: on a terminal, a
// line on stderr counting the inputs done.
std::vector<AttentionDeviationRow> RunAttentionDeviation(const AttentionDeviationSpec& spec,
                                                         bool progress);

}  // namespace carrier::studies
