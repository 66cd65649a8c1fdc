// core/schedule.hpp's kScheduleKindDocs, the table `carrier tree --help` and `carrier eval
// --help` print: one entry per ScheduleKind, in enum order, each example parsing to its kind
// and surviving print and parse, and each syntax's head named by kScheduleGrammar (the
// parser's own error message).
#include <catch2/catch.hpp>
#include <string>

#include "core/schedule.hpp"

TEST_CASE("every schedule kind is documented with an example that parses", "[fast][schedule]") {
  constexpr std::size_t kKinds = static_cast<std::size_t>(carrier::ScheduleKind::kSplitK) + 1;
  REQUIRE(std::size(carrier::kScheduleKindDocs) == kKinds);
  std::size_t i = 0;
  for (const carrier::ScheduleKindDoc& d : carrier::kScheduleKindDocs) {
    INFO("entry " << i << ": " << d.syntax << " e.g. " << d.example);
    CHECK(static_cast<std::size_t>(d.kind) == i++);
    const std::string syntax = d.syntax;
    const std::string head = syntax.substr(0, syntax.find_first_of(":["));
    CHECK(std::string(carrier::kScheduleGrammar).find(syntax) != std::string::npos);
    CHECK(std::string(d.example).rfind(head, 0) == 0);
    const carrier::Schedule s = carrier::ParseSchedule(d.example);
    CHECK(s.kind() == d.kind);
    CHECK(carrier::ParseSchedule(carrier::ToString(s)) == s);
  }
}
