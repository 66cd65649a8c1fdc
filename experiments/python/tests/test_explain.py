"""carrier.explain (experiments/run/explain.hpp in process): a DataFrame of the configurations
that reproduce observed outputs bit for bit. Each failure names the call that reproduces it:
PYTHONPATH=build/python /usr/bin/python3 -c "import carrier; carrier.explain(...)"."""
import numpy as np
import pytest

import carrier


def test_explain_finds_the_order_and_precision_of_a_sum():
    x = np.random.default_rng(5).normal(size=3000).astype(np.float32)
    y = carrier.eval("sum", x, dtype="fp32", acc="bf16", round="rz", schedule="blocked:32").result
    df = carrier.explain("sum", x, observed=y)
    call = f"carrier.explain('sum', x, observed={float(y).hex()!r})"
    print(call, "->", len(df), "rows;", df.attrs["replays"], "replays in", df.attrs["seconds"], "s")
    assert list(df.columns[:6]) == ["observation", "observed", "observed_hex", "group",
                                    "tree_hash", "schedule"], call
    hit = df[(df.schedule == "blocked:32") & (df.precision == "bf16 rz")]
    assert len(hit) == 1, call
    assert (df.observed == y).all() and (df.observation == 0).all(), call
    # Every row of a group has its group's tree hash and precision.
    assert (df.groupby("group")[["tree_hash", "precision"]].nunique() == 1).all().all(), call
    assert df.attrs["candidates"] > df.attrs["replays"] > 0, call
    assert df.attrs["reference_certified"], call


def test_explain_two_observations_of_a_dot_name_the_promotion():
    rng = np.random.default_rng(9)
    a = rng.normal(size=512).astype(np.float16)
    b = rng.normal(size=512).astype(np.float16)
    y1 = carrier.eval("dot", a, b, dtype="fp16", acc="fp32", schedule="mma:hopper:promote:128").result
    y2 = carrier.eval("dot", a, b, dtype="fp16", acc="fp32", schedule="mma:hopper").result
    assert y1 != y2
    df = carrier.explain("dot", a, b, observed=[float(y1).hex(), y2],
                         search="orders=seq;mma=hopper,blackwell")
    print(df[["observation", "schedule", "precision"]].to_string(), df.attrs["difference"])
    assert "mma:hopper:promote:128" in set(df[df.observation == 0].schedule)
    assert "mma:hopper" in set(df[df.observation == 1].schedule)
    assert "promotion interval" in df.attrs["difference"]


def test_explain_bad_input():
    with pytest.raises(ValueError, match="not a number"):
        carrier.explain("sum", [1.0, 2.0], observed="0x1.8q+1")
    with pytest.raises(ValueError, match="sum or dot"):
        carrier.explain("lse", [1.0, 2.0], observed=3.0)
    with pytest.raises(ValueError, match="search"):
        carrier.explain("sum", [1.0, 2.0], observed=3.0, search="orders=bogus")
    with pytest.raises(TypeError):
        carrier.explain("sum", [1.0, 2.0], observed=[object()])
