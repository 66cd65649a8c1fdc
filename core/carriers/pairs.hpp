// core/carriers/pairs.hpp: the small input records shared by several carriers.
//
// IndexedValue<T>  a value with its position (ArgMax's input and result); index >= 0 for a
//                  real element, -1 for "no element" (ArgMax's identity and pad input).
// ValuePair<T>     two scalars: a product's factors (Dot) or an affine map h -> a*h + b
//                  (Affine).
// Both are plain aggregates, trivially copyable for builtin T, so they travel to a device as-is.
#pragma once

#include <cstdint>

namespace carrier {

template <class T>
struct IndexedValue {
  T value;
  std::int64_t index;
};

template <class T>
struct ValuePair {
  T a;
  T b;
};

}  // namespace carrier
