"""A-priori error bounds of recursive summation-like reductions, in units of the roundoff u.

gamma(k, u) = k u / (1 - k u) is the worst-case constant of k nested roundings (Higham, ASNA
Lemma 3.1); prob_bound(k, u, lam) = lam sqrt(k) u is the probabilistic one (Higham and Mary
2019: holds with probability at least 1 - 2 exp(-lam^2 / 2) (1 - ...)), for rounding errors
that are mean-independent.
"""
import numpy as np

_UNIT_ROUNDOFF = {
    "fp8e4m3": 2.0 ** -4,
    "fp8e5m2": 2.0 ** -3,
    "fp16": 2.0 ** -11,
    "bf16": 2.0 ** -8,
    "tf32": 2.0 ** -11,
    "fp32": 2.0 ** -24,
    "fp64": 2.0 ** -53,
}


def unit_roundoff(dtype):
    """u = 2^-p of a named format (round to nearest); KeyError text names the known formats."""
    try:
        return _UNIT_ROUNDOFF[dtype]
    except KeyError:
        raise ValueError(f"unknown dtype '{dtype}'; known: {', '.join(_UNIT_ROUNDOFF)}") from None


def gamma(k, u):
    """k u / (1 - k u), elementwise; nan where k u >= 1 (the bound is vacuous there)."""
    k = np.asarray(k, dtype=np.float64)
    ku = k * u
    with np.errstate(divide="ignore", invalid="ignore"):
        out = ku / (1.0 - ku)
    return np.where(ku < 1.0, out, np.nan)


def prob_bound(k, u, lam=1.0):
    """lam sqrt(k) u, elementwise."""
    return lam * np.sqrt(np.asarray(k, dtype=np.float64)) * u


def loglog_slope(x, y):
    """Least-squares slope of log10(y) against log10(x) over points where both are finite and > 0.

    Raises ValueError when fewer than two such points with distinct x remain.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    keep = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if np.unique(x[keep]).size < 2:
        raise ValueError("loglog_slope needs at least two positive points with distinct x")
    slope, _ = np.polyfit(np.log10(x[keep]), np.log10(y[keep]), 1)
    return float(slope)
