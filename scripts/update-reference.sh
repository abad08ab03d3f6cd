#!/usr/bin/env bash
# Rewrites the committed reference outputs (results/reference/<case>.json) from the current code, on purpose:
# run it when a change to the model's answers is intended, read `git diff results/reference`, commit both.
# The cases are tests/regression/reference_cases.txt; CTest's regression.reference.<case> compares against them
# (docs/regression.md). Every case runs before any file is replaced, so a failing case leaves the old set whole.
#   bash scripts/update-reference.sh            # uses ./build (the default preset), builds zeropp if needed
#   BUILD_DIR=build-cpu bash scripts/update-reference.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  [ "$build" = build ] || { echo "update-reference: $build is not configured" >&2; exit 2; }
  bash scripts/deps.sh
  cmake --preset default >/dev/null
fi
cmake --build "$build" --target zeropp -j "$(nproc)"
zeropp="$build/cost_model/zeropp"

mkdir -p results/reference
tmp=$(mktemp -d results/reference/.update.XXXXXX)  # same filesystem: the final mv is a rename
trap 'rm -rf "$tmp"' EXIT
names=()
while read -r name args; do
  case "$name" in '' | '#'*) continue ;; esac
  read -ra argv <<<"$args"
  if ! "$zeropp" "${argv[@]}" >"$tmp/$name.json"; then
    echo "update-reference: case $name failed: zeropp $args (nothing was replaced)" >&2
    exit 1
  fi
  names+=("$name")
done <tests/regression/reference_cases.txt

for name in "${names[@]}"; do mv -f "$tmp/$name.json" "results/reference/$name.json"; done
echo "update-reference: wrote ${#names[@]} files under results/reference/"
for f in results/reference/*.json; do
  base=$(basename "$f" .json)
  [[ " ${names[*]} " == *" $base "* ]] || echo "update-reference: $f has no case any more; git rm it"
done
git diff --stat -- results/reference 2>/dev/null || true
