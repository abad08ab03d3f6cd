#!/usr/bin/env python3
"""Checks a GPU-less run of scripts/device/run.sh (device.rehearsal_lite): what came back fits the device tool's
limits (at most 8 files of at most 16 MiB), every selected step is recorded, every carried binary resolves its
libraries (only the driver's libcuda.so.1 may be missing: no GPU driver here), the CUDA tests skipped rather than
failed, and the CPU loss curve was written and falls. Prints "rehearsal_lite: ok" or exits 1 naming the problem.
Usage: check_run.py OUT PKG
"""
import json
import os
import sys
import tarfile


def main():
    out, pkg = sys.argv[1], sys.argv[2]
    problems = []
    names = sorted(os.listdir(out))
    if len(names) > 8:
        problems.append(f"{len(names)} files in OUT (limit 8): {names}")
    for n in names:
        if os.path.getsize(os.path.join(out, n)) > 16 << 20:
            problems.append(f"{n} is over 16 MiB")
    with tarfile.open(os.path.join(out, "results.tar.gz")) as tar:
        files = {os.path.basename(m.name): tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    steps = [json.loads(line) for line in files["steps.jsonl"].decode().splitlines() if line.strip()]
    ran = {s["step"]: s["status"] for s in steps}
    for step in ("env", "tests", "loss"):
        if ran.get(step) in (None, "not_selected", "deadline"):
            problems.append(f"step {step} did not run: {ran.get(step)}")
    libs = json.loads(files["libs.json"])
    for exe, verdict in libs["binaries"].items():
        if verdict["missing"] or verdict["versions_missing"]:
            problems.append(f"ldd {exe}: {verdict}")
    unresolved = [s for s, p in libs["found"].items() if p is None and s != "libcuda.so.1"]
    if unresolved:
        problems.append(f"CUDA libraries not found: {unresolved}")
    tests = json.loads(files["tests.json"])
    if tests["totals"]["failed"] or not tests["totals"]["skipped"]:
        problems.append(f"CUDA tests without a GPU: {tests['totals']} (expected skips and no failure)")
    manifest = json.load(open(os.path.join(pkg, "manifest.json")))
    if not any(t["name"] == "test_e2e_cuda" for t in manifest["tests"]):
        problems.append("the package lists no test_e2e_cuda")
    for model in ("tiny_gpt", "tiny_llama"):
        name = f"loss-{model}-cpu.json"
        losses = json.loads(files[name])["losses"] if name in files else []
        if len(losses) != 5 or not losses[-1] < losses[0]:
            problems.append(f"CPU loss curve of {model}: {losses}")
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(pkg) for f in fs)
    if size > 48 << 20:
        problems.append(f"package {size / 2**20:.1f} MiB: over the 48 MiB that leaves room for the tree")
    if problems:
        print("rehearsal_lite: FAILED\n  " + "\n  ".join(problems))
        return 1
    print(f"rehearsal_lite: ok ({len(names)} files back, steps {ran}, package {size / 2**20:.1f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
