#!/usr/bin/env python3
"""torch.matmul bf16 TFLOP/s for the shapes zeropp-bench-cuda measures, to compare cuBLASLt through our code
with cuBLAS through PyTorch on the same GPU in the same job.

Shapes: 8192^3, and the layer GEMMs (QKV, attention output, MLP up and down; F, B and W forms) of GPT-3 1.3B
(h = 2048) and 13B (h = 5120) at s*b = 2048 tokens, the same shapes and row-major layouts as
microbench/gemm_shapes.cpp. Timing: CUDA events around `inner` back-to-back matmuls, median of the
repetitions, after warm-up; inputs uniform in [-1, 1) (never zeros).

With --shapes SHAPES.json (zeropp-bench --zeropp_list_shapes: the layer GEMMs of named models at tp and b,
microbench/model_shapes.hpp) it measures those instead of --hidden/--tokens, named as zeropp-bench-cuda names them
("qkv_F/model:llama3-8b/tp:2/b:1/tokens:8192").

With --compare BENCH.json (zeropp-bench-cuda's --benchmark_out of the same shapes) it prints both rates and
ours / torch per shape: the goal is within 3% (both call cuBLAS).

Exits 0 with a message where PyTorch or a GPU is absent.
Usage: python3 microbench/compare_torch.py [--hidden 2048,5120] [--tokens 2048] [--square 8192] [--json OUT]
                                           [--shapes SHAPES.json] [--repetitions 10] [--compare BENCH.json]
"""
import argparse
import json
import os
import statistics
import sys


def layer_gemms(h, tokens):
    """(name, m, n, k, transpose_a, transpose_b) of one GPT block, as microbench/gemm_shapes.cpp defines them."""
    out = []
    for layer, fan_in, fan_out in (("qkv", h, 3 * h), ("attn_out", h, h), ("mlp_up", h, 4 * h), ("mlp_down", 4 * h, h)):
        out.append((f"{layer}_F", tokens, fan_out, fan_in, False, True))   # Y = X W^T, W [out x in]
        out.append((f"{layer}_B", tokens, fan_in, fan_out, False, False))  # dX = dY W
        out.append((f"{layer}_W", fan_out, fan_in, tokens, True, False))   # dW = dY^T X
    return out


def time_matmul(torch, m, n, k, transpose_a, transpose_b, repetitions=10):
    gen = torch.Generator(device="cuda").manual_seed(1)
    a = torch.rand((k, m) if transpose_a else (m, k), device="cuda", dtype=torch.float32, generator=gen) * 2 - 1
    b = torch.rand((n, k) if transpose_b else (k, n), device="cuda", dtype=torch.float32, generator=gen) * 2 - 1
    a, b = a.to(torch.bfloat16), b.to(torch.bfloat16)
    op_a = a.t() if transpose_a else a
    op_b = b.t() if transpose_b else b
    # Check against float64 on a few rows before timing.
    c = torch.matmul(op_a, op_b)
    ref = torch.matmul(op_a[:4].double(), op_b.double())
    err = (c[:4].double() - ref).norm() / ref.norm()
    if not torch.isfinite(err) or err > 1e-2:
        raise RuntimeError(f"matmul {m}x{n}x{k}: relative error {err:.3g} against float64")
    flop = 2.0 * m * n * k
    inner = max(1, min(1000, int(2e12 / flop)))  # about 2 ms of work per timed repetition at ~1 PFLOP/s
    for _ in range(inner):
        torch.matmul(op_a, op_b, out=c)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repetitions):
        start.record()
        for _ in range(inner):
            torch.matmul(op_a, op_b, out=c)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e-3 / inner)
    seconds = statistics.median(times)
    return seconds, flop / seconds


def zeropp_rates(path):
    """FLOP/s per shape ("square/n:8192", "qkv_F/h:2048/tokens:2048") from zeropp-bench-cuda JSON: the median
    over repetitions of the FLOP/s counter of each gemm/cublaslt/bf16/... run."""
    with open(path) as f:
        runs = json.load(f)["benchmarks"]
    rates = {}
    for run in runs:
        if run.get("run_type") == "aggregate" or run.get("error_occurred") or "FLOP/s" not in run:
            continue
        parts = [p for p in run["run_name"].split("/") if not p.startswith("iterations:") and p != "manual_time"]
        if parts[:3] != ["gemm", "cublaslt", "bf16"]:
            continue
        rates.setdefault("/".join(parts[3:]), []).append(run["FLOP/s"])
    return {k: statistics.median(v) for k, v in rates.items()}


def compare(rows, path):
    ours = zeropp_rates(path)
    print(f"\n{'benchmark':<56} {'zeropp TFLOP/s':>15} {'torch TFLOP/s':>14} {'ours/torch':>11}")
    for row in rows:
        key = row["name"].removeprefix("gemm/torch/bf16/")
        if key not in ours:
            print(f"{key:<56} {'(not measured)':>15} {row['flop_per_s'] / 1e12:>14.1f}")
            continue
        ratio = ours[key] / row["flop_per_s"]
        flag = "" if ratio >= 0.97 else "  below 97%"
        print(f"{key:<56} {ours[key] / 1e12:>15.1f} {row['flop_per_s'] / 1e12:>14.1f} {ratio:>11.3f}{flag}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hidden", default="2048,5120", help="hidden sizes (1.3B: 2048, 13B: 5120)")
    parser.add_argument("--tokens", default="2048", help="tokens s*b")
    parser.add_argument("--square", default="8192", help="square GEMM sizes")
    parser.add_argument("--shapes", help="zeropp-bench --zeropp_list_shapes JSON: measure its GEMMs instead of --hidden")
    parser.add_argument("--repetitions", type=int, default=10, help="timed repetitions per shape (median)")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--compare", help="zeropp-bench-cuda JSON results of the same shapes to compare with")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("compare_torch: PyTorch is not installed; skipping the comparison")
        return 0
    if not torch.cuda.is_available():
        print("compare_torch: no CUDA GPU visible to PyTorch; skipping the comparison")
        return 0

    shapes = [(f"square/n:{n}", n, n, n, False, False) for n in map(int, filter(None, args.square.split(",")))]
    if args.shapes:
        with open(args.shapes) as f:
            listed = json.load(f)["gemms"]
        shapes += [(f"{g['gemm']}/{g['case']}", g["m"], g["n"], g["k"], g["transpose_a"], g["transpose_b"])
                   for g in listed]
    else:
        for h in map(int, filter(None, args.hidden.split(","))):
            for tokens in map(int, filter(None, args.tokens.split(","))):
                shapes += [(f"{name}/h:{h}/tokens:{tokens}", m, n, k, ta, tb)
                           for name, m, n, k, ta, tb in layer_gemms(h, tokens)]

    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  cuda {torch.version.cuda}")
    print(f"{'benchmark':<56} {'m':>6} {'n':>6} {'k':>6} {'time us':>10} {'TFLOP/s':>9}")
    rows = []

    def write():
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"schema": 1, "tool": "microbench/compare_torch.py", "device": torch.cuda.get_device_name(),
                           "torch": torch.__version__, "cuda": torch.version.cuda, "results": rows,
                           "complete": len(rows) == len(shapes)}, f, indent=1)

    for name, m, n, k, ta, tb in shapes:
        seconds, rate = time_matmul(torch, m, n, k, ta, tb, args.repetitions)
        rows.append({"name": "gemm/torch/bf16/" + name, "m": m, "n": n, "k": k, "transpose_a": ta, "transpose_b": tb,
                     "seconds": seconds, "flop_per_s": rate})
        print(f"{name:<56} {m:>6} {n:>6} {k:>6} {seconds * 1e6:>10.1f} {rate / 1e12:>9.1f}")
        torch.cuda.empty_cache()
        write()  # after every shape: a run cut short keeps what it measured
    if args.compare:
        if os.path.exists(args.compare):
            compare(rows, args.compare)
        else:
            print(f"compare_torch: {args.compare} does not exist; no comparison")
    return 0


if __name__ == "__main__":
    sys.exit(main())
