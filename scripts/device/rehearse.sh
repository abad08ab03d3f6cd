#!/usr/bin/env bash
# Rehearses the device run on this GPU-less machine as the device will see it, so that device minutes go to
# measuring (issue 23): the package is unpacked into a fresh copy of what the device tool sends (tracked and
# untracked-not-ignored files plus the carried package), and run.sh runs there under `env -i`, in a private mount
# namespace where every library this machine has and a bare image would not is hidden:
#   - /usr/lib/x86_64-linux-gnu keeps only the files of the essential packages (Priority required/important, and
#     python3, with what they depend on: the C library, libstdc++, zlib, ...); Open MPI, PMIx, hwloc, libevent,
#     fmt, Google Benchmark, libudev and the rest are whited out (an overlay), and /usr/share/openmpi and
#     /etc/openmpi emptied;
#   - NCCL is hidden in the CUDA toolkit (the device's toolkit has none: NCCL comes from PyTorch's nvidia-nccl-cu13
#     wheel) and offered instead in a stand-in site-packages laid out as that wheel is (nvidia/nccl/lib), which
#     run.sh finds through ZEROPP_DEVICE_SITE as it finds the real one through torch.
# Without a GPU every CUDA step fails or skips and says so; what the rehearsal shows is that each step is reached,
# every binary resolves its libraries, the MPI singleton starts, the CPU loss curve runs, and the results come back
# within the tool's limits (at most 8 files of at most 16 MiB). Then the importer reads them (--rehearsal).
# Needs root (unshare, mount). Usage: bash scripts/device/rehearse.sh [PACKAGE]   (default .device)
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
pkg=$(cd "${1:-.device}" && pwd)
tmp=$(mktemp -d /tmp/zeropp-rehearsal.XXXXXX)
echo "rehearsal in $tmp"

# What the device tool sends: the working tree git would copy, plus the carried package.
mkdir -p "$tmp/tree" "$tmp/out" "$tmp/site/nvidia/nccl/lib" "$tmp/site/torch/lib"
git ls-files -co --exclude-standard -z | tar -C "$src" --null -T - -cf - | tar -C "$tmp/tree" -xf -
cp -a "$pkg" "$tmp/tree/.device"
tree_mib=$(du -sm "$tmp/tree" | cut -f1)
echo "what travels: $tree_mib MiB (limit 64 MiB), of which the package $(du -sm "$pkg" | cut -f1) MiB"

# The libraries a bare image has: the essential packages and their dependencies, closed transitively.
python3 - "$tmp/allowed.txt" <<'PY'
import re, subprocess, sys
status = subprocess.run(["dpkg-query", "-W", "-f=${Package}\t${Priority}\t${Depends}, ${Pre-Depends}\n"],
                        capture_output=True, text=True).stdout
deps, todo = {}, []
for line in status.splitlines():
    name, prio, dep = line.split("\t")
    deps[name] = {re.split(r"[ :(]", d.strip())[0] for alt in dep.split(",") for d in alt.split("|")[:1] if d.strip()}
    if prio in ("required", "important"):
        todo.append(name)
todo.append("python3")  # the device has Python (its own, with PyTorch): keep what this one needs
keep = set()
while todo:
    p = todo.pop()
    if p in keep or p not in deps:
        continue
    keep.add(p)
    todo += list(deps[p])
# libudev is in this closure (systemd) but not in a container image's: hide it too, the package carries it.
keep -= {"libudev1"}
files = subprocess.run(["dpkg", "-L", *sorted(keep)], capture_output=True, text=True).stdout.split()
# dpkg still lists libc6 and others under /lib, which merged-/usr systems reach as /usr/lib.
files += ["/usr" + f for f in files if f.startswith("/lib/")]
open(sys.argv[1], "w").write("\n".join(sorted(set(files))) + "\n")
PY

nccl=$(readlink -f /usr/local/cuda/lib/libnccl.so.2)
cat >"$tmp/inside.sh" <<EOF
set -euo pipefail
mount --make-rprivate /
mount -t tmpfs tmpfs "$tmp/mnt"
mkdir -p "$tmp/mnt/up" "$tmp/mnt/work" "$tmp/mnt/cup" "$tmp/mnt/cwork"
libdir=/usr/lib/x86_64-linux-gnu
hidden=0
for f in \$libdir/*; do
  if ! grep -qx -- "\$f" "$tmp/allowed.txt" && ! grep -q -- "^\$f/" "$tmp/allowed.txt"; then
    mknod "$tmp/mnt/up/\${f##*/}" c 0 0
    hidden=\$((hidden + 1))
  fi
done
echo "hidden: \$hidden of \$(ls \$libdir | wc -l) entries of \$libdir"
touch "$tmp/site/nvidia/nccl/lib/libnccl.so.2"
mount --bind "$nccl" "$tmp/site/nvidia/nccl/lib/libnccl.so.2"
for f in /usr/local/cuda/lib/libnccl*; do mknod "$tmp/mnt/cup/\${f##*/}" c 0 0; done
mount -t overlay overlay -o lowerdir=/usr/local/cuda/lib,upperdir=$tmp/mnt/cup,workdir=$tmp/mnt/cwork \
  /usr/local/cuda/lib
for d in /usr/share/openmpi /usr/share/pmix /etc/openmpi; do [ -d \$d ] && mount -t tmpfs tmpfs \$d; done
mount -t overlay overlay -o lowerdir=\$libdir,upperdir=$tmp/mnt/up,workdir=$tmp/mnt/work \$libdir
ldconfig -C "$tmp/mnt/ld.so.cache" 2>/dev/null || true
mount --bind "$tmp/mnt/ld.so.cache" /etc/ld.so.cache
echo "check: libfmt visible? \$(ls \$libdir/libfmt* 2>/dev/null | wc -l); libmpi? \$(ls \$libdir/libmpi* 2>/dev/null |
  wc -l); NCCL in the toolkit? \$(ls /usr/local/cuda/lib/libnccl* 2>/dev/null | wc -l)"
cd "$tmp/tree"
env -i PATH=/usr/local/cuda/bin:/usr/bin:/bin HOME=/root OUT="$tmp/out" WORK="$tmp/work" \
  ZEROPP_DEVICE_SITE="$tmp/site" DEADLINE_S="\${DEADLINE_S:-420}" STEPS="\${STEPS:-}" bash scripts/device/run.sh
EOF
mkdir -p "$tmp/mnt" "$tmp/work"
[ -n "${STEPS:-}" ] || unset STEPS
unshare -m bash "$tmp/inside.sh" || echo "rehearse: run.sh exited $?"

echo "== what came back ($tmp/out)"
count=0
for f in "$tmp/out"/*; do
  size=$(stat -c %s "$f")
  count=$((count + 1))
  printf '  %-24s %10d bytes%s\n' "${f##*/}" "$size" "$([ "$size" -gt 16777216 ] && echo '  OVER 16 MiB')"
done
[ "$count" -le 8 ] || echo "  OVER the 8-file limit: $count files"
python3 scripts/device/import.py "$tmp/out" --rehearsal --dest "$tmp/imported"
echo "rehearsal folder: $tmp"
