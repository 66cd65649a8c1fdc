// experiments/studies/softmax_passes.hpp: Milakov and Gimelshein, "Online normalizer
// calculation for softmax" (arXiv 1805.02867, 2018): memory accesses of naive, safe and online
// softmax, and the speed-up of online over safe softmax on this CPU.
//
// Contract. The variants are plain fp32 loops (libm expf, the project's flags: no fast-math, no
// FMA contraction), written once as templates over a memory policy, so the counted and the
// timed code are the same source:
//   naive         d = sum_j e^{x_j}; y_i = e^{x_i} / d                     (2 passes over x)
//   safe          m = max_j x_j; d = sum_j e^{x_j-m}; y_i = e^{x_i-m} / d   (3 passes)
//   online        the paper's Algorithm 3: m_j = max(m_{j-1}, x_j),
//                 d_j = d_{j-1} e^{m_{j-1}-m_j} + e^{x_j-m_j}; then y_i = e^{x_i-m_V} / d_V
//   online-branch the same recurrence with one exp per element: when x_j > m the old d is
//                 rescaled (d e^{m-x_j} + 1), else d += e^{x_j-m}
// CountSoftmaxPasses runs each variant through a counting policy and reports loads, stores and
// exp calls per element (exact integers for any n >= 1; the paper's counts are 3, 4 and 3
// accesses) and the largest relative difference of its outputs from an fp64 softmax.
// TimeSoftmax runs the variants on the same n inputs, interleaved (variant order rotated each
// repeat so that drift hits all alike; one untimed warm-up run each), and reports min and
// median seconds per variant. When the SIMD kernels are built (kernels/simd, Highway) it also
// times simd-safe (their two-pass log-sum-exp, then the output pass: 4 accesses per element
// by construction) and simd-online (the OnlineSoftmax carrier in the native SIMD schedule, then
// the output pass: 3), both with PortableExp instead of libm. With batch > 1 the input is
// `batch` rows of n values each (one allocation of batch * n, the paper's batched benchmark
// shape) and every variant runs row by row; max_rel_error is the worst over the rows.
//
// Softmax + TopK (the paper's Sec. 5, its 5x; the authors' benchmark, NVIDIA/online-softmax,
// has the same three): the K largest softmax outputs of each row and their indices, three ways,
// all fp32 loops over the same memory policies:
//   safe-topk     safe softmax writes all of y (4 accesses per element), then a TopK pass reads
//                 y (1 more): 5 accesses per element;
//   safe-topk-fused  the maximum pass, then one pass for d and the K largest x (2 accesses);
//   online-topk   fused: one pass over x keeps the running maximum m, the normalizer d (the
//                 one-exp form of online-branch) and the K largest x_i; then only the K outputs
//                 e^{x_i - m} / d are written: 1 access per element (plus K stores per row).
// Ties keep the lower index. CountTopKPasses counts loads and stores per element on n values;
// TimeSoftmaxTopK times the three side by side as TimeSoftmax does (speed-up of online-topk over
// safe-topk is the paper's comparison). max_rel_error compares the K values with the K
// largest components of an fp64 softmax.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace carrier::studies {

const std::vector<std::string>& SoftmaxVariants();

struct SoftmaxPassCount {
  std::string variant;
  double loads_per_element = 0;
  double stores_per_element = 0;
  double exps_per_element = 0;
  double max_rel_error = 0;  // against softmax in fp64 on the same fp32 inputs
};

// Inputs: n values of N(0, 1) * scale (seed), rounded to fp32.
std::vector<SoftmaxPassCount> CountSoftmaxPasses(std::uint64_t n, std::uint64_t seed, double scale);

struct SoftmaxTiming {
  std::string variant;
  std::uint64_t n = 0;      // the row length (the paper's V)
  std::uint64_t batch = 1;  // rows
  std::uint64_t repeats = 0;
  double min_seconds = 0;
  double median_seconds = 0;
  double max_rel_error = 0;  // of this variant's outputs against softmax in fp64
};

std::vector<SoftmaxTiming> TimeSoftmax(std::uint64_t n, std::uint64_t repeats, std::uint64_t seed,
                                       double scale, std::uint64_t batch = 1);

const std::vector<std::string>& TopKVariants();  // safe-topk, safe-topk-fused, online-topk

std::vector<SoftmaxPassCount> CountTopKPasses(std::uint64_t n, std::uint64_t seed, double scale,
                                              std::uint64_t k);

std::vector<SoftmaxTiming> TimeSoftmaxTopK(std::uint64_t n, std::uint64_t batch,
                                           std::uint64_t repeats, std::uint64_t seed, double scale,
                                           std::uint64_t k);

}  // namespace carrier::studies
