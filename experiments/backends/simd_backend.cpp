// The simd backend of eval and sweep (backends.hpp).
#include "backends/backends.hpp"

namespace carrier::backends {

Result RunSimd(const Request&) {
  throw Unavailable("backend simd is not built in this version of carrier");
}

}  // namespace carrier::backends
