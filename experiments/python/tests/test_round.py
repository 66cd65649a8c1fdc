"""carrier.round (precision/round_array.hpp through experiments/python) against references
written here, independent of carrier's code:

- ``reference``: the contract of precision/rounding.hpp in numpy integer arithmetic (integer
  significand n and quantum 2^qe of each input, then n * 2^qe by ldexp), vectorised, so it runs
  on every input: every float16 value, each format's boundaries and ties, random float64 values;
- ``exact_round``: the same contract in exact rational arithmetic (fractions.Fraction), on a
  sample, for every deterministic mode and for sr with the documented random stream;
- numpy's own float64 -> float16 cast for fp16/rne, on every input.

tests/precision/test_round_array.cpp checks the same C++ loop against the scalar RoundToFormat.
Each failure names the call that reproduces it:
PYTHONPATH=build/python /usr/bin/python3 -c "import carrier, numpy as np; carrier.round(...)".
"""
import doctest
import math
from fractions import Fraction

import numpy as np
import pytest

import carrier

# name -> (p, emin, emax, subnormals, has_inf, saturate, top_significand_is_nan), written from
# the formats' definitions (OCP FP8 v1.0, IEEE 754, bfloat16, TF32), not read from carrier.
FORMATS = {
    "fp8e4m3": (4, -6, 8, True, False, False, True),
    "fp8e4m3sat": (4, -6, 8, True, False, True, True),
    "fp8e5m2": (3, -14, 15, True, True, False, False),
    "fp16": (11, -14, 15, True, True, False, False),
    "bf16": (8, -126, 127, True, True, False, False),
    "tf32": (11, -126, 127, True, True, False, False),
    "fp32": (24, -126, 127, True, True, False, False),
    "fp64": (53, -1022, 1023, True, True, False, False),
    "custom:p=5,emin=-10,emax=10,subnormals=0": (5, -10, 10, False, True, False, False),
    "custom:p=2,emin=-3,emax=4,inf=0": (2, -3, 4, True, False, False, False),
    "custom:p=24,emin=-126,emax=127,saturate=1": (24, -126, 127, True, True, True, False),
    "custom:p=12,emin=-200,emax=200": (12, -200, 200, True, True, False, False),
    "custom:p=53,emin=-1022,emax=1023,subnormals=0": (53, -1022, 1023, False, True, False,
                                                       False),
    # float's exponent range (bf16's fast path on float32) with one of its conditions broken
    "custom:p=8,emin=-126,emax=127,subnormals=0": (8, -126, 127, False, True, False, False),
    "custom:p=8,emin=-126,emax=127,inf=0": (8, -126, 127, True, False, False, False),
    "custom:p=11,emin=-126,emax=127,saturate=1": (11, -126, 127, True, True, True, False),
    "custom:p=8,emin=-126,emax=127,topnan=1": (8, -126, 127, True, True, False, True),
}
# Formats whose results are not all float32 values: float32 input is refused.
NOT_FLOAT32 = {"custom:p=12,emin=-200,emax=200"}
MODES = ["rne", "rna", "rz", "ru", "rd", "ro"]
ALL_MODES = MODES + ["sr"]
SEED = 20240611


@pytest.fixture(autouse=True)
def _quiet_input_construction():
    """Building inputs overflows on purpose (nextafter of max, exp2 beyond the range)."""
    with np.errstate(over="ignore", invalid="ignore"):
        yield

U64 = np.uint64
SIGN = U64(1 << 63)
QUIET = U64(1 << 51)
EXP_ALL = U64(0x7ff << 52)
FRAC = U64((1 << 52) - 1)
GAMMA = 0x9E3779B97F4A7C15
SALT = 0x6A09E667F3BCC909


def max_finite(fmt):
    p, emin, emax, sub, has_inf, sat, topnan = fmt
    return math.ldexp((1 << p) - 1 - topnan, emax - p + 1)


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(U64)


def mix(z):
    """SplitMix64's finaliser on uint64 arrays (wrapping arithmetic)."""
    z = (z ^ (z >> U64(30))) * U64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> U64(27))) * U64(0x94D049BB133111EB)
    return z ^ (z >> U64(31))


def random_bits(seed, index):
    """The documented stream: Mix(Mix(seed ^ salt) + (index + 1) * gamma), index an array."""
    with np.errstate(over="ignore"):
        h = mix(np.array([seed ^ SALT], dtype=U64))[0]
        return mix(h + (np.asarray(index, dtype=U64) + U64(1)) * U64(GAMMA))


def reference(x, fmt, mode, seed=0, counter=0):
    """rounding.hpp's contract, vectorised in numpy integers; returns float64 bits."""
    p, emin, emax, sub, has_inf, sat, topnan = fmt
    b = bits(x)
    neg = (b >> U64(63)) != 0
    mag = b & ~SIGN
    biased = (mag >> U64(52)).astype(np.int64)
    sig = np.where(biased > 0, (mag & FRAC) | U64(1 << 52), mag & FRAC)
    k = np.where(biased > 0, biased, 1) - 1075  # |x| = sig * 2^k
    lead = np.frexp(sig.astype(np.float64))[1].astype(np.int64) - 1 + k  # exponent of top bit
    qe = np.where(lead >= emin, lead - p + 1, emin - p + 1 if sub else emin)
    shift = qe - k
    assert (shift >= 0).all()
    s = np.clip(shift, 1, 63).astype(U64)
    low = sig & ((U64(1) << s) - U64(1))
    n = np.where(shift == 0, sig, np.where(shift >= 64, U64(0), sig >> s))
    rem = np.where(shift == 0, U64(0), np.where(shift >= 64, sig, low))
    half = np.where(shift == 0, U64(1), np.where(shift >= 64, U64(1 << 63), U64(1) << (s - U64(1))))
    above = np.where(shift >= 65, False, rem > half)  # rem < 2^53 <= half when shift >= 65
    tie = np.where(shift >= 65, False, rem == half) & (shift > 0)
    inexact = rem != 0
    odd = (n & U64(1)) != 0
    if mode == "rne":
        up = above | (tie & odd)
    elif mode == "rna":
        up = above | tie
    elif mode == "rz":
        up = np.zeros_like(neg)
    elif mode == "ru":
        up = inexact & ~neg
    elif mode == "rd":
        up = inexact & neg
    elif mode == "ro":
        up = inexact & ~odd
    else:  # sr: the discarded fraction in 0.64 fixed point, truncated
        sh = np.clip(shift, 0, 127)
        frac64 = np.where(
            sh <= 64, rem << np.clip(64 - sh, 0, 63).astype(U64),
            sig >> np.clip(sh - 64, 0, 63).astype(U64))
        frac64 = np.where((sh == 0) | (sh >= 64 + 53), U64(0), frac64)
        frac64 = np.where(sh == 64, sig, frac64)
        rnd = random_bits(seed, counter + np.arange(b.size, dtype=np.int64).reshape(b.shape))
        up = rnd < frac64
    with np.errstate(over="ignore"):
        value = np.ldexp((n + up.astype(U64)).astype(np.float64), qe)
    top = max_finite(fmt)
    toward_zero = mode in ("rz", "ro") or (neg & (mode == "ru")) | (~neg & (mode == "rd"))
    overflow_to = np.where(sat | toward_zero, top, math.inf if has_inf else math.nan)
    value = np.where(value > top, overflow_to, value)
    is_inf = mag == EXP_ALL
    value = np.where(is_inf, top if sat else (math.inf if has_inf else math.nan), value)
    out = bits(np.abs(value)) | (b & SIGN)  # the sign always kept, zero and NaN too
    return np.where(mag > EXP_ALL, b | QUIET, out)


def exact_round(x, fmt, mode, random=0):
    """One value in exact rational arithmetic; returns a float (NaN for NaN)."""
    p, emin, emax, sub, has_inf, sat, topnan = fmt
    top = Fraction(max_finite(fmt))
    if math.isnan(x):
        return math.nan
    neg = math.copysign(1.0, x) < 0
    if math.isinf(x):
        r = top if sat else (math.inf if has_inf else math.nan)
        return -r if neg else r
    a = abs(Fraction(x))
    if a == 0:
        return x
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    qe = e - p + 1 if e >= emin else (emin - p + 1 if sub else emin)
    t = a / Fraction(2) ** qe
    n = math.floor(t)
    f = t - n
    up = {"rne": f > Fraction(1, 2) or (f == Fraction(1, 2) and n % 2 == 1),
          "rna": f >= Fraction(1, 2), "rz": False, "ru": f != 0 and not neg,
          "rd": f != 0 and neg, "ro": f != 0 and n % 2 == 0,
          "sr": random < math.floor(f * 2**64)}[mode]
    r = (n + up) * Fraction(2) ** qe
    if r > top:
        toward_zero = mode in ("rz", "ro") or (mode == "rd" and not neg) or (mode == "ru" and neg)
        r = top if sat or toward_zero else (math.inf if has_inf else math.nan)
    r = float(r)
    return -r if neg else r


def all_float16():
    return np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float64)


def boundaries(fmt):
    """Max finite, the overflow threshold, the smallest subnormal and normal, half of them,
    the top binade, each with its double neighbours and both signs; +-0, +-inf, NaNs."""
    p, emin, emax, sub, has_inf, sat, topnan = fmt
    top = max_finite(fmt)
    ulp = math.ldexp(1, emax - p + 1)
    tiny = math.ldexp(1, emin - p + 1)
    points = [top, top + ulp / 2, top + ulp, 2 * top, math.ldexp(1, emax),
              math.ldexp(1, emin), math.ldexp(1, emin) / 2, tiny, tiny / 2, tiny * 1.5, tiny / 4,
              5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1.0]
    v = []
    for x in points:
        if math.isfinite(x):
            v += [x, np.nextafter(x, 0), np.nextafter(x, math.inf)]
    v = np.array(v)
    specials = np.array([0, 0x7FF0000000000000, 0x7FF8000000000000, 0x7FF0000000000001,
                         0x7FF4000000000123], dtype=U64)  # 0, inf, NaN, signalling NaNs
    return np.concatenate([v, -v, specials.view(np.float64), -specials.view(np.float64)])


def ties(fmt, rng, count=4000):
    """Exact midpoints between neighbours (normal and subnormal) and their double neighbours."""
    p, emin, emax, sub, has_inf, sat, topnan = fmt
    if p >= 53:
        return np.zeros(0)
    e = rng.integers(emin, emax + 1, count)
    n = rng.integers(1 << (p - 1), 1 << p, count)
    normal = np.ldexp(n + 0.5, e - p + 1)
    m = rng.integers(0, 1 << (p - 1), count)
    subnormal = np.ldexp(m + 0.5, emin - p + 1)
    v = np.concatenate([normal, subnormal])
    v = np.concatenate([v, np.nextafter(v, 0), np.nextafter(v, np.inf)])
    return np.where(rng.random(v.size) < 0.5, -v, v)


def inputs(fmt, seed=SEED):
    """Every float16 value, boundaries, ties, random bit patterns, log-uniform values over the
    format's range and normal values: about 110k float64 inputs."""
    rng = np.random.default_rng(seed)
    p, emin, emax = fmt[:3]
    patterns = rng.integers(0, 2**64, 20000, dtype=U64, endpoint=False).view(np.float64)
    logu = np.exp2(rng.uniform(emin - p - 4, emax + 3, 20000)) * rng.choice([-1.0, 1.0], 20000)
    return np.concatenate([all_float16(), boundaries(fmt), ties(fmt, rng), patterns, logu,
                           rng.normal(size=5000)])


def describe(x, got, want, fmt, mode, extra=""):
    bad = np.nonzero(got != want)[0]
    i = bad[0]
    return (f"{len(bad)} of {len(x)} differ; first: carrier.round({float(x[i])!r}, {fmt!r}, "
            f"{mode!r}{extra}) gave {got[i].view(np.float64)!r} (bits {int(got[i]):#018x}), "
            f"expected {want[i].view(np.float64)!r} (bits {int(want[i]):#018x})")


# --- values: every format, every mode ---------------------------------------------------------

@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("mode", ALL_MODES)
def test_matches_the_integer_reference_bit_for_bit(name, mode):
    fmt = FORMATS[name]
    x = inputs(fmt)
    kwargs = dict(seed=SEED, counter=7) if mode == "sr" else {}
    got = bits(carrier.round(x, name, mode, **kwargs))
    want = reference(x, fmt, mode, seed=SEED, counter=7)
    assert (got == want).all(), describe(x, got, want, name, mode,
                                         ", seed=%d, counter=7 (index i)" % SEED
                                         if mode == "sr" else "")


@pytest.mark.parametrize("name", FORMATS)
def test_matches_exact_rational_arithmetic_on_a_sample(name):
    fmt = FORMATS[name]
    rng = np.random.default_rng(SEED + 1)
    x = inputs(fmt)
    sample = np.concatenate([boundaries(fmt), rng.choice(x, 300, replace=False)])
    rnd = random_bits(SEED, np.arange(sample.size))
    for mode in ALL_MODES:
        got = carrier.round(sample, name, mode, seed=SEED)
        for i, v in enumerate(sample):
            want = exact_round(float(v), fmt, mode, int(rnd[i]))
            same = (math.isnan(want) and math.isnan(got[i])) or (
                want == got[i] and math.copysign(1, want) == math.copysign(1, got[i]))
            assert same, (f"carrier.round({float(v)!r}, {name!r}, {mode!r}, seed={SEED}, "
                          f"counter={i}) gave {got[i]!r}, exact rational rounding {want!r}")


def test_fp16_rne_matches_numpy_float16_cast():
    x = np.concatenate([inputs(FORMATS["fp16"]), all_float16() * 1.0009765625])
    got = carrier.round(x, "fp16")
    with np.errstate(over="ignore"):
        want = x.astype(np.float16).astype(np.float64)
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all()
    assert (bits(got)[~nan] == bits(want)[~nan]).all(), describe(
        x[~nan], bits(got)[~nan], bits(want)[~nan], "fp16", "rne")
    assert carrier.round(x, np.float16).dtype == np.float64


@pytest.mark.parametrize("name", [n for n in FORMATS if n not in NOT_FLOAT32])
@pytest.mark.parametrize("mode", ALL_MODES)
def test_float32_in_float32_out(name, mode):
    rng = np.random.default_rng(SEED + 2)
    x32 = np.concatenate([
        rng.integers(0, 2**32, 20000, dtype=np.uint32).view(np.float32),
        all_float16().astype(np.float32),
        ties(FORMATS[name], rng, 2000).astype(np.float32),  # exact for p <= 22 in range
        rng.normal(size=4000).astype(np.float32)])
    got = carrier.round(x32, name, mode, seed=SEED)
    assert got.dtype == np.float32 and got.shape == x32.shape
    want = carrier.round(x32.astype(np.float64), name, mode, seed=SEED)
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all()
    g, w = bits(got.astype(np.float64))[~nan], bits(want)[~nan]
    assert (g == w).all(), describe(x32.astype(np.float64)[~nan], g, w, name, mode)
    assert (np.signbit(got) == np.signbit(want)).all()


def test_float16_and_integer_inputs_are_read_exactly():
    h = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    for mode in MODES:
        a = carrier.round(h, "fp8e5m2", mode)
        assert a.dtype == np.float64
        assert (bits(a) == bits(carrier.round(h.astype(np.float64), "fp8e5m2", mode))).all()
    i = np.array([0, 1, 17, -300, 2**53, -(2**53)], dtype=np.int64)
    assert carrier.round(i, "fp8e4m3", "rz").tolist() == [0, 1, 16, -288, 448, -448]
    assert list(carrier.round([1, 2, 3], "bf16")) == [1.0, 2.0, 3.0]
    assert carrier.round(np.array([True, False]), "fp16").tolist() == [1.0, 0.0]


def test_shapes_views_and_scalars():
    rng = np.random.default_rng(SEED + 3)
    x = rng.normal(size=(6, 5, 4))
    flat = carrier.round(x.ravel(), "bf16")
    got = carrier.round(x, "bf16")
    assert got.shape == x.shape and (got.ravel() == flat).all()
    assert (carrier.round(x.T, "bf16") == carrier.round(np.ascontiguousarray(x.T), "bf16")).all()
    assert (carrier.round(x[:, ::2, 1], "bf16") == carrier.round(x[:, ::2, 1].copy(), "bf16")).all()
    s = carrier.round(1 / 3, "bf16")
    assert isinstance(s, np.float64) and s == 0.333984375
    s32 = carrier.round(np.float32(1 / 3), "bf16")
    assert isinstance(s32, np.float32) and s32 == np.float32(0.333984375)
    assert carrier.round([], "fp16").shape == (0,)
    assert carrier.round(np.zeros((3, 0)), "fp16", "sr", seed=1).shape == (3, 0)
    # the input is not modified
    before = x.copy()
    carrier.round(x, "fp8e4m3")
    assert (x == before).all()


def test_out_and_in_place():
    rng = np.random.default_rng(SEED + 6)
    x = rng.normal(size=(50, 3))
    want = carrier.round(x, "fp8e5m2", "sr", seed=3)
    out = np.full_like(x, np.nan)
    assert carrier.round(x, "fp8e5m2", "sr", seed=3, out=out) is out
    assert (bits(out) == bits(want)).all()
    y = x.copy()
    assert carrier.round(y, "fp8e5m2", "sr", seed=3, out=y) is y
    assert (bits(y) == bits(want)).all()
    x32 = x.astype(np.float32)
    o32 = np.empty_like(x32)
    carrier.round(x32, "bf16", out=o32)
    assert (o32 == carrier.round(x32, "bf16")).all()
    o0 = np.empty(())
    assert carrier.round(2.5, "fp8e4m3", out=o0) is o0 and o0[()] == 2.5
    expect(TypeError, x, "fp16", must_name="out", out=[0.0] * 150)
    expect(TypeError, x, "fp16", must_name="dtype", out=np.empty((50, 3), np.float32))
    expect(TypeError, x32, "fp16", must_name="dtype", out=np.empty((50, 3)))
    expect(ValueError, x, "fp16", must_name="shape", out=np.empty(150))
    expect(ValueError, x, "fp16", must_name="contiguous", out=np.empty((3, 50)).T)
    ro = np.empty_like(x)
    ro.flags.writeable = False
    expect(ValueError, x, "fp16", must_name="writeable", out=ro)
    big = np.zeros(151)
    expect(ValueError, big[1:].reshape(50, 3), "fp16", must_name="overlaps",
           out=big[:-1].reshape(50, 3))


def test_names_numpy_dtypes_and_ml_dtypes_names():
    x = np.random.default_rng(SEED + 4).normal(scale=100, size=1000)
    same = lambda a, b: bits(a).tolist() == bits(b).tolist()
    assert same(carrier.round(x, np.float16), carrier.round(x, "fp16"))
    assert same(carrier.round(x, "float16"), carrier.round(x, "fp16"))
    assert same(carrier.round(x, "half"), carrier.round(x, "fp16"))
    assert same(carrier.round(x, "bfloat16"), carrier.round(x, "bf16"))
    assert same(carrier.round(x, "float8_e4m3fn"), carrier.round(x, "fp8e4m3"))
    assert same(carrier.round(x, "float8_e5m2"), carrier.round(x, "fp8e5m2"))
    assert same(carrier.round(x, np.float32), carrier.round(x, "fp32"))
    assert same(carrier.round(x, np.dtype("float32")), carrier.round(x, "fp32"))
    assert same(carrier.round(x, np.float64), x)
    assert same(carrier.round(x, "fp16", subnormals=True), carrier.round(x, "fp16"))
    assert same(carrier.round(x, "custom:p=11,emin=-14,emax=15"), carrier.round(x, "fp16"))
    assert same(carrier.round(x * 1e-6, "fp16", subnormals=False),
                carrier.round(x * 1e-6, "custom:p=11,emin=-14,emax=15,subnormals=0"))


# --- stochastic rounding ---------------------------------------------------------------------

def neighbours(x, name):
    return carrier.round(x, name, "rd"), carrier.round(x, name, "ru")


def test_sr_reproducible_seeded_and_chunkable():
    x = np.random.default_rng(SEED + 5).normal(size=10000)
    a = carrier.round(x, "bf16", "sr", seed=1)
    assert (bits(a) == bits(carrier.round(x, "bf16", "sr", seed=1))).all()
    b = carrier.round(x, "bf16", "sr", seed=2)
    assert (a != b).sum() > 1000, "seeds 1 and 2 gave nearly the same roundings"
    assert (a != carrier.round(x, "bf16", "sr", seed=1, counter=1)).sum() > 1000
    parts = [carrier.round(x[:3], "bf16", "sr", seed=1),
             carrier.round(x[3:4000], "bf16", "sr", seed=1, counter=3),
             carrier.round(x[4000:], "bf16", "sr", seed=1, counter=4000)]
    assert (bits(np.concatenate(parts)) == bits(a)).all()
    # the seed is ignored by the deterministic modes
    assert (carrier.round(x, "bf16", "rne", seed=5) == carrier.round(x, "bf16")).all()


@pytest.mark.parametrize("name", ["fp8e4m3", "fp8e5m2", "fp16", "bf16", "tf32",
                                  "custom:p=5,emin=-10,emax=10,subnormals=0"])
def test_sr_gives_a_neighbour(name):
    fmt = FORMATS[name]
    x = inputs(fmt)
    x = x[np.isfinite(x) & (np.abs(x) <= max_finite(fmt))]
    lo, hi = neighbours(x, name)
    for seed in (0, 1, 2**64 - 1):
        r = carrier.round(x, name, "sr", seed=seed)
        ok = (r == lo) | (r == hi)
        i = np.argmin(ok)
        assert ok.all(), (f"carrier.round({x[i]!r}, {name!r}, 'sr', seed={seed}, counter={i}) "
                          f"gave {r[i]!r}, not {lo[i]!r} or {hi[i]!r}")


# (value, format): one in the normal range, a negative one, one in the subnormal range, one in
# the underflow gap of a format without subnormals, one near the top of fp8e4m3.
SR_CASES = [(1 + 0.3 * 2**-10, "fp16"), (-(1 / 3), "bf16"), (3e-8, "fp16"),
            (0.3 * 2**-10, "custom:p=5,emin=-10,emax=10,subnormals=0"), (300.0, "fp8e4m3"),
            (0.1, "fp8e5m2")]


@pytest.mark.parametrize("value,name", SR_CASES)
def test_sr_is_unbiased(value, name):
    n = 200_000
    r = carrier.round(np.full(n, value), name, "sr", seed=SEED)
    lo, hi = neighbours(np.array([value]), name)
    gap = hi[0] - lo[0]
    q = (value - lo[0]) / gap  # probability of hi
    mean = r.mean()
    se = abs(gap) * math.sqrt(q * (1 - q) / n)
    z = (mean - value) / se
    ups = (r == hi[0]).mean()
    print(f"sr {name} x={value!r} q={q:.4f} mean={mean!r} se={se:.3g} z={z:+.2f} ups={ups:.4f}")
    # 5 standard errors: a fixed seed, so this never flakes; rounding up with probability 1/2,
    # or to nearest, is off by 0.2 gap or more, which is hundreds of standard errors here.
    assert abs(z) < 5, (f"carrier.round(np.full({n}, {value!r}), {name!r}, 'sr', seed={SEED})"
                        f".mean() = {mean!r}, off by {z:+.1f} standard errors (q={q:.4f})")


# --- wrong arguments ---------------------------------------------------------------------------

def expect(exc, *args, must_name=None, **kwargs):
    call = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
    try:
        got = carrier.round(*args, **kwargs)
    except exc as e:
        text = str(e)
        assert "\n" not in text, f"carrier.round({call}): multi-line message {text!r}"
        if must_name:
            assert must_name in text, f"carrier.round({call}): message {text!r} lacks {must_name!r}"
        return text
    except BaseException as e:
        raise AssertionError(f"carrier.round({call}) raised {type(e).__name__}: {e}; "
                             f"expected {exc.__name__}") from e
    raise AssertionError(f"carrier.round({call}) returned {got!r}; expected {exc.__name__}")


X = np.ones(4)

BAD = [
    # x
    (TypeError, "x", ("abc", "fp16"), {}),
    (TypeError, "x", (None, "fp16"), {}),
    (TypeError, "x", ({1: 2}, "fp16"), {}),
    (TypeError, "dtype", ([1 + 2j], "fp16"), {}),
    (TypeError, "dtype", ([1.0, None], "fp16"), {}),
    (TypeError, "dtype", (np.array(["a", "b"]), "fp16"), {}),
    (TypeError, "dtype", (np.array([1.0], dtype=np.complex64), "fp16"), {}),
    (ValueError, "x", ([[1.0], [2.0, 3.0]], "fp16"), {}),
    (ValueError, "2^53", (np.array([2**60], dtype=np.int64), "fp16"), {}),
    (ValueError, "float32", (np.ones(3, np.float32), "custom:p=12,emin=-200,emax=200"), {}),
    # fmt
    (TypeError, "fmt", (X, 3), {}),
    (TypeError, "fmt", (X, None), {}),
    (TypeError, "fmt", (X, ["fp16"]), {}),
    (ValueError, "fp7", (X, "fp7"), {}),
    (ValueError, "p=1", (X, "custom:p=1,emin=-3,emax=3"), {}),
    (ValueError, "emax", (X, "custom:p=3,emin=-3"), {}),
    (ValueError, "int32", (X, np.int32), {}),
    (ValueError, "FP16", (X, "FP16"), {}),
    # rounding
    (TypeError, "round must", (X, "fp16", 1), {}),
    (TypeError, "round must", (X, "fp16", None), {}),
    (TypeError, "round must", (X, "fp16", True), {}),
    (ValueError, "nearest", (X, "fp16", "nearest"), {}),
    (ValueError, "RNE", (X, "fp16", "RNE"), {}),
    (ValueError, "seed", (X, "fp16", "sr"), {}),
    # seed, counter, subnormals
    (TypeError, "seed", (X, "fp16", "sr"), {"seed": 1.5}),
    (TypeError, "seed", (X, "fp16", "sr"), {"seed": "1"}),
    (TypeError, "seed", (X, "fp16", "sr"), {"seed": True}),
    (ValueError, "seed", (X, "fp16", "sr"), {"seed": -1}),
    (ValueError, "seed", (X, "fp16", "sr"), {"seed": 2**64}),
    (TypeError, "counter", (X, "fp16", "sr"), {"seed": 1, "counter": None}),
    (ValueError, "counter", (X, "fp16", "sr"), {"seed": 1, "counter": 2**64 - 2}),
    (TypeError, "subnormals", (X, "fp16"), {"subnormals": 1}),
    (TypeError, "subnormals", (X, "fp16"), {"subnormals": "no"}),
]


@pytest.mark.parametrize("exc,names,args,kwargs", BAD)
def test_wrong_arguments_raise_the_right_exception(exc, names, args, kwargs):
    expect(exc, *args, must_name=names, **kwargs)


def test_longdouble_is_refused_where_it_is_wider():
    if np.finfo(np.longdouble).nmant > 52:
        expect(TypeError, np.ones(3, dtype=np.longdouble), "fp16", must_name="dtype")
    with pytest.raises(TypeError):
        carrier.round(X, "fp16", "rne", 1)  # seed is keyword-only


def test_docstring_examples():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(carrier.round, "carrier.round", globs={"carrier": carrier, "np": np}):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 5 and result.failed == 0, result
