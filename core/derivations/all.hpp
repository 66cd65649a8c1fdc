// core/derivations/all.hpp: every worked Third Homomorphism Theorem derivation (core/derive.hpp)
// and the two counterexamples.
#pragma once

#include "core/derivations/affine.hpp"
#include "core/derivations/counterexamples.hpp"
#include "core/derivations/max.hpp"
#include "core/derivations/online_softmax.hpp"
#include "core/derivations/sum.hpp"
#include "core/derivations/welford.hpp"
#include "core/derive.hpp"
