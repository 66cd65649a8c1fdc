"""analysis_plots: every plot type renders from the committed CSVs in data/, twice, to
non-empty files that are byte-identical between the two renders; a CSV that lacks the columns a
plot needs makes the command line exit 2 with one line naming the columns; the bounds, the
slope fit and the CLAIMS.md writer give the values they document.

Run: /usr/bin/python3 tests/analysis/test_plots.py   (exit 0 = pass; prints what it measured)
"""
import filecmp
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "data")
sys.path.insert(0, ROOT)
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="carrier-mpl-test-"))

import numpy as np  # noqa: E402

from analysis import block_scaled, bounds, claims, io, plots, repro  # noqa: E402

FAILURES = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILURES.append(what)


def cli(*args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "analysis", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True)


def render_twice(name, fn):
    """Render with fn(prefix) into two fresh folders; check existence, size, equal bytes."""
    outs = []
    for k in range(2):
        d = tempfile.mkdtemp(prefix=f"analysis-{name}-{k}-")
        outs.append(fn(os.path.join(d, name)))
    for a, b in zip(*outs):
        size = os.path.getsize(a) if os.path.exists(a) else -1
        check(size > 0, f"{name}: {os.path.basename(a)} exists, {size} bytes")
        same = os.path.exists(b) and filecmp.cmp(a, b, shallow=False)
        check(same, f"{name}: {os.path.basename(a)} byte-identical across two renders "
                    f"({a} vs {b})")
    check(len(outs[0]) >= 2, f"{name}: {len(outs[0])} formats written: "
                             f"{[os.path.basename(p) for p in outs[0]]}")


def main():
    trials = io.read_table(os.path.join(DATA, "trials_small.csv"))
    bench_csv = io.read_bench(os.path.join(DATA, "bench_small.csv"))
    bench_json = io.read_bench(os.path.join(DATA, "bench_small.json"))
    print(f"trials_small.csv: {len(trials)} rows, {len(trials.columns)} columns")

    render_twice("error_vs_n", lambda p: plots.error_vs_n(trials, p, formats=("png", "svg",
                                                                              "pdf")))
    render_twice("error_vs_tile", lambda p: plots.error_vs_tile(
        trials, p, bounds=[("(b-1)u fp16", lambda b: (b - 1) * 2.0 ** -11)]))
    render_twice("error_by_order_box", lambda p: plots.error_by_order(trials.where(n="1024"), p))
    render_twice("error_by_order_strip", lambda p: plots.error_by_order(
        trials.where(n="1024"), p, kind="strip"))
    render_twice("heatmap", lambda p: plots.heatmap(trials, p))
    render_twice("perf_bars_csv", lambda p: plots.perf_bars(bench_csv, p, baseline="safe"))
    render_twice("perf_bars_json", lambda p: plots.perf_bars(bench_json, p))

    # The command line renders the same figure as the API call with the same arguments.
    d = tempfile.mkdtemp(prefix="analysis-cli-")
    r = cli("error-vs-n", "--csv", os.path.join(DATA, "trials_small.csv"), "-o",
            os.path.join(d, "cli"))
    api = plots.error_vs_n(trials, os.path.join(d, "api"))
    check(r.returncode == 0, f"cli error-vs-n exit {r.returncode} (stderr: {r.stderr.strip()})")
    check(all(filecmp.cmp(os.path.join(d, f"cli.{e}"), p, shallow=False)
              for e, p in zip(("png", "svg"), api)), "cli error-vs-n == API render, byte for byte")
    for plot in ["heatmap", "error-by-order", "error-vs-tile"]:
        r = cli(plot, "--csv", os.path.join(DATA, "trials_small.csv"), "--where", "dtype=fp16",
                "-o", os.path.join(d, plot))
        check(r.returncode == 0 and os.path.getsize(os.path.join(d, f"{plot}.png")) > 0,
              f"cli {plot} --where dtype=fp16: exit {r.returncode} {r.stderr.strip()}")

    # Run as a directory path from another working directory: the same bytes.
    r = subprocess.run([sys.executable, os.path.join(ROOT, "analysis"), "error-vs-n", "--csv",
                        os.path.join(DATA, "trials_small.csv"), "-o", os.path.join(d, "bypath")],
                       cwd=d, capture_output=True, text=True)
    check(r.returncode == 0 and filecmp.cmp(os.path.join(d, "bypath.png"), api[0], shallow=False),
          f"python3 {ROOT}/analysis from {d}: exit {r.returncode} {r.stderr.strip()}, same PNG")

    # A panel whose every error is zero (sums exact in the format, as MXFP4's through its unit)
    # has nothing to put on a log axis: it renders, and says so, beside a panel with data.
    zcsv = os.path.join(d, "zeros.csv")
    with open(os.path.join(DATA, "trials_small.csv")) as f:
        head, *body = f.read().splitlines()
    cols = head.split(",")
    rel, dt = cols.index("rel_error"), cols.index("dtype")
    rows = [r.split(",") for r in body]
    zero = [list(r) for r in rows]
    for r in zero:
        r[rel], r[dt] = "0", "allzero"
    with open(zcsv, "w") as f:
        f.write("\n".join([head] + [",".join(r) for r in rows + zero]) + "\n")
    r = cli("error-vs-n", "--csv", zcsv, "--facet", "dtype", "--bounds", "none", "--formats",
            "svg", "-o", os.path.join(d, "zeros"))
    svg = os.path.join(d, "zeros.svg")
    text = open(svg).read() if os.path.exists(svg) else ""
    check(r.returncode == 0 and "every error is zero" in text,
          f"error-vs-n with an all-zero panel: exit {r.returncode} {r.stderr.strip()[-200:]}, "
          f"panel note {'found' if 'every error is zero' in text else 'missing'}")

    # Missing columns: one line, exit 2, naming each missing column.
    bad = os.path.join(DATA, "trials_missing_columns.csv")
    for plot, need in [("error-vs-n", ["n", "rel_error"]), ("heatmap", ["rel_error"]),
                       ("error-vs-tile", ["rel_error"]),
                       ("error-by-order", ["rel_error"]), ("perf-bars", ["case", "variant",
                                                                         "seconds"])]:
        r = cli(plot, "--csv", bad, "-o", os.path.join(d, "bad"))
        line = r.stderr.strip()
        check(r.returncode == 2 and line.count("\n") == 0 and all(c in line for c in need),
              f"cli {plot} on a CSV lacking {need}: exit {r.returncode}, stderr '{line}'")
    r = cli("error-vs-tile", "--csv", bad, "--series", "acc,backend", "-o", os.path.join(d, "bad"))
    check(r.returncode == 2 and "acc" in r.stderr and "backend" in r.stderr,
          f"cli error-vs-tile --series acc,backend on a CSV lacking them: exit {r.returncode}, "
          f"stderr '{r.stderr.strip()}'")
    check(not any(os.path.exists(os.path.join(d, f"bad.{e}")) for e in ("png", "svg")),
          "no figure written when columns are missing")
    r = cli("error-vs-n", "--csv", os.path.join(d, "nope.csv"), "-o", os.path.join(d, "x"))
    check(r.returncode == 2 and "no such CSV" in r.stderr, f"missing file: exit {r.returncode} "
                                                           f"'{r.stderr.strip()}'")
    r = cli("error-vs-n", "--csv", os.path.join(DATA, "trials_small.csv"), "--formats", "gif",
            "-o", os.path.join(d, "x"))
    check(r.returncode == 2 and "gif" in r.stderr and not os.path.exists(os.path.join(d, "x.png")),
          f"--formats gif: exit {r.returncode} '{r.stderr.strip()}', nothing written")
    try:
        plots.error_vs_n(io.read_table(bad), os.path.join(d, "api_bad"))
        check(False, "API error_vs_n on missing columns raised nothing")
    except io.MissingColumnsError as e:
        check("n" in str(e) and "rel_error" in str(e), f"API MissingColumnsError: {e}")

    # Bounds and the slope fit against values worked by hand.
    u = bounds.unit_roundoff("fp16")
    g = float(bounds.gamma(1024, u))
    check(abs(g - 0.5 / (1 - 0.5)) < 1e-15, f"gamma(1024, 2^-11) = {g} (expect 1.0)")
    check(np.isnan(bounds.gamma(4096, u)), "gamma(4096, 2^-11) is nan (vacuous)")
    p = float(bounds.prob_bound(1024, u, 2.0))
    check(abs(p - 2 * 32 * u) < 1e-18, f"prob_bound(1024, u, 2) = {p} (expect {64 * u})")
    x = np.array([10, 100, 1000, 1e4])
    s = bounds.loglog_slope(x, 3 * x ** 0.5)
    check(abs(s - 0.5) < 1e-12, f"loglog_slope of 3 x^0.5 = {s}")

    # Timing-free copy of a sweep CSV: trial order, no timing columns, every other cell kept.
    shuffled = os.path.join(d, "shuffled.csv")
    io.write_csv(shuffled, trials.columns, list(reversed(trials.rows)))
    tf = repro.write_timing_free(shuffled, os.path.join(d, "timing_free.csv"))
    ids = [int(x) for x in tf.column("trial_id")]
    kept = [c for c in trials.columns if c not in repro.TIMING_COLUMNS]
    check(ids == sorted(ids) and tf.columns == kept and
          all(a[c] == b[c] for a, b in zip(tf.rows, trials.rows) for c in kept),
          f"timing-free CSV: {len(tf)} rows in trial order, columns dropped: "
          f"{sorted(set(trials.columns) - set(tf.columns))}")

    # CLAIMS.md: reproduction rows judged by claims.toml's tolerance, sanity rows apart,
    # and a reproduction row without a location or tolerance refused with exit 2.
    out = os.path.join(d, "CLAIMS.md")
    toml = os.path.join(d, "claims.toml")
    with open(toml, "w", encoding="utf-8") as f:
        f.write('[stop]\npublished = "2048"\nvalue = 2048\nlocation = "Table 1"\nexact = true\n'
                'declared = "2026-11-30"\n'
                '[slope]\npublished = "0.5"\nvalue = 0.5\nlocation = "Fig. 2"\nabs = 0.1\n'
                'declared = "90ec12b"\n'
                '[gone]\npublished = "not found"\nsearched = "the whole paper"\n')
    spec = claims.load_spec(toml)
    cl = [claims.reproduction(spec, "stop", "ones in fp16 stop at 2048", "carrier study", "2048",
                              2048.0),
          claims.reproduction(spec, "slope", "slope", "x", "0.61", 0.61),
          claims.reproduction(spec, "gone", "count", "x", "475", 475),
          claims.sanity("error <= bound", "x", "0.3", "<= 1", True)]
    claims.write_claims(out, "t", cl, hardware="test cpu", spec=spec)
    text = open(out, encoding="utf-8").read()
    rows = [ln for ln in text.splitlines() if ln[:4] in ("| R1", "| R2", "| R3", "| S1")]
    check(len(rows) == 4 and "| yes |" in rows[0] and "| **no** |" in rows[1] and
          "| not found |" in rows[2] and "| holds |" in rows[3] and
          claims.summary_counts(out)[1] == {"reproduced": 1, "not_reproduced": 1,
                                            "not_found": 1, "sanity": 1},
          f"CLAIMS.md table rows:\n{text}")
    bad = subprocess.run([sys.executable, "-c",
                          "from analysis import claims; claims.write_claims('x.md', 't', "
                          "[claims.Claim('c', 'cmd', '1', '2', True)])"],
                         cwd=d, env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True,
                         text=True)
    check(bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and
          "without a location" in bad.stderr and not os.path.exists(os.path.join(d, "x.md")),
          f"reproduction row without location refused: rc {bad.returncode}, {bad.stderr!r}")
    # One published number counted once, and only when declared before the run: a second row
    # on the same value and location, an entry without 'declared', one declared after its
    # first run, one marked chosen_after_run and one marked calibration (a source the model was
    # built from) are each refused with one line and exit 2.
    entry = 'published = "10x"\nvalue = 10\nlocation = "Sec. IV"\nfactor = 3\n'
    cases = {
        "same value and location": ('[a]\n' + entry + 'declared = "2026-12-01"\n[b]\n' +
                                    entry.replace('"10x"', '"ten times"') +
                                    'declared = "2026-12-01"\n', ["a", "b"], "again"),
        "no declared": ('[a]\n' + entry, ["a"], "needs 'declared'"),
        "declared after the first run": ('[a]\n' + entry + 'declared = "2026-12-02"\n'
                                         'first_run = "2026-12-01"\n', ["a"], "after its first"),
        "chosen after the run": ('[a]\n' + entry + 'declared = "2026-12-01"\n'
                                 'chosen_after_run = true\n', ["a"], "chosen after the run"),
        "a calibration source": ('[a]\n' + entry + 'declared = "2026-12-01"\n'
                                 'calibration = true\n', ["a"], "calibration"),
    }
    for what, (body, keys, needle) in cases.items():
        with open(os.path.join(d, "dup.toml"), "w", encoding="utf-8") as f:
            f.write(body)
        code = ("from analysis import claims\ns = claims.load_spec('dup.toml')\n"
                "rows = [claims.reproduction(s, k, 'c', 'cmd', '10', 10) for k in %r]\n"
                "claims.write_claims('dup.md', 't', rows, spec=s)\n" % keys)
        r = subprocess.run([sys.executable, "-c", code], cwd=d,
                           env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True)
        check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and
              needle in r.stderr and not os.path.exists(os.path.join(d, "dup.md")),
              f"claims refuses {what}: rc {r.returncode}, {r.stderr!r}")
    check(claims.cpu_model() != "", f"cpu_model() = '{claims.cpu_model()}'")

    # analysis.block_scaled: quant_error and drawn_error against the fp64 row of the same
    # (op, input, n, trial, ...); sum|a_i b_i| = cond * |c_drawn| = 4 * 2 = 8 here.
    base = dict(op="dot", input="normal", n="64", trial="0", acc="fp32", round="rne", exp="libm",
                schedule="seq", backend="replay")
    cols = list(base) + ["dtype", "result", "reference", "cond"]
    t = io.table_from_rows(cols, [dict(base, dtype="fp64", result="2", reference="2", cond="4"),
                                  dict(base, dtype="mxfp4:rceil", result="2.5", reference="3",
                                       cond="1")])
    d = block_scaled.derive(t).rows
    got = [(r["family"], r["rule"], float(r["quant_error"]), float(r["drawn_error"])) for r in d]
    check(got == [("fp64", "default", 0.0, 0.0), ("mxfp4", "rceil", 0.125, 0.0625)],
          f"block_scaled.derive: {got}")
    orphan = io.table_from_rows(cols, [dict(base, dtype="nvfp4", result="1", reference="1",
                                            cond="1")])
    try:
        block_scaled.derive(orphan)
        check(False, "block_scaled.derive refuses a row without an fp64 counterpart")
    except io.AnalysisError as e:
        check("no dtype=fp64 row" in str(e), f"block_scaled.derive refuses an orphan row: {e}")

    print(f"{len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
