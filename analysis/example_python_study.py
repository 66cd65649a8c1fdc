"""A study in ten lines with `import carrier` (README "Python"): how the tile size of a blocked
sum changes its error in bf16 with fp32 accumulation, on one numpy input, against the
certified reference and the a-priori bound. Run: PYTHONPATH=build/python /usr/bin/python3
analysis/example_python_study.py [OUT.png]  (default analysis/figures/example_python_study.png).
"""
import os, sys
import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
import numpy as np, carrier

x = np.random.default_rng(0).uniform(0, 1, 1 << 16)                      # one input, 2^16 values
tiles = [2 ** k for k in range(1, 16)]
runs = [carrier.eval("sum", x, dtype="bf16", acc="bf16", schedule=f"blocked:{b}") for b in tiles]
plt.loglog(tiles, [r.errors["rel"] for r in runs], "o-", label="measured relative error")
plt.loglog(tiles, [r.bound["value"] for r in runs], "k--", label="a-priori bound $\\gamma_D$")
plt.xlabel("tile size b (blocked:b, n = 2^16)"); plt.ylabel("relative error"); plt.legend()
plt.title("bf16 sum: error vs tile size"); out = sys.argv[1] if len(sys.argv) > 1 else \
    os.path.join(os.path.dirname(__file__), "figures", "example_python_study.png")
plt.savefig(out, dpi=120); print(out, *(f"{b}:{r.errors['rel']:.2e}" for b, r in zip(tiles, runs)))
