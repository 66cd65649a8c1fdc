// experiments/inputs/draw_targets.hpp: the instruction sets the normal family's block routines
// (generators.cpp) are compiled for, so a test can run each one this CPU supports.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace carrier::inputs {

// "baseline" first and the best (the one Generate uses) last; on x86-64 with GCC also "avx2" and
// "avx512" where the CPU runs them. Every one gives the same bits (portable_math.hpp).
std::vector<std::string> DrawTargets();

// BoxMullerBlock (generators.hpp) through one of DrawTargets(); throws std::invalid_argument
// for a target this CPU does not run.
void BoxMullerBlockFor(const std::string& target, const double* u1, const double* u2, std::size_t n,
                       double* out);

}  // namespace carrier::inputs
