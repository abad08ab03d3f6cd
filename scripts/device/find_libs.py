#!/usr/bin/env python3
"""Finds, on the machine it runs on, the CUDA libraries a device package's binaries need (manifest.json's
device_libraries, plus the driver's libcuda.so.1), and checks every carried binary with ldd.

Where they are looked for, in order: ZEROPP_DEVICE_LIBDIRS (colon-separated), the CUDA toolkit
(/usr/local/cuda/lib64, .../targets/x86_64-linux/lib), the driver (/usr/local/nvidia/lib64, the system folders),
and PyTorch's wheels: torch/lib and every nvidia/*/lib (nvidia/cu13/lib for CUDA 13 wheels, nvidia/nccl/lib for
NCCL) under the site-packages that holds torch (found without importing it), or ZEROPP_DEVICE_SITE instead.
Writes --json (what was found where, the ldd verdict per binary) and --env (a shell line that sets
ZEROPP_LD_LIBRARY_PATH, the carried programs' library path: the package's lib/ as given in the environment, the
folders used, and the carried libstdc++ when the device's is too old).
Exit 1 when a library stays missing, so the run's env step says so first.
Usage: find_libs.py --package PKG --json OUT.json --env OUT.env
"""
import argparse
import glob
import importlib.util
import json
import os
import re
import subprocess
import sys


def site_dirs():
    if os.environ.get("ZEROPP_DEVICE_SITE"):
        return [os.environ["ZEROPP_DEVICE_SITE"]]
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        return []
    return [os.path.dirname(os.path.dirname(spec.origin))]  # .../site-packages/torch/__init__.py -> site-packages


def candidate_dirs():
    dirs = [d for d in os.environ.get("ZEROPP_DEVICE_LIBDIRS", "").split(":") if d]
    dirs += ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/local/nvidia/lib64",
             "/usr/local/nvidia/lib", "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64"]
    for site in site_dirs():
        dirs.append(os.path.join(site, "torch", "lib"))
        dirs += sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib")))
    return [d for d in dict.fromkeys(dirs) if os.path.isdir(d)]


def ldd(path, env):
    r = subprocess.run(["ldd", path], capture_output=True, text=True, env=env)
    text = r.stdout + r.stderr
    missing = re.findall(r"^\s*(\S+) => not found", text, re.M)
    versions = re.findall(r"version `([^']+)' not found", text)
    return text, missing, versions


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package", required=True)
    ap.add_argument("--json", required=True)
    ap.add_argument("--env", required=True)
    args = ap.parse_args()
    manifest = json.load(open(os.path.join(args.package, "manifest.json")))
    wanted = list(dict.fromkeys(manifest["device_libraries"] + ["libcuda.so.1"]))
    dirs = candidate_dirs()
    found, used = {}, []
    for soname in wanted:
        for d in dirs:
            if os.path.exists(os.path.join(d, soname)):
                found[soname] = os.path.join(d, soname)
                if d not in used:
                    used.append(d)
                break
        else:
            found[soname] = None
    env = dict(os.environ)
    extra = ":".join(used)
    base = env.get("ZEROPP_LD_LIBRARY_PATH", os.path.join(args.package, "lib"))
    env["LD_LIBRARY_PATH"] = ":".join(p for p in (base, extra) if p)
    report = {"schema": 1, "searched": dirs, "found": found, "binaries": {}, "fallback_cxx_runtime": False}

    def check_all():
        bad = False
        for exe in sorted(glob.glob(os.path.join(args.package, "bin", "*"))):
            _, missing, versions = ldd(exe, env)
            report["binaries"][os.path.basename(exe)] = {"missing": missing, "versions_missing": versions}
            bad = bad or bool(missing or versions)
        return bad

    bad = check_all()
    if any(v.startswith("GLIBCXX") or v.startswith("GCC") or v.startswith("CXXABI")
           for b in report["binaries"].values() for v in b["versions_missing"]):
        # The device's C++ runtime is older than this build's: put the carried one first (our processes only).
        env["LD_LIBRARY_PATH"] = os.path.join(args.package, "lib-fallback") + ":" + env["LD_LIBRARY_PATH"]
        report["fallback_cxx_runtime"] = True
        bad = check_all()
    line = f'export ZEROPP_LD_LIBRARY_PATH="{env["LD_LIBRARY_PATH"]}"\n'
    with open(args.env, "w") as f:
        f.write(line)
    with open(args.json, "w") as f:
        json.dump(report, f, indent=1)
    for soname, path in found.items():
        print(f"{soname:22s} {path or 'NOT FOUND'}")
    for exe, verdict in report["binaries"].items():
        if verdict["missing"] or verdict["versions_missing"]:
            print(f"ldd {exe}: missing {verdict['missing']} {verdict['versions_missing']}")
    print(f"ldd: {'problems above' if bad else 'every binary resolves'}"
          f"{' (with the carried libstdc++)' if report['fallback_cxx_runtime'] else ''}")
    return 1 if bad or None in found.values() else 0


if __name__ == "__main__":
    sys.exit(main())
