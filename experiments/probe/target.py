"""Black-box summation targets for `carrier probe` (run with /usr/bin/python3).

usage: target.py TARGET DTYPE N

TARGET is one of numpy.sum, numpy.add.reduce:strided (np.add.reduce over a view with stride
2 into a buffer twice as long), numpy.dot and numpy.matmul (N = 2K values: np.dot, or
np.matmul of two 1-D arrays, of the first K and the last K; carrier probe dot:...),
python.sum (the built-in sum over a list of Python floats), torch.sum, torch.logsumexp,
torch.matmul (CPU tensors, torch.matmul of two 1-D tensors as numpy.matmul; needs
`import torch`). DTYPE is fp32 or fp64, or bf16 for torch.matmul (the values, bf16 values
already, are converted to torch.bfloat16 exactly; the bf16 result is printed exactly).

The first line written is "ok DESCRIPTION" or "error REASON" (then exit 3). Then, per line
read from stdin:
  b K               a batch: the next K lines are inputs given sparsely, each
                      v BG F1 C1 S1 V1 F2 C2 S2 V2 ...
                    (every value BG, then for each run x[F + k*S] = V for k < C, in order;
                    BG and V as float.hex); answers one line of K float.hex results, in order
  x V1 V2 ... VN    the target on these values (float.hex or decimal); answers one float.hex
  q                 exit
The values are stored in DTYPE before the call; results are printed exactly (float.hex of
the result converted to a Python float, which is exact for fp32 and fp64 results).
"""
import sys


def fail(reason):
    print("error " + reason, flush=True)
    sys.exit(3)


class Sparse:
    """Sparse inputs written into one buffer: only the runs of the previous input are reset
    when the background stays, so a mask over 10^6 values costs a few slice stores."""

    def __init__(self, buf, arg, evaluate, n):
        self.buf, self.arg, self.evaluate, self.n = buf, arg, evaluate, n
        self.background = None
        self.runs = []

    def run(self, words):
        bg = float.fromhex(words[1])
        runs = []
        for k in range(2, len(words), 4):
            f, c, s = int(words[k]), int(words[k + 1]), int(words[k + 2])
            if c < 1 or s < 1 or f + (c - 1) * s >= self.n:
                fail("a run past the end of the input")
            runs.append((f, c, s, float.fromhex(words[k + 3])))
        if bg == self.background:
            for f, c, s, _ in self.runs:
                self.buf[f:f + (c - 1) * s + 1:s] = bg
        else:
            self.buf[:] = bg
            self.background = bg
        for f, c, s, v in runs:
            self.buf[f:f + (c - 1) * s + 1:s] = v
        self.runs = runs
        return self.evaluate(self.arg)

    def forget(self):
        self.background = None


def main():
    if len(sys.argv) != 4:
        fail("usage: target.py TARGET DTYPE N")
    target, dtype, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if dtype not in ("fp32", "fp64") and not (dtype == "bf16" and target == "torch.matmul"):
        fail("dtype must be fp32 or fp64 (or bf16 for torch.matmul), got " + dtype)
    if target in ("numpy.dot", "numpy.matmul", "torch.matmul") and n % 2:
        fail(target + " needs an even N (a then b)")
    if n < 1:
        fail("n must be at least 1")

    if target.startswith("torch."):
        try:
            import torch  # noqa: F401 (optional dependency: Debian's python3-torch)
        except Exception as e:  # ImportError, or a broken install
            fail("torch is not importable under " + sys.executable + " (" + type(e).__name__ +
                 ": " + str(e) + "); install Debian's python3-torch")
        import numpy as np
        tdt = {"fp32": torch.float32, "fp64": torch.float64, "bf16": torch.bfloat16}[dtype]
        # bf16: the shared buffer holds fp32 (numpy has no bfloat16), converted exactly.
        ndt = np.float64 if dtype == "fp64" else np.float32
        # The masks are written through a numpy array that shares its memory with the tensor
        # (torch.from_numpy): one element store costs ~100 ns there against several us through
        # tensor indexing, so a probe call costs about one torch.sum. The random checks below
        # use fresh torch.tensor allocations (torch's own allocator, other alignment), so a
        # tree that depended on the buffer's address would fail the probe's verification.
        arr = np.ones(n, dtype=ndt)
        buf = torch.from_numpy(arr)
        if target == "torch.sum":
            def evaluate(t):
                return float(torch.sum(t).item())
        elif target == "torch.logsumexp":
            def evaluate(t):
                return float(torch.logsumexp(t, 0).item())
        elif target == "torch.matmul":
            # N = 2K values: torch.matmul of the first K and the last K as 1-D tensors.
            def evaluate(t):
                t = t.to(tdt)
                return float(torch.matmul(t[:n // 2], t[n // 2:]).item())
        else:
            fail("unknown torch target " + target)

        target_buf, target_arg = arr, buf

        def run_values(vals):
            return evaluate(torch.tensor(vals, dtype=tdt))
        # The vector width torch dispatched to decides the tree (torch:LANES): say which.
        caps = [ln.split(":", 1)[1].strip() for ln in torch.__config__.show().splitlines()
                if "CPU capability usage" in ln]
        desc = target + " (torch " + torch.__version__ + ", " + dtype + ", CPU " + \
            (caps[0] if caps else "capability unknown") + ", " + \
            str(torch.get_num_threads()) + " threads)"
    else:
        import numpy as np
        ndt = np.float32 if dtype == "fp32" else np.float64
        if target == "numpy.sum":
            buf = np.ones(n, dtype=ndt)
            view = buf

            def evaluate(v):
                return float(np.sum(v))
        elif target == "numpy.add.reduce:strided":
            buf = np.ones(2 * n, dtype=ndt)
            view = buf[::2]

            def evaluate(v):
                return float(np.add.reduce(v))
        elif target == "numpy.dot":
            # N = 2K values: a_0..a_{K-1} then b_0..b_{K-1} (carrier probe dot:numpy.dot).
            buf = np.ones(n, dtype=ndt)
            view = buf

            def evaluate(v):
                return float(np.dot(v[:n // 2], v[n // 2:]))
        elif target == "numpy.matmul":
            # As numpy.dot, through np.matmul of two 1-D arrays (a @ b).
            buf = np.ones(n, dtype=ndt)
            view = buf

            def evaluate(v):
                return float(np.matmul(v[:n // 2], v[n // 2:]))
        elif target == "python.sum":
            buf = np.ones(n, dtype=ndt)
            view = buf

            def evaluate(v):
                return float(sum(float(t) for t in v))
        else:
            fail("unknown target " + target + " (numpy.sum numpy.add.reduce:strided numpy.dot "
                 "numpy.matmul python.sum torch.sum torch.logsumexp torch.matmul)")

        target_buf, target_arg = view, view

        def run_values(vals):
            view[:] = np.array(vals, dtype=np.float64).astype(ndt)
            return evaluate(view)
        desc = target + " (numpy " + np.__version__ + ", " + dtype + ")"

    sparse = Sparse(target_buf, target_arg, evaluate, n)
    print("ok " + desc, flush=True)
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "q":
            break
        if parts[0] == "b":
            res = []
            for _ in range(int(parts[1])):
                words = sys.stdin.readline().split()
                if not words or words[0] != "v" or len(words) % 4 != 2:
                    fail("expected a line 'v BG F C S V ...' in a batch")
                res.append(sparse.run(words))
            sys.stdout.write(" ".join(r.hex() for r in res) + "\n")
        elif parts[0] == "x":
            vals = [float.fromhex(t) if "x" in t or "p" in t else float(t) for t in parts[1:]]
            if len(vals) != n:
                fail("expected %d values, got %d" % (n, len(vals)))
            sparse.forget()
            sys.stdout.write(run_values(vals).hex() + "\n")
        else:
            fail("unknown command " + parts[0])
        sys.stdout.flush()


if __name__ == "__main__":
    main()
