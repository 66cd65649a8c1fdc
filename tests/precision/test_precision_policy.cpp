// Precision policies (precision/precision_policy.hpp): the text form round-trips, unnamed roles
// derive as documented, presets parse to the roles their sources state, the shorthand maps both
// ways, and bad text is one line naming the bad item.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "precision/dot_split.hpp"
#include "precision/precision_policy.hpp"

using carrier::ParsePrecisionPolicy;
using carrier::PrecisionPolicy;
using carrier::Rounding;

TEST_CASE("precision policy: derived roles and canonical text", "[fast]") {
  const PrecisionPolicy p = ParsePrecisionPolicy("in=bf16,acc=fp32,p=bf16,out=bf16");
  const std::string text = carrier::ToString(p);
  INFO("canonical text: " << text);
  CHECK(text == "in=bf16,prod=fp32,acc=fp32,combine=fp32,state=fp32,s=fp32,p=bf16,out=bf16");
  CHECK(ParsePrecisionPolicy(text) == p);
  // acc defaults to in; every other role to acc.
  const PrecisionPolicy q = ParsePrecisionPolicy("in=fp16");
  CHECK(carrier::ToString(q) ==
        "in=fp16,prod=fp16,acc=fp16,combine=fp16,state=fp16,s=fp16,p=fp16,out=fp16");
}

TEST_CASE("precision policy: roundings, custom formats, mma and pscale round-trip", "[fast]") {
  for (const char* t :
       {"in=fp8e4m3,acc=fp32@rz,combine=fp32,out=bf16@sr",
        "in=custom:p=5,emin=-6,emax=7,acc=custom:p=12,emin=-30,emax=31@ro,out=fp16",
        "in=bf16,acc=fp32,mma=hopper-fp8,pscale=2^8", "in=fp16,acc=fp32,pscale=0.25"}) {
    const PrecisionPolicy p = ParsePrecisionPolicy(t);
    const std::string canon = carrier::ToString(p);
    INFO("input: " << t << "\ncanonical: " << canon);
    CHECK(ParsePrecisionPolicy(canon) == p);
    CHECK(carrier::ToString(ParsePrecisionPolicy(canon)) == canon);
  }
  const PrecisionPolicy c =
      ParsePrecisionPolicy("in=custom:p=5,emin=-6,emax=7,acc=custom:p=12,emin=-30,emax=31@ro");
  CHECK(c.in.format.precision == 5);
  CHECK(c.acc.format.precision == 12);
  CHECK(c.acc.rounding == Rounding::kToOdd);
  CHECK(c.out.rounding == Rounding::kToOdd);  // derived from acc, rounding included
  CHECK(ParsePrecisionPolicy("in=fp16,pscale=2^8").pscale == 256.0);
}

TEST_CASE("precision policy: every preset parses, names its source, and has the stated roles",
          "[fast]") {
  for (const auto& pr : carrier::PrecisionPresets()) {
    INFO("preset " << pr.name << ": " << pr.text);
    const PrecisionPolicy p = ParsePrecisionPolicy(pr.name);
    CHECK(p == ParsePrecisionPolicy(pr.text));
    CHECK(p.preset == pr.name);
    CHECK(pr.source.size() > 40);
  }
  const PrecisionPolicy fa2 = ParsePrecisionPolicy("fa2-ampere-bf16");
  CHECK(fa2.in.format.name == "bf16");
  CHECK(fa2.s.format.name == "fp32");
  CHECK(fa2.p.format.name == "bf16");
  CHECK(fa2.state.format.name == "fp32");
  CHECK(fa2.out.format.name == "bf16");
  CHECK(fa2.mma == "ampere-bf16");
  const PrecisionPolicy fa3 = ParsePrecisionPolicy("fa3-hopper-fp8");
  CHECK(fa3.in.format.name == "fp8e4m3");
  CHECK(fa3.p.format.name == "fp8e4m3");
  CHECK(fa3.pscale == 256.0);
  CHECK(fa3.mma == "hopper-fp8");
  const PrecisionPolicy eager = ParsePrecisionPolicy("eager-bf16");
  CHECK(eager.s.format.name == "bf16");  // S is a bf16 tensor between the two kernels
  CHECK(eager.state.format.name == "fp32");
  CHECK(eager.mma.empty());
  // A preset's roles can be overridden item by item.
  const PrecisionPolicy o = ParsePrecisionPolicy("fa2-ampere-bf16,out=fp32");
  CHECK(o.out.format.name == "fp32");
  CHECK(o.p.format.name == "bf16");
  CHECK(o.preset == "fa2-ampere-bf16 (overridden)");
}

TEST_CASE("precision policy: the --dtype/--acc shorthand maps both ways", "[fast]") {
  const PrecisionPolicy p = carrier::PolicyFromShorthand("bf16", "fp32", Rounding::kTowardZero);
  const auto s = carrier::ToShorthand(p);
  INFO("policy " << carrier::ToString(p));
  CHECK(s.dtype == "bf16");
  CHECK(s.acc == "fp32");
  CHECK(s.round == "rz");
  CHECK(carrier::ToShorthand(carrier::PolicyFromShorthand("fp16", "same", Rounding::kNearestEven))
            .acc == "fp16");
  // FABsum's two-level accumulation: chains in acc, combines in a wider format.
  const auto two = carrier::ToShorthand(ParsePrecisionPolicy("in=fp16,acc=fp16,combine=fp32"));
  CHECK(two.acc == "fp16>fp32");
  CHECK(carrier::ToShorthand(ParsePrecisionPolicy("all-bf16")).acc == "bf16");
  // Roles a one-precision op cannot honour are refused by name.
  for (const char* t : {"fa2-ampere-bf16", "in=bf16,acc=fp32,out=bf16", "in=bf16,acc=fp32,s=bf16",
                        "in=fp32,acc=fp16,combine=bf16", "in=bf16,acc=fp32,pscale=4"}) {
    INFO("policy " << t);
    CHECK_THROWS_AS(carrier::ToShorthand(ParsePrecisionPolicy(t)), std::invalid_argument);
  }
}

TEST_CASE("precision policy: bad text is one line naming the bad item", "[fast]") {
  struct Case {
    const char* text;
    const char* names;
  };
  for (const Case& c :
       {Case{"", "empty"}, Case{"fa9-bf16", "fa9-bf16"}, Case{"in=bf17", "bf17"},
        Case{"in=bf16,acc=fp32@rq", "rq"}, Case{"in=bf16,foo=fp32", "foo"},
        Case{"in=bf16,in=fp16", "twice"}, Case{"acc=fp32", "in=FORMAT"},
        Case{"in=bf16,mma=pascal", "pascal"}, Case{"in=bf16,pscale=3", "power of two"},
        Case{"in=", "no value"}, Case{"in=bf16,pscale=2^x", "pscale"}}) {
    std::string msg;
    try {
      ParsePrecisionPolicy(c.text);
    } catch (const std::invalid_argument& e) {
      msg = e.what();
    }
    INFO("text '" << c.text << "' gave: " << msg);
    CHECK(msg.find(c.names) != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  }
}

TEST_CASE("precision policy: a block-scaled in role (storage only, acc fp32 by default)",
          "[fast]") {
  const PrecisionPolicy p = ParsePrecisionPolicy("in=mx:e2m1:32:e8m0:floor");
  const std::string text = carrier::ToString(p);
  INFO("canonical text: " << text);
  CHECK(text == "in=mxfp4,prod=fp32,acc=fp32,combine=fp32,state=fp32,s=fp32,p=fp32,out=fp32");
  CHECK(ParsePrecisionPolicy(text) == p);
  CHECK(p.in.format.precision == 53);  // the dequantised values are held exactly as doubles
  const PrecisionPolicy q = ParsePrecisionPolicy("in=nvfp4:ru:4/6,acc=bf16");
  CHECK(q.in.format.name == "nvfp4:ru:4/6");
  CHECK(q.acc.format.name == "bf16");
  CHECK(!(ParsePrecisionPolicy("in=nvfp4") == ParsePrecisionPolicy("in=nvfp4:ru")));
  const auto sh = carrier::ToShorthand(p);
  CHECK(sh.dtype == "mxfp4");
  CHECK(sh.acc == "fp32");
  for (const char* bad : {"in=nvfp4@rz", "in=fp32,acc=mxfp4", "in=mxfp4:bogus"}) {
    INFO(bad);
    try {
      ParsePrecisionPolicy(bad);
      FAIL("accepted");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
    }
  }
}

// XLA's split dot algorithms (precision/dot_split.hpp): the parts and the sum, by hand.
TEST_CASE("split dots: parts cut as XLA cuts them, partial dots added in its order", "[fast]") {
  const carrier::DotSplitAlgorithm& x3 = *carrier::FindDotSplit("bf16x3");
  const carrier::DotSplitAlgorithm& x6 = *carrier::FindDotSplit("bf16x6");
  const carrier::DotSplitAlgorithm& t3 = *carrier::FindDotSplit("tf32x3");
  const auto p2 = [](int e) { return std::ldexp(1.0f, e); };
  // 1 + 2^-10 + 2^-20: bf16 hi truncates to 1; two parts: lo = bf16(2^-10 + 2^-20) = 2^-10;
  // three parts: mid = 2^-10 (truncated), lo = 2^-20; tf32 (11 bits) keeps 1 + 2^-10.
  const float x = 1 + p2(-10) + p2(-20);
  CHECK(carrier::SplitValue(x, x3)[0] == 1.0f);
  CHECK(carrier::SplitValue(x, x3)[1] == p2(-10));
  CHECK(carrier::SplitValue(x, x6)[1] == p2(-10));
  CHECK(carrier::SplitValue(x, x6)[2] == p2(-20));
  CHECK(carrier::SplitValue(x, t3)[0] == 1 + p2(-10));
  CHECK(carrier::SplitValue(x, t3)[1] == p2(-20));
  // hi is truncated, not rounded: 1 + 2^-7 - 2^-20 keeps hi = 1 (rounding would give 1 + 2^-7).
  CHECK(carrier::SplitValue(1 + p2(-7) - p2(-20), x3)[0] == 1.0f);
  // The last part rounds to nearest even: rest 2^-8 + 2^-16 is a tie (bf16 ulp 2^-15 there):
  // to 2^-8; 2^-8 + 2^-16 + 2^-17 rounds up to 2^-8 + 2^-15.
  CHECK(carrier::SplitValue(1 + p2(-8) + p2(-16), x3)[1] == p2(-8));
  CHECK(carrier::SplitValue(1 + p2(-8) + p2(-16) + p2(-17), x3)[1] == p2(-8) + p2(-15));
  // Negative values split with their sign (truncation toward zero).
  CHECK(carrier::SplitValue(-x, x3)[0] == -1.0f);
  CHECK(carrier::SplitValue(-x, x3)[1] == -p2(-10));
  // The sum: (lo hi + hi lo) + hi hi; a NaN from the low products is zeroed, not an inf.
  // Smallest first: 2^-24 + 2^-24 = 2^-23 survives the add to 1; hi hi first would lose both
  // (1 + 2^-24 ties to even, 1).
  CHECK(carrier::CombinePartialDots(x3, {p2(-24), p2(-24), 1.0f}) == 1 + p2(-23));
  CHECK(carrier::CombinePartialDots(x3, {p2(-25), p2(-25), 1.0f}) == 1.0f);  // 1 + 2^-24: even
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(carrier::CombinePartialDots(x3, {nan, 0.0f, inf}) == inf);
  CHECK(std::isinf(carrier::CombinePartialDots(x3, {inf, 0.0f, 1.0f})));
  CHECK_THROWS_AS(carrier::CombinePartialDots(x6, {1.0f, 2.0f}), std::invalid_argument);
  // The policy item round-trips and names the algorithms on a bad one.
  const PrecisionPolicy p = ParsePrecisionPolicy("in=fp32,acc=fp32,split=bf16x9");
  CHECK(p.split == "bf16x9");
  CHECK(ParsePrecisionPolicy(carrier::ToString(p)) == p);
  CHECK_FALSE(p == ParsePrecisionPolicy("in=fp32,acc=fp32"));
  CHECK(ParsePrecisionPolicy("ALG_DOT_TF32_TF32_F32_X3").split == "tf32x3");
  CHECK_THROWS_WITH(ParsePrecisionPolicy("in=fp32,split=bf16x2"),
                    Catch::Contains("bf16x3 bf16x6 bf16x9 tf32x3"));
}
