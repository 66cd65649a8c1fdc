"""Data and CLAIMS.md for tensor-core-behaviour: carrier's mma: profiles against published
measurements of real tensor cores.

Every number of ours comes from `carrier eval --op dot --dtype T --acc fp32 --schedule
mma:PROFILE --input FILE` on a pair file written here under OUT/cases/. The CLI has no input
for the accumulator c of a fused step, so a vector with c != 0 is written as two groups: the
first holds pieces of c (products of two input-format values that sum to c exactly, padded
with zero pairs to the profile's group size), the second the vector's products. The first
fused step then returns c exactly (every piece is a multiple of 2^(e_c - F), F >= 23, and the
output holds c), and the second step is c + a.b, as on the GPU. `inject_c` refuses a c it
cannot write that way; a sanity row checks the first step's result on every Fasi c and on the
first vectors of each Khattak-Mikaitis set.

Inputs: the Khattak-Mikaitis validation files (--km-dir: a folder holding
model_validation/GPU/FORMAT/*.txt of north-numerical-computing/MATLAB-tensor-core).
Outputs (this folder): data/fasi.csv, data/km.csv, data/km-differences.csv, data/hpec.csv,
data/probes.csv, CLAIMS.md.
"""
import argparse
import concurrent.futures
import json
import math
import os
import subprocess
import sys

import numpy as np

from analysis import claims, io

HERE = os.path.dirname(os.path.abspath(__file__))
REL = "papers/tensor-core-behaviour"

# Input formats (significant bits, minimum normal exponent, largest value), as core/mma.hpp.
FMT = {"fp16": (11, -14, 65504.0), "bf16": (8, -126, float.fromhex("0x1.fep127")),
       "tf32": (11, -126, float.fromhex("0x1.ffcp127")), "fp8e4m3": (4, -6, 448.0)}
# Profile -> (storage dtype, products per fused step, output: fp32 or fp16 or e8m13).
PROFILES = {"volta": ("fp16", 4, "fp32"), "volta-f16": ("fp16", 4, "fp16"),
            "turing": ("fp16", 8, "fp32"), "ampere": ("fp16", 8, "fp32"),
            "ampere-bf16": ("bf16", 8, "fp32"), "ampere-tf32": ("tf32", 4, "fp32"),
            "ada": ("fp16", 8, "fp32"), "ada-fp8": ("fp8e4m3", 16, "e8m13"),
            "hopper": ("fp16", 16, "fp32"), "hopper-bf16": ("bf16", 16, "fp32"),
            "hopper-fp8": ("fp8e4m3", 32, "e8m13"), "blackwell": ("fp16", 16, "fp32"),
            "cdna3": ("fp16", 8, "fp32"), "cdna3-bf16": ("bf16", 8, "fp32")}


def P(e):
    return math.ldexp(1.0, e)


def floor_log2(x):
    return math.frexp(abs(x))[1] - 1


def fits(x, fmt):
    """Is x a value of input format fmt (subnormals included)?"""
    if x == 0:
        return True
    p, emin, mx = FMT[fmt]
    a = abs(x)
    if a > mx:
        return False
    lsb = max(floor_log2(a), emin) - (p - 1)
    return math.ldexp(a, -lsb).is_integer()


def cexp(x, fmt):
    """The exponent a fused step gives factor x: floor(log2 |x|) clamped at the format's emin."""
    return max(floor_log2(x), FMT[fmt][1])


def factor(p, fmt, e_max):
    """(a, b) in fmt with a * b == p and cexp(a) + cexp(b) <= e_max, or None."""
    for t in sorted(range(-150, 151), key=abs):
        b = P(t)
        a = p / b
        if a * b != p or not fits(a, fmt) or not fits(b, fmt):
            continue
        if cexp(a, fmt) + cexp(b, fmt) <= e_max:
            return a, b
    return None


def inject_c(c, profile):
    """Pairs whose fused step gives exactly c (padded to the profile's group), or None."""
    dtype, terms, out = PROFILES[profile]
    if c == 0:
        return []
    if out == "e8m13":
        return None  # a 14-bit output cannot hold an fp32 accumulator
    prec = FMT[dtype][0]
    ec = floor_log2(c)
    pieces, r = [], c
    while r != 0:
        q = P(floor_log2(r) - (prec - 1))
        piece = math.trunc(r / q) * q
        pieces.append(piece)
        r -= piece
    if len(pieces) > terms:
        return None
    pairs = []
    for piece in pieces:
        ab = factor(piece, dtype, ec)
        if ab is None:
            return None
        pairs.append(ab)
    if cexp(pairs[0][0], dtype) + cexp(pairs[0][1], dtype) != ec:
        return None
    return pairs + [(0.0, 0.0)] * (terms - len(pairs))


class Runner:
    """carrier eval on pair files under OUT/cases, several at once."""

    def __init__(self, carrier, out, jobs):
        self.carrier, self.dir, self.jobs = carrier, os.path.join(out, "cases"), jobs
        os.makedirs(self.dir, exist_ok=True)

    def command(self, profile, name="FILE"):
        dtype = PROFILES[profile][0] if profile in PROFILES else "T"
        return (f"carrier eval --op dot --dtype {dtype} --acc fp32 --schedule "
                f"mma:{profile} --input {name}")

    def _one(self, job):
        name, profile, pairs = job
        path = os.path.join(self.dir, name + ".txt")
        with open(path, "w") as f:
            for a, b in pairs:
                f.write(f"{float(a).hex()} {float(b).hex()}\n")
        cmd = [self.carrier, "eval", "--op", "dot", "--dtype", PROFILES[profile][0], "--acc",
               "fp32", "--schedule", "mma:" + profile, "--input", path, "--format", "json"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise io.AnalysisError(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
        res = json.loads(r.stdout)["result"]
        # eval prints an fp32 result as its shortest decimal: read it back as that float.
        return float(np.float32(res)) if not isinstance(res, str) else float(res)

    def run(self, jobs):
        """[(name, profile, pairs)] -> [result], in order."""
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.jobs) as ex:
            return list(ex.map(self._one, jobs))


def with_c(c, a, b, profile):
    inj = inject_c(c, profile)
    if inj is None:
        raise io.AnalysisError(f"cannot write c = {c!r} for mma:{profile}")
    return inj + list(zip(a, b))


def hexf(x):
    return float(x).hex()


def bits32(x):
    return int(np.float32(x).view(np.uint32))


# --- Fasi, Higham, Mikaitis and Pranesh (2021): the test suite's vectors ---------------------

def fasi_tests(kind):
    """[(test id, profile role, [(c, a, b)], judge)] of one test file. judge: ('values',) or
    ('nonzero',) or ('below',): result of case 2 below result of case 1. Role 'f16' runs the
    binary16-output profile."""
    one4 = [1.0] * 4
    t = []
    if kind == "v100":
        b16 = 1 - P(-11)
        t += [("a1", "f16", [(0.0, [P(-24)], [4.0])], "values"),
              ("a2", "f32", [(0.0, [P(-24)], [4.0])], "values"),
              ("a4", "f16", [(0.0, [P(-14)], [0.5]), (-P(-15), [P(-14)], [1.0])], "nonzero"),
              ("a5", "f32", [(0.0, [P(-14)], [0.5]), (-P(-15), [P(-14)], [1.0])], "nonzero"),
              ("b1", "f32", [(0.0, [b16] * 4, [b16] * 4)], "values"),
              ("b2", "f16", [(0.0, [b16, b16], [b16, P(-11)])], "values"),
              ("b3", "f32", [(1.0, one4, [P(-24)] * 4)], "values")]
        cases = []
        for j in range(4):
            b = [P(-24)] * 4
            b[j] = 1.0
            cases.append((P(-24), one4, b))
        t.append(("b4", "f32", cases, "values"))
    else:
        bb = 1 - P(-11) if kind == "t4a100" else 1 - P(-8)
        if kind == "t4a100":
            t += [("a2", "f32", [(0.0, [P(-24)], [4.0])], "values"),
                  ("a5", "f32", [(0.0, [P(-14)], [0.5]), (-P(-15), [P(-14)], [1.0])],
                   "nonzero")]
        else:
            t += [("a1", "f32", [(0.0, [P(-133)], [P(7)])], "values"),
                  ("a2", "f32", [(P(-149), [0.0], [0.0])], "values"),
                  ("a3", "f32", [(0.0, [P(-126)], [0.5]), (-P(-127), [P(-126)], [1.0])],
                   "values")]
        t += [("b1", "f32", [(0.0, [bb] * 4, [bb] * 4)], "values"),
              ("b3", "f32", [(1.0, [0.5] * 4, [P(-24)] * 4)], "values")]
        cases = []
        for j in range(4):
            a, b = [0.5] * 4, [P(-24)] * 4
            a[j], b[j] = 1.0, 1.0
            cases.append((P(-24), a, b))
        t.append(("b4", "f32", cases, "values"))
    tiny = P(-23) + P(-24)
    t += [("c1", "f32", [(0.0, one4, [2.0, tiny, 0.0, 0.0])], "values"),
          ("c2", "f32", [(0.0, one4, [-2.0, -tiny, 0.0, 0.0])], "values")]
    if kind == "v100":
        t.append(("c3", "f16", [(0.0, [P(-24), P(-24)], [0.5, 0.25])], "values"))
    c3 = 1 + P(-22) + P(-23)
    t += [("d1", "f32", [(-(1 - P(-24)), [1.0], [1.0])], "values"),
          ("d2", "f32", [(1 - P(-24), one4, [P(-24)] * 4)], "values"),
          ("d3", "f32", [(-1 + P(-24), [1.0, 1.0], [1.0, -P(-24)])], "values"),
          ("d4", "f32", [(1.875, one4, [1.0, 1.5, 1.75, 1.875]), (c3, one4, one4),
                         (-c3, one4, [-1.0] * 4)], "values")]
    if kind == "v100":
        a, b = one4, [P(-24)] * 4
    else:
        a, b = [0.5] * 4, [P(-24)] * 3 + [tiny]
    t.append(("d5", "f32", [(1 - P(-24), a, b), (1.0, a, b)], "below"))
    return t


FASI_SETS = [  # (claims key prefix, GPU, test file kind, binary32-output profile, binary16 one)
    ("v100", "V100", "v100", "volta", "volta-f16"),
    ("t4", "T4", "t4a100", "turing", None),
    ("a100", "A100", "t4a100", "ampere", None),
    ("a100bf16", "A100 (bfloat16)", "a100bf16", "ampere-bf16", None),
]


def run_fasi(runner):
    jobs, meta = [], []
    for key, gpu, kind, p32, p16 in FASI_SETS:
        for tid, role, cases, judge in fasi_tests(kind):
            profile = p16 if role == "f16" else p32
            for i, (c, a, b) in enumerate(cases):
                name = f"fasi-{key}-{tid}-{i}"
                if role == "f16":
                    c = float(np.float16(c))
                jobs.append((name, profile, with_c(c, a, b, profile)))
                meta.append((key, gpu, tid, profile, i, c, a, b, judge))
                if c != 0:  # the injected first step alone must give c
                    jobs.append((name + "-c", profile, inject_c(c, profile)))
                    meta.append((key, gpu, tid, profile, i, c, None, None, "c-check"))
    res = runner.run(jobs)
    rows, tests, cchecks = [], {}, []
    for (key, gpu, tid, profile, i, c, a, b, judge), r, job in zip(meta, res, jobs):
        if judge == "c-check":
            cchecks.append((job[0], c, r))
            continue
        rows.append({"set": key, "gpu": gpu, "test": tid, "profile": profile, "case": str(i),
                     "c": hexf(c), "a": " ".join(hexf(x) for x in a),
                     "b": " ".join(hexf(x) for x in b), "result": hexf(r)})
        tests.setdefault((key, tid), {"profile": profile, "judge": judge, "results": []})
        tests[(key, tid)]["results"].append(r)
    io.write_csv(os.path.join(HERE, "data", "fasi.csv"),
                 ["set", "gpu", "test", "profile", "case", "c", "a", "b", "result"], rows)
    return tests, cchecks


# --- Khattak and Mikaitis: GPU outputs of their validation vectors ---------------------------

KM_ROWS = 200
KM_CHECK_C = 10
# Sanity: the same vectors through a neighbouring profile of the same input format (another F,
# group size or output) must differ from the GPU somewhere, or the comparison could not tell.
KM_FOIL_ROWS = 100
KM_FOILS = {"v100-fp16-fp32": "turing", "a100-fp16": "volta", "a100-bf16": "hopper-bf16",
            "ada-fp16": "hopper", "h100-fp16": "ampere", "h100-bf16": "ampere-bf16",
            "h100-e4m3": "ada-fp8", "b200-fp16": "ampere"}
KM_SETS = [  # (claims key, GPU folder, format folder, output, profile)
    ("v100-fp16-fp32", "V100", "fp16", "fp32", "volta"),
    ("v100-fp16-fp16", "V100", "fp16", "fp16", "volta-f16"),
    ("a100-fp16", "A100", "fp16", "fp32", "ampere"),
    ("a100-bf16", "A100", "bf16", "fp32", "ampere-bf16"),
    ("a100-tf32", "A100", "tf32", "fp32", "ampere-tf32"),
    ("a2-fp16", "A2", "fp16", "fp32", "ampere"),
    ("a2-bf16", "A2", "bf16", "fp32", "ampere-bf16"),
    ("a2-tf32", "A2", "tf32", "fp32", "ampere-tf32"),
    ("ada-fp16", "Ada", "fp16", "fp32", "ada"),
    ("l40s-fp16", "L40S", "fp16", "fp32", "ada"),
    ("h100-fp16", "H100", "fp16", "fp32", "hopper"),
    ("h100-bf16", "H100", "bf16", "fp32", "hopper-bf16"),
    ("h100-e4m3", "H100", "E4M3", "fp32", "hopper-fp8"),
    ("h200-fp16", "H200", "fp16", "fp32", "hopper"),
    ("h200-bf16", "H200", "bf16", "fp32", "hopper-bf16"),
    ("h200-e4m3", "H200", "E4M3", "fp32", "hopper-fp8"),
    ("b200-fp16", "B200", "fp16", "fp32", "blackwell"),
]


def _hex_rows(path, n):
    out = []
    with open(path) as f:
        for line in f:
            if line.strip():
                out.append([float(np.uint32(int(w, 16)).view(np.float32)) for w in line.split()])
            if len(out) == n:
                break
    return out


def _bin_rows(path, n):
    out = []
    with open(path) as f:
        for line in f:
            if line.strip():
                out.append(float(np.uint32(int(line.strip(), 2)).view(np.float32)))
            if len(out) == n:
                break
    return out


def run_km(runner, km_dir, rows=KM_ROWS, data_dir=None, foils=True):
    """Vectors 1..rows of every set; the CSVs go to data_dir (default: this folder's data/)."""
    data_dir = data_dir or os.path.join(HERE, "data")
    jobs, meta = [], []
    for key, gpu, fmt, o, profile in KM_SETS:
        base = os.path.join(km_dir, "model_validation", gpu, fmt)
        a = _hex_rows(os.path.join(base, f"a_{gpu}_{fmt}.txt"), rows)
        b = _hex_rows(os.path.join(base, f"b_{gpu}_{fmt}.txt"), rows)
        d = _bin_rows(os.path.join(base, f"d_{gpu}_{o}.txt"), rows)
        if fmt == "E4M3" and gpu in ("H100", "H200"):
            # wgmma D = A B + D from a zero D (the authors' Validate_TC_models.m)
            c = [0.0] * len(d)
        else:
            c = _bin_rows(os.path.join(base, f"c_{gpu}_fp32.txt"), rows)
        if o == "fp16":
            c = [float(np.float16(x)) for x in c]  # c rounded to nearest fp16 (the authors' note)
        for i in range(len(d)):
            inj = inject_c(c[i], profile)
            if inj is None:
                meta.append((key, i, c[i], d[i], None))
                continue
            name = f"km-{key}-{i + 1}"
            jobs.append((name, profile, inj + list(zip(a[i], b[i]))))
            meta.append((key, i, c[i], d[i], len(jobs) - 1))
            if c[i] != 0 and i < KM_CHECK_C:
                jobs.append((name + "-c", profile, inj))
                meta.append((key, i, c[i], None, ("c", len(jobs) - 1)))
            foil = KM_FOILS.get(key) if foils else None
            finj = inject_c(c[i], foil) if foil else None
            if foil and i < KM_FOIL_ROWS and finj is not None:
                jobs.append((f"km-{key}-{i + 1}-foil-{foil}", foil, finj + list(zip(a[i], b[i]))))
                meta.append((key, i, c[i], d[i], ("foil", len(jobs) - 1)))
    res = runner.run(jobs)
    summary, diffs, cchecks = {}, [], []
    for key, i, c, d, idx in meta:
        s = summary.setdefault(key, {"compared": 0, "differing": 0, "not_written": 0,
                                     "foil_compared": 0, "foil_differing": 0})
        if isinstance(idx, tuple) and idx[0] == "foil":
            s["foil_compared"] += 1
            s["foil_differing"] += bits32(res[idx[1]]) != bits32(d)
            continue
        if isinstance(idx, tuple):
            cchecks.append((f"km-{key}-{i + 1}", c, res[idx[1]]))
            continue
        if idx is None:
            s["not_written"] += 1
            continue
        r = res[idx]
        s["compared"] += 1
        if bits32(r) != bits32(d):
            s["differing"] += 1
            diffs.append({"set": key, "row": str(i + 1), "c": hexf(c), "ours": hexf(r),
                          "gpu": hexf(d)})
    io.write_csv(os.path.join(data_dir, "km.csv"),
                 ["set", "gpu", "format", "output", "profile", "compared", "differing",
                  "not_written", "foil", "foil_compared", "foil_differing"],
                 [{"set": k, "gpu": g, "format": f, "output": o, "profile": p,
                   "compared": str(summary[k]["compared"]),
                   "differing": str(summary[k]["differing"]),
                   "not_written": str(summary[k]["not_written"]),
                   "foil": KM_FOILS.get(k, ""),
                   "foil_compared": str(summary[k]["foil_compared"]),
                   "foil_differing": str(summary[k]["foil_differing"])}
                  for k, g, f, o, p in KM_SETS])
    io.write_csv(os.path.join(data_dir, "km-differences.csv"),
                 ["set", "row", "c", "ours", "gpu"], diffs)
    return summary, diffs, cchecks


def sig_bits(x):
    """Significant bits of a nonzero fp32 value (subnormals counted from their leading bit)."""
    u = bits32(x) & 0x7FFFFFFF
    if u == 0:
        return 0
    m = u & 0x7FFFFF if u >= 0x800000 else u
    lead = 24 if u >= 0x800000 else m.bit_length()
    if u >= 0x800000:
        m |= 0x800000
    return lead - ((m & -m).bit_length() - 1)


def km_fp8_output_bits(km_dir):
    """{(GPU, format): (vectors, largest significant bits of the GPU's d)} over every stored
    fp8 vector: the e8m13 output keeps at most 14."""
    out = {}
    for gpu in ("H100", "H200", "Ada", "L40S", "B200"):
        for fmt in ("E4M3", "E5M2"):
            path = os.path.join(km_dir, "model_validation", gpu, fmt, f"d_{gpu}_fp32.txt")
            d = _bin_rows(path, 10 ** 9)
            out[(gpu, fmt)] = (len(d), max(sig_bits(x) for x in d))
    return out


# --- Khattak and Mikaitis, HPEC 2025: CUDA/nvidia-tests.cu (fp16) on the A30 -----------------

HPEC_PROFILE = "ampere"


def _wmma(c, nz, profile=HPEC_PROFILE):
    """One wmma call of nvidia-tests.cu: c and 16 (a, b) pairs, zero but for nz {i: (a, b)}."""
    pairs = [(0.0, 0.0)] * 16
    for i, ab in nz.items():
        pairs[i] = ab
    return with_c(c, [a for a, _ in pairs], [b for _, b in pairs], profile)


def _rounding(pos, neg, rz, rne):
    """nvidia-tests.cu's classification: 0 RZ, 1 RNE, 2 RU, 3 RD, -1 not working."""
    if pos == rz and neg == -rz:
        return 0
    if pos == rne and neg == -rne:
        return 1
    if pos == rne and neg == -rz:
        return 2
    if pos == rz and neg == -rne:
        return 3
    return -1


def run_hpec(runner, profile=HPEC_PROFILE):
    """The program's decisions from carrier's outputs, in its order (neab and NFMA feed the
    later tests). Returns {feature: (code or count, text)}; writes data/hpec.csv for the A30's
    profile."""
    pout, pin = 24, 11
    rows, res = [], {}

    def wmma(c, nz):
        return _wmma(c, nz, profile)

    def run(tag, jobs):
        out = runner.run([(f"hpec-{profile}-{tag}-{i}", profile, p) for i, p in enumerate(jobs)])
        for i, r in enumerate(out):
            rows.append({"test": tag, "case": str(i), "result": hexf(r)})
        return out

    u = P(-pout)
    one, two = run("f1", [wmma(1.0, {0: (u, 1.0), 1: (u, 1.0)}),
                          wmma(1.0, {0: (u, 1.0), 1: (u, 0.5), 2: (u, 0.5)})])
    neab = 0
    if one == 1 + 2 * u:
        neab = 1
    if two == 1 + 2 * u:
        neab = 2
    res["align-bits"] = (neab, f"one-bit test {'passed' if one == 1 + 2 * u else 'failed'}, "
                               f"two-bit test {'passed' if two == 1 + 2 * u else 'failed'}")
    ks = list(range(2, 15))
    jobs = []
    for k in ks:
        jobs.append(wmma(1 + P(-pout + 1), {0: (1.0, 1.0), k - 1: (P(-pout + 1), 1.0)}))
        jobs.append(wmma(-1 - P(-pout + 1), {0: (-1.0, 1.0), k - 1: (-P(-pout + 1), 1.0)}))
    out = run("f2", jobs)
    necb, nfma, target = 0, 0, 2 + P(-pout + 2)
    for i, k in enumerate(ks):
        d_pos, d_neg = out[2 * i], out[2 * i + 1]
        if d_pos != target and abs(d_neg) != target:
            nfma = k - 1
            break
        necb = math.floor(math.log2(k * (2 - P(-pin + 1))))
    res["carry-bits"] = (necb, f"{necb} extra carry bits")
    res["fma-size"] = (nfma, f"FMA size {nfma}")
    t = 3
    (r4,) = run("f4", [wmma(1 - P(-pout + t), {0: (P(-pout + t) + P(-pout), 1.0),
                                                1: (P(-pout + t) + P(-pout), 1.0)})])
    norm = -1
    if r4 == 1 + P(-pout + t) + P(-pout + 1):
        norm = 1
    elif r4 == 1 + P(-pout + t):
        norm = 2
    elif r4 == 1 + P(-pout + t) + P(-pout + 2):
        norm = 3
    res["normalisation"] = (norm, f"{r4.hex()} (code {norm})")
    c5 = 1 + P(-pout + 1) + P(-pout + 2)
    pos, neg = run("f5", [wmma(c5, {i: (1.0, 1.0) for i in range(3)}),
                          wmma(-c5, {i: (-1.0, 1.0) for i in range(3)})])
    code = _rounding(pos, neg, 4.0, 4 + P(-pout + 3))
    res["final-rounding"] = (code, f"{pos.hex()}, {neg.hex()} (code {code})")
    bb = P(-neab) + P(-neab - 1)
    for tag, key in (("f6", "align-rounding"), ("f9", "align-rounding-9")):
        pos, neg = run(tag, [wmma(1.0, {0: (u, bb), 1: (u, bb)}),
                             wmma(-1.0, {0: (-u, bb), 1: (-u, bb)})])
        code = _rounding(pos, neg, 1.0, 1 + P(-pout + 2 - neab))
        res[key] = (code, f"{pos.hex()}, {neg.hex()} (code {code})")
    pos, neg = run("f7", [wmma(1 + P(-pout + 1), {nfma: (u, 1.5)}),
                          wmma(-1 - P(-pout + 1), {nfma: (-u, 1.5)})])
    code = _rounding(pos, neg, 1 + P(-pout + 1), 1 + P(-pout + 2))
    res["multi-bfma"] = (code, f"{pos.hex()}, {neg.hex()} (code {code})")
    if profile == HPEC_PROFILE:
        io.write_csv(os.path.join(HERE, "data", "hpec.csv"), ["test", "case", "result"], rows)
    return res


# --- probes: F, group size, output bits; DeepSeek-V3's 14 bits of 32 products --------------

def _pow2_pair(m, dtype):
    """(a, b) in dtype with a * b = 2^-m."""
    ab = factor(P(-m), dtype, 10 ** 6)
    if ab is None:
        raise io.AnalysisError(f"2^-{m} is not a product of two {dtype} values")
    return ab


def run_probes(runner):
    f_profiles = ["volta", "turing", "ampere", "ampere-bf16", "ampere-tf32", "ada", "ada-fp8",
                  "hopper", "hopper-bf16", "hopper-fp8", "blackwell", "cdna3", "cdna3-bf16"]
    jmax = {"fp16": 28, "bf16": 30, "tf32": 30, "fp8e4m3": 18}
    jobs, meta = [], []
    for prof in f_profiles:
        dtype = PROFILES[prof][0]
        prec = FMT[dtype][0]
        for j in range(1, jmax[dtype] + 1):
            a, b = _pow2_pair(j, dtype)
            jobs.append((f"probe-F-{prof}-{j}", prof, [(1.0, 1.0), (a, b), (-(1 - P(-prec)), 1.0)]))
            meta.append(("F", prof, j, P(-prec) + P(-j)))
    for prof in ("ada-fp8", "hopper-fp8"):
        a, b = _pow2_pair(10, "fp8e4m3")
        jobs.append((f"probe-out-{prof}", prof, [(8.0, 1.0), (8.0, 1.0), (a, b)]))
        meta.append(("out", prof, 0, None))
    for prof in ("hopper-fp8", "ada-fp8"):  # DeepSeek-V3: 1 and 31 products of 2^-m
        for m in range(0, 18):
            a, b = _pow2_pair(m, "fp8e4m3")
            jobs.append((f"probe-kept-{prof}-{m}", prof, [(1.0, 1.0)] + [(a, b)] * 31))
            meta.append(("kept", prof, m, 1 + 31 * P(-m)))
    res = runner.run(jobs)
    rows, F, out, kept = [], {}, {}, {}
    for (kind, prof, j, expect), r in zip(meta, res):
        rows.append({"probe": kind, "profile": prof, "j": str(j), "result": hexf(r)})
        if kind == "F":
            F.setdefault(prof, [])
            F[prof].append(r == expect)
        elif kind == "out":
            out[prof] = r
        else:
            kept.setdefault(prof, {})[j] = (r, r == expect)
    fbits = {p: next((j for j, ok in enumerate(v, start=1) if not ok), len(v) + 1) - 1
             for p, v in F.items()}
    # Group size: +1, -1 and 62 products below the quantum 2^-F; those in the first fused step
    # are cut to zero, the later ones add exactly (the accumulator is +0).
    jobs2, meta2 = [], []
    for prof in f_profiles:
        dtype = PROFILES[prof][0]
        tiny = fbits[prof] + 1
        a, b = _pow2_pair(tiny, dtype)
        jobs2.append((f"probe-group-{prof}", prof, [(1.0, 1.0), (-1.0, 1.0)] + [(a, b)] * 62))
        meta2.append((prof, tiny))
    group = {}
    for (prof, tiny), r in zip(meta2, runner.run(jobs2)):
        survived = r / P(-tiny)
        group[prof] = 62 - survived + 2
        rows.append({"probe": "group", "profile": prof, "j": str(tiny), "result": hexf(r)})
    io.write_csv(os.path.join(HERE, "data", "probes.csv"), ["probe", "profile", "j", "result"],
                 rows)
    kbits = {}
    for prof, d in kept.items():
        kbits[prof] = next((m for m in sorted(d) if not d[m][1]), max(d) + 1)
    return fbits, group, out, kept, kbits


# --- claims ----------------------------------------------------------------------------------

def fmt_list(vals):
    return ", ".join(v.hex() if v != 0 else "0" for v in vals)


# A profile compared with its own source reads the source back (issue 33): core/mma.md builds
# mma:volta on Fasi et al.'s V100 tests C and D1-D5 (volta-f16 on test C) and takes every
# profile's F, products per fused step and e8m13 output from MMA-Sim's code. Those rows are
# calibration checks: cross-checks (sanity), judged by the same exact tolerance, never counted.
CALIBRATION_FASI = {("v100", t) for t in ("c1", "c2", "c3", "d1", "d2", "d3", "d4", "d5")}
CALIBRATION_NOTE = "a source of the profile (core/mma.md): calibration, not a reproduction"


def make_claims(spec, fasi, fasi_c, km, km_c, probes, runner, fp8bits, hpec):
    cl = []
    for key, gpu, kind, p32, p16 in FASI_SETS:
        for tid, role, cases, judge in fasi_tests(kind):
            t = fasi[(key, tid)]
            res = t["results"]
            if judge == "values":
                ours_v, text = res, fmt_list(res)
            elif judge == "nonzero":
                ours_v = 1.0 if all(r != 0 for r in res) else 0.0
                text = f"{fmt_list(res)} (PASS = {int(ours_v)})"
            else:
                ours_v = 1.0 if res[1] < res[0] else 0.0
                text = (f"c = 1 - 2^-24: {res[0].hex()}, c = 1: {res[1].hex()} "
                        f"(PASS = {int(ours_v)})")
            e = spec.entries[f"fasi-{key}-{tid}"]
            note = None
            if not spec.check(f"fasi-{key}-{tid}", ours_v):
                note = (f"mma:{t['profile']} gives {text}; the suite expects "
                        f"{e.get('value')} on the {gpu}")
            row = claims.reproduction
            if (key, tid) in CALIBRATION_FASI:
                row = claims.cross_check
                note = CALIBRATION_NOTE + (f"; {note}" if note else "")
            cl.append(row(
                spec, f"fasi-{key}-{tid}", f"Fasi et al. {gpu}, test {tid.upper()} "
                f"(mma:{t['profile']})", runner.command(t["profile"], f"fasi-{key}-{tid}-*.txt"),
                text, ours_v, note=note))
    for key, gpu, fmt, o, profile in KM_SETS:
        s = km[0][key]
        note = None
        if s["not_written"]:
            note = (f"{s['not_written']} of the first {KM_ROWS} vectors have a c the CLI "
                    "cannot write")
        if s["differing"]:
            first = next(d for d in km[1] if d["set"] == key)
            note = ((note + "; ") if note else "") + (
                f"first differing vector {first['row']}: ours {first['ours']}, GPU "
                f"{first['gpu']} (data/km-differences.csv)")
        cl.append(claims.reproduction(
            spec, f"km-{key}", f"Khattak-Mikaitis {gpu} {fmt} -> {o}: vectors whose bits differ "
            f"from the GPU's (mma:{profile})", runner.command(profile, f"km-{key}-ROW.txt"),
            f"{s['differing']} of {s['compared']} differ", s["differing"], note=note))
    fbits, group, out, kept, kbits = probes
    cl.append(claims.reproduction(
        spec, "deepseek-kept-bits", "DeepSeek-V3 3.5.2: bits kept of each aligned product "
        "(mma:hopper-fp8; largest j with 1 + 31 x 2^-m exact for every m < j)",
        runner.command("hopper-fp8", "probe-kept-hopper-fp8-M.txt"),
        f"{kbits['hopper-fp8']} bits", kbits["hopper-fp8"]))
    r14 = kept["hopper-fp8"][14][0]
    cl.append(claims.reproduction(
        spec, "deepseek-per-product", "DeepSeek-V3 3.5.2: each product truncated before the "
        "addition (mma:hopper-fp8: 1 and 31 products of 2^-14 in one fused step)",
        runner.command("hopper-fp8", "probe-kept-hopper-fp8-14.txt"), r14.hex(), r14,
        note="the exact sum 1 + 31 x 2^-14 rounded toward zero to 14 bits would be "
             "1 + 15 x 2^-13; truncating each product first gives 1"))
    cl.append(claims.reproduction(
        spec, "deepseek-aligned-products", "DeepSeek-V3 3.5.2: products aligned together "
        "(mma:hopper-fp8; +1, -1 and 62 products below 2^-13: those in the first step vanish)",
        runner.command("hopper-fp8", "probe-group-hopper-fp8.txt"),
        f"{group['hopper-fp8']:g} products", group["hopper-fp8"]))
    for key, prof in [("F-volta", "volta"), ("F-turing", "turing"), ("F-ampere", "ampere"),
                      ("F-ada", "ada"), ("F-hopper", "hopper"), ("F-blackwell", "blackwell"),
                      ("F-ada-fp8", "ada-fp8"), ("F-hopper-fp8", "hopper-fp8"),
                      ("F-cdna3", "cdna3")]:
        cl.append(claims.cross_check(
            spec, f"mmasim-{key}", f"MMA-Sim: fractional bits F after alignment "
            f"(mma:{prof}; largest j with 1 + 2^-j - (1 - 2^-p) exact)",
            runner.command(prof, f"probe-F-{prof}-J.txt"), f"F = {fbits[prof]}", fbits[prof],
            note=CALIBRATION_NOTE))
    for prof in ("ada-fp8", "hopper-fp8"):
        cl.append(claims.cross_check(
            spec, f"mmasim-out-{prof}", f"MMA-Sim: fp8 output format f32_e8m13 (mma:{prof}; "
            "8 + 8 + 2^-10 in one step)", runner.command(prof, f"probe-out-{prof}.txt"),
            out[prof].hex(), out[prof],
            note=f"an fp32 output would keep 16 + 2^-10; {CALIBRATION_NOTE}"))
    for key, prof in [("group-volta", "volta"), ("group-turing", "turing"),
                      ("group-ampere", "ampere"), ("group-ampere-tf32", "ampere-tf32"),
                      ("group-ada-fp8", "ada-fp8"), ("group-hopper", "hopper"),
                      ("group-hopper-fp8", "hopper-fp8"), ("group-blackwell", "blackwell"),
                      ("group-cdna3", "cdna3")]:
        cl.append(claims.cross_check(
            spec, f"mmasim-{key}", f"MMA-Sim: products per fused step (mma:{prof})",
            runner.command(prof, f"probe-group-{prof}.txt"), f"{group[prof]:g}", group[prof],
            note=CALIBRATION_NOTE))
    for key, what in [("align-bits", "extra alignment bits"), ("carry-bits", "extra carry bits"),
                      ("fma-size", "FMA size"), ("normalisation", "normalisation pattern"),
                      ("final-rounding", "final fp32 rounding"),
                      ("align-rounding", "rounding of aligned significands (Feature 6)"),
                      ("multi-bfma", "rounding between block FMAs")]:
        v, text = hpec[key]
        cl.append(claims.reproduction(
            spec, f"hpec-a30-{key}", f"Khattak-Mikaitis HPEC 2025 feature test on the A30: {what} "
            f"(mma:{HPEC_PROFILE}, nvidia-tests.cu's decision logic)",
            runner.command(HPEC_PROFILE, "hpec-TEST-N.txt"), text, v))
    for key in ("fttn-v100", "fttn-a100", "fttn-h100"):
        cl.append(claims.reproduction(
            spec, key, f"FTTN matrix-multiplication test, {key.split('-')[1].upper()}",
            "none (the test's matrices were not found)", "not run", None))
    # Sanity rows.
    bad = [n for n, c, r in fasi_c + km_c if bits32(r) != bits32(c)]
    cl.append(claims.sanity(
        "the accumulator written as a first fused step comes back exactly (every Fasi c; the "
        f"first {KM_CHECK_C} nonzero c of each Khattak-Mikaitis set)",
        runner.command("PROFILE", "NAME-c.txt"),
        f"{len(fasi_c) + len(km_c) - len(bad)} of {len(fasi_c) + len(km_c)} exact",
        "all exact", not bad, note=("first failing: " + bad[0]) if bad else None))
    for key, gpu, fmt, o, profile in KM_SETS:
        foil = KM_FOILS.get(key)
        if not foil:
            continue
        s = km[0][key]
        cl.append(claims.sanity(
            f"the Khattak-Mikaitis {gpu} {fmt} vectors tell profiles apart: mma:{foil} (not "
            f"{profile}) differs from the GPU on some of the first {KM_FOIL_ROWS}",
            runner.command(foil, f"km-{key}-ROW-foil-{foil}.txt"),
            f"{s['foil_differing']} of {s['foil_compared']} differ", "at least 1",
            s["foil_differing"] >= 1))
    cl.append(claims.sanity(
        "Khattak-Mikaitis HPEC 2025 Feature 9 (the vectors of Feature 6 again) on mma:ampere: "
        "toward zero, as the A30 printed (README.md lines 62-64)",
        runner.command(HPEC_PROFILE, "hpec-f9-N.txt"), hpec["align-rounding-9"][1], "code 0",
        hpec["align-rounding-9"][0] == 0))
    fo = hpec["foil"]
    cl.append(claims.sanity(
        "the HPEC 2025 program tells profiles apart: on mma:volta (V100's rule) it finds another "
        "alignment-bit count and FMA size than the A30's 1 and 8",
        runner.command("volta", "hpec-volta-TEST-N.txt"),
        f"{fo['align-bits'][0]} extra alignment bits, FMA size {fo['fma-size'][0]}",
        "not (1, 8)", (fo["align-bits"][0], fo["fma-size"][0]) != (1, 8)))
    e8 = {k: v for k, v in fp8bits.items() if k[0] != "B200"}
    cl.append(claims.sanity(
        "the GPUs' own fp8 outputs have at most 14 significant bits (e8m13, the output of "
        "hopper-fp8 and ada-fp8): every stored H100, H200, Ada and L40S E4M3/E5M2 vector",
        "make_figures.py (reads d_GPU_fp32.txt of the validation data; no carrier run)",
        "; ".join(f"{g} {f}: {n} vectors, at most {b} bits" for (g, f), (n, b) in e8.items()),
        "at most 14 bits", all(b <= 14 for n, b in e8.values()),
        note="B200's fp8 outputs reach " + ", ".join(
            f"{fp8bits[('B200', f)][1]} bits ({f})" for f in ("E4M3", "E5M2")) +
             ": no e8m13 output there (carrier has no B200 fp8 profile)"))
    for prof, base in [("ampere-bf16", "ampere"), ("ampere-tf32", "ampere"), ("ada", "ampere"),
                       ("hopper-bf16", "hopper"), ("cdna3-bf16", "cdna3")]:
        same_f = fbits[prof] == fbits[base]
        same_g = group[prof] == group[base] or prof == "ampere-tf32"
        cl.append(claims.sanity(
            f"mma:{prof} has the F{' and group size' if prof != 'ampere-tf32' else ''} of "
            f"mma:{base} (MMA-Sim gives them one constant)",
            runner.command(prof, f"probe-F-{prof}-J.txt"),
            f"F = {fbits[prof]}, group {group[prof]:g}",
            f"F = {fbits[base]}" + (f", group {group[base]:g}" if prof != "ampere-tf32" else ""),
            same_f and same_g))
    cl.append(claims.sanity(
        "mma:ada-fp8 (Ada's split k32 instruction) keeps 14 bits of each product and aligns 16",
        runner.command("ada-fp8", "probe-kept-ada-fp8-M.txt"),
        f"{kbits['ada-fp8']} bits, group {group['ada-fp8']:g}", "14 bits, group 16",
        kbits["ada-fp8"] == 14 and group["ada-fp8"] == 16))
    return cl


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--carrier", default="carrier")
    p.add_argument("--km-dir", required=True)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--km-deep", type=int, default=0,
                   help="only compare vectors 1..N of every Khattak-Mikaitis set (a longer "
                        "one-off check): OUT/km-deep/km.csv and km-differences.csv; data/ and "
                        "CLAIMS.md are not touched")
    a = p.parse_args()
    runner = Runner(a.carrier, a.out, a.jobs)
    if a.km_deep:
        deep = os.path.join(a.out, "km-deep")
        os.makedirs(deep, exist_ok=True)
        try:
            summary, diffs, _ = run_km(runner, a.km_dir, a.km_deep, deep, foils=False)
        except (io.AnalysisError, ValueError, KeyError, OSError) as e:
            print(f"make_figures: {e}", file=sys.stderr)
            return 2
        for key, s in summary.items():
            print(f"{key}: {s['differing']} of {s['compared']} differ, {s['not_written']} not "
                  "written")
        return 0
    try:
        spec = claims.load_spec(os.path.join(HERE, "claims.toml"))
        fasi, fasi_c = run_fasi(runner)
        km = run_km(runner, a.km_dir)
        probes = run_probes(runner)
        fp8bits = km_fp8_output_bits(a.km_dir)
        hpec = run_hpec(runner)
        hpec["foil"] = run_hpec(runner, "volta")
        cl = make_claims(spec, fasi, fasi_c, km[:2], km[2], probes, runner, fp8bits, hpec)
    except (io.AnalysisError, ValueError, KeyError, OSError) as e:
        print(f"make_figures: {e}", file=sys.stderr)
        return 2
    claims.write_claims(
        os.path.join(HERE, "CLAIMS.md"),
        "Tensor-core behaviour: carrier's mma: profiles against published hardware "
        "measurements", cl,
        preamble="Regenerate: `bash papers/tensor-core-behaviour/reproduce.sh`. Every number of "
                 "ours is `carrier eval` of an mma: profile (core/mma.hpp) on the CPU; the "
                 "published values are outputs of real GPUs (Fasi et al.'s suite, Khattak and "
                 "Mikaitis's validation data), the mechanism DeepSeek-V3 describes, and MMA-Sim's "
                 "hardware-validated constants. No GPU ran here. Tolerances are exact: bits.",
        spec=spec)
    for c in cl:
        print(f"{c.kind:12} {c.match!s:5} {c.claim}: ours {c.ours}; published {c.published}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
