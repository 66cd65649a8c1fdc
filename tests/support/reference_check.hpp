// tests/support/reference_check.hpp: two certified references compared field for field (the
// rounded doubles and long doubles bit for bit, each MPFR value's precision and value, the
// certificate), shared by the tests of the fast reference forms (test_fast_sum.cpp) and of their
// packed-column forms (test_stored_column.cpp). The caller INFOs how to reproduce.
#pragma once

#include <catch2/catch.hpp>

#include "precision/reference/reference.hpp"
#include "precision/scalar_traits.hpp"
#include "support/test_support.hpp"

namespace carrier::test {

inline void RequireSameReference(const reference::Reference& want,
                                 const reference::Reference& got) {
  REQUIRE(got.op == want.op);
  REQUIRE(got.count == want.count);
  REQUIRE(got.index == want.index);
  REQUIRE(got.as_double.size() == want.as_double.size());
  REQUIRE(got.as_long_double.size() == want.as_long_double.size());
  REQUIRE(got.value.size() == want.value.size());
  for (std::size_t c = 0; c < want.as_double.size(); ++c) {
    INFO("component " << c << " want " << Exact(want.as_double[c]) << " got "
                      << Exact(got.as_double[c]));
    REQUIRE(ScalarTraits<double>::BitEqual(got.as_double[c], want.as_double[c]));
    REQUIRE(ScalarTraits<long double>::BitEqual(got.as_long_double[c], want.as_long_double[c]));
  }
  for (std::size_t c = 0; c < want.value.size(); ++c) {
    const mpfr_srcptr a = got.value[c].get(), b = want.value[c].get();
    REQUIRE(mpfr_get_prec(a) == mpfr_get_prec(b));
    if (mpfr_nan_p(b)) {
      REQUIRE(mpfr_nan_p(a));
    } else {
      REQUIRE(mpfr_equal_p(a, b));
    }
  }
  REQUIRE(got.cert.certified == want.cert.certified);
  REQUIRE(got.cert.correctly_rounded == want.cert.correctly_rounded);
  REQUIRE(got.cert.tier == want.cert.tier);
  REQUIRE(got.cert.precision_bits == want.cert.precision_bits);
  REQUIRE(got.cert.error_bound_log2 == want.cert.error_bound_log2);
  REQUIRE(got.cert.note == want.cert.note);
}

}  // namespace carrier::test
