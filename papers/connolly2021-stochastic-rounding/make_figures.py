"""Figures, timing-free CSVs and CLAIMS.md for connolly2021-stochastic-rounding.

Inputs (reproduce.sh's OUT_DIR): sr-vs-rn/trials.csv (carrier sweep), harmonic-fp16-rne.csv and
harmonic-fp16-sr-{1..5}.csv (carrier study stagnation). Outputs (this folder): data/*.csv,
figures/*.png, CLAIMS.md.
"""
import argparse
import glob
import os
import shutil
import sys

import numpy as np

from analysis import bounds, claims, io, plots, repro

HERE = os.path.dirname(os.path.abspath(__file__))
REL = "papers/connolly2021-stochastic-rounding"


def medians(t, rnd):
    sub = t.where(round=rnd)
    ns, errs = sub.floats("n"), sub.floats("rel_error")
    xs = np.unique(ns)
    return xs, np.array([np.median(errs[ns == x]) for x in xs])


def sweep_claims(t, spec):
    """Sanity rows of the RN/SR sweep; every window and threshold comes from claims.toml."""
    out = []
    nu_max, lo, hi = (spec.setting(k) for k in ("slope_nu_max", "slope_min", "slope_max"))
    lam, ratio_min = spec.setting("lam"), spec.setting("rn_over_sr_min")
    prob = 1 - 2 * np.exp(-lam ** 2 / 2)
    for dtype in t.unique("dtype"):
        sub = t.where(dtype=dtype)
        u = bounds.unit_roundoff(dtype)
        xs, sr = medians(sub, "sr")
        _, rn = medians(sub, "rne")
        # Below n u = nu_max the running sum's ulp stays below twice the mean term and both
        # roundings give errors that grow like sqrt(n) u (RN's too, on random data); past it RN
        # stagnates and SR's per-step variance shrinks relative to the sum.
        fit = xs * u <= nu_max
        s_sr, s_rn_fit = (bounds.loglog_slope(xs[fit], m[fit]) for m in (sr, rn))
        s_sr_all, s_rn = (bounds.loglog_slope(xs, m) for m in (sr, rn))
        window = f"n = {int(xs[fit][0])}..{int(xs[fit][-1])} (n u <= {nu_max:g})"
        out.append(claims.sanity(
            f"SR recursive summation error grows like sqrt(n) u below stagnation ({dtype}, "
            "uniform[0,1))", f"carrier sweep {REL}/sr-vs-rn.toml",
            f"log-log slope of the median error over {window}: SR {s_sr:.3f}, RN {s_rn_fit:.3f} "
            f"(20 trials per n); over all n to {int(xs[-1])}: SR {s_sr_all:.3f}",
            f"SR slope in [{lo}, {hi}] (window fixed in claims.toml)", bool(lo <= s_sr <= hi),
            figure=f"figures/sr_vs_rn_{dtype}.png",
            note="sanity, not a reproduction: RN passes the same window, so the row cannot tell "
                 "SR from RN"))
        srt = sub.where(round="sr")
        ratio = srt.floats("rel_error") / (lam * np.sqrt(srt.floats("n")) * 2 * u)
        out.append(claims.sanity(
            f"SR error <= lambda sqrt(n) (2u), lambda = {lam:g} (probability >= {prob:.2f}) "
            f"({dtype})", f"carrier sweep {REL}/sr-vs-rn.toml",
            f"max error / (lambda sqrt(n) 2u) = {repro.fmt(float(np.nanmax(ratio)))}; "
            f"{int(np.count_nonzero(ratio > 1))} of {len(srt)} trials above 1, n = "
            f"{int(xs[0])}..{int(xs[-1])}",
            f"at most {1 - prob:.2f} of the trials above the bound",
            bool(np.count_nonzero(ratio > 1) <= (1 - prob) * len(srt)),
            figure=f"figures/sr_vs_rn_{dtype}.png",
            note="SR's rounding errors are bounded by 2u (one ulp), hence 2u"))
        out.append(claims.sanity(
            f"below stagnation RN is as accurate as SR; past it RN's error grows faster and "
            f"ends far above SR's ({dtype})", f"carrier sweep {REL}/sr-vs-rn.toml",
            f"slopes over {window}: RN {s_rn_fit:.3f}, SR {s_sr:.3f}; median RN/SR error at "
            f"n = {int(xs[fit][-1])}: {rn[fit][-1] / sr[fit][-1]:.3g}, at n = {int(xs[-1])}: "
            f"{rn[-1] / sr[-1]:.3g}",
            f"RN/SR >= {ratio_min:g} at the largest n", bool(rn[-1] / sr[-1] >= ratio_min),
            figure=f"figures/sr_vs_rn_{dtype}.png"))
        curves = [("$\\sqrt{n}u$", lambda n: bounds.prob_bound(n, u)),
                  ("$\\gamma_{n-1}$", lambda n: bounds.gamma(n - 1, u))]
        plots.error_vs_n(sub, os.path.join(HERE, "figures", f"sr_vs_rn_{dtype}"),
                         series=("round",), bounds=curves, formats=("png",),
                         title=f"Recursive summation in {dtype}: RN (slope {s_rn:.2f}) vs SR "
                               f"(slope {s_sr:.2f} for n u <= 1)")
    return out


def harmonic(out_dir, spec, dtype):
    """RN against SR on the harmonic series in dtype (fp16: the paper's format; bf16: the SR
    survey's harmonic example). Figure harmonic_sr.png (fp16) or harmonic_sr_bf16.png."""
    rn = io.read_table(os.path.join(out_dir, f"harmonic-{dtype}-rne.csv"))
    srs = [io.read_table(p) for p in sorted(glob.glob(os.path.join(
        out_dir, f"harmonic-{dtype}-sr-*.csv")))]
    if not srs:
        raise io.AnalysisError(f"no harmonic-{dtype}-sr-*.csv in {out_dir}")
    for t in [rn] + srs:
        io.require(t, ["round", "seed", "stagnation_term", "stagnation_value",
                       "exact_partial_sum_at_stagnation"], "harmonic", t.source)
    fig_name = "harmonic_sr" if dtype == "fp16" else f"harmonic_sr_{dtype}"
    rows = rn.rows + [r for t in srs for r in t.rows]
    io.write_csv(os.path.join(HERE, "data", f"harmonic-{dtype}.csv"), rn.columns, rows)
    r0 = rn.rows[0]
    ours = ([float(r0["stagnation_value"]), int(r0["stagnation_term"])]
            if r0["stagnation_term"] else [np.nan, np.nan])
    # Higham's published value, not this paper's: a cross-check (sanity), not a reproduction.
    out = [claims.cross_check(
        spec, f"rn-harmonic-{dtype}", f"RN: the {dtype} harmonic sum stops changing",
        f"carrier study stagnation --series harmonic --dtype {dtype} --round rne",
        f"{r0['stagnation_value']} at term {r0['stagnation_term']}", ours,
        figure=f"figures/{fig_name}.png")]
    vals = np.array([float(t.rows[0]["stagnation_value"]) for t in srs])
    terms = [t.rows[0]["stagnation_term"] for t in srs]
    exact = float(srs[0].rows[0]["exact_partial_sum_at_stagnation"])
    stagnated = [x for x in terms if x not in ("",)]
    # For sr the study reports the value after max-terms terms and leaves the term empty when
    # nothing stagnated (experiments/studies/stagnation.hpp); a number there means it did.
    rel = np.abs(vals - exact) / exact
    out.append(claims.sanity(
        f"SR: the {dtype} harmonic sum does not stagnate; it keeps tracking H_k",
        f"carrier study stagnation --series harmonic --dtype {dtype} --round sr --seed S "
        "--max-terms 1048576 (S = 1..5)",
        f"{len(srs) - len(stagnated)} of {len(srs)} seeds without stagnation; values "
        f"{', '.join(f'{v:.4g}' for v in vals)} vs H = {exact:.6g} (max rel. diff "
        f"{rel.max():.2g}); RN stops at {r0['stagnation_value']}",
        "no seed stagnates and every SR sum is more than twice RN's",
        bool(not stagnated and np.all(vals > 2 * float(r0["stagnation_value"]))),
        figure=f"figures/{fig_name}.png",
        note="no published SR value found to compare with, hence sanity"))
    fig, ax = plots.new_figure()
    ax.axhline(exact, color="black", lw=1.2, label=f"exact $H_N$ = {exact:.4f}")
    ax.axhline(float(r0["stagnation_value"]), color=plots.COLORS[1], ls="--",
               label=f"RN stops at {r0['stagnation_value']} (term {r0['stagnation_term']})")
    ax.plot(np.arange(1, len(vals) + 1), vals, "o", color=plots.COLORS[0],
            label="SR, one seed each")
    ax.set_xlabel("SR seed")
    ax.set_ylabel(f"{dtype} sum after N = 2^20 terms")
    ax.set_xticks(np.arange(1, len(vals) + 1))
    ax.set_title(f"Harmonic series in {dtype}: RN stagnates, SR does not")
    ax.legend(loc="center right")
    plots.save(fig, os.path.join(HERE, "figures", fig_name), ("png",))
    return out


MV_CMD = f"carrier sweep {REL}/matvec.toml"
MV_FIG = "figures/matvec_backward_error.png"


def matvec(t, spec, amv):
    """carrier's one-row version of CHM's matrix-vector experiment (matvec.toml): figure and
    rows; the "not found" rows quote the authors' setup (authors_matvec.py, amv)."""
    lam, ratio_min = spec.setting("lam"), spec.setting("rn_over_sr_min")
    curves = []
    for dtype in t.unique("dtype"):
        u = bounds.unit_roundoff(dtype)
        curves += [(f"$nu$ ({dtype})", lambda n, u=u: n * u),
                   (f"$\\sqrt{{n}}u$ ({dtype})", lambda n, u=u: np.sqrt(n) * u)]
    plots.error_vs_n(t, os.path.join(HERE, MV_FIG[:-4]), series=("dtype", "round"),
                     bounds=curves, formats=("png",),
                     title="Backward error of a row of y = Ax (A, x uniform[0,1)), RN vs SR")
    out = []
    for dtype in t.unique("dtype"):
        u = bounds.unit_roundoff(dtype)
        rn, sr = t.where(dtype=dtype, round="rne"), t.where(dtype=dtype, round="sr")
        ns = sorted({int(x) for x in sr.column("n")})
        nmax = ns[-1]
        med = {(r, n): float(np.median(sub.where(n=n).floats("rel_error")))
               for r, sub in (("rn", rn), ("sr", sr)) for n in ns}
        ratios = sr.floats("rel_error") / (lam * np.sqrt(sr.floats("n")) * 2 * u)
        worst = float(np.max(ratios))
        shape = ", ".join(f"n={n}: RN {repro.fmt(med[('rn', n)] / u)} u, SR "
                          f"{repro.fmt(med[('sr', n)] / u)} u" for n in ns)
        a = amv.where(format=dtype)
        an = [int(v) for v in a.floats("n")]
        pick = sorted(set(range(0, len(an), 4)) | {len(an) - 1})
        authors = ", ".join(f"n={an[i]}: RN {repro.fmt(a.floats('berr_rn')[i] / u)} u, SR "
                            f"{repro.fmt(a.floats('berr_sr_avg')[i] / u)} u" for i in pick)
        out.append(claims.reproduction(
            spec, f"matvec-{dtype}",
            f"matrix-vector product in {dtype} as test_matvec.m runs it (100 rows, max over "
            "rows, 10 SR runs on the same A and x): RN's backward error grows like n u (until it "
            "stagnates), SR's like sqrt(n) u", AMV_CMD, f"RN and SR mean: {authors}", None,
            figure=AMV_FIG))
        out.append(claims.sanity(
            f"carrier's own version in {dtype} (one row = one dot of two uniform[0,1) vectors, new "
            "data per trial, median of 10 trials; not the authors' setup)", MV_CMD,
            f"medians: {shape}", "(a description)", "info", figure=MV_FIG))
        out.append(claims.sanity(
            f"matrix-vector product in {dtype}: every SR backward error <= lambda sqrt(n) (2u), "
            f"lambda = {lam:g}", MV_CMD,
            f"max error / bound = {repro.fmt(worst)} ({len(sr)} trials, n = {ns[0]}..{nmax})",
            "<= 1", worst <= 1.0, figure=MV_FIG))
        gap = med[("rn", nmax)] / med[("sr", nmax)]
        out.append(claims.sanity(
            f"matrix-vector product in {dtype}: at n = {nmax} RN's median backward error is "
            f">= {ratio_min:g} x SR's", MV_CMD,
            f"RN / SR = {repro.fmt(gap)} (RN {repro.fmt(med[('rn', nmax)])}, SR "
            f"{repro.fmt(med[('sr', nmax)])})", f">= {ratio_min:g}", gap >= ratio_min,
            figure=MV_FIG))
    return out


AMV_FIG = "figures/matvec_authors.png"
AMV_CMD = f"python3 {REL}/authors_matvec.py (test_matvec.m emulated)"


def authors_matvec(path, spec):
    """test_matvec.m's experiment as the authors run it (authors_matvec.py): figure and rows."""
    t = io.read_table(path)
    io.require(t, ["format", "n", "berr_rn", "berr_sr_avg", "berr_sr_max", "berr_sr_min", "nu",
                   "sqrtnu"], "connolly2021", path)
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), squeeze=False)
    out = []
    ratio_min = spec.setting("rn_over_sr_min")
    for ax, fmt in zip(axes[0], ("fp16", "bf16")):
        sub = t.where(format=fmt)
        n = sub.floats("n")
        rn, avg = sub.floats("berr_rn"), sub.floats("berr_sr_avg")
        lo, hi = sub.floats("berr_sr_min"), sub.floats("berr_sr_max")
        ax.loglog(n, rn, marker="o", color=plots.COLORS[0], label="RN")
        ax.loglog(n, avg, marker="s", color=plots.COLORS[1], label="SR (mean of 10)")
        ax.fill_between(n, lo, hi, alpha=0.25, color=plots.COLORS[1], label="SR min..max")
        ax.loglog(n, sub.floats("nu"), ls="--", color="gray", label="min(1, n u)")
        ax.loglog(n, sub.floats("sqrtnu"), ls=":", color="gray", label="min(1, sqrt(n) u)")
        ax.set_xlabel("n")
        ax.set_ylabel("backward error (max over the 100 rows)")
        ax.set_title(f"{fmt}: y = Ax, A = 1e-3 rand(100, n), x = rand(n, 1)")
        ax.legend(fontsize=7)
        u = 2.0 ** -(11 if fmt == "fp16" else 8)
        gap = rn[-1] / avg[-1]
        out.append(claims.sanity(
            f"the authors' matrix-vector experiment (test_matvec.m: 100 rows, the max over rows, "
            f"10 SR runs on the same A and x, n = round(logspace(1, 6, 20))) in {fmt}: at n = "
            f"{int(n[-1])} RN's backward error is >= {ratio_min:g} x SR's mean", AMV_CMD,
            f"RN {repro.fmt(rn[-1])}, SR mean {repro.fmt(avg[-1])} (min {repro.fmt(lo[-1])}, max "
            f"{repro.fmt(hi[-1])}): RN / SR = {repro.fmt(gap)}; SR mean / (sqrt(n) u) from "
            f"{repro.fmt(float(np.min(avg / (np.sqrt(n) * u))))} to "
            f"{repro.fmt(float(np.max(avg / (np.sqrt(n) * u))))}; RN / (n u) at n = "
            f"{int(n[0])}..{int(n[np.argmax(n * u >= 1) - 1])} from "
            f"{repro.fmt(float(np.min((rn / (n * u))[n * u < 1])))} to "
            f"{repro.fmt(float(np.max((rn / (n * u))[n * u < 1])))}",
            f">= {ratio_min:g}", gap >= ratio_min, figure=AMV_FIG,
            note="RN's data are the script's own (MATLAB's rng(1) stream); the SR random "
                 "stream is numpy's, not CPFloat's"))
    fig.suptitle("Connolly, Higham and Mary 2021, the matrix-vector figure as test_matvec.m "
                 "computes it (numpy emulation)")
    fig.tight_layout()
    plots.save(fig, os.path.join(HERE, AMV_FIG[:-4]), ("png",))
    return t, out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--carrier", default="carrier")
    a = p.parse_args()
    try:
        t = repro.write_timing_free(os.path.join(a.out, "sr-vs-rn", "trials.csv"),
                                    os.path.join(HERE, "data", "sr-vs-rn.csv"))
        repro.require_ok(t, "sr-vs-rn sweep")
        spec = claims.load_spec(os.path.join(HERE, "claims.toml"))
        mv = repro.write_timing_free(os.path.join(a.out, "matvec", "trials.csv"),
                                     os.path.join(HERE, "data", "matvec.csv"))
        repro.require_ok(mv, "matvec sweep")
        src = os.path.join(a.out, "authors_matvec.csv")
        shutil.copyfile(src, os.path.join(HERE, "data", "authors_matvec.csv"))
        amv, amv_rows = authors_matvec(src, spec)
        cl = (matvec(mv, spec, amv) + amv_rows + harmonic(a.out, spec, "fp16") +
              harmonic(a.out, spec, "bf16") + sweep_claims(t, spec))
    except (io.AnalysisError, ValueError) as e:
        print(f"make_figures: {e}", file=sys.stderr)
        return 2
    claims.write_claims(os.path.join(HERE, "CLAIMS.md"),
                        "Connolly, Higham and Mary 2021, stochastic rounding: claims", cl,
                        preamble=f"Regenerate: `bash {REL}/reproduce.sh`. The paper's own "
                                 "experiment (matrix-vector products, RN against 10 SR runs) "
                                 "is run as the authors' test_matvec.m runs it "
                                 "(authors_matvec.py, a numpy emulation: 100 rows, the max over "
                                 "rows, 10 SR runs on the same A and x) and, with carrier, as "
                                 "one row of y = Ax per trial (`matvec.toml`); its published "
                                 "figure's values were not reachable, so those rows say "
                                 "\"not found\" (README.md).", spec=spec)
    for c in cl:
        print(f"{c.kind:12} {c.match!s:5} {c.claim}: ours {c.ours}; published {c.published}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
