#!/usr/bin/python3
"""Times what a researcher would otherwise use (numpy.sum, scipy.special.logsumexp, numpy.var)
on the same sizes, dtypes and values as `carrier bench`, and prints CSV on stdout:
op,dtype,impl,n,min_s,median_s,value.

Values: x_i = 8 u_i - 4, u_i = (SplitMix64(seed + i) >> 11) * 2^-53 (experiments/verbs/bench.cpp),
rounded from float64 to the storage dtype by numpy (round to nearest even). Run with
/usr/bin/python3 (Debian's numpy/scipy); `carrier bench --peers` calls it.
"""
import argparse
import statistics
import sys
import time

import numpy as np
import scipy.special

M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def splitmix_values(seed, n, chunk=1 << 22):
    out = np.empty(n, dtype=np.float64)
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        z = np.arange(lo, hi, dtype=np.uint64) + np.uint64(seed)
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
        u = (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
        out[lo:hi] = 8.0 * u - 4.0
    return out


def timed(fn, repeats):
    times, value = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times), float(value)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="12,16,20,24,26", help="exponents P of n = 2^P")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-repeats", type=int, default=200)
    a = ap.parse_args()
    try:
        pows = [int(p) for p in a.sizes.split(",")]
    except ValueError:
        print(f"bench_peers: bad --sizes '{a.sizes}'", file=sys.stderr)
        return 2
    print("op,dtype,impl,n,min_s,median_s,value")
    for p in pows:
        n = 1 << p
        reps = max(3, min(a.max_repeats, (1 << 25) // n))
        x64 = splitmix_values(a.seed, n)
        x32 = x64.astype(np.float32)
        x16 = x64.astype(np.float16)
        rows = [
            ("sum", "fp32", "numpy.sum", lambda: np.sum(x32)),
            ("sum", "fp64", "numpy.sum", lambda: np.sum(x64)),
            ("sum", "fp16", "numpy.sum", lambda: np.sum(x16)),
            ("lse", "fp32", "scipy.special.logsumexp", lambda: scipy.special.logsumexp(x32)),
            ("lse", "fp64", "scipy.special.logsumexp", lambda: scipy.special.logsumexp(x64)),
            ("welford", "fp64", "numpy.var", lambda: np.var(x64)),
        ]
        for op, dtype, impl, fn in rows:
            mn, md, value = timed(fn, reps)
            print(f"{op},{dtype},{impl},{n},{mn:.9g},{md:.9g},{value!r}", flush=True)
        del x64, x32, x16
    return 0


if __name__ == "__main__":
    sys.exit(main())
