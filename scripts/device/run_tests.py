#!/usr/bin/env python3
"""Runs the CUDA tests a device package lists (manifest.json's tests, taken from ctest when it was built) and writes
one JSON: per test executable or command, passed / failed / skipped counts and the failures' messages.

gtest executables run whole, once, with --gtest_output=json (faster than ctest's one process per test); a command
runs as ctest would run it, its SKIP/FAIL/PASS regular expressions applied to its output. Tests that need several
ranks are listed as not run, with the reason. The tests run with ZEROPP_LD_LIBRARY_PATH (run.sh: the package's
and the CUDA libraries' folders) as their LD_LIBRARY_PATH. Exit 1 when anything failed.
Usage: run_tests.py --package PKG --src REPO --work DIR --json OUT [--per-test-timeout S]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

CHILD_ENV = dict(os.environ)
if "ZEROPP_LD_LIBRARY_PATH" in os.environ:
    CHILD_ENV["LD_LIBRARY_PATH"] = os.environ["ZEROPP_LD_LIBRARY_PATH"]


def expand(arg, pkg, src, work):
    # ${BUILD}/<dir>/<program> paths in a command point at the build's programs, which the package keeps in bin/.
    arg = re.sub(r"\$\{BUILD\}/(?:[^/ ]+/)*([^/ ]+)", lambda m: os.path.join(pkg, "bin", m.group(1)), arg)
    return arg.replace("${SRC}", src).replace("${WORK}", work)


def run_gtest(entry, exe, work, timeout):
    report = os.path.join(work, f"gtest-{entry['name']}.json")
    t0 = time.time()
    try:
        r = subprocess.run([exe, f"--gtest_output=json:{report}"], capture_output=True, text=True, timeout=timeout,
                           env=CHILD_ENV)
        output, rc = r.stdout + r.stderr, r.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        output, rc = out.decode(errors="replace") if isinstance(out, bytes) else out, None
    result = {"name": entry["name"], "kind": "gtest", "rc": rc, "seconds": time.time() - t0, "passed": 0, "failed": 0,
              "skipped": 0, "failures": [], "skips": []}
    if os.path.exists(report):
        doc = json.load(open(report))
        for suite in doc.get("testsuites", []):
            for t in suite.get("testsuite", []):
                name = f"{suite['name']}.{t['name']}"
                if t.get("failures"):
                    result["failed"] += 1
                    result["failures"].append({"test": name, "messages": [f["failure"][:2000] for f in t["failures"]]})
                elif t.get("result") == "SKIPPED" or t.get("status") == "NOTRUN":
                    result["skipped"] += 1
                    msg = (t.get("skipped") or {}).get("message", "") if isinstance(t.get("skipped"), dict) else ""
                    result["skips"].append({"test": name, "message": msg[:300]})
                else:
                    result["passed"] += 1
    if rc is None:
        result["status"] = "timeout"
    elif rc != 0 or result["failed"]:
        result["status"] = "failed"
        if not result["failures"]:
            result["failures"].append({"test": entry["name"], "messages": [output[-2000:]]})
    else:
        result["status"] = "skipped" if result["skipped"] and not result["passed"] else "passed"
    result["output_tail"] = output[-1500:]
    return result


def run_command(entry, exe, pkg, src, work, timeout):
    cmd = [exe] + [expand(a, pkg, src, work) for a in entry.get("args", [])]
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=CHILD_ENV)
        output, rc = r.stdout + r.stderr, r.returncode
    except subprocess.TimeoutExpired:
        output, rc = "", None
    result = {"name": entry["name"], "kind": "command", "command": cmd, "rc": rc, "seconds": time.time() - t0}
    skip = any(re.search(p, output) for p in entry.get("skip_regex", []))
    fail = any(re.search(p, output) for p in entry.get("fail_regex", []))
    passes = entry.get("pass_regex")
    if rc is None:
        result["status"] = "timeout"
    elif skip:
        result["status"] = "skipped"
    elif fail or (passes and not any(re.search(p, output) for p in passes)) or (not passes and rc != 0):
        result["status"] = "failed"
    else:
        result["status"] = "passed"
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    if result["status"] in counts:
        counts[result["status"]] = 1
    elif result["status"] == "timeout":
        counts["failed"] = 1
    result.update(counts)
    result["output_tail"] = output[-1500:]
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--per-test-timeout", type=float, default=60)
    args = ap.parse_args()
    manifest = json.load(open(os.path.join(args.package, "manifest.json")))
    results = []
    for entry in manifest["tests"]:
        exe = os.path.join(args.package, "bin", entry["exe"])
        if entry["kind"] == "skip":
            r = {"name": entry["name"], "kind": "skip", "status": "not_run", "reason": entry["reason"],
                 "passed": 0, "failed": 0, "skipped": 0}
        elif not os.path.exists(exe):
            r = {"name": entry["name"], "kind": entry["kind"], "status": "failed", "passed": 0, "failed": 1,
                 "skipped": 0, "failures": [{"test": entry["name"], "messages": [f"{exe} is not in the package"]}]}
        elif entry["kind"] == "gtest":
            r = run_gtest(entry, exe, args.work, args.per_test_timeout)
        else:
            r = run_command(entry, exe, args.package, args.src, args.work, args.per_test_timeout)
        results.append(r)
        print(f"{r['name']:28s} {r['status']:8s} passed {r['passed']:3d} failed {r['failed']:3d} skipped "
              f"{r['skipped']:3d}" + (f"  ({r['reason']})" if r.get("reason") else ""))
        for f in r.get("failures", [])[:5]:
            print(f"  FAILED {f['test']}: {f['messages'][0][:300]}")
    totals = {k: sum(r[k] for r in results) for k in ("passed", "failed", "skipped")}
    doc = {"schema": 1, "kind": "zeropp-device-tests", "results": results, "totals": totals}
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"{totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped")
    return 1 if totals["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
