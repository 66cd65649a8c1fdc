"""A study in a few lines with `import carrier` (README "Python"): how the tile size of a blocked
sum changes its error in bf16 with bf16 accumulation, on one numpy input, against the certified
reference and the a-priori bound. Run: PYTHONPATH=build/python /usr/bin/python3
analysis/example_python_study.py [OUT.png]  (default analysis/figures/example_python_study.png).
The bound carrier reports is absolute (gamma_D sum|x|); on this relative-error axis it is drawn
in its relative form, bound / |reference|, where finite, else the legend says it is vacuous.
"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import analysis; from analysis import plots, style                    # Agg, the figure style
import numpy as np, carrier

x = np.random.default_rng(0).uniform(0, 1, 1 << 16)                      # one input, 2^16 values
tiles = [2 ** k for k in range(1, 16)]
runs = [carrier.eval("sum", x, dtype="bf16", acc="bf16", schedule=f"blocked:{b}") for b in tiles]
fig, ax = plots.new_figure()
s = style.series_style(0)
ax.loglog(tiles, [r.errors["rel"] for r in runs], color=s["color"], marker=s["marker"],
          label="measured relative error")
rel = style.relative_bound([r.bound["value"] for r in runs], [r.reference for r in runs],
                           runs[0].bound["kind"])                       # absolute -> relative
style.bound_line(ax, tiles, rel, "a-priori bound $\\gamma_D \\sum|x|\\, / \\,|\\sum x|$",
                 vacuous="vacuous at every tile (D u >= 1), not drawn")
ax.set_xlabel("tile size b (blocked:b, n = 2^16)"); ax.set_ylabel("relative error")
ax.set_title(style.title("Error vs tile size", op="sum", format="bf16 (acc bf16)", n="2^16",
                         input="uniform[0,1)")); ax.legend()
out = sys.argv[1] if len(sys.argv) > 1 else \
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "figures", "example_python_study")
plots.save(fig, out[:-4] if out.endswith(".png") else out, ("png",))
print(out, *(f"{b}:{r.errors['rel']:.2e}" for b, r in zip(tiles, runs)))
