// experiments/user_carriers/range.cpp: registers Range (range.hpp) as `range`: carrier laws
// range, carrier derive range, carrier eval --op range (every schedule).
#include "user_carriers/range.hpp"

#include "ops/register.hpp"

CARRIER_REGISTER_DERIVABLE("range", carrier::user::Range, carrier::user::RangeDerivation,
                           "running (min, max) of one column; result max - min")
