// core/cpu_features.hpp: the one place that decides whether the hand-written x86 kernels
// (the files named *_x86.hpp / *_x86.cpp) may run.
//
// Two questions, answered once each:
//   CARRIER_X86_KERNELS (compile time): whether this compiler builds the *_x86 kernels at all.
//     They use per-function target attributes (no compiler flag: the rest of the build stays
//     baseline x86-64), which g++ and clang accept on x86-64; nvcc's host pass does not take
//     them, so CUDA translation units see 0.
//   HostAvx512() (run time): which AVX-512 subsets this CPU has, read once per process. Each
//     kernel family asks for the subsets it needs (random splits, shape hashes and the stored
//     columns' codes F+DQ, the emulated batches F and VL, the fixed-point exp F+IFMA) and nothing
//     else decides.
// Off x86-64, or under nvcc, every answer is "no" and the portable code runs.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
#define CARRIER_X86_KERNELS 1
#else
#define CARRIER_X86_KERNELS 0
#endif

namespace carrier {

// The AVX-512 subsets the *_x86 kernels use.
struct Avx512Features {
  bool f = false;     // foundation
  bool dq = false;    // 64-bit integer multiply, u64 <-> double conversions
  bool vl = false;    // the AVX-512 instructions on 128/256-bit registers
  bool ifma = false;  // 52-bit integer multiply-add

  bool HasFDq() const { return f && dq; }
  bool HasFIfma() const { return f && ifma; }
};

// This CPU's subsets (all false where CARRIER_X86_KERNELS is 0), detected on first use.
inline const Avx512Features& HostAvx512() {
  static const Avx512Features features = [] {
    Avx512Features a;
#if CARRIER_X86_KERNELS
    a.f = __builtin_cpu_supports("avx512f") != 0;
    a.dq = __builtin_cpu_supports("avx512dq") != 0;
    a.vl = __builtin_cpu_supports("avx512vl") != 0;
    a.ifma = __builtin_cpu_supports("avx512ifma") != 0;
#endif
    return a;
  }();
  return features;
}

// The run-time switch of one kernel family that needs AVX-512 F+DQ (Family: any tag type, one
// switch per family): on where this CPU has the subsets, unless a test turned it off to run the
// portable path. Use(on) returns whether the vector path now runs. Not thread-safe: tests call
// Use outside any computation.
template <class Family>
struct Avx512FDqSwitch {
  static bool On() { return Flag(); }
  static bool Use(bool on) {
    Flag() = on && HostAvx512().HasFDq();
    return Flag();
  }

 private:
  static bool& Flag() {
    static bool on = HostAvx512().HasFDq();
    return on;
  }
};

}  // namespace carrier
