"""carrier: carrier-state reductions under declared merge orders, from Python.

The same trial as ``carrier eval`` (one op, storage dtype, compute type, rounding, exp policy,
merge order and backend, measured against a certified reference and an a-priori bound), the
merge trees of ``carrier tree``, the law checks of ``carrier laws`` and the sweeps of
``carrier sweep``, with numpy arrays in and pandas tables out. Parameter names and defaults are
the CLI's (``--acc`` is ``acc=``, ``--sr-seed`` is ``sr_seed=``, ``--precision`` a per-role
policy); dtypes may be carrier's names (``"bf16"``) or numpy's (``np.float16``, ``"float32"``,
``"bfloat16"``, ``"half"``).

Errors are Python's kinds: a wrong type is a TypeError, a bad value or combination a ValueError
with the CLI's one-line message, a missing file or folder a FileNotFoundError.

>>> import numpy as np, carrier
>>> carrier.eval("dot", np.array([1.0, 2.0]), np.array([3.0, 4.0]), dtype="fp64").result
11.0

``carrier.round(x, fmt, round)`` rounds a whole array into a format (CPFloat's job):

>>> carrier.round([0.1, 70000.0], "bf16", "rz")
array([9.9609375e-02, 6.9632000e+04])

The compiled part is carrier._carrier (experiments/python/module.cpp).
"""
import errno as _errno
import math as _math
import operator as _operator
import os as _os
import warnings as _warnings

from . import _carrier
from ._carrier import Tree

__version__ = _carrier.__version__

__all__ = ["eval", "explain", "tree", "laws", "derive", "sweep", "read_sweep", "ops", "round",
           "quantize", "EvalResult", "Tree", "Carrier", "replay", "matmul"]


def __dir__():
    return sorted(__all__ + ["__version__"])


# ---------------------------------------------------------------------------------------------
# Argument checks: Python's exception kinds before anything reaches C++.

# numpy's (and ml_dtypes', torch's) names for carrier's formats.
_DTYPE_ALIASES = {
    "float16": "fp16", "half": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32", "single": "fp32",
    "float64": "fp64", "double": "fp64",
    "float8_e4m3fn": "fp8e4m3", "float8_e4m3": "fp8e4m3",
    "float8_e5m2": "fp8e5m2",
}


def _format_name(value, what):
    """A carrier format name from a carrier name, a numpy dtype or type, or an alias string."""
    if isinstance(value, str):
        text = value[6:] if value.startswith("torch.") else value
        return _DTYPE_ALIASES.get(text, value)
    if value is None or isinstance(value, (bool, int, float, bytes, list, tuple, dict)):
        raise TypeError(f"{what} must be a format name such as 'bf16' or a numpy dtype such as "
                        f"np.float16, not {type(value).__name__}")
    if type(value).__module__.startswith("torch"):  # torch.bfloat16 and friends, no import
        return _format_name(str(value), what)
    import numpy as np
    try:
        dt = np.dtype(value)
    except TypeError:
        raise TypeError(f"{what} must be a format name such as 'bf16' or a numpy dtype such as "
                        f"np.float16, not {value!r}") from None
    if dt.name in _DTYPE_ALIASES:
        return _DTYPE_ALIASES[dt.name]
    raise ValueError(f"{what}: numpy dtype {dt.name} is not a floating-point format carrier has "
                     f"(float16 bfloat16 float32 float64, float8_e4m3fn float8_e5m2)")


def _acc_name(value, what="acc"):
    """acc: a format, 'same', mpfr:BITS, or INNER>OUTER (each side mapped as a format)."""
    if isinstance(value, str) and ">" in value:
        return ">".join(_format_name(part, what) for part in value.split(">"))
    return _format_name(value, what)


def _policy_text(value):
    """precision: a per-role policy string (role=FORMAT[@ROUND] items, or a preset first) or a
    dict {role: format}; numpy names in role values are mapped."""
    if isinstance(value, dict):
        items = []
        for role, fmt in value.items():
            if not isinstance(role, str):
                raise TypeError(f"precision: role names are strings, got {role!r}")
            items.append(f"{role}={_acc_name(fmt, 'precision ' + role) if role != 'mma' else fmt}")
        value = ",".join(items)
    if not isinstance(value, str):
        raise TypeError("precision must be a per-role policy string such as 'in=bf16,acc=fp32' "
                        f"(or a dict {{'in': 'bf16', 'acc': 'fp32'}}), not {type(value).__name__}")
    items = []
    for item in value.split(","):
        role, eq, rest = item.partition("=")
        if eq and role.strip() in ("in", "prod", "acc", "combine", "state", "s", "p", "out"):
            fmt, at, mode = rest.partition("@")
            rest = _DTYPE_ALIASES.get(fmt, fmt) + at + mode
        items.append(role + eq + rest)
    text = ",".join(items)
    if "=" not in text and text not in _carrier._precision_presets():
        raise ValueError(
            f"precision '{text}' is not a per-role policy: precision is the CLI's --precision, "
            "role=FORMAT[@ROUND] items (in prod acc combine state s p out), e.g. "
            f"'in=bf16,acc=fp32', or a preset ({' '.join(_carrier._precision_presets())}); "
            "for the compute type alone give acc=")
    return text


def _text(value, what, allow_none=True):
    if value is None and allow_none:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, not {type(value).__name__}")
    return value


def _count(value, what, allow_none=True, limit=2**64 - 1):
    """A non-negative integer (int or numpy integer, not bool, float or str)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or value is None:
        raise TypeError(f"{what} must be an integer, not {type(value).__name__}")
    try:
        v = _operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {type(value).__name__}") from None
    if v < 0:
        raise ValueError(f"{what} must be 0 or more, got {v}")
    if v > limit:
        raise ValueError(f"{what} must be at most {limit}, got {v}")
    return v


def _flag(value, what):
    import numpy as np
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be True or False, not {type(value).__name__}")
    return bool(value)


def _array(value, what):
    """A numeric array as float64, C-contiguous (float64 C-contiguous input is not copied)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, dict, set)):
        raise TypeError(f"{what} must be an array of real numbers, not {type(value).__name__}")
    import numpy as np
    a = np.asarray(value)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{what} must hold real numbers, got dtype {a.dtype}")
    return np.asarray(a, dtype=np.float64, order="C")  # ascontiguousarray would make 0-d 1-d


def _path(value, what):
    if not isinstance(value, (str, bytes, _os.PathLike)):
        raise TypeError(f"{what} must be a path (str or os.PathLike), not {type(value).__name__}")
    path = _os.fsdecode(_os.fspath(value))
    return path


def _existing_file(value, what):
    path = _path(value, what)
    if path == "-":
        raise ValueError(f"{what}: standard input is the CLI's; pass the numbers as an array")
    if not _os.path.exists(path):
        raise FileNotFoundError(_errno.ENOENT, _os.strerror(_errno.ENOENT), path)
    if _os.path.isdir(path):
        raise IsADirectoryError(_errno.EISDIR, _os.strerror(_errno.EISDIR), path)
    return path


# ---------------------------------------------------------------------------------------------
# eval


class EvalResult:
    """One measured trial (carrier.eval's result).

    Its attributes are the fields of ``carrier eval --format json`` (and of the sweep CSV's
    columns): op dtype acc round out precision sr_seed exp backend engine head_dim schedule (as
    requested, after defaults) schedule_used (as executed: it replays to the same bits) defaults
    tree_max_depth tree_mean_depth tree_hash n input result reference abs_error rel_error
    ulp_error cond reference_tier reference_bits reference_certified bound_kind bound_formula
    error_to_bound bound_vacuous u reference_seconds seconds, softmax's and attention's
    normwise_inf_error normwise_2_error componentwise_error, argmax's result_index and
    reference_index, role_bound* with precision=, and components (every component computed).
    ``out`` is the format the result was rounded to when precision= has a combine wider than
    acc (in=bf16,acc=fp32,combine=fp64 delivers fp32, and ulp_error counts fp32 ulps), else None.
    Grouped views: ``errors`` (abs rel ulp, or normwise_inf normwise_2 componentwise),
    ``bound`` (value ratio available kind formula relative rigorous vacuous u; the number is
    ``to_dict()["bound"]``), ``tree`` (max_depth mean_depth hash seconds), ``ratio``
    (error_to_bound), ``tier``, ``certified``. Picklable; ``to_dict()`` is the flat dict.

    >>> r = carrier.eval("sum", [0.5, 0.25], dtype="fp32")
    >>> r.result, r.to_dict()["rel_error"]
    (0.75, 0.0)
    """

    __module__ = "carrier"

    def __init__(self, fields):
        self.__dict__["_fields"] = dict(fields)

    def __getattr__(self, name):
        if name.startswith("__") or name == "_fields":
            raise AttributeError(name)
        f = self.__dict__.get("_fields", {})
        if name in f and name != "bound":
            return f[name]
        if name == "errors":
            if f["vector_out"]:
                return {"normwise_inf": f["normwise_inf_error"],
                        "normwise_2": f["normwise_2_error"],
                        "componentwise": f["componentwise_error"]}
            return {"abs": f["abs_error"], "rel": f["rel_error"], "ulp": f["ulp_error"]}
        if name == "bound":
            value = f["bound"]
            return {"available": f["bound_available"],
                    "value": _math.nan if value is None else value,
                    "ratio": f["error_to_bound"], "kind": f["bound_kind"],
                    "formula": f["bound_formula"], "relative": f["bound_relative"],
                    "rigorous": f["bound_rigorous"], "vacuous": f["bound_vacuous"], "u": f["u"]}
        if name == "tree":
            return {"max_depth": f["tree_max_depth"], "mean_depth": f["tree_mean_depth"],
                    "hash": f["tree_hash"], "seconds": f["seconds"]}
        if name == "ratio":
            return f["error_to_bound"]
        if name == "tier":
            return f["reference_tier"]
        if name == "certified":
            return f["reference_certified"]
        raise AttributeError(f"'EvalResult' has no attribute '{name}'")

    def __setattr__(self, name, value):
        raise AttributeError("EvalResult is read-only")

    def __dir__(self):
        return sorted(set(self._fields) | {"errors", "bound", "tree", "ratio", "tier",
                                           "certified", "to_dict"})

    def __getstate__(self):
        return self._fields

    def __setstate__(self, state):
        self.__dict__["_fields"] = dict(state)

    def __eq__(self, other):
        if not isinstance(other, EvalResult):
            return NotImplemented
        a, b = self._fields, other._fields
        if a.keys() != b.keys():
            return False
        same = lambda u, v: u == v or (isinstance(u, float) and isinstance(v, float)
                                       and _math.isnan(u) and _math.isnan(v))
        return all(same(a[k], b[k]) if not isinstance(a[k], list)
                   else len(a[k]) == len(b[k]) and all(map(same, a[k], b[k])) for k in a)

    __hash__ = None

    def to_dict(self):
        """The result as a flat dict with the CLI's JSON field names (a DataFrame row).

        >>> pd.DataFrame([carrier.eval("sum", x, dtype="bf16", schedule=s).to_dict()
        ...               for s in ("seq", "pairwise")])[["schedule", "rel_error"]]
        """
        d = dict(self._fields)
        d["components"] = list(d["components"])
        d["other_components"] = dict(d["other_components"])
        return d

    def __repr__(self):
        f = self._fields
        main = (f"result={f['result']!r}, reference={f['reference']!r}" if not f["vector_out"]
                else f"componentwise_error={f['componentwise_error']!r}")
        return (f"EvalResult(op={f['op']}, dtype={f['dtype']}, acc={f['acc']}, round={f['round']}, "
                f"schedule_used={f['schedule_used']}, n={f['n']}, {main}, "
                f"rel_error={f['rel_error']!r}, tier={f['reference_tier']})")


def eval(op, x=None, y=None, *, dtype=None, acc=None, round=None, precision=None, schedule=None,
         exp=None, backend="replay", engine="fast", input=None, gen=None, n=None, seed=1,
         sr_seed=None, head_dim=None, q=None, k=None, v=None, allow_nonfinite=False,
         rounding=None):
    """One reduction, measured: ``carrier eval`` in process.

    The input, one of:
      x            one column (sum, lse, welford, ...): a one-dimensional array-like of real
                   numbers (float64 C-contiguous arrays are read in place, others converted once)
      x, y         dot and affine's two columns, one-dimensional and of one length; or x alone
                   of shape (n, 2)
      q=, k=, v=   attention's queries, keys and values, each of shape (n, head_dim)
      input=       a file as ``--input`` (one number per line, two columns for dot/affine)
      gen=, n=     a generator as ``--gen`` (normal, uniform01, ill:1e8, ...), n values,
                   seed= (default 1)
    Every value is rounded to the storage format first; nan and inf are refused unless
    allow_nonfinite=True (``--allow-nonfinite``).

    Parameters as the CLI's flags: dtype (storage; carrier's names or numpy's: np.float16,
    "bfloat16", "half"), acc (compute type; default the dtype, or fp32 for 16-bit storage on
    simd/omp/cuda), round ("rne" rna rz ru rd ro sr; ``rounding=`` is a deprecated alias),
    precision (``--precision``: a per-role policy "in=bf16,acc=fp32", a preset, or a dict; it
    replaces dtype, acc and round), schedule (default seq on replay, the kernel's own on
    simd/omp/cuda), exp (libm portable fast), backend (replay simd omp cuda), engine (fast
    oracle), sr_seed (default seed), head_dim (attention: 64 or 128; q's width by default).
    Left-out acc, exp and schedule take the backend's defaults (``result.defaults`` says which).

    Returns an EvalResult (``to_dict()``: the CLI's JSON fields). Raises TypeError for a wrong
    type, ValueError for a bad value, shape or combination (the CLI's one-line message),
    FileNotFoundError for a missing input file.

    >>> import numpy as np, carrier
    >>> carrier.eval("sum", np.full(10, 0.1), dtype="fp64", schedule="seq").result
    0.9999999999999999
    >>> carrier.eval("dot", [1, 2, 3], [4, 5, 6], dtype=np.float32).result
    32.0
    >>> carrier.eval("lse", gen="normal", n=1000, precision="in=bf16,acc=fp32").rel_error
    """
    _text(op, "op", allow_none=False)
    if op == "matmul":
        raise ValueError("op matmul takes M, N and K: carrier.matmul(m, n, k, ...) or "
                         "carrier.matmul(a=A, b=B, ...) (eval --op matmul in process)")
    if rounding is not None:
        _warnings.warn("carrier.eval(rounding=) is deprecated: use round=, as the CLI's --round",
                       DeprecationWarning, stacklevel=2)
        _text(rounding, "rounding")
        if round is not None and round != rounding:
            raise ValueError("give either round or rounding (its deprecated alias), not both")
        round = rounding
    if precision is not None:
        precision = _policy_text(precision)
    dtype = None if dtype is None else _format_name(dtype, "dtype")
    acc = None if acc is None else _acc_name(acc)
    _text(round, "round")
    _text(schedule, "schedule")
    _text(exp, "exp")
    _text(backend, "backend", allow_none=False)
    _text(engine, "engine", allow_none=False)
    _text(gen, "gen")
    path = None if input is None else _existing_file(input, "input")
    result = _carrier._eval(
        op, _array(x, "x"), _array(y, "y"), _array(q, "q"), _array(k, "k"), _array(v, "v"),
        path or "", dtype, acc, round, precision, schedule, exp, backend, engine, gen or "",
        _count(n, "n"), _count(seed, "seed", allow_none=False), _count(sr_seed, "sr_seed"),
        _count(head_dim, "head_dim"), _flag(allow_nonfinite, "allow_nonfinite"))
    return EvalResult(result)


def matmul(m=None, n=None, k=None, *, a=None, b=None, gen="normal", seed=1, dtype=None,
           acc=None, round=None, precision=None, schedule=None, exp=None, backend="replay",
           engine="fast", threads=None, max_seconds=None, outputs=False, allow_nonfinite=False):
    """An M x N x K product C = A B, every output a dot of length K: ``carrier eval --op
    matmul`` in process.

    Each output C[i, j] is ``carrier.eval("dot", A[i, :], B[:, j], ...)`` under the same dtype,
    acc, round or precision, schedule (an ``mma:PROFILE[:promote:N]``, ``splitk:S[:INNER]``,
    blocked, pairwise, ...), exp, backend and engine, bit for bit, measured against the exact
    reference of that output. The input: a= (M x K) and b= (K x N) array-likes (m, n, k then
    follow from their shapes), or gen= (A from seed, B from seed + 1) with m, n and k.
    threads (default every core), max_seconds (``--max-seconds``: the estimated time past which
    the product is refused).

    Returns a dict of the CLI's JSON fields (max_abs_error, max_rel_error, median_rel_error,
    normwise_fro_error = ||C^ - C||_F / ||C||_F, normwise_max_error, ...); with outputs=True
    also "c" and "reference", numpy arrays of shape (m, n). Raises ValueError with the CLI's
    one-line message for a bad value or a size past memory or max_seconds.

    >>> import carrier
    >>> r = carrier.matmul(64, 64, 512, dtype="fp16", acc="fp32", schedule="mma:hopper")
    >>> r["normwise_fro_error"] < 1e-5
    True
    """
    import json
    import tempfile
    if precision is not None:
        precision = _policy_text(precision)
    dtype = None if dtype is None else _format_name(dtype, "dtype")
    acc = None if acc is None else _acc_name(acc)
    for value, what in ((round, "round"), (schedule, "schedule"), (exp, "exp"), (gen, "gen")):
        _text(value, what)
    _text(backend, "backend", allow_none=False)
    _text(engine, "engine", allow_none=False)
    argv = ["--op", "matmul", "--format", "json", "--backend", backend, "--engine", engine]
    for flag, value in (("--dtype", dtype), ("--acc", acc), ("--round", round),
                        ("--precision", precision), ("--schedule", schedule), ("--exp", exp)):
        if value is not None:
            argv += [flag, value]
    if threads is not None:
        argv += ["--threads", str(_count(threads, "threads"))]
    if max_seconds is not None:
        if isinstance(max_seconds, bool) or not isinstance(max_seconds, (int, float)):
            raise TypeError("max_seconds must be a number of seconds")
        argv += ["--max-seconds", repr(float(max_seconds))]
    if _flag(allow_nonfinite, "allow_nonfinite"):
        argv.append("--allow-nonfinite")
    with tempfile.TemporaryDirectory(prefix="carrier_matmul_") as tmp:
        if (a is None) != (b is None):
            raise ValueError("give both a= and b=, or neither (then gen=)")
        if a is not None:
            import numpy as np
            a = np.asarray(a, dtype=np.float64)
            b = np.asarray(b, dtype=np.float64)
            if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
                raise ValueError(f"a (M x K) and b (K x N) must be matrices that multiply, not "
                                 f"shapes {a.shape} and {b.shape}")
            for value, size, what in ((m, a.shape[0], "m"), (n, b.shape[1], "n"),
                                      (k, a.shape[1], "k")):
                if value is not None and _count(value, what) != size:
                    raise ValueError(f"{what}={value} disagrees with the arrays' {size}")
            m, k, n = a.shape[0], a.shape[1], b.shape[1]
            path = _os.path.join(tmp, "ab.txt")
            with open(path, "w") as f:
                f.write("\n".join(float(v).hex() for v in np.concatenate([a.ravel(), b.ravel()])))
                f.write("\n")
            argv += ["--input", path]
        else:
            argv += ["--gen", gen or "normal", "--seed", str(_count(seed, "seed", allow_none=False))]
        for value, what in ((m, "m"), (n, "n"), (k, "k")):
            if value is None:
                raise ValueError(f"matmul needs {what} (or a= and b=)")
            argv += ["--" + what, str(_count(value, what, allow_none=False))]
        out_path = _os.path.join(tmp, "outputs.csv")
        if _flag(outputs, "outputs"):
            argv += ["--outputs", out_path]
        code, text = _carrier._run_eval_matmul(argv)
        result = json.loads(text)
        if outputs:
            import numpy as np
            c = np.empty((int(m), int(n)))
            ref = np.empty((int(m), int(n)))
            with open(out_path) as f:
                next(f)
                for line in f:
                    i, j, got, want = line.strip().split(",")
                    c[int(i), int(j)] = float.fromhex(got)
                    ref[int(i), int(j)] = float.fromhex(want)
            result["c"] = c
            result["reference"] = ref
    return result


def _observed_values(observed):
    """Observed outputs as floats: a number, a hex-float or decimal string, or a sequence of them."""
    if isinstance(observed, (str, bytes)) or not hasattr(observed, "__iter__"):
        observed = [observed]
    out = []
    for v in observed:
        if isinstance(v, str):
            try:
                out.append(float.fromhex(v) if "0x" in v.lower() else float(v))
            except ValueError:
                raise ValueError(f"observed value {v!r} is not a number (hex float or decimal)") \
                    from None
        elif isinstance(v, bool) or not isinstance(v, (int, float, _np_floating())):
            raise TypeError(f"observed values must be numbers or strings, got {type(v).__name__}")
        else:
            out.append(float(v))
    if not out:
        raise ValueError("give at least one observed output")
    return out


def _np_floating():
    import numpy
    return numpy.floating


def explain(op, x=None, y=None, *, observed, gen=None, n=None, seed=1, dtype=None, input=None,
            search=None, threads=None):
    """Which configurations reproduce observed outputs bit for bit: ``carrier explain`` in process.

    The input as ``carrier.eval``'s: x (and y for dot), input= a file, or gen=, n=, seed=.
    observed: one output or a sequence (floats, or strings such as "0x1.8p+3"). search: the
    CLI's ``--search`` text ("orders=library;acc=fp32,bf16;round=rne,rz"), default the whole
    library; threads: worker threads (default all).

    Returns a pandas DataFrame with one row per matching configuration: observation (index of
    the observed output), observed, observed_hex, group (configurations with the same tree hash
    and precision), tree_hash, schedule, acc, round, out, precision, and the observation's
    abs_error, rel_error and ulp_error against the certified reference. ``df.attrs`` holds the
    search's figures: reference, reference_tier, candidates, replays, pruned_*, seconds, and,
    for two or more observations, difference (the smallest change between a configuration of
    the first and one of the second).

    >>> import carrier
    >>> y = carrier.eval("sum", gen="normal", n=1000, dtype="fp32", schedule="blocked:64").result
    >>> df = carrier.explain("sum", gen="normal", n=1000, observed=y, search="acc=fp32;round=rne")
    >>> "blocked:64" in set(df.schedule)
    True
    """
    import json
    import pandas
    import numpy
    _text(op, "op", allow_none=False)
    values = _observed_values(observed)
    dtype = None if dtype is None else _format_name(dtype, "dtype")
    _text(gen, "gen")
    _text(search, "search")
    path = None if input is None else _existing_file(input, "input")

    def column(v, what):
        if v is None:
            return []
        a = numpy.asarray(v)
        if a.dtype.kind not in "fiu" or a.ndim != 1:
            raise (TypeError if a.dtype.kind not in "fiu" else ValueError)(
                f"{what} must be a one-dimensional array of real numbers")
        return a.astype(numpy.float64).tolist()

    a, b = column(x, "x"), column(y, "y")
    if op == "dot" and x is not None and y is None:
        raise ValueError("dot takes two columns: explain('dot', x, y, ...)")
    count = _count(threads, "threads")
    text = _carrier._explain(op, a, b, path or "", gen or "", _count(n, "n") or 0,
                             _count(seed, "seed", allow_none=False), dtype or "", values,
                             search or "", count or 0)
    r = json.loads(text)
    rows = []
    for k, ob in enumerate(r["observed"]):
        for c in ob["configs"]:
            rows.append({"observation": k, "observed": ob["value"], "observed_hex": ob["hex"],
                         "group": c["group"], "tree_hash": c["tree_hash"],
                         "schedule": c["schedule"], "acc": c["acc"], "round": c["round"],
                         "out": c["out"], "precision": c["precision"],
                         "abs_error": ob["abs_error"], "rel_error": ob["rel_error"],
                         "ulp_error": ob["ulp_error"]})
    columns = ["observation", "observed", "observed_hex", "group", "tree_hash", "schedule", "acc",
               "round", "out", "precision", "abs_error", "rel_error", "ulp_error"]
    df = pandas.DataFrame(rows, columns=columns)
    for key in ("op", "dtype", "n", "reference", "reference_tier", "reference_certified",
                "orders", "trees", "precisions", "candidates", "pruned_value_set",
                "pruned_direction", "pruned_bound", "shared_tree", "replays", "threads",
                "seconds", "difference"):
        if key in r:
            df.attrs[key] = r[key]
    df.attrs["matches"] = [ob["matches"] for ob in r["observed"]]
    return df


def ops():
    """The op table's trial ops: {name: {"input": "column" | "pairs" | "qkv", "head_dims": [...],
    "summary": ...}}, in listing order (user carriers included).

    >>> carrier.ops()["dot"]["input"]
    'pairs'
    """
    return {name: {"input": kind, "head_dims": list(dims), "summary": summary}
            for name, (kind, dims, summary) in _carrier._ops().items()}


# ---------------------------------------------------------------------------------------------
# tree and laws


def tree(schedule, n=None):
    """The explicit merge tree of a schedule over n inputs (``carrier tree``).

    n may be left out for a saved tree (``file:TREE.json`` carries its own). Returns a Tree:
    .stats (chains, combines, depths, tree_hash, ...), .to_json(), .to_dot(), .to_text(),
    .to_dict(); picklable.

    >>> t = carrier.tree("blocked:4:pairwise", 14)
    >>> t.stats["chains"], t.stats["combine_depth"]
    (4, 2)
    """
    if isinstance(schedule, _os.PathLike):
        schedule = "file:" + _os.fspath(schedule)
    _text(schedule, "schedule", allow_none=False)
    n = _count(n, "n")
    if n is None and not schedule.startswith("file:"):
        raise TypeError("carrier.tree() needs n (only a file: tree carries its own)")
    if schedule.startswith("file:"):
        _existing_file(schedule[5:], "schedule file:")
    return _carrier._tree(schedule, n)


def _laws_rows(text):
    """Rows of ``carrier laws``' fixed-width table (law, declared, measured, verdict, figures)."""
    lines = text.splitlines()
    head = next((i for i, l in enumerate(lines) if l.startswith("law ")), None)
    if head is None:
        raise RuntimeError("carrier laws printed no table: " + " | ".join(lines[:3]))
    cols = ["law", "declared", "measured", "verdict", "figures"]
    starts = [lines[head].index(c) for c in cols]
    rows = []
    for line in lines[head + 1:]:
        if not line.strip() or line.startswith("verdict"):
            continue
        cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
        rows.append(dict(zip(cols, cells)))
    return rows


def derive(op, *args, trials=None, seed=None, **kwargs):
    """``carrier derive OP``: the Third Homomorphism Theorem as a construction.

    With an op name (one with a derivation: ``carrier.ops()`` lists them in the CLI's help),
    runs the C++ derivation and returns a ``carrier.user.Derivation`` (folds_agree,
    max_fold_gap, max_inverse_gap, max_combine_gap, max_inverse_length, holds, counterexample
    (the CLI's text when it rejects), exit (the CLI's code) and text (its output)).
    trials defaults to the CLI's 1000 and seed to 1.

    With callables, ``carrier.derive(empty, push_back, push_front, inverse, inputs, ...)`` is
    ``carrier.user.derive`` for a loop written in Python, and returns the derived carrier too.

    >>> carrier.derive("welford", trials=50).holds
    True
    """
    if callable(op):
        kw = dict(kwargs)
        if trials is not None:
            kw["trials"] = trials
        if seed is not None:
            kw["seed"] = seed
        return user.derive(op, *args, **kw)
    if args or kwargs:
        raise TypeError("carrier.derive: an op name takes only trials= and seed=; the other "
                        "arguments belong to a Python loop (carrier.derive(empty, push_back, "
                        "push_front, inverse, inputs))")
    _text(op, "op", allow_none=False)
    argv = [op]
    if trials is not None:
        argv += ["--trials", str(_count(trials, "trials"))]
    if seed is not None:
        argv += ["--seed", str(_count(seed, "seed"))]
    code, text = _carrier._run_derive(argv)
    if code == 2:
        raise ValueError(text.strip().splitlines()[-1] if text.strip() else
                         f"carrier derive: {op!r} was refused")

    def number_after(marker):
        for line in text.splitlines():
            if marker in line:
                tail = line.split("max relative difference", 1)[1].split()
                return float(tail[0])
        return None

    longest = 0
    for line in text.splitlines():
        if "longest h°(s):" in line:
            longest = int(line.split("longest h°(s):", 1)[1].split()[0])
    folds = any(l.strip().startswith("leftward fold == rightward fold") and " yes " in l
                for l in text.splitlines())
    return user.Derivation(
        name=op, trials=1000 if trials is None else trials, seed=1 if seed is None else seed,
        tolerance=2.0 ** -40, folds_agree=folds,
        max_fold_gap=number_after("leftward fold == rightward fold"),
        max_inverse_gap=number_after("h(h°(s)) == s"),
        max_combine_gap=number_after("vs Combine(a,b)"), max_inverse_length=longest,
        holds=code == 0, counterexample=None if code == 0 else text, exit=code, text=text,
        carrier=None)


def laws(op, dtype="fp32", *, trials=None, seed=None, inputs=None, exact=None, to_exact=None):
    """``carrier laws OP --dtype T``: each law's declared and measured value, verdict and figures.

    op may also be a ``carrier.Carrier`` written in Python: then ``inputs`` (example inputs)
    is required, ``exact`` may give its exact twin, and ``carrier.user.laws`` measures it
    (dtype is not used: the carrier's own functions do the rounding).

    dtype defaults to fp32, as on the CLI (numpy names are accepted); trials defaults to the
    CLI's 300 and seed to 1. Returns a pandas DataFrame (a list of dicts without pandas) with
    columns law, declared, measured, verdict, figures; df.attrs["verdict"] holds the closing
    line and df.attrs["exit"] the CLI's exit code (1: a declaration refuted).

    >>> df = carrier.laws("sum", "fp32", trials=50)
    >>> df.attrs["exit"], df.loc[0, "law"]
    """
    if isinstance(op, Carrier):
        if inputs is None:
            raise TypeError("carrier.laws: a Python carrier needs inputs= (example inputs)")
        return user.laws(op, inputs, exact=exact, to_exact=to_exact,
                         trials=300 if trials is None else trials, seed=1 if seed is None else seed)
    if inputs is not None or exact is not None or to_exact is not None:
        raise TypeError("carrier.laws: inputs=, exact= and to_exact= apply to a carrier.Carrier")
    _text(op, "op", allow_none=False)
    argv = [op, "--dtype", _format_name(dtype, "dtype")]
    if trials is not None:
        argv += ["--trials", str(_count(trials, "trials"))]
    if seed is not None:
        argv += ["--seed", str(_count(seed, "seed"))]
    code, text = _carrier._run_laws(argv)
    rows = _laws_rows(text)
    verdict = next((l for l in text.splitlines() if l.startswith("verdict")), "")
    try:
        import pandas as pd
    except ImportError:
        return rows
    df = pd.DataFrame(rows, columns=["law", "declared", "measured", "verdict", "figures"])
    df.attrs["verdict"] = verdict
    df.attrs["exit"] = code
    return df


# ---------------------------------------------------------------------------------------------
# sweeps


def _toml_value(value, where):
    import numpy as np
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + "".join(
            c if c not in '"\\' and 0x20 <= ord(c) < 0x7f else
            "\\" + c if c in '"\\' else "\\u%04x" % ord(c) for c in value) + '"'
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if not _math.isfinite(value):
            raise ValueError(f"sweep config {where}: {value} is not a finite number")
        return repr(float(value))
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(_toml_value(v, where) for v in list(value)) + "]"
    if not isinstance(value, dict):
        # A numpy dtype or type in dtype/acc: its carrier name.
        try:
            return _toml_value(_format_name(value, where), where)
        except (TypeError, ValueError):
            pass
    raise TypeError(f"sweep config {where}: {type(value).__name__} is not a TOML value "
                    "(strings, integers, floats, booleans and lists of them)")


def _toml_key(key):
    if not isinstance(key, str):
        raise TypeError(f"sweep config keys are strings, got {key!r}")
    bare = key and all(c.isalnum() and c.isascii() or c in "_-" for c in key)
    return key if bare else _toml_value(key, "key")


def _toml_table(table, where):
    lines = []
    for key, value in table.items():
        if isinstance(value, dict):
            raise TypeError(f"sweep config {where} {key}: a nested table is not a sweep value")
        if where in ("[grid]", "[[exclude]]") and key in ("dtype", "acc") and not isinstance(
                value, (list, tuple)):
            value = [value]
        if where in ("[grid]", "[[exclude]]") and key in ("dtype", "acc"):
            value = [_acc_name(v, f"{where} {key}") for v in value]
        if where == "[grid]" and key == "precision":
            value = [_policy_text(v) for v in (value if isinstance(value, (list, tuple))
                                               else [value])]
        lines.append(f"{_toml_key(key)} = {_toml_value(value, where + ' ' + str(key))}")
    return lines


def _dict_to_toml(config):
    """A sweep config dict ({"sweep": {...}, "grid": {...}, "exclude": [{...}, ...]}) as TOML."""
    out = []
    for section, body in config.items():
        if not isinstance(section, str):
            raise TypeError(f"sweep config sections are strings, got {section!r}")
        if isinstance(body, dict):
            out.append(f"[{_toml_key(section)}]")
            out += _toml_table(body, f"[{section}]")
        elif isinstance(body, (list, tuple)) and body and all(isinstance(b, dict) for b in body):
            for b in body:
                out.append(f"[[{_toml_key(section)}]]")
                out += _toml_table(b, f"[[{section}]]")
        else:
            # Left for the C++ check, which names the allowed sections.
            out.append(f"{_toml_key(section)} = {_toml_value(body, section)}")
        out.append("")
    return "\n".join(out)


def _sweep_source(config):
    """(TOML text, name for messages) of a sweep config: a dict, a path or "default"."""
    if isinstance(config, dict):
        return _dict_to_toml(config), "dict"
    if isinstance(config, str) and config == "default":
        if _carrier._default_sweep_config is None:
            raise ValueError("carrier sweep: this build has no toml++, so it has no sweeps")
        return _carrier._default_sweep_config, "(embedded experiments/configs/default.toml)"
    if not isinstance(config, (str, _os.PathLike)):
        raise TypeError("config must be a path to a TOML file, a dict of its tables "
                        f"({{'sweep': ..., 'grid': ...}}) or 'default', "
                        f"not {type(config).__name__}")
    path = _existing_file(config, "config")
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8"), path
    except UnicodeDecodeError:
        raise ValueError(
            f"carrier sweep: {path}: not UTF-8 text (sweep configs are ASCII)") from None


def _shard(shard):
    if shard is None:
        return 0, 0
    if isinstance(shard, str):
        k, slash, n = shard.partition("/")
        if not slash or not k.strip().isdigit() or not n.strip().isdigit():
            raise ValueError(f"shard must be 'K/N' (1 <= K <= N), got '{shard}'")
        k, n = int(k), int(n)
    elif isinstance(shard, tuple) and len(shard) == 2:
        k, n = _count(shard[0], "shard K", False), _count(shard[1], "shard N", False)
    else:
        raise TypeError(f"shard must be 'K/N' or a tuple (K, N), not {type(shard).__name__}")
    if not 1 <= k <= n:
        raise ValueError(f"shard K/N needs 1 <= K <= N, got {k}/{n}")
    return k, n


def sweep(config, out=None, jobs=None, *, resume=False, shard=None, engine="fast", quiet=True,
          dry_run=False):
    """``carrier sweep CONFIG -o OUT``: a grid of trials into OUT/trials.csv, as a DataFrame.

    config: a TOML file (experiments/sweep/FORMAT.md), a dict of the same tables
    ({"sweep": {...}, "grid": {...}, "exclude": [{...}]}, rendered to TOML; dtype and acc may
    be numpy dtypes), or "default" (the embedded default study, ``--default``). out defaults
    to sweep-NAME as on the CLI; jobs to the number of cores; shard is "K/N" or (K, N);
    engine fast or oracle; resume continues OUT's run. quiet (default True, unlike the CLI:
    progress lines go to the process's stderr) silences progress and the closing line (kept
    in df.attrs["run"]); the CLI's summary table is never printed. dry_run=True runs nothing
    and returns the trials the config expands to.

    Returns read_sweep(OUT) (one row per trial, FORMAT.md's columns). Raises TypeError for a
    wrong type, ValueError for a bad config (the CLI's one-line message naming key and value)
    or an output folder that cannot be used, FileNotFoundError for a missing config file.

    >>> df = carrier.sweep({"sweep": {"name": "py", "trials": 2},
    ...                     "grid": {"op": ["sum", "lse"], "dtype": ["bf16", np.float32],
    ...                              "schedule": ["seq", "pairwise"], "n": 256,
    ...                              "input": "normal"}}, "out/")
    >>> df.groupby(["op", "dtype", "schedule"]).rel_error.median()
    """
    text, name = _sweep_source(config)
    if dry_run:
        cols, rows, _ = _carrier._sweep_trials(text, name)
        try:
            import pandas as pd
        except ImportError:
            return [dict(zip(cols, r)) for r in rows]
        return pd.DataFrame(rows, columns=cols)
    if out is not None:
        out = _path(out, "out")
        if out == "":
            raise ValueError("out needs a folder (None: sweep-NAME, as on the CLI)")
    jobs = _count(jobs, "jobs")
    if jobs is not None and not 1 <= jobs <= 1024:
        raise ValueError(f"jobs must be from 1 to 1024, got {jobs}")
    shard_k, shard_n = _shard(shard)
    _text(engine, "engine", allow_none=False)
    code, folder, said = _carrier._run_sweep(text, name, out or "", jobs or 0,
                                             _flag(resume, "resume"), shard_k, shard_n, engine,
                                             _flag(quiet, "quiet"))
    if code == 130:
        raise KeyboardInterrupt(f"carrier sweep stopped by SIGINT; resume=True continues {folder}")
    if code != 0:
        raise RuntimeError(f"carrier sweep stopped (exit {code}); resume=True continues {folder}")
    df = read_sweep(folder)
    df.attrs["run"] = said.strip()
    return df


def read_sweep(directory):
    """OUT/trials.csv of a sweep (or a merge) as a pandas DataFrame, one row per trial, with the
    columns of experiments/sweep/FORMAT.md (nan and empty cells as NaN).

    Raises FileNotFoundError when the folder or its trials.csv does not exist,
    NotADirectoryError when the path is a file, TypeError when it is not a path.

    >>> df = carrier.read_sweep("out/")
    >>> df[df.status == "ok"].groupby("schedule").rel_error.max()
    """
    import pandas as pd
    folder = _path(directory, "directory")
    if not _os.path.exists(folder):
        raise FileNotFoundError(_errno.ENOENT, _os.strerror(_errno.ENOENT), folder)
    if not _os.path.isdir(folder):
        raise NotADirectoryError(_errno.ENOTDIR, _os.strerror(_errno.ENOTDIR) +
                                 " (read_sweep takes the sweep's output folder)", folder)
    path = _os.path.join(folder, "trials.csv")
    if not _os.path.exists(path):
        raise FileNotFoundError(_errno.ENOENT, "no trials.csv (not a sweep output folder)", path)
    return pd.read_csv(path, keep_default_na=False, na_values=["nan", "NaN", ""])


# ---------------------------------------------------------------------------------------------
# round

# Floating-point dtypes whose every value is a float64: widened once, exactly, then rounded.
# (ml_dtypes' names are read from the dtype, so ml_dtypes itself is never imported.)
_WIDENED_DTYPES = ("float16", "bfloat16", "float8_e4m3fn", "float8_e5m2")


def _round_input(x):
    """x as a C-contiguous float64 or float32 array (float32 stays float32)."""
    import numpy as np
    if x is None or isinstance(x, (str, bytes, dict, set)):
        raise TypeError(f"x must be an array of real numbers, not {type(x).__name__}")
    try:
        a = np.asarray(x)
    except ValueError as e:  # ragged nesting
        raise ValueError(f"x is not a rectangular array: {e}") from None
    name = a.dtype.name
    if name in ("float64", "float32"):
        return np.asarray(a, order="C")  # ascontiguousarray would make 0-d 1-d
    if name in _WIDENED_DTYPES:
        return np.asarray(a.astype(np.float64), order="C")
    if a.dtype.kind in "biu":
        # Integers are read as float64 only where that is exact, never rounded twice.
        if a.size and a.dtype.kind != "b" and not (
                (a.min() >= -2**53) and (a.max() <= 2**53)):
            raise ValueError("x holds integers beyond +-2^53, which float64 cannot hold exactly "
                             "(carrier.round would round them twice): pass float64 values")
        return np.asarray(a.astype(np.float64), order="C")
    if a.dtype.kind == "f":
        raise TypeError(f"x has dtype {name}: carrier.round reads float16, float32 and float64 "
                        "(and integers up to 2^53); converting to float64 first would round "
                        "twice")
    raise TypeError(f"x must hold real numbers (float16, float32, float64 or integers), got "
                    f"dtype {name}")


def _round_out(out, a):
    """Checks carrier.round's out= against the converted input a."""
    import numpy as np
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy array, not {type(out).__name__}")
    if out.dtype != a.dtype:
        raise TypeError(f"out has dtype {out.dtype}; the result of this x is {a.dtype}")
    if out.shape != a.shape:
        raise ValueError(f"out has shape {out.shape}; x has shape {a.shape}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("out must be C-contiguous and writeable")
    if (out.size and np.may_share_memory(out, a) and
            out.__array_interface__["data"][0] != a.__array_interface__["data"][0]):
        raise ValueError("out overlaps x without being x itself (in-place rounding is out=x)")


def round(x, fmt, round="rne", *, seed=None, counter=0, subnormals=None, out=None):
    """Round every element of an array to a floating-point format, as CPFloat and MATLAB's chop.

    Each element is rounded once, from its own value, into the format ``fmt`` with the mode
    ``round`` (the CLI's ``--round``): the bits of carrier's scalar ``RoundToFormat`` (precision/rounding.hpp), which
    ``carrier eval`` uses for storage and emulated arithmetic.

    Parameters
    ----------
    x : array_like
        Any shape. float64 and float32 are read in place when C-contiguous; float16 (and
        ml_dtypes' bfloat16, float8_e4m3fn, float8_e5m2) are widened exactly to float64;
        integers (and bools) are read as float64 when |x| <= 2^53. Other dtypes (complex,
        strings, objects, longdouble) are a TypeError.
    fmt : str or numpy dtype
        fp8e4m3 fp8e4m3sat fp8e5m2 fp16 bf16 tf32 fp32 fp64, or
        ``custom:p=P,emin=E,emax=E[,subnormals=0|1][,inf=0|1][,saturate=0|1][,topnan=0|1]``
        (``--dtype``'s names); numpy's ``np.float16``/``"float16"``/``"half"`` (fp16),
        ``np.float32`` (fp32), ``np.float64`` (fp64), ``"bfloat16"`` (bf16),
        ``"float8_e4m3fn"`` (fp8e4m3: OCP E4M3, no inf, max 448) and ``"float8_e5m2"``.
    round : str
        ``--round``'s names: rne (nearest, ties to even), rna (nearest, ties away from zero),
        rz (toward zero), ru (toward +inf), rd (toward -inf), ro (to odd), sr (stochastic).
    seed : int, optional
        0 to 2^64-1; required by ``sr``, ignored by the other modes. Element ``i`` (in C order)
        is rounded up in magnitude when 64 random bits ``StochasticRandomBits(seed, counter + i)``
        (SplitMix64's finaliser of the seed's hash plus ``(counter + i + 1)`` times the golden
        ratio increment) fall below the discarded fraction ``(|x| - lo) / (hi - lo)`` in 0.64
        fixed point, so the probability is that fraction (to 2^-64) and the mean is ``x``. The
        same (seed, counter, x) always give the same bits, on any machine and thread count.
    counter : int, optional
        Index of the first element in the stream (default 0): rounding ``x[k:]`` with
        ``counter=k`` gives the bits of the same elements of one call on all of ``x``.
    subnormals : bool, optional
        None (default) keeps the format's own setting (subnormals on for every named format);
        False flushes the gap (0, 2^emin) to its neighbours 0 and 2^emin by the mode's rule,
        as CPFloat's ``subnormal = CPFLOAT_SUBN_RND``.
    out : numpy.ndarray, optional
        Where to write the result (and what is returned): an array of the result's shape and
        dtype, C-contiguous and writeable; it may be x itself (rounding in place) but must not
        overlap x otherwise. Saves the allocation (and its page faults) in a loop.

    Returns
    -------
    numpy.ndarray
        Same shape. float32 when x is float32 (every result of every named format is a float32
        value; a custom format that is neither inside fp32's values nor contains them is a
        ValueError there), else float64, holding the rounded values exactly. A 0-d input (a
        Python or numpy scalar) gives a numpy scalar.

    Special values and overflow, as the scalar routine:
    NaN stays NaN (sign and payload kept, quieted); +-0 keeps its sign, as does a result that
    underflows to zero; +-inf stays +-inf, or becomes NaN in a format without inf (fp8e4m3), or
    +-max finite with saturation (fp8e4m3sat, ``saturate=1``). A finite value whose rounding
    exceeds the largest finite value gives +-max finite under saturation, rz, ro, rd for x > 0
    and ru for x < 0, and +-inf (NaN without inf) under rne, rna, sr, ru for x > 0 and rd for
    x < 0: fp16 sends 65520 to inf under rne and to 65504 under rz; fp8e4m3 sends 464 to 448
    under rne and anything above to NaN.

    The loop runs with the GIL released, on one thread. A wrong type is a TypeError and a bad
    value (unknown format or mode, sr without seed) a ValueError, each naming the argument.

    Examples
    --------
    >>> carrier.round([0.1, 1/3, 65519.0, 65520.0], "fp16")
    array([9.99755859e-02, 3.33251953e-01, 6.55040000e+04,            inf])
    >>> carrier.round([0.1, 1/3, 65520.0, -65520.0], np.float16, "rz")
    array([ 9.99755859e-02,  3.33251953e-01,  6.55040000e+04, -6.55040000e+04])
    >>> carrier.round(np.array([0.1, 0.3, 500.0], dtype=np.float32), "float8_e4m3fn")
    array([0.1015625, 0.3125   ,       nan], dtype=float32)
    >>> carrier.round([[1.0, np.inf], [np.nan, -0.0]], "fp8e4m3sat")
    array([[  1., 448.],
           [ nan,  -0.]])
    >>> carrier.round(np.full(8, 1 + 2**-9), "bf16", "sr", seed=1)  # up with probability 1/4
    array([1.       , 1.       , 1.       , 1.0078125, 1.       , 1.       ,
           1.       , 1.       ])
    >>> carrier.round(3 * 2.0**-128, "bf16"), carrier.round(3 * 2.0**-128, "bf16", subnormals=False)
    (8.816207631167156e-39, 1.1754943508222875e-38)
    """
    import numpy as np
    if isinstance(round, bool) or not isinstance(round, str):
        raise TypeError(f"round must be a mode name (rne rna rz ru rd ro sr), not "
                        f"{type(round).__name__}")
    fmt = _format_name(fmt, "fmt")
    seed = _count(seed, "seed")
    if round == "sr" and seed is None:
        raise ValueError("round='sr' needs seed= (an integer from 0 to 2^64-1): the random "
                         "bits of element i are a function of (seed, counter + i)")
    counter = _count(counter, "counter", allow_none=False)
    sub = -1 if subnormals is None else int(_flag(subnormals, "subnormals"))
    a = _round_input(x)
    if counter + max(a.size - 1, 0) > 2**64 - 1:
        raise ValueError(f"counter + x.size - 1 must be at most 2^64-1, got counter {counter} "
                         f"and {a.size} elements")
    if out is not None:
        _round_out(out, a)
        return _carrier._round(a, fmt, round, seed or 0, counter, sub, out)
    res = _carrier._round(a, fmt, round, seed or 0, counter, sub, None)
    return res[()] if res.ndim == 0 else res



def quantize(x, fmt):
    """Round an array to a block-scaled format (OCP MX, NVFP4), as ``carrier quantize``.

    Parameters
    ----------
    x : array_like
        One dimension (a vector: blocks of B consecutive values) or two (a row-major matrix:
        blocks of B along each row, or B x B tiles for a ``:2dB`` format). float32, float16 and
        integers up to 2^53 are widened exactly to float64; NaN and inf are allowed (a block or,
        for NVFP4, the tensor holding one decodes to NaN).
    fmt : str
        ``mxfp8e4m3``, ``mxfp8e5m2``, ``mxfp6e3m2``, ``mxfp6e2m3``, ``mxfp4``, ``mxint8``,
        ``nvfp4``, or ``mx:ELEM:B:SCALEFMT:RULE``, with suffixes ``:RULE``, ``:4/6``, ``:2dB``
        (precision/block_scaled.hpp states every rule and its source).

    Returns
    -------
    dict
        ``format`` (the canonical name); ``codes`` (uint8 bit patterns), ``elements`` (element
        values, unscaled), ``values`` (dequantised) and ``block`` (each element's block index),
        all of x's shape; ``scale_codes`` (uint8) and ``scales`` (decoded, NaN for the NaN
        code) of shape (block_rows, block_cols); ``tensor_scale`` and ``encode_scale`` (NVFP4's
        per-tensor fp32 scales; 1 for MX). ``values == elements * scales.ravel()[block] *
        tensor_scale`` exactly.

    >>> import numpy as np, carrier
    >>> q = carrier.quantize(np.array([1.0, -3.0, 0.25, 5.0]), "mxfp4")
    >>> q["values"].tolist(), q["scale_codes"].tolist()
    ([1.0, -3.0, 0.0, 4.0], [[127]])
    """
    import numpy as np
    if not isinstance(fmt, str):
        raise TypeError(f"fmt must be a block-scaled format name such as 'nvfp4', not "
                        f"{type(fmt).__name__}")
    a = _round_input(x)
    if a.dtype != np.float64:
        a = np.asarray(a.astype(np.float64), order="C")
    return _carrier._quantize(a, fmt)

# ---------------------------------------------------------------------------------------------
# carriers written in Python (carrier/user.py)

from . import user  # noqa: E402
from .user import Carrier, replay  # noqa: E402
