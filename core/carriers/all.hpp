// core/carriers/all.hpp: every carrier, for drivers and tests that need the whole set.
#pragma once

#include "core/carriers/affine.hpp"
#include "core/carriers/argmax.hpp"
#include "core/carriers/compensated.hpp"
#include "core/carriers/dot.hpp"
#include "core/carriers/flash_row.hpp"
#include "core/carriers/max.hpp"
#include "core/carriers/online_softmax.hpp"
#include "core/carriers/pairs.hpp"
#include "core/carriers/scaled_norm2.hpp"
#include "core/carriers/sum.hpp"
#include "core/carriers/welford.hpp"
