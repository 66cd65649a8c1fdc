"""The GPU's matrix units as a black box, against carrier's mma: profiles (issue 34).

Three steps, on two machines:

  cases    (here, numpy)   write the test inputs: for each case a row-major A (M x K) and
                           B (K x N) whose entries are exact values of the input format
                           (fp16, bf16, tf32, e4m3), with per-row exponent spreads from 0 to
                           the format's range, so that products are cut at many alignments.
  run      (on the GPU)    multiply them through cuBLAS (torch.mm with an fp32 output, or
                           cuBLAS gemmEx through CuPy; torch._scaled_mm for e4m3, with and
                           without fast accumulation) and save every fp32 output.
  compare  (here, carrier) replay a sample of the M x N dot products through each candidate
                           profile (`carrier.eval("dot", a, b, schedule="mma:PROFILE")`) and
                           count the outputs equal bit for bit; writes a CSV and a Markdown table.

  /usr/bin/python3 scripts/gpu_tensor_core.py cases --out DIR
  carrier_mma_dump DIR2                          (on the GPU: WMMA tiles with a random fp32 C)
  /usr/bin/python3 scripts/gpu_tensor_core.py mma-export --dump DIR2/mma_tf32.bin \
      --name wmma_tf32 --profile hopper-tf32 --dtype tf32 --out CASES.txt
  python3 scripts/gpu_tensor_core.py run --cases DIR --out results.npz      (needs torch + GPU)
  PYTHONPATH=build/python /usr/bin/python3 scripts/gpu_tensor_core.py compare \
      --cases DIR --results results.npz --csv out.csv --md out.md [--export F] [--png F]
"""

import argparse
import json
import os
import sys
import time

import numpy as np

# name: (carrier dtype, fraction bits, min normal exponent, max exponent, K values)
FORMATS = {
    "fp16": ("fp16", 10, -14, 15),
    "bf16": ("bf16", 7, -126, 127),
    "tf32": ("tf32", 10, -126, 127),
    "e4m3": ("fp8e4m3", 3, -6, 8),
    "fp16sub": ("fp16", 10, -14, 15),  # fp16 reaching down into the subnormals
}

# (case name, format, K, method); method names how the GPU computes it.
CASES = [
    ("fp16_k16", "fp16", 16, "cublas"),
    ("fp16_k64", "fp16", 64, "cublas"),
    ("fp16_k1024", "fp16", 1024, "cublas"),
    ("bf16_k16", "bf16", 16, "cublas"),
    ("bf16_k64", "bf16", 64, "cublas"),
    ("tf32_k8", "tf32", 8, "cublas"),
    ("tf32_k64", "tf32", 64, "cublas"),
    ("e4m3_k32", "e4m3", 32, "scaled_mm_fast"),
    ("e4m3_k32_slow", "e4m3", 32, "scaled_mm"),
    ("e4m3_k1024_fast", "e4m3", 1024, "scaled_mm_fast"),
    ("e4m3_k1024_slow", "e4m3", 1024, "scaled_mm"),
    ("bf16_k1024", "bf16", 1024, "cublas"),
    ("fp16_k4096", "fp16", 4096, "cublas"),
    ("fp16sub_k16", "fp16sub", 16, "cublas"),
    ("tf32_k8_ieee", "tf32", 8, "cublas_ieee"),
    ("tf32_k1024", "tf32", 1024, "cublas"),
    ("e4m3_k4096_fast", "e4m3", 4096, "scaled_mm_fast"),
    ("e4m3_k4096_slow", "e4m3", 4096, "scaled_mm"),
]
M = N = 128

# Candidate profiles per format for `compare` (the schedule after "mma:").
CANDIDATES = {
    "fp16": ["hopper", "ampere", "turing", "volta"],
    "bf16": ["hopper-bf16", "ampere-bf16"],
    "tf32": ["hopper-tf32", "ampere-tf32"],
    "e4m3": ["hopper-fp8", "ada-fp8", "hopper-fp8:promote:128"],
    "fp16sub": ["hopper", "ampere"],
}
FOILS = ["seq", "pairwise"]  # IEEE fp32 orders: what a kernel without a matrix unit gives


def random_values(rng, fmt, shape, spread):
    """Exact values of fmt: random sign and fraction, exponents in [e0 - spread, e0]."""
    _, frac, emin, emax = FORMATS[fmt]
    top = min(emax, 4 if fmt != "e4m3" else 5)
    if fmt == "fp16sub":
        top = -6
    lo = max(emin - (frac if fmt == "fp16sub" else 0), top - spread)
    e = rng.integers(lo, top + 1, size=shape)
    m = rng.integers(0, 1 << frac, size=shape)
    v = np.ldexp(1.0 + m / float(1 << frac), e)
    if fmt == "fp16sub":  # below 2^-14 keep only the bits an fp16 subnormal has
        v = np.where(e < emin, np.ldexp(np.floor(np.ldexp(v, 24)), -24), v)
    v = np.where(rng.random(shape) < 0.5, -v, v)
    v = np.where(rng.random(shape) < 0.05, 0.0, v)
    return v.astype(np.float32)


def make_cases(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(20261204)
    manifest, arrays = [], {}
    for name, fmt, k, method in CASES:
        spreads_a = [0, 1, 2, 4, 8, 12, 16, 24]
        if fmt == "fp16":
            spreads_a = [0, 1, 2, 4, 6, 8, 12, 16]
        if fmt == "e4m3":
            spreads_a = [0, 1, 2, 3, 4, 6, 8, 10]
        if fmt == "fp16sub":
            spreads_a = [0, 2, 4, 6, 8, 10, 14, 18]
        a = np.stack([random_values(rng, fmt, k, spreads_a[i % len(spreads_a)]) for i in range(M)])
        bt = np.stack(
            [random_values(rng, fmt, k, spreads_a[(j // 8) % len(spreads_a)]) for j in range(N)])
        arrays[f"{name}_a"], arrays[f"{name}_bt"] = a, bt
        manifest.append({"name": name, "format": fmt, "k": k, "method": method})
    np.savez_compressed(os.path.join(out, "cases.npz"), **arrays)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"m": M, "n": N, "cases": manifest}, f, indent=1)
    print(f"wrote {len(manifest)} cases to {out}")


def run_cases(cases_dir, out):
    import torch

    dev = torch.device("cuda")
    info = json.load(open(os.path.join(cases_dir, "cases.json")))
    arrays = np.load(os.path.join(cases_dir, "cases.npz"))
    results, log = {}, []
    props = torch.cuda.get_device_properties(0)
    log.append(f"device: {props.name} (sm_{props.major}{props.minor}), torch {torch.__version__}, "
               f"cuda {torch.version.cuda}, cublas {torch.backends.cuda.preferred_blas_library()}")
    for c in info["cases"]:
        name, fmt = c["name"], c["format"]
        a = torch.from_numpy(arrays[f"{name}_a"]).to(dev)
        bt = torch.from_numpy(arrays[f"{name}_bt"]).to(dev)
        t0 = time.time()
        try:
            d, how = gpu_product(torch, a, bt, fmt, c["method"])
            torch.cuda.synchronize()
            results[name] = d.float().cpu().numpy()
            log.append(f"{name}: {how}, {time.time() - t0:.3f} s")
        except Exception as e:  # each case is independent: record and go on
            log.append(f"{name}: FAILED {type(e).__name__}: {str(e).splitlines()[0][:300]}")
        print(log[-1], flush=True)
    np.savez_compressed(out, **results)
    with open(os.path.splitext(out)[0] + ".txt", "w") as f:
        f.write("\n".join(log) + "\n")


def gpu_product(torch, a, bt, fmt, method):
    """A @ B with an fp32 output through cuBLAS; returns (D, how it was computed)."""
    if fmt == "tf32":
        tf32 = method != "cublas_ieee"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        d = torch.mm(a, bt.t())
        setting = getattr(torch.backends.cuda.matmul, "fp32_precision", "n/a")
        return d, f"torch.mm fp32 with allow_tf32={tf32} (fp32_precision {setting})"
    if fmt == "e4m3":
        fa = a.to(torch.float8_e4m3fn)
        fb = bt.to(torch.float8_e4m3fn)
        assert torch.equal(fa.float(), a) and torch.equal(fb.float(), bt), "inputs not e4m3"
        one = torch.tensor(1.0, device=a.device)
        fast = method == "scaled_mm_fast"
        d = torch._scaled_mm(fa, fb.t(), scale_a=one, scale_b=one, out_dtype=torch.float32,
                             use_fast_accum=fast)
        return d, f"torch._scaled_mm e4m3 -> fp32, use_fast_accum={fast}"
    half = torch.bfloat16 if fmt == "bf16" else torch.float16
    ha, hb = a.to(half), bt.to(half)
    assert torch.equal(ha.float(), a) and torch.equal(hb.float(), bt), "inputs not exact"
    errors = []
    try:
        return torch.mm(ha, hb.t(), out_dtype=torch.float32), f"torch.mm {fmt} out_dtype=fp32"
    except Exception as e:
        errors.append(f"torch.mm out_dtype: {e}")
    try:
        return cupy_gemm_ex(torch, ha, hb, fmt), f"cuBLAS gemmEx {fmt} -> fp32 (CuPy)"
    except Exception as e:
        errors.append(f"cupy gemmEx: {e}")
    raise RuntimeError("; ".join(errors))


def cupy_gemm_ex(torch, ha, hb, fmt):
    import cupy
    from cupy_backends.cuda.libs import cublas

    m, k = ha.shape
    n = hb.shape[0]
    a = cupy.asarray(ha.contiguous())
    bt = cupy.asarray(hb.contiguous())
    c = cupy.zeros((m, n), dtype=cupy.float32)
    one = np.array(1.0, dtype=np.float32)
    zero = np.array(0.0, dtype=np.float32)
    dtype = 2 if fmt == "fp16" else 14  # CUDA_R_16F, CUDA_R_16BF
    handle = cupy.cuda.device.get_cublas_handle()
    # Row-major C = A B^T as column-major C^T = Bt^T-view: op(B)=T on bt (k x n col-major view).
    cublas.gemmEx(handle, 1, 0, n, m, k, one.ctypes.data, bt.data.ptr, dtype, k, a.data.ptr,
                  dtype, k, zero.ctypes.data, c.data.ptr, 0, n, 68, -1)
    cupy.cuda.Device().synchronize()
    return torch.as_tensor(c.get())


def compare(cases_dir, results_path, csv_path, md_path, sample, export=None, png=None):
    import carrier

    info = json.load(open(os.path.join(cases_dir, "cases.json")))
    arrays = np.load(os.path.join(cases_dir, "cases.npz"))
    res = np.load(results_path)
    rng = np.random.default_rng(7)
    rows, confirmed = [], []
    for c in info["cases"]:
        name, fmt, k = c["name"], c["format"], c["k"]
        if name not in res:
            rows.append((name, fmt, k, c["method"], "-", 0, 0, "no GPU output"))
            continue
        a = arrays[f"{name}_a"].astype(np.float64)
        bt = arrays[f"{name}_bt"].astype(np.float64)
        d = res[name]
        pairs = [(i, i % N) for i in range(min(M, N))]
        pairs += [tuple(p) for p in rng.integers(0, [M, N], size=(sample - len(pairs), 2))]
        if k >= 4096:
            pairs = pairs[: sample // 4]  # the long dots: a quarter of the sample
        for prof in CANDIDATES[fmt] + FOILS:
            if prof.endswith(":promote:128") and k <= 128:
                continue
            equal, first = 0, ""
            for i, j in pairs:
                sched = prof if prof in FOILS else "mma:" + prof
                r = carrier.eval("dot", a[i], bt[j], dtype=FORMATS[fmt][0], acc="fp32",
                                 schedule=sched)
                want = np.float32(d[i, j])
                got = np.float32(r.result)
                if want.view(np.uint32) == got.view(np.uint32):
                    equal += 1
                elif not first:
                    first = f"({i},{j}) gpu {float(want).hex()} model {float(got).hex()}"
            rows.append((name, fmt, k, c["method"], prof, equal, len(pairs), first))
            if equal == len(pairs) and prof not in FOILS and k <= 1024:
                keep = pairs[: 40 if k <= 64 else 4]
                confirmed.append((name, prof, FORMATS[fmt][0], a, bt, d, keep))
            print(f"{name:18} {prof:24} {equal}/{len(pairs)} {first}", flush=True)
    with open(csv_path, "w") as f:
        f.write("case,format,k,gpu_method,profile,equal,compared,first_difference\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")
    with open(md_path, "w") as f:
        f.write("| case | format | K | GPU call | profile | bit-equal | first difference |\n")
        f.write("|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]}/{r[6]} | {r[7]} |\n")


    if export:
        write_export(export, confirmed)
    if png:
        plot(png, rows)


def short_hex(v):
    """float.hex without the trailing zeros of the fraction: 0x1.598p+4, 0x0p+0."""
    h = float(v).hex()
    if "." in h:
        mant, exp = h.split("p")
        h = mant.rstrip("0").rstrip(".") + "p" + exp
    return h


def write_export(path, confirmed):
    """The confirmed cases as text for tests/core/test_mma_hardware.cpp: one dot per line,
    `case profile dtype a0,a1,...;b0,b1,...;gpu_output`, every value a C99 hex float."""
    with open(path, "w") as f:
        f.write("# GPU outputs of scripts/gpu_tensor_core.py (see kernels/cuda/results/README.md);"
                " one dot per line: case profile dtype a;b;output or a;b;c;output (hex floats)\n")
        for name, prof, dtype, a, bt, d, keep in confirmed:
            for i, j in keep:
                av = ",".join(short_hex(x) for x in a[i])
                bv = ",".join(short_hex(x) for x in bt[j])
                f.write(f"{name} {prof} {dtype} {av};{bv};{short_hex(d[i, j])}\n")


def rows_from_csv(path):
    """The rows compare() wrote to its CSV, for plot() to re-render without the GPU outputs."""
    import csv

    with open(path, newline="") as f:
        return [(r["case"], r["format"], int(r["k"]), r["gpu_method"], r["profile"],
                 int(r["equal"]), int(r["compared"]), r["first_difference"])
                for r in csv.DictReader(f)]


def plot(path, rows, device="H200"):
    """The compare table as a heat map in the repository's figure style (analysis/style.py),
    checked by analysis/figure_check.py; re-render from the CSV with
    plot(png, rows_from_csv(csv))."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import analysis  # noqa: F401  (Agg backend, private matplotlib config)
    import matplotlib
    import matplotlib.pyplot as plt
    from analysis import figure_check, style

    cases = list(dict.fromkeys(r[0] for r in rows if r[4] != "-"))
    profiles = list(dict.fromkeys(r[4] for r in rows if r[4] != "-"))
    grid = np.full((len(cases), len(profiles)), np.nan)
    for r in rows:
        if r[4] != "-" and r[6]:
            grid[cases.index(r[0]), profiles.index(r[4])] = r[5] / r[6]
    style.apply()
    fig, ax = plt.subplots(figsize=(2.0 + 0.75 * len(profiles), 1.4 + 0.36 * len(cases)),
                           layout="constrained")
    cmap = matplotlib.colormaps["viridis"].copy()
    cmap.set_bad("#dddddd")
    im = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0, vmax=1, aspect="auto",
                   interpolation="nearest")
    for i in range(len(cases)):
        for j in range(len(profiles)):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{100 * grid[i, j]:.0f}", ha="center", va="center", fontsize=7.5,
                        color="black" if grid[i, j] > 0.6 else "white")
    ax.set_xticks(range(len(profiles)), profiles, rotation=40, ha="right", fontsize=8)
    ax.set_yticks(range(len(cases)), cases, fontsize=8)
    ax.set_xlabel("carrier mma: profile (grey: not compared)")
    ax.set_ylabel("case (format, K)")
    ax.grid(False)
    ks = sorted({r[2] for r in rows})
    ax.set_title(style.title(f"cuBLAS on the {device}: % of outputs bit-equal to each model",
                             op="dot", format="|".join(dict.fromkeys(r[1] for r in rows)),
                             K=f"{ks[0]}..{ks[-1]}"), fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.04, label="fraction bit-equal")
    figure_check.report(fig, os.path.basename(path))
    fig._carrier_checked = True
    fig.savefig(path, dpi=150, metadata={"Software": None})
    plt.close(fig)


def load_dump(path):
    """A file of carrier_mma_dump (kernels/cuda/bench/mma_dump.cu): A, Bt, C, D per tile."""
    raw = open(path, "rb").read()
    tiles, k = (int(v) for v in np.frombuffer(raw[:8], np.int32))
    f = np.frombuffer(raw[8:], np.float32)
    n = tiles * 16 * k
    a, bt = f[:n].reshape(tiles, 16, k), f[n:2 * n].reshape(tiles, 16, k)
    c = f[2 * n:2 * n + tiles * 256].reshape(tiles, 16, 16)
    d = f[2 * n + tiles * 256:].reshape(tiles, 16, 16)
    return a, bt, c, d


def mma_export(dump, name, profile, dtype, count, path):
    """Append `count` outputs of a carrier_mma_dump file (C included) for the C++ test."""
    a, bt, c, d = load_dump(dump)
    rng = np.random.default_rng(11)
    picks = zip(rng.integers(0, a.shape[0], count), rng.integers(0, 16, count),
                rng.integers(0, 16, count))
    with open(path, "a") as f:
        for t, i, j in picks:
            av = ",".join(short_hex(x) for x in a[t, i])
            bv = ",".join(short_hex(x) for x in bt[t, j])
            f.write(f"{name} {profile} {dtype} {av};{bv};{short_hex(c[t, i, j])};"
                    f"{short_hex(d[t, i, j])}\n")
    print(f"appended {count} outputs of {dump} to {path}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cases")
    c.add_argument("--out", required=True)
    r = sub.add_parser("run")
    r.add_argument("--cases", required=True)
    r.add_argument("--out", required=True)
    k = sub.add_parser("compare")
    k.add_argument("--cases", required=True)
    k.add_argument("--results", required=True)
    k.add_argument("--csv", required=True)
    k.add_argument("--md", required=True)
    k.add_argument("--sample", type=int, default=1000)
    k.add_argument("--export", help="write the confirmed cases for the C++ test")
    k.add_argument("--png", help="draw the table as a heat map")
    x = sub.add_parser("mma-export")
    x.add_argument("--dump", required=True)
    x.add_argument("--name", required=True)
    x.add_argument("--profile", required=True)
    x.add_argument("--dtype", required=True)
    x.add_argument("--count", type=int, default=100)
    x.add_argument("--out", required=True)
    a = p.parse_args()
    if a.cmd == "cases":
        make_cases(a.out)
    elif a.cmd == "mma-export":
        mma_export(a.dump, a.name, a.profile, a.dtype, a.count, a.out)
    elif a.cmd == "run":
        run_cases(a.cases, a.out)
    else:
        compare(a.cases, a.results, a.csv, a.md, a.sample, a.export, a.png)


if __name__ == "__main__":
    sys.exit(main())
