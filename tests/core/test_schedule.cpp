// Schedule text: canonical forms round-trip, accepted variants canonicalise, bad text is a
// one-line ScheduleError that names the problem, and no text crashes the parser.
#include <catch2/catch.hpp>
#include <iostream>
#include <string>
#include <variant>
#include <vector>

#include "core/schedule.hpp"
#include "support/test_support.hpp"

using carrier::ParseSchedule;
using carrier::Schedule;
using carrier::ScheduleError;

TEST_CASE("schedule text round-trips in canonical form", "[fast][schedule]") {
  const std::vector<std::string> canonical = {"seq",
                                              "reverse",
                                              "pairwise",
                                              "pairwise:8",
                                              "pairwise:lift",
                                              "pairwise:64:lift",
                                              "blocked:64",
                                              "blocked:64:pairwise",
                                              "blocked:1",
                                              "blocked:64:lift",
                                              "blocked:4096:pairwise:lift",
                                              "strided:16",
                                              "strided:1",
                                              "random:0",
                                              "random:18446744073709551615",
                                              "strided:16:tile:4:lift",
                                              "strided:8:lift",
                                              "strided:8:tile:2",
                                              "omp:4:seq",
                                              "omp:2:pairwise:strided:16:tile:16:lift",
                                              "omp:3:seq:seq",
                                              "omp:1:pairwise:blocked:8",
                                              "splitk:4",
                                              "splitk:4:seq",
                                              "splitk:2:pairwise:3",
                                              "splitk:8:strided:16:tile:4:lift",
                                              "omp:2:seq:mma:hopper"};
  for (const auto& text : canonical) {
    INFO("text: " << text);
    Schedule s = ParseSchedule(text);
    CHECK(carrier::ToString(s) == text);
    CHECK(ParseSchedule(carrier::ToString(s)) == s);
  }
}

TEST_CASE("schedule text variants canonicalise", "[fast][schedule]") {
  CHECK(carrier::ToString(ParseSchedule("blocked:64:seq")) == "blocked:64");
  CHECK(carrier::ToString(ParseSchedule("blocked:64:seq:lift")) == "blocked:64:lift");
  CHECK(carrier::ToString(ParseSchedule("pairwise:1")) == "pairwise");
  CHECK(ParseSchedule("blocked:32:pairwise").As<carrier::orders::BlockedParams>().outer ==
        carrier::OuterOrder::kPairwise);
  CHECK(ParseSchedule("random:7").As<carrier::orders::RandomParams>().seed == 7u);
  CHECK(ParseSchedule("strided:16").As<carrier::orders::StridedParams>().lanes == 16u);
  CHECK(carrier::ToString(ParseSchedule("omp:4")) == "omp:4:seq");
  CHECK(ParseSchedule("omp:4:pairwise").As<carrier::orders::OmpParams>().outer ==
        carrier::OuterOrder::kPairwise);
  CHECK(ParseSchedule("omp:4:seq:strided:8:tile:2:lift").Inner() ==
        ParseSchedule("strided:8:tile:2:lift"));
  CHECK(!ParseSchedule("omp:4:seq").As<carrier::orders::OmpParams>().inner.IsSet());
  CHECK(ParseSchedule("omp:4:seq:seq").As<carrier::orders::OmpParams>().inner.IsSet());
  CHECK(ParseSchedule("strided:8:tile:2:lift").As<carrier::orders::StridedParams>().tile == 2u);
}

TEST_CASE("bad schedule text is a one-line error naming the problem", "[fast][schedule]") {
  struct Case {
    std::string text;
    std::string must_mention;
  };
  const std::vector<Case> cases = {
      {"", "unknown kind"},
      {"foo", "unknown kind 'foo'"},
      {"Seq", "unknown kind"},
      {"seq:1", "unexpected field '1'"},
      {"reverse:", "unexpected field"},
      {"blocked", "needs a tile size"},
      {"blocked:", "TILE must be a positive integer"},
      {"blocked:0", "TILE must be a positive integer, got '0'"},
      {"blocked:-4", "TILE must be a positive integer"},
      {"blocked:4x", "got '4x'"},
      {"blocked:99999999999999999999", "TILE must be"},
      {"blocked:4:diagonal", "outer order must be seq or pairwise, got 'diagonal'"},
      {"blocked:4:lift:lift", "unexpected field 'lift'"},
      {"blocked:4:pairwise:seq", "unexpected field 'seq'"},
      {"pairwise:0", "LEAF must be a positive integer"},
      {"pairwise:3:4", "unexpected field '4'"},
      {"strided", "needs a lane count"},
      {"strided:0", "K must be a positive integer"},
      {"strided:4:2", "unexpected field '2'"},
      {"strided:4:tile", "tile needs a size"},
      {"strided:4:tile:0", "T must be a positive integer"},
      {"strided:4:lift:tile:2", "unexpected field 'tile'"},
      {"omp", "needs a chunk count"},
      {"omp:0", "P must be a positive integer"},
      {"omp:2:seq:omp:2", "cannot be omp"},
      {"omp:2:seq:foo", "inner schedule: bad schedule 'foo'"},
      {"splitk", "needs a slice count"},
      {"splitk:0", "S must be a positive integer"},
      {"splitk:4:omp:2", "the inner schedule of splitk cannot be omp"},
      {"splitk:4:splitk:2", "the inner schedule of splitk cannot be splitk"},
      {"omp:2:seq:splitk:2", "the inner schedule of omp cannot be splitk"},
      {"splitk:4:foo", "inner schedule: bad schedule 'foo'"},
      {"random", "needs a seed"},
      {"random:", "SEED must be a non-negative integer"},
      {"random:1.5", "got '1.5'"},
  };
  for (const auto& c : cases) {
    INFO("text: '" << c.text << "'");
    try {
      ParseSchedule(c.text);
      FAIL("accepted bad schedule '" << c.text << "'");
    } catch (const ScheduleError& e) {
      const std::string msg = e.what();
      std::cout << "  '" << c.text << "' -> " << msg << "\n";
      CHECK(msg.find(c.must_mention) != std::string::npos);
      CHECK(msg.find('\n') == std::string::npos);
      CHECK(msg.rfind("bad schedule '" + c.text + "'", 0) == 0);
    }
  }
}

TEST_CASE("the schedule parser never crashes on random text", "[fast][schedule]") {
  const std::uint64_t seed = 20261129;
  carrier::test::Rng rng(seed);
  const std::string alphabet = "seqrvpaiwblockdtrn:0123456789-x ";
  const std::vector<std::string> stems = {
      "seq", "reverse", "pairwise:", "blocked:", "strided:", "random:"};
  int parsed = 0, rejected = 0;
  for (int t = 0; t < carrier::test::Trials(20000); ++t) {
    std::string text = rng.Below(2) ? stems[rng.Below(stems.size())] : "";
    for (std::uint64_t k = rng.Below(12); k-- > 0;) text += alphabet[rng.Below(alphabet.size())];
    try {
      Schedule s = ParseSchedule(text);
      ++parsed;
      INFO("seed=" << seed << " trial=" << t << " text='" << text << "'");
      REQUIRE(ParseSchedule(carrier::ToString(s)) == s);
    } catch (const ScheduleError&) {
      ++rejected;
    }
  }
  std::cout << "random schedule texts: " << parsed << " parsed, " << rejected << " rejected\n";
  CHECK(parsed > 0);
  CHECK(rejected > 0);
}

TEST_CASE("a schedule holds one kind's typed parameters", "[fast][schedule]") {
  namespace orders = carrier::orders;
  // The static constructors build the same value as the text.
  CHECK(Schedule::Pairwise(8, true) == ParseSchedule("pairwise:8:lift"));
  CHECK(Schedule::Blocked(64, carrier::OuterOrder::kPairwise) ==
        ParseSchedule("blocked:64:pairwise"));
  CHECK(Schedule::StridedTiles(16, 4, true) == ParseSchedule("strided:16:tile:4:lift"));
  CHECK(Schedule::SplitK(4, carrier::NestedSchedule(Schedule::Pairwise())) ==
        ParseSchedule("splitk:4:pairwise"));
  // Equal fields of different kinds are different schedules; a nested order is compared by
  // value, and an unset one differs from an explicit seq (it prints differently).
  CHECK(!(ParseSchedule("strided:8") == ParseSchedule("torch:8")));
  CHECK(!(ParseSchedule("omp:4:seq") == ParseSchedule("omp:4:seq:seq")));
  CHECK(ParseSchedule("omp:4:seq:pairwise:2") == ParseSchedule("omp:4:seq:pairwise:2"));
  // Typed access: the kind's own parameters, nothing for another kind.
  const Schedule omp = ParseSchedule("omp:4:pairwise:strided:8:tile:2:lift");
  CHECK(omp.kind() == carrier::ScheduleKind::kOmp);
  REQUIRE(omp.If<orders::OmpParams>() != nullptr);
  CHECK(omp.As<orders::OmpParams>().parts == 4u);
  CHECK(omp.If<orders::SplitKParams>() == nullptr);
  CHECK_THROWS_AS(omp.As<orders::PairwiseParams>(), std::bad_variant_access);
  const auto& inner = omp.Inner().As<orders::StridedParams>();
  CHECK((inner.lanes == 8u && inner.tile == 2u && inner.lift));
  CHECK(&omp.Inner() == &omp.Nested()->Get());
  CHECK(ParseSchedule("numpy").As<orders::NumpyParams>() == orders::NumpyParams{128, 8, 8192});
  CHECK(ParseSchedule("mma:hopper:promote:64").As<orders::MmaParams>().profile == "hopper");
  // Lift() reads the leaf orders' flag only; cuda's own lift lives in its CudaSchedule.
  CHECK(ParseSchedule("blocked:4:lift").Lift());
  CHECK(!ParseSchedule("cuda:128:4:lift").Lift());
  CHECK(ParseSchedule("cuda:128:4:lift").As<orders::CudaParams>().cuda.lift);
  CHECK(ParseSchedule("seq").Nested() == nullptr);
}
