"""FABsum (Blanchard, Higham and Mary 2020) written independently in numpy: the fast inner sums
in the low precision, the accurate outer sum of the block sums in a higher one.

FABsum itself runs in carrier (acc "INNER>OUTER", core/replay.hpp's ReplayMixed; fabsum.toml).
This file only cross-checks it: make_figures.py feeds the same stored input file to this
emulation and to `carrier eval --acc INNER>OUTER --input FILE` and requires equal bits.

Arithmetic: fp16 uses numpy float16; bf16 is float32 rounded to 8 significant bits (rne) by bit
manipulation. Each addition of two low-precision values is computed in float32 and rounded once
more: float32 has 24 >= 2p + 2 bits for p = 11 (fp16) and p = 8 (bf16), so this double rounding
gives the correctly rounded sum. fp32 and fp64 are numpy's native types.
"""
import numpy as np

LOW = ("fp16", "bf16", "fp32")


def round_bf16(x):
    """float32 array -> nearest bf16 values (ties to even), returned as float32."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def to_format(x, fmt):
    """Round float64 values to a format (rne), returned in the numpy type that holds them."""
    if fmt == "fp16":
        return np.asarray(x, dtype=np.float64).astype(np.float16)
    if fmt == "bf16":
        # float64 -> float32 -> bf16 is a double rounding; inputs here are uniform draws, not
        # exact ties, and the stored values only need to be *some* bf16 numbers: the reference
        # is taken on the stored values.
        return round_bf16(np.asarray(x, dtype=np.float64).astype(np.float32))
    if fmt == "fp32":
        return np.asarray(x, dtype=np.float64).astype(np.float32)
    if fmt == "fp64":
        return np.asarray(x, dtype=np.float64)
    raise ValueError(f"unknown format '{fmt}'")


def add(a, b, fmt):
    """fl(a + b) in fmt, elementwise."""
    if fmt == "fp16":
        return (a.astype(np.float32) + b.astype(np.float32)).astype(np.float16)
    if fmt == "bf16":
        return round_bf16(a.astype(np.float32) + b.astype(np.float32))
    if fmt == "fp32":
        return (a.astype(np.float32) + b.astype(np.float32)).astype(np.float32)
    return a.astype(np.float64) + b.astype(np.float64)


def blocked_sum(x, b, inner, outer):
    """Blocked summation of each row of x (trials x n, n divisible by b): every block of b
    consecutive values folded left to right from 0 in `inner`; the block sums converted to
    `outer` and folded left to right from 0 in `outer`. Returns float64 results per row."""
    trials, n = x.shape
    if n % b:
        raise ValueError(f"n = {n} is not a multiple of b = {b}")
    blocks = to_format(x, inner).reshape(trials, n // b, b)
    s = blocks[:, :, 0] * 0
    for j in range(b):
        s = add(s, blocks[:, :, j], inner)
    s = to_format(s.astype(np.float64), outer)
    acc = s[:, 0] * 0
    for k in range(n // b):
        acc = add(acc, s[:, k], outer)
    return acc.astype(np.float64)
