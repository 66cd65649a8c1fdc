"""carrier.quantize (precision/block_scaled.hpp through experiments/python) against references
written here, independent of carrier's code: element values from their bit fields, round to
nearest even by search in exact rationals (fractions.Fraction), the OCP scale rules from their
formulas, and TransformerEngine's NVFP4 recipe in numpy float32 arithmetic.
Each failure names the call that reproduces it:
PYTHONPATH=build/python /usr/bin/python3 -c "import carrier, numpy as np; carrier.quantize(...)".
"""
import doctest
import math
from fractions import Fraction

import numpy as np
import pytest

import carrier

# (exponent bits, mantissa bits, e4m3-style NaN at the top) from the OCP specs.
ELEMENTS = {"e4m3": (4, 3, True), "e5m2": (5, 2, False), "e3m2": (3, 2, False),
            "e2m3": (2, 3, False), "e2m1": (2, 1, False)}


def positive_values(name):
    """(value, code) for +0 and every positive finite value, ascending."""
    eb, mb, topnan = ELEMENTS[name]
    bias = 2 ** (eb - 1) - 1
    out = []
    for field in range(2 ** eb):
        for mant in range(2 ** mb):
            if name == "e5m2" and field == 2 ** eb - 1:
                continue
            if topnan and field == 2 ** eb - 1 and mant == 2 ** mb - 1:
                continue
            v = (Fraction(mant, 2 ** mb) * Fraction(2) ** (1 - bias) if field == 0 else
                 (1 + Fraction(mant, 2 ** mb)) * Fraction(2) ** (field - bias))
            out.append((v, (field << mb) | mant))
    return sorted(out)


def round_rne_sat(name, y):
    """y (a Fraction) to nearest even among the element's values, saturating; (value, code)."""
    pos = positive_values(name)
    eb, mb, _ = ELEMENTS[name]
    a = abs(y)
    pick = pos[-1]
    for lo, hi in zip(pos, pos[1:]):
        if a > hi[0]:
            continue
        mid = (lo[0] + hi[0]) / 2
        pick = lo if a < mid else hi if a > mid else (lo if lo[1] % 2 == 0 else hi)
        break
    sign = 1 << (eb + mb) if y < 0 else 0
    return (-pick[0] if y < 0 else pick[0]), pick[1] | sign


def mx_reference(name, rule, block, x):
    pos = positive_values(name)
    emax = math.floor(math.log2(pos[-1][0]))
    vmax = pos[-1][0]
    codes, values, scales = [], [], []
    for b0 in range(0, len(x), block):
        blk = [Fraction(float(v)) for v in x[b0:b0 + block]]
        amax = max(abs(v) for v in blk)
        if amax == 0:
            e = -127
        else:
            k = math.floor(math.log2(amax))  # exact enough for these doubles; fixed below
            while Fraction(2) ** k > amax:
                k -= 1
            while Fraction(2) ** (k + 1) <= amax:
                k += 1
            if rule == "floor":
                e = k - emax
            elif rule == "ceil":
                e = (k if Fraction(2) ** k == amax else k + 1) - emax
            else:  # cudnn: smallest e with vmax 2^e >= amax
                e = k - emax - 2
                while vmax * Fraction(2) ** e < amax:
                    e += 1
        e = max(e, -127)
        scales.append(e + 127)
        for v in blk:
            ev, code = round_rne_sat(name, v / Fraction(2) ** e)
            codes.append(code)
            values.append(float(ev * Fraction(2) ** e))
    return codes, values, scales


@pytest.mark.parametrize("fmt,name,rule", [("mxfp4", "e2m1", "floor"),
                                           ("mxfp8e4m3", "e4m3", "floor"),
                                           ("mx:e3m2:32:e8m0:ceil", "e3m2", "ceil"),
                                           ("mxfp6e2m3:cudnn", "e2m3", "cudnn"),
                                           ("mxfp8e5m2:ceil", "e5m2", "ceil")])
def test_mx_matches_exact_reference(fmt, name, rule):
    rng = np.random.default_rng(7)
    x = rng.standard_normal(32 * 5 + 11) * np.exp2(rng.integers(-20, 20, 32 * 5 + 11))
    x[32:64] = 0.0  # an all-zero block
    q = carrier.quantize(x, fmt)
    codes, values, scales = mx_reference(name, rule, 32, x)
    call = f"carrier.quantize(x, {fmt!r}) with x from default_rng(7)"
    assert q["scale_codes"].ravel().tolist() == scales, call
    assert q["codes"].tolist() == codes, call
    assert q["values"].tolist() == values, call
    assert np.array_equal(q["values"], q["elements"] * q["scales"].ravel()[q["block"]] *
                          q["tensor_scale"]), call
    print(f"{fmt}: {x.size} values, {len(scales)} blocks equal to the exact reference")


def test_nvfp4_matches_transformer_engine_recipe():
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(16 * 9 + 5) * np.exp2(rng.integers(-6, 6, 16 * 9 + 5)))
    q = carrier.quantize(x, "nvfp4")
    f32 = np.float32
    xf = x.astype(f32)
    amax = f32(np.max(np.abs(xf)))
    s_enc = f32(f32(448 * 6) / amax)
    s_dec = f32(f32(1) / s_enc)
    assert q["tensor_scale"] == float(s_dec)
    e4m3 = positive_values("e4m3")
    for b, b0 in enumerate(range(0, x.size, 16)):
        blk = xf[b0:b0 + 16]
        t = f32(f32(f32(np.max(np.abs(blk))) / f32(6)) * s_enc)
        s, _ = round_rne_sat("e4m3", Fraction(float(t)))
        s = min(s, Fraction(448))
        assert q["scales"].ravel()[b] == float(s), f"block {b}"
        c = f32(f32(1) / f32(f32(float(s)) * s_dec))
        for i, v in enumerate(blk):
            ev, code = round_rne_sat("e2m1", Fraction(float(f32(v * c))))
            assert q["codes"][b0 + i] == code, f"element {b0 + i}"
            assert q["values"][b0 + i] == float(ev * s * Fraction(float(s_dec)))
    assert len(e4m3) == 127


def test_two_dimensional_blocks_and_shapes():
    x = np.sin(0.37 * np.arange(20 * 35)).reshape(20, 35)
    q = carrier.quantize(x, "nvfp4:2d16")
    assert q["codes"].shape == (20, 35) and q["scales"].shape == (2, 3)
    assert q["block"][17, 33] == 5 and q["block"][15, 15] == 0
    assert q["format"] == "nvfp4:2d16"
    with pytest.raises(ValueError, match="two-dimensional"):
        carrier.quantize(x.ravel(), "nvfp4:2d16")
    with pytest.raises(ValueError, match="one dimension"):
        carrier.quantize(np.zeros((2, 2, 2)), "nvfp4")


def test_nan_block_and_bad_names():
    x = np.ones(64)
    x[40] = np.nan
    q = carrier.quantize(x, "mxfp8e4m3")
    assert q["scale_codes"].ravel().tolist() == [127 - 8, 255]
    assert np.isnan(q["values"][32:]).all() and (q["values"][:32] == 1).all()
    for bad in ["mxfp5", "nvfp4:floor", "mx:e2m1:32:e8m0", "mxfp4:4/6"]:
        with pytest.raises(ValueError) as e:
            carrier.quantize(x, bad)
        assert "\n" not in str(e.value) and bad in str(e.value)
    with pytest.raises(TypeError):
        carrier.quantize(x, 3)


def test_round_trip():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(100)
    for fmt in ["mxfp4", "mxfp8e4m3", "mxfp6e3m2", "mxint8"]:
        v = carrier.quantize(x, fmt)["values"]
        again = carrier.quantize(v, fmt)
        assert np.array_equal(again["values"], v), fmt


def test_docstring_examples():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(carrier.quantize, "carrier.quantize", globs={"carrier": carrier}):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 2 and result.failed == 0, result


def test_eval_stores_block_scaled_inputs():
    # By hand (OCP floor rule, E2M1 ties to even): 1, -3, 0.25, 5 store as 1, -3, 0, 4.
    r = carrier.eval("sum", dtype="mxfp4", x=np.array([1.0, -3.0, 0.25, 5.0]), schedule="seq")
    assert (r.dtype, r.acc, r.reference, r.result) == ("mxfp4", "fp32", 2.0, 2.0)
    x = np.sin(0.7 * np.arange(45)) * (1 + np.arange(45) % 9) * 0.37
    r = carrier.eval("sum", precision="in=nvfp4", x=x, schedule="pairwise")
    values = carrier.quantize(x, "nvfp4")["values"]
    assert r.reference == float(sum(Fraction(float(v)) for v in values))
