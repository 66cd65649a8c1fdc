// tests/cuda/fold_all.hpp: folds every core carrier over x and flattens the final states, so
// nvcc host code, nvcc device code and g++ can be compared bit for bit. Included by both
// compilers: only core headers and CARRIER_HD code here.
#pragma once

#include <cstddef>

#include "core/all.hpp"

namespace carrier::nvcc_test {

inline constexpr int kFlashDv = 4;
// Values written by FoldAll: see the order below.
inline constexpr std::size_t kFoldOutputs = 1 + 2 + 1 + 2 + 2 + 3 + 2 + 1 + 2 + 2 + kFlashDv;

template <class T>
CARRIER_HD void FoldAll(const T* x, std::size_t n, double* out) {
  std::size_t k = 0;
  {
    auto s = Fold<Sum<T>>(x, n);
    out[k++] = s.s;
  }
  {
    typename Compensated<T>::State s = Compensated<T>::Identity();
    for (std::size_t i = 0; i < n; ++i) s = PushOne<Compensated<T>>(s, x[i]);
    out[k++] = s.s;
    out[k++] = s.c;
  }
  {
    auto s = Fold<Max<T>>(x, n);
    out[k++] = s.m;
  }
  {
    typename ArgMax<T>::State s = ArgMax<T>::Identity();
    for (std::size_t i = 0; i < n; ++i)
      s = PushOne<ArgMax<T>>(s, IndexedValue<T>{x[i], static_cast<std::int64_t>(i)});
    out[k++] = s.value;
    out[k++] = static_cast<double>(s.index);
  }
  {
    auto s = Fold<OnlineSoftmax<T>>(x, n);
    out[k++] = s.m;
    out[k++] = s.d;
  }
  {
    auto s = Fold<Welford<T>>(x, n);
    out[k++] = static_cast<double>(s.n);
    out[k++] = s.mean;
    out[k++] = s.m2;
  }
  {
    auto s = Fold<ScaledNorm2<T>>(x, n);
    out[k++] = s.scale;
    out[k++] = s.ssq;
  }
  {
    typename Dot<T>::State s = Dot<T>::Identity();
    for (std::size_t i = 0; i + 1 < n; ++i) s = PushOne<Dot<T>>(s, ValuePair<T>{x[i], x[i + 1]});
    out[k++] = s.s;
  }
  {
    typename Affine<T>::State s = Affine<T>::Identity();
    for (std::size_t i = 0; i + 1 < n; i += 2)
      s = PushOne<Affine<T>>(s, ValuePair<T>{x[i] / T(4), x[i + 1]});
    out[k++] = s.a;
    out[k++] = s.b;
  }
  {
    using F = FlashRow<T, kFlashDv, FlashVariant::kFA2>;
    typename F::State s = F::Identity();
    for (std::size_t i = 0; i + kFlashDv < n; ++i)
      s = PushOne<F>(s, FlashInput<T>{x[i], x + i + 1});
    out[k++] = s.m;
    out[k++] = s.l;
    for (int j = 0; j < kFlashDv; ++j) out[k++] = s.o[j];
  }
}

}  // namespace carrier::nvcc_test
