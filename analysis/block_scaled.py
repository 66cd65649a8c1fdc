"""Error against the unquantised inputs for sweeps over block-scaled storage formats.

  /usr/bin/python3 -m analysis.block_scaled --csv trials.csv -o derived.csv [--drawn fp64]

A sweep's reference is exact on the *stored* inputs, so its rel_error of a `dot` whose inputs are
stored in MXFP4 or NVFP4 is the accumulation's alone. Every dtype of a sweep sees the same draws
for a trial index (experiments/sweep/FORMAT.md), so a row of dtype `--drawn` (fp64: the drawn
values themselves) gives, per (op, input, n, trial), the exact result on the drawn values c_d and
sum |a_i b_i| = cond * |c_d| (the `cond` column of dot). This adds to every row
  quant_error = |reference - c_d| / sum|a_i b_i|   (the storage format's error alone)
  drawn_error = |result - c_d| / sum|a_i b_i|      (storage and accumulation together)
and the dtype split at its first ':' into `family` (mxfp4, nvfp4, ...) and `rule` (floor, rn,
4/6, ...; `default` when none is named), and writes the table with them; `python3 -m analysis error-vs-n --y quant_error` plots it.
Exit 2 with one line when a column is missing or a row has no drawn counterpart.
"""
import argparse
import math
import sys

from analysis import io

KEY = ("op", "input", "n", "trial", "acc", "round", "exp", "schedule", "backend")
NEEDED = KEY + ("dtype", "result", "reference", "cond")


def derive(table, drawn="fp64"):
    """table with quant_error and drawn_error columns (see the module docstring)."""
    io.require(table, list(NEEDED), "block_scaled")
    ref = {}
    for r in table.rows:
        if r["dtype"] == drawn:
            c = float(r["reference"])
            ref[tuple(r[k] for k in KEY)] = (c, float(r["cond"]) * abs(c))
    rows = []
    for r in table.rows:
        key = tuple(r[k] for k in KEY)
        if key not in ref:
            raise io.AnalysisError(f"block_scaled: no dtype={drawn} row for "
                                   + ", ".join(f"{k}={v}" for k, v in zip(KEY, key)))
        c, scale = ref[key]
        out = dict(r)
        if scale > 0 and math.isfinite(scale):
            out["quant_error"] = repr(abs(float(r["reference"]) - c) / scale)
            out["drawn_error"] = repr(abs(float(r["result"]) - c) / scale)
        else:
            out["quant_error"] = out["drawn_error"] = "nan"
        fmt, _, rule = r["dtype"].partition(":")
        out["family"], out["rule"] = fmt, rule or "default"
        rows.append(out)
    cols = list(table.columns) + ["quant_error", "drawn_error", "family", "rule"]
    return io.table_from_rows(cols, rows, table.source)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m analysis.block_scaled",
                                description=__doc__.splitlines()[0])
    p.add_argument("--csv", required=True, help="sweep trials.csv")
    p.add_argument("-o", "--out", required=True, help="output CSV")
    p.add_argument("--drawn", default="fp64", help="the dtype whose rows hold the drawn values")
    a = p.parse_args(argv)
    try:
        t = derive(io.read_table(a.csv), a.drawn)
    except io.AnalysisError as e:
        print(f"analysis.block_scaled: {e}", file=sys.stderr)
        return 2
    io.write_csv(a.out, t.columns, t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
