// carrier eval --precision: a policy the one-precision ops can run gives exactly the bits of
// its --dtype/--acc/--round shorthand; policies they cannot honour, and mixing the two forms,
// are one-line errors (exit 2).
#include <catch2/catch.hpp>
#include <string>

#include "support/cli_support.hpp"

using carrier_test::Carrier;
using carrier_test::CheckRejected;
using carrier_test::Run;

namespace {
// The JSON text without the timing fields (they differ between runs) and the fields only
// --precision prints (the policy text and its per-role bound note).
std::string Untimed(std::string json) {
  for (const char* key : {"\"seconds\":", "\"reference_seconds\":", "\"precision\":",
                          "\"role_bound\":", "\"role_bound_kind\":", "\"role_bound_note\":"}) {
    auto at = json.find(key);
    if (at == std::string::npos) continue;
    // From the comma before the key to the end of its value (a string value may hold commas).
    std::size_t v = at + std::string(key).size();
    const auto end = json[v] == '"' ? json.find('"', v + 1) + 1 : json.find_first_of(",}", v);
    if (at > 0 && json[at - 1] == ',') --at;
    json.erase(at, end - at);
  }
  return json;
}
}  // namespace

TEST_CASE("eval --precision equals its --dtype/--acc/--round shorthand bit for bit",
          "[fast][cli]") {
  struct Case {
    const char* policy;
    const char* shorthand;
  };
  for (const Case& c : {Case{"in=bf16,acc=fp32", "--dtype bf16 --acc fp32"},
                        Case{"in=fp16,acc=fp16@rz", "--dtype fp16 --acc fp16 --round rz"},
                        Case{"in=fp16,acc=fp16,combine=fp32", "--dtype fp16 --acc 'fp16>fp32'"},
                        Case{"all-bf16", "--dtype bf16 --acc bf16"}}) {
    const std::string common =
        " --op sum --schedule blocked:16 --gen uniform11 --n 2000 --format json";
    const Run a = Carrier(std::string("eval --precision '") + c.policy + "'" + common);
    const Run b = Carrier(std::string("eval ") + c.shorthand + common);
    INFO("policy " << c.policy << " vs " << c.shorthand << "\n" << a.err << b.err);
    REQUIRE(a.code == 0);
    REQUIRE(b.code == 0);
    CHECK(Untimed(a.out) == Untimed(b.out));
  }
}

TEST_CASE("eval --precision refuses what a one-precision op cannot honour", "[fast][cli]") {
  CheckRejected("eval --op sum --precision fa2-ampere-bf16 --gen normal --n 10", "mma");
  CheckRejected("eval --op sum --precision in=bf16,acc=fp32,out=bf16 --gen normal --n 10", "out");
  CheckRejected("eval --op sum --precision in=bf16 --dtype bf16 --gen normal --n 10",
                "one or the other");
  CheckRejected("eval --op sum --precision in=bf17 --gen normal --n 10", "bf17");
}
