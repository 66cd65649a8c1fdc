"""Figure, data/variance.csv and CLAIMS.md for chan-golub-leveque1983 from OUT/variance.csv.

Bounds on the relative error of the computed variance (Chan, Golub and LeVeque 1983, table 1;
first-order, constants dropped as the paper states them): textbook N kappa^2 u; two-pass
N u + N^2 kappa^2 u^2; Welford (updating) N kappa u; pairwise log2(N) kappa u.
"""
import argparse
import math
import os
import shutil
import sys

import numpy as np

from analysis import bounds, claims, io, plots, repro

HERE = os.path.dirname(os.path.abspath(__file__))
REL = "papers/chan-golub-leveque1983"
BOUND = {
    "textbook": ("N kappa^2 u", lambda n, k, u: n * k * k * u),
    "two-pass": ("N u + N^2 kappa^2 u^2", lambda n, k, u: n * u + n * n * k * k * u * u),
    "welford": ("N kappa u", lambda n, k, u: n * k * u),
    "pairwise": ("log2(N) kappa u", lambda n, k, u: math.log2(n) * k * u),
}
SLOPE = {"textbook": (2, (1.5, 2.5)), "welford": (1, (0.5, 1.5)), "pairwise": (1, (0.5, 1.5))}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    a = p.parse_args()
    try:
        src = os.path.join(a.out, "variance.csv")
        t = io.read_table(src)
        io.require(t, ["algorithm", "n", "rel_error", "cond", "u", "shift"], "variance", src)
        os.makedirs(os.path.join(HERE, "data"), exist_ok=True)
        shutil.copyfile(src, os.path.join(HERE, "data", "variance.csv"))
    except (io.AnalysisError, OSError) as e:
        print(f"make_figures: {e}", file=sys.stderr)
        return 2
    n = int(t.rows[0]["n"])
    u = float(t.rows[0]["u"])
    dtype = t.rows[0]["dtype"]
    cl = []
    fig, ax = plots.new_figure(7.0, 4.6)
    kap_all = t.floats("cond")
    grid = np.geomspace(np.nanmin(kap_all), np.nanmax(kap_all), 64)
    for i, alg in enumerate(t.unique("algorithm")):
        sub = t.where(algorithm=alg)
        kap, err = sub.floats("cond"), sub.floats("rel_error")
        shifts = sub.column("shift")
        med_k, med_e = [], []
        for s in dict.fromkeys(shifts):
            m = np.array([x == s for x in shifts])
            med_k.append(float(np.median(kap[m])))
            med_e.append(float(np.median(err[m])))
        med_k, med_e = np.array(med_k), np.array(med_e)
        c = plots.COLORS[i]
        pos = err > 0
        ax.scatter(kap[pos], err[pos], s=8, color=c, alpha=0.3, linewidths=0)
        keep = med_e > 0
        ax.plot(med_k[keep], med_e[keep], marker=plots.MARKERS[i], ms=4, color=c, label=alg)
        formula, fn = BOUND[alg]
        ax.plot(grid, fn(n, grid, u), color=c, ls="--", lw=1, label=f"bound {formula}")
        ratio = np.array([e / fn(n, k, u) for k, e in zip(kap, err)])
        nonvac = np.array([fn(n, k, u) < 1 for k in kap])
        worst = float(np.max(ratio[nonvac])) if nonvac.any() else float("nan")
        cl.append(claims.Claim(
            f"{alg} variance: relative error <= {formula} ({dtype}, N = {n})",
            f"{REL}/reproduce.sh (carrier eval --op {sub.rows[0]['op']} --schedule "
            f"{sub.rows[0]['schedule']})",
            f"max error/bound = {repro.fmt(worst)} over {int(nonvac.sum())} trials with a "
            f"bound < 1 (kappa {repro.fmt(float(kap.min()))}..{repro.fmt(float(kap.max()))})",
            "error/bound <= 1 (first-order, no constant)", worst <= 1.0,
            figure="figures/variance_vs_kappa.png"))
        if alg in SLOPE:
            want, (lo, hi) = SLOPE[alg]
            fit = (med_e > 0) & (med_e < 1e-2) & (med_k >= 10)
            try:
                s = bounds.loglog_slope(med_k[fit], med_e[fit])
            except ValueError:
                s = float("nan")
            cl.append(claims.Claim(
                f"{alg} error grows like kappa^{want}",
                f"{REL}/reproduce.sh",
                f"log-log slope of the median error vs kappa = {s:.2f} (points with kappa >= "
                f"10 and error < 1e-2)", f"kappa^{want} (the bound's power)",
                bool(lo <= s <= hi), figure="figures/variance_vs_kappa.png",
                note=f"accepted {lo}..{hi}"))
    tb = t.where(algorithm="textbook")
    kap, err = tb.floats("cond"), tb.floats("rel_error")
    lost = kap[err >= 0.1]
    first = float(lost.min()) if lost.size else float("nan")
    pred = 1 / math.sqrt(n * u)
    cl.append(claims.Claim(
        "the textbook formula loses all accuracy once N kappa^2 u ~ 1",
        f"{REL}/reproduce.sh",
        f"smallest kappa with error >= 0.1: {repro.fmt(first)}",
        f"kappa ~ (N u)^(-1/2) = {repro.fmt(pred)}",
        bool(pred / 10 <= first <= pred * 10), figure="figures/variance_vs_kappa.png",
        note="match: within a factor 10"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(u / 10, 10)
    ax.set_xlabel("condition number $\\kappa$ of the data")
    ax.set_ylabel("relative error of the variance")
    ax.set_title(f"Variance algorithms vs $\\kappa$: {dtype}, N = {n} (Chan, Golub, LeVeque 1983)")
    ax.legend(loc="lower right", ncol=2)
    plots.save(fig, os.path.join(HERE, "figures", "variance_vs_kappa"), ("png",))
    claims.write_claims(os.path.join(HERE, "CLAIMS.md"),
                        "Chan, Golub and LeVeque 1983 (and Welford 1962), variance: claims", cl,
                        preamble=f"Regenerate: `bash {REL}/reproduce.sh`. Data x = shift + "
                                 f"N(0,1), N = {n}, {dtype}; kappa measured on the stored data.")
    for c in cl:
        print(f"{'MATCH' if c.match is True else 'DIFF '} {c.claim}: ours {c.ours}; "
              f"published {c.published}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
