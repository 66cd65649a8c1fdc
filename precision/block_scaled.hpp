// precision/block_scaled.hpp: block-scaled formats (OCP Microscaling MX v1.0, NVIDIA NVFP4) as
// data, and quantisation into them.
//
// A block-scaled format stores a tensor as narrow elements plus one scale per block of
// consecutive elements (1-D: 1 x B along each row; `2dB`: B x B tiles of a row-major matrix),
// and for NVFP4 one fp32 scale per tensor. The decoded value of element i is
//     value[i] = element[i] * block_scale[block(i)] * tensor_scale          (identity)
// where element[i] is the element's own value (unscaled, a value of the element format),
// block_scale the decoded block scale and tensor_scale the per-tensor decode scale (1 for MX).
// The product is exact in double (at most 4 + 4 + 24 significant bits; exponents in range),
// so `values` holds exactly what a matrix unit that applies the scales exactly sees.
//
// Element types (OCP MX v1.0 section 5.3; OCP FP8 v1.0), as Formats with every field stated:
//   e5m2  p=3 emin=-14 emax=15  max 57344   (inf and NaN exist in the encoding)
//   e4m3  p=4 emin=-6  emax=8   max 448     (no inf; S.1111.111 is NaN)
//   e3m2  p=3 emin=-2  emax=4   max 28      (no inf, no NaN)
//   e2m3  p=4 emin=0   emax=2   max 7.5     (no inf, no NaN)
//   e2m1  p=2 emin=0   emax=2   max 6       (no inf, no NaN)
//   int8  k * 2^-6, |k| <= 127: max 1.984375 (MXINT8: two's complement with an implicit 2^-6;
//         as a Format p=7 emin=0 emax=0, whose normals and subnormals are exactly that grid;
//         the code -128 (-2) is never produced: saturation is symmetric)
// Every element conversion here rounds to nearest even once (from the exact scaled value for
// MX; from the fp32 product for NVFP4, below) and saturates to +-max (the OCP spec makes FP6 and
// FP4 conversion saturating and leaves FP8 overflow to the implementation; torchao clamps and
// cuBLAS/TransformerEngine convert with satfinite, so no element is ever inf or NaN).
// Codes: the element's bit pattern in the low bits of a byte, sign at the top bit of the width
// (8, 8, 6, 6, 4 bits; int8 two's complement), exponent field biased by 1 - emin, zero field
// for subnormals.
//
// Scale formats:
//   e8m0   2^(code - 127) for code 0..254 (2^-127 .. 2^127); 0xFF is NaN; no zero, no inf
//          (OCP MX v1.0 section 5.4.1).
//   ue4m3  an unsigned OCP E4M3 (sign bit 0): 0, 2^-9 .. 448; 0x7F is NaN (NVFP4).
//   fp32   an IEEE binary32 scale per block (DeepGEMM's fine-grained FP8: 1 x 128 activation
//          and 128 x 128 weight blocks, so one scale per 128 along K for either operand). It
//          has no byte code: scale_codes holds 0 and `scales` the fp32 value.
//
// Scale rules for e8m0 (amax = max |x| over the block; E = the element format's emax, the
// exponent of its largest power of two: 15 8 4 2 2 0; M = its max finite value):
//   floor  2^(floor(log2 amax) - E): the OCP spec's rule (MX v1.0 section 6.3, torchao's
//          ScaleCalculationMode.FLOOR). Elements of the largest binade may saturate.
//   ceil   2^(ceil(log2 amax) - E): torchao's CEIL (one more when amax is not a power of two).
//   even   amax first rounded to the element's mantissa width (m = p - 1 fraction bits, ties
//          away: torchao's EVEN adds half an ulp at m bits and keeps the exponent), then floor.
//   rceil  cuBLAS/TransformerEngine's kernel arithmetic (the rule of arXiv 2506.08027, "round
//          toward infinity", which fixed the divergence the floor rule caused): d =
//          fp32(fp32(amax) * fp32(1/M)), then d rounded up to a power of two as
//          `cvt.rp.ue8m0` does: 2^ceil(log2 d); d <= 2^-127 (fp32 subnormal or 0) gives 2^-127.
//   cudnn  the cuDNN block-scale-quantize formula quantize_round_up(amax / vmax) with
//          round-to-nearest-even elements, taken exactly: 2^ceil(log2(amax / M)).
// Scale rule for fp32 (`amax`, the only one): DeepGEMM's per_token_cast_to_fp8 and
// per_block_cast_to_fp8 (tests of github.com/deepseek-ai/DeepGEMM), every step in fp32 with rne:
//   a = max(fp32(amax), fp32(1e-4)); scale s = fp32(a / M); element = elem_rne_sat(fp32(fp32(x)
//   * fp32(M / a))) (M = the element max, 448 for e4m3). A block holding a NaN or an inf gets
//   the scale NaN, element codes 0 and values NaN.
// Exponents below -127 become -127 (elements then lose their low bits or flush); an exponent
// above 127 gives the NaN scale (torchao clamps to 128 = 0xFF). A block of zeros gets scale
// code 0 (2^-127) and zero elements. A block holding a NaN or an inf gets scale 0xFF (NaN; OCP:
// a NaN scale makes every value of the block NaN; E8M0 has no inf), element codes 0, values
// NaN.
//
// NVFP4 and every ue4m3-scaled format (TransformerEngine's recipe, core_nvfp4.cuh): with
// M = element max (6 for e2m1) and Q = 448 (256 for `:4/6`), every step in fp32 with rne:
//   A = fp32(max |x| over the tensor);  S_enc = fp32(Q * M / A), at most FLT_MAX; 1 when A = 0
//   or S_enc = 0.  tensor_scale = S_dec = fp32(1 / S_enc).  encode_scale = S_enc.
//   Per block: a = fp32(amax_b); t = fp32(fp32(a / M) * S_enc); block scale s = ue4m3(t) rounded
//   to nearest even (`rn`) or up (`ru`), saturated to 448 (satfinite).
//   Elements: c = min(fp32(1 / fp32(s * S_dec)), FLT_MAX); element = e2m1_rne_sat(fp32(fp32(x)
//   * c)).
//   `:4/6` (TransformerEngine's 4over6, quantize_4over6_nvfp4.cuh): two candidates per block,
//   s6 = ue4m3(t) and s4 = ue4m3(fp32(t * 1.5)) (mapping the block max to 4 instead of 6); the
//   one whose dequantised block has the smaller sum of squared errors against fp32(x) is kept
//   (ties: s6). The error here is exact (TE sums it in fp32, so near-ties may pick differently).
//   NaN or inf in the tensor: A is NaN, every scale is the NaN code and every value NaN.
//
// Text (ParseBlockScaledFormat / BlockScaledFormat::name):
//   mxfp8e4m3 mxfp8e5m2 mxfp6e3m2 mxfp6e2m3 mxfp4 mxint8  (block 32, e8m0, floor)
//   nvfp4                                                   (e2m1, block 16, ue4m3, rn)
//   mx:ELEM:BLOCK:SCALEFMT:RULE   e.g. mx:e2m1:32:e8m0:floor, mx:e4m3:16:ue4m3:ru
// followed by optional suffixes, each at most once: `:RULE` (after a name), `:4/6` (ue4m3 scale,
// e2m1 elements), `:2dB` (B x B blocks; sets the block size to B). RULE is floor ceil even rceil
// cudnn for e8m0, rn ru for ue4m3 and amax for fp32 (e.g. mx:e4m3:128:fp32:amax, DeepGEMM's). The
// canonical name is the short name where element, scale format and block size are a named format's,
// else the mx: form, then the non-default suffixes in the order rule, 4/6, 2d;
// ParseBlockScaledFormat(f.name) == f. Bad text throws std::invalid_argument: one line naming the
// bad part and the allowed values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "precision/format.hpp"

namespace carrier {

enum class MxElement { kE5M2, kE4M3, kE3M2, kE2M3, kE2M1, kInt8 };
enum class BlockScaleFormat { kE8M0, kUE4M3, kFp32 };
enum class BlockScaleRule { kFloor, kCeil, kEven, kRceil, kCudnn, kNearest, kUp, kAmax };

// e5m2 e4m3 e3m2 e2m3 e2m1 int8 / e8m0 ue4m3 fp32 / floor ceil even rceil cudnn rn ru amax
std::string_view MxElementName(MxElement e);
std::string_view BlockScaleFormatName(BlockScaleFormat f);
std::string_view BlockScaleRuleName(BlockScaleRule r);

// The element type as a Format (the table above; saturate = 1, has_inf = 0 and has_nan = 0
// except e4m3's NaN pattern: the values an element conversion can produce).
Format MxElementFormat(MxElement e);
int MxElementBits(MxElement e);  // 8 8 6 6 4 8
// Encodes a value of the element format (exactly representable, finite) as its bit pattern,
// and back.
std::uint8_t EncodeMxElement(MxElement e, double value);
double DecodeMxElement(MxElement e, std::uint8_t code);  // e5m2/e4m3 NaN and inf codes decode so

// 2^(code-127), NaN for 0xFF.
double DecodeE8M0(std::uint8_t code);
// An unsigned E4M3 code (0..0x7F) to its value; 0x7F is NaN.
double DecodeUE4M3(std::uint8_t code);

struct BlockScaledFormat {
  std::string name;  // canonical text
  MxElement element = MxElement::kE4M3;
  int block = 32;  // elements per block (1-D) or the tile side (two_d)
  BlockScaleFormat scale = BlockScaleFormat::kE8M0;
  BlockScaleRule rule = BlockScaleRule::kFloor;
  bool four_over_six = false;  // `:4/6`
  bool two_d = false;          // `:2dB`: B x B tiles of a row-major matrix
  bool operator==(const BlockScaledFormat&) const = default;
};

BlockScaledFormat ParseBlockScaledFormat(std::string_view text);
// The named formats in listing order (mxfp8e4m3 mxfp8e5m2 mxfp6e3m2 mxfp6e2m3 mxfp4 mxint8 nvfp4).
const std::vector<BlockScaledFormat>& NamedBlockScaledFormats();
// Whether `text` starts like a block-scaled format (a named one or "mx:"), so that a caller that
// also takes plain formats can pick the parser whose error message to show.
bool LooksBlockScaled(std::string_view text);

// The Format a trial's storage (a precision policy's `in` role, eval's --dtype) holds for a
// block-scaled format: the dequantised values are exact doubles, so fp64's fields, named after
// the block-scaled format (f.name). ParseFormat does not take that name; LooksBlockScaled and
// ParseBlockScaledFormat do. Such storage is made by Quantize over the whole input, never by
// RoundToFormat (which is the identity on it).
Format BlockScaledStorageFormat(const BlockScaledFormat& f);

struct BlockScaledResult {
  std::size_t rows = 1, cols = 0;  // the shape blocks were laid over (1 x n for a vector)
  std::size_t block_rows = 0, block_cols = 0;  // blocks per column and per row of blocks
  std::vector<std::uint8_t> codes;             // per element: its bit pattern
  std::vector<double> elements;           // per element: its value in the element format (unscaled)
  std::vector<std::uint8_t> scale_codes;  // per block: e8m0 or ue4m3 code
  std::vector<double> scales;             // per block: the decoded scale (NaN for a NaN code)
  double tensor_scale = 1;     // per-tensor decode scale S_dec (ue4m3 formats), 1 for e8m0
  double encode_scale = 1;     // per-tensor encode scale S_enc (ue4m3 formats), 1 for e8m0
  std::vector<double> values;  // dequantised: elements[i] * scales[Block(i)] * tensor_scale
  int block = 0;               // the format's block size
  bool two_d = false;          // B x B tiles (else 1 x B along each row)
  // The block of element i: blocks are numbered row-major over the block grid (1-D: row r's
  // blocks are r * block_cols .. r * block_cols + block_cols - 1).
  std::size_t Block(std::size_t i) const;
};

// Quantises x (a vector: rows = 1, cols = x.size(); or a rows x cols row-major matrix). `2dB`
// formats need the matrix form. Blocks at the end of a row (or the bottom of a matrix) may be
// shorter than B; they are quantised alone by the same rule. Throws std::invalid_argument when
// rows * cols != x.size() or a 2-D format is given a vector.
BlockScaledResult Quantize(const BlockScaledFormat& f, std::span<const double> x);
BlockScaledResult Quantize(const BlockScaledFormat& f, std::span<const double> x, std::size_t rows,
                           std::size_t cols);

}  // namespace carrier
