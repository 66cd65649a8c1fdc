"""Every public function of `import carrier` (experiments/python) with wrong types, shapes,
dtypes and sizes (each must raise the Python exception kind that fits, never crash) and with
valid calls whose values are known exactly. Each failure names the call that reproduces it:
PYTHONPATH=build/python /usr/bin/python3 -c "import carrier, numpy as np; carrier.<call>"."""
import ctypes
import inspect
import os
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest

import carrier

SOURCE = os.environ.get("CARRIER_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "../../.."))
CLI = os.path.join(os.environ.get("CARRIER_BUILD_DIR", os.path.join(SOURCE, "build")), "bin",
                   "carrier")


def call_text(fn, args, kwargs):
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"carrier.{fn.__name__}({', '.join(parts)})"


def expect(exc, fn, *args, **kwargs):
    """fn(*args, **kwargs) must raise exc (exactly that kind or a subclass) with a one-line
    message; returns the message."""
    try:
        got = fn(*args, **kwargs)
    except exc as e:
        text = str(e)
        assert "\n" not in text, f"{call_text(fn, args, kwargs)}: a multi-line message: {text!r}"
        return text
    except BaseException as e:
        raise AssertionError(f"{call_text(fn, args, kwargs)} raised {type(e).__name__}: {e}; "
                             f"expected {exc.__name__}") from e
    raise AssertionError(f"{call_text(fn, args, kwargs)} returned {got!r}; expected "
                         f"{exc.__name__}")


ONES = np.ones(4)
QKV = np.zeros((4, 64))


# --- eval: wrong types, shapes, dtypes, sizes ------------------------------------------------

EVAL_BAD = [
    # op
    (TypeError, dict(op=3, x=ONES, dtype="fp32")),
    (TypeError, dict(op=None, x=ONES, dtype="fp32")),
    (ValueError, dict(op="nosuch", x=ONES, dtype="fp32")),
    # x: not numbers
    (TypeError, dict(op="sum", x="1 2 3", dtype="fp32")),
    (TypeError, dict(op="sum", x=["1", "2"], dtype="fp32")),
    (TypeError, dict(op="sum", x=[1 + 2j, 3], dtype="fp32")),
    (TypeError, dict(op="sum", x=[1.0, None], dtype="fp32")),
    (TypeError, dict(op="sum", x={1: 2}, dtype="fp32")),
    # x: shapes and sizes
    (ValueError, dict(op="sum", x=np.ones((2, 2)), dtype="fp32")),
    (ValueError, dict(op="sum", x=np.float64(3.0), dtype="fp32")),
    (ValueError, dict(op="sum", x=[], dtype="fp32")),
    (ValueError, dict(op="sum", x=np.ones((0, 2)), dtype="fp32")),
    (ValueError, dict(op="sum", x=[[1.0, 2.0], [3.0]], dtype="fp32")),  # ragged
    (ValueError, dict(op="sum", x=[1.0, np.nan], dtype="fp32")),
    (ValueError, dict(op="sum", x=[1.0, -np.inf], dtype="fp32")),
    # two columns: dot and affine (a 1-D x alone used to crash the interpreter)
    (ValueError, dict(op="dot", x=ONES, dtype="fp32")),
    (ValueError, dict(op="affine", x=ONES, dtype="fp32")),
    (ValueError, dict(op="dot", x=np.ones((4, 3)), dtype="fp32")),
    (ValueError, dict(op="dot", x=np.ones((2, 4)), dtype="fp32")),
    (ValueError, dict(op="dot", x=np.ones(4), y=np.ones(5), dtype="fp32")),
    (ValueError, dict(op="dot", x=np.ones(4), y=np.ones((4, 1)), dtype="fp32")),
    (ValueError, dict(op="dot", x=np.ones((4, 2)), y=np.ones(4), dtype="fp32")),
    (ValueError, dict(op="dot", x=[], y=[], dtype="fp32")),
    (ValueError, dict(op="dot", y=ONES, dtype="fp32")),
    (ValueError, dict(op="dot", x=ONES, y=[1.0, 1.0, np.nan, 1.0], dtype="fp32")),
    (TypeError, dict(op="dot", x=ONES, y="abcd", dtype="fp32")),
    (ValueError, dict(op="sum", x=ONES, y=ONES, dtype="fp32")),
    # attention: q, k, v
    (ValueError, dict(op="attention", x=ONES, dtype="fp32", head_dim=64)),
    (ValueError, dict(op="attention", q=QKV, dtype="fp32")),
    (ValueError, dict(op="attention", q=QKV, k=QKV, v=np.zeros((4, 128)), dtype="fp32")),
    (ValueError, dict(op="attention", q=np.zeros(64), k=np.zeros(64), v=np.zeros(64),
                      dtype="fp32")),
    (ValueError, dict(op="attention", q=np.zeros((4, 32)), k=np.zeros((4, 32)),
                      v=np.zeros((4, 32)), dtype="fp32")),
    (ValueError, dict(op="attention", q=QKV, k=QKV, v=QKV, dtype="fp32", head_dim=128)),
    (ValueError, dict(op="attention", q=QKV[:0], k=QKV[:0], v=QKV[:0], dtype="fp32")),
    (ValueError, dict(op="attention", gen="normal", n=8, dtype="fp32")),
    (ValueError, dict(op="sum", q=QKV, k=QKV, v=QKV, dtype="fp32")),
    (ValueError, dict(op="sum", x=ONES, dtype="fp32", head_dim=64)),
    (TypeError, dict(op="attention", q="q", k=QKV, v=QKV, dtype="fp32")),
    # dtype, acc, precision, round
    (TypeError, dict(op="sum", x=ONES)),
    (TypeError, dict(op="sum", x=ONES, dtype=None)),
    (TypeError, dict(op="sum", x=ONES, dtype=32)),
    (TypeError, dict(op="sum", x=ONES, dtype=["fp32"])),
    (ValueError, dict(op="sum", x=ONES, dtype=np.int32)),
    (ValueError, dict(op="sum", x=ONES, dtype="fp99")),
    (ValueError, dict(op="sum", x=ONES, dtype="FP32")),
    (TypeError, dict(op="sum", x=ONES, dtype="fp32", acc=5)),
    (ValueError, dict(op="sum", x=ONES, dtype="fp32", acc="fp99")),
    (TypeError, dict(op="sum", x=ONES, precision=3)),
    (ValueError, dict(op="sum", x=ONES, precision="fp32")),
    (ValueError, dict(op="sum", x=ONES, precision="in=bf16,acc=fp99")),
    (ValueError, dict(op="sum", x=ONES, precision="in=bf16", dtype="bf16")),
    (ValueError, dict(op="sum", x=ONES, precision="in=bf16", round="rz")),
    (ValueError, dict(op="sum", x=ONES, dtype="fp32", round="up")),
    (TypeError, dict(op="sum", x=ONES, dtype="fp32", round=1)),
    (ValueError, dict(op="sum", x=ONES, dtype="fp32", round="rz", rounding="rne")),
    # schedule, exp, backend, engine
    (TypeError, dict(op="sum", x=ONES, dtype="fp32", schedule=5)),
    (ValueError, dict(op="sum", x=ONES, dtype="fp32", schedule="")),
    (ValueError, dict(op="sum", x=ONES, dtype="fp32", schedule="blocked:0")),
    (ValueError, dict(op="sum", x=ONES, dtype="fp64", round="rz")),  # fine alone, not together
    (ValueError, dict(op="sum", x=ONES, dtype="fp32", exp="nope")),
    (ValueError, dict(op="sum", x=ONES, dtype="fp32", backend="gpu")),
    (TypeError, dict(op="sum", x=ONES, dtype="fp32", backend=None)),
    (ValueError, dict(op="sum", x=ONES, dtype="fp32", engine="slow")),
    # gen, n, seed, sr_seed
    (ValueError, dict(op="sum", gen="normal", dtype="fp32")),
    (ValueError, dict(op="sum", n=10, dtype="fp32")),
    (ValueError, dict(op="sum", x=ONES, gen="normal", n=4, dtype="fp32")),
    (ValueError, dict(op="sum", x=ONES, n=4, dtype="fp32")),
    (ValueError, dict(op="sum", gen="nosuchdist", n=4, dtype="fp32")),
    (TypeError, dict(op="sum", gen=5, n=4, dtype="fp32")),
    (TypeError, dict(op="sum", gen="normal", n="10", dtype="fp32")),
    (TypeError, dict(op="sum", gen="normal", n=10.0, dtype="fp32")),
    (TypeError, dict(op="sum", gen="normal", n=True, dtype="fp32")),
    (ValueError, dict(op="sum", gen="normal", n=-1, dtype="fp32")),
    (ValueError, dict(op="sum", gen="normal", n=0, dtype="fp32")),
    (ValueError, dict(op="sum", gen="normal", n=2**31, dtype="fp32")),
    (ValueError, dict(op="sum", gen="normal", n=2**70, dtype="fp32")),
    (TypeError, dict(op="sum", gen="normal", n=4, seed=None, dtype="fp32")),
    (TypeError, dict(op="sum", gen="normal", n=4, seed="1", dtype="fp32")),
    (ValueError, dict(op="sum", gen="normal", n=4, seed=-1, dtype="fp32")),
    (TypeError, dict(op="sum", gen="normal", n=4, sr_seed=1.5, dtype="fp32")),
    (ValueError, dict(op="attention", gen="normal", n=2**30, dtype="fp32", head_dim=64)),
    # input files
    (TypeError, dict(op="sum", input=5, dtype="fp32")),
    (FileNotFoundError, dict(op="sum", input="/nonexistent/carrier/x.txt", dtype="fp32")),
    (IsADirectoryError, dict(op="sum", input="/", dtype="fp32")),
    (ValueError, dict(op="sum", input="-", dtype="fp32")),
    # flags
    (TypeError, dict(op="sum", x=ONES, dtype="fp32", allow_nonfinite="yes")),
]


@pytest.mark.filterwarnings("ignore:carrier.eval.rounding=. is deprecated:DeprecationWarning")
@pytest.mark.parametrize("exc, kwargs", EVAL_BAD, ids=[repr(k) for _, k in EVAL_BAD])
def test_eval_refuses_with_the_right_exception(exc, kwargs):
    text = expect(exc, carrier.eval, **kwargs)
    print(call_text(carrier.eval, (), kwargs), "->", exc.__name__, text)


def test_eval_refusals_name_what_the_op_takes():
    text = expect(ValueError, carrier.eval, "dot", ONES, dtype="fp32")
    assert "two columns" in text and "(4,)" in text, text
    text = expect(ValueError, carrier.eval, "sum", np.ones((2, 2)), dtype="fp32")
    assert "one column" in text and "(2, 2)" in text, text
    text = expect(ValueError, carrier.eval, "attention", ONES, dtype="fp32", head_dim=64)
    assert "q, k and v" in text, text
    text = expect(ValueError, carrier.eval, "sum", [1.0, np.nan], dtype="fp32")
    assert "x[1]" in text and "allow_nonfinite" in text, text
    text = expect(ValueError, carrier.eval, "sum", ONES, precision="fp32")
    assert "in=bf16,acc=fp32" in text and "acc=" in text, text


def test_a_one_column_dot_does_not_crash_the_interpreter():
    # The crash reported in issue 36 (segfault, rc 139), in a child so that a crash is a
    # failure of this test, not of the whole run.
    code = ("import numpy as np, carrier\n"
            "try:\n"
            "    carrier.eval('dot', np.arange(8.0), dtype='fp32')\n"
            "except ValueError as e:\n"
            "    print('ValueError', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ), timeout=60)
    print(out.returncode, out.stdout, out.stderr)
    assert out.returncode == 0 and out.stdout.startswith("ValueError"), (
        f"{sys.executable} -c {code!r}: rc {out.returncode}")


# --- eval: valid calls with known values ------------------------------------------------------

def test_dot_of_two_small_exact_arrays():
    import pandas as pd
    x, y = [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]
    for kwargs in (dict(x=x, y=y), dict(x=np.column_stack([x, y])),
                   dict(x=pd.Series(x), y=pd.Series(y)), dict(x=pd.DataFrame({"a": x, "b": y})),
                   dict(x=np.array(x, dtype=np.float32), y=np.array(y, dtype=np.int64))):
        r = carrier.eval("dot", **kwargs, dtype="fp32", schedule="pairwise")
        print(kwargs, r)
        assert r.result == 32.0 and r.reference == 32.0 and r.abs_error == 0, kwargs
        assert r.n == 3 and r.input == "numpy arrays"


def test_affine_composes_the_maps_in_order():
    # h0 = 0, h1 = 2*0 + 1 = 1, h2 = 3*1 + 1 = 4: the pairs are (a, b) = (x, y).
    r = carrier.eval("affine", [2.0, 3.0], [1.0, 1.0], dtype="fp64")
    print(r, r.other_components)
    assert r.result == 4.0 and r.reference == 4.0


def test_sum_of_exact_values_and_a_file_input(tmp_path):
    r = carrier.eval("sum", [0.5, 0.25, 0.125], dtype="fp32")
    assert r.result == 0.875 and r.rel_error == 0 and r.tier == "exact"
    f = tmp_path / "pairs.txt"
    f.write_text("# a b\n1 4\n2 5\n3 6\n")
    r = carrier.eval("dot", input=f, dtype="fp64")
    print(r)
    assert r.result == 32.0 and r.input == f"file:{f}"
    one = tmp_path / "one.txt"
    one.write_text("1\n2\n")
    text = expect(ValueError, carrier.eval, "dot", input=str(one), dtype="fp64")
    assert "one.txt" in text, text
    bad = tmp_path / "bad.txt"
    bad.write_text("1\nabc\n")
    text = expect(ValueError, carrier.eval, "sum", input=str(bad), dtype="fp64")
    assert "bad.txt:2" in text, text


def test_dot_from_arrays_equals_the_cli_on_the_same_file(tmp_path):
    if not os.path.exists(CLI):
        pytest.skip(f"no carrier executable at {CLI} to compare with")
    rng = np.random.default_rng(11)
    x, y = rng.normal(size=500), rng.normal(size=500)
    f = tmp_path / "xy.txt"
    f.write_text("".join(f"{a.hex()} {b.hex()}\n" for a, b in zip(x, y)))
    argv = [CLI, "eval", "--op", "dot", "--dtype", "bf16", "--acc", "fp32", "--schedule",
            "blocked:16", "--input", str(f), "--format", "json"]
    import json
    j = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    r = carrier.eval("dot", x, y, dtype="bfloat16", acc=np.float32, schedule="blocked:16")
    print(" ".join(argv), j["result"], r)
    assert np.float32(j["result"]) == np.float32(r.result), " ".join(argv)
    assert float(j["reference"]) == r.reference and float(j["rel_error"]) == r.rel_error
    assert j["tree_hash"] == r.tree_hash


def test_nonfinite_inputs_with_allow_nonfinite():
    r = carrier.eval("sum", [1.0, np.nan], dtype="fp64", allow_nonfinite=True)
    print(r)
    assert np.isnan(r.result) and np.isnan(r.reference)
    r = carrier.eval("max", [1.0, np.inf], dtype="fp64", allow_nonfinite=True)
    assert r.result == np.inf


def test_storage_overflow_refused_like_the_cli():
    # 1000 is finite but past fp8e4m3's 448: the CLI refuses it without --allow-nonfinite.
    with pytest.raises(ValueError) as e:
        carrier.eval("sum", [1000.0, 1000.0], dtype="fp8e4m3")
    print(e.value)
    assert "overflow fp8e4m3 on storage" in str(e.value) and "allow_nonfinite" in str(e.value)
    r = carrier.eval("sum", [1000.0, 1000.0], dtype="fp8e4m3", allow_nonfinite=True)
    assert not np.isfinite(r.result)


def test_attention_from_q_k_v():
    # q = 0: every score is 0, the softmax weights are 1/n, so each output row is the mean of
    # v's rows; v holds small integers whose mean over n = 4 rows is exact.
    n, d = 4, 64
    v = np.arange(n * d, dtype=np.float64).reshape(n, d) % 7
    q = np.zeros((n, d))
    k = np.random.default_rng(0).normal(size=(n, d))
    r = carrier.eval("attention", q=q, k=k, v=v, dtype="fp32", acc="fp64")
    print(r, r.errors)
    assert r.head_dim == d and r.n == n and r.vector_out
    out = np.array(r.components).reshape(n, d)
    want = np.broadcast_to(v.mean(axis=0), (n, d))
    assert np.array_equal(out, want), np.abs(out - want).max()
    assert r.errors["componentwise"] == 0
    # head_dim given and equal to q's width is accepted too.
    assert carrier.eval("attention", q=q, k=k, v=v, dtype="fp32", head_dim=d).n == n


@pytest.mark.parametrize("dtype, name", [
    (np.float16, "fp16"), ("float16", "fp16"), ("half", "fp16"), (np.dtype("float16"), "fp16"),
    ("bfloat16", "bf16"), ("bf16", "bf16"), ("torch.bfloat16", "bf16"),
    (np.float32, "fp32"), ("float32", "fp32"), ("single", "fp32"),
    (np.float64, "fp64"), ("double", "fp64"), (float, "fp64"), ("fp8e4m3", "fp8e4m3"),
])
def test_numpy_dtypes_are_carrier_formats(dtype, name):
    x = [1.0, 2.0 ** -12, 3.0]
    r = carrier.eval("sum", x, dtype=dtype)
    ref = carrier.eval("sum", x, dtype=name)
    print(dtype, r)
    assert r.dtype == name and r.result == ref.result, f"carrier.eval('sum', {x}, dtype={dtype!r})"


def test_acc_and_precision_take_numpy_names():
    x = np.random.default_rng(5).normal(size=256)
    a = carrier.eval("sum", x, dtype="bfloat16", acc=np.float32)
    b = carrier.eval("sum", x, precision={"in": "bfloat16", "acc": np.float32})
    c = carrier.eval("sum", x, precision="in=bf16,acc=fp32")
    assert a.result == b.result == c.result and a.acc == b.acc == "fp32"
    assert b.precision == "in=bf16,acc=fp32"
    m = carrier.eval("sum", x, dtype="fp16", acc="half>float32", schedule="blocked:16")
    assert m.acc == "fp16>fp32" and m.out is None


def test_a_combine_wider_than_acc_delivers_and_counts_ulps_in_out():
    # Issue 36: in=bf16,acc=fp32,combine=fp64 reported ulp_error 3422552064 (fp64 ulps of a
    # result the policy delivers in fp32).
    x = np.random.default_rng(7).normal(size=4096)
    r = carrier.eval("sum", x, precision="in=bf16,acc=fp32,combine=fp64", schedule="blocked:64")
    assert r.acc == "fp32>fp64" and r.out == "fp32"
    assert float(np.float32(r.result)) == r.result
    assert r.ulp_error < 4, r.ulp_error
    assert r.ulp_error == pytest.approx(r.abs_error / np.spacing(np.float32(abs(r.reference))))


def test_round_and_its_deprecated_alias():
    x = [1.0, 2.0 ** -30]  # inexact in fp32: rz and ru differ
    rz = carrier.eval("sum", x, dtype="fp64", acc="fp32", round="rz")
    ru = carrier.eval("sum", x, dtype="fp64", acc="fp32", round="ru")
    assert rz.round == "rz" and rz.result == 1.0 and ru.result > 1.0
    with pytest.warns(DeprecationWarning, match="round="):
        old = carrier.eval("sum", x, dtype="fp64", acc="fp32", rounding="ru")
    assert old.result == ru.result


def test_defaults_are_the_clis():
    sig = inspect.signature(carrier.eval)
    assert sig.parameters["round"].default is None  # None: rne, as --round
    assert sig.parameters["backend"].default == "replay"
    assert sig.parameters["engine"].default == "fast"
    assert sig.parameters["seed"].default == 1
    r = carrier.eval("sum", ONES, dtype="fp32")
    assert (r.round, r.acc, r.schedule, r.exp) == ("rne", "fp32", "seq", "libm")
    assert inspect.signature(carrier.laws).parameters["dtype"].default == "fp32"


def test_results_pickle_and_to_dict():
    r = carrier.eval("lse", gen="normal", n=100, dtype="bf16", acc="fp32", schedule="pairwise")
    d = r.to_dict()
    again = pickle.loads(pickle.dumps(r))
    assert again == r and again.to_dict().keys() == d.keys()
    assert again.result == r.result and again.errors == r.errors
    for key in ("op", "dtype", "acc", "round", "schedule", "schedule_used", "n", "result",
                "reference", "abs_error", "rel_error", "ulp_error", "bound", "error_to_bound",
                "reference_tier", "tree_hash", "seconds"):
        assert key in d, key
    assert d["bound"] == r.bound["value"] and d["error_to_bound"] == r.ratio
    import pandas as pd
    df = pd.DataFrame([d, carrier.eval("lse", gen="normal", n=100, dtype="bf16",
                                       acc="fp32").to_dict()])
    assert list(df.schedule) == ["pairwise", "seq"]
    t = carrier.tree("blocked:4:pairwise", 14)
    t2 = pickle.loads(pickle.dumps(t))
    assert t2.to_dict() == t.to_dict() and t2.to_json() == t.to_json()
    with pytest.raises(AttributeError):
        r.result = 1.0


# --- the package: names, version, docstrings --------------------------------------------------

def test_names_version_and_docstrings():
    assert "os" not in dir(carrier)
    assert dir(carrier) == sorted(carrier.__all__ + ["__version__"])
    for name in carrier.__all__:
        assert hasattr(carrier, name), name
    assert re.fullmatch(r"\d+\.\d+\.\d+", carrier.__version__), carrier.__version__
    if os.path.exists(CLI):
        out = subprocess.run([CLI, "--version"], capture_output=True, text=True).stdout
        assert out.split()[-1] == carrier.__version__, out
    for name in ("eval", "tree", "laws", "sweep", "read_sweep", "ops"):
        doc = getattr(carrier, name).__doc__ or ""
        assert ">>> " in doc and f"carrier.{name}(" in doc, f"carrier.{name}'s docstring"
    assert ">>> " in carrier.EvalResult.__doc__ and ">>> " in carrier.EvalResult.to_dict.__doc__


def test_ops_lists_the_input_kinds():
    ops = carrier.ops()
    print(ops)
    assert ops["sum"]["input"] == "column" and ops["dot"]["input"] == "pairs"
    assert ops["affine"]["input"] == "pairs"
    assert ops["attention"]["input"] == "qkv" and 64 in ops["attention"]["head_dims"]


# --- tree and laws ------------------------------------------------------------------------------

TREE_BAD = [
    (TypeError, ("seq",), {}),
    (TypeError, (3, 4), {}),
    (TypeError, (None, 4), {}),
    (TypeError, ("seq", "4"), {}),
    (TypeError, ("seq", 4.0), {}),
    (ValueError, ("seq", -1), {}),
    (ValueError, ("bogus", 4), {}),
    (ValueError, ("blocked:0", 4), {}),
    (ValueError, ("seq", 2**27), {}),
    (FileNotFoundError, ("file:/nonexistent/carrier/tree.json",), {}),
    (IsADirectoryError, ("file:/", 4), {}),
]


@pytest.mark.parametrize("exc, args, kwargs", TREE_BAD, ids=[repr(a) for _, a, _ in TREE_BAD])
def test_tree_refuses_with_the_right_exception(exc, args, kwargs):
    print(call_text(carrier.tree, args, kwargs), "->", expect(exc, carrier.tree, *args, **kwargs))


def test_tree_from_a_saved_file_carries_its_n(tmp_path):
    t = carrier.tree("pairwise", 8)
    f = tmp_path / "t.json"
    f.write_text(t.to_json())
    back = carrier.tree(f"file:{f}")
    assert back.n == 8 and back.stats["tree_hash"] == t.stats["tree_hash"]
    assert carrier.tree(f, 8).stats["tree_hash"] == t.stats["tree_hash"]  # a path: file:


LAWS_BAD = [
    (TypeError, (None,), {}),
    (ValueError, ("nosuch",), {}),
    (ValueError, ("sum", "fp99"), {}),
    (ValueError, ("sum", np.int8), {}),
    (TypeError, ("sum", 3), {}),
    (TypeError, ("sum",), {"trials": "x"}),
    (ValueError, ("sum",), {"trials": -1}),
    (TypeError, ("sum",), {"seed": 1.5}),
]


@pytest.mark.parametrize("exc, args, kwargs", LAWS_BAD, ids=[repr((a, k)) for _, a, k in LAWS_BAD])
def test_laws_refuses_with_the_right_exception(exc, args, kwargs):
    print(call_text(carrier.laws, args, kwargs), "->", expect(exc, carrier.laws, *args, **kwargs))


def test_laws_default_dtype_is_fp32_as_on_the_cli():
    a = carrier.laws("max", trials=10)
    b = carrier.laws("max", np.float32, trials=10)
    c = carrier.laws("max", "fp32", trials=10)
    print(a.to_string())
    assert a.equals(b) and a.equals(c)
    assert a.attrs["exit"] == 0


# --- sweep and read_sweep -----------------------------------------------------------------------

GRID = {"sweep": {"name": "pyapi", "seed": 3, "trials": 2},
        "grid": {"op": ["sum", "dot"], "dtype": ["bf16", np.float32],
                 "schedule": ["seq", "pairwise"], "n": 64, "input": "normal"},
        "exclude": [{"op": "dot", "schedule": "seq"}]}
TOML = """
[sweep]
name = "pyapi"
seed = 3
trials = 2

[grid]
op = ["sum", "dot"]
dtype = ["bf16", "fp32"]
schedule = ["seq", "pairwise"]
n = 64
input = "normal"

[[exclude]]
op = "dot"
schedule = "seq"
"""
TIMING = ["seconds", "reference_seconds"]


def flush_c_stdout():
    ctypes.CDLL(None).fflush(None)


def test_sweep_from_a_dict_equals_the_same_toml_file_and_prints_nothing(tmp_path, capfd):
    cfg = tmp_path / "s.toml"
    cfg.write_text(TOML)
    a = carrier.sweep(GRID, tmp_path / "a", jobs=1)
    b = carrier.sweep(cfg, tmp_path / "b", jobs=1)
    flush_c_stdout()
    out, err = capfd.readouterr()
    assert out == "" and err == "", f"carrier.sweep(..., quiet=True) printed {out!r} {err!r}"
    assert "trials run" in a.attrs["run"] and "trials run" in b.attrs["run"], a.attrs
    key = ["trial_id"]
    a, b = (d.sort_values(key).drop(columns=TIMING).reset_index(drop=True) for d in (a, b))
    print(a.head().to_string())
    assert len(a) == (2 * 2 + 2 * 1) * 2 and (a.status == "ok").all()
    assert a.equals(b)
    plan = carrier.sweep(GRID, dry_run=True)
    assert len(plan) == len(a) and list(plan.trial_id) == list(range(len(a)))
    assert (tmp_path / "a" / "config.toml").exists()
    # A second run into the same folder needs resume=True (the CLI's refusal, a ValueError).
    expect(ValueError, carrier.sweep, GRID, tmp_path / "a")
    again = carrier.sweep(GRID, tmp_path / "a", resume=True)
    assert len(again) == len(a)


def test_sweep_with_the_precision_key():
    plan = carrier.sweep({"grid": {"op": "sum", "precision": ["in=bf16,acc=fp32", "in=fp16"],
                                   "n": 8, "input": "normal"}}, dry_run=True)
    assert list(plan.dtype) == ["bf16", "fp16"] and list(plan.acc) == ["fp32", "fp16"]


SWEEP_BAD = [
    (TypeError, (5,), {}),
    (TypeError, (None,), {}),
    (FileNotFoundError, ("/nonexistent/carrier/s.toml",), {}),
    (ValueError, ({"grid": {"op": "sum"}},), {}),
    (ValueError, ({"grid": {"op": "nosuch", "dtype": "fp32", "n": 8, "input": "normal"}},), {}),
    (ValueError, ({"grid": {"op": "sum", "dtype": "fp32", "n": "abc", "input": "normal"}},), {}),
    (ValueError, ({"grid": {"op": "sum", "dtype": "fp32", "n": 8, "input": "file:x.txt"}},), {}),
    (ValueError, ({"nosection": {"a": 1}},), {}),
    (TypeError, ({"grid": {"op": object()}},), {}),
    (TypeError, ({"grid": {"op": {"nested": 1}}},), {}),
    (ValueError, ({"grid": {"op": "sum", "dtype": np.int32, "n": 8, "input": "normal"}},), {}),
    (ValueError, (GRID,), {"jobs": 0}),
    (TypeError, (GRID,), {"jobs": "2"}),
    (ValueError, (GRID,), {"shard": "3/2"}),
    (ValueError, (GRID,), {"shard": "x"}),
    (TypeError, (GRID,), {"shard": 5}),
    (ValueError, (GRID,), {"engine": "slow"}),
    (TypeError, (GRID,), {"out": 5}),
    (ValueError, (GRID,), {"out": ""}),
    (TypeError, (GRID,), {"resume": "yes"}),
]


@pytest.mark.parametrize("exc, args, kwargs", SWEEP_BAD,
                         ids=[repr((a, k)) for _, a, k in SWEEP_BAD])
def test_sweep_refuses_with_the_right_exception(exc, args, kwargs, tmp_path):
    kwargs = dict(kwargs)
    kwargs.setdefault("out", tmp_path / "out")
    print(call_text(carrier.sweep, args, kwargs), "->", expect(exc, carrier.sweep, *args, **kwargs))
    assert not (tmp_path / "out" / "trials.csv").exists()


def test_read_sweep_refusals(tmp_path):
    expect(FileNotFoundError, carrier.read_sweep, tmp_path / "missing")
    expect(FileNotFoundError, carrier.read_sweep, tmp_path)  # a folder without trials.csv
    f = tmp_path / "file.txt"
    f.write_text("x")
    expect(NotADirectoryError, carrier.read_sweep, f)
    expect(TypeError, carrier.read_sweep, 5)
    expect(TypeError, carrier.read_sweep, None)


# --- carrier.matmul: eval --op matmul in process -----------------------------------------------

def test_matmul_outputs_are_eval_dot_bit_for_bit():
    rng = np.random.default_rng(31)
    a, b = rng.standard_normal((3, 64)), rng.standard_normal((64, 2))
    for schedule in ("mma:hopper:promote:32", "splitk:4"):
        r = carrier.matmul(a=a, b=b, dtype="fp16", acc="fp32", schedule=schedule, outputs=True)
        print(schedule, {k: r[k] for k in ("max_rel_error", "median_rel_error",
                                           "normwise_fro_error")})
        assert r["m"] == 3 and r["n"] == 2 and r["k"] == 64 and r["outputs"] == 6
        for i in range(3):
            for j in range(2):
                d = carrier.eval("dot", a[i, :], b[:, j], dtype="fp16", acc="fp32",
                                 schedule=schedule)
                call = (f"carrier.matmul(a=a, b=b, dtype='fp16', acc='fp32', "
                        f"schedule={schedule!r}, outputs=True)['c'][{i}, {j}]")
                assert np.float32(r["c"][i, j]) == np.float32(d.result), call
                assert r["reference"][i, j] == d.reference, call
    msg = expect(ValueError, carrier.matmul, 0, 2, 2, dtype="fp32")
    assert "m must be at least 1" in msg
    expect(ValueError, carrier.matmul, 2, 2, dtype="fp32")
    assert "carrier.matmul(" in expect(ValueError, carrier.eval, "matmul", gen="normal", n=8,
                                       dtype="fp32")
