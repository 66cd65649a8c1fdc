#include "studies/softmax_passes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

#include "inputs/generators.hpp"
#include "util/stats.hpp"

#if defined(CARRIER_HAVE_SIMD_KERNELS) && CARRIER_HAVE_SIMD_KERNELS
#include "kernels/simd/simd.hpp"
#endif

namespace carrier::studies {

namespace {

// Memory policies: every access to x or y goes through one of them.
struct PlainMemory {
  float Load(const float* p) { return *p; }
  void Store(float* p, float v) { *p = v; }
  float Exp(float v) { return std::exp(v); }
};

struct CountingMemory {
  std::uint64_t loads = 0, stores = 0, exps = 0;
  float Load(const float* p) {
    ++loads;
    return *p;
  }
  void Store(float* p, float v) {
    ++stores;
    *p = v;
  }
  float Exp(float v) {
    ++exps;
    return std::exp(v);
  }
};

template <class M>
void Naive(M& mem, const float* x, float* y, std::size_t n) {
  float d = 0;
  for (std::size_t i = 0; i < n; ++i) d += mem.Exp(mem.Load(x + i));
  for (std::size_t i = 0; i < n; ++i) mem.Store(y + i, mem.Exp(mem.Load(x + i)) / d);
}

template <class M>
void Safe(M& mem, const float* x, float* y, std::size_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, mem.Load(x + i));
  float d = 0;
  for (std::size_t i = 0; i < n; ++i) d += mem.Exp(mem.Load(x + i) - m);
  for (std::size_t i = 0; i < n; ++i) mem.Store(y + i, mem.Exp(mem.Load(x + i) - m) / d);
}

template <class M>
void Online(M& mem, const float* x, float* y, std::size_t n) {
  float m = -std::numeric_limits<float>::infinity();
  float d = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float xi = mem.Load(x + i);
    const float m_new = std::max(m, xi);
    d = d * mem.Exp(m - m_new) + mem.Exp(xi - m_new);
    m = m_new;
  }
  for (std::size_t i = 0; i < n; ++i) mem.Store(y + i, mem.Exp(mem.Load(x + i) - m) / d);
}

// online-branch's update of (m, d) by one element: a new maximum rescales d and adds exp(0) = 1
// (one exp per element, as the authors' kernel), otherwise d gains exp(x - m).
template <class M>
inline void OnlineBranchStep(M& mem, float xi, float& m, float& d) {
  if (xi > m) {
    d = d * mem.Exp(m - xi) + 1.0f;
    m = xi;
  } else {
    d += mem.Exp(xi - m);
  }
}

template <class M>
void OnlineBranch(M& mem, const float* x, float* y, std::size_t n) {
  float m = -std::numeric_limits<float>::infinity();
  float d = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float xi = mem.Load(x + i);
    OnlineBranchStep(mem, xi, m, d);
  }
  for (std::size_t i = 0; i < n; ++i) mem.Store(y + i, mem.Exp(mem.Load(x + i) - m) / d);
}

template <class M>
void RunVariant(std::size_t variant, M& mem, const float* x, float* y, std::size_t n) {
  switch (variant) {
    case 0:
      Naive(mem, x, y, n);
      break;
    case 1:
      Safe(mem, x, y, n);
      break;
    case 2:
      Online(mem, x, y, n);
      break;
    default:
      OnlineBranch(mem, x, y, n);
      break;
  }
}

#if defined(CARRIER_HAVE_SIMD_KERNELS) && CARRIER_HAVE_SIMD_KERNELS
// kernels/simd (Highway, the best target of this CPU; PortableExp, not libm): safe softmax is
// its two-pass log-sum-exp baseline (a max pass, then a sum-of-exp pass) plus the output pass;
// online softmax is the OnlineSoftmax carrier in the native schedule plus the same output pass.
using SimdSoftmaxCarrier = OnlineSoftmax<float, PortableExp>;

void SimdSafe(const float* x, float* y, std::size_t n) {
  const auto state = simd::TwoPassLse<float>(x, n);
  simd::SoftmaxOutputs<float>(x, n, state, y);
}

void SimdOnline(const float* x, float* y, std::size_t n, const Schedule& native) {
  const auto state = simd::Reduce<SimdSoftmaxCarrier, float>(x, n, native);
  simd::SoftmaxOutputs<float>(x, n, state, y);
}
#endif

// The timed variants: the plain loops, then the SIMD kernels when built.
std::vector<std::string> TimedVariants() {
  std::vector<std::string> names = SoftmaxVariants();
#if defined(CARRIER_HAVE_SIMD_KERNELS) && CARRIER_HAVE_SIMD_KERNELS
  names.push_back("simd-safe");
  names.push_back("simd-online");
#endif
  return names;
}

void RunTimed(std::size_t variant, const float* x, float* y, std::size_t n) {
  static PlainMemory mem;
  if (variant < SoftmaxVariants().size()) return RunVariant(variant, mem, x, y, n);
#if defined(CARRIER_HAVE_SIMD_KERNELS) && CARRIER_HAVE_SIMD_KERNELS
  static const Schedule native = simd::NativeSchedule<SimdSoftmaxCarrier, float>();
  if (variant == SoftmaxVariants().size()) return SimdSafe(x, y, n);
  return SimdOnline(x, y, n, native);
#endif
}

// Largest relative difference of y from softmax of x in fp64.
double MaxRelError(const std::vector<float>& x, const std::vector<float>& y) {
  double m = -std::numeric_limits<double>::infinity();
  for (float v : x) m = std::max(m, static_cast<double>(v));
  double d = 0;
  for (float v : x) d += std::exp(static_cast<double>(v) - m);
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = std::exp(static_cast<double>(x[i]) - m) / d;
    const double err = std::isfinite(y[i]) ? std::fabs(y[i] - want) / want
                                           : std::numeric_limits<double>::infinity();
    worst = std::max(worst, err);
  }
  return worst;
}

std::vector<float> Inputs(std::uint64_t n, std::uint64_t seed, double scale) {
  const std::vector<double> g = inputs::Generate(inputs::ParseGenerator("normal"), n, seed);
  std::vector<float> x(n);
  for (std::uint64_t i = 0; i < n; ++i) x[i] = static_cast<float>(g[i] * scale);
  return x;
}

// The worst MaxRelError over `batch` rows of n values.
double RowsMaxRelError(const std::vector<float>& x, const std::vector<float>& y, std::uint64_t n,
                       std::uint64_t batch) {
  double worst = 0;
  for (std::uint64_t r = 0; r < batch; ++r) {
    const std::vector<float> xr(x.begin() + r * n, x.begin() + (r + 1) * n);
    const std::vector<float> yr(y.begin() + r * n, y.begin() + (r + 1) * n);
    worst = std::max(worst, MaxRelError(xr, yr));
  }
  return worst;
}

std::vector<SoftmaxTiming> Summarise(const std::vector<std::string>& names,
                                     const std::vector<std::vector<double>>& times,
                                     const std::vector<double>& errors, std::uint64_t n,
                                     std::uint64_t batch, std::uint64_t repeats) {
  std::vector<SoftmaxTiming> out;
  for (std::size_t variant = 0; variant < names.size(); ++variant) {
    SoftmaxTiming t;
    t.variant = names[variant];
    t.max_rel_error = errors[variant];
    t.n = n;
    t.batch = batch;
    t.repeats = repeats;
    t.min_seconds = *std::min_element(times[variant].begin(), times[variant].end());
    t.median_seconds = util::Median(times[variant]);
    out.push_back(t);
  }
  return out;
}

// Inserts (v, i) into the k best so far (descending; a tie keeps the earlier, lower index).
void TopKInsert(float v, std::uint32_t i, std::uint64_t k, float* top, std::uint32_t* index,
                std::uint64_t& filled) {
  if (filled == k && !(v > top[k - 1])) return;
  std::uint64_t j = filled < k ? filled++ : k - 1;
  while (j > 0 && v > top[j - 1]) {
    top[j] = top[j - 1];
    index[j] = index[j - 1];
    --j;
  }
  top[j] = v;
  index[j] = i;
}

// safe-topk: safe softmax into y, then a TopK pass reading y back.
template <class M>
void SafeTopK(M& mem, const float* x, float* y, std::size_t n, std::uint64_t k, float* top,
              std::uint32_t* index) {
  Safe(mem, x, y, n);
  std::uint64_t filled = 0;
  for (std::size_t i = 0; i < n; ++i)
    TopKInsert(mem.Load(y + i), static_cast<std::uint32_t>(i), k, top, index, filled);
}

// online-topk: one pass over x (online-branch's normalizer and the K largest x), then K outputs.
template <class M>
void OnlineTopK(M& mem, const float* x, std::size_t n, std::uint64_t k, float* top,
                std::uint32_t* index) {
  float m = -std::numeric_limits<float>::infinity();
  float d = 0;
  std::uint64_t filled = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float xi = mem.Load(x + i);
    OnlineBranchStep(mem, xi, m, d);
    TopKInsert(xi, static_cast<std::uint32_t>(i), k, top, index, filled);
  }
  for (std::uint64_t j = 0; j < filled; ++j) mem.Store(top + j, mem.Exp(top[j] - m) / d);
}

// safe-topk-fused: the maximum pass, then one pass for the normalizer and the K largest x.
template <class M>
void SafeTopKFused(M& mem, const float* x, std::size_t n, std::uint64_t k, float* top,
                   std::uint32_t* index) {
  float m = -std::numeric_limits<float>::infinity();
  for (std::size_t i = 0; i < n; ++i) m = std::max(m, mem.Load(x + i));
  float d = 0;
  std::uint64_t filled = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float xi = mem.Load(x + i);
    d += mem.Exp(xi - m);
    TopKInsert(xi, static_cast<std::uint32_t>(i), k, top, index, filled);
  }
  for (std::uint64_t j = 0; j < filled; ++j) mem.Store(top + j, mem.Exp(top[j] - m) / d);
}

template <class M>
void RunTopK(std::size_t variant, M& mem, const float* x, float* y, std::size_t n, std::uint64_t k,
             float* top, std::uint32_t* index) {
  if (variant == 0) return SafeTopK(mem, x, y, n, k, top, index);
  if (variant == 1) return SafeTopKFused(mem, x, n, k, top, index);
  OnlineTopK(mem, x, n, k, top, index);
}

// Largest relative difference of each row's K outputs from the K largest fp64 softmax values.
double TopKMaxRelError(const std::vector<float>& x, std::uint64_t n, std::uint64_t batch,
                       std::uint64_t k, const std::vector<float>& top) {
  double worst = 0;
  for (std::uint64_t r = 0; r < batch; ++r) {
    const float* row = x.data() + r * n;
    double m = -std::numeric_limits<double>::infinity();
    for (std::uint64_t i = 0; i < n; ++i) m = std::max(m, static_cast<double>(row[i]));
    double d = 0;
    std::vector<double> want(n);
    for (std::uint64_t i = 0; i < n; ++i) d += std::exp(static_cast<double>(row[i]) - m);
    for (std::uint64_t i = 0; i < n; ++i) want[i] = std::exp(static_cast<double>(row[i]) - m) / d;
    std::sort(want.begin(), want.end(), std::greater<>());
    for (std::uint64_t j = 0; j < std::min(k, n); ++j) {
      const double got = top[r * k + j];
      worst = std::max(worst, std::isfinite(got) ? std::fabs(got - want[j]) / want[j]
                                                 : std::numeric_limits<double>::infinity());
    }
  }
  return worst;
}

}  // namespace

const std::vector<std::string>& SoftmaxVariants() {
  static const std::vector<std::string> names = {"naive", "safe", "online", "online-branch"};
  return names;
}

std::vector<SoftmaxPassCount> CountSoftmaxPasses(std::uint64_t n, std::uint64_t seed,
                                                 double scale) {
  const std::vector<float> x = Inputs(n, seed, scale);
  std::vector<SoftmaxPassCount> out;
  for (std::size_t variant = 0; variant < SoftmaxVariants().size(); ++variant) {
    std::vector<float> y(n);
    CountingMemory mem;
    RunVariant(variant, mem, x.data(), y.data(), n);
    SoftmaxPassCount c;
    c.variant = SoftmaxVariants()[variant];
    c.loads_per_element = static_cast<double>(mem.loads) / static_cast<double>(n);
    c.stores_per_element = static_cast<double>(mem.stores) / static_cast<double>(n);
    c.exps_per_element = static_cast<double>(mem.exps) / static_cast<double>(n);
    c.max_rel_error = MaxRelError(x, y);
    out.push_back(c);
  }
  return out;
}

std::vector<SoftmaxTiming> TimeSoftmax(std::uint64_t n, std::uint64_t repeats, std::uint64_t seed,
                                       double scale, std::uint64_t batch) {
  const std::vector<float> x = Inputs(n * batch, seed, scale);
  std::vector<float> y(n * batch);
  const std::vector<std::string> names = TimedVariants();
  const std::size_t count = names.size();
  std::vector<std::vector<double>> times(count);
  std::vector<double> errors(count);
  auto run = [&](std::size_t variant) {
    for (std::uint64_t r = 0; r < batch; ++r)
      RunTimed(variant, x.data() + r * n, y.data() + r * n, n);
  };
  for (std::size_t variant = 0; variant < count; ++variant) {  // warm-up and check
    run(variant);
    errors[variant] = RowsMaxRelError(x, y, n, batch);
  }
  volatile float sink = 0;  // keeps the outputs observable
  for (std::uint64_t r = 0; r < repeats; ++r) {
    for (std::size_t j = 0; j < count; ++j) {
      const std::size_t variant = (j + r) % count;
      times[variant].push_back(util::Seconds([&] { run(variant); }));
      sink = sink + y[n * batch / 2];
    }
  }
  return Summarise(names, times, errors, n, batch, repeats);
}

const std::vector<std::string>& TopKVariants() {
  static const std::vector<std::string> names = {"safe-topk", "safe-topk-fused", "online-topk"};
  return names;
}

std::vector<SoftmaxPassCount> CountTopKPasses(std::uint64_t n, std::uint64_t seed, double scale,
                                              std::uint64_t k) {
  const std::vector<float> x = Inputs(n, seed, scale);
  std::vector<SoftmaxPassCount> out;
  for (std::size_t variant = 0; variant < TopKVariants().size(); ++variant) {
    std::vector<float> y(n), top(k);
    std::vector<std::uint32_t> index(k);
    CountingMemory mem;
    RunTopK(variant, mem, x.data(), y.data(), n, k, top.data(), index.data());
    SoftmaxPassCount c;
    c.variant = TopKVariants()[variant];
    c.loads_per_element = static_cast<double>(mem.loads) / static_cast<double>(n);
    c.stores_per_element = static_cast<double>(mem.stores) / static_cast<double>(n);
    c.exps_per_element = static_cast<double>(mem.exps) / static_cast<double>(n);
    c.max_rel_error = TopKMaxRelError(x, n, 1, k, top);
    out.push_back(c);
  }
  return out;
}

std::vector<SoftmaxTiming> TimeSoftmaxTopK(std::uint64_t n, std::uint64_t batch,
                                           std::uint64_t repeats, std::uint64_t seed, double scale,
                                           std::uint64_t k) {
  const std::vector<float> x = Inputs(n * batch, seed, scale);
  std::vector<float> y(n);  // safe-topk's full softmax of one row (reused: it is read back at once)
  std::vector<float> top(k * batch);
  std::vector<std::uint32_t> index(k * batch);
  const std::vector<std::string>& names = TopKVariants();
  std::vector<std::vector<double>> times(names.size());
  std::vector<double> errors(names.size());
  PlainMemory mem;
  auto run = [&](std::size_t variant) {
    for (std::uint64_t r = 0; r < batch; ++r)
      RunTopK(variant, mem, x.data() + r * n, y.data(), n, k, top.data() + r * k,
              index.data() + r * k);
  };
  for (std::size_t variant = 0; variant < names.size(); ++variant) {
    run(variant);
    errors[variant] = TopKMaxRelError(x, n, batch, k, top);
  }
  volatile float sink = 0;
  for (std::uint64_t r = 0; r < repeats; ++r) {
    for (std::size_t j = 0; j < names.size(); ++j) {
      const std::size_t variant = (j + r) % names.size();
      times[variant].push_back(util::Seconds([&] { run(variant); }));
      sink = sink + top[0];
    }
  }
  return Summarise(names, times, errors, n, batch, repeats);
}

}  // namespace carrier::studies
