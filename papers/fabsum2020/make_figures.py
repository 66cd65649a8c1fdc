"""Figures, timing-free CSVs and CLAIMS.md for fabsum2020.

Inputs: OUT/blocked/trials.csv (carrier sweep of blocked.toml: one precision throughout) and
OUT/fabsum/trials.csv (carrier sweep of fabsum.toml: FABsum's two levels, acc "INNER>OUTER",
tiles in the storage format, tile sums in fp32 (fp16, bf16) or fp64 (fp32)). Both sweeps see
the same stored inputs. A cheap cross-check: fabsum_emulation.py (numpy) computes the same
two-level sum on a file of stored values and must equal `carrier eval --acc INNER>OUTER
--input FILE` bit for bit. Outputs (this folder): data/blocked.csv, data/fabsum.csv,
data/emulation-check.csv, figures/*.png, CLAIMS.md.

Bounds (first-order forms of the paper, written rigorously with gamma_k = ku/(1-ku)):
  blocked, tile sums merged sequentially:  gamma_{b-1+n/b-1}(u)
  blocked, tile sums merged pairwise:      gamma_{b-1+ceil(log2(n/b))}(u)
  FABsum (tiles in u_l, tile sums in u_h): gamma_{b-1}(u_l) + gamma_{n/b-1}(u_h)(1 + gamma_{b-1}(u_l))
The FABsum sweep's own bound column is carrier's first-order form ((b-1)u_l + D_out u_h) sum|x|
(absolute); its error_to_bound is reported next to the paper's rigorous form.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

from analysis import bounds, claims, io, plots, repro

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fabsum_emulation as emu  # noqa: E402

REL = "papers/fabsum2020"
N = 65536
TRIALS = 5
SEED = 2020
BS = [2 ** k for k in range(1, 16)]
OUTER = {"fp16": "fp32", "bf16": "fp32", "fp32": "fp64"}


def g(k, u):
    return float(bounds.gamma(k, u))


def bound_seq(b, u):
    return g(b - 1 + N // b - 1, u)


def bound_pair(b, u):
    return g(b - 1 + math.ceil(math.log2(N // b)), u)


def bound_fab(b, ul, uh):
    gl = g(b - 1, ul)
    return gl + g(N // b - 1, uh) * (1 + gl)


def check_emulation(carrier):
    """carrier's two-level sum (eval --acc INNER>OUTER) against the numpy emulation, bitwise."""
    rows = []
    tmp = tempfile.mkdtemp(prefix="fabsum-check-")
    for dtype, b in [("fp16", 64), ("bf16", 256), ("fp32", 16), ("fp16", 4096)]:
        x = emu.to_format(np.random.default_rng(SEED).uniform(0.0, 1.0, (1, N)), dtype)
        xs = x.astype(np.float64)
        path = os.path.join(tmp, f"{dtype}.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(repr(v) for v in xs[0]) + "\n")
        ours = float(emu.blocked_sum(xs, b, dtype, OUTER[dtype])[0])
        cmd = [carrier, "eval", "--op", "sum", "--dtype", dtype, "--acc",
               f"{dtype}>{OUTER[dtype]}", "--schedule", f"blocked:{b}", "--input", path,
               "--format", "json"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise io.AnalysisError(f"{' '.join(cmd)} failed: {r.stderr.strip()}")
        # eval prints the shortest decimal that reads back to the same value of the OUTER type
        # (fp32 or fp64): rounding it to OUTER recovers the value exactly.
        theirs = float(emu.to_format(np.array([float(json.loads(r.stdout)["result"])]),
                                     OUTER[dtype]).astype(np.float64)[0])
        rows.append({"dtype": dtype, "acc": f"{dtype}>{OUTER[dtype]}", "b": b, "emulated": ours,
                     "carrier": theirs, "equal": ours == theirs})
    io.write_csv(os.path.join(HERE, "data", "emulation-check.csv"),
                 ["dtype", "acc", "b", "emulated", "carrier", "equal"], rows)
    return rows


def rounded_back_error(r, dtype):
    """FABsum's relative error once its wider result is rounded back to the working format.

    Carrier returns a two-level sum in the outer type; the paper's FABsum hands the working
    precision back, and only that output is comparable with an all-`dtype` blocked sum."""
    back = float(emu.to_format(np.array([float(r["result"])]), dtype).astype(np.float64)[0])
    ref = float(r["reference"])
    return abs(back - ref) / abs(ref)


def figure_and_claims(t, fab):
    out = []
    for dtype in ("fp16", "bf16", "fp32"):
        u = bounds.unit_roundoff(dtype)
        uh = bounds.unit_roundoff(OUTER[dtype])
        fig_rows = []
        ratio = {"seq": [], "pair": [], "fab": []}
        for r in t.where(dtype=dtype).rows:
            b = int(r["schedule"].split(":")[1])
            pair = r["schedule"].endswith(":pairwise")
            acc = r["acc"] if r["acc"] != "same" else dtype
            variant = f"blocked, tile sums {'pairwise' if pair else 'sequential'}, all {acc}"
            e = float(r["rel_error"])
            fig_rows.append({"b": b, "variant": variant, "rel_error": e})
            if acc == dtype:
                bd = bound_pair(b, u) if pair else bound_seq(b, u)
                if math.isfinite(bd):
                    ratio["pair" if pair else "seq"].append(e / bd)
        own = []  # carrier's own first-order error_to_bound of the FABsum rows
        back = {}  # b -> errors of FABsum (sequential) rounded back to dtype
        for r in fab.where(dtype=dtype).rows:
            b = int(r["schedule"].split(":")[1])
            pair = r["schedule"].endswith(":pairwise")
            e = float(r["rel_error"])
            fig_rows.append({"b": b, "variant": f"FABsum: tiles {dtype}, tile sums "
                                                 f"{'pairwise' if pair else 'sequential'} "
                                                 f"{OUTER[dtype]}", "rel_error": e})
            if pair:
                continue
            back.setdefault(b, []).append(rounded_back_error(r, dtype))
            bd = bound_fab(b, u, uh)
            if math.isfinite(bd):
                ratio["fab"].append(e / bd)
            if r["error_to_bound"] not in ("", "nan"):
                own.append(float(r["error_to_bound"]))
        ft = io.table_from_rows(["b", "variant", "rel_error"], fig_rows, f"blocked-{dtype}")
        curves = [("$\\gamma_{b+n/b-2}$ (sequential)", lambda b: bounds.gamma(b + N / b - 2, u)),
                  ("$\\gamma_{b-1+\\log_2(n/b)}$ (pairwise)",
                   lambda b: bounds.gamma(b - 1 + np.ceil(np.log2(N / b)), u)),
                  (f"FABsum bound ($u_l$={dtype}, $u_h$={OUTER[dtype]})",
                   lambda b: bounds.gamma(b - 1, u) + bounds.gamma(N / b - 1, uh))]
        fig = f"figures/error_vs_block_{dtype}.png"
        plots.error_vs_tile(ft, os.path.join(HERE, fig[:-4]), tile="b", series=("variant",),
                            bounds=curves, formats=("png",),
                            title=f"Blocked summation, n = 2^16 uniform[0,1), {dtype} storage")
        seqt = ft.where(variant=f"blocked, tile sums sequential, all {dtype}")
        med = repro.median_by(seqt, "b", "rel_error")
        best_b = min(med, key=lambda k: (med[k], int(k)))
        cmd = f"carrier sweep {REL}/blocked.toml"
        for key, name, formula in [("seq", "sequential", "gamma_{b+n/b-2}"),
                                   ("pair", "pairwise", "gamma_{b-1+ceil(log2(n/b))}")]:
            if not ratio[key]:
                out.append(claims.sanity(
                    f"{dtype}: blocked summation, tile sums merged {name}: error <= "
                    f"{formula}(u)", cmd, "no trial has a bound < 1 at n = 2^16",
                    "error/bound <= 1", "n/a (vacuous)", figure=fig))
                continue
            w = max(ratio[key])
            out.append(claims.sanity(
                f"{dtype}: blocked summation, tile sums merged {name}: error <= {formula}(u)",
                cmd, f"max error/bound = {repro.fmt(w)} over {len(ratio[key])} trials",
                "error/bound <= 1", w <= 1.0, figure=fig,
                note="trials with a vacuous bound (ku >= 1) not counted"))
        w = max(ratio["fab"]) if ratio["fab"] else math.nan
        fab_seq = ft.where(variant=f"FABsum: tiles {dtype}, tile sums sequential {OUTER[dtype]}")
        fmed = repro.median_by(fab_seq, "b", "rel_error")
        w_own = max(own) if own else math.nan
        fcmd = f"carrier sweep {REL}/fabsum.toml (acc {dtype}>{OUTER[dtype]}, schedule blocked:b)"
        out.append(claims.sanity(
            f"{dtype}: FABsum (tiles {dtype}, tile sums {OUTER[dtype]}) error <= "
            f"(b-1)u_l + (n/b-1)u_h (rigorous gamma form)", fcmd,
            f"max error/bound = {repro.fmt(w)} over {len(ratio['fab'])} trials (carrier's "
            f"first-order bound column: max {repro.fmt(w_own)})",
            "error/bound <= 1", w <= 1.0 and (not own or w_own <= 1.0), figure=fig,
            note=f"errors of the {OUTER[dtype]} result"))
        # Like with like: FABsum's result rounded back to dtype against the all-dtype blocked sum
        # (the paper's comparison returns the working precision from both).
        fb = float(np.median(back[32]))
        out.append(claims.sanity(
            f"{dtype}: FABsum, its result rounded back to {dtype}, is more accurate than "
            f"blocked summation all in {dtype} (b = 32, tile sums sequential)", fcmd,
            f"median error at b=32: FABsum rounded to {dtype} {repro.fmt(fb)} (unrounded "
            f"{OUTER[dtype]} result {repro.fmt(fmed['32'])}), all-{dtype} blocked "
            f"{repro.fmt(med['32'])}", f"FABsum rounded to {dtype} < all-{dtype} blocked",
            bool(fb < med["32"]), figure=fig,
            note=f"rounding to {dtype} alone costs up to u/2 = {repro.fmt(u / 2)}"))
        # Not a test: 5 trials at one n cannot locate a minimiser; the paper's statement is about
        # the bound's minimiser (b = sqrt(n)), and the measured errors are flat over a wide range.
        flat = [k for k in med if med[k] <= 2 * med[best_b]]
        out.append(claims.sanity(
            f"{dtype}: where the sequential blocked error is smallest (the bound's minimiser is "
            "b = sqrt(n) = 256)", cmd,
            f"median error smallest at b = {best_b} ({repro.fmt(med[best_b])}); at b=256: "
            f"{repro.fmt(med['256'])}; within 2x of the smallest for b = "
            f"{min(map(int, flat))}..{max(map(int, flat))}",
            "(a description: 5 trials at one n cannot locate a minimiser)", "info", figure=fig,
            note="not a reproduction; see README.md"))
    return out


def error_vs_n(tn, spec):
    """The headline experiment's shape: median error against n at b = 32, per storage format.

    FABsum with the accurate sum in the higher precision is rounded back to the storage format
    first (rounded_back_error); FABsum with a compensated accurate sum (op fabsum-comp) returns
    the storage format already."""
    out = []
    fig, axes = plots.new_figure(12.0, 4.2)
    fig.clf()
    lo = spec.setting("recursive_slope_min")
    hi = spec.setting("fabsum_slope_max")
    hi_comp = spec.setting("fabsum_comp_slope_max")
    trials = int(tn.floats("trial").max()) + 1
    largest = {}
    for j, dtype in enumerate(("fp16", "bf16", "fp32")):
        ax = fig.add_subplot(1, 3, j + 1)
        sub = tn.where(dtype=dtype)
        sums = sub.where(op="sum")
        # Labels name the method only (the panel title names the formats): one shared legend.
        variants = [("recursive", "recursive, all in the storage format",
                     sums.where(acc="same", schedule="seq")),
                    ("blocked", "blocked b=32, all in the storage format",
                     sums.where(acc="same", schedule="blocked:32")),
                    ("FABsum-high", "FABsum b=32, tile sums one format up, rounded back",
                     sums.where(acc=f"{dtype}>{OUTER[dtype]}", schedule="blocked:32")),
                    ("FABsum-comp", "FABsum b=32, tile sums compensated in the storage format",
                     sub.where(op="fabsum-comp", schedule="blocked:32"))]
        slopes, meds = {}, {}
        for i, (key, label, v) in enumerate(variants):
            ns = v.floats("n")
            errs = (np.array([rounded_back_error(r, dtype) for r in v.rows]) if key == "FABsum-high"
                    else v.floats("rel_error"))
            xs = np.unique(ns)
            med = np.array([np.median(errs[ns == x]) for x in xs])
            meds[key] = (xs, med)
            keep = med > 0
            ax.plot(xs[keep], med[keep], marker=plots.MARKERS[i], color=plots.COLORS[i],
                    label=label)
            slopes[key] = bounds.loglog_slope(xs[keep], med[keep])
        u = bounds.unit_roundoff(dtype)
        ax.axhline(u, color="black", ls=":", lw=1, label="u")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel("median relative error")
        ax.set_title(f"op sum, format {dtype} (tile sums one up: {OUTER[dtype]})", fontsize=9)
        ax.legend(fontsize=6, loc="upper left")
        nmin, nmax = int(sub.floats("n").min()), int(sub.floats("n").max())
        out.append(claims.sanity(
            f"{dtype}: at fixed b = 32, FABsum's error (accurate sum in {OUTER[dtype]}, result "
            f"rounded back to {dtype}) does not grow with n while recursive summation's does",
            f"carrier sweep {REL}/error-vs-n.toml",
            f"log-log slope of the median error vs n = {nmin}..{nmax}: recursive "
            f"{slopes['recursive']:.2f}, blocked {slopes['blocked']:.2f}, FABsum "
            f"{slopes['FABsum-high']:.2f}",
            f"recursive slope >= {lo}, FABsum slope <= {hi}",
            bool(slopes["recursive"] >= lo and slopes["FABsum-high"] <= hi),
            figure="figures/error_vs_n.png"))
        out.append(claims.sanity(
            f"{dtype}: at fixed b = 32, FABsum with a compensated accurate sum in {dtype} "
            "(op fabsum-comp) does not grow with n either",
            f"carrier sweep {REL}/error-vs-n.toml (op fabsum-comp, schedule blocked:32)",
            f"log-log slope of the median error vs n = {nmin}..{nmax}: "
            f"{slopes['FABsum-comp']:.2f}",
            f"slope <= {hi_comp}", bool(slopes["FABsum-comp"] <= hi_comp),
            figure="figures/error_vs_n.png"))
        at = {k: float(m[-1]) for k, (xs, m) in meds.items()}
        largest[dtype] = (nmax, at)
        out.append(claims.sanity(
            f"{dtype}: at the largest n = {nmax}, both FABsum variants are more accurate than "
            "recursive summation (median errors)",
            f"carrier sweep {REL}/error-vs-n.toml",
            f"median error: recursive {repro.fmt(at['recursive'])}, blocked "
            f"{repro.fmt(at['blocked'])}, FABsum ({OUTER[dtype]}, rounded) "
            f"{repro.fmt(at['FABsum-high'])}, FABsum (compensated) "
            f"{repro.fmt(at['FABsum-comp'])}; u = {repro.fmt(u)}",
            "both FABsum medians < recursive's",
            bool(at["FABsum-high"] < at["recursive"] and at["FABsum-comp"] < at["recursive"]),
            figure="figures/error_vs_n.png"))
    fig.suptitle(f"Error vs n at fixed b = 32, uniform[0,1) values, {trials} trials per point")
    plots.save(fig, os.path.join(HERE, "figures", "error_vs_n"), ("png",))
    return out, largest


def minimiser(tm, spec):
    """A powered test of the bound's minimiser b = sqrt(n) at n = 2^12, 2^16, 2^20: 100 trials
    at b = sqrt(n)/16, sqrt(n) and 16 sqrt(n)."""
    from scipy.stats import mannwhitneyu  # Debian python3-scipy (scripts/common.sh)
    pmax = spec.setting("minimiser_p_max")
    out = []
    for dtype in ("fp16", "bf16", "fp32"):
        sub = tm.where(dtype=dtype)
        for n in sorted({int(v) for v in sub.floats("n")}):
            r = int(round(math.sqrt(n)))
            bs = (r // 16, r, 16 * r)
            err = {b: sub.where(n=str(n), schedule=f"blocked:{b}").floats("rel_error") for b in bs}
            p = {b: float(mannwhitneyu(err[r], err[b], alternative="less").pvalue)
                 for b in (bs[0], bs[2])}
            med = {b: float(np.median(v)) for b, v in err.items()}
            if dtype != "fp32":
                # Issue 33: in fp16 and bf16 uniform[0,1) sums stagnate (a tile sum or the running
                # sum lands on a power of two where every addend is below half an ulp), so the
                # large-b errors are about 1 and the row holds through stagnation, not through
                # the bound's minimiser: reported, not judged.
                out.append(claims.sanity(
                    f"{dtype}, n = 2^{int(round(math.log2(n)))}: blocked summation (tile sums "
                    f"sequential) at b = {bs[0]}, {r} = sqrt(n) and {bs[2]}",
                    f"carrier sweep {REL}/minimiser.toml",
                    f"median error b={bs[0]} {repro.fmt(med[bs[0]])}, b={r} {repro.fmt(med[r])}, "
                    f"b={bs[2]} {repro.fmt(med[bs[2]])}; one-sided Mann-Whitney p ({r} < {bs[0]}) "
                    f"= {p[bs[0]]:.2g}, ({r} < {bs[2]}) = {p[bs[2]]:.2g}, {len(err[r])} trials "
                    "per b",
                    "(a description: the sums stagnate at powers of two, so sqrt(n) wins only "
                    "because the other b stagnate)", "info",
                    figure=f"figures/error_vs_block_{dtype}.png"))
                continue
            out.append(claims.sanity(
                f"{dtype}, n = 2^{int(round(math.log2(n)))}: blocked summation (tile sums "
                f"sequential) is more accurate at the bound's minimiser b = sqrt(n) = {r} than at "
                f"b = {bs[0]} and b = {bs[2]}",
                f"carrier sweep {REL}/minimiser.toml",
                f"median error b={bs[0]} {repro.fmt(med[bs[0]])}, b={r} {repro.fmt(med[r])}, "
                f"b={bs[2]} {repro.fmt(med[bs[2]])}; one-sided Mann-Whitney p ({r} < {bs[0]}) = "
                f"{p[bs[0]]:.2g}, ({r} < {bs[2]}) = {p[bs[2]]:.2g}, {len(err[r])} trials per b",
                f"both p < {pmax:g}", bool(p[bs[0]] < pmax and p[bs[2]] < pmax),
                figure=f"figures/error_vs_block_{dtype}.png"))
    return out


def minimiser_grid(tg, spec):
    """Issue 33: the measured minimiser of the fp32 blocked error on a grid of b (powers of 2),
    where no sum stagnates, against b* = (n^2/2)^(1/3) and sqrt(n)."""
    factor = spec.setting("minimiser_grid_factor")
    out = []
    for n in sorted({int(v) for v in tg.floats("n")}):
        sub = tg.where(n=str(n))
        bs = sorted({int(x.split(":")[1]) for x in sub.column("schedule")})
        med = {b: float(np.median(sub.where(schedule=f"blocked:{b}").floats("rel_error")))
               for b in bs}
        best = min(bs, key=lambda b: (med[b], b))
        bstar = (n * n / 2) ** (1 / 3)
        root = math.sqrt(n)
        out.append(claims.sanity(
            f"fp32 uniform[0,1), n = 2^{int(round(math.log2(n)))} (no stagnation): the blocked "
            f"error is smallest within a factor {factor:g} of the probabilistic optimum "
            f"b* = (n^2/2)^(1/3) = {bstar:.0f} (tile errors ~ n b^2, tile-sum chain ~ n^3/b), "
            f"not at the worst-case bound's sqrt(n) = {root:.0f}",
            f"carrier sweep {REL}/minimiser-grid.toml",
            f"least median error at b = {best} ({repro.fmt(med[best])}; {len(bs)} b from {bs[0]} "
            f"to {bs[-1]}, 100 trials each); at b = {int(root)}: {repro.fmt(med[int(root)])} "
            f"({repro.fmt(med[int(root)] / med[best])}x the least)",
            f"best b within [b*/{factor:g}, {factor:g} b*]; ours/sqrt(n) = {best / root:g}",
            bool(bstar / factor <= best <= bstar * factor),
            figure="figures/error_vs_block_fp32.png",
            note="our derivation, not a number the paper publishes: a sanity row"))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--carrier", default="carrier")
    a = p.parse_args()
    try:
        t = repro.write_timing_free(os.path.join(a.out, "blocked", "trials.csv"),
                                    os.path.join(HERE, "data", "blocked.csv"))
        repro.require_ok(t, "blocked sweep")
        fab = repro.write_timing_free(os.path.join(a.out, "fabsum", "trials.csv"),
                                      os.path.join(HERE, "data", "fabsum.csv"))
        repro.require_ok(fab, "fabsum sweep")
        tn = repro.write_timing_free(os.path.join(a.out, "error-vs-n", "trials.csv"),
                                     os.path.join(HERE, "data", "error-vs-n.csv"))
        repro.require_ok(tn, "error-vs-n sweep")
        checks = check_emulation(a.carrier)
        cl = [claims.sanity("carrier's two-level sum (acc INNER>OUTER) equals an independent numpy "
                           "FABsum emulation bit for bit (fp16>fp32 b=64, bf16>fp32 b=256, "
                           "fp32>fp64 b=16, fp16>fp32 b=4096)",
                           "carrier eval --op sum --acc INNER>OUTER --schedule blocked:B "
                           "--input FILE",
                           f"{sum(c['equal'] for c in checks)} of {len(checks)} equal",
                           "all equal",
                           all(c["equal"] for c in checks))]
        cl += figure_and_claims(t, fab)
        spec = claims.load_spec(os.path.join(HERE, "claims.toml"))
        rows_n, largest = error_vs_n(tn, spec)
        n_max = max(v[0] for v in largest.values())
        cl.append(claims.reproduction(
            spec, "headline-figure",
            "FABsum's error does not grow with n, recursive summation's does (the paper's "
            "error-vs-n figure)", f"carrier sweep {REL}/error-vs-n.toml",
            f"median errors at n = {n_max}: " + "; ".join(
                f"{d} recursive {repro.fmt(a['recursive'])}, FABsum "
                f"{repro.fmt(a['FABsum-high'])} / {repro.fmt(a['FABsum-comp'])}"
                for d, (nn, a) in largest.items() if nn == n_max) +
            " (FABsum accurate sum in higher precision / compensated)", None,
            figure="figures/error_vs_n.png"))
        cl += rows_n
        tm = repro.write_timing_free(os.path.join(a.out, "minimiser", "trials.csv"),
                                     os.path.join(HERE, "data", "minimiser.csv"))
        repro.require_ok(tm, "minimiser sweep")
        cl += minimiser(tm, spec)
        tg = repro.write_timing_free(os.path.join(a.out, "minimiser-grid", "trials.csv"),
                                     os.path.join(HERE, "data", "minimiser-grid.csv"))
        repro.require_ok(tg, "minimiser-grid sweep")
        cl += minimiser_grid(tg, spec)
    except (io.AnalysisError, ValueError, KeyError) as e:
        print(f"make_figures: {e}", file=sys.stderr)
        return 2
    claims.write_claims(os.path.join(HERE, "CLAIMS.md"),
                        "Blanchard, Higham and Mary 2020, FABsum: claims", cl,
                        preamble=f"Regenerate: `bash {REL}/reproduce.sh`. Block-size sweeps: "
                                 "n = 2^16 uniform[0,1) values, 5 trials per cell; error vs n: "
                                 "n = 2^10..2^24, 10 trials; minimiser: 100 trials per b. "
                                 "FABsum runs in carrier itself (acc INNER>OUTER, core "
                                 "ReplayMixed; op fabsum-comp for the compensated accurate sum).",
                        spec=spec)
    for c in cl:
        print(f"{c.kind:12} {c.match!s:5} {c.claim}: ours {c.ours}; published {c.published}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
