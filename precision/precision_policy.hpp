// precision/precision_policy.hpp: a reduction's arithmetic by role (DESIGN.md, "Precision by
// role").
//
// Contract. A PrecisionPolicy names, for each role a real kernel distinguishes, the format a
// value of that role is rounded to and the rounding used:
//   in       input storage (Q, K, V; x; the pairs of dot): the inputs are rounded to it once
//   prod     a product of two inputs (dot's x*y, attention's q_i k_j) before it is accumulated
//   acc      the chain accumulator (one thread's running state along a chain / along K)
//   combine  the merge of two partial states (the combines of the merge tree; FABsum's OUTER)
//   state    a carrier state kept between steps (softmax's m and d; FlashRow's m, l, O;
//            Welford's mean and M2)
//   s        attention's score tile S = Q K^T as the kernel stores it before the softmax
//   p        attention's probability tile P, rounded before the P V product
//   out      the output tensor (the result is rounded to it once, at the end)
// plus two parameters that are not formats:
//   mma      a matrix-unit profile (core's `mma:PROFILE` fused accumulation) for the products
//            of dot and of attention's two matmuls; empty: IEEE products and sums in `acc`
//   pscale   a power of two P is multiplied by before it is rounded to `p` and divided by
//            after the product (FlashAttention-3's FP8 P scaling, FlashAttention-4's
//            2^max_offset); 1 when absent
//   rescale  attention's lazy O rescale (FlashAttention-4, flash_attn/cute/softmax.py
//            SoftmaxSm100.rescale_threshold): while the running row max has grown by at most
//            this many log2 units, the old max is kept and O and l are not rescaled; 0 (absent):
//            every tile rescales
//   recip    the format and rounding of the row normaliser's reciprocal 1/l (FlashAttention-4
//            multiplies O by an approximate reciprocal): O is then multiplied by R_recip(1/l)
//            instead of divided by l; absent: one division in acc
//   split    XLA's split dot algorithms (precision/dot_split.hpp: bf16x3 bf16x6 bf16x9 tf32x3):
//            each fp32 operand cut into bf16 or tf32 parts, the partial dots of the listed part
//            pairs each accumulated in acc through the trial's merge order, and added in XLA's
//            order; dot (and matmul) only, with in=fp32 and every computed role fp32; empty:
//            none
// The in role may instead name a block-scaled format (precision/block_scaled.hpp: in=nvfp4,
// in=mxfp8e4m3:rceil, in=mx:e2m1:32:e8m0:floor): each input tensor is quantised block-wise by
// the format's own rule (no @ROUNDING), and in.format is BlockScaledStorageFormat (fp64's
// values, the block-scaled name); acc then defaults to fp32. Other roles take plain formats.
// Text form: comma-separated `role=FORMAT[@ROUNDING]` (FORMAT as ParseFormat, ROUNDING as
// ParseRounding, default rne), `mma=PROFILE`, `pscale=2^K` or a power of two, `rescale=T` (T >= 0
// log2 units), `recip=FORMAT[@ROUNDING]`, `split=NAME`; the first item may
// instead be a preset name, whose roles the later items override, e.g.
// `fa2-ampere-bf16,out=fp32`. Unnamed roles are derived: acc from in; prod, combine, state, s
// and p from acc; out from acc (so `in=bf16,acc=fp32` is today's `--dtype bf16 --acc fp32`).
// ToString prints every role in the order above (rounding only where not rne; mma, pscale,
// rescale, recip and split only when set), and ParsePrecisionPolicy(ToString(p)) == p.
// Error rule: bad text throws std::invalid_argument, one line naming the bad item and what is
// allowed (roles, presets, profiles).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "precision/format.hpp"
#include "precision/rounding.hpp"

namespace carrier {

struct RoleArithmetic {
  Format format = Fp32();
  Rounding rounding = Rounding::kNearestEven;
  bool operator==(const RoleArithmetic&) const = default;
};

enum class PrecisionRole { kIn, kProd, kAcc, kCombine, kState, kS, kP, kOut };
inline constexpr PrecisionRole kAllPrecisionRoles[] = {
    PrecisionRole::kIn,    PrecisionRole::kProd, PrecisionRole::kAcc, PrecisionRole::kCombine,
    PrecisionRole::kState, PrecisionRole::kS,    PrecisionRole::kP,   PrecisionRole::kOut};

// in prod acc combine state s p out
std::string_view PrecisionRoleName(PrecisionRole r);

struct PrecisionPolicy {
  RoleArithmetic in, prod, acc, combine, state, s, p, out;
  std::string mma;                      // matrix-unit profile name; empty: none
  double pscale = 1.0;                  // power of two
  double rescale = 0.0;                 // lazy-rescale threshold in log2 units; 0: none
  std::optional<RoleArithmetic> recip;  // the normaliser's reciprocal; empty: divide by l
  std::string split;                    // a split dot algorithm (dot_split.hpp); empty: none
  std::string preset;  // the preset it came from, for display; not part of equality
  bool operator==(const PrecisionPolicy& o) const;

  const RoleArithmetic& Role(PrecisionRole r) const;
  RoleArithmetic& Role(PrecisionRole r);
};

// A named kernel model: its policy text and where each choice comes from.
struct PrecisionPreset {
  std::string name;
  std::string text;    // the roles, in the text form above
  std::string source;  // the publication or source file the roles are read from
};
const std::vector<PrecisionPreset>& PrecisionPresets();

// The matrix-unit profiles `mma=` accepts: core/mma.hpp's kMmaProfiles (mma:PROFILE).
const std::vector<std::string>& MatrixUnitProfileNames();

PrecisionPolicy ParsePrecisionPolicy(std::string_view text);
std::string ToString(const PrecisionPolicy& p);

// The policy `--dtype DTYPE --acc ACC --round R` stands for: in = DTYPE (rne: inputs are
// rounded to storage to nearest), every other role ACC with rounding R. ACC empty or "same":
// DTYPE.
PrecisionPolicy PolicyFromShorthand(std::string_view dtype, std::string_view acc, Rounding r);

// The one-precision (plus FABsum's two-level) reductions run a policy that is expressible as
// `--dtype D --acc A` or `--acc INNER>OUTER`: every role but `in` and `combine` equal to
// `acc`, combine equal to acc (A) or a wider format (INNER>OUTER), no mma, pscale 1, and one
// rounding for every computed role. Returns the (dtype, acc, round) triple; throws
// std::invalid_argument naming the first role that such an op cannot honour.
// `out`: the out role's format, where it differs from the compute type that produces the result
// (acc, or combine when combine is wider: in=bf16,acc=fp32,combine=fp64 delivers fp32); empty
// where it is that type. A trial rounds its result to it (rne) and counts ulps in it.
struct ShorthandSpec {
  std::string dtype, acc, round, out;
};
ShorthandSpec ToShorthand(const PrecisionPolicy& p);

}  // namespace carrier
