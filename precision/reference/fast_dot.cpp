// precision/reference/fast_dot.cpp: ReferenceDotFast (contract in fast_sum.hpp).
#include "precision/reference/fast_sum.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "precision/reference/chunk_sum.hpp"
#include "precision/reference/reference_internal.hpp"

namespace carrier::reference {

namespace {

// ScanProducts reads a ValuePair<double> array as doubles with stride 2.
static_assert(sizeof(ValuePair<double>) == 2 * sizeof(double));

void ScanDotPairs(ChunkSum& c, std::span<const ValuePair<double>> x) {
  if (x.empty()) return;
  const double* ab = &x.front().a;
  ScanProductsParallel(c, ab, ab + 1, x.size(), 2);  // split: PassThreads()
}
void ScanDotPairs(ChunkSum& c, const StoredColumn& a, const StoredColumn& b) {
  ScanProductsParallel(c, a, b);  // split: PassThreads()
}

// The definition, for the inputs the scan cannot serve (columns decoded for it alone).
Reference DotDefinition(std::span<const ValuePair<double>> x) { return ReferenceDot(x); }
Reference DotDefinition(const StoredColumn& a, const StoredColumn& b) {
  return ReferenceDot(ZipPairs(a.ToDoubles(), b.ToDoubles()));
}

// X...: one span of pairs, or two StoredColumns (the same pairs, the same Reference).
template <class... X>
Reference DotFast(std::uint64_t n, const X&... x) {
  WideExponentRange range;
  const auto chunks = std::make_unique<ChunkSum>();  // about 152 KB: not on the stack
  ScanDotPairs(*chunks, x...);
  if (chunks->OutOfProductRange()) return DotDefinition(x...);  // NaN, inf and the range edges
  chunks->Finish();
  // ReferenceDot's exact tier (reference_exact.cpp): the exact sum of the exact products at
  // SumExact's precision, its roundings, certificate exact.
  Reference r = internal::Start("dot", n);
  MpfrValue s = internal::ToExact(chunks->Products(), chunks->ProductTop(), chunks->ProductLow(),
                                  static_cast<std::size_t>(n));
  const long bits = s.precision();
  internal::AddExact(r, std::move(s));
  internal::MarkExact(r, bits, internal::kExactLog2);
  return r;
}

}  // namespace

Reference ReferenceDotFast(std::span<const ValuePair<double>> x) { return DotFast(x.size(), x); }

Reference ReferenceDotFast(const StoredColumn& a, const StoredColumn& b) {
  if (a.size() != b.size())
    throw std::invalid_argument("ReferenceDotFast: columns of " + std::to_string(a.size()) +
                                " and " + std::to_string(b.size()) + " values");
  return DotFast(a.size(), a, b);
}

}  // namespace carrier::reference

#endif
