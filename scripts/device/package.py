#!/usr/bin/env python3
"""Stages a CUDA build into a folder that travels to a lent GPU machine (scripts/device/package.sh says why).

Layout of the package (PKG):
  bin/              zeropp-train, zeropp-bench-cuda, zeropp-bench, zeropp, and the CUDA test executables
  lib/              every shared library the binaries and the carried Open MPI components need, except the C
                    library family, the C++ runtime and the CUDA libraries (resolved on the device at run time)
  lib/openmpi3/     Open MPI's components (plugins), lib/pmix/ PMIx's; share/ and etc/ their help and settings
  lib-fallback/     this machine's libstdc++ and libgcc_s, used only where the device's are older (run.sh decides)
  manifest.json     what was built (commit, compiler, CUDA arch), the CUDA sonames the device must provide, the
                    newest GLIBC/GLIBCXX symbol versions required, and the CUDA tests with their commands
Usage: python3 scripts/device/package.py --build BUILD --out PKG
"""
import argparse
import datetime
import json
import os
import re
import shutil
import stat
import subprocess
import sys

# Provided by the device: the CUDA driver, toolkit and PyTorch's wheels (found there by run.sh).
DEVICE_LIBS = re.compile(r"^lib(cuda|cudart|cublas|cublasLt|nccl|nvidia-[a-z-]+|nvrtc|nvJitLink)\.so")
# The C library family: every Linux has them, and a copy from another glibc must never be mixed in.
SYSTEM_LIBS = re.compile(r"^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libanl)[.-]")
# The C++ runtime: the device's (newer) one is used; this machine's goes to lib-fallback/.
CXX_RUNTIME = re.compile(r"^(libstdc\+\+|libgcc_s)\.so")
# Network stacks some Open MPI components link (InfiniBand, libfabric, UCX, PSM): a single GPU needs none, and
# they weigh more than the rest of the package; the components that need them are left out.
EXCLUDED_DEPS = re.compile(r"^lib(fabric|ucp|ucs|uct|ucm|ibverbs|rdmacm|psm|psm2|psm_infinipath|nl-|efa|"
                           r"mlx|hcoll|mxm|cuda|nvidia)")
OMPI_LIB = "/usr/lib/x86_64-linux-gnu/openmpi/lib"
OMPI_COMPONENTS = OMPI_LIB + "/openmpi3"
PMIX_COMPONENTS = "/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix"
OMPI_SHARE, PMIX_SHARE, OMPI_ETC = "/usr/share/openmpi", "/usr/share/pmix", "/etc/openmpi"
PROGRAMS = ["e2e/zeropp-train", "microbench/zeropp-bench-cuda", "microbench/zeropp-bench", "cost_model/zeropp"]


def ldd(path):
    """{soname: resolved path or None} of an ELF file."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    deps = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (not found|\S+)", line)
        if m:
            deps[m.group(1)] = None if m.group(2) == "not found" else m.group(2)
        else:
            m = re.match(r"\s*(\S+) \(0x", line)
            if m:
                deps[os.path.basename(m.group(1))] = m.group(1)
    return deps


def symbol_versions(path):
    """The GLIBC_x and GLIBCXX_x versions the file requires (objdump -T)."""
    out = subprocess.run(["objdump", "-T", path], capture_output=True, text=True).stdout
    return set(re.findall(r"\b(GLIBCXX_[0-9.]+|GLIBC_[0-9.]+)\b", out))


def version_key(v):
    return tuple(int(x) for x in v.split("_", 1)[1].split("."))


def copy_file(src, dst):
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy2(os.path.realpath(src), dst)
    os.chmod(dst, os.stat(dst).st_mode | stat.S_IWUSR)


def strip(path):
    subprocess.run(["strip", "--strip-unneeded", path], check=False, capture_output=True)


def cuda_tests(build, programs):
    """The ctest tests that run CUDA code, one entry per test executable (gtest) or command (the rest)."""
    listing = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"], capture_output=True, text=True,
                             check=True).stdout
    entries, seen = [], set()
    for t in json.loads(listing)["tests"]:
        cmd = t.get("command") or []
        if not cmd:
            continue
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        labels = props.get("LABELS", [])
        exe = os.path.basename(cmd[0])
        # gtest_discover_tests keeps only the first of its LABELS ("unit"), so the executable's name says it too.
        if "cuda" not in labels and not re.search(r"cuda|nccl", exe):
            continue
        if exe in ("mpiexec", "mpirun", "orterun"):
            ranks = int(cmd[cmd.index("-n") + 1]) if "-n" in cmd else 0
            entries.append({"name": t["name"], "kind": "skip", "exe": os.path.basename(cmd[-1]),
                            "reason": f"needs mpirun with {ranks} ranks, one GPU each; a lent machine has one GPU"})
            continue
        is_gtest = any(a.startswith("--gtest_filter=") for a in cmd[1:])
        key = exe if is_gtest else t["name"]
        if key in seen:
            continue
        seen.add(key)
        entry = {"name": exe if is_gtest else t["name"], "kind": "gtest" if is_gtest else "command", "exe": exe,
                 "args": [] if is_gtest else [rewrite(a, build) for a in cmd[1:]]}
        for prop, field in (("SKIP_REGULAR_EXPRESSION", "skip_regex"), ("FAIL_REGULAR_EXPRESSION", "fail_regex"),
                            ("PASS_REGULAR_EXPRESSION", "pass_regex")):
            if prop in props:
                entry[field] = props[prop] if isinstance(props[prop], list) else [props[prop]]
        programs.add(cmd[0])
        entries.append(entry)
    return entries


def rewrite(arg, build):
    """Paths of this checkout and build as placeholders run.sh replaces: ${SRC} the repository, ${PKG} the package."""
    src = os.path.dirname(os.path.abspath(build))
    return arg.replace(os.path.abspath(build), "${BUILD}").replace(src, "${SRC}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    build, pkg = os.path.abspath(args.build), os.path.abspath(args.out)
    if os.path.exists(pkg):
        shutil.rmtree(pkg)
    os.makedirs(pkg)

    programs = {os.path.join(build, p) for p in PROGRAMS if os.path.exists(os.path.join(build, p))}
    tests = cuda_tests(build, programs)
    bins = []
    for p in sorted(programs):
        dst = os.path.join(pkg, "bin", os.path.basename(p))
        copy_file(p, dst)
        strip(dst)
        bins.append(dst)

    # Open MPI's components and PMIx's, without those that link an excluded network stack.
    plugins, left_out = [], []
    for src_dir, sub in ((OMPI_COMPONENTS, "lib/openmpi3"), (PMIX_COMPONENTS, "lib/pmix")):
        if not os.path.isdir(src_dir):
            continue
        for name in sorted(os.listdir(src_dir)):
            if not name.endswith(".so"):
                continue
            src = os.path.join(src_dir, name)
            needs = ldd(src)
            if any(EXCLUDED_DEPS.match(s) for s in needs):
                left_out.append(name)
                continue
            dst = os.path.join(pkg, sub, name)
            copy_file(src, dst)
            plugins.append(dst)
    for src, dst in ((OMPI_SHARE, "share/openmpi"), (PMIX_SHARE, "share/pmix"), (OMPI_ETC, "etc/openmpi")):
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(pkg, dst), symlinks=False, dirs_exist_ok=True)

    # Libraries: the closure of what the binaries and components need, minus what the device provides.
    carried, device, missing, versions = {}, set(), [], set()
    queue = list(bins) + plugins
    while queue:
        f = queue.pop()
        versions |= symbol_versions(f)
        for soname, path in ldd(f).items():
            if SYSTEM_LIBS.match(soname):
                continue
            if DEVICE_LIBS.match(soname):
                device.add(soname)
                continue
            if path is None:
                missing.append(f"{os.path.basename(f)}: {soname}")
                continue
            sub = "lib-fallback" if CXX_RUNTIME.match(soname) else "lib"
            if soname in carried:
                continue
            dst = os.path.join(pkg, sub, soname)
            copy_file(path, dst)
            carried[soname] = path
            if sub == "lib":
                queue.append(dst)
    if missing:
        sys.exit("package: unresolved libraries here: " + ", ".join(sorted(set(missing))))

    def newest(prefix):
        vs = [v for v in versions if v.startswith(prefix + "_")]
        return max(vs, key=version_key) if vs else None

    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                                text=True).stdout.strip())
    nvcc = subprocess.run(["/usr/local/cuda/bin/nvcc", "--version"], capture_output=True, text=True).stdout
    cache = open(os.path.join(build, "CMakeCache.txt")).read()

    def cache_value(key):
        m = re.search(rf"^{key}:\w+=(.*)$", cache, re.M)
        return m.group(1) if m else None

    manifest = {
        "schema": 1,
        "kind": "zeropp-device-package",
        "built": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit + ("-dirty" if dirty else ""),
        "build": {"folder": os.path.relpath(build), "type": cache_value("CMAKE_BUILD_TYPE"),
                  "cuda_architectures": cache_value("CMAKE_CUDA_ARCHITECTURES"),
                  "native_cpu_code": cache_value("ZEROPP_E2E_NATIVE") not in ("OFF", "FALSE", "0"),
                  "nvcc": (re.findall(r"release [0-9.]+, V[0-9.]+", nvcc) or ["?"])[0],
                  "compiler": cache_value("CMAKE_CXX_COMPILER")},
        "programs": sorted(os.path.basename(b) for b in bins),
        "carried_libraries": {k: v for k, v in sorted(carried.items())},
        "device_libraries": sorted(device),
        "requires": {"glibc": newest("GLIBC"), "glibcxx": newest("GLIBCXX")},
        "components_left_out": left_out,
        "tests": tests,
    }
    with open(os.path.join(pkg, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")

    size = sum(os.path.getsize(os.path.join(d, n)) for d, _, files in os.walk(pkg) for n in files)
    print(f"package: {os.path.relpath(pkg)}: {len(bins)} programs, {len(carried)} carried libraries, "
          f"{len(plugins)} MPI/PMIx components ({len(left_out)} left out), {size / 2**20:.1f} MiB; "
          f"the device must provide {', '.join(sorted(device))}; needs {manifest['requires']['glibc']}, "
          f"{manifest['requires']['glibcxx']}")
    print(f"package: CUDA tests: {', '.join(t['name'] for t in tests)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
