"""Carriers written in Python (carrier/user.py): replayed through any schedule, a Python sum and
a Python online softmax give the built-in ops' bits (carrier.eval, fp32, libm's expf/logf
through ctypes, the functions the built-in lse calls); laws() confirms what holds and refutes
what does not; bad arguments raise the right exception."""
import ctypes
import ctypes.util
import math
import struct
from fractions import Fraction

import pytest

np = pytest.importorskip("numpy")
carrier = pytest.importorskip("carrier")

SCHEDULES = ["seq", "reverse", "pairwise", "pairwise:8", "blocked:16", "blocked:16:pairwise",
             "strided:8", "random:3", "omp:3:pairwise", "canonical:16", "numpy", "torch:8",
             "cuda:64:2:striped"]


def f32(v):
    """Round a double to fp32, ties to even (C's double -> float conversion)."""
    return struct.unpack("f", struct.pack("f", v))[0]


_libm = ctypes.CDLL(ctypes.util.find_library("m"))
_expf, _logf = _libm.expf, _libm.logf
for _f in (_expf, _logf):
    _f.restype = ctypes.c_float
    _f.argtypes = [ctypes.c_float]


def py_sum():
    return carrier.Carrier(lambda: 0.0, f32, lambda a, b: f32(a + b), name="python fp32 sum",
                           commutative=True)


def py_online_softmax():
    """core/carriers/online_softmax.hpp line for line, in fp32 (state (m, d))."""
    nan, inf = math.nan, math.inf

    def lift(x):
        x = f32(x)
        if math.isnan(x):
            return (nan, nan)
        if x == -inf:
            return (-inf, 0.0)
        return (x, 1.0)

    def combine(a, b):
        if math.isnan(a[0]) or math.isnan(b[0]):
            return (nan, nan)
        big = max(a[0], b[0])
        if big == -inf:
            return (-inf, 0.0)
        da = a[1] if a[0] == big else f32(a[1] * _expf(f32(a[0] - big)))
        db = b[1] if b[0] == big else f32(b[1] * _expf(f32(b[0] - big)))
        return (big, f32(da + db))

    def finalize(s):
        if math.isnan(s[0]):
            return nan
        if math.isinf(s[0]):
            return s[0]
        return f32(s[0] + _logf(s[1]))

    return carrier.Carrier(lambda: (-inf, 0.0), lift, combine, finalize,
                           name="python online softmax")


def same_bits(a, b):
    return struct.pack("<d", a) == struct.pack("<d", b)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_python_sum_equals_builtin_sum_bit_for_bit(schedule):
    for n, seed in ((1, 1), (7, 2), (100, 3), (1000, 4)):
        x = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
        got = carrier.replay(py_sum(), x.astype(np.float64), schedule)
        want = carrier.eval("sum", x, dtype="fp32", schedule=schedule).result
        assert same_bits(got, want), (
            f"schedule {schedule}, n {n}, seed {seed} (standard normal, fp32): Python sum "
            f"{got!r} ({got.hex()}), built-in {want!r} ({want.hex()})")


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_python_online_softmax_equals_builtin_lse_bit_for_bit(schedule):
    for n, seed in ((1, 5), (9, 6), (300, 7)):
        x = (8 * np.random.default_rng(seed).standard_normal(n)).astype(np.float32)
        got = carrier.replay(py_online_softmax(), x.astype(np.float64), schedule)
        want = carrier.eval("lse", x, dtype="fp32", schedule=schedule).result
        assert same_bits(got, want), (
            f"schedule {schedule}, n {n}, seed {seed} (8 x standard normal, fp32): Python "
            f"online softmax {got!r} ({got.hex()}), built-in lse {want!r} ({want.hex()})")


def test_orders_change_the_python_sum_as_they_change_the_builtin():
    # The point of replaying: the orders give different bits, and the same ones as carrier's.
    x = np.random.default_rng(11).standard_normal(4096).astype(np.float32)
    got = {s: carrier.replay(py_sum(), x.astype(np.float64), s) for s in SCHEDULES}
    assert len(set(got.values())) > 3, got


def test_special_values_follow_the_builtin():
    inf, nan = math.inf, math.nan
    sm = py_online_softmax()
    assert carrier.replay(sm, [-inf, -inf], "pairwise") == -inf
    assert carrier.replay(sm, [1.0, inf, 2.0], "pairwise") == inf
    assert math.isnan(carrier.replay(sm, [1.0, nan], "seq"))
    assert carrier.replay(sm, [], "seq") == -inf  # empty: Finalize(Identity())


def test_laws_of_a_python_sum_and_its_exact_twin():
    x = np.random.default_rng(3).standard_normal(200)
    exact = carrier.Carrier(lambda: Fraction(0), lambda v: v, lambda a, b: a + b,
                            name="exact sum")
    df = carrier.laws(py_sum(), inputs=x, exact=exact, trials=150)
    print(df.to_string())
    rows = {r["law"]: r for r in df.to_dict("records")}
    assert df.attrs["refuted"] == []
    assert rows["identity (bitwise)"]["measured"] == "yes"
    assert rows["bitwise commutative"]["verdict"] == "ok"
    assert rows["associative (exact twin)"]["measured"] == "yes"
    assert rows["homomorphism (exact twin)"]["measured"] == "yes"
    # fp32 addition is not associative: some of 150 random triples must differ.
    defect = rows["associativity defect (bitwise)"]["figures"]
    assert not defect.startswith("0 of"), defect


def test_laws_refute_a_false_declaration():
    # "Last value wins" is associative but not commutative; declared commutative, refuted.
    last = carrier.Carrier(lambda: None, lambda v: v, lambda a, b: a if b is None else b,
                           name="last", commutative=True)
    df = carrier.laws(last, inputs=[1.0, 2.0, 3.0, 4.0], trials=50)
    print(df.to_string())
    assert "bitwise commutative" in df.attrs["refuted"]
    # Subtraction is neither associative exactly nor a homomorphism.
    sub = carrier.Carrier(lambda: 0.0, lambda v: v, lambda a, b: a - b, name="sub")
    exact = carrier.Carrier(lambda: Fraction(0), lambda v: v, lambda a, b: a - b)
    df = carrier.laws(sub, inputs=[1.0, 2.0, 5.0, 7.0], exact=exact, trials=50)
    print(df.to_string())
    assert "associative (exact twin)" in df.attrs["refuted"]
    assert "identity (bitwise)" in df.attrs["refuted"]  # 0 - s != s


@pytest.mark.parametrize("call, kind, words", [
    (lambda: carrier.Carrier(1, f32, f32), TypeError, "identity must be callable"),
    (lambda: carrier.Carrier(lambda: 0.0, f32, f32, finalize=3), TypeError, "finalize"),
    (lambda: carrier.Carrier(lambda: 0.0, f32, f32, commutative="yes"), TypeError,
     "commutative"),
    (lambda: carrier.replay("sum", [1.0]), TypeError, "carrier.Carrier"),
    (lambda: carrier.replay(py_sum(), 3.0), TypeError, "sequence"),
    (lambda: carrier.replay(py_sum(), np.zeros((2, 2))), ValueError, "one-dimensional"),
    (lambda: carrier.replay(py_sum(), [1.0], 7), TypeError, "schedule"),
    (lambda: carrier.replay(py_sum(), [1.0, 2.0], "blocked:0"), ValueError, "TILE"),
    (lambda: carrier.replay(py_sum(), [1.0] * 16, "mma:hopper"), ValueError, "fused"),
    (lambda: carrier.laws(py_sum()), TypeError, "inputs="),
    (lambda: carrier.laws(py_sum(), inputs=[]), ValueError, "empty"),
    (lambda: carrier.laws(py_sum(), inputs=[1.0], trials=0), ValueError, "trials"),
    (lambda: carrier.laws("sum", inputs=[1.0]), TypeError, "carrier.Carrier"),
])
def test_bad_arguments_raise_the_right_exception(call, kind, words):
    with pytest.raises(kind) as e:
        call()
    assert words in str(e.value), str(e.value)


# derive: the Third Homomorphism Theorem for loops written in Python (carrier.user.derive), and
# carrier.derive for the built-in derivations.

def test_derive_builds_a_python_sums_combine_and_it_replays_like_the_builtin():
    # The fp32 sum loop from both ends; inverse(s) = [s]. The derived combine is
    # f32(f32(0 + a) + b) = f32(a + b), so the derived carrier gives carrier's bits. The two
    # fp32 folds round differently (about 1e-7 apart), so agreement is judged at 2^-10.
    d = carrier.derive(lambda: 0.0, lambda s, x: f32(s + x), lambda x, s: f32(x + s),
                       lambda s: [s], np.random.default_rng(3).standard_normal(64),
                       combine=lambda a, b: f32(a + b), name="fp32 sum", tolerance=2.0 ** -10)
    print(d.to_dict())
    assert d.folds_agree and d.holds and d.max_combine_gap == 0.0 and d.max_inverse_length == 1
    x = np.random.default_rng(4).standard_normal(500).astype(np.float32)
    for schedule in ("pairwise", "blocked:16", "cuda:64:2:striped"):
        got = carrier.replay(d.carrier, x.astype(np.float64), schedule)
        want = carrier.eval("sum", x, dtype="fp32", schedule=schedule).result
        assert same_bits(got, want), (schedule, got.hex(), want.hex())


def test_derive_online_softmax_in_fp64_and_exact_sum_of_squares():
    def push_back(s, x):
        m = max(s[0], x)
        return (m, s[1] * math.exp(s[0] - m) + math.exp(x - m))

    def push_front(x, s):
        m = max(s[0], x)
        return (m, math.exp(x - m) + s[1] * math.exp(s[0] - m))

    def inverse(s):
        # (m, d): m itself (weight 1), then k equal inputs m + log((d - 1) / k) <= m (weight
        # (d - 1) / k <= 1 each), so the fold's maximum stays m and its sum is d.
        m, d = s
        if d == 0:
            return []
        k = math.ceil(d - 1)
        return [m] + ([m + math.log((d - 1) / k)] * k if k > 0 else [])

    xs = 4 * np.random.default_rng(8).standard_normal(200)
    d = carrier.derive(lambda: (-math.inf, 0.0), push_back, push_front, inverse, xs)
    print(d)
    assert d.folds_agree and d.holds and d.max_combine_gap is None
    assert 0 < d.max_fold_gap < 2.0 ** -40  # rounded differently, at the rounding level
    lse = d.carrier.finalize(carrier.replay(d.carrier, xs, "pairwise"))
    ref = math.log(math.fsum(math.exp(v) for v in xs))
    s = carrier.replay(d.carrier, xs, "pairwise")
    assert abs(s[0] + math.log(s[1]) - ref) < 1e-12 * abs(ref)
    assert lse == s  # finalize defaults to the state
    # Exactly (Fractions): a sum of squares with tolerance 0; inverse needs a square root, so
    # the weak inverse holds the state as one "already squared" input tagged as such.
    sq = carrier.derive(lambda: Fraction(0),
                        lambda s, x: s + (x[1] if isinstance(x, tuple) else Fraction(x) ** 2),
                        lambda x, s: (x[1] if isinstance(x, tuple) else Fraction(x) ** 2) + s,
                        lambda s: [("squared", s)], [1, 2, 3, 5, 7, 11],
                        combine=lambda a, b: a + b, tolerance=0)
    assert sq.holds and sq.max_fold_gap == 0 and sq.max_combine_gap == 0


def test_derive_rejects_a_loop_that_is_not_a_list_homomorphism():
    # 2 s + x from the left is sum 2^(n-1-i) x_i; x + 2 s from the right is sum 2^i x_i.
    d = carrier.derive(lambda: 0.0, lambda s, x: 2 * s + x, lambda x, s: x + 2 * s,
                       lambda s: [s], [1.0, 2.0, 3.0, 4.0], seed=5)
    print(d.counterexample)
    assert not d.folds_agree and not d.holds and d.carrier is None
    assert "not a list homomorphism" in d.counterexample and "seed 5" in d.counterexample
    # A wrong hand-written combine is named with the pair that shows it.
    w = carrier.derive(lambda: 0.0, lambda s, x: s + x, lambda x, s: x + s, lambda s: [s],
                       [1.0, 2.0, 3.0], combine=lambda a, b: a - b)
    assert w.folds_agree and not w.holds and "hand-written combine differ" in w.counterexample


def test_derive_of_builtin_ops():
    d = carrier.derive("welford", trials=50)
    print(d.text)
    assert d.holds and d.exit == 0 and d.folds_agree and d.max_inverse_length > 0
    assert d.max_combine_gap < 2.0 ** -40
    with pytest.raises(ValueError, match="nope"):
        carrier.derive("nope")
    with pytest.raises(TypeError):
        carrier.derive("welford", lambda s: s)
    with pytest.raises(TypeError):
        carrier.derive(lambda: 0.0, 5, lambda x, s: s, lambda s: [s], [1.0])
    with pytest.raises(ValueError):
        carrier.derive(lambda: 0.0, lambda s, x: s, lambda x, s: s, lambda s: [s], [])
    with pytest.raises(ValueError):
        carrier.derive(lambda: 0.0, lambda s, x: s, lambda x, s: s, lambda s: [s], [1.0],
                       trials=0)
    with pytest.raises(TypeError, match="inverse must return a list"):
        carrier.derive(lambda: 0.0, lambda s, x: s + x, lambda x, s: x + s, lambda s: 3,
                       [1.0, 2.0])
