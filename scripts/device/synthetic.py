#!/usr/bin/env python3
"""SYNTHETIC device-run output, for testing the importer and `zeropp calibrate` on data of the right shape
without a GPU. Nothing here is a measurement: every time comes from a made-up formula below, env.json says
"synthetic": true and the GPU is named "... (SYNTHETIC)"; scripts/device/import.py refuses to put it under
results/. Never commit its output as results.

  python3 scripts/device/synthetic.py OUT_FOLDER --shapes SHAPES.json   (zeropp-bench --zeropp_list_shapes)
writes OUT_FOLDER/results.tar.gz and OUT_FOLDER/summary.json as scripts/device/run.sh does.
"""
import argparse
import io
import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile

PEAK = 989e12  # the dgx-h100 profile's dense bf16 peak, so that the made-up efficiencies stay below 1


def made_up_efficiency(flop):
    """A smooth curve in log FLOPs between 0.30 and 0.75: made up, so that a fit has something to fit."""
    return 0.30 + 0.45 / (1 + math.exp(-(math.log10(flop) - 10.5) * 2))


def gbench(name, seconds, counters):
    return {"name": name + "/iterations:5/manual_time", "run_name": name + "/iterations:5/manual_time",
            "run_type": "iteration", "repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 5,
            "real_time": seconds * 1e6, "cpu_time": seconds * 1e6, "time_unit": "us", **counters}


def bench_doc(runs):
    return {"context": {"date": "synthetic", "executable": "synthetic", "zeropp_backend": "cuda", "zeropp_ranks": "1",
                        "zeropp_nodes": "1", "zeropp_ranks_per_node": "1", "synthetic": "true"},
            "benchmarks": runs}


def layer_flop(h, s, b, p):
    bs, linear, attention = b * s, 24.0 * b * s * h * h, 4.0 * b * s * s * h
    return {"F": linear + attention, "B": linear + 2 * attention, "W": linear}[p]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--shapes", required=True)
    args = ap.parse_args()
    shapes = json.load(open(args.shapes))
    files = {}
    files["env.json"] = {"schema": 1, "synthetic": True, "cpu": "synthetic", "package": {"commit": "synthetic"},
                         "torch": {"version": "synthetic", "cuda": "synthetic"}}
    files["nvidia-smi.csv"] = ("name, driver_version, clocks.current.sm [MHz], clocks.max.sm [MHz], power.limit [W]\n"
                               "NVIDIA H100 80GB HBM3 (SYNTHETIC), 0.0 (synthetic), 0 MHz, 0 MHz, 0 W\n")
    gemm = [gbench("gemm/cublaslt/bf16/square/n:8192", 2 * 8192**3 / (0.75 * PEAK),
                   {"flop": 2 * 8192**3, "FLOP/s": 0.75 * PEAK, "m": 8192, "n": 8192, "k": 8192})]
    torch_rows = []
    for g in shapes["gemms"]:
        e = made_up_efficiency(g["flop"])
        name = f"{g['gemm']}/{g['case']}"
        gemm.append(gbench("gemm/cublaslt/bf16/" + name, g["flop"] / (e * PEAK),
                           {"flop": g["flop"], "FLOP/s": e * PEAK, "m": g["m"], "n": g["n"], "k": g["k"]}))
        torch_rows.append({"name": "gemm/torch/bf16/" + name, "m": g["m"], "n": g["n"], "k": g["k"],
                           "transpose_a": g["transpose_a"], "transpose_b": g["transpose_b"],
                           "seconds": g["flop"] / (1.02 * e * PEAK), "flop_per_s": 1.02 * e * PEAK})
    files["gemm-cublaslt.json"] = bench_doc(gemm)
    files["gemm-torch.json"] = {"schema": 1, "tool": "synthetic", "results": torch_rows, "complete": True}
    sdpa = []
    for a in shapes["attention"]:
        full = 4.0 * a["batch"] * a["heads"] * a["seq"] ** 2 * a["head_dim"]
        for backend in ("flash", "cudnn", "default"):
            keys = ("model", "tp", "b", "batch", "heads", "kv_heads", "seq", "head_dim")
            sdpa.append({"case": a["case"], "backend": backend, **{k: a[k] for k in keys},
                         "forward_ms": full / 2 / 400e12 * 1e3, "backward_ms": 2.5 * full / 2 / 300e12 * 1e3,
                         "forward_tflops_causal": 400.0,
                         "backward_tflops_causal": 300.0, "flop_forward_causal": full / 2,
                         "flop_backward_causal": 2.5 * full / 2})
    files["sdpa.json"] = {"schema": 1, "tool": "synthetic", "results": sdpa}
    trainer_runs = []
    for h, heads in ((2048, 16), (5120, 40)):
        for p in "FBW":
            flop = layer_flop(h, 2048, 1, p)
            trainer_runs.append(gbench(f"layer/trainer/bf16/{p}/h:{h}/a:{heads}/s:2048/b:1",
                                       flop / (made_up_efficiency(flop / 8) * PEAK) * 1.25,
                                       {"flop": flop, "FLOP/s": 0.5 * PEAK}))
    for params in (16777216, 67108864, 268435456):
        trainer_runs.append(gbench(f"optimizer/trainer/fp32/params:{params}", params / 2e10,
                                   {"params": params, "params/s": 2e10}))
    for op, rows, cols, nbytes in (("layernorm_F", 8192, 4096, 2 * 8192 * 4096 * 2),
                                   ("gelu_F", 8192, 16384, 2 * 8192 * 16384 * 2)):
        trainer_runs.append(gbench(f"kernel/cuda/bf16/{op}/rows:{rows}/cols:{cols}", nbytes / 2.5e12,
                                   {"bytes": nbytes, "GB/s": 2500.0}))
    files["bench-trainer-cuda.json"] = bench_doc(trainer_runs)
    files["trainer-gpt3-1.3b.json"] = {"kind": "zeropp-train", "schema": 1, "tokens_per_second": 1.0,
                                       "iteration_seconds": 1.0, "model_flops_per_iteration": 1.0,
                                       "memory_per_rank": [{"backend_peak_bytes": 1.0}], "losses": [1.0],
                                       "model_comparison": {"predicted_iteration_s": 1.0,
                                                            "iteration_relative_error": 0.0, "costs": "synthetic"}}
    for model in ("tiny_gpt", "tiny_llama"):
        files[f"loss-{model}-cpu.json"] = {"losses": [4.0, 3.9, 3.8]}
        files[f"loss-{model}-cuda.json"] = {"losses": [4.0, 3.9, 3.81]}
    files["tests.json"] = {"schema": 1, "kind": "zeropp-device-tests", "results": [],
                           "totals": {"passed": 0, "failed": 0, "skipped": 0}}
    files["steps.jsonl"] = "".join(json.dumps({"step": s, "status": "synthetic", "rc": 0, "budget_s": 0, "at_s": 0,
                                               "ms": 0}) + "\n" for s in ("env", "gemm_lt", "kernels"))
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        for name, content in files.items():
            with open(os.path.join(work, name), "w") as f:
                f.write(content if isinstance(content, str) else json.dumps(content, indent=1))
        subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "summarize.py"), work], check=True,
                       capture_output=True)
        with tarfile.open(os.path.join(args.out, "results.tar.gz"), "w:gz") as tar:
            for name in sorted(os.listdir(work)):
                tar.add(os.path.join(work, name), arcname="./" + name)
        with open(os.path.join(work, "summary.json")) as src, open(os.path.join(args.out, "summary.json"), "w") as dst:
            dst.write(src.read())
    print(f"synthetic: {args.out}/results.tar.gz ({len(gemm)} GEMMs, {len(sdpa)} attention rows; SYNTHETIC, "
          "not measured)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
