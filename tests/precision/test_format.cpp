// Format descriptors against hand-written constants, and the text forms of formats and rounding
// modes: round trips and one-line rejections.
#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>

#include "precision/format.hpp"
#include "precision/rounding.hpp"
#include "support/test_support.hpp"

namespace carrier {
namespace {

struct Expected {
  const char* name;
  double u, max_finite, min_normal, min_subnormal;
};

// Written from the format specifications, not from the accessors' formulas.
const Expected kExpected[] = {
    {"fp8e4m3", 0.0625, 448.0, 0.015625, 0.001953125},
    {"fp8e4m3sat", 0.0625, 448.0, 0.015625, 0.001953125},
    {"fp8e5m2", 0.125, 57344.0, 6.103515625e-05, 1.52587890625e-05},
    {"fp16", 0x1p-11, 65504.0, 6.103515625e-05, 5.9604644775390625e-08},
    {"bf16", 0x1p-8, 0x1.fep127, 0x1p-126, 0x1p-133},
    {"tf32", 0x1p-11, 0x1.ffcp127, 0x1p-126, 0x1p-136},
    {"fp32", 0x1p-24, FLT_MAX, FLT_MIN, 0x1p-149},
    {"fp64", 0x1p-53, DBL_MAX, DBL_MIN, 0x1p-1074},
};

TEST_CASE("predefined formats have the published constants", "[fast]") {
  REQUIRE(PredefinedFormats().size() == std::size(kExpected));
  for (const Expected& e : kExpected) {
    const Format f = ParseFormat(e.name);
    INFO("format " << e.name);
    CHECK(f.name == e.name);
    CHECK(f.UnitRoundoff() == e.u);
    CHECK(f.MaxFinite() == e.max_finite);
    CHECK(f.MinNormal() == e.min_normal);
    CHECK(f.MinSubnormal() == e.min_subnormal);
    CHECK(f.LogMaxFinite() == Approx(std::log(e.max_finite)).epsilon(1e-15));
    CHECK_NOTHROW(f.Validate());
  }
  // Log of the overflow threshold max + ulp/2, checked where it is a double.
  CHECK(Fp16().OverflowThreshold() == 65520.0);
  CHECK(Fp16().LogOverflowThreshold() == Approx(std::log(65520.0)).epsilon(1e-15));
  CHECK(Fp8E4M3().OverflowThreshold() == 464.0);
  CHECK(Fp8E5M2().OverflowThreshold() == 61440.0);
  CHECK(BF16().OverflowThreshold() == 0x1.ffp127);
  // fp64: ln(2^1024 (1 - 2^-54)), which no double sum can form.
  CHECK(Fp64().LogOverflowThreshold() == Approx(1024 * std::log(2.0)).epsilon(1e-15));
  CHECK(Fp64().LogMaxFinite() == Approx(std::log(DBL_MAX)).epsilon(1e-15));
}

TEST_CASE("OCP fp8 e4m3 has no inf and one NaN pattern", "[fast]") {
  const Format f = Fp8E4M3();
  CHECK_FALSE(f.has_inf);
  CHECK(f.has_nan);
  CHECK(f.top_significand_is_nan);
  CHECK_FALSE(f.saturate);
  CHECK(Fp8E4M3Sat().saturate);
  CHECK(Fp8E5M2().has_inf);
  // 480 would be the all-ones significand at emax = 8 in an IEEE-style layout.
  CHECK(f.MaxFinite() == 480.0 - 32.0);
}

TEST_CASE("format names round-trip and custom formats parse", "[fast]") {
  for (const Format& f : PredefinedFormats()) CHECK(ParseFormat(f.name) == f);

  const Format h = ParseFormat("custom:p=11,emin=-14,emax=15");
  CHECK(h.precision == 11);
  CHECK(h.emin == -14);
  CHECK(h.emax == 15);
  CHECK(h.MaxFinite() == 65504.0);
  CHECK(h.name == "custom:p=11,emin=-14,emax=15");

  // Keys in any order; the name is canonical and parses back to the same format.
  const Format c = ParseFormat("custom:saturate=1,emax=8,inf=0,topnan=1,p=4,emin=-6");
  CHECK(c.name == "custom:p=4,emin=-6,emax=8,inf=0,saturate=1,topnan=1");
  CHECK(ParseFormat(c.name) == c);
  CHECK(c.MaxFinite() == 448.0);
  CHECK(c.saturate);

  const Format ftz = ParseFormat("custom:p=5,emin=-3,emax=4,subnormals=0");
  CHECK_FALSE(ftz.subnormals);
  CHECK(ftz.MinSubnormal() == ftz.MinNormal());
  CHECK(ParseFormat(ftz.name) == ftz);
}

// The message must be one line, name the offending part and list what is allowed.
void CheckFormatRejected(const std::string& text, const std::string& bad_part,
                         const std::string& allowed) {
  INFO("text: " << text);
  try {
    ParseFormat(text);
    FAIL("accepted: " << text);
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    INFO("message: " << msg);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.find(bad_part) != std::string::npos);
    CHECK(msg.find(allowed) != std::string::npos);
  }
}

TEST_CASE("bad format text is rejected with a one-line message", "[fast]") {
  CheckFormatRejected("fp9", "fp9", "fp8e4m3, fp8e4m3sat, fp8e5m2, fp16, bf16, tf32, fp32, fp64");
  CheckFormatRejected("", "format ''", "custom:p=P,emin=E,emax=E");
  CheckFormatRejected("FP16", "FP16", "fp16");
  CheckFormatRejected("custom:", "custom:", "custom:p=P,emin=E,emax=E");
  CheckFormatRejected("custom:p=11,emin=-14", "missing emax", "custom:p=P,emin=E,emax=E");
  CheckFormatRejected("custom:p=11,emin=-14,emax=15,q=3", "unknown key 'q'",
                      "p, emin, emax, subnormals, inf, saturate, topnan");
  CheckFormatRejected("custom:p=x,emin=-14,emax=15", "'p=x'", "not an integer");
  CheckFormatRejected("custom:p=11,emin=-14,emax=15,", "''", "key=value");
  CheckFormatRejected("custom:p=11,p=12,emin=-14,emax=15", "'p' given twice", "twice");
  CheckFormatRejected("custom:p=99,emin=-14,emax=15", "p=99", "2..53");
  CheckFormatRejected("custom:p=1,emin=-14,emax=15", "p=1", "2..53");
  CheckFormatRejected("custom:p=11,emin=-2000,emax=15", "emin=-2000", "-1022..1023");
  CheckFormatRejected("custom:p=11,emin=5,emax=4", "emax=4", "5..1023");
  CheckFormatRejected("custom:p=11,emin=-14,emax=1024", "emax=1024", "..1023");
  CheckFormatRejected("custom:p=11,emin=-14,emax=15,inf=2", "'inf=2'", "inf=0 or 1");
  CheckFormatRejected("custom:p=11,emin=-14,emax=15,subnormals=yes", "'subnormals=yes'",
                      "not an integer");

  Format bad = Fp16();
  bad.precision = 60;
  CHECK_THROWS_AS(bad.Validate(), std::invalid_argument);
  bad = Fp16();
  bad.has_inf = false;
  bad.has_nan = false;
  CHECK_THROWS_WITH(bad.Validate(), Catch::Contains("saturate=1"));
}

TEST_CASE("rounding names round-trip and bad names are rejected", "[fast]") {
  const char* names[] = {"rne", "rna", "rz", "ru", "rd", "ro", "sr"};
  int i = 0;
  for (Rounding r : kAllRoundings) {
    CHECK(RoundingName(r) == names[i]);
    CHECK(ParseRounding(names[i]) == r);
    ++i;
  }
  for (const char* bad : {"", "RNE", "nearest", "rne ", "r"}) {
    INFO("text: '" << bad << "'");
    try {
      ParseRounding(bad);
      FAIL("accepted");
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      CHECK(msg.find('\n') == std::string::npos);
      CHECK(msg.find("'" + std::string(bad) + "'") != std::string::npos);
      CHECK(msg.find("rne, rna, rz, ru, rd, ro, sr") != std::string::npos);
    }
  }
}

}  // namespace
}  // namespace carrier
