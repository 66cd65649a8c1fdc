// Memory accesses of naive, safe and online softmax (studies/softmax_passes.hpp), counted on
// the very loops that are timed. Milakov & Gimelshein 2018 count 3, 4 and 3 accesses per
// element (loads + stores); the online recurrence as printed costs 2 exps per element in its
// first pass, the branching form 1.
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
