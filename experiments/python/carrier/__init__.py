"""carrier: carrier-state reductions under declared merge orders, from Python.

The same trial as ``carrier eval`` (one op, storage dtype, compute type, rounding, exp policy,
merge order and backend, measured against a certified reference and an a-priori bound), the
merge trees of ``carrier tree``, the law checks of ``carrier laws`` and the sweeps of
``carrier sweep``, with numpy arrays in and pandas tables out. Bad arguments raise ValueError
with the CLI's one-line message. The compiled part is carrier._carrier (experiments/python).
"""
import io
import os

from . import _carrier
from ._carrier import EvalResult, Tree  # noqa: F401

__all__ = ["eval", "tree", "laws", "sweep", "read_sweep", "EvalResult", "Tree"]


def eval(op, x=None, *, dtype, acc=None, precision=None, rounding="rne", schedule=None,
         backend="replay", exp=None, gen=None, n=0, seed=1, head_dim=0):
    """One reduction, measured: ``carrier eval`` in process.

    x: a one-dimensional array of numbers (float64 C-contiguous arrays are read in place), or
    None with gen="normal" (any ``carrier eval --gen`` generator), n and seed. acc (or its
    alias precision) is the compute type; acc, exp and schedule left as None take the
    backend's defaults (``result.defaults`` says which). Returns an EvalResult: result,
    reference, tier, errors, bound (with ratio), schedule (the one executed), tree stats.
    """
    if acc is not None and precision is not None:
        raise ValueError("give either acc or precision (the same thing), not both")
    if precision is not None:
        acc = precision
    return _carrier._eval(op, x, dtype, acc or "", rounding, schedule or "", backend, exp or "",
                          gen or "", int(n), int(seed), int(head_dim))


def tree(schedule, n):
    """The explicit merge tree of a schedule over n inputs: .stats, .to_json(), .to_dot()."""
    if int(n) < 0:
        raise ValueError("n must be a count (0 or more)")
    return _carrier.tree(schedule, int(n))


def _laws_rows(text):
    """Rows of ``carrier laws``' fixed-width table (law, declared, measured, verdict, figures)."""
    lines = text.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("law "))
    cols = ["law", "declared", "measured", "verdict", "figures"]
    starts = [lines[head].index(c) for c in cols]
    rows = []
    for line in lines[head + 1:]:
        if not line.strip() or line.startswith("verdict"):
            continue
        cells = [line[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]
        rows.append(dict(zip(cols, cells)))
    return rows


def laws(op, dtype="fp64", *, trials=None, seed=None):
    """``carrier laws OP --dtype T``: each law's declared and measured value, verdict and
    figures, as a pandas DataFrame (a list of dicts without pandas). df.attrs["verdict"]
    holds the closing line, df.attrs["exit"] the CLI's exit code (1: a declaration refuted)."""
    argv = [op, "--dtype", dtype]
    if trials is not None:
        argv += ["--trials", str(int(trials))]
    if seed is not None:
        argv += ["--seed", str(int(seed))]
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


def sweep(config, out, jobs=None, *, shard=None, resume=False):
    """``carrier sweep CONFIG -o OUT``: runs the TOML grid into OUT/trials.csv (+ manifest.json)
    and returns read_sweep(OUT). config is a path or "default" (the embedded default study)."""
    argv = ["--default"] if config == "default" else [os.fspath(config)]
    argv += ["-o", os.fspath(out), "--quiet"]
    if jobs is not None:
        argv += ["--jobs", str(int(jobs))]
    if shard is not None:
        argv += ["--shard", str(shard)]
    if resume:
        argv += ["--resume"]
    _carrier._run_sweep(argv)
    return read_sweep(out)


def read_sweep(directory):
    """OUT/trials.csv of a sweep (or a merge) as a pandas DataFrame, one row per trial, with the
    columns of experiments/sweep/FORMAT.md."""
    import pandas as pd
    path = os.path.join(os.fspath(directory), "trials.csv")
    if not os.path.exists(path):
        raise ValueError(f"{directory}: no trials.csv (not a sweep output folder)")
    return pd.read_csv(path, keep_default_na=False, na_values=["nan", "NaN", ""])
