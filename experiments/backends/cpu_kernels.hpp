// experiments/backends/cpu_kernels.hpp: the part of the simd and omp backends they share:
// request checks, conversion to the storage type, and the op -> carrier mapping (backends.hpp
// has the contract). `Kernels` is a policy with Reduce<C, TS>(x, n, s), ReduceDot<TS>(a, b, n,
// s) and Executed<C, TS>(s) (the schedule actually run, or ScheduleError).
#pragma once

#include <chrono>
#include <string>
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

template <class Kernels, class TS>
Result RunTyped(const Request& r, const char* backend) {
  using T = simd::Compute<TS>;
  using Lse = OnlineSoftmax<T, PortableExp>;
  const std::vector<TS> a = ToStorage<TS>(r.a);
  Result out;
  auto timed = [&](auto&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    auto v = f();
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return v;
  };
  auto reduce = [&]<class C>(C*) {
    Schedule s;
    try {
      s = Kernels::template Executed<C, TS>(r.schedule);
    } catch (const ScheduleError& e) {
      throw Unavailable(e.what());
    }
    out.schedule = ToString(s);
    return timed([&] { return Kernels::template Reduce<C, TS>(a.data(), a.size(), s); });
  };
  const std::string& op = r.op;
  if (op == "sum") {
    out.components = {static_cast<long double>(Sum<T>::Finalize(reduce((Sum<T>*)nullptr)))};
  } else if (op == "kahan") {
    out.components = {static_cast<long double>(
        Compensated<T>::Finalize(reduce((Compensated<T>*)nullptr)))};
  } else if (op == "max") {
    out.components = {static_cast<long double>(Max<T>::Finalize(reduce((Max<T>*)nullptr)))};
  } else if (op == "norm2") {
    out.components = {
        static_cast<long double>(ScaledNorm2<T>::Finalize(reduce((ScaledNorm2<T>*)nullptr)))};
  } else if (op == "argmax") {
    const auto res = ArgMax<T>::Finalize(reduce((ArgMax<T>*)nullptr));
    out.components = {static_cast<long double>(res.value)};
    out.index = res.index;
  } else if (op == "welford") {
    const auto res = Welford<T>::Finalize(reduce((Welford<T>*)nullptr));
    out.components = {static_cast<long double>(res.mean),
                      static_cast<long double>(res.var_population),
                      static_cast<long double>(res.var_sample)};
  } else if (op == "lse" || op == "softmax") {
    if (r.exp != "portable")
      throw Unavailable(std::string(backend) + ": " + op + " runs with --exp portable only (the " +
                        "vector exp that equals the scalar one bit for bit), got '" + r.exp + "'");
    const auto state = reduce((Lse*)nullptr);
    if (op == "lse") {
      out.components = {static_cast<long double>(Lse::Finalize(state).lse)};
    } else {
      std::vector<T> y(a.size());
      const double reduce_seconds = out.seconds;
      timed([&] {
        simd::SoftmaxOutputs<TS>(a.data(), a.size(), state, y.data());
        return 0;
      });
      out.seconds += reduce_seconds;
      for (T v : y) out.components.push_back(static_cast<long double>(v));
    }
  } else if (op == "dot") {
    if (r.b.size() != r.a.size())
      throw Unavailable(std::string(backend) + ": dot needs two operands of the same length");
    const std::vector<TS> b = ToStorage<TS>(r.b);
    Schedule s;
    try {
      s = Kernels::template Executed<Dot<T>, TS>(r.schedule);
    } catch (const ScheduleError& e) {
      throw Unavailable(e.what());
    }
    out.schedule = ToString(s);
    const auto st = timed([&] { return Kernels::template ReduceDot<TS>(a.data(), b.data(), a.size(), s); });
    out.components = {static_cast<long double>(Dot<T>::Finalize(st))};
  } else {
    throw Unavailable(std::string(backend) + ": op '" + op +
                      "' is not implemented (sum kahan max argmax lse softmax welford norm2 dot)");
  }
  return out;
}

template <class Kernels>
Result Run(const Request& r, const char* backend) {
  const std::string pair = r.storage + "/" + r.acc;
  if (pair == "fp32/fp32") return RunTyped<Kernels, float>(r, backend);
  if (pair == "fp64/fp64") return RunTyped<Kernels, double>(r, backend);
  if (pair == "fp16/fp32") return RunTyped<Kernels, Half>(r, backend);
  if (pair == "bf16/fp32") return RunTyped<Kernels, BFloat16>(r, backend);
  throw Unavailable(std::string(backend) + ": storage/compute " + pair +
                    " is not built (fp32/fp32, fp64/fp64, fp16/fp32, bf16/fp32)");
}

}  // namespace carrier::backends::cpu
