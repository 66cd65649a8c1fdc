"""`import carrier` (experiments/python): the same numbers as the CLI, numpy in, pandas out,
ValueError with the CLI's one-line message for every bad argument. Wrong types, shapes and
sizes for every public function: test_api.py."""
import json
from fractions import Fraction
import os
import subprocess
import textwrap
import threading
import time

import numpy as np
import pytest

import carrier

SOURCE = os.environ.get("CARRIER_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "../../.."))


def test_eval_matches_an_exact_sum():
    # 0.1 * 10 in fp64, sequential: the error of the sum of the stored values is measured
    # against the exact (correctly rounded) reference.
    x = np.full(10, 0.1)
    r = carrier.eval("sum", x, dtype="fp64", schedule="seq")
    print(r, r.errors, r.bound)
    assert r.schedule == "seq" and r.schedule_used == "seq" and r.n == 10
    assert r.result == sum(x.tolist())  # Python's left-to-right float sum is seq's tree
    assert r.tier == "exact" and r.certified
    exact = sum(Fraction(v) for v in x.tolist())  # the exact sum of the stored values
    assert r.errors["abs"] == float(abs(Fraction(r.result) - exact))
    assert r.bound["available"] and r.bound["ratio"] <= 1
    assert r.tree["max_depth"] == 9


def test_eval_equals_the_cli_on_a_generated_input():
    r = carrier.eval("lse", dtype="bf16", acc="fp32", schedule="pairwise", gen="normal", n=1000)
    cli = os.path.join(os.environ.get("CARRIER_BUILD_DIR", os.path.join(SOURCE, "build")),
                       "bin", "carrier")
    if not os.path.exists(cli):
        pytest.skip(f"no carrier executable at {cli} to compare with")
    out = subprocess.run([cli, "eval", "--op", "lse", "--dtype", "bf16", "--acc", "fp32",
                          "--schedule", "pairwise", "--gen", "normal", "--n", "1000",
                          "--format", "json"], capture_output=True, text=True, check=True)
    j = json.loads(out.stdout)
    print(r, j["result"], j["rel_error"])
    assert np.float32(j["result"]) == np.float32(r.result)  # fp32 compute: shortest fp32 text
    assert float(j["reference"]) == r.reference
    assert float(j["rel_error"]) == r.errors["rel"]
    assert j["schedule"] == r.schedule and j["schedule_used"] == r.schedule_used
    # Every field of the CLI's JSON is a field of the result, with the same value.
    d = r.to_dict()
    missing = sorted(set(j) - set(d))
    assert not missing, f"fields of carrier eval --format json missing from to_dict(): {missing}"
    for key in ("op", "dtype", "acc", "round", "exp", "backend", "schedule", "tree_hash",
                "tree_max_depth", "n", "input", "reference_tier", "reference_bits",
                "reference_certified", "bound_kind", "bound_formula"):
        assert j[key] == d[key], f"{key}: CLI {j[key]!r}, Python {d[key]!r}"
    for key in ("abs_error", "ulp_error", "bound", "error_to_bound", "u", "tree_mean_depth"):
        assert float(j[key]) == d[key], f"{key}: CLI {j[key]!r}, Python {d[key]!r}"


def test_precision_is_a_policy_by_role_and_defaults_are_reported():
    x = np.random.default_rng(3).normal(size=4096)
    a = carrier.eval("sum", x, dtype="bf16", acc="fp32", schedule="blocked:64")
    b = carrier.eval("sum", x, precision="in=bf16,acc=fp32", schedule="blocked:64")
    print(a, b, b.to_dict().get("role_bound_note"))
    assert a.result == b.result and a.acc == b.acc == "fp32" and b.dtype == "bf16"
    assert b.precision == "in=bf16,acc=fp32" and a.precision is None
    assert b.role_bound > 0 and "acc" in b.role_bound_note
    try:
        s = carrier.eval("sum", x, dtype="bf16", backend="simd")
    except ValueError as e:
        pytest.skip(f"simd backend not built: {e}")
    print(s.schedule, s.defaults)
    assert s.schedule == "" and s.schedule_used.startswith("strided:") and s.acc == "fp32"
    assert "acc fp32" in s.defaults and "native" in s.defaults


def test_non_float64_and_strided_arrays_are_accepted():
    x = np.arange(1, 101, dtype=np.float32)[::2]  # strided float32 view: converted once
    r = carrier.eval("sum", x, dtype="fp32", schedule="pairwise")
    assert r.result == float(np.sum(np.arange(1, 101, 2)))


@pytest.mark.parametrize("kwargs, message", [
    (dict(op="sum", x=np.ones(4), dtype="fp99"), "fp99"),
    (dict(op="sum", x=np.ones(4), dtype="fp32", schedule="blocked:0"), "blocked"),
    (dict(op="nosuch", x=np.ones(4), dtype="fp32"), "nosuch"),
    (dict(op="sum", x=np.ones(4), dtype="fp32", round="up"), "up"),
    (dict(op="sum", x=np.array([1.0, np.nan]), dtype="fp32"), "x[1]"),
    (dict(op="sum", x=np.ones((2, 2)), dtype="fp32"), "one-dimensional"),
    (dict(op="sum", x=np.ones(0), dtype="fp32"), "empty"),
    (dict(op="sum", dtype="fp32"), "no input given"),
    (dict(op="sum", x=np.ones(4), dtype="fp32", precision="in=fp64"), "replaces"),
    (dict(op="sum", x=np.ones(4), precision="fp64"), "per-role policy"),
    (dict(op="sum", gen="normal", n=2**31, dtype="fp32"), "at most 2^30"),
    (dict(op="attention", gen="normal", n=2**30, dtype="fp32", head_dim=64), "needs about"),
    (dict(op="lse", x=np.ones(4), dtype="fp32", backend="simd", exp="libm"),
     ("portable", "simd is not built")),
])
def test_bad_arguments_raise_value_error_with_one_line(kwargs, message):
    with pytest.raises(ValueError) as e:
        carrier.eval(**kwargs)
    text = str(e.value)
    print(kwargs, "->", text)
    alternatives = message if isinstance(message, tuple) else (message,)
    assert "\n" not in text and any(m in text for m in alternatives)


def test_tree_stats_json_dot():
    t = carrier.tree("blocked:4:pairwise", 14)
    print(t, t.stats)
    assert t.stats["chains"] == 4 and t.stats["n"] == 14 and t.schedule == "blocked:4:pairwise"
    j = json.loads(t.to_json())
    assert j["n"] == 14
    assert t.to_dot().startswith("digraph")
    with pytest.raises(ValueError, match="random"):
        carrier.tree("random", 10)


def test_laws_table():
    df = carrier.laws("sum", "fp32", trials=20)
    print(df.to_string())
    assert list(df.columns) == ["law", "declared", "measured", "verdict", "figures"]
    assoc = df[df.law.str.startswith("associative (exact")].iloc[0]
    assert assoc.declared == "yes" and assoc.verdict == "ok"
    assert df.attrs["exit"] == 0
    bad = carrier.laws("naive-mean", "fp64", trials=20)
    assert bad.attrs["exit"] == 1 and (bad.verdict == "REFUTED").any() or bad.attrs["exit"] == 1
    with pytest.raises(ValueError, match="nosuch"):
        carrier.laws("nosuch")


def test_sweep_and_read_sweep(tmp_path):
    cfg = tmp_path / "s.toml"
    cfg.write_text(textwrap.dedent("""
        [sweep]
        name = "py"
        seed = 7
        trials = 2
        [grid]
        op = ["sum", "lse"]
        dtype = ["fp16", "fp32"]
        schedule = ["seq", "pairwise"]
        n = [256]
        input = ["normal"]
    """))
    df = carrier.sweep(cfg, tmp_path / "out", jobs=2)
    print(df.head().to_string())
    assert len(df) == 2 * 2 * 2 * 2 and set(df.op) == {"sum", "lse"}
    assert (df.status == "ok").all()
    again = carrier.read_sweep(tmp_path / "out")
    assert again.equals(df)
    with pytest.raises(FileNotFoundError, match="trials.csv"):
        carrier.read_sweep(tmp_path)
    with pytest.raises(FileNotFoundError, match="nope.toml"):
        carrier.sweep(tmp_path / "nope.toml", tmp_path / "o2")


def test_the_gil_is_released_during_eval():
    # A Python thread keeps counting while a long eval runs in the main thread.
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.005)

    x = np.random.default_rng(1).normal(size=1 << 18)
    t = threading.Thread(target=count)
    t.start()
    t0 = time.perf_counter()
    carrier.eval("lse", x, dtype="fp32", acc="mpfr:128", schedule="pairwise")
    t1 = time.perf_counter()
    stop.set()
    t.join()
    during = [s for s in ticks if t0 < s < t1]
    print(f"eval took {t1 - t0:.2f} s; the other thread ticked {len(during)} times meanwhile")
    assert t1 - t0 > 0.05
    assert len(during) >= 0.3 * (t1 - t0) / 0.005
