// experiments/run/memory.cpp: run/memory.hpp.
#include "run/memory.hpp"

#if defined(CARRIER_HAVE_MPFR) && CARRIER_HAVE_MPFR

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "core/orders/shape.hpp"
#include "core/schedule.hpp"
#include "inputs/generators.hpp"
#include "precision/stored_column.hpp"
#include "registry/registry.hpp"
#include "run/tree_shape.hpp"

namespace carrier::run {

namespace {

std::uint64_t ComputeValueBytes(const ResolvedTrial& t) {
  const ComputeSpec& c = t.mixed ? t.inner : t.compute;
  // register.hpp CachedInputs: fp64, or an emulated format holding every stored value under a
  // deterministic rounding, reads the stored doubles in place.
  const bool in_place = !t.mixed && t.op->input_is_scalar &&
                        (c.kind == ComputeKind::kDouble ||
                         (c.kind == ComputeKind::kEmulated && t.rounding != Rounding::kStochastic &&
                          ValuesWithin(t.storage, c.format)));
  if (in_place) return 0;
  switch (c.kind) {
    case ComputeKind::kFloat:
      return 4;
    case ComputeKind::kDouble:
    case ComputeKind::kEmulated:
      return 8;
    case ComputeKind::kFloat128:
      return 16;
    case ComputeKind::kMpfr:
      // mpfr_t (32 bytes) and its limbs in a heap block with the allocator's 16-byte header.
      return 32 + 16 + 8 * static_cast<std::uint64_t>((c.mpfr_bits + 63) / 64);
  }
  return 8;
}

// "1.5 GiB" style, for the message.
std::string Gib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1ULL << 30));
  return buf;
}

std::uint64_t ReadU64(const std::string& path) {
  std::ifstream f(path);
  std::string word;
  if (!(f >> word) || word == "max") return 0;
  try {
    return std::stoull(word);
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

std::uint64_t TrialBytes(const ResolvedTrial& t, std::uint64_t n, const std::string& generator) {
  std::uint64_t values = n;  // stored inputs
  std::uint64_t bytes = 0;
  const registry::Entry& e = *t.op;
  const bool walked = t.spec.engine == "fast" && e.replay && !t.mixed &&
                      t.spec.backend == "replay" && !t.adaptive && IsShapeWalked(t.schedule, n);
  switch (e.input) {
    case registry::InputKind::kAttention:
      values = 3 * n * std::max<std::uint64_t>(t.spec.head_dim, 1);
      break;
    case registry::InputKind::kPairs:
    case registry::InputKind::kColumn: {
      // Held in StoredColumns (run/trial.hpp; pairs: two): 1, 2, 4 or 8 bytes per value by the
      // storage format. The fast engine's walk reads them a window at a time; every other
      // replay, and a reference that does not read the columns by chunks, gets them decoded (8
      // bytes per value) and then converted as below. The bounds read them by chunks.
      const std::uint64_t columns = e.input == registry::InputKind::kPairs ? 2 : 1;
      const StoredColumn::Layout layout = StoredColumn::LayoutFor(&t.storage);
      const std::uint64_t stored = layout == StoredColumn::Layout::kCode8    ? 1
                                   : layout == StoredColumn::Layout::kCode16 ? 2
                                   : layout == StoredColumn::Layout::kFloat  ? 4
                                                                             : 8;
      const std::uint64_t decoded = layout == StoredColumn::Layout::kDouble ? 0 : 8;
      std::uint64_t per_value = stored;
      if (walked) {  // walked implies the fast engine, whose reference is fast_reference
        if (!e.column_reference) per_value += decoded;
      } else {
        per_value += decoded + ComputeValueBytes(t);
      }
      // A generator that makes all its values before they are stored (run/trial.cpp MakeInput).
      if (!generator.empty()) {
        try {
          if (!inputs::Chunked(inputs::ParseGenerator(generator))) per_value += 8;
        } catch (const std::exception&) {  // a bad generator is refused elsewhere
        }
      }
      bytes += columns * per_value * n;
      if (!walked) bytes += 2 * n * 96;  // chains/combines (48) + ComputeStats (32) + hashes (16)
      return bytes;
    }
  }
  bytes += 8 * values + ComputeValueBytes(t) * values;
  if (!walked) bytes += 2 * n * 96;
  return bytes;
}

std::uint64_t AvailableBytes() {
  std::uint64_t avail = 0;
  {
    std::ifstream f("/proc/meminfo");
    std::string line;
    while (std::getline(f, line)) {
      if (line.rfind("MemAvailable:", 0) != 0) continue;
      std::istringstream is(line.substr(13));
      std::uint64_t kb = 0;
      if (is >> kb) avail = kb * 1024;
    }
  }
  const std::uint64_t max = ReadU64("/sys/fs/cgroup/memory.max");
  if (max > 0) {
    const std::uint64_t cur = ReadU64("/sys/fs/cgroup/memory.current");
    const std::uint64_t left = max > cur ? max - cur : 0;
    avail = avail == 0 ? left : std::min(avail, left);
  }
  return avail;
}

void CheckTrialMemory(const ResolvedTrial& t, std::uint64_t n, std::uint64_t copies,
                      const std::string& generator) {
  const std::uint64_t avail = AvailableBytes();
  if (avail == 0) return;
  const std::uint64_t need = TrialBytes(t, n, generator) * std::max<std::uint64_t>(copies, 1);
  if (need <= avail) return;
  throw SpecError("n = " + std::to_string(n) + " (" + t.spec.op + ", " + t.compute.text + ", " +
                  ToString(t.schedule) + ", engine " + t.spec.engine + ") needs about " +
                  std::to_string(need) + " bytes (" + Gib(need) +
                  (copies > 1 ? ", " + std::to_string(copies) + " inputs at once" : "") +
                  ") but only " + std::to_string(avail) + " (" + Gib(avail) + ") are available");
}

}  // namespace carrier::run

#endif  // CARRIER_HAVE_MPFR
