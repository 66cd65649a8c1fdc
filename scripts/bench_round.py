#!/usr/bin/python3
"""carrier.round against numpy's float16 cast and (with --cpfloat DIR) CPFloat, on one input.

    /usr/bin/python3 scripts/bench_round.py [--cpfloat DIR [--pcg DIR]] [--n N]
        [--dtype float64|float32]
        [--formats fp16,bf16,...] [--modes rne,rz,...] [--repeats R]

(carrier is imported from PYTHONPATH, else from $CARRIER_BUILD_DIR/python, default build/python.)

Prints CSV: format,rounding,n,dtype,impl,median_s,ns_per_element,ratio_to_carrier,check.
The input is N standard normal values (numpy's default_rng(12345)), float64 or float32; every
implementation rounds the same array, single-threaded, R timed runs after one untimed warm-up,
and median_s is the median. impls:

- carrier: carrier.round(x, fmt, mode, out=buf) (the loop; the output array is allocated once);
- carrier-alloc: carrier.round(x, fmt, mode), a fresh output array per call (its page faults
  are in the time);
- numpy-astype (fp16/rne only): x.astype(np.float16); numpy-copyto: np.copyto(buf16, x,
  casting="unsafe") into a preallocated float16 array;
- cpfloat (with --cpfloat DIR, a CPFloat checkout: DIR/src/cpfloat_binary64.h): a C harness
  written to a temporary folder and compiled there with `gcc -O3 -std=gnu99` (no -march=native,
  no -ffast-math, no OpenMP, so cpfloat() runs its sequential loop) against DIR/src's headers;
  it reads the same values from a file and times only the cpfloat()/cpfloatf() call
  (clock_gettime, preallocated output). With --pcg DIR (a pcg-c checkout, CPFloat's
  deps/pcg-c submodule) pcg-c's sources are compiled in and CPFloat's sr draws from PCG, as its
  own Makefile builds it; without, from CPFloat's fallback generator. Nothing of CPFloat or
  pcg-c is copied into the repository or kept.

check: for cpfloat and numpy rows, how many results differ from carrier.round's bit for bit,
"N (Z +-0)" when Z of them differ only in the sign of a zero. Expected: 0, except that CPFloat's
ru sends a negative value that rounds to zero to +0 where IEEE 754 (and carrier) give -0 (the
negative values below the smallest subnormal: thousands for fp8e4m3 on normal data), and that
CPFloat's E4M3 has 480 where OCP's has NaN (above 448, which normal data never reaches). For sr
the generators differ, so check counts results that are not one of the two neighbours
(carrier.round's rd and ru).

ratio_to_carrier = median_s / carrier's median_s on the same row key (> 1: slower than carrier).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

try:
    import carrier
except ImportError:  # the build tree's package: $CARRIER_BUILD_DIR/python, default build/python
    _build = os.environ.get("CARRIER_BUILD_DIR",
                            os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    sys.path.insert(0, os.path.join(_build, "python"))
    try:
        import carrier
    except ImportError:
        sys.exit(f"bench_round.py: cannot import carrier from {_build}/python: build the module "
                 "(cmake --build build --target carrier_python) or set PYTHONPATH")

# carrier format -> CPFloat (precision, emin, emax, infinity); subnormals on, no saturation.
CPFLOAT_FORMATS = {
    "fp8e4m3": (4, -6, 8, 0),
    "fp8e5m2": (3, -14, 15, 1),
    "fp16": (11, -14, 15, 1),
    "bf16": (8, -126, 127, 1),
    "tf32": (11, -126, 127, 1),
}
# carrier mode -> cpfloat_rounding_t (cpfloat_definitions.h).
CPFLOAT_MODES = {"rna": -1, "rne": 1, "ru": 2, "rd": 3, "rz": 4, "sr": 5, "ro": 7}

HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef BENCH_FLOAT
#include "cpfloat_binary32.h"
typedef float real;
#define ROUND cpfloatf
#else
#include "cpfloat_binary64.h"
typedef double real;
#define ROUND cpfloat
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* argv: in out n precision emin emax infinity round repeats; prints one time per line. */
int main(int argc, char **argv) {
  if (argc != 10) return 2;
  size_t n = strtoull(argv[3], NULL, 10);
  real *a = malloc(n * sizeof(real)), *x = malloc(n * sizeof(real));
  FILE *f = fopen(argv[1], "rb");
  if (!a || !x || !f || fread(a, sizeof(real), n, f) != n) return 3;
  fclose(f);
  optstruct *o = init_optstruct();
  o->precision = atoi(argv[4]);
  o->emin = atoi(argv[5]);
  o->emax = atoi(argv[6]);
  o->infinity = atoi(argv[7]) ? CPFLOAT_INF_USE : CPFLOAT_INF_NO;
  o->round = (cpfloat_rounding_t)atoi(argv[8]);
  o->subnormal = CPFLOAT_SUBN_USE;
  o->saturation = CPFLOAT_SAT_NO;
  o->explim = CPFLOAT_EXPRANGE_TARG;
  o->flip = CPFLOAT_SOFTERR_NO;
  o->p = 0;
  int repeats = atoi(argv[9]);
  if (ROUND(x, a, n, o) != 0) return 4; /* warm-up: touches x, seeds the generator */
  for (int r = 0; r < repeats; ++r) {
    double t = now();
    ROUND(x, a, n, o);
    printf("%.9f\n", now() - t);
  }
  f = fopen(argv[2], "wb");
  if (!f || fwrite(x, sizeof(real), n, f) != n) return 5;
  fclose(f);
  free_optstruct(o);
  return 0;
}
"""


def median_time(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def build_harness(cpfloat_dir, workdir, dtype, pcg_dir=None):
    src = os.path.join(cpfloat_dir, "src")
    if not os.path.exists(os.path.join(src, "cpfloat_binary64.h")):
        sys.exit(f"bench_round.py: {src}/cpfloat_binary64.h not found (--cpfloat takes the root "
                 "of a CPFloat checkout)")
    c = os.path.join(workdir, "harness.c")
    exe = os.path.join(workdir, f"harness_{dtype}")
    with open(c, "w") as f:
        f.write(HARNESS)
    cmd = ["gcc", "-O3", "-std=gnu99", "-w", "-I", src, c, "-o", exe, "-lm"]
    if dtype == "float32":
        cmd.insert(1, "-DBENCH_FLOAT")
    if pcg_dir:  # CPFloat's own PCG path (its Makefile's -include pcg_variants.h -lpcg_random)
        header = os.path.join(pcg_dir, "include", "pcg_variants.h")
        pcg_src = os.path.join(pcg_dir, "src")
        if not os.path.exists(header):
            sys.exit(f"bench_round.py: {header} not found (--pcg takes the root of pcg-c)")
        cmd[1:1] = ["-include", header, "-I", os.path.dirname(header)]
        cmd += sorted(os.path.join(pcg_src, f) for f in os.listdir(pcg_src) if f.endswith(".c"))
    subprocess.run(cmd, check=True)
    return exe


def bits(a):
    return a.view(np.uint64 if a.dtype == np.float64 else np.uint32)


def mismatches(got, want):
    """Elements whose bits differ (NaN equals NaN), as "N", or "N (Z +-0)" when Z of them
    differ only in the sign of a zero."""
    differ = (bits(got) != bits(want)) & ~(np.isnan(got) & np.isnan(want))
    zeros = int((differ & (got == 0) & (want == 0)).sum())
    return f"{int(differ.sum())} ({zeros} +-0)" if zeros else str(int(differ.sum()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cpfloat", metavar="DIR", help="root of a CPFloat checkout")
    ap.add_argument("--pcg", metavar="DIR",
                    help="root of a pcg-c checkout (CPFloat's deps/pcg-c submodule): CPFloat's "
                         "stochastic rounding then draws from PCG, as its Makefile builds it; "
                         "without it, from its built-in fallback generator")
    ap.add_argument("--n", type=int, default=10**7)
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    ap.add_argument("--formats", default="fp16,bf16,fp8e4m3,fp8e5m2,tf32")
    ap.add_argument("--modes", default="rne,rz,rna,ru,rd,ro,sr")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()

    x = np.random.default_rng(12345).normal(size=args.n).astype(args.dtype)
    buf = np.empty_like(x)
    workdir = tempfile.mkdtemp(prefix="bench_round_")
    try:
        exe = build_harness(args.cpfloat, workdir, args.dtype, args.pcg) if args.cpfloat else None
        infile = os.path.join(workdir, "in.bin")
        outfile = os.path.join(workdir, "out.bin")
        if exe:
            x.tofile(infile)
        print("format,rounding,n,dtype,impl,median_s,ns_per_element,ratio_to_carrier,check")

        def row(fmt, mode, impl, t, base, check=""):
            print(f"{fmt},{mode},{args.n},{args.dtype},{impl},{t:.6f},{t / args.n * 1e9:.3f},"
                  f"{t / base:.3f},{check}", flush=True)

        for fmt in args.formats.split(","):
            for mode in args.modes.split(","):
                kw = dict(seed=1) if mode == "sr" else {}
                t = median_time(lambda: carrier.round(x, fmt, mode, out=buf, **kw), args.repeats)
                mine = carrier.round(x, fmt, mode, **kw)
                row(fmt, mode, "carrier", t, t)
                row(fmt, mode, "carrier-alloc",
                    median_time(lambda: carrier.round(x, fmt, mode, **kw), args.repeats), t)
                if fmt == "fp16" and mode == "rne":
                    want = x.astype(np.float16).astype(args.dtype)
                    row(fmt, mode, "numpy-astype",
                        median_time(lambda: x.astype(np.float16), args.repeats), t,
                        mismatches(mine, want))
                    b16 = np.empty(x.shape, np.float16)
                    row(fmt, mode, "numpy-copyto",
                        median_time(lambda: np.copyto(b16, x, casting="unsafe"), args.repeats), t,
                        mismatches(mine, want))
                if exe and fmt in CPFLOAT_FORMATS and mode in CPFLOAT_MODES:
                    p, emin, emax, inf = CPFLOAT_FORMATS[fmt]
                    out = subprocess.run(
                        [exe, infile, outfile, str(args.n), str(p), str(emin), str(emax),
                         str(inf), str(CPFLOAT_MODES[mode]), str(args.repeats)],
                        check=True, capture_output=True, text=True).stdout
                    tc = float(np.median([float(v) for v in out.split()]))
                    theirs = np.fromfile(outfile, dtype=args.dtype)
                    if mode == "sr":
                        lo = carrier.round(x, fmt, "rd")
                        hi = carrier.round(x, fmt, "ru")
                        check = int((~((theirs == lo) | (theirs == hi))).sum())
                    else:
                        check = mismatches(mine, theirs)
                    row(fmt, mode, "cpfloat", tc, t, check)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
