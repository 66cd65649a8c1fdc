#!/usr/bin/python3
"""Figures of the default study (README command (a)) from a sweep folder's trials.csv.

usage: /usr/bin/python3 scripts/plot_default.py SWEEP_DIR [-o FIG_DIR]

Writes three PNGs into FIG_DIR (default SWEEP_DIR/figures):
  error_vs_order.png   median relative error of every merge order at the largest n, one panel
                       per op, one marker colour per format;
  error_vs_n.png       median relative error against n per merge order, one panel per
                       (op, format);
  error_to_bound.png   error / a-priori bound of every ok trial that has a non-vacuous bound,
                       per op and format (1 = the bound is attained).
Only the standard library, numpy and matplotlib (Debian's), plus the repository's figure style
and checker (analysis/style.py, analysis/figure_check.py: one shared legend outside the data,
distinct colour and marker per series); the full analysis library is analysis/. Reads the
columns of experiments/sweep/FORMAT.md by name.
"""
import argparse
import csv
import math
import os
import sys
import tempfile
from collections import defaultdict

os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="carrier-mpl-"))
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

# The one figure style (analysis/style.py) and its checker; the rest of analysis/ is not needed.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from analysis import figure_check, style  # noqa: E402


def number(text):
    try:
        return float(text)
    except ValueError:
        return math.nan


def load(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["status"] == "ok"]
    rows.sort(key=lambda r: int(r["trial_id"]))  # config order (the file is in completion order)
    if not rows:
        sys.exit(f"plot_default: {path} has no ok rows")
    return rows


def ordered(values, key=None):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return sorted(seen, key=key) if key else seen


def positive_median(values):
    v = [x for x in values if math.isfinite(x)]
    if not v:
        return math.nan
    m = float(np.median(v))
    # A zero error cannot go on a log axis: show it at the axis floor instead of dropping it.
    return m if m > 0 else 1e-20


def inputs_text(rows):
    names = ordered(r.get("input", "") for r in rows)
    return "|".join(n for n in names if n) + (" pooled" if len(names) > 1 else "")


def save(fig, path, dpi):
    style.shared_legend(fig)
    figure_check.report(fig, os.path.basename(path))
    fig._carrier_checked = True
    fig.savefig(path, dpi=dpi, metadata={"Software": None})
    plt.close(fig)


def error_vs_order(rows, out):
    ops = ordered(r["op"] for r in rows)
    dtypes = ordered(r["dtype"] for r in rows)
    styles = style.assign(dtypes)
    n_max = max(int(r["n"]) for r in rows)
    style.apply()
    fig, axes = plt.subplots(1, len(ops), figsize=(4.2 * len(ops), 4.2), squeeze=False,
                             layout="constrained")
    for ax, op in zip(axes[0], ops):
        sel = [r for r in rows if r["op"] == op and int(r["n"]) == n_max]
        scheds = ordered(r["schedule"] for r in sel)
        for dt in dtypes:
            med = []
            for s in scheds:
                med.append(positive_median(number(r["rel_error"]) for r in sel
                                           if r["schedule"] == s and r["dtype"] == dt))
            st = styles[dt]
            ax.plot(range(len(scheds)), med, ls="none", marker=st["marker"], color=st["color"],
                    label=dt, alpha=0.85)
        ax.set_xticks(range(len(scheds)))
        ax.set_xticklabels(scheds, rotation=60, ha="right", fontsize=8)
        ax.set_yscale("log")
        ax.set_title(style.title("", op=op, n=n_max).lstrip(": "))
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("median relative error")
    axes[0][0].legend(title="format")
    fig.suptitle(f"Median relative error of every merge order at the largest n "
                 f"(input {inputs_text(rows)})")
    save(fig, os.path.join(out, "error_vs_order.png"), 110)


def error_vs_n(rows, out):
    ops = ordered(r["op"] for r in rows)
    dtypes = ordered(r["dtype"] for r in rows)
    styles = style.assign(ordered(r["schedule"] for r in rows))
    refusal = style.too_many_series(len(styles), "plot_default error_vs_n",
                                    "too many merge orders for one legend")
    if refusal:
        sys.exit(refusal)
    style.apply()
    fig, axes = plt.subplots(len(ops), len(dtypes), figsize=(4 * len(dtypes), 3.2 * len(ops)),
                             squeeze=False, sharex=True, layout="constrained")
    for i, op in enumerate(ops):
        for j, dt in enumerate(dtypes):
            ax = axes[i][j]
            sel = [r for r in rows if r["op"] == op and r["dtype"] == dt]
            for s in ordered(r["schedule"] for r in sel):
                by_n = defaultdict(list)
                for r in sel:
                    if r["schedule"] == s:
                        by_n[int(r["n"])].append(number(r["rel_error"]))
                ns = sorted(by_n)
                st = styles[s]
                ax.plot(ns, [positive_median(by_n[n]) for n in ns], ms=4, lw=1.1, label=s,
                        color=st["color"], marker=st["marker"], ls=st["linestyle"])
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(style.title("", op=op, format=dt).lstrip(": "), fontsize=9.5)
            ax.grid(True, which="both", alpha=0.3)
            if j == 0:
                ax.set_ylabel("median rel. error")
            if i == len(ops) - 1:
                ax.set_xlabel("n")
    ns = sorted({int(r["n"]) for r in rows})
    fig.suptitle(f"Median relative error vs n per merge order (n = {ns[0]}..{ns[-1]}, input "
                 f"{inputs_text(rows)})")
    fig.legend(*axes[0][0].get_legend_handles_labels(), title="merge order")
    save(fig, os.path.join(out, "error_vs_n.png"), 100)


def error_to_bound(rows, out):
    groups = defaultdict(list)
    for r in rows:
        ratio = number(r["error_to_bound"])
        if math.isfinite(ratio) and ratio > 0:
            groups[f"{r['op']} {r['dtype']}"].append(ratio)
    if not groups:
        return
    names = ordered((f"{r['op']} {r['dtype']}" for r in rows), None)
    names = [g for g in names if g in groups]
    style.apply()
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * len(names)), 4.2), layout="constrained")
    ax.boxplot([groups[g] for g in names], whis=(0, 100))
    ax.set_xticks(range(1, len(names) + 1))
    ax.set_xticklabels(names, rotation=60, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.axhline(1, color="black", lw=1, ls="--")
    ax.set_ylabel("error / a-priori bound (all orders, n)")
    ax.set_title(f"Error / bound per op and format, every trial with a non-vacuous bound "
                 f"(input {inputs_text(rows)}; dashed: 1 = bound attained)", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    save(fig, os.path.join(out, "error_to_bound.png"), 110)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sweep_dir")
    p.add_argument("-o", "--out", default=None)
    a = p.parse_args()
    csv_path = os.path.join(a.sweep_dir, "trials.csv")
    if not os.path.exists(csv_path):
        sys.exit(f"plot_default: {csv_path} does not exist")
    out = a.out or os.path.join(a.sweep_dir, "figures")
    os.makedirs(out, exist_ok=True)
    rows = load(csv_path)
    error_vs_order(rows, out)
    error_vs_n(rows, out)
    error_to_bound(rows, out)
    for f in sorted(os.listdir(out)):
        if f.endswith(".png"):
            print(os.path.join(out, f))


if __name__ == "__main__":
    main()
