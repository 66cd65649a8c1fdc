// Fuzz target: the reply of a probe target (experiments/probe/targets.hpp, probe::ParseNumber),
// what an exec: or python target prints for one masked sum. Properties: a reply is either one
// number, equal bit for bit to strtod of the whole text (trailing whitespace allowed), or a
// TargetError and nothing else; the error message is one line (no byte below 0x20, whatever
// bytes the reply held) and names the target.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz_check.hpp"
#include "probe/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string who = "exec:fuzz";
  try {
    const double v = carrier::probe::ParseNumber(text, who);
    FUZZ_CHECK(std::memchr(text.data(), '\0', text.size()) == nullptr, "accepted a NUL byte");
    char* end = nullptr;
    const double w = std::strtod(text.c_str(), &end);
    FUZZ_CHECK(end != text.c_str(), "accepted text strtod does not read: " + text);
    FUZZ_CHECK(std::memcmp(&v, &w, sizeof v) == 0 || (v != v && w != w),
               "value differs from strtod for: " + text);
  } catch (const carrier::probe::TargetError& e) {
    const std::string m = e.what();
    for (unsigned char c : m) FUZZ_CHECK(c >= 0x20, "control byte in the error: " + m);
    FUZZ_CHECK(m.rfind(who, 0) == 0, "the error does not name the target: " + m);
  }
  return 0;
}
