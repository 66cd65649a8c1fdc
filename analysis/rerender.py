"""Re-render a paper folder's figures from its committed data/, without recomputing anything.

  /usr/bin/python3 -m analysis.rerender NAME [NAME...] [--install] [--carrier BIN]

For each papers/NAME it builds, in a temporary mirror of the repository, the OUT folder that
reproduce.sh's runs would have left (the timing-free data/ CSVs stand in for the sweeps'
trials.csv: repro.write_timing_free of a timing-free file is the same file), runs the folder's
make_figures.py there with CARRIER_FIGURE_CHECK=strict (every figure must pass
analysis/figure_check.py), and checks that the data/ files and CLAIMS.md it regenerates equal the
committed ones (a 'Hardware:' line excepted): so the figures are drawn from exactly the committed
numbers. --install then copies only the PNGs back into papers/NAME/figures/. Folders whose
inputs are not all in data/ (bhh2021-lse-softmax: the study's per-vector CSV;
p4016-canonical-reduce: the raw error trials; nvfp4-pretraining2025: carrier quantize's
per-element CSVs) are re-rendered by their reproduce.sh instead
(seconds each). Exit 2 with one line per folder that fails.
"""
import argparse
import csv
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _copy(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(src, dst)


def _split(src, out_dir, name_of):
    """Write the rows of CSV src into out_dir/name_of(row), one file per name, header kept."""
    with open(src, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
        cols = list(rows[0].keys()) if rows else []
    files = {}
    for r in rows:
        files.setdefault(name_of(r), []).append(r)
    for name, rs in files.items():
        with open(os.path.join(out_dir, name), "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, cols, lineterminator="\n")
            w.writeheader()
            w.writerows(rs)


def _sweeps(data, out, names):
    for n in names:
        _copy(os.path.join(data, f"{n}.csv"), os.path.join(out, n, "trials.csv"))


def _stage_higham(data, out):
    _sweeps(data, out, ["error-vs-n", "orderings"])
    _split(os.path.join(data, "stagnation.csv"), out,
           lambda r: f"stagnation-{r['series']}-{r['dtype']}.csv")


def _stage_connolly(data, out):
    _sweeps(data, out, ["sr-vs-rn", "matvec"])
    _copy(os.path.join(data, "authors_matvec.csv"), os.path.join(out, "authors_matvec.csv"))
    for dtype in ("fp16", "bf16"):
        _split(os.path.join(data, f"harmonic-{dtype}.csv"), out,
               lambda r: f"harmonic-{r['dtype']}-rne.csv" if r["round"] == "rne" else
               f"harmonic-{r['dtype']}-sr-{r['seed']}.csv")


def _stage_files(*names):
    def stage(data, out):
        for n in names:
            _copy(os.path.join(data, n), os.path.join(out, n))
    return stage


def _stage_sweeps(*names):
    return lambda data, out: _sweeps(data, out, names)


def _stage_milakov(data, out):
    _stage_files("passes.csv", "timing.csv")(data, out)
    _split(os.path.join(data, "timing-batched.csv"), out,
           lambda r: f"timing-batch{r['batch']}.csv")


def _stage_secretly(data, out):
    _stage_files("laws-lse.txt", "laws-welford.txt", "laws-attention.txt")(data, out)
    _sweeps(data, out, ["orders", "orders-attention"])


GOLDEN = ["precision", "seq", "tiles", "mixed", "mixed-tiles", "kernel-ampere", "kernel-hopper",
          "kernel-hopper-fp8", "seq-bc16"]
STAGE = {
    "higham1993-summation": _stage_higham,
    "connolly2021-stochastic-rounding": _stage_connolly,
    "chan-golub-leveque1983": _stage_files("variance.csv"),
    "fabsum2020": _stage_sweeps("blocked", "fabsum", "error-vs-n", "minimiser", "minimiser-grid"),
    "fp8-accumulation": _stage_sweeps("error-vs-k", "promote-interval", "sage-pv"),
    "golden2024-flash-stability": _stage_files(*[f"{g}.csv" for g in GOLDEN]),
    "milakov2018-online-softmax": _stage_milakov,
    "secretly-associative": _stage_secretly,
}
REPRODUCE = ("bhh2021-lse-softmax", "p4016-canonical-reduce", "nvfp4-pretraining2025")


def _mirror(name):
    """A temporary repository mirror: analysis/ and scripts/ linked, papers/NAME and papers/README.md
    copied."""
    top = tempfile.mkdtemp(prefix=f"rerender-{name}-")
    for d in ("analysis", "scripts"):
        os.symlink(os.path.join(ROOT, d), os.path.join(top, d))
    os.makedirs(os.path.join(top, "papers"))
    shutil.copytree(os.path.join(ROOT, "papers", name), os.path.join(top, "papers", name))
    # reproduce.sh's claims step updates the summary table of papers/README.md.
    shutil.copyfile(os.path.join(ROOT, "papers", "README.md"), os.path.join(top, "papers", "README.md"))
    return top


def _same_text(a, b):
    if filecmp.cmp(a, b, shallow=False):
        return True
    if not a.endswith(".md"):
        return False
    strip = lambda p: [ln for ln in open(p, encoding="utf-8") if "Hardware:" not in ln]  # noqa
    return strip(a) == strip(b)


def rerender(name, carrier, install=False):
    """Problems (list of lines) of re-rendering papers/NAME; copies the PNGs when install."""
    top = _mirror(name)
    here = os.path.join(top, "papers", name)
    env = dict(os.environ, PYTHONPATH=top, CARRIER_FIGURE_CHECK="strict",
               MPLCONFIGDIR=os.environ.get("MPLCONFIGDIR") or tempfile.mkdtemp())
    # The machine the committed timings ran on (milakov2018 reads it; cpu_model() otherwise).
    with open(os.path.join(ROOT, "papers", name, "CLAIMS.md"), encoding="utf-8") as f:
        hw = [ln for ln in f if ln.startswith("Hardware: ")]
    if hw and "CARRIER_TIMING_CPU" not in env:
        env["CARRIER_TIMING_CPU"] = hw[0][len("Hardware: "):].split(",")[0]
    out = os.path.join(top, "out")
    os.makedirs(out)
    if name in STAGE:
        STAGE[name](os.path.join(ROOT, "papers", name, "data"), out)
        cmd = [sys.executable, os.path.join(here, "make_figures.py"), "--out", out]
        with open(os.path.join(here, "make_figures.py"), encoding="utf-8") as f:
            if '"--carrier"' in f.read():
                cmd += ["--carrier", carrier]
    elif name in REPRODUCE:
        env.update(CARRIER_BIN=carrier, JOBS=env.get("JOBS", "2"))
        cmd = ["bash", os.path.join(here, "reproduce.sh"), out]
    else:
        return [f"{name}: no way to re-render it from committed data is known here"]
    r = subprocess.run(cmd, cwd=top, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        return [f"{name}: {' '.join(cmd[:2])} exit {r.returncode}: "
                f"{(r.stderr.strip().splitlines() or [''])[-1]}"]
    problems = [f"{name}: {ln}" for ln in r.stderr.splitlines() if "figure_check" in ln]
    committed = os.path.join(ROOT, "papers", name)
    for sub in ("data", "."):
        for f in sorted(os.listdir(os.path.join(committed, sub))):
            if sub == "." and f != "CLAIMS.md":
                continue
            a, b = os.path.join(committed, sub, f), os.path.join(here, sub, f)
            if os.path.isfile(a) and not _same_text(a, b):
                problems.append(f"{name}: {sub}/{f} differs from the committed one when "
                                f"regenerated from data/ (mirror {top})")
    if install and not problems:
        figs = os.path.join(here, "figures")
        for f in sorted(os.listdir(figs)):
            if f.endswith(".png"):
                shutil.copyfile(os.path.join(figs, f), os.path.join(committed, "figures", f))
    if not problems:
        shutil.rmtree(top, ignore_errors=True)
    return problems


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m analysis.rerender",
                                description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="+")
    p.add_argument("--install", action="store_true", help="copy the PNGs into papers/NAME")
    p.add_argument("--carrier", default=os.path.join(ROOT, "build", "bin", "carrier"))
    a = p.parse_args(argv)
    bad = []
    for name in a.names:
        name = os.path.basename(os.path.normpath(name))
        found = rerender(name, os.path.abspath(a.carrier), a.install)
        bad += found
        print(f"{name}: {'ok' if not found else f'{len(found)} problem(s)'}", flush=True)
    for line in bad:
        sys.stderr.write(f"rerender: {line}\n")
    return 2 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
