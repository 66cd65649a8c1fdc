"""Figures, timing-free CSVs and CLAIMS.md for higham1993-summation from reproduce.sh's OUT_DIR.

Inputs: OUT/error-vs-n/trials.csv and OUT/orderings/trials.csv (carrier sweep) and OUT/stagnation-{harmonic,ones}-{fp16,bf16}.csv
(carrier study stagnation). Outputs (this folder): data/error-vs-n.csv, data/orderings.csv,
data/orderings-medians.csv, data/stagnation.csv,
figures/*.png, CLAIMS.md. Every bound below is the paper's formula evaluated here, per trial.
"""
import argparse
import math
import os
import sys

import numpy as np

from analysis import bounds, claims, io, plots, repro

HERE = os.path.dirname(os.path.abspath(__file__))
REL = "papers/higham1993-summation"


# Carrier's compensated op is Neumaier's variant of Kahan's loop. It is named `kahan` until the
# op-table change renames it `neumaier` (and adds Kahan's own loop as `kahan`); the data say
# which name the run used, and both names mean Neumaier's loop in this folder's configs.
COMPENSATED = ("neumaier", "kahan")


def bound_for(op, schedule, n, u):
    """The paper's relative-error bound of one trial (nan when vacuous)."""
    if op in COMPENSATED:
        # 2u + O(n u^2), the O-term written as n u^2; like gamma_n it says nothing once
        # n u >= 1 (there the compensation term, itself in the low format, stagnates too).
        return 2 * u + n * u * u if n * u < 1 else math.nan
    if schedule == "pairwise":
        return float(bounds.gamma(math.ceil(math.log2(n)), u))
    return float(bounds.gamma(n - 1, u))


def error_claims(t):
    out = []
    for dtype in t.unique("dtype"):
        u = bounds.unit_roundoff(dtype)
        comp = next((o for o in COMPENSATED if o in t.unique("op")), "neumaier")
        for op, sched, name, formula in [("sum", "seq", "recursive", "gamma_{n-1}"),
                                         ("sum", "pairwise", "pairwise", "gamma_{ceil(log2 n)}"),
                                         (comp, "seq", "compensated (Neumaier's variant, "
                                          "checked against Kahan's bound)", "2u + O(nu^2)")]:
            sub = t.where(op=op, schedule=sched, dtype=dtype)
            if len(sub) == 0:
                continue
            ns, errs = sub.floats("n"), sub.floats("rel_error")
            ratios = np.array([e / bound_for(op, sched, n, u) for n, e in zip(ns, errs)])
            ok = np.isfinite(ratios)
            worst = float(np.max(ratios[ok]))
            nmax = int(ns.max())
            med_top = float(np.median(errs[ns == nmax])) / u
            skipped = int(np.count_nonzero(~ok))
            note = f"{len(sub)} trials, n = {int(ns.min())}..{nmax}"
            if skipped:
                worst_vac = float(np.max(errs[~ok]))
                note += (f"; {skipped} trials with n u >= 1 (bound vacuous) not counted: their "
                         f"largest error is {repro.fmt(worst_vac)}")
            # A worst-case bound check: errors land far below it, so a wrong summation order
            # would pass too. Kept as a regression test, labelled sanity (papers/README.md).
            out.append(claims.sanity(
                f"{name} summation in {dtype}: error <= {formula} for every trial",
                f"carrier sweep {REL}/error-vs-n.toml",
                f"max error/bound = {repro.fmt(worst)}; median error at n={nmax}: "
                f"{repro.fmt(med_top)} u",
                "error/bound <= 1", worst <= 1.0, figure=f"figures/error_vs_n_{dtype}.png",
                note=note))
    return out


def error_figures(t):
    for dtype in t.unique("dtype"):
        u = bounds.unit_roundoff(dtype)
        sub = t.where(dtype=dtype)
        curves = [("$\\gamma_{n-1}$ (recursive)", lambda n: bounds.gamma(n - 1, u)),
                  ("$\\gamma_{\\lceil \\log_2 n \\rceil}$ (pairwise)",
                   lambda n: bounds.gamma(np.ceil(np.log2(n)), u)),
                  ("$2u + nu^2$ (Kahan, while $nu < 1$)",
                   lambda n: np.where(n * u < 1, 2 * u + n * u * u, np.nan)),
                  ("$\\sqrt{n}u$ (probabilistic)", lambda n: bounds.prob_bound(n, u))]
        plots.error_vs_n(sub, os.path.join(HERE, "figures", f"error_vs_n_{dtype}"),
                         series=("op", "schedule"), bounds=curves, formats=("png",),
                         title=f"Summation of uniform[0,1) in {dtype}: error vs n "
                               f"(Higham 1993 bounds)")


# Higham 1993's methods in the orderings sweep (orderings.toml): (op, schedule) -> label.
METHODS = [("sum", "seq", "recursive, given order"), ("sum", "increasing", "increasing |x|"),
           ("sum", "decreasing", "decreasing |x|"), ("sum", "insertion", "insertion"),
           ("sum", "psum", "Psum"), ("sum", "pairwise", "pairwise"),
           ("kahan", "seq", "Kahan (compensated)"),
           ("neumaier", "seq", "Neumaier (compensated)")]
ORD_CMD = f"carrier sweep {REL}/orderings.toml"


def _slug(text):
    return text.replace(":", "-").replace(".", "_")


def _medians(t):
    """{(input, n, method label): median relative error} over the orderings sweep's trials."""
    out = {}
    for inp in t.unique("input"):
        for n in t.unique("n"):
            for op, sched, label in METHODS:
                e = t.where(input=inp, n=n, op=op, schedule=sched).floats("rel_error")
                out[(inp, int(n), label)] = float(np.median(e)) if e.size else math.nan
    return out


def orderings(t, spec):
    """Figures, the medians table and the claims of the orderings sweep."""
    u = bounds.unit_roundoff("fp32")
    med = _medians(t)
    inputs, ns = t.unique("input"), [int(n) for n in t.unique("n")]
    rows = [{"input": i, "n": n, "method": m, "median_rel_error": repr(med[(i, n, m)]),
             "median_over_u": repr(med[(i, n, m)] / u)}
            for i in inputs for n in ns for _, _, m in METHODS]
    io.write_csv(os.path.join(HERE, "data", "orderings-medians.csv"),
                 ["input", "n", "method", "median_rel_error", "median_over_u"], rows)
    for inp in inputs:
        prefix = os.path.join(HERE, "figures", f"orderings_{_slug(inp)}")
        plots.error_vs_n(t.where(input=inp), prefix,
                         series=("op", "schedule"), bounds=None, formats=("png",),
                         title=f"Higham 1993 methods on {inp}, fp32: relative error vs n")
    fig_of = {i: f"figures/orderings_{_slug(i)}.png" for i in inputs}
    out = []

    # Sanity (abstract, a qualitative sentence: papers/README.md rule 4; issue 33): no one method
    # is uniformly more accurate. In every (data, n) cell the method of least median error is
    # the cell's winner (ties: no winner); ours is the number of cells that the most frequent
    # winner does NOT win. Counting compensated summation as one method (Kahan or Neumaier,
    # whichever is less) shows what the count rests on: exact Kahan = Neumaier ties.
    cells = [(i, n) for i in inputs for n in ns]
    comp = [m for _, _, m in METHODS if "compensated" in m]

    def tally_cells(methods):
        won, tie = {}, {}
        for c in cells:
            vals = sorted((min(med[(c[0], c[1], m)] for m in group), name)
                          for name, group in methods)
            won[c] = vals[0][1] if vals[0][0] < vals[1][0] else None
            if won[c] is None:
                tie[c] = " = ".join(m for v, m in vals if v == vals[0][0])
        k = {}
        for w in won.values():
            if w is not None:
                k[w] = k.get(w, 0) + 1
        best = max(k, key=lambda m: (k[m], m)) if k else "none"
        return won, tie, k, best, sum(1 for w in won.values() if w != best)

    winners, tied, counts, top, lost = tally_cells([(m, [m]) for _, _, m in METHODS])
    grouped = [(m, [m]) for _, _, m in METHODS if m not in comp] + \
        [("compensated (Kahan or Neumaier)", comp)]
    _, _, gcounts, gtop, glost = tally_cells(grouped)
    tally = "; ".join(f"{m}: {k}" for m, k in sorted(counts.items(), key=lambda kv: -kv[1]))
    e = spec.entry("no-uniform-best")
    out.append(claims.sanity(
        "no one summation method is uniformly more accurate than the others (8 methods, "
        f"{len(cells)} cells of data x n, winner = least median error of 20 trials; the "
        "abstract's qualitative sentence, not a published number)", ORD_CMD,
        f"{lost} of {len(cells)} cells not won by the most frequent winner ({top}); "
        f"wins: {tally}; with compensated summation as one method it wins "
        f"{gcounts.get(gtop, 0)} of {len(cells)} ({glost} not won)",
        f"{e['published']} ({e['location']}): at least {e['min']} cell(s) not won by one "
        "method", spec.check("no-uniform-best", lost), figure=fig_of[inputs[-1]],
        note=(f"{len(tied)} cell(s) tied exactly (no winner): " +
              "; ".join(f"{i} n={n}: {w}" for (i, n), w in tied.items()) +
              "; the row holds only through these Kahan = Neumaier ties") if tied else None))

    # The body's guidelines (not located by the search tool): our ratios, and sanity rows
    # that assert the ranking with the margin fixed in claims.toml [settings].
    margin = float(spec.setting("ranking_margin"))

    def ratio(inp, a, b):
        return [med[(inp, n, a)] / med[(inp, n, b)] for n in ns]

    same = ratio("uniform01", "decreasing |x|", "increasing |x|")
    same_text = ", ".join(f"n={n}: {repro.fmt(r)}" for n, r in zip(ns, same))
    out.append(claims.reproduction(
        spec, "same-sign-increasing",
        "same-sign data (uniform01): increasing order of |x_i| is more accurate than decreasing",
        ORD_CMD, f"median error decreasing / increasing = {same_text}", same,
        figure=fig_of["uniform01"]))
    out.append(claims.sanity(
        f"uniform01: median error of decreasing order >= {margin:g} x increasing order at every n",
        ORD_CMD, same_text, f"every ratio >= {margin:g}", all(r >= margin for r in same),
        figure=fig_of["uniform01"]))
    canc = ratio("ill:1e4", "increasing |x|", "decreasing |x|")
    canc_text = ", ".join(f"n={n}: {repro.fmt(r)}" for n, r in zip(ns, canc))
    out.append(claims.reproduction(
        spec, "cancellation-decreasing",
        "heavy cancellation (ill:1e4): decreasing order of |x_i| is more accurate than increasing",
        ORD_CMD, f"median error increasing / decreasing = {canc_text}", canc,
        figure=fig_of["ill:1e4"]))
    out.append(claims.sanity(
        f"ill:1e4: median error of increasing order >= {margin:g} x decreasing order at every n",
        ORD_CMD, canc_text, f"every ratio >= {margin:g}", all(r >= margin for r in canc),
        figure=fig_of["ill:1e4"]))

    # Kahan's loop loses its correction when a term is larger than the running sum; Neumaier's
    # variant does not: on the cancelling data its median error is no larger.
    kn = ratio("ill:1e4", "Kahan (compensated)", "Neumaier (compensated)")
    kn_text = ", ".join(f"n={n}: {repro.fmt(r)}" for n, r in zip(ns, kn))
    out.append(claims.sanity(
        "ill:1e4: Neumaier's variant is at least as accurate as Kahan's loop (median) at every n",
        ORD_CMD, f"median error Kahan / Neumaier = {kn_text}", "every ratio >= 1",
        all(r >= 1 for r in kn), figure=fig_of["ill:1e4"]))

    # Each method against carrier's a-priori bound for its tree (error_to_bound column).
    for op, sched, label in METHODS:
        sub = t.where(op=op, schedule=sched)
        r = sub.floats("error_to_bound")
        ok = np.isfinite(r)
        worst = float(np.max(r[ok])) if ok.any() else math.nan
        kinds = ", ".join(sorted(set(sub.column("bound_kind"))))
        out.append(claims.sanity(
            f"{label} in fp32 on all four data kinds: error <= carrier's a-priori bound "
            f"({kinds}) for every trial", ORD_CMD,
            f"max error/bound = {repro.fmt(worst)} ({int(ok.sum())} trials with a bound)",
            "error/bound <= 1", bool(ok.any()) and worst <= 1.0,
            figure=fig_of["uniform11"]))
    return out


def _num(x):
    """7.0859375 -> '7.0859375', 2048.0 -> '2048' (the exact value, no rounding)."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


# Ones stop where the spacing of the format reaches 2: at 2^p (fp16 p = 11, bf16 p = 8). That
# follows from the format, so those rows are sanity checks; the harmonic values are published
# (claims.toml).
ONES = {"fp16": (2049, 2048.0), "bf16": (257, 256.0)}


def stagnation(out_dir, spec):
    rows, cols, found = [], None, []
    for series in ("harmonic", "ones"):
        for dtype in ("fp16", "bf16"):
            t = io.read_table(os.path.join(out_dir, f"stagnation-{series}-{dtype}.csv"))
            io.require(t, ["series", "dtype", "stagnation_term", "stagnation_value"],
                       "stagnation", t.source)
            cols = t.columns
            rows += t.rows
            r = t.rows[0]
            found.append((series, dtype, r["stagnation_term"], r["stagnation_value"]))
    io.write_csv(os.path.join(HERE, "data", "stagnation.csv"), cols, rows)
    out = []
    for series, dtype, term, value in found:
        cmd = f"carrier study stagnation --series {series} --dtype {dtype}"
        if series == "harmonic":
            ours = [float(value), int(term)] if term != "" else [math.nan, math.nan]
            # Higham's value, but not from this paper: a cross-check (sanity), not a
            # reproduction of Higham 1993.
            out.append(claims.cross_check(
                spec, f"stagnation-harmonic-{dtype}",
                f"summing 1/k in {dtype} (rne, recursive) stops changing the sum", cmd,
                f"{value} at term {term}", ours, figure="figures/stagnation.png",
                note="the value is not from Higham 1993 but from Higham's later blog post"))
            continue
        pterm, pvalue = ONES[dtype]
        ok = term != "" and int(term) == pterm and float(value) == pvalue
        out.append(claims.sanity(
            f"summing ones in {dtype} (rne) stagnates at 2^p = {_num(pvalue)}", cmd,
            f"{value} at term {term}", f"{_num(pvalue)} at term {pterm} (from the format)", ok,
            figure="figures/stagnation.png"))
    fig, ax = plots.new_figure()
    k = np.arange(1, 16385)
    ax.plot(k, np.cumsum(1.0 / k), color="black", lw=1.2, label="$H_k$ (exact)")
    for i, (series, dtype, term, value) in enumerate(found):
        if series != "harmonic":
            continue
        ax.axhline(float(value), color=plots.COLORS[i], ls="--", lw=1,
                   label=f"{dtype} sum stops at {value} (term {term})")
        ax.plot([int(term)], [float(value)], "o", color=plots.COLORS[i])
    ax.set_xscale("log", base=2)
    ax.set_xlabel("term k")
    ax.set_ylabel("partial sum")
    ax.set_title("Harmonic series: recursive summation stagnates (rne)")
    ax.legend(loc="upper left")
    plots.save(fig, os.path.join(HERE, "figures", "stagnation"), ("png",))
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--carrier", default="carrier")
    a = p.parse_args()
    try:
        t = repro.write_timing_free(os.path.join(a.out, "error-vs-n", "trials.csv"),
                                    os.path.join(HERE, "data", "error-vs-n.csv"))
        repro.require_ok(t, "error-vs-n sweep")
        error_figures(t)
        spec = claims.load_spec(os.path.join(HERE, "claims.toml"))
        o = repro.write_timing_free(os.path.join(a.out, "orderings", "trials.csv"),
                                    os.path.join(HERE, "data", "orderings.csv"))
        repro.require_ok(o, "orderings sweep")
        cl = orderings(o, spec) + stagnation(a.out, spec) + error_claims(t)
    except (io.AnalysisError, ValueError) as e:
        print(f"make_figures: {e}", file=sys.stderr)
        return 2
    claims.write_claims(os.path.join(HERE, "CLAIMS.md"),
                        "Higham 1993, The accuracy of floating point summation: claims", cl,
                        preamble="Regenerate: `bash papers/higham1993-summation/reproduce.sh`. "
                                 "Errors are relative to |sum x|. The orderings rows come from "
                                 "`orderings.toml` (fp32, signed and same-sign data, 20 trials "
                                 "per cell); the paper's body text was not reachable through "
                                 "the search tool, so only its abstract's claim is pinned "
                                 "(README.md).", spec=spec)
    for c in cl:
        print(f"{c.kind:12} {c.match!s:5} {c.claim}: ours {c.ours}; published {c.published}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
