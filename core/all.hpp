// core/all.hpp: every core header (the nvcc compile test includes this).
#pragma once

#include "core/carrier.hpp"
#include "core/carriers/all.hpp"
#include "core/exp_policy.hpp"
#include "core/laws.hpp"
#include "core/merge_tree.hpp"
#include "core/platform.hpp"
#include "core/replay_oracle.hpp"
#include "core/scalar.hpp"
#include "core/schedule.hpp"
