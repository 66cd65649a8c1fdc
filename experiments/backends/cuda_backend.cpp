// The cuda backend of eval and sweep (backends.hpp): kernels/cuda through its plain API.
//
// Reductions: the carriers of CARRIER_CUDA_KERNEL_CARRIERS (backends.hpp; the op table names
// which ops use them: sum neumaier max argmax lse welford norm2); storage/compute fp16/fp32,
// bf16/fp32, fp32/fp32, fp32/fp64, fp64/fp64; lse with the portable exp only (the exp whose bits
// the replay reproduces). The schedule must be a cuda:... schedule (empty: kDefaultSchedule); the
// executed schedule is returned in canonical form and BuildTree + ReplayOracle of it give the
// kernel's bits. Attention: `a` holds q, k, v (seq_len x head_dim each, concatenated), storage fp16
// or bf16, compute fp32, exp portable or fast, schedule blocked:BC:lift (BC in 16 32 64 128; empty:
// blocked:64:lift), block_r 64, not causal; the components are the seq_len x head_dim outputs.
// Anything else, no GPU, or a build without nvcc: Unavailable with a one-line reason.
#include "backends/backends.hpp"
#include "core/carriers/all.hpp"

#if defined(CARRIER_HAVE_CUDA_KERNELS) && CARRIER_HAVE_CUDA_KERNELS

#include <string>
#include <type_traits>
#include <vector>

#include "core/attention.hpp"
#include "core/carriers/all.hpp"
#include "core/schedule.hpp"
#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/reduce.hpp"
#include "precision/bfloat16.hpp"
#include "precision/half.hpp"

namespace carrier::backends {
namespace {

constexpr const char* kDefaultSchedule = "cuda:256:4:blocked:shfl:seq:auto";

template <class C, class S>
Result RunCarrier(const std::vector<S>& x, const CudaSchedule& s) {
  Result out;
  out.schedule = ToString(s);
  try {
    const auto state = cuda::Reduce<C, S>(x.data(), x.size(), s, &out.seconds);
    const auto r = C::Finalize(state);
    using T = typename C::Scalar;
    if constexpr (std::is_same_v<C, ArgMax<T>>) {
      out.components = {static_cast<long double>(r.value)};
      out.index = r.index;
    } else if constexpr (std::is_same_v<C, Welford<T>>) {
      out.components = {static_cast<long double>(r.mean),
                        static_cast<long double>(r.var_population),
                        static_cast<long double>(r.var_sample)};
    } else if constexpr (std::is_same_v<C, cuda::LsePortable<T>>) {
      out.components = {static_cast<long double>(r.lse)};
    } else {
      out.components = {static_cast<long double>(r)};
    }
  } catch (const cuda::Unavailable& e) {
    throw Unavailable(e.what());
  }
  return out;
}

template <class S, class Exp>
Result RunAttentionAs(const Request& req, const AttentionShape& shape) {
  const std::size_t elems = shape.seq_len * shape.head_dim;
  std::vector<S> qkv(3 * elems);
  for (std::size_t i = 0; i < qkv.size(); ++i) qkv[i] = S(req.a[i]);
  Result out;
  out.schedule = ToString(AttentionKernelOrder(shape));
  try {
    const std::vector<float> o = cuda::AttentionForward<S, Exp>(
        qkv.data(), qkv.data() + elems, qkv.data() + 2 * elems, shape, &out.seconds);
    out.components.assign(o.begin(), o.end());
  } catch (const cuda::Unavailable& e) {
    throw Unavailable(e.what());
  }
  return out;
}

}  // namespace

Result RunCudaAttention(const Request& req) {
  const std::size_t d = req.head_dim;
  if (d == 0 || req.a.size() % (3 * d) != 0)
    throw Unavailable("backend cuda: attention needs q, k, v of seq_len x head_dim each (got " +
                      std::to_string(req.a.size()) + " values, head_dim " + std::to_string(d) +
                      ")");
  if (req.acc != "fp32") throw Unavailable("backend cuda: attention computes in fp32 only");
  const std::string text = req.schedule.empty() ? "blocked:64:lift" : req.schedule;
  AttentionShape shape;
  try {
    shape = AttentionShapeFromSchedule(text, req.a.size() / (3 * d), d, false);
    CheckAttentionKernelShape(shape);
  } catch (const ScheduleError& e) {
    throw Unavailable(std::string("backend cuda: ") + e.what());
  }
  const bool portable = req.exp == "portable";
  if (!portable && req.exp != "fast")
    throw Unavailable("backend cuda: attention runs with --exp portable or fast, got '" + req.exp +
                      "'");
  if (req.storage == "fp16")
    return portable ? RunAttentionAs<Half, PortableExp>(req, shape)
                    : RunAttentionAs<Half, FastExp>(req, shape);
  if (req.storage == "bf16")
    return portable ? RunAttentionAs<BFloat16, PortableExp>(req, shape)
                    : RunAttentionAs<BFloat16, FastExp>(req, shape);
  throw Unavailable("backend cuda: attention takes fp16 or bf16 inputs, got " + req.storage);
}

template <template <class> class CT>
Result RunCudaCarrier(const Request& request) {
  const std::string text = request.schedule.empty() ? kDefaultSchedule : request.schedule;
  const Schedule s = ParseSchedule(text);
  if (s.kind() != ScheduleKind::kCuda)
    throw Unavailable("backend cuda executes cuda:... schedules only (" +
                      std::string(kCudaScheduleGrammar) + "), got '" + text + "'");
  if constexpr (std::is_same_v<CT<float>, PortableLse<float>>) {
    if (request.exp != "portable")
      throw Unavailable(
          "backend cuda runs lse with --exp portable only (the replayable exp), "
          "got '" +
          request.exp + "'");
  }
  auto run = [&]<class T, class S>() {
    std::vector<S> x(request.a.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = S(request.a[i]);  // exact: already rounded
    return RunCarrier<CT<T>, S>(x, s.As<orders::CudaParams>().cuda);
  };
  const std::string& st = request.storage;
  const std::string& acc = request.acc;
  if (st == "fp16" && acc == "fp32") return run.template operator()<float, Half>();
  if (st == "bf16" && acc == "fp32") return run.template operator()<float, BFloat16>();
  if (st == "fp32" && acc == "fp32") return run.template operator()<float, float>();
  if (st == "fp32" && acc == "fp64") return run.template operator()<double, float>();
  if (st == "fp64" && acc == "fp64") return run.template operator()<double, double>();
  throw Unavailable("backend cuda has no storage/compute pair " + st + "/" + acc +
                    " (pairs: fp16/fp32 bf16/fp32 fp32/fp32 fp32/fp64 fp64/fp64)");
}

#define CARRIER_INSTANTIATE(CT) template Result RunCudaCarrier<CT>(const Request&);
CARRIER_CUDA_KERNEL_CARRIERS(CARRIER_INSTANTIATE)
#undef CARRIER_INSTANTIATE

}  // namespace carrier::backends

#else

namespace carrier::backends {

namespace {
[[noreturn]] void CudaNotBuilt() {
  throw Unavailable(
      "no GPU: backend cuda is not built (nvcc was not found at configure time, or "
      "CARRIER_WITH_CUDA=OFF)");
}
}  // namespace

template <template <class> class CT>
Result RunCudaCarrier(const Request&) {
  CudaNotBuilt();
}
Result RunCudaAttention(const Request&) { CudaNotBuilt(); }

#define CARRIER_INSTANTIATE(CT) template Result RunCudaCarrier<CT>(const Request&);
CARRIER_CUDA_KERNEL_CARRIERS(CARRIER_INSTANTIATE)
#undef CARRIER_INSTANTIATE

}  // namespace carrier::backends

#endif
