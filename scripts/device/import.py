#!/usr/bin/env python3
"""Turns what a device run returned (scripts/device/run.sh: results.tar.gz, summary.json, run.log in the device
tool's files folder) into measured data of the repository: results/measured/<gpu>/ (machine, operation table,
the zeropp-bench JSON `zeropp calibrate` reads, trainer and PyTorch results, tests, loss curves, a README), and
prints (or with --calibrate runs) the `zeropp calibrate` command that fits a profile from it.

  python3 scripts/device/import.py FOLDER_OR_TARBALL [MORE ...] [--dest DIR] [--calibrate] [--zeropp ...]

Several calls of one session (a second call reruns the steps the first cut short, STEPS=... BUDGET_<step>=...) are
merged step by step: each step's files come from the last call in which that step finished ("ok": a rerun
supersedes), else from the first call that has them; machine.json says which call each step came from, and the headline numbers are computed
again from the merged files (scripts/device/summarize.py), so a ratio such as zeropp's MFU over PyTorch's can mix
calls: the README lists the call of every number.

The operation table (ops.json) has one entry per measured operation with its shape, the library that ran it, the
time, the rate (TFLOP/s for GEMMs and attention, GB/s for memory-bound kernels) and provenance "measured", the
machine stated once at the top: GEMMs through the trainer's LtMatmul and torch.matmul, attention forward/backward
through PyTorch SDPA per backend, the trainer's memory-bound kernels, block passes and optimizer step.

Refusals (exit 2, one line): a run with no GPU named by nvidia-smi (a rehearsal) unless --rehearsal, and synthetic
data (scripts/device/synthetic.py marks it) unless --allow-synthetic, both only into a --dest outside results/:
nothing that was not measured on a GPU lands in results/measured/.
"""
import argparse
import csv
import datetime
import fnmatch
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# Files of the run copied as they are (when present), under the names the importer gives them.
VERBATIM = {
    "gemm-cublaslt.json": "zeropp-bench-cuda-gemm.json",
    "bench-trainer-cuda.json": "zeropp-bench-cuda-trainer.json",
    "gemm-torch.json": "torch-matmul.json",
    "sdpa.json": "torch-sdpa.json",
    "trainer-gpt3-1.3b.json": "trainer-gpt3-1.3b.json",
    "trainer-gpt3-1.3b-flash.json": "trainer-gpt3-1.3b-flash.json",
    "torch-gpt3-1.3b.json": "torch-gpt3-1.3b.json",
    "torch-gpt3-1.3b-math.json": "torch-gpt3-1.3b-math.json",
    "trainer-llama3-8b-l4.json": "trainer-llama3-8b-l4.json",
    "loss-tiny_gpt-cpu.json": "loss-tiny_gpt-cpu.json",
    "loss-tiny_gpt-cuda.json": "loss-tiny_gpt-cuda.json",
    "loss-tiny_llama-cpu.json": "loss-tiny_llama-cpu.json",
    "loss-tiny_llama-cuda.json": "loss-tiny_llama-cuda.json",
    "tests.json": "tests.json",
    "summary.json": "summary.json",
    "shapes.json": "shapes.json",
    "ncu-flash-F.txt": "ncu-flash-F.txt",  # Nsight Compute's details pages (the ncu_flash step, when selected)
    "ncu-flash-B.txt": "ncu-flash-B.txt",
}
TRACE_LIMIT = 4 << 20  # the trainer's Chrome trace is kept when it is at most this big


def fail(message):
    print(f"import: error: {message}", file=sys.stderr)
    sys.exit(2)


def read_run(path):
    """{member name: bytes} of the run's results.tar.gz (a folder holding it, or the tarball itself)."""
    tarball = os.path.join(path, "results.tar.gz") if os.path.isdir(path) else path
    if not os.path.isfile(tarball):
        fail(f"{path}: no results.tar.gz (the device run's output folder or the tarball itself)")
    files = {}
    try:
        with tarfile.open(tarball) as tar:
            for m in tar.getmembers():
                if m.isfile():
                    files[os.path.basename(m.name)] = tar.extractfile(m).read()
    except (tarfile.TarError, OSError) as e:
        fail(f"{tarball}: not a readable tar.gz ({e})")
    if os.path.isdir(path) and os.path.isfile(os.path.join(path, "run.log")):
        files["run.log"] = open(os.path.join(path, "run.log"), "rb").read()
    return scrub_paths(files)


def scrub_paths(files):
    """The call's files with the device's own folders written as <repo> and <work>: what is committed names no
    machine's paths. env.json says where the checkout and the work folder were (run.sh since 2026-11-27); a call
    without them ran where this checkout is (the device tool copies it to the same path) in run.sh's default
    work folder."""
    try:
        env = json.loads(files.get("env.json", b"{}"))
    except ValueError:
        env = {}
    roots = [(env.get("repo_root") or REPO, "<repo>"), (env.get("work") or "/tmp/zeropp-device", "<work>")]
    out = {}
    for name, data in files.items():
        for path, tag in roots:
            data = data.replace(path.rstrip("/").encode(), tag.encode())
        out[name] = data
    return out


# The files each step of scripts/device/run.sh writes (besides its <step>.log), to merge several calls step by step.
STEP_OUTPUTS = {
    "env": ["nvidia-smi.csv", "nvidia-smi-q.txt", "env.json", "libs.json", "libs.env", "shapes.json"],
    "tests": ["tests.json", "gtest-*.json"],
    "gemm_lt": ["gemm-cublaslt.json"],
    "gemm_torch": ["gemm-torch.json"],
    "sdpa": ["sdpa.json"],
    "kernels": ["bench-trainer-cuda.json"],
    "trainer": ["trainer-gpt3-1.3b.json", "trainer-gpt3-1.3b.trace.json", "gpt3-1.3b-1gpu.plan.json"],
    "torch": ["torch-gpt3-1.3b.json"],
    "trainer_flash": ["trainer-gpt3-1.3b-flash.json", "trainer-gpt3-1.3b-flash.trace.json",
                      "gpt3-1.3b-flash-1gpu.plan.json"],
    "trainer_llama": ["trainer-llama3-8b-l4.json", "trainer-llama3-8b-l4.trace.json", "llama3-8b-l4-1gpu.plan.json"],
    "loss": ["loss-*.json", "tiny_*.plan.json"],
    "torch_math": ["torch-gpt3-1.3b-math.json"],
    "ncu_flash": ["ncu-flash-*.txt", "ncu-flash-*.ncu-rep"],
}
PER_CALL = ("steps.jsonl", "summary.json", "summary.txt", "run.log")  # describe one call: kept per call


def step_of(name):
    for step, patterns in STEP_OUTPUTS.items():
        if name == f"{step}.log" or any(fnmatch.fnmatch(name, p) for p in patterns):
            return step
    return None


def steps_of(files):
    """[{step, status, ...}] of a call's steps.jsonl (empty when absent)."""
    out = []
    for line in files.get("steps.jsonl", b"").decode(errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def merge_calls(calls):
    """(files, {step: call index}, per-call step lists) of several calls' files, step by step (module docstring)."""
    statuses = [{r["step"]: r["status"] for r in steps_of(files)} for files in calls]
    chosen = {}  # step -> the call its files come from: the last that finished it, else the first that has any
    for step in STEP_OUTPUTS:
        ok = [i for i, st in enumerate(statuses) if st.get(step) == "ok"]
        have = [i for i, files in enumerate(calls) if any(step_of(n) == step for n in files)]
        if ok or have:
            chosen[step] = ok[-1] if ok else have[0]
    merged = {}
    for i, files in enumerate(calls):
        for name, data in files.items():
            step = step_of(name)
            if name in PER_CALL or (step is not None and chosen.get(step) != i):
                continue
            merged[name] = data  # a file of no step: the last call's
    steps = []
    for step, i in chosen.items():
        rec = next((r for r in steps_of(calls[i]) if r["step"] == step), {"step": step, "status": "missing"})
        steps.append(dict(rec, call=i + 1))
    merged["steps.jsonl"] = "".join(json.dumps(r) + "\n" for r in steps).encode()
    if len(calls) == 1:
        for name in PER_CALL:
            if name in calls[0]:
                merged[name] = calls[0][name]
    return merged, chosen, [steps_of(files) for files in calls]


def summarize(files):
    """summary.json of merged files, computed again by scripts/device/summarize.py."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in files.items():
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(data)
        subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "summarize.py"), tmp],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        path = os.path.join(tmp, "summary.json")
        return open(path, "rb").read() if os.path.isfile(path) else None


def salvage_benchmarks(text):
    """The complete entries of a Google Benchmark JSON cut short (its step ran out of time and was killed while
    writing): every whole object of its "benchmarks" array, or None when there is none."""
    start = text.find('"benchmarks"')
    start = text.find("[", start) if start >= 0 else -1
    if start < 0:
        return None
    decoder, runs, i = json.JSONDecoder(), [], start + 1
    while True:
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        try:
            obj, i = decoder.raw_decode(text, i)
        except ValueError:
            break
        runs.append(obj)
    return {"benchmarks": runs, "truncated": True} if runs else None


def json_of(files, name):
    if name not in files:
        return None
    try:
        return json.loads(files[name])
    except ValueError as e:
        doc = salvage_benchmarks(files[name].decode(errors="replace"))
        if doc is None:
            fail(f"{name} in the run is not valid JSON ({e})")
        print(f"import: {name} was cut short (its step timed out); keeping its {len(doc['benchmarks'])} complete "
              f"entries", file=sys.stderr)
        return doc


def gpu_row(files):
    if "nvidia-smi.csv" not in files:
        return None
    rows = list(csv.reader(io.StringIO(files["nvidia-smi.csv"].decode(errors="replace"))))
    if len(rows) < 2 or len(rows[1]) != len(rows[0]):
        return None
    return {k.strip(): v.strip() for k, v in zip(rows[0], rows[1])}


def slug(gpu_name):
    """'NVIDIA H100 80GB HBM3' -> 'h100-80gb-hbm3'."""
    s = re.sub(r"^nvidia\s+", "", gpu_name.strip(), flags=re.I).lower()
    return re.sub(r"[^a-z0-9]+", "-", s).strip("-") or "gpu"


def base_cluster(gpu_slug):
    for key, cluster in (("h200", "dgx-h200"), ("h100", "dgx-h100"), ("a100", "dgx-a100-80gb"), ("b200", "dgx-b200")):
        if key in gpu_slug:
            return cluster
    return None


def bench_entries(doc, source):
    """Operation-table entries of a zeropp-bench JSON (GEMMs, layers, optimizer, kernels)."""
    out = []
    for run in (doc or {}).get("benchmarks", []):
        if run.get("run_type") == "aggregate" or run.get("error_occurred"):
            continue
        parts = [p for p in run["run_name"].split("/") if not p.startswith("iterations:") and p != "manual_time"]
        args = dict(p.split(":", 1) for p in parts if ":" in p)
        head = [p for p in parts if ":" not in p]
        unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[run.get("time_unit", "ns")]
        seconds = run["real_time"] * unit
        entry = {"op": "/".join(head), "shape": args, "seconds": seconds, "source": source}
        if "FLOP/s" in run:
            entry["tflops"] = run["FLOP/s"] / 1e12
        if "GB/s" in run:
            entry["GBps"] = run["GB/s"]
        if "params/s" in run:
            entry["params_per_s"] = run["params/s"]
        for k in ("m", "n", "k"):
            if k in run:
                entry["shape"][k] = int(run[k])
        for k in ("flop", "bytes"):
            if k in run:
                entry[k] = run[k]
        out.append(entry)
    return out


def torch_gemm_entries(doc, source):
    out = []
    for r in (doc or {}).get("results", []):
        parts = r["name"].split("/")
        args = dict(p.split(":", 1) for p in parts if ":" in p)
        args.update({"m": r["m"], "n": r["n"], "k": r["k"]})
        out.append({"op": "/".join(p for p in parts if ":" not in p), "shape": args, "seconds": r["seconds"],
                    "tflops": r["flop_per_s"] / 1e12, "source": source})
    return out


def sdpa_entries(doc, source):
    out = []
    for r in (doc or {}).get("results", []):
        if "error" in r:
            continue
        shape = {k: r[k] for k in ("model", "tp", "b", "batch", "heads", "kv_heads", "seq", "head_dim")}
        for pass_, key in (("forward", "forward"), ("backward", "backward")):
            out.append({"op": f"attention/torch-sdpa-{r['backend']}/bf16/causal_{pass_}", "shape": shape,
                        "seconds": r[f"{key}_ms"] / 1e3, "tflops": r[f"{key}_tflops_causal"],
                        "flop": r[f"flop_{key}_causal"], "source": source})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", metavar="run",
                    help="a device call's output folder (results.tar.gz inside) or the tarball; several: merged")
    ap.add_argument("--dest", help="default results/measured/<gpu>")
    ap.add_argument("--calibrate", action="store_true", help="also run zeropp calibrate (needs --zeropp or build/)")
    ap.add_argument("--zeropp", default=os.path.join(REPO, "build", "cost_model", "zeropp"))
    ap.add_argument("--rehearsal", action="store_true",
                    help="accept a run without a GPU (into --dest outside results/)")
    ap.add_argument("--allow-synthetic", action="store_true",
                    help="accept synthetic data (into --dest outside results/)")
    args = ap.parse_args()

    calls = [read_run(r) for r in args.runs]
    files, step_call, call_steps = merge_calls(calls)
    if len(calls) > 1:
        files["summary.json"] = summarize(files) or b"{}"
        print("import: steps from calls " + ", ".join(f"{s} {i + 1}" for s, i in step_call.items()))
    env = json_of(files, "env.json") or {}
    gpu = gpu_row(files)
    synthetic = bool(env.get("synthetic"))
    gpu_name = (gpu or {}).get("name")
    dest = os.path.abspath(args.dest) if args.dest else None
    results = os.path.join(REPO, "results")
    inside_results = dest is None or os.path.commonpath([dest, results]) == results
    if synthetic and not args.allow_synthetic:
        fail("the run is synthetic (env.json: synthetic); pass --allow-synthetic and a --dest outside results/")
    if synthetic and inside_results:
        fail("synthetic data never goes under results/: give a --dest outside it")
    if not gpu_name:
        if not args.rehearsal:
            fail("nvidia-smi named no GPU in this run (a rehearsal?); pass --rehearsal and a --dest outside results/")
        if inside_results:
            fail("a run without a GPU never goes under results/: give a --dest outside it")
    gpu_slug = slug(gpu_name or "no-gpu")
    dest = dest or os.path.join(REPO, "results", "measured", gpu_slug)
    os.makedirs(dest, exist_ok=True)

    copied = []
    for name, target in VERBATIM.items():
        if name in files:
            data = files[name]
            if name.endswith(".json"):  # a benchmark file cut short is written as the entries it completed
                doc = json_of(files, name)
                if doc is not None and doc.get("truncated"):
                    data = (json.dumps(doc, indent=1) + "\n").encode()
            with open(os.path.join(dest, target), "wb") as f:
                f.write(data)
            copied.append(target)
    trace = files.get("trainer-gpt3-1.3b.trace.json")
    if trace is not None and len(trace) <= TRACE_LIMIT:
        with open(os.path.join(dest, "trainer-gpt3-1.3b.trace.json"), "wb") as f:
            f.write(trace)
        copied.append("trainer-gpt3-1.3b.trace.json")

    summary = json_of(files, "summary.json") or {}
    machine = {
        "schema": 1, "kind": "zeropp-measured-machine", "synthetic": synthetic,
        "gpu": gpu, "torch": env.get("torch"), "cpu": env.get("cpu"), "kernel": env.get("kernel"),
        "nvcc_on_device": env.get("nvcc"), "measured_unix": env.get("time_unix"),
        "package": {k: (env.get("package") or {}).get(k) for k in ("commit", "built", "build", "requires")},
        "libraries": (json_of(files, "libs.json") or {}).get("found"),
        "steps": summary.get("steps"),
        "calls": [{"call": i + 1, "steps": st} for i, st in enumerate(call_steps)],
        "step_from_call": {s: i + 1 for s, i in step_call.items()},
    }
    with open(os.path.join(dest, "machine.json"), "w") as f:
        json.dump(machine, f, indent=1)
        f.write("\n")

    ops = (bench_entries(json_of(files, "gemm-cublaslt.json"), "zeropp-bench-cuda-gemm.json")
           + torch_gemm_entries(json_of(files, "gemm-torch.json"), "torch-matmul.json")
           + sdpa_entries(json_of(files, "sdpa.json"), "torch-sdpa.json")
           + bench_entries(json_of(files, "bench-trainer-cuda.json"), "zeropp-bench-cuda-trainer.json"))
    table = {"schema": 1, "kind": "zeropp-operation-table", "provenance": "synthetic" if synthetic else "measured",
             "gpu": gpu_name, "driver": (gpu or {}).get("driver_version"),
             "note": "seconds per operation (median of repetitions; Google Benchmark runs: the mean of the timed "
                     "iterations); tflops = flop / seconds; GBps = fewest bytes / seconds "
                     "(microbench/kernel_bench.hpp)",
             "entries": ops}
    with open(os.path.join(dest, "ops.json"), "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")

    cal_inputs = [os.path.join(dest, t) for t in ("zeropp-bench-cuda-gemm.json", "zeropp-bench-cuda-trainer.json")
                  if t in copied]
    base = base_cluster(gpu_slug)
    profile = os.path.join(REPO, "configs", "clusters", f"{base}-measured.json") if base else None
    calibrate_cmd = None
    if cal_inputs and base:
        calibrate_cmd = [args.zeropp, "calibrate", *cal_inputs, "--base", base, "--name", f"{base}-measured",
                         "-o", profile if not (synthetic or not gpu_name) else os.path.join(dest, "profile.json")]

    title = f"# Measured on {gpu_name or 'no GPU (rehearsal)'}"
    lines = [title + (" (SYNTHETIC: not a measurement)" if synthetic else ""),
             "",
             f"Imported by `scripts/device/import.py` on {datetime.date.today().isoformat()} from a run of "
             f"`scripts/device/run.sh` (package commit {machine['package']['commit']}).",
             "",
             "| what | value |", "|---|---|"]
    if gpu:
        for key in ("name", "driver_version", "memory.total [MiB]", "clocks.sm [MHz]", "clocks.current.sm [MHz]",
                    "clocks.max.sm [MHz]", "clocks.mem [MHz]", "clocks.current.memory [MHz]", "power.limit [W]",
                    "pstate"):
            if key in gpu:
                lines.append(f"| nvidia-smi {key} | {gpu[key]} |")
    if env.get("torch"):
        lines.append(f"| PyTorch | {env['torch'].get('version')} (CUDA {env['torch'].get('cuda')}) |")
    if len(calls) > 1:
        lines += ["", f"{len(calls)} calls of the device tool merged step by step (each step from the last call in "
                  "which it finished):", "", "| call | package commit | steps taken from it | its log |",
                  "|---|---|---|---|"]
        for i, files_i in enumerate(calls):
            taken = [s for s, c in step_call.items() if c == i]
            log = f"run-call{i + 1}.log"
            if "run.log" in files_i:
                with open(os.path.join(dest, log), "wb") as f:
                    f.write(files_i["run.log"])
                copied.append(log)
            commit = ((json_of(files_i, "env.json") or {}).get("package") or {}).get("commit", "?")
            lines.append(f"| {i + 1} | {commit[:12]}{'-dirty' if commit.endswith('-dirty') else ''} | "
                         f"{', '.join(taken) or '-'} | `{log}` |")
    lines += ["", "Files: " + ", ".join(f"`{c}`" for c in ["machine.json", "ops.json", *copied]) + ".", ""]
    if calibrate_cmd:
        lines += ["Profile from these measurements:", "", "```sh",
                  " ".join(os.path.relpath(c, REPO) if os.path.isabs(c) and c.startswith(REPO) else c
                           for c in calibrate_cmd), "```", ""]
    lines += ["Headline numbers (scripts/device/summarize.py, the run's summary.json):", "", "```"]
    headline = ("tests", "gemm", "sdpa", "trainer", "trainer_flash", "torch_step", "mfu_zeropp_over_torch_eager",
                "mfu_zeropp_flash_over_torch_eager", "loss_curve")
    lines += [json.dumps({k: summary.get(k) for k in headline}, indent=1), "```", ""]
    with open(os.path.join(dest, "README.md"), "w") as f:
        f.write("\n".join(lines))

    print(f"import: {len(ops)} operation-table entries, {len(copied)} files -> {os.path.relpath(dest)}")
    if calibrate_cmd:
        print("import: calibrate with: " + " ".join(calibrate_cmd))
        if args.calibrate:
            if not os.path.exists(args.zeropp):
                fail(f"--calibrate: {args.zeropp} does not exist (build it, or pass --zeropp)")
            return subprocess.run(calibrate_cmd).returncode
    else:
        print("import: nothing to calibrate from (no zeropp-bench-cuda results, or an unknown GPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
