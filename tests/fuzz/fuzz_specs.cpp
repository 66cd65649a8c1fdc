// Fuzz target: the format and precision specs of --dtype/--acc and sweep configs
// (precision/format.hpp: fp8e4m3 ... fp64, custom:p=..,emin=..,emax=..[,flags]), rounding names
// (precision/rounding.hpp), input generator specs (experiments/inputs/generators.hpp)
// and precision policies (precision/precision_policy.hpp). The first byte picks the parser
// (mod 4: format, rounding, generator, policy). Properties: bad text is std::invalid_argument and
// nothing else; an accepted format validates, its canonical name parses back to the same Format,
// and rounding into it is idempotent and lands on finite values no larger than MaxFinite (or on
// inf/NaN); an accepted rounding name prints back to itself; an accepted generator re-parses
// from its own text to the same fields and generates n finite values.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "fuzz_check.hpp"
#include "inputs/generators.hpp"
#include "precision/format.hpp"
#include "precision/precision_policy.hpp"
#include "precision/rounding.hpp"

namespace {

void CheckFormat(const std::string& text) {
  carrier::Format f;
  try {
    f = carrier::ParseFormat(text);
  } catch (const std::invalid_argument&) {
    return;
  }
  try {
    f.Validate();
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(false, "'" + text + "' parsed to an invalid format: " + e.what());
  }
  carrier::Format again;
  try {
    again = carrier::ParseFormat(f.name);
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(false, "'" + text + "' named '" + f.name + "', which does not parse: " + e.what());
  }
  FUZZ_CHECK(again == f, "'" + text + "' -> '" + f.name + "' parses to another format");
  const double probes[] = {0.0,      -0.0,     1.0,  -1.5,          3.14159,       1e-300,
                           4.9e-324, 1e300,    -7e5, f.MaxFinite(), f.MinNormal(), f.MinSubnormal(),
                           INFINITY, -INFINITY};
  for (double x : probes) {
    for (carrier::Rounding r : carrier::kDeterministicRoundings) {
      const double y = carrier::RoundToFormat(x, f, r);
      const double z = carrier::RoundToFormat(y, f, r);
      const std::string where =
          f.name + " " + std::string(carrier::RoundingName(r)) + " of " + std::to_string(x);
      FUZZ_CHECK(std::isnan(y) || y == z, where + ": rounding is not idempotent");
      FUZZ_CHECK(!std::isfinite(y) || std::fabs(y) <= f.MaxFinite(), where + ": above max finite");
      FUZZ_CHECK(std::isnan(y) == std::isnan(x) || !f.has_inf || std::isnan(x),
                 where + ": NaN from a non-NaN");
    }
  }
}

void CheckRounding(const std::string& text) {
  carrier::Rounding r;
  try {
    r = carrier::ParseRounding(text);
  } catch (const std::invalid_argument&) {
    return;
  }
  FUZZ_CHECK(carrier::RoundingName(r) == text,
             "'" + text + "' prints as " + std::string(carrier::RoundingName(r)));
}

void CheckGenerator(const std::string& text) {
  carrier::inputs::GeneratorSpec g;
  try {
    g = carrier::inputs::ParseGenerator(text);
  } catch (const std::invalid_argument&) {
    return;
  }
  carrier::inputs::GeneratorSpec again;
  try {
    again = carrier::inputs::ParseGenerator(g.Text());
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(false, "'" + text + "' -> '" + g.Text() + "' does not parse: " + e.what());
  }
  FUZZ_CHECK(again.dist == g.dist && again.order == g.order &&
                 (again.cond == g.cond || (std::isnan(again.cond) && std::isnan(g.cond))) &&
                 (again.offset == g.offset || (std::isnan(again.offset) && std::isnan(g.offset))),
             "'" + text + "' re-parses to other fields");
  for (std::uint64_t n : {1u, 2u, 7u, 64u}) {
    const auto v = carrier::inputs::Generate(g, n, 12345);
    FUZZ_CHECK(v.size() == n, "'" + text + "' made " + std::to_string(v.size()) +
                                  " values for n = " + std::to_string(n));
    for (double x : v) FUZZ_CHECK(std::isfinite(x), "'" + text + "' made a non-finite value");
  }
}

// A precision policy (precision/precision_policy.hpp: role=FORMAT[@MODE] items, presets, mma=,
// pscale=): bad text is invalid_argument; an accepted policy prints (ToString) to text that
// parses back to the same policy.
void CheckPrecision(const std::string& text) {
  carrier::PrecisionPolicy p;
  try {
    p = carrier::ParsePrecisionPolicy(text);
  } catch (const std::invalid_argument&) {
    return;
  }
  const std::string printed = carrier::ToString(p);
  carrier::PrecisionPolicy again;
  try {
    again = carrier::ParsePrecisionPolicy(printed);
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(false,
               "'" + text + "' printed as '" + printed + "', which does not parse: " + e.what());
  }
  FUZZ_CHECK(again == p, "'" + text + "' printed as '" + printed + "', a different policy");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      CheckFormat(text);
      break;
    case 1:
      CheckRounding(text);
      break;
    case 3:
      CheckPrecision(text);
      break;
    default:
      CheckGenerator(text);
      break;
  }
  return 0;
}
