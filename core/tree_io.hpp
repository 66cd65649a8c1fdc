// core/tree_io.hpp: a merge tree to JSON (ToJson) and back (TreeFromJson, the parser behind
// file:PATH). Text only: core reads no files. A file: schedule's tree is read and parsed in
// experiments/io/tree_file.hpp (LoadTrees) before core builds it (core/orders/file.hpp).
//
// Format (ToJson, declared in core/merge_tree.hpp; `carrier tree --format json`, `carrier probe`):
//   {"schedule": TEXT, "n": N, "permutes": BOOL,
//    "chains": [{"first": F, "count": C, "stride": S, "mode": "push"|"tile"|"fused"}, ...],
//    "fused": {"input": "fp16"|"bf16"|"tf32"|"fp8e4m3", "terms": K, "frac_bits": F,
//              "align": "truncate"|"floor", "output": "fp32-rz"|"e8m13-rz"|"fp16-rne"|
//              "fp32-rne", "two_stage": BOOL},
//    "combines": [[LEFT, RIGHT], ...], ...}
// Keys may come in any order; "stats" and any other unknown top-level key are skipped (they
// are derived data); unknown keys inside a chain are an error, since they would change its
// meaning (a fused node's parameters, say) and must not be ignored silently. "permutes" may
// be left out: it is then inferred (true exactly when some combine merges interleaved
// inputs). "stride" defaults to 1 and "mode" to "push". Integers are unsigned decimal.
// "fused" is the matrix-unit node of the "fused" chains (MergeTree::fused, core/mma.hpp): it
// is required exactly when some chain is fused (a fused chain without its node's arithmetic
// has no meaning; a node without fused chains would be dropped on writing), all six keys must
// be given, and K must lie in [1, kMmaMaxTerms] and F in [0, 25] (the range where
// MmaFusedStep's integer sum is exact), or [0, 35] in a group node ("group": 16, fp4e2m1
// input; written only when nonzero). So every tree ToJson writes reads back as itself.
//
// The parsing is nlohmann-json's, in core/tree_io.cpp (the library carrier_core_json, linked by
// every user of carrier::core): this header declares only, so core headers stay free of
// third-party code for nvcc (tests/cuda compiles every core header) and for compile time.
// Text that is not JSON is one line naming the byte where nlohmann-json stopped.
//
// TreeFromJson(text, origin) parses and validates (ValidateTree: every input in exactly one
// chain and in range, every node consumed once, operands computed before use, operand order
// preserved); every problem is one ScheduleError line naming `origin` and what is wrong.
#pragma once

#include <string>
#include <string_view>

#include "core/merge_tree.hpp"

namespace carrier {

// Throws ScheduleError (one line, starting with `origin`).
MergeTree TreeFromJson(std::string_view text, const std::string& origin);

}  // namespace carrier
