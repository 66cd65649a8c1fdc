"""The authors' MATLAB algorithms (higham/logsumexp-softmax-tests @ a6e66ff), emulated in numpy.

What the authors' scripts (chop_test_softmax.m, bfloat_chop_test_softmax.m) run per vector, with
the order of operations and the rounding of each step as in their files; used by make_figures.py
to set carrier's study beside the authors' own algorithms (issue 33):

- chop (chop.m): round to t significant bits, exponent range emax, ties to even; subnormals kept
  for fp16 and flushed to zero for bfloat16 (chop.m's defaults: format 'h' t = 11, emax = 15;
  'b' t = 8, emax = 127); values at or above the midpoint between xmax and 2^(emax+1) go to inf,
  and values below the smallest subnormal to 0 (chop.m, the lines after the rounding).
- lse_chop.m (basic): e_i = chop(exp(x_i)), s = chop(s + e_i) in index order, f = chop(log(s)),
  g_i = chop(e_i / s), h_i = chop(exp(chop(x_i - f))).
- lse_chopshift.m (shifted): a = chop(max x) at k, the first index of the max; for i != k in
  index order e_i = chop(exp(chop(x_i - a))), s = chop(s + e_i); f = chop(a + chop(log1p(s)));
  h_i = chop(exp(chop(x_i - f))); e_k = 1 and g_i = chop(e_i / chop(1 + s)).

The data vectors are single precision (softmat), so MATLAB evaluates the steps whose operands
are single in single (exp and log in lse_chop.m, exp and x_i - a in lse_chopshift.m) and the
ones on lse_chopshift.m's double array e (the sum, log1p, the division) in double; the same
here. Every +, -, * and / is exact before chop in either (fp32 has at least 2t + 2 bits), so
only exp, log and log1p can differ from MATLAB's: by one fp32 or fp64 ulp where the libraries
differ, which moves a chopped value only at a rounding boundary. Not bit-exact to MATLAB,
therefore, but the same algorithms in the same order.
"""
import numpy as np

FORMATS = {"fp16": (11, 15, True), "bf16": (8, 127, False)}  # t, emax, subnormals kept


def chop(x, dtype):
    """chop.m's round to nearest (ties to even), as float64."""
    t, emax, subnormal = FORMATS[dtype]
    x = np.asarray(x, dtype=np.float64)
    c = x.copy()
    emin = 1 - emax
    emins = emin + 1 - t
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.floor(np.log2(np.abs(x)))
    finite = np.isfinite(e)
    sub = finite & (e < emin) & (e >= emins)
    norm = finite & ~sub
    en = e[norm].astype(np.int64)
    c[norm] = np.ldexp(np.round(np.ldexp(x[norm], t - 1 - en)), en - (t - 1))
    if sub.any():
        es = e[sub].astype(np.int64)
        t1 = t - np.maximum(emin - es, 0)
        c[sub] = 0.0 if not subnormal else np.ldexp(np.round(np.ldexp(x[sub], t1 - 1 - es)),
                                                    es - (t1 - 1))
    boundary = 2.0**emax * (2 - 0.5 * 2.0 ** (1 - t))
    with np.errstate(invalid="ignore"):
        c[x >= boundary] = np.inf
        c[x <= -boundary] = -np.inf
        c[np.abs(x) < 2.0**emins] = 0.0
    return c


def _single(fn, x):
    """fn evaluated in single precision (MATLAB on single operands), returned as float64."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return fn(np.asarray(x, dtype=np.float32)).astype(np.float64)


def lse_chop(x, dtype):
    """lse_chop.m on each row of x (already chopped): (f, g, h)."""
    n = x.shape[1]
    e = np.empty_like(x)
    s = np.zeros(x.shape[0])
    for i in range(n):
        e[:, i] = chop(_single(np.exp, x[:, i]), dtype)
        s = chop(s + e[:, i], dtype)
    f = chop(_single(np.log, s), dtype)
    with np.errstate(invalid="ignore"):
        g = chop(e / s[:, None], dtype)
        h = chop(_single(np.exp, chop(x - f[:, None], dtype)), dtype)
    return f, g, h


def lse_chopshift(x, dtype):
    """lse_chopshift.m on each row of x (already chopped): (f, g, h)."""
    rows, n = x.shape
    k = np.argmax(x, axis=1)  # the first index of the max, as MATLAB's max
    a = chop(x[np.arange(rows), k], dtype)
    e = np.zeros_like(x)
    s = np.zeros(rows)
    for i in range(n):
        other = k != i
        e[other, i] = chop(_single(np.exp, chop(x[other, i] - a[other], dtype)), dtype)
        s[other] = chop(s[other] + e[other, i], dtype)
    b = chop(np.log1p(s), dtype)
    f = chop(a + b, dtype)
    h = chop(_single(np.exp, chop(x - f[:, None], dtype)), dtype)
    e[np.arange(rows), k] = 1.0
    g = chop(e / chop(1 + s, dtype)[:, None], dtype)
    return f, g, h


def reference(x):
    """log-sum-exp and softmax of each row of x in float64 (the exact values to ~1e-16)."""
    m = x.max(axis=1, keepdims=True)
    w = np.exp(x - m)
    return m[:, 0] + np.log(w.sum(axis=1)), w / w.sum(axis=1, keepdims=True)


def errors(vectors, dtype):
    """The authors' algorithms on the vectors chopped to dtype, errors in units of u.

    Returns {name: (overflowed rows (bool), error / u per row)}: lse relative errors, softmax
    normwise errors (max_i |g^_i - g_i| / max_i g_i), as the authors' script measures them
    (against float64 here instead of their single-precision run)."""
    u = 2.0 ** -FORMATS[dtype][0]
    x = chop(vectors, dtype)
    y, g = reference(x)
    fb, gb, hb = lse_chop(x, dtype)
    fs, gs, hs = lse_chopshift(x, dtype)
    out = {}
    for name, f in (("lse-basic", fb), ("lse-shifted", fs)):
        out[name] = (~np.isfinite(f), np.abs(f - y) / (u * np.abs(y)))
    gmax = g.max(axis=1)
    for name, gg in (("softmax-basic", gb), ("softmax-basic-nodiv", hb),
                     ("softmax-shifted", gs), ("softmax-shifted-nodiv", hs)):
        bad = ~np.isfinite(gg).all(axis=1) | ~np.isfinite(fb if "basic" in name else fs)
        with np.errstate(invalid="ignore"):
            out[name] = (bad, np.abs(gg - g).max(axis=1) / (u * gmax))
    out["_shifted_softmax"] = (None, gs)
    return out
