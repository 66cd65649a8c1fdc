"""Carriers written in Python (issue 36 item 4): explore an algorithm before writing its header.

A ``Carrier`` holds the four functions of DESIGN.md's carrier (identity, lift, combine,
finalize; push optional) as Python callables over any state Python can hold: a float rounded
after every operation with ``carrier.round`` (or ``struct``'s fp32 cast), a ``Fraction`` held
exactly, a tuple of either. ``replay`` runs it through the merge tree of any schedule carrier
knows (``carrier.tree``): every chain pushes its inputs in index order from ``identity()``, then
the tree's combines run in the tree's order, exactly as core/replay_oracle.hpp does for a C++ carrier,
so a Python carrier that performs the same roundings as a built-in gives the built-in's bits
(tests/test_user_carriers.py checks a sum and online softmax against ``carrier.eval``).
``laws`` measures the laws ``carrier laws`` measures for a built-in: identity, commutativity and
associativity bitwise in the carrier's arithmetic, push == combine(lift), the homomorphism
(fold of a list == combine of the folds of its two halves), and, given an ``exact`` twin (the
same carrier over exact or much wider arithmetic), associativity and commutativity of the
exact carrier. ``derive`` is ``carrier derive`` for a Python loop: given its leftward and
rightward folds and a weak right inverse, it checks the folds agree and builds the combine the
Third Homomorphism Theorem gives. Slow (one Python call per operation), never approximate about
what it reports.
"""
import json as _json
import math as _math
import random as _random
import struct as _struct
from fractions import Fraction as _Fraction

__all__ = ["Carrier", "replay", "laws", "derive"]


class Carrier:
    """A carrier written in Python.

    Parameters
    ----------
    identity : callable () -> state
        The identity state (a sum's 0, online softmax's (-inf, 0)).
    lift : callable (x) -> state
        One input's state.
    combine : callable (a, b) -> state
        Merge of two states; ``a`` is always the earlier segment.
    finalize : callable (state) -> result, optional
        The result of a state (default: the state itself).
    push : callable (state, x) -> state, optional
        The sequential step (default: ``combine(state, lift(x))``).
    name : str, optional
        For messages and repr.
    commutative : bool, optional
        Declared bitwise commutativity of combine in the carrier's arithmetic (``laws``
        checks it); default False.

    Examples
    --------
    >>> import struct
    >>> f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]   # round to fp32 (rne)
    >>> fsum = carrier.Carrier(lambda: 0.0, f32, lambda a, b: f32(a + b), commutative=True)
    >>> carrier.replay(fsum, [1.0, 2.0**-24, 2.0**-24], "seq")
    1.0
    >>> carrier.replay(fsum, [1.0, 2.0**-24, 2.0**-24], "reverse")
    1.0000001192092896
    """

    def __init__(self, identity, lift, combine, finalize=None, push=None, *, name="python carrier",
                 commutative=False):
        for what, f in (("identity", identity), ("lift", lift), ("combine", combine)):
            if not callable(f):
                raise TypeError(f"carrier.Carrier: {what} must be callable, not "
                                f"{type(f).__name__}")
        for what, f in (("finalize", finalize), ("push", push)):
            if f is not None and not callable(f):
                raise TypeError(f"carrier.Carrier: {what} must be callable or None, not "
                                f"{type(f).__name__}")
        if not isinstance(name, str):
            raise TypeError(f"carrier.Carrier: name must be a str, not {type(name).__name__}")
        if not isinstance(commutative, bool):
            raise TypeError("carrier.Carrier: commutative must be True or False")
        self.identity = identity
        self.lift = lift
        self.combine = combine
        self.finalize = finalize if finalize is not None else (lambda s: s)
        self._push = push
        self.name = name
        self.commutative = commutative

    def push(self, state, x):
        """The sequential step: ``push`` when given, else ``combine(state, lift(x))``."""
        if self._push is not None:
            return self._push(state, x)
        return self.combine(state, self.lift(x))

    def __repr__(self):
        return f"Carrier({self.name!r})"


def _check_carrier(c, fn):
    if not isinstance(c, Carrier):
        raise TypeError(f"carrier.{fn}: expected a carrier.Carrier, not {type(c).__name__}")


def _inputs(x, fn):
    """x as a list of Python numbers (or the objects given, for exact carriers)."""
    try:
        import numpy as np
        if isinstance(x, np.ndarray):
            if x.ndim != 1:
                raise ValueError(f"carrier.{fn}: x must be one-dimensional, got shape {x.shape}")
            return x.tolist()
    except ImportError:
        pass
    if isinstance(x, (str, bytes)) or not hasattr(x, "__iter__"):
        raise TypeError(f"carrier.{fn}: x must be a sequence of inputs, not {type(x).__name__}")
    return list(x)


def _checked_run_arguments(inputs, trials, seed, fn):
    """The example inputs as a non-empty list, after checking trials and seed (laws, derive)."""
    xs = _inputs(inputs, fn)
    if not xs:
        raise ValueError(f"carrier.{fn}: inputs must not be empty")
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise ValueError(f"carrier.{fn}: trials must be a positive int, got {trials!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"carrier.{fn}: seed must be an int, not {type(seed).__name__}")
    return xs


def replay(c, x, schedule="seq"):
    """Run a Python carrier over x through a schedule's merge tree; returns finalize(root).

    Parameters
    ----------
    c : carrier.Carrier
    x : sequence
        The inputs, in index order (a 1-D array or any sequence; values are passed to lift and
        push as they are, so an exact carrier may be given Fractions).
    schedule : str
        Any schedule ``carrier tree`` accepts (seq, pairwise, blocked:64:pairwise, strided:8,
        random:3, omp:4:pairwise, canonical:16, numpy, torch:8, file:TREE.json, ...). Chains
        lifted whole (``:lift``) are pushed element by element (a Python carrier has no
        LiftTile), and a matrix unit's fused chains (``mma:``) are refused: their arithmetic is
        core/mma.hpp's, not the carrier's.

    Examples
    --------
    >>> f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]
    >>> fsum = carrier.Carrier(lambda: 0.0, f32, lambda a, b: f32(a + b))
    >>> carrier.replay(fsum, np.arange(10.0), "pairwise")
    45.0
    """
    from . import tree as _tree
    _check_carrier(c, "replay")
    xs = _inputs(x, "replay")
    if not isinstance(schedule, str):
        raise TypeError(f"carrier.replay: schedule must be a str, not {type(schedule).__name__}")
    if not xs:
        return c.finalize(c.identity())
    t = _json.loads(_tree(schedule, len(xs)).to_json())
    nodes = []
    for chain in t["chains"]:
        if chain.get("mode", "push") == "fused":
            raise ValueError(f"carrier.replay: schedule '{schedule}' has a matrix unit's fused "
                             "chains (mma:): their arithmetic is core/mma.hpp's, not a Python "
                             "carrier's")
        s = c.identity()
        first, stride = chain["first"], chain.get("stride", 1)
        for j in range(chain["count"]):
            s = c.push(s, xs[first + j * stride])
        nodes.append(s)
    for a, b in t["combines"]:
        nodes.append(c.combine(nodes[a], nodes[b]))
    return c.finalize(nodes[-1])


def _bits(v):
    """A hashable, bitwise key of a state: floats by their binary64 bits (NaNs and signed zeros
    distinguished), containers element by element, anything else by value."""
    if isinstance(v, float):
        return ("f", _struct.pack("<d", v))
    if isinstance(v, (tuple, list)):
        return tuple(_bits(e) for e in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _bits(e)) for k, e in v.items()))
    try:
        import numpy as np
        if isinstance(v, np.floating):
            return ("f", _struct.pack("<d", float(v)))
        if isinstance(v, np.ndarray):
            return ("a", v.dtype.str, v.shape, v.tobytes())
    except ImportError:
        pass
    return ("v", v)


def _flat_numbers(v):
    if isinstance(v, (tuple, list)):
        out = []
        for e in v:
            out += _flat_numbers(e)
        return out
    return [v]


def _rel_gap(a, b):
    """Largest relative difference between two (nested) exact or float results; 0 when equal."""
    worst = _Fraction(0)
    for p, q in zip(_flat_numbers(a), _flat_numbers(b)):
        if p == q:
            continue
        try:
            fp, fq = _Fraction(p), _Fraction(q)
        except (TypeError, ValueError, OverflowError):
            return _math.inf  # a NaN or infinity on one side only
        scale = max(abs(fp), abs(fq))
        worst = max(worst, abs(fp - fq) / scale)
    return float(worst)


def _fold(c, xs):
    s = c.identity()
    for v in xs:
        s = c.push(s, v)
    return s


def laws(c, inputs, *, exact=None, to_exact=None, trials=200, seed=1):
    """Measure a Python carrier's laws, as ``carrier laws`` does for a built-in.

    Parameters
    ----------
    c : carrier.Carrier
        The carrier in its working arithmetic.
    inputs : sequence
        Example inputs; states are folds of random runs of 1 to 8 of them.
    exact : carrier.Carrier, optional
        The same carrier over exact (``Fraction``) or much wider arithmetic: when given, the
        exact laws (associative, commutative, homomorphism) are measured on it, over the same
        runs of inputs mapped by ``to_exact``.
    to_exact : callable, optional
        Maps an input to the exact carrier's input (default ``fractions.Fraction``).
    trials, seed : int
        Number of random triples (and pairs, pushes, splits) and the random seed.

    Returns a pandas DataFrame (a list of dicts without pandas) with columns law, declared,
    measured, verdict, figures, like ``carrier.laws``; ``df.attrs["refuted"]`` lists the laws
    whose declaration the measurement refutes.

    Examples
    --------
    >>> f32 = lambda v: struct.unpack("f", struct.pack("f", v))[0]
    >>> fsum = carrier.Carrier(lambda: 0.0, f32, lambda a, b: f32(a + b), commutative=True)
    >>> exact = carrier.Carrier(lambda: Fraction(0), lambda v: v, lambda a, b: a + b)
    >>> df = carrier.user.laws(fsum, np.random.default_rng(1).normal(size=64), exact=exact)
    >>> df.attrs["refuted"]
    []
    """
    _check_carrier(c, "laws")
    if exact is not None:
        _check_carrier(exact, "laws")
    xs = _checked_run_arguments(inputs, trials, seed, "laws")
    conv = to_exact if to_exact is not None else _Fraction
    rng = _random.Random(seed)

    def run():
        k = rng.randint(1, min(8, len(xs)))
        i = rng.randrange(0, len(xs) - k + 1)
        return xs[i:i + k]

    rows, refuted = [], []

    def row(law, declared, held, figures):
        measured = "-" if held is None else ("yes" if held else "no")
        if declared == "-":
            verdict = "info"
        elif declared == measured:
            verdict = "ok"
        else:
            verdict = "REFUTED" if declared == "yes" else "better than declared"
            if declared == "yes":
                refuted.append(law)
        rows.append({"law": law, "declared": declared, "measured": measured,
                     "verdict": verdict, "figures": figures})

    ident = c.identity()
    bad = 0
    for _ in range(trials):
        s = _fold(c, run())
        if _bits(c.combine(ident, s)) != _bits(s) or _bits(c.combine(s, ident)) != _bits(s):
            bad += 1
    row("identity (bitwise)", "yes", bad == 0, f"{2 * trials} checks, {bad} violations")

    runs = [(run(), run(), run()) for _ in range(trials)]
    differ = 0
    for r1, r2, r3 in runs:
        a, b, d = _fold(c, r1), _fold(c, r2), _fold(c, r3)
        if _bits(c.combine(c.combine(a, b), d)) != _bits(c.combine(a, c.combine(b, d))):
            differ += 1
    row("associativity defect (bitwise)", "-", None,
        f"{differ} of {trials} triples differ ({100.0 * differ / trials:.1f}%)")

    differ = 0
    for r1, r2, _ in runs:
        a, b = _fold(c, r1), _fold(c, r2)
        if _bits(c.combine(a, b)) != _bits(c.combine(b, a)):
            differ += 1
    row("bitwise commutative", "yes" if c.commutative else "no", differ == 0,
        f"{trials} pairs, {differ} differ")

    differ = 0
    for r1, r2, _ in runs:
        s = _fold(c, r1)
        if _bits(c.push(s, r2[0])) != _bits(c.combine(s, c.lift(r2[0]))):
            differ += 1
    row("push == combine(lift)", "yes", differ == 0, f"{trials} pushes, {differ} differ")

    equal = 0
    for r1, r2, r3 in runs:
        whole = r1 + r2 + r3
        cut = rng.randint(1, len(whole) - 1) if len(whole) > 1 else 0
        if _bits(_fold(c, whole)) == _bits(c.combine(_fold(c, whole[:cut]), _fold(c, whole[cut:]))):
            equal += 1
    row("homomorphism (bitwise)", "-", None,
        f"bitwise equal {100.0 * equal / trials:.1f}% of {trials} splits")

    if exact is not None:
        gap_a = gap_c = gap_h = 0.0
        for r1, r2, r3 in runs:
            e1, e2, e3 = ([conv(v) for v in r] for r in (r1, r2, r3))
            a, b, d = _fold(exact, e1), _fold(exact, e2), _fold(exact, e3)
            gap_a = max(gap_a, _rel_gap(exact.finalize(exact.combine(exact.combine(a, b), d)),
                                        exact.finalize(exact.combine(a, exact.combine(b, d)))))
            gap_c = max(gap_c, _rel_gap(exact.finalize(exact.combine(a, b)),
                                        exact.finalize(exact.combine(b, a))))
            whole = e1 + e2 + e3
            cut = len(e1)
            gap_h = max(gap_h, _rel_gap(exact.finalize(_fold(exact, whole)),
                                        exact.finalize(exact.combine(_fold(exact, whole[:cut]),
                                                                     _fold(exact, whole[cut:])))))
        row("associative (exact twin)", "yes", gap_a == 0, f"max rel gap {gap_a:.3g} over "
            f"{trials} triples")
        row("commutative (exact twin)", "-", gap_c == 0, f"max rel gap {gap_c:.3g} over "
            f"{trials} pairs")
        row("homomorphism (exact twin)", "yes", gap_h == 0, f"max rel gap {gap_h:.3g} over "
            f"{trials} splits")

    cols = ["law", "declared", "measured", "verdict", "figures"]
    try:
        import pandas as pd
    except ImportError:
        return rows
    df = pd.DataFrame(rows, columns=cols)
    df.attrs["refuted"] = refuted
    df.attrs["carrier"] = c.name
    return df


def _describe(v, limit=12):
    if isinstance(v, list):
        items = [_describe(e) for e in v[:limit]]
        more = f", ... ({len(v)} values)" if len(v) > limit else ""
        return "[" + ", ".join(items) + more + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(_describe(e) for e in v) + ")"
    if isinstance(v, float):
        return v.hex()
    return repr(v)


class Derivation:
    """What ``derive`` found (attributes; ``to_dict()`` gives them as a dict).

    folds_agree : bool
        The leftward and rightward folds agreed (within ``tolerance``) on every random list.
    max_fold_gap, max_inverse_gap, max_combine_gap : float
        Largest relative differences: leftward vs rightward fold; fold(inverse(s)) vs s;
        the derived combine vs ``combine`` (None when no combine was given).
    max_inverse_length : int
        The longest list ``inverse`` returned.
    counterexample : str or None
        The first list whose folds differ, or the first pair whose combines differ.
    holds : bool
        Folds agree, and the inverse (and the combine, when given) within ``tolerance``.
    carrier : carrier.Carrier or None
        The derived carrier: identity ``empty``, push ``push_back``, lift ``push_back(empty(), x)``,
        combine(a, b) = fold(inverse(a) + inverse(b)); None when the folds disagree (no combine
        exists for that state).
    """

    __module__ = "carrier.user"

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def to_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != "carrier"}

    def __repr__(self):
        verdict = "holds" if self.holds else ("REJECTED" if not self.folds_agree else "DISAGREES")
        return f"Derivation({self.name!r}: {verdict})"


def derive(empty, push_back, push_front, inverse, inputs, *, combine=None, finalize=None,
           name="python loop", trials=200, seed=1, tolerance=2.0 ** -40):
    """The Third Homomorphism Theorem as a construction, as ``carrier derive`` does in C++.

    A list function h given both as a leftward fold (``push_back(state, x)`` from ``empty()``) and
    as a rightward fold (``push_front(x, state)``) is a list homomorphism, and for any weak right
    inverse (``inverse(s)`` returns a list whose leftward fold is s) its combine is
    ``combine(a, b) = h(inverse(a) + inverse(b))`` (Gibbons 1996; Morita et al., PLDI 2007).
    ``derive`` checks the folds agree on ``trials`` random lists, then on ``trials`` pairs of
    states measures fold(inverse(s)) against s and, when ``combine`` (a hand-written combine)
    is given, the derived combine against it.

    Parameters
    ----------
    empty : callable () -> state
        h([]).
    push_back : callable (state, x) -> state
        The loop's step (the leftward fold).
    push_front : callable (x, state) -> state
        The same loop run from the other end (the rightward fold).
    inverse : callable (state) -> list
        A weak right inverse of h: a short list of inputs whose fold is the state.
    inputs : sequence
        Example inputs; the random lists are runs of 1 to 30 of them.
    combine : callable (a, b) -> state, optional
        A hand-written combine to compare with the derived one.
    finalize : callable (state) -> result, optional
        For the derived carrier.
    name : str
    trials, seed : int
    tolerance : float
        Largest relative difference counted as agreement (default 2^-40, as ``carrier derive``
        for fp64: the two folds round differently, by a few ulps per element; a
        non-homomorphism differs at O(1)). Raise it for narrower arithmetic (2^-10 for fp32
        folds of 30 elements), use 0 for exact (``Fraction``) states.

    Returns a ``Derivation``.

    Examples
    --------
    Online softmax's (m, d) in fp64 (exp rounded by libm):

    >>> def push_back(s, x):
    ...     m = max(s[0], x)
    ...     return (m, s[1] * math.exp(s[0] - m) + math.exp(x - m))
    >>> def push_front(x, s):
    ...     m = max(s[0], x)
    ...     return (m, math.exp(x - m) + s[1] * math.exp(s[0] - m))
    >>> def inverse(s):   # m itself, then k inputs of weight (d - 1) / k <= 1 each
    ...     m, d = s
    ...     k = math.ceil(d - 1) if d else 0
    ...     return ([] if d == 0 else [m]) + ([m + math.log((d - 1) / k)] * k if k else [])
    >>> d = carrier.user.derive(lambda: (-math.inf, 0.0), push_back, push_front, inverse,
    ...                         np.random.default_rng(1).normal(size=64))
    >>> d.folds_agree, d.holds
    (True, True)
    """
    for what, f in (("empty", empty), ("push_back", push_back), ("push_front", push_front),
                    ("inverse", inverse)):
        if not callable(f):
            raise TypeError(f"carrier.derive: {what} must be callable, not {type(f).__name__}")
    for what, f in (("combine", combine), ("finalize", finalize)):
        if f is not None and not callable(f):
            raise TypeError(f"carrier.derive: {what} must be callable or None, not "
                            f"{type(f).__name__}")
    xs = _checked_run_arguments(inputs, trials, seed, "derive")
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or \
            not tolerance >= 0:
        raise ValueError(f"carrier.derive: tolerance must be a number >= 0, got {tolerance!r}")
    if not isinstance(name, str):
        raise TypeError(f"carrier.derive: name must be a str, not {type(name).__name__}")
    rng = _random.Random(seed)

    def run():
        k = rng.randint(1, min(30, len(xs)))
        i = rng.randrange(0, len(xs) - k + 1)
        return xs[i:i + k]

    def left(lst):
        s = empty()
        for v in lst:
            s = push_back(s, v)
        return s

    def right(lst):
        s = empty()
        for v in reversed(lst):
            s = push_front(v, s)
        return s

    def inv(s):
        lst = inverse(s)
        try:
            return list(lst)
        except TypeError:
            raise TypeError(f"carrier.derive: inverse must return a list of inputs, not "
                            f"{type(lst).__name__}") from None

    def derived(a, b):
        return left(inv(a) + inv(b))

    report = dict(name=name, trials=trials, seed=seed, tolerance=float(tolerance),
                  folds_agree=True, max_fold_gap=0.0, max_inverse_gap=0.0,
                  max_combine_gap=None if combine is None else 0.0, max_inverse_length=0,
                  counterexample=None)
    for t in range(trials):
        lst = run()
        a, b = left(lst), right(lst)
        gap = _rel_gap(a, b)
        report["max_fold_gap"] = max(report["max_fold_gap"], gap)
        if not gap <= tolerance and report["folds_agree"]:
            report["folds_agree"] = False
            report["counterexample"] = (
                f"not a list homomorphism: the leftward and rightward folds of the same list "
                f"differ (seed {seed}, trial {t}): list (n = {len(lst)}) = {_describe(lst)}; "
                f"leftward fold = {_describe(a)}; rightward fold = {_describe(b)}; relative "
                f"difference {gap:.3g}")
    if report["folds_agree"]:
        for t in range(trials):
            a, b = left(run()), left(run())
            lst = inv(a)
            report["max_inverse_length"] = max(report["max_inverse_length"], len(lst))
            report["max_inverse_gap"] = max(report["max_inverse_gap"], _rel_gap(left(lst), a))
            if combine is not None:
                d, h = derived(a, b), combine(a, b)
                gap = _rel_gap(d, h)
                if gap > report["max_combine_gap"] and gap > tolerance and \
                        report["counterexample"] is None:
                    report["counterexample"] = (
                        f"derived and hand-written combine differ (seed {seed}, trial {t}): "
                        f"a = {_describe(a)}, b = {_describe(b)}; h(inverse(a) + inverse(b)) = "
                        f"{_describe(d)}; combine(a, b) = {_describe(h)}")
                report["max_combine_gap"] = max(report["max_combine_gap"], gap)
    report["holds"] = bool(report["folds_agree"] and report["max_inverse_gap"] <= tolerance and
                           (combine is None or report["max_combine_gap"] <= tolerance))
    report["carrier"] = None
    if report["folds_agree"]:
        report["carrier"] = Carrier(empty, lambda x: push_back(empty(), x), derived,
                                    finalize=finalize, push=push_back, name=name + " (derived)")
    return Derivation(**report)
