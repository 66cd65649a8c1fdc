#!/usr/bin/env python3
"""Times carrier's FlashAttention forward kernel against PyTorch's scaled_dot_product_attention.

    python3 scripts/gpu_bench_attention.py --bench build-gpu/bin/carrier_gpu_bench [--repeats R]

Runs `carrier_gpu_bench --attention-only`, which prints one line per configuration
(attention,SEQ_LEN,HEAD_DIM,CAUSAL,EXP,SECONDS: one head, fp16 inputs, block 64 x 64, median of
R runs), then times torch.nn.functional.scaled_dot_product_attention on the same shapes (batch 1,
one head, fp16, the median of R runs by CUDA events) in the same session, and prints one table.
Not a target (carrier's kernel is a readable study kernel on CUDA cores; SDPA dispatches to
FlashAttention or memory-efficient tensor-core kernels): the ratio says how far apart they are.
Exit 2 with one line when torch or a GPU is missing or the benchmark fails.
"""
import argparse
import statistics
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", required=True, help="path to carrier_gpu_bench")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    if args.repeats < 1:
        print("gpu_bench_attention: --repeats must be at least 1", file=sys.stderr)
        return 2
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"gpu_bench_attention: torch is not importable ({e})", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("gpu_bench_attention: no GPU: torch.cuda.is_available() is False", file=sys.stderr)
        return 2
    run = subprocess.run([args.bench, "--attention-only", "--repeats", str(args.repeats)],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(f"gpu_bench_attention: {args.bench} failed: {run.stderr.strip()}", file=sys.stderr)
        return 2
    ours = {}
    for line in run.stdout.splitlines():
        parts = line.split(",")
        if len(parts) == 6 and parts[0] == "attention":
            ours[(int(parts[1]), int(parts[2]), parts[3] == "1", parts[4])] = float(parts[5])
    if not ours:
        print("gpu_bench_attention: the benchmark printed no attention lines", file=sys.stderr)
        return 2

    def sdpa_seconds(n: int, d: int, causal: bool) -> float:
        gen = torch.Generator(device="cuda").manual_seed(n + d)
        q, k, v = (torch.rand(1, 1, n, d, device="cuda", dtype=torch.float16, generator=gen) * 2 - 1
                   for _ in range(3))
        F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch.cuda.synchronize()
        times = []
        for _ in range(args.repeats):
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)
            start.record()
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            stop.record()
            stop.synchronize()
            times.append(start.elapsed_time(stop) * 1e-3)
        return statistics.median(times)

    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, fp16, one head, "
          f"median of {args.repeats} runs")
    header = (f"{'seq_len':>8} {'head_dim':>8} {'causal':>6} {'carrier portable ms':>20} "
              f"{'carrier fast ms':>16} {'SDPA ms':>10} {'fast / SDPA':>12}")
    print(header)
    shapes = sorted({(n, d, c) for (n, d, c, _) in ours})
    for n, d, causal in shapes:
        sdpa = sdpa_seconds(n, d, causal)
        portable = ours.get((n, d, causal, "portable"), float("nan"))
        fast = ours.get((n, d, causal, "fast"), float("nan"))
        print(f"{n:>8} {d:>8} {int(causal):>6} {portable * 1e3:>20.3f} {fast * 1e3:>16.3f} "
              f"{sdpa * 1e3:>10.3f} {fast / sdpa:>12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
