"""The batch-invariance study: which orders real kernels use are batch-, padding- and
offset-invariant for the row reductions of LLM inference, and what the invariant choice costs in
error against the certified reference.

    /usr/bin/python3 -m analysis.invariance_study [--config experiments/configs/invariance.toml]
        [--carrier build/bin/carrier] [--out build/invariance]

For every op x family x property of the config it runs
`carrier invariance PROPERTY --family F --op OP --n N --format json` (the contexts are batch
sizes 1..max_batch, pads 0..max_pad, offsets 0..offsets-1; each context's row is replayed over
its own tree and measured against the op's certified reference) and writes OUT/invariance.csv
(one line per run) and OUT/invariance.md (the README's table: one line per op and family, a
column per property, "yes" or the number of distinct output bit patterns, and the error range
over every context of the three properties). Bad input: one line on stderr, exit 2.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tomllib

PROPERTIES = ("batch", "padding", "alignment")
LIMIT_FLAG = {"batch": "--max-batch", "padding": "--max-pad", "alignment": "--offsets"}


class StudyError(Exception):
    pass


def load_config(path):
    try:
        with open(path, "rb") as f:
            cfg = tomllib.load(f)
    except OSError as e:
        raise StudyError(f"cannot read {path}: {e.strerror}")
    except tomllib.TOMLDecodeError as e:
        raise StudyError(f"{path}: {e}")
    for key in ("ops", "families", "n"):
        if key not in cfg:
            raise StudyError(f"{path}: missing key '{key}'")
    families = cfg["families"]
    if not isinstance(families, list) or not all(isinstance(f, dict) and "family" in f
                                                 for f in families):
        raise StudyError(f"{path}: 'families' must be a list of tables with a 'family' key")
    bad = [p for p in cfg.get("properties", PROPERTIES) if p not in PROPERTIES]
    if bad:
        raise StudyError(f"{path}: unknown properties {bad}; allowed: {', '.join(PROPERTIES)}")
    return cfg


def run_one(carrier, cfg, op, family, prop):
    limit = cfg.get({"batch": "max_batch", "padding": "max_pad", "alignment": "offsets"}[prop],
                    64)
    cmd = [carrier, "invariance", prop, "--family", family, "--op", op, "--n", str(cfg["n"]),
           LIMIT_FLAG[prop], str(limit), "--dtype", cfg.get("dtype", "fp32"),
           "--gen", cfg.get("gen", "normal"), "--seed", str(cfg.get("seed", 1)),
           "--format", "json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise StudyError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m analysis.invariance_study")
    ap.add_argument("--config", default="experiments/configs/invariance.toml")
    ap.add_argument("--carrier", default="build/bin/carrier")
    ap.add_argument("--out", default="build/invariance")
    args = ap.parse_args(argv)
    try:
        cfg = load_config(args.config)
        if not os.access(args.carrier, os.X_OK):
            raise StudyError(f"--carrier {args.carrier}: not an executable (build it first)")
        props = cfg.get("properties", list(PROPERTIES))
        os.makedirs(args.out, exist_ok=True)
        rows = []
        runs = [(op, fam, prop) for op in cfg["ops"] for fam in cfg["families"] for prop in props]
        for i, (op, fam, prop) in enumerate(runs, 1):
            if sys.stderr.isatty():
                sys.stderr.write(f"\r[{i}/{len(runs)}] {op} {fam['family']} {prop}        ")
            r = run_one(args.carrier, cfg, op, fam["family"], prop)
            r["kernel"] = fam.get("kernel", "")
            rows.append(r)
        if sys.stderr.isatty():
            sys.stderr.write("\n")
    except StudyError as e:
        sys.stderr.write(f"invariance_study: {e}\n")
        return 2
    csv_path = os.path.join(args.out, "invariance.csv")
    cols = ["op", "family", "kernel", "property", "dtype", "n", "gen", "seed", "contexts",
            "row_trees", "bit_groups", "invariant", "error", "rel_error_min", "rel_error_max"]
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    md_path = os.path.join(args.out, "invariance.md")
    with open(md_path, "w") as f:
        f.write("| op | family (kernel) | " + " | ".join(props) +
                " | error vs certified (min .. max over contexts) |\n")
        f.write("|---|---|" + "---|" * len(props) + "---|\n")
        for op in cfg["ops"]:
            for fam in cfg["families"]:
                mine = [r for r in rows if r["op"] == op and r["family"] == fam["family"]]
                cells = []
                for prop in props:
                    r = next(x for x in mine if x["property"] == prop)
                    cells.append("yes" if r["invariant"] else f"**no** ({r['bit_groups']} bit "
                                 f"patterns / {r['contexts']})")
                lo = min(r["rel_error_min"] for r in mine)
                hi = max(r["rel_error_max"] for r in mine)
                kernel = f" ({fam['kernel']})" if fam.get("kernel") else ""
                f.write(f"| {op} | `{fam['family']}`{kernel} | " + " | ".join(cells) +
                        f" | {lo:.2e} .. {hi:.2e} |\n")
    print(csv_path)
    print(md_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
