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
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "precision/attention_model.hpp"

namespace carrier::studies {

struct AttentionDeviationSpec {
  std::vector<std::string> policies;           // precision policy texts (or preset names)
  std::vector<AttentionAlgorithm> algorithms;  // fa2 and / or fa1
  std::vector<std::uint64_t> seq_lens;
  std::vector<std::uint64_t> block_r, block_c;
  bool square_only = false;  // only Br == Bc pairs
  std::uint64_t head_dim = 64;
  std::uint64_t trials = 10;
  std::uint64_t seed = 1;
  std::string dist = "normal";
};

struct AttentionDeviationRow {
  std::string policy;  // as given
  std::string algorithm;
  std::uint64_t n = 0, d = 0, br = 0, bc = 0, trial = 0, seed = 0;
  Deviation fa, ba, fa_ba;
};

// Throws std::invalid_argument (one line) for a bad policy or shape, or inputs a policy's
// matrix unit does not take. Policies with mma= run their products through core/mma.hpp.
std::vector<AttentionDeviationRow> RunAttentionDeviation(const AttentionDeviationSpec& spec,
                                                         bool progress);

}  // namespace carrier::studies
