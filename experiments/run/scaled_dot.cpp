// experiments/run/scaled_dot.cpp: block-scaled dots through a matrix unit (run/scaled_dot.hpp).
#include "run/scaled_dot.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/carriers/pairs.hpp"
#include "precision/block_scaled.hpp"

namespace carrier::run {

namespace {

// The MX element type a profile multiplies, where it has one.
std::optional<MxElement> ElementOf(MmaInput f) {
  switch (f) {
    case MmaInput::kFp8E4m3:
      return MxElement::kE4M3;
    case MmaInput::kFp8E5m2:
      return MxElement::kE5M2;
    case MmaInput::kFp4E2m1:
      return MxElement::kE2M1;
    default:
      return std::nullopt;
  }
}

// "nvfp4 (e2m1 elements, blocks of 16, ue4m3 scales)": a block-scaled format in words.
std::string Describe(const BlockScaledFormat& f) {
  return f.name + " (" + std::string(MxElementName(f.element)) + " elements, blocks of " +
         std::to_string(f.block) + ", " + std::string(BlockScaleFormatName(f.scale)) + " scales)";
}

}  // namespace

void CheckScaledMma(const MmaProfile& p, const std::string& schedule_text, ResolvedTrial& t) {
  const std::string what = "schedule '" + schedule_text + "' (" + std::string(p.instruction) + ")";
  const bool stored_blocks = LooksBlockScaled(t.storage.name);
  std::optional<BlockScaledFormat> bf;
  if (stored_blocks) bf = ParseBlockScaledFormat(t.storage.name);
  const std::optional<MxElement> el = ElementOf(p.node.input);
  if (p.scale != MmaScale::kNone) {
    // The profile's own format, in carrier's spelling (its canonical name: nvfp4, mxfp4, ...).
    const BlockScaledFormat want = ParseBlockScaledFormat(
        "mx:" + std::string(MxElementName(*el)) + ":" + std::to_string(p.scale_block) +
        (p.scale == MmaScale::kE8m0 ? ":e8m0:floor" : ":ue4m3:rn"));
    const std::string takes = what + " takes block-scaled inputs " + Describe(want) + " (any rule)";
    if (!bf) throw SpecError(takes + ", not --dtype " + t.storage.name);
    if (bf->element != want.element || bf->block != want.block || bf->scale != want.scale ||
        bf->two_d)
      throw SpecError(takes + ", not --dtype " + Describe(*bf));
  } else {
    // An unscaled profile: only fp32 block scales, applied at each promotion (DeepGEMM).
    if (bf->scale != BlockScaleFormat::kFp32) {
      std::string scaled;
      for (const MmaProfile& q : kMmaProfiles)
        if (q.scale != MmaScale::kNone) scaled += (scaled.empty() ? "" : " ") + std::string(q.name);
      throw SpecError(what + " applies no block scales; --dtype " + Describe(*bf) +
                      " needs a block-scaled profile (" + scaled +
                      ") or fp32 scales applied at promotion (mx:ELEM:BLOCK:fp32:amax)");
    }
    if (!el || *el != bf->element)
      throw SpecError(what + " multiplies " + std::string(MmaInputName(p.node.input)) +
                      " values, not the elements of --dtype " + Describe(*bf));
    const std::uint64_t block = static_cast<std::uint64_t>(bf->block);
    if (block % p.k != 0)
      throw SpecError(what + ": --dtype " + Describe(*bf) +
                      " applies its scales at promotion every block, which must be a multiple "
                      "of the instruction's k = " +
                      std::to_string(p.k));
    std::uint64_t& promote = t.schedule.As<orders::MmaParams>().promote;  // resolve: an mma order
    if (promote != 0 && promote != block)
      throw SpecError(what + ": --dtype " + Describe(*bf) +
                      " applies each scale pair at the promotion, so promote:N must be the "
                      "block, " +
                      std::to_string(block));
    promote = block;
  }
  if (t.compute.kind != ComputeKind::kFloat)
    throw SpecError(what + " on block-scaled --dtype " + t.storage.name +
                    " accumulates in fp32 (--acc fp32), not '" + t.compute.text + "'");
  t.scaled_mma = true;
}

double ScaledDot(const MmaProfile& p, std::uint64_t promote, const ScaledOperand& a,
                 const ScaledOperand& b) {
  if (p.scale != MmaScale::kNone) {
    double acc = MmaScaledChain(p, 0.0, a.elements, b.elements, a.scales, b.scales, promote);
    if (a.tensor_scale != 1 || b.tensor_scale != 1) {
      // NVFP4's per-tensor scales, after the unit on its fp32 output: the GEMM's fp32 alpha
      // (TransformerEngine cublaslt_gemm.cu; scaled_dot.hpp says what is not modelled).
      const float alpha = static_cast<float>(a.tensor_scale) * static_cast<float>(b.tensor_scale);
      acc = static_cast<double>(alpha * static_cast<float>(acc));
    }
    return acc;
  }
  // fp32 block scales applied at each promotion (DeepGEMM): blocks of `promote` elements.
  const std::size_t n = a.elements.size();
  if (b.elements.size() != n || promote == 0)
    throw MmaInputError("scaled dot: operands of " + std::to_string(n) + " and " +
                        std::to_string(b.elements.size()) + " elements, promote " +
                        std::to_string(promote));
  const std::size_t blocks = (n + promote - 1) / promote;
  if (a.scales.size() != blocks || b.scales.size() != blocks)
    throw MmaInputError("scaled dot: " + std::to_string(n) + " elements in blocks of " +
                        std::to_string(promote) + " need " + std::to_string(blocks) +
                        " scales each, got " + std::to_string(a.scales.size()) + " and " +
                        std::to_string(b.scales.size()));
  std::vector<ValuePair<double>> pairs(n);
  for (std::size_t i = 0; i < n; ++i) pairs[i] = {a.elements[i], b.elements[i]};
  float total = 0.0f;
  for (std::size_t j = 0; j < blocks; ++j) {
    const std::size_t lo = j * promote, m = n - lo < promote ? n - lo : promote;
    const double acc = MmaFusedChain(p.node, 0.0, pairs.data() + lo, m);  // an fp32 value
    const float s = static_cast<float>(a.scales[j]) * static_cast<float>(b.scales[j]);
    total = std::fma(s, static_cast<float>(acc), total);  // one FFMA
  }
  return total;
}

registry::Replayed RunScaledDot(const ResolvedTrial& t, const TrialInput& in) {
  if (!in.scaled_a || !in.scaled_b)
    throw SpecError("schedule '" + t.spec.schedule + "' on --dtype " + t.storage.name +
                    " needs the input's block scales: this input was not made for it");
  const orders::MmaParams& mma = t.schedule.As<orders::MmaParams>();
  const MmaProfile* p = FindMmaProfile(mma.profile);
  if (!p) throw SpecError("unknown mma profile '" + mma.profile + "'");
  registry::Replayed got;
  try {
    got.components = {
        static_cast<long double>(ScaledDot(*p, mma.promote, *in.scaled_a, *in.scaled_b))};
  } catch (const std::invalid_argument& e) {
    throw SpecError(e.what());
  }
  return got;
}

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR
