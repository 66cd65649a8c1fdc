// precision/scalars.hpp: every compute scalar of the precision layer, ready for a carrier.
//
//   Half, BFloat16         16-bit storage types with CUDA's arithmetic (float, rounded once);
//   EmulatedOracle<Tag, R>       any emulable Format (fp8e4m3, fp8e5m2, fp16, bf16, tf32, fp32,
//                          custom:...) and rounding mode, correctly rounded after every op;
//                          EmulatedOracleDynamic takes both from the thread's EmulationScope;
//   Mpfr                   MPFR with runtime precision (MpfrPrecisionScope), when MPFR is built
//                          in (CARRIER_HAVE_MPFR);
//   float, double          the builtin types (core/scalar.hpp's primary ScalarTraits).
// Each header's contract says how its operations round.
#pragma once

#include "precision/bfloat16.hpp"
#include "precision/emulated_oracle.hpp"
#include "precision/half.hpp"
#include "precision/mpfr_scalar.hpp"
#include "precision/scalar_traits.hpp"
