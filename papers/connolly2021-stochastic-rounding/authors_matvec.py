"""The authors' matrix-vector experiment, test_matvec.m, emulated in numpy (issue 33).

test_matvec.m (north-numerical-computing/stochastic-rounding-survey-experiments @ 15aeca7, the
script that regenerates Connolly, Higham and Mary 2021's matrix-vector figure; read with the
search tool, facts only): rng(1); m = 100 rows; n = round(logspace(1, 6, 20)); for bfloat16
(t = 8) and then fp16 (t = 11), for each n: A = 1e-3 * rand(m, n), x = rand(n, 1) (double),
ye = A x in double, y = matvec(A, x) once with round to nearest and 10 times with stochastic
rounding on the same A and x; the backward error of one run is max over the m rows of
|ye - y| ./ (|A| |x|); it writes n, the RN error, the mean, max and min of the 10 SR errors,
min(1, n u) and min(1, sqrt(n) u), u = 2^-t. matvec accumulates column by column:
y = fl(y + fl(A(:, i) x(i))), every product and every sum rounded (CPFloat, no fused
multiply-add), with CPFloat's exponent range kept (options.explim = 1).

Here: the same data stream (MATLAB's rand after rng(1) is the Mersenne Twister with seed 1 and
53-bit doubles, which numpy's RandomState(1).random_sample reproduces; rand(m, n) fills column by
column), the same order of operations, round to nearest even and stochastic rounding (up with
probability the distance to the lower neighbour over the gap) to t significant bits (fewer in
fp16's subnormal range, kept as CPFloat keeps it). The SR
random stream is numpy's, not CPFloat's, so the SR errors are a different sample of the same
distribution; the RN errors are the script's own computation (every sum of two t-bit numbers
is exact in double before the rounding).
"""
import numpy as np

M = 100
REPS = 10
FORMATS = (("bf16", 8), ("fp16", 11))  # the script's order: formats = ['b', 'h']
# The spacing of the subnormals (CPFloat keeps fp16's; for bf16, whose subnormals CPFloat
# flushes by default, no value of this experiment comes near 2^-126, so the floor never acts).
SUBNORMAL_SPACING = {8: 2.0 ** -133, 11: 2.0 ** -24}


def nlist():
    return [int(v) for v in np.round(np.logspace(1, 6, 20))]


def _quantum(v, t):
    """The spacing of t-bit numbers at |v| (v > 0 here), subnormal range included: about a
    quarter of the fp16 products 1e-3 a x lie below fp16's smallest normal number 2^-14."""
    _, e = np.frexp(v)  # v = f 2^e, f in [0.5, 1)
    return np.maximum(np.ldexp(1.0, e - t), SUBNORMAL_SPACING[t])


def round_rn(v, t):
    q = _quantum(v, t)
    return np.round(v / q) * q  # np.round: ties to even


def round_sr(v, t, r):
    q = _quantum(v, t)
    lo = np.floor(v / q) * q
    return np.where(r < (v - lo) / q, lo + q, lo)


def run(progress=None):
    """Rows (format, n, berr_rn, berr_sr_avg, berr_sr_max, berr_sr_min, nu, sqrtnu), as the
    script's RTN_vs_SR_t*.dat files."""
    data = np.random.RandomState(1)
    sr_rng = np.random.default_rng(2021)
    rows = []
    for name, t in FORMATS:
        u = 2.0 ** -t
        for n in nlist():
            # A (column by column) then x, from the one stream: A is regenerated from a saved
            # state so that it need not be held (n = 1e6 would be 800 MB).
            state = data.get_state()
            chunk = max(1, 200000 // M)
            for j in range(0, n, chunk):
                data.random_sample(M * min(chunk, n - j))
            x = data.random_sample(n)
            after = data.get_state()
            data.set_state(state)
            ye = np.zeros(M)
            y_rn = np.zeros(M)
            y_sr = np.zeros((REPS, M))
            for j in range(0, n, chunk):
                k = min(chunk, n - j)
                a = 1e-3 * data.random_sample(M * k).reshape(k, M)  # column j+i in row i
                prod = a * x[j:j + k, None]
                ye += prod.sum(axis=0)  # only for the reference; order immaterial in double
                p_rn = round_rn(prod, t)
                p_sr = round_sr(np.broadcast_to(prod, (REPS, k, M)), t,
                                sr_rng.random((REPS, k, M)))
                r_add = sr_rng.random((k, REPS, M))
                for i in range(k):
                    y_rn = round_rn(y_rn + p_rn[i], t)
                    y_sr = round_sr(y_sr + p_sr[:, i, :], t, r_add[i])
            data.set_state(after)
            # |A| |x| = A x for nonnegative data; the reference in double as the script's A*x.
            ye_exact = ye
            berr_rn = float(np.max(np.abs(ye_exact - y_rn) / ye_exact))
            berr_sr = np.max(np.abs(ye_exact - y_sr) / ye_exact, axis=1)
            rows.append({"format": name, "n": n, "berr_rn": berr_rn,
                         "berr_sr_avg": float(berr_sr.mean()),
                         "berr_sr_max": float(berr_sr.max()),
                         "berr_sr_min": float(berr_sr.min()),
                         "nu": min(1.0, n * u), "sqrtnu": min(1.0, np.sqrt(n) * u)})
            if progress:
                progress(rows[-1])
    return rows


COLUMNS = ("format", "n", "berr_rn", "berr_sr_avg", "berr_sr_max", "berr_sr_min", "nu",
           "sqrtnu")


def main(argv):
    """python3 authors_matvec.py OUT.csv: run the emulation (a few minutes) and write its rows."""
    import csv
    import sys
    if len(argv) != 2:
        sys.exit("usage: authors_matvec.py OUT.csv")
    rows = run()
    with open(argv[1], "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([r["format"], r["n"]] + [repr(r[c]) for c in COLUMNS[2:]])


if __name__ == "__main__":
    import sys
    main(sys.argv)
