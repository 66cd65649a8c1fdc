#include "studies/stagnation.hpp"

#include <cmath>

#include "precision/emulated_oracle.hpp"

namespace carrier::studies {

StagnationResult RunStagnation(const StagnationSpec& spec) {
  // The scope gives EmulatedOracleDynamic its format and mode and starts the stochastic stream at
  // (seed, 0); terms are converted with a fixed rne type so that they take no random bits.
  EmulationScope scope(spec.format, spec.rounding, spec.seed);
  using Sum = EmulatedOracleDynamic;
  using Term = EmulatedOracle<DynamicFormatTag, Rounding::kNearestEven>;
  const bool deterministic = spec.rounding != Rounding::kStochastic;

  Sum s = Sum::FromFormatValue(0.0);
  long double exact = 0, compensation = 0;  // Neumaier's running sum of the exact terms
  StagnationResult r;
  for (std::uint64_t k = 1; k <= spec.max_terms; ++k) {
    long double exact_term;
    Term t;
    if (spec.series == Series::kHarmonic) {
      exact_term = 1.0L / static_cast<long double>(k);
      t = Term(exact_term);
    } else {
      exact_term = 1.0L;
      t = Term::FromFormatValue(1.0);
    }
    const long double next = exact + exact_term;
    compensation += std::fabs(exact) >= std::fabs(exact_term) ? (exact - next) + exact_term
                                                              : (exact_term - next) + exact;
    exact = next;

    const Sum previous = s;
    s = s + Sum::FromFormatValue(t.Value());
    const bool unchanged = s.Value() == previous.Value();
    const bool certain = deterministic || t.Value() == 0 || std::isinf(previous.Value());
    r.term = k;
    r.value = s.Value();
    r.exact_partial_sum = exact + compensation;
    if (unchanged && certain) {
      r.stagnated = true;
      break;
    }
  }
  return r;
}

}  // namespace carrier::studies
