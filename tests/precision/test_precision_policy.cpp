// Precision policies (precision/precision_policy.hpp): the text form round-trips, unnamed roles
// derive as documented, presets parse to the roles their sources state, the shorthand maps both
// ways, and bad text is one line naming the bad item.
#include <catch2/catch.hpp>
#include <string>

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
