// The omp backend of eval and sweep (backends.hpp).
#include "backends/backends.hpp"

namespace carrier::backends {

Result RunOmp(const Request&) {
  throw Unavailable("backend omp is not built in this version of carrier");
}

}  // namespace carrier::backends
