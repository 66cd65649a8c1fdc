"""Helpers for papers/*/ reproduction scripts: timing-free CSVs and small statistics.

A sweep's trials.csv is in completion order and carries timings (seconds, reference_seconds),
so two runs of the same config differ byte-wise even when every number measured is identical.
timing_free() gives the comparable form: sorted by trial_id, timing columns dropped. Papers
commit that form (papers/NAME/data/) and compare it between runs.
"""
import os

import numpy as np

from . import io

TIMING_COLUMNS = ("seconds", "reference_seconds")


# Columns a later FORMAT.md added that are empty on every row of a config that does not use them
# (the sweep key `precision` and the role bound it brings; matmul's `mn`, `median_rel_error`
# and `normwise_error`): left out of the timing-free form
# then, so the data a paper folder committed before the column existed regenerates byte for byte.
OPTIONAL_COLUMNS = ("precision", "role_bound", "role_bound_kind", "mn", "median_rel_error",
                    "normwise_error")


def timing_free(table, drop=TIMING_COLUMNS):
    """The table sorted by trial_id (numeric) without the timing columns, as (columns, Table);
    an OPTIONAL_COLUMNS column empty on every row is dropped too."""
    io.require(table, ["trial_id"], "timing-free CSV", table.source)
    unused = [c for c in OPTIONAL_COLUMNS
              if c in table.columns and all(v == "" for v in table.column(c))]
    cols = [c for c in table.columns if c not in drop and c not in unused]
    return cols, table.sorted_by("trial_id", numeric=("trial_id",))


def write_timing_free(trials_csv, out_csv, drop=TIMING_COLUMNS):
    """Read a sweep trials.csv and write its timing-free, trial-ordered copy; return the Table."""
    table = io.read_table(trials_csv)
    cols, t = timing_free(table, drop)
    parent = os.path.dirname(out_csv)
    if parent:
        os.makedirs(parent, exist_ok=True)
    io.write_csv(out_csv, cols, t)
    return io.read_table(out_csv)


def require_ok(table, what):
    """Raise AnalysisError when any trial failed, quoting the first failure."""
    if "status" not in table.columns:
        return
    bad = [r for r in table.rows if r["status"] != "ok"]
    if bad:
        r = bad[0]
        raise io.AnalysisError(f"{what}: {len(bad)} failed trial(s), first trial_id "
                               f"{r.get('trial_id')}: {r.get('error')}")


def median_by(table, key, value):
    """{key value (str): median of the finite values of column `value`} over the rows."""
    out = {}
    keys, vals = table.column(key), table.floats(value)
    for k in dict.fromkeys(keys):
        v = vals[[kk == k for kk in keys]]
        v = v[np.isfinite(v)]
        out[k] = float(np.median(v)) if v.size else float("nan")
    return out


def fmt(x, digits=3):
    """A number for a CLAIMS.md cell: %.{digits}g, 'nan' for nan."""
    return "nan" if x != x else f"{x:.{digits}g}"
