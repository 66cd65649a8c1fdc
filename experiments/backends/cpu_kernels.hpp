// experiments/backends/cpu_kernels.hpp: the part of the simd and omp backends they share:
// request checks, conversion to the storage type, and running one carrier (backends.hpp has
// the contract). `Kernels` is a policy with Reduce<C, TS>(x, n, s), ReduceDot<TS>(a, b, n, s)
// and Executed<C, TS>(s) (the schedule actually run, or ScheduleError).
#pragma once

#include <chrono>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/backends.hpp"
#include "core/schedule.hpp"
#include "kernels/simd/simd.hpp"

namespace carrier::backends::cpu {

template <class TS>
std::vector<TS> ToStorage(std::span<const double> v) {
  std::vector<TS> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_same_v<TS, float> || std::is_same_v<TS, double>) {
      out[i] = static_cast<TS>(v[i]);
    } else {
      out[i] = TS(v[i]);  // exact: the values are already rounded to the storage format
    }
  }
  return out;
}

// Calls body.template operator()<TS>() for the storage type of a built storage/compute pair.
template <class Body>
Result ByStorage(const Request& r, const char* backend, Body&& body) {
  const std::string pair = r.storage + "/" + r.acc;
  if (pair == "fp32/fp32") return body.template operator()<float>();
  if (pair == "fp64/fp64") return body.template operator()<double>();
  if (pair == "fp16/fp32") return body.template operator()<Half>();
  if (pair == "bf16/fp32") return body.template operator()<BFloat16>();
  throw Unavailable(std::string(backend) + ": storage/compute " + pair +
                    " is not built (fp32/fp32, fp64/fp64, fp16/fp32, bf16/fp32)");
}

template <class F>
auto Timed(Result& out, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  auto v = f();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return v;
}

template <class Kernels, class C, class TS>
typename C::State ReduceTimed(const Request& r, const std::vector<TS>& a, Result& out) {
  Schedule s;
  try {
    s = Kernels::template Executed<C, TS>(r.schedule);
  } catch (const ScheduleError& e) {
    throw Unavailable(e.what());
  }
  out.schedule = ToString(s);
  return Timed(out, [&] { return Kernels::template Reduce<C, TS>(a.data(), a.size(), s); });
}

inline void RequirePortable(const Request& r, const char* backend) {
  if (r.exp != "portable")
    throw Unavailable(std::string(backend) + ": " + r.op + " runs with --exp portable only (the " +
                      "vector exp that equals the scalar one bit for bit), got '" + r.exp + "'");
}

template <class Kernels, template <class> class CT>
Result RunCarrier(const Request& r, const char* backend) {
  return ByStorage(r, backend, [&]<class TS>() {
    using T = simd::Compute<TS>;
    using C = CT<T>;
    if constexpr (std::is_same_v<C, PortableLse<T>>) RequirePortable(r, backend);
    const std::vector<TS> a = ToStorage<TS>(r.a);
    Result out;
    const auto res = C::Finalize(ReduceTimed<Kernels, C, TS>(r, a, out));
    if constexpr (requires { res.index; }) {
      out.components = {static_cast<long double>(res.value)};
      out.index = res.index;
    } else {
      for (const auto& v : C::Components(res))
        out.components.push_back(static_cast<long double>(v));
    }
    return out;
  });
}

// Softmax: the lse state by the kernel, then one output per input (simd::SoftmaxOutputs).
template <class Kernels>
Result RunSoftmax(const Request& r, const char* backend) {
  RequirePortable(r, backend);
  return ByStorage(r, backend, [&]<class TS>() {
    using T = simd::Compute<TS>;
    const std::vector<TS> a = ToStorage<TS>(r.a);
    Result out;
    const auto state = ReduceTimed<Kernels, PortableLse<T>, TS>(r, a, out);
    std::vector<T> y(a.size());
    const double reduce_seconds = out.seconds;
    Timed(out, [&] {
      simd::SoftmaxOutputs<TS>(a.data(), a.size(), state, y.data());
      return 0;
    });
    out.seconds += reduce_seconds;
    for (T v : y) out.components.push_back(static_cast<long double>(v));
    return out;
  });
}

template <class Kernels>
Result RunDot(const Request& r, const char* backend) {
  if (r.b.size() != r.a.size())
    throw Unavailable(std::string(backend) + ": dot needs two operands of the same length");
  return ByStorage(r, backend, [&]<class TS>() {
    using T = simd::Compute<TS>;
    const std::vector<TS> a = ToStorage<TS>(r.a), b = ToStorage<TS>(r.b);
    Result out;
    Schedule s;
    try {
      s = Kernels::template Executed<Dot<T>, TS>(r.schedule);
    } catch (const ScheduleError& e) {
      throw Unavailable(e.what());
    }
    out.schedule = ToString(s);
    const auto st = Timed(
        out, [&] { return Kernels::template ReduceDot<TS>(a.data(), b.data(), a.size(), s); });
    out.components = {static_cast<long double>(Dot<T>::Finalize(st))};
    return out;
  });
}

}  // namespace carrier::backends::cpu
