#include "precision/mpfr_scalar.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <cmath>
#include <stdexcept>
#include <string>

namespace carrier {

mpfr_prec_t Mpfr::CheckedPrecision(long bits) {
  if (bits < MPFR_PREC_MIN || bits > MPFR_PREC_MAX)
    throw std::invalid_argument("Mpfr: precision " + std::to_string(bits) +
                                " bits out of range: expected " +
                                std::to_string(static_cast<long>(MPFR_PREC_MIN)) + ".." +
                                std::to_string(static_cast<long>(MPFR_PREC_MAX)));
  return static_cast<mpfr_prec_t>(bits);
}

MpfrPrecisionScope::MpfrPrecisionScope(long bits) : saved_(mpfr_detail::WorkingPrecisionRef()) {
  mpfr_detail::WorkingPrecisionRef() = Mpfr::WithPrecision(bits).Precision();
}

void MpfrReleaseThreadCaches() { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }

Mpfr Mpfr::FromString(std::string_view text, long bits) {
  Mpfr r = WithPrecision(bits == 0 ? MpfrWorkingPrecision() : bits);
  const std::string s(text);
  char* end = nullptr;
  // Base 0: decimal, or hex after "0x" (MPFR reads both, with exponent 'e' or 'p').
  if (!s.empty()) mpfr_strtofr(r.v_, s.c_str(), &end, 0, MPFR_RNDN);
  if (s.empty() || end != s.c_str() + s.size())
    throw std::invalid_argument("Mpfr: '" + s +
                                "' is not a number: expected decimal or hex float text");
  return r;
}

std::string Mpfr::ToString(int digits) const {
  if (mpfr_nan_p(v_)) return "nan";
  if (mpfr_inf_p(v_)) return mpfr_signbit(v_) ? "-inf" : "inf";
  // Enough decimal digits to read the value back: 1 + ceil(p log10 2).
  const int n =
      digits > 0
          ? digits
          : 1 + static_cast<int>(std::ceil(static_cast<double>(Precision()) * 0.30102999566398120));
  char* buffer = nullptr;
  if (mpfr_asprintf(&buffer, "%.*Rg", n, v_) < 0 || buffer == nullptr) return "?";
  std::string out(buffer);
  mpfr_free_str(buffer);
  return out;
}

}  // namespace carrier

#endif  // CARRIER_HAVE_MPFR
