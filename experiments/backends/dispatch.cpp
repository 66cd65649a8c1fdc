// The op -> kernel lookup of the fast backends (backends.hpp): the op table names, per entry,
// the function that runs it on each backend; an op without one is refused with one line that
// lists the ops the backend has.
#include "backends/backends.hpp"
#include "registry/registry.hpp"

namespace carrier::backends {

Result RunBackend(const std::string& backend, const Request& request) {
  const registry::Entry* e = registry::Find(request.op);
  const registry::BackendEntry* b = e ? e->Backend(backend) : nullptr;
  if (!b)
    throw Unavailable("backend " + backend + " has no kernel for op '" + request.op +
                      "' (ops it runs: " + registry::Join(registry::BackendOps(backend)) + ")");
  return b->run(request);
}

Result RunSimd(const Request& request) { return RunBackend("simd", request); }
Result RunOmp(const Request& request) { return RunBackend("omp", request); }
Result RunCuda(const Request& request) { return RunBackend("cuda", request); }

}  // namespace carrier::backends
