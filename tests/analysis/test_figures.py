"""analysis_figures: every figure the project writes is fit to publish (analysis/figure_check.py).

What each test measures, printed as it runs:
- the checker itself: a deliberately bad figure (two series sharing colour and marker; a legend
  over the data; a legend naming a bound that is not drawn; one label in two styles) fails it,
  a good one passes;
- style.assign gives 16 (and 70) distinct (colour, marker) pairs, the same on every call;
- analysis/plots.py (every plot type, faceted too), `python3 -m analysis` (over 16 series: one
  line, exit 2; --facet), scripts/plot_default.py (11 merge orders, 4 panels),
  scripts/gpu_tensor_core.py's plot (from the committed CSV), analysis/example_python_study.py
  (when build/python has the carrier module) all render with CARRIER_FIGURE_CHECK=strict;
- with CARRIER_PAPER_FIGURES=1 (CTest analysis_paper_figures, label slow): every papers/*
  folder's figures re-rendered from its committed data (analysis/rerender.py) pass the checker,
  and the data/ and CLAIMS.md they regenerate equal the committed ones.

Run: /usr/bin/python3 -m pytest -q tests/analysis/test_figures.py  (or run the file itself).
"""
import csv
import importlib.util
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "data")
sys.path.insert(0, ROOT)
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="carrier-mpl-test-"))
os.environ["CARRIER_FIGURE_CHECK"] = "strict"

import analysis  # noqa: E402,F401  (Agg backend)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from analysis import figure_check, io, plots, style  # noqa: E402

try:
    import pytest
except ImportError:  # the file runs without pytest too (main() below)
    pytest = None


def _tmp(name):
    return os.path.join(tempfile.mkdtemp(prefix=f"figures-{name}-"), name)


def _env():
    return dict(os.environ, PYTHONPATH=ROOT, CARRIER_FIGURE_CHECK="strict")


# ---- the checker on hand-made figures -------------------------------------------------------

def _figure(styles, legend="outside", labels=None):
    fig, ax = plots.new_figure()
    for i, (c, m) in enumerate(styles):
        ax.plot([1, 2, 3], [i + 1, i + 2, i + 1.5], color=c, marker=m,
                label=(labels or [f"series {k}" for k in range(len(styles))])[i])
    if legend == "outside":
        style.shared_legend(fig)
    else:
        ax.legend(loc="center")
    return fig


def test_checker_fails_when_colour_and_marker_repeat():
    bad = _figure([(style.COLORS[0], "o"), (style.COLORS[1], "s"), (style.COLORS[0], "o")])
    found = figure_check.problems(bad)
    print("bad figure (series 0 and 2 share colour and marker):", found)
    plt.close(bad)
    assert any("share colour" in p and "series 0" in p and "series 2" in p for p in found), found


def test_checker_fails_same_colour_and_marker_other_line_style():
    fig, ax = plots.new_figure()
    ax.plot([1, 2], [1, 2], color=style.COLORS[2], marker="^", ls="-", label="a")
    ax.plot([1, 2], [2, 3], color=style.COLORS[2], marker="^", ls="--", label="b")
    style.shared_legend(fig)
    found = figure_check.problems(fig)
    print("same colour and marker, different line style:", found)
    plt.close(fig)
    assert any("'a' and 'b' share" in p for p in found), found


def test_checker_fails_legend_over_the_data():
    fig = _figure([(style.COLORS[0], "o"), (style.COLORS[1], "s")], legend="inside")
    found = figure_check.problems(fig)
    print("legend in the middle of the axes:", found)
    plt.close(fig)
    assert any("overlaps the data area" in p for p in found), found


def test_checker_fails_bound_named_but_not_drawn():
    fig, ax = plots.new_figure()
    ax.plot([1, 2], [1e-3, 2e-3], color=style.COLORS[0], marker="o", label="error")
    ax.plot([], [], color="black", ls="--", label="a-priori bound")  # named, nothing drawn
    ax.plot([1, 2], [np.inf, np.inf], color="black", ls=":", label="$\\gamma_n$")  # all inf
    ax.plot([], [], " ", label="other bound: vacuous here (not drawn)")  # honest: allowed
    ax.set_yscale("log")
    style.shared_legend(fig)
    found = figure_check.problems(fig)
    print("bounds named without a line:", found)
    plt.close(fig)
    assert any("'a-priori bound'" in p for p in found), found
    assert any("gamma_n" in p for p in found), found
    assert not any("other bound" in p for p in found), found


def test_checker_fails_one_label_two_styles_across_panels():
    fig, axes = plots.new_figure(8, 3.5, 1, 2)
    axes[0].plot([1, 2], [1, 2], color=style.COLORS[0], marker="o", label="seq")
    axes[1].plot([1, 2], [1, 2], color=style.COLORS[1], marker="o", label="seq")
    style.shared_legend(fig)
    found = figure_check.problems(fig)
    print("'seq' in two colours in two panels:", found)
    plt.close(fig)
    assert any("two styles" in p for p in found), found


def test_checker_passes_a_good_figure():
    fig = _figure([tuple(style.series_style(i)[k] for k in ("color", "marker"))
                   for i in range(16)])
    found = figure_check.problems(fig)
    print("16 series from style.series_style, shared legend:", found)
    plt.close(fig)
    assert found == []


def test_assignment_is_distinct_and_deterministic():
    for count in (16, 70):
        pairs = [(s["color"], s["marker"]) for s in style.assign(range(count)).values()]
        print(f"{count} series: {len(set(pairs))} distinct (colour, marker) pairs")
        assert len(set(pairs)) == count
    naive = {(plots.COLORS[i % len(plots.COLORS)], plots.MARKERS[i % len(plots.MARKERS)])
             for i in range(70)}
    assert len(naive) == 70, "COLORS[i], MARKERS[i] indexing must stay distinct for 70 series"
    assert style.assign(["b", "a"]) == style.assign(["b", "a"])


# ---- the project's own figures --------------------------------------------------------------

def test_plots_every_type_passes_the_checker():
    t = io.read_table(os.path.join(DATA, "trials_small.csv"))
    bench = io.read_bench(os.path.join(DATA, "bench_small.csv"))
    written = []
    written += plots.error_vs_n(t, _tmp("evn"), formats=("png",))
    written += plots.error_vs_n(t, _tmp("evn_facet"), facet="format", formats=("png",))
    written += plots.error_vs_n(t.where(dtype="fp16"), _tmp("evn_vacuous"), u=0.5,
                                formats=("png",))  # gamma_n nowhere <= 1: named vacuous
    written += plots.error_vs_tile(t, _tmp("tile"), bounds=[
        ("(b-1)u fp16 bound", lambda b: (b - 1) * 2.0 ** -11)], formats=("png",))
    written += plots.error_by_order(t.where(n="1024"), _tmp("order"), kind="strip",
                                    formats=("png",))
    written += plots.heatmap(t, _tmp("heat"), formats=("png",))
    written += plots.perf_bars(bench, _tmp("perf"), baseline="safe", formats=("png",))
    print("strict check passed:", [os.path.basename(p) for p in written])
    assert len(written) == 7


def _wide_csv(path, schedules=10, dtypes=("fp16", "fp32")):
    t = io.read_table(os.path.join(DATA, "trials_small.csv"))
    rows, k = [], 0
    for d in dtypes:
        for s in range(schedules):
            for r in t.where(dtype=d, schedule="seq").rows:
                rows.append(dict(r, trial_id=str(k), schedule=f"blocked:{2 ** (s + 1)}"))
                k += 1
    io.write_csv(path, t.columns, rows)


def test_cli_refuses_more_series_than_fit_and_facets():
    d = tempfile.mkdtemp(prefix="figures-cli-")
    src = os.path.join(d, "wide.csv")
    _wide_csv(src)  # 2 formats x 10 schedules = 20 series
    run = lambda *a: subprocess.run([sys.executable, "-m", "analysis", *a], cwd=ROOT,  # noqa
                                    env=_env(), capture_output=True, text=True)
    r = run("error-vs-n", "--csv", src, "-o", os.path.join(d, "all"), "--formats", "png")
    print(f"20 series: exit {r.returncode}, stderr {r.stderr.strip()!r}")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "exceed" in r.stderr
    assert not os.path.exists(os.path.join(d, "all.png"))
    r = run("error-vs-n", "--csv", src, "--facet", "format", "-o", os.path.join(d, "facet"),
            "--formats", "png")
    print(f"--facet format (10 series, 2 panels): exit {r.returncode} {r.stderr.strip()!r}")
    assert r.returncode == 0 and os.path.getsize(os.path.join(d, "facet.png")) > 0
    r = run("error-vs-n", "--csv", src, "--format", "fp16", "-o", os.path.join(d, "fp16"),
            "--formats", "png")
    print(f"--format fp16 (10 series): exit {r.returncode} {r.stderr.strip()!r}")
    assert r.returncode == 0


def _default_study_csv(path):
    """A small sweep in the default study's shape: 2 ops x 2 formats x 11 orders x 2 n x 2
    inputs (the default study: 4 ops x 3 formats; 11 orders is what the legend must tell apart)."""
    scheds = ["seq", "reverse", "pairwise", "blocked:16", "blocked:64", "blocked:256",
              "blocked:1024", "strided:16", "random:1", "random:2", "random:3"]
    cols = ["trial_id", "op", "dtype", "schedule", "n", "input", "status", "rel_error",
            "error_to_bound"]
    rng = np.random.default_rng(7)
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        k = 0
        for op in ("sum", "lse"):
            for dt in ("bf16", "fp32"):
                for s in scheds:
                    for n in (1024, 65536):
                        for inp in ("uniform01", "normal"):
                            e = float(rng.uniform(1e-8, 1e-2))
                            w.writerow([k, op, dt, s, n, inp, "ok", repr(e), repr(e * 10)])
                            k += 1


def test_plot_default_figures_pass_the_checker():
    d = tempfile.mkdtemp(prefix="figures-default-")
    _default_study_csv(os.path.join(d, "trials.csv"))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "plot_default.py"), d,
                        "-o", os.path.join(d, "figures")], env=_env(), capture_output=True,
                       text=True)
    print(f"plot_default.py: exit {r.returncode}; {r.stdout.split()}; {r.stderr.strip()[-300:]}")
    assert r.returncode == 0
    assert sorted(os.listdir(os.path.join(d, "figures"))) == [
        "error_to_bound.png", "error_vs_n.png", "error_vs_order.png"]


def test_gpu_tensor_core_plot_passes_the_checker():
    spec = importlib.util.spec_from_file_location(
        "gpu_tensor_core", os.path.join(ROOT, "scripts", "gpu_tensor_core.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.rows_from_csv(os.path.join(ROOT, "kernels", "cuda", "results",
                                          "h200-tensor-core.csv"))
    out = _tmp("tc") + ".png"
    mod.plot(out, rows)
    print(f"gpu_tensor_core.plot: {len(rows)} rows -> {out}")
    assert os.path.getsize(out) > 0


def _carrier_module():
    for d in ("build", "build-dev"):
        p = os.path.join(ROOT, d, "python")
        if os.path.isdir(os.path.join(p, "carrier")):
            return p
    return None


def test_example_python_study_passes_the_checker():
    py = _carrier_module()
    if py is None:
        msg = "no build/python/carrier: the example needs the carrier module"
        if pytest:
            pytest.skip(msg)
        print("skip:", msg)
        return
    out = _tmp("example") + ".png"
    env = _env()
    env["PYTHONPATH"] = py + os.pathsep + ROOT
    r = subprocess.run([sys.executable, os.path.join(ROOT, "analysis",
                                                     "example_python_study.py"), out],
                       env=env, capture_output=True, text=True)
    print(f"example_python_study.py: exit {r.returncode} {r.stderr.strip()[-300:]}")
    assert r.returncode == 0 and os.path.getsize(out) > 0


# ---- papers/*: re-rendered from committed data (slow; CTest analysis_paper_figures) ---------

PAPERS = sorted(d for d in os.listdir(os.path.join(ROOT, "papers"))
                if os.path.isfile(os.path.join(ROOT, "papers", d, "make_figures.py")) and
                os.path.isdir(os.path.join(ROOT, "papers", d, "figures")))


def _carrier_bin():
    for d in (os.environ.get("CARRIER_BIN_DIR", ""), "build/bin", "build-dev/bin"):
        p = os.path.join(ROOT, d, "carrier") if d else ""
        if p and os.access(p, os.X_OK):
            return p
    return None


def _paper(name):
    if os.environ.get("CARRIER_PAPER_FIGURES") != "1":
        msg = "papers are re-rendered by CTest analysis_paper_figures (CARRIER_PAPER_FIGURES=1)"
        if pytest:
            pytest.skip(msg)
        print("skip:", name, msg)
        return
    from analysis import rerender
    binary = _carrier_bin()
    if binary is None:
        if pytest:
            pytest.skip("no carrier binary in build/bin or build-dev/bin")
        return
    found = rerender.rerender(name, binary)
    print(f"papers/{name}: {found or 'every figure passes; data/ and CLAIMS.md unchanged'}")
    assert not found, found


if pytest:
    @pytest.mark.parametrize("name", PAPERS)
    def test_paper_figures_from_committed_data(name):
        _paper(name)


def main():
    if pytest:
        return pytest.main([__file__, "-q", "-p", "no:cacheprovider"] + sys.argv[1:])
    failures = 0
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            try:
                fn()
                print("ok  ", name)
            except AssertionError as e:
                failures += 1
                print("FAIL", name, e)
    if os.environ.get("CARRIER_PAPER_FIGURES") == "1":
        for name in PAPERS:
            try:
                _paper(name)
            except AssertionError as e:
                failures += 1
                print("FAIL", name, e)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
