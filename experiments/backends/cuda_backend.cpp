// The cuda backend of eval and sweep (backends.hpp).
#include "backends/backends.hpp"

namespace carrier::backends {

Result RunCuda(const Request&) {
  throw Unavailable("backend cuda is not built in this version of carrier");
}

}  // namespace carrier::backends
