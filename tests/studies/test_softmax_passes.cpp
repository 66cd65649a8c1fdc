// Memory accesses of naive, safe and online softmax (studies/softmax_passes.hpp), counted on
// the very loops that are timed. Milakov & Gimelshein 2018 count 3, 4 and 3 accesses per
// element (loads + stores); the online recurrence as printed costs 2 exps per element in its
// first pass, the branching form 1.
#include <algorithm>
#include <catch2/catch.hpp>
#include <iostream>

#include "studies/softmax_passes.hpp"

TEST_CASE("softmax variants make the published number of memory accesses", "[fast][study]") {
  for (std::uint64_t n : {1u, 7u, 1000u}) {
    const auto counts = carrier::studies::CountSoftmaxPasses(n, 42, 4.0);
    REQUIRE(counts.size() == 4);
    for (const auto& c : counts) {
      std::cout << "  n " << n << " " << c.variant << ": loads " << c.loads_per_element
                << " stores " << c.stores_per_element << " exps " << c.exps_per_element
                << " max rel err " << c.max_rel_error << "\n";
      INFO("variant " << c.variant << " n " << n << " seed 42 scale 4");
      const double want_loads = c.variant == "safe" ? 3 : 2;
      CHECK(c.loads_per_element == want_loads);
      CHECK(c.stores_per_element == 1);
      CHECK(c.max_rel_error < 1e-5);
      if (c.variant == "online") CHECK(c.exps_per_element == 3);
      if (c.variant == "safe" || c.variant == "naive") CHECK(c.exps_per_element == 2);
      if (c.variant == "online-branch") CHECK(c.exps_per_element == 2);
    }
  }
}

// The timed variants: the four loops, then simd-safe and simd-online when kernels/simd is
// built; every one computes softmax (checked against fp64) and gets positive times.
TEST_CASE("softmax timing reports every variant with positive times", "[fast][study]") {
  const auto rows = carrier::studies::TimeSoftmax(4096, 3, 1, 4.0);
  REQUIRE((rows.size() == 4 || rows.size() == 6));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    std::cout << "  " << r.variant << " n 4096: min " << r.min_seconds << " s, median "
              << r.median_seconds << " s, max rel err " << r.max_rel_error << "\n";
    INFO("variant " << r.variant << " n 4096 seed 1 scale 4 repeats 3");
    if (i < 4) CHECK(r.variant == carrier::studies::SoftmaxVariants()[i]);
    if (i >= 4) CHECK(r.variant == (i == 4 ? "simd-safe" : "simd-online"));
    CHECK(r.min_seconds > 0);
    CHECK(r.median_seconds >= r.min_seconds);
    CHECK(r.repeats == 3);
    CHECK(r.max_rel_error < 1e-5);
  }
}

// Softmax+TopK (the paper's Sec. 5): unfused safe softmax then TopK reads x three times, writes
// y and reads it back (5 accesses per element); the fused safe form reads x twice, the fused
// online form once; both fused forms store only the K outputs.
TEST_CASE("softmax+topk variants make 5, 2 and 1 accesses per element", "[fast][study]") {
  const std::uint64_t k = 5;
  for (std::uint64_t n : {3u, 1000u}) {
    const auto counts = carrier::studies::CountTopKPasses(n, 42, 4.0, k);
    REQUIRE(counts.size() == 3);
    for (const auto& c : counts) {
      std::cout << "  n " << n << " " << c.variant << ": loads " << c.loads_per_element
                << " stores " << c.stores_per_element << " max rel err " << c.max_rel_error << "\n";
      INFO("variant " << c.variant << " n " << n << " k " << k << " seed 42 scale 4");
      const double kept = static_cast<double>(std::min<std::uint64_t>(k, n)) / n;
      if (c.variant == "safe-topk") {
        CHECK(c.loads_per_element == 4);
        CHECK(c.stores_per_element == 1);
      } else {
        CHECK(c.loads_per_element == (c.variant == "online-topk" ? 1 : 2));
        CHECK(c.stores_per_element == kept);
      }
      CHECK(c.max_rel_error < 1e-5);
    }
  }
}

TEST_CASE("batched softmax and softmax+topk timing cover every row", "[fast][study]") {
  const auto rows = carrier::studies::TimeSoftmax(300, 2, 1, 4.0, 7);
  REQUIRE(rows.size() >= 4);
  for (const auto& r : rows) {
    INFO("variant " << r.variant << " n 300 batch 7 seed 1");
    CHECK(r.batch == 7);
    CHECK(r.max_rel_error < 1e-5);  // every row's outputs checked, not only the first
    CHECK(r.min_seconds > 0);
  }
  const auto topk = carrier::studies::TimeSoftmaxTopK(300, 7, 2, 1, 4.0, 5);
  REQUIRE(topk.size() == 3);
  for (const auto& r : topk) {
    INFO("variant " << r.variant << " n 300 batch 7 k 5 seed 1");
    CHECK(r.batch == 7);
    CHECK(r.max_rel_error < 1e-5);
    CHECK(r.median_seconds >= r.min_seconds);
  }
}
