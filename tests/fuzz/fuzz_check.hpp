// tests/fuzz/fuzz_check.hpp: the assertion of a fuzz target. A property that fails prints what
// was parsed and what came back, then aborts, which libFuzzer records as a crash with the input
// that caused it (saved as crash-*; add it to corpus/<target>/ with the fix).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_CHECK(cond, what)                                                              \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "fuzz property failed: %s\n  at %s:%d\n  %s\n", #cond, __FILE__, \
                   __LINE__, std::string(what).c_str());                                    \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)
