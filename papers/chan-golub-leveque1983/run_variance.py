"""Run the variance experiment of variance.toml through `carrier eval` and write a tidy CSV.

For each N in the config's n list, shift s = 10^(k/2) and trial t: x_i = s + z_i (z standard
normal from numpy's PCG64 with seed = base seed + 1000 k + t + 100000 log2(N), so each N draws
its own data; N = 1024 keeps the seeds it had when the list was one N), rounded to the storage format by carrier (rne); each algorithm
is one `carrier eval --op OP --dtype D --schedule S --input FILE --format json`, which reports
the relative error of the population variance against its certified reference and the
condition number kappa of the stored data. Output: OUT/variance.csv, rows in loop order, no
timings (so two runs give identical files).
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tomllib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = ["algorithm", "op", "schedule", "dtype", "n", "shift", "trial", "input_seed", "result",
           "reference", "rel_error", "cond", "bound", "bound_kind", "u", "reference_tier",
           "reference_certified"]


def _cell(c):
    """JSON values as sweep CSVs write them: true/false, numbers round-trip, null empty."""
    if c is None:
        return ""
    if isinstance(c, bool):
        return "true" if c else "false"
    if isinstance(c, float):
        return repr(c)
    return str(c)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--carrier", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--config", default=os.path.join(HERE, "variance.toml"))
    a = p.parse_args()
    with open(a.config, "rb") as f:
        cfg = tomllib.load(f)
    v, algs = cfg["variance"], cfg["algorithms"]
    os.makedirs(a.out, exist_ok=True)
    ns = v["n"] if isinstance(v["n"], list) else [v["n"]]
    cases = [(n, k, t) for n in ns for k in v["shift_exponents_half_decades"]
             for t in range(v["trials"])]
    rows = []
    for n, k, t in cases:
        shift = 10.0 ** (k / 2)
        seed = v["seed"] + 1000 * k + t + (0 if n == 1024 else 100000 * int(np.log2(n)))
        x = shift + np.random.default_rng(seed).standard_normal(n)
        path = os.path.join(a.out, f"input-n{n}-k{k}-t{t}.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(repr(float(xi)) for xi in x) + "\n")
        for name, (op, sched) in algs.items():
            cmd = [a.carrier, "eval", "--op", op, "--dtype", v["dtype"], "--schedule", sched,
                   "--input", path, "--format", "json"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode not in (0, 1) or not r.stdout.strip():
                print(f"run_variance: {' '.join(cmd)} failed (exit {r.returncode}): "
                      f"{r.stderr.strip()}", file=sys.stderr)
                return 2
            j = json.loads(r.stdout)
            rows.append([name, op, sched, v["dtype"], n, repr(shift), t, seed,
                         j["result"], j["reference"], j["rel_error"],
                         j.get("cond", ""), j.get("bound", ""),
                         j.get("bound_kind", ""), j["u"], j["reference_tier"],
                         j["reference_certified"]])
        os.remove(path)
    with open(os.path.join(a.out, "variance.csv"), "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for r in rows:
            w.writerow([_cell(c) for c in r])
    return 0


if __name__ == "__main__":
    sys.exit(main())
