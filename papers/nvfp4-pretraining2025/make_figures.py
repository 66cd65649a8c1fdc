"""Figures, timing-free CSVs and CLAIMS.md for nvfp4-pretraining2025 from reproduce.sh's OUT_DIR.

Inputs (written by reproduce.sh with `carrier quantize`): OUT/example-rceil.csv and
OUT/example-floor.csv (Appendix B.4's block, amax = 3 + 2^-10, under the round-up rule and the
OCP floor rule), OUT/normal-mxfp4-rceil.csv, OUT/normal-mxfp4-floor.csv and OUT/normal-nvfp4.csv
(2^16 values of N(0,1), seed 1). Outputs (this folder): data/blocks.csv (per format: blocks by
their largest E2M1 magnitude), data/summary.csv (every statistic a row of CLAIMS.md uses),
figures/max_element.png, figures/amax_error.png, CLAIMS.md.
"""
import argparse
import math
import os
import sys

import numpy as np

from analysis import claims, io, plots, repro

HERE = os.path.dirname(os.path.abspath(__file__))
REL = "papers/nvfp4-pretraining2025"
N = 65536
QUANT = f"carrier quantize --gen normal --n {N} --seed 1 --dtype"
EXAMPLE = f"carrier quantize --input {REL}/... (reproduce.sh: 3 + 2^-10, then k/16, k = 1..31) --dtype"
FORMATS = [  # (file stem, dtype, label)
    ("normal-mxfp4-rceil", "mxfp4:rceil", "MXFP4, scale rounded up (rceil)"),
    ("normal-mxfp4-floor", "mxfp4", "MXFP4, OCP floor rule"),
    ("normal-nvfp4", "nvfp4", "NVFP4 (E4M3 block scale, fp32 tensor scale)"),
]
E2M1_MAX = 6.0
E2M1_MIN = 0.5


def load(path):
    t = io.read_table(path)
    io.require(t, ["x", "element", "block", "scale", "tensor_scale", "value"], "quantize CSV",
               path)
    return {c: t.floats(c) for c in ("x", "element", "block", "scale", "tensor_scale", "value")}


def stats(q, u):
    """Per-block and whole-tensor statistics of one quantised tensor (u: FP8 unit roundoff)."""
    x, v, el = q["x"], q["value"], q["element"]
    block = q["block"].astype(np.int64)
    nb = int(block.max()) + 1
    ax = np.abs(x)
    rel = np.where(ax > 0, np.abs(v - x) / np.where(ax > 0, ax, 1.0), np.abs(v))
    near = rel <= u
    counts = np.bincount(block, minlength=nb)
    near_frac = np.bincount(block, weights=near.astype(float), minlength=nb) / counts
    max_el = np.zeros(nb)
    np.maximum.at(max_el, block, np.abs(el))
    # the amax element of each block (first index on ties)
    order = np.lexsort((-ax, block))
    first = order[np.r_[0, np.flatnonzero(np.diff(block[order])) + 1]]
    amax_rel = rel[first]
    decode = q["scale"] * q["tensor_scale"]
    saturated = int(np.sum(ax / decode > E2M1_MAX))
    return {
        "blocks": nb,
        "max_element": max_el,
        "near_frac_min": float(near_frac.min()),
        "near_frac_mean": float(near_frac.mean()),
        "amax_rel": amax_rel,
        "amax_rel_max": float(amax_rel.max()),
        "worst_binades": float(np.log2(max_el.min() / E2M1_MIN)),
        "best_binades": float(np.log2(max_el.max() / E2M1_MIN)),
        "lost_binade_frac": float(np.mean(max_el < 4.0)),
        "saturated": saturated,
        "rel_mse": float(np.sum((v - x) ** 2) / np.sum(x ** 2)),
    }


def fig_max_element(st):
    fig, ax = plots.new_figure(7.0, 4.0)
    mags = [0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    w = 0.27
    for i, (stem, _, label) in enumerate(FORMATS):
        me = st[stem]["max_element"]
        frac = [float(np.mean(me == m)) for m in mags]
        ax.bar(np.arange(len(mags)) + (i - 1) * w, frac, w, color=plots.COLORS[i], label=label)
    ax.set_xticks(np.arange(len(mags)))
    ax.set_xticklabels([f"{m:g}" for m in mags])
    ax.set_xlabel("largest |E2M1 element| of the block")
    ax.set_ylabel("fraction of blocks")
    ax.set_title(f"N(0,1), {N} values: which FP4 samples a block's amax reaches")
    ax.legend(fontsize=7)
    plots.save(fig, os.path.join(HERE, "figures", "max_element"), ("png",))


def fig_amax_error(st, u):
    fig, ax = plots.new_figure(7.0, 4.0)
    for i, (stem, _, label) in enumerate(FORMATS):
        r = np.sort(st[stem]["amax_rel"])
        ax.plot(r, np.arange(1, r.size + 1) / r.size, color=plots.COLORS[i], label=label)
    ax.axvline(u, color="0.4", ls=":", label="2^-4, E4M3 unit roundoff (\"near-FP8\")")
    ax.set_xlabel("relative error of the block's amax element")
    ax.set_ylabel("fraction of blocks (CDF)")
    ax.set_title("Section 2: NVFP4 keeps each block's amax at near-FP8 precision")
    ax.legend(fontsize=7)
    plots.save(fig, os.path.join(HERE, "figures", "amax_error"), ("png",))


def make_claims(spec, ex, st, u):
    cl = []
    r, f = ex["rceil"], ex["floor"]
    cl.append(claims.reproduction(
        spec, "b4-example-scale",
        "B.4 example: MXFP4 decode scale of a block with amax 3 + delta (scale rounded up)",
        f"{EXAMPLE} mxfp4:rceil", f"scale = {r['scale'][0]:g} (floor rule: {f['scale'][0]:g})",
        float(r["scale"][0]), figure="figures/max_element.png"))
    cl.append(claims.reproduction(
        spec, "b4-example-element",
        "B.4 example: the block amax 3 + delta quantises to the E2M1 element 3",
        f"{EXAMPLE} mxfp4:rceil",
        f"element = {r['element'][0]:g} (floor rule: {f['element'][0]:g}, saturated)",
        float(r["element"][0]), figure="figures/max_element.png"))
    rc = st["normal-mxfp4-rceil"]
    fl = st["normal-mxfp4-floor"]
    nv = st["normal-nvfp4"]
    cl.append(claims.reproduction(
        spec, "b4-worst-binades",
        "B.4: worst case over MXFP4 (round-up) blocks of N(0,1): binades utilised, "
        "log2(max |element| / 0.5)",
        f"{QUANT} mxfp4:rceil",
        f"{rc['worst_binades']:.4f} over {rc['blocks']} blocks (floor rule: "
        f"{fl['worst_binades']:.4f})", rc["worst_binades"], figure="figures/max_element.png"))
    cl.append(claims.reproduction(
        spec, "sec2-amax-near-fp8",
        "Section 2: NVFP4, smallest per-block fraction of elements with relative error <= 2^-4",
        f"{QUANT} nvfp4",
        f"{repro.fmt(nv['near_frac_min'])} over {nv['blocks']} blocks (mean "
        f"{repro.fmt(nv['near_frac_mean'])}; MXFP4 rceil: min {repro.fmt(rc['near_frac_min'])})",
        nv["near_frac_min"], figure="figures/amax_error.png"))
    cl.append(claims.sanity(
        "Section 2: every NVFP4 block's amax element has relative error <= 2^-4 (E4M3 unit "
        "roundoff)", f"{QUANT} nvfp4",
        f"max over blocks {repro.fmt(nv['amax_rel_max'])} (MXFP4 rceil: "
        f"{repro.fmt(rc['amax_rel_max'])})", f"<= {u:g}", nv["amax_rel_max"] <= u,
        figure="figures/amax_error.png"))
    smax = spec.setting("rceil_saturated_max")
    cl.append(claims.sanity(
        "Section 2 / B.4: rounding the MXFP4 scale up avoids saturation (elements with "
        "|x| / scale > 6)", f"{QUANT} mxfp4:rceil; {QUANT} mxfp4",
        f"rceil: {rc['saturated']}; OCP floor rule: {fl['saturated']} of {N}", f"<= {smax}",
        rc["saturated"] <= smax and fl["saturated"] > 0))
    lmin = spec.setting("mx_lost_binade_fraction_min")
    cl.append(claims.sanity(
        "Section 2: MXFP4 (round-up) can lose a binade: fraction of blocks using neither 4 nor 6",
        f"{QUANT} mxfp4:rceil", f"{repro.fmt(rc['lost_binade_frac'])} (NVFP4: "
        f"{repro.fmt(nv['lost_binade_frac'])})", f"> {lmin:g}",
        rc["lost_binade_frac"] > lmin, figure="figures/max_element.png"))
    full = math.log2(E2M1_MAX / E2M1_MIN)
    cl.append(claims.sanity(
        "B.4: NVFP4 blocks use the full log2(6/0.5) = 3.58 binades (amax maps to 6 in every "
        "block)", f"{QUANT} nvfp4",
        f"worst {nv['worst_binades']:.4f}, best {nv['best_binades']:.4f}", f"{full:.4f}",
        nv["worst_binades"] == full and nv["best_binades"] == full, figure="figures/max_element.png"))
    mmax = spec.setting("nvfp4_over_mxfp4_mse_max")
    ratio = nv["rel_mse"] / rc["rel_mse"]
    cl.append(claims.sanity(
        "Section 2: NVFP4 has 'improved numerical properties over MXFP4' (no number): relative "
        "MSE on N(0,1)", f"{QUANT} nvfp4; {QUANT} mxfp4:rceil",
        f"NVFP4 {repro.fmt(nv['rel_mse'])}, MXFP4 rceil {repro.fmt(rc['rel_mse'])}, floor "
        f"{repro.fmt(fl['rel_mse'])}; ratio {repro.fmt(ratio)}", f"ratio <= {mmax:g}",
        ratio <= mmax))
    return cl


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    a = p.parse_args()
    try:
        spec = claims.load_spec(os.path.join(HERE, "claims.toml"))
        u = float(spec.setting("fp8_unit_roundoff"))
        ex = {rule: load(os.path.join(a.out, f"example-{rule}.csv")) for rule in ("rceil", "floor")}
        st = {stem: stats(load(os.path.join(a.out, f"{stem}.csv")), u) for stem, _, _ in FORMATS}
        rows = []
        for stem, dtype, _ in FORMATS:
            me = st[stem]["max_element"]
            for m in sorted(set(me.tolist())):
                rows.append({"dtype": dtype, "max_element": repr(m),
                             "blocks": str(int(np.sum(me == m)))})
        io.write_csv(os.path.join(HERE, "data", "blocks.csv"), ["dtype", "max_element", "blocks"],
                     rows)
        keys = ["blocks", "near_frac_min", "near_frac_mean", "amax_rel_max", "worst_binades",
                "best_binades", "lost_binade_frac", "saturated", "rel_mse"]
        io.write_csv(os.path.join(HERE, "data", "summary.csv"), ["dtype"] + keys,
                     [dict({"dtype": d}, **{k: repr(st[s][k]) for k in keys})
                      for s, d, _ in FORMATS])
        fig_max_element(st)
        fig_amax_error(st, u)
        cl = make_claims(spec, ex, st, u)
    except (io.AnalysisError, ValueError, KeyError) as e:
        print(f"make_figures: {e}", file=sys.stderr)
        return 2
    claims.write_claims(
        os.path.join(HERE, "CLAIMS.md"),
        "NVIDIA 2025, Pretraining LLMs with NVFP4 (arXiv 2509.25149): the block-scale arithmetic",
        cl,
        preamble=f"Regenerate: `bash {REL}/reproduce.sh`. Every number is `carrier quantize` "
                 "(precision/block_scaled.hpp, exact) on the CPU; no GPU ran. Only statements "
                 "that depend on the quantisation arithmetic alone are judged (README.md); the "
                 "data and the error measures are fixed in claims.toml.",
        spec=spec)
    for c in cl:
        print(f"{c.kind:12} {c.match!s:5} {c.claim}: ours {c.ours}; published {c.published}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
