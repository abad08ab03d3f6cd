#!/usr/bin/env python3
"""The headline numbers of a device run (scripts/device/run.sh) from what its steps wrote into WORK: writes
WORK/summary.json and prints a short table. Anything a step did not produce is reported as missing, never guessed.

MFU: model FLOPs per step over step time over a stated peak (--peak, default 989e12: H100 SXM dense bf16, the
NVIDIA datasheet; H200 SXM has the same), for zeropp and PyTorch with one formula (the trainer's and
e2e/compare_torch.py's FLOP counts are printed side by side so a difference in convention shows).
Usage: summarize.py WORK [--peak 989e12]
"""
import argparse
import csv
import json
import os
import statistics
import sys


def load(work, name):
    path = os.path.join(work, name)
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def gpu_info(work):
    try:
        with open(os.path.join(work, "nvidia-smi.csv")) as f:
            rows = list(csv.reader(f))
        return {k.strip(): v.strip() for k, v in zip(rows[0], rows[1])} if len(rows) >= 2 else None
    except (OSError, IndexError):
        return None


def bench_runs(doc, prefix):
    """{name without Google Benchmark's suffixes: run} of a zeropp-bench JSON, runs that reported no error."""
    out = {}
    for run in (doc or {}).get("benchmarks", []):
        if run.get("run_type") == "aggregate" or run.get("error_occurred"):
            continue
        parts = [p for p in run["run_name"].split("/") if not p.startswith("iterations:") and p != "manual_time"]
        name = "/".join(parts)
        if name.startswith(prefix):
            out[name] = run
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work")
    ap.add_argument("--peak", type=float, default=989e12)
    args = ap.parse_args()
    w = args.work
    s = {"schema": 1, "kind": "zeropp-device-summary", "peak_flops": args.peak, "gpu": gpu_info(w)}
    env = load(w, "env.json") or {}
    s["torch"] = env.get("torch")
    s["package_commit"] = (env.get("package") or {}).get("commit")
    try:
        with open(os.path.join(w, "steps.jsonl")) as f:
            s["steps"] = [json.loads(line) for line in f if line.strip()]
    except OSError:
        s["steps"] = []
    tests = load(w, "tests.json")
    s["tests"] = tests["totals"] if tests else None

    lt = bench_runs(load(w, "gemm-cublaslt.json"), "gemm/cublaslt/bf16/")
    torch_rows = (load(w, "gemm-torch.json") or {}).get("results", [])
    torch_gemm = {r["name"].removeprefix("gemm/torch/bf16/"): r for r in torch_rows}
    torch_square = torch_gemm.get("square/n:8192")
    ratios = []
    for name, run in lt.items():
        key = name.removeprefix("gemm/cublaslt/bf16/")
        if key in torch_gemm and torch_gemm[key]["flop_per_s"] > 0:
            ratios.append(run["FLOP/s"] / torch_gemm[key]["flop_per_s"])
    square = lt.get("gemm/cublaslt/bf16/square/n:8192")
    s["gemm"] = {
        "cublaslt_shapes": len(lt), "torch_shapes": len(torch_gemm),
        "cublaslt_square8192_tflops": square["FLOP/s"] / 1e12 if square else None,
        "torch_square8192_tflops": torch_square["flop_per_s"] / 1e12 if torch_square else None,
        "cublaslt_over_torch_median": statistics.median(ratios) if ratios else None,
        "cublaslt_over_torch_min": min(ratios) if ratios else None,
    }
    sdpa = (load(w, "sdpa.json") or {}).get("results", [])
    s["sdpa"] = {}
    for backend in sorted({r["backend"] for r in sdpa}):
        ok = [r for r in sdpa if r["backend"] == backend and "error" not in r]
        s["sdpa"][backend] = {
            "shapes": len(ok), "errors": sum(1 for r in sdpa if r["backend"] == backend and "error" in r),
            "forward_tflops_causal_median": statistics.median(r["forward_tflops_causal"] for r in ok) if ok else None,
            "backward_tflops_causal_median": statistics.median(r["backward_tflops_causal"] for r in ok) if ok else None,
        }
    kernels = bench_runs(load(w, "bench-trainer-cuda.json"), "kernel/")
    s["kernels_GBps"] = {name: run.get("GB/s") for name, run in kernels.items()}
    attention = bench_runs(load(w, "bench-trainer-cuda.json"), "attention/")
    s["attention_tflops_causal"] = {name: run.get("FLOP/s_causal", 0) / 1e12 for name, run in attention.items()}
    layers = bench_runs(load(w, "bench-trainer-cuda.json"), "layer/")
    s["layer_tflops"] = {name: run.get("FLOP/s", 0) / 1e12 for name, run in layers.items()}

    def trainer_summary(z):
        mc = z.get("model_comparison") or {}
        return {
            "tokens_per_second": z["tokens_per_second"], "iteration_seconds": z["iteration_seconds"],
            "timed_steps": z.get("timed_steps"),
            "model_flops_per_iteration": z["model_flops_per_iteration"],
            "mfu": z["model_flops_per_iteration"] / z["iteration_seconds"] / args.peak,
            "peak_memory_bytes": max(m["backend_peak_bytes"] for m in z["memory_per_rank"]),
            "predicted_iteration_seconds": mc.get("predicted_iteration_s"),
            "prediction_relative_error": mc.get("iteration_relative_error"),
            "prediction_costs": mc.get("costs"),
        }

    for key, name in (("trainer", "trainer-gpt3-1.3b.json"), ("trainer_flash", "trainer-gpt3-1.3b-flash.json")):
        z = load(w, name)
        if z:
            s[key] = trainer_summary(z)
    t = load(w, "torch-gpt3-1.3b.json")
    s["torch_step"] = {}
    for doc in (t, load(w, "torch-gpt3-1.3b-math.json")):
        for r in (doc or {}).get("results", []):
            key = r["mode"] + ("" if doc is t else "_math")
            s["torch_step"][key] = {"tokens_per_second": r["tokens_per_second"],
                                    "step_seconds": r["step_seconds_median"],
                                    "model_flops_per_step": r["model_flops_per_step"],
                                    "mfu": r["model_flops_per_step"] / r["step_seconds_median"] / args.peak,
                                    "peak_memory_bytes": r["peak_memory_bytes"]}
    if "trainer" in s and "eager" in s["torch_step"]:
        s["mfu_zeropp_over_torch_eager"] = s["trainer"]["mfu"] / s["torch_step"]["eager"]["mfu"]
    if "trainer_flash" in s and "eager" in s["torch_step"]:
        s["mfu_zeropp_flash_over_torch_eager"] = s["trainer_flash"]["mfu"] / s["torch_step"]["eager"]["mfu"]
    s["loss_curve"] = {}
    for model in ("tiny_gpt", "tiny_llama"):
        cpu, gpu = load(w, f"loss-{model}-cpu.json"), load(w, f"loss-{model}-cuda.json")
        if cpu and gpu:
            diffs = [abs(g - c) / abs(c) for c, g in zip(cpu["losses"], gpu["losses"])]
            s["loss_curve"][model] = {"steps": len(diffs), "cpu_first_last": [cpu["losses"][0], cpu["losses"][-1]],
                                      "cuda_first_last": [gpu["losses"][0], gpu["losses"][-1]],
                                      "max_relative_difference": max(diffs) if diffs else None}
    with open(os.path.join(w, "summary.json"), "w") as f:
        json.dump(s, f, indent=1)

    def fmt(v, spec=".1f"):
        return "missing" if v is None else format(v, spec)

    g = s["gpu"] or {}
    print(f"gpu: {g.get('name', 'missing')}, driver {g.get('driver_version', '?')}, "
          f"SM clock {g.get('clocks.current.sm [MHz]', g.get('clocks.sm [MHz]', '?'))} "
          f"(max {g.get('clocks.max.sm [MHz]', '?')}), power limit {g.get('power.limit [W]', '?')}")
    for st in s["steps"]:
        print(f"  step {st['step']:11s} {st['status']:12s} {fmt(st['ms'] / 1e3 if st['ms'] is not None else None)} s")
    print(f"tests: {s['tests']}")
    gm = s["gemm"]
    print(f"gemm: {gm['cublaslt_shapes']} LtMatmul / {gm['torch_shapes']} torch shapes; 8192^3 "
          f"{fmt(gm['cublaslt_square8192_tflops'])} vs {fmt(gm['torch_square8192_tflops'])} TFLOP/s; "
          f"LtMatmul/torch median {fmt(gm['cublaslt_over_torch_median'], '.3f')}, "
          f"min {fmt(gm['cublaslt_over_torch_min'], '.3f')}")
    for backend, r in s["sdpa"].items():
        print(f"sdpa {backend}: {r['shapes']} shapes ({r['errors']} errors), causal TFLOP/s median fwd "
              f"{fmt(r['forward_tflops_causal_median'])} bwd {fmt(r['backward_tflops_causal_median'])}")
    for name, tflops in s.get("attention_tflops_causal", {}).items():
        print(f"zeropp {name}: {tflops:.1f} TFLOP/s (causal count, as sdpa's)")
    if "trainer" in s:
        tr = s["trainer"]
        err = tr["prediction_relative_error"]
        print(f"zeropp-train gpt3-1.3b: {tr['tokens_per_second']:.0f} tokens/s, MFU {100 * tr['mfu']:.1f}%, peak "
              f"{tr['peak_memory_bytes'] / 2**30:.2f} GiB; predicted step "
              f"{fmt(tr['predicted_iteration_seconds'], '.4f')} s vs measured {tr['iteration_seconds']:.4f} s "
              f"({fmt(100 * err if err is not None else None, '+.1f')}%)")
    else:
        print("zeropp-train gpt3-1.3b: missing")
    if "trainer_flash" in s:
        tr = s["trainer_flash"]
        print(f"zeropp-train gpt3-1.3b, flash attention: {tr['tokens_per_second']:.0f} tokens/s, MFU "
              f"{100 * tr['mfu']:.1f}%, step {tr['iteration_seconds']:.4f} s")
    for mode, r in s["torch_step"].items():
        print(f"torch {mode}: {r['tokens_per_second']:.0f} tokens/s, MFU {100 * r['mfu']:.1f}%, peak "
              f"{r['peak_memory_bytes'] / 2**30:.2f} GiB")
    if "mfu_zeropp_over_torch_eager" in s:
        print(f"MFU zeropp / torch eager: {s['mfu_zeropp_over_torch_eager']:.3f} (goal >= 0.8)")
    if "mfu_zeropp_flash_over_torch_eager" in s:
        print(f"MFU zeropp (flash) / torch eager: {s['mfu_zeropp_flash_over_torch_eager']:.3f}")
    for model, lc in s["loss_curve"].items():
        print(f"loss curve of {model}: {lc['steps']} steps, CPU {lc['cpu_first_last']} CUDA {lc['cuda_first_last']}, "
              f"max relative difference {lc['max_relative_difference']:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
