#!/usr/bin/env bash
# The ZeroPP paper's headline comparison redone by the model (issue 7, point 3): `zeropp compare --format json` on
# every configs/experiments/paper-*.json, the outputs kept in results/paper-claims/<experiment>.json, with
# `zeropp search --strategies 3d` over every 3D plan (<experiment>.3d-by-tp.json: the best plan per tp; tp = 8 is the
# setting Megatron-style 3D runs usually fix), and the table between the markers in
# results/paper-claims/README.md rewritten from them (the prose around it stays).
# Model output only: nothing here is measured. Takes a few seconds once `zeropp` is built.
# Environment: BUILD (build dir, default build), OUT (default results/paper-claims), PYTHON (default
# /usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
OUT=${OUT:-results/paper-claims}
PYTHON=${PYTHON:-/usr/bin/python3}
Z=$BUILD/cost_model/zeropp
[[ -x $Z ]] || cmake --build "$BUILD" --target zeropp -j2
mkdir -p "$OUT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

names=()
for f in configs/experiments/paper-*.json; do
  name=$(basename "$f" .json)
  names+=("$name")
  "$Z" compare --experiment "$name" --format json >"$OUT/$name.json.tmp"
  mv "$OUT/$name.json.tmp" "$OUT/$name.json"
  # Every 3D plan simulated and ranked (--exhaustive: no pruning); kept: the counts and the fastest plan per tp,
  # for the 3D baseline at Megatron's usual tp = 8 (the whole ranking is megabytes).
  "$Z" search --experiment "$name" --strategies 3d --top 1000000 --exhaustive \
    --format json >"$TMP/search.json"
  "$PYTHON" - "$TMP/search.json" "$OUT/$name.3d-by-tp.json" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
best = {}
for plan in d["top"]:  # feasible plans, fastest first
    best.setdefault(str(plan["parallel"]["tp"]), plan)
out = {"schema": d.get("schema"), "command": "search --strategies 3d (every plan simulated), fastest per tp",
       "experiment": d.get("experiment"), "counts": d["counts"], "best_per_tp": best}
with open(sys.argv[2] + ".tmp", "w") as f:
    json.dump(out, f, indent=2, sort_keys=True)
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
PY
done

"$PYTHON" - "$OUT" "${names[@]}" <<'PY'
import json, os, re, sys

out, names = sys.argv[1], sys.argv[2:]
GiB = 2.0 ** 30


def gpu_gib(cluster):
    # The cluster file's "memory_gib" (the JSON has comments, so it is read by pattern, not parsed).
    text = open(os.path.join("configs", "clusters", f"{cluster}.json")).read()
    return float(re.search(r'"memory_gib"\s*:\s*([0-9.eE+-]+)', text).group(1))


# Baselines as the paper names them, and the compare row standing for each (README: why these).
BASELINES = [("3D", "3d"), ("1F1B+ZeRO-1", "1f1b_zero1"), ("1F1B+ZeRO-3", "zero3_pp"), ("BFS+ZeRO-1", "bfs_zero1")]


def fits(row):
    return row.get("found") and row.get("feasible")


def time(row):
    return row["estimate"]["time_s"]["iteration"]


def peak(row):
    return row["estimate"]["memory_bytes"]["peak"] / GiB


def plan(row):
    p = row["parallel"]
    keys = [("tp", "tp"), ("z", "z"), ("pp", "pp"), ("dp", "dp"), ("v", "v"), ("b", "micro_batch"), ("U", "unit")]
    text = " ".join(f"{k}{p[j]}" for k, j in keys if j in p and (p[j] != 1 or k in ("pp", "dp")) and p[j] != 0)
    return f"{text} {p.get('recompute', '')}".strip()


def best_tp8(name):
    # The fastest 3D plan with tp = 8 that fits (search ranks feasible plans by simulated time), or None.
    return json.load(open(os.path.join(out, f"{name}.3d-by-tp.json")))["best_per_tp"].get("8")


def pct(gain):
    return f"{100 * gain:+.1f}%"


COLUMNS = [label for label, _ in BASELINES] + ["3D tp=8"]
rows, best = [], {label: None for label in COLUMNS}
for name in names:
    d = json.load(open(os.path.join(out, f"{name}.json")))
    ex, by = d["experiment"], {r["row"]: r for r in d["strategies"]}
    zs = [by[k] for k in ("zeropp_a", "zeropp_b") if k in by and fits(by[k])]
    z = min(zs, key=time) if zs else None
    cells, plans = [], []
    for label, key in BASELINES:
        r = by.get(key)
        if z is None or r is None or not fits(r):
            cells.append("does not fit" if r is not None and r.get("found") else "-")
        else:
            gain = time(r) / time(z) - 1
            cells.append(pct(gain))
            if best[label] is None or gain > best[label][0]:
                best[label] = (gain, name)
        if r is None or not r.get("found"):
            plans.append("-")
        else:
            plans.append(f"{plan(r)} ({peak(r):.0f} GiB{'' if fits(r) else ', does not fit'})")
    t8 = best_tp8(name)
    if z is None or t8 is None:
        cells.append("does not fit" if t8 is None else "-")
        plans.append("-" if t8 is None else t8["plan"])
    else:
        gain = t8["time_s"]["iteration"] / time(z) - 1
        cells.append(pct(gain))
        plans.append(f"{t8['plan'].replace('3d ', '')} ({t8['peak_memory_bytes'] / GiB:.0f} GiB)")
        if best["3D tp=8"] is None or gain > best["3D tp=8"][0]:
            best["3D tp=8"] = (gain, name)
    head = f"{ex['name']} | {ex['model']} | {ex['cluster']} | {ex['gpus']} | {ex['global_batch']}"
    if z is None:
        rows.append((f"| {head} | no ZeroPP plan fits | " + " | ".join(cells) + f" | - | {gpu_gib(ex['cluster']):.1f} |",
                     f"| {ex['name']} | - | " + " | ".join(plans) + " |"))
        continue
    rows.append((f"| {head} | {z['row']} {plan(z)} | {time(z):.3f} | " + " | ".join(cells) +
                 f" | {peak(z):.1f} | {gpu_gib(ex['cluster']):.1f} |",
                 f"| {ex['name']} | {plan(z)} ({peak(z):.0f} GiB) | " + " | ".join(plans) + " |"))

table = ["| experiment | model | cluster | GPUs | global batch | best ZeroPP plan | ZeroPP iter s | "
         + " | ".join(f"vs {label}" for label in COLUMNS) + " | ZeroPP peak GiB | GPU GiB |",
         "|---|---|---|--:|--:|---|--:|" + "--:|" * len(COLUMNS) + "--:|--:|"]
table += [r[0] for r in rows]
table += ["", "Each baseline's chosen plan and its simulated peak memory:", "",
          "| experiment | ZeroPP | " + " | ".join(COLUMNS) + " |",
          "|---|---|" + "---|" * len(COLUMNS)]
table += [r[1] for r in rows]
table += ["", "Largest ZeroPP gain over each baseline in this set: " + "; ".join(
    f"{label} {pct(best[label][0])} ({best[label][1]})" if best[label] else f"{label} -" for label in COLUMNS)
    + "."]

readme = os.path.join(out, "README.md")
begin, end = "<!-- paper-claims table: begin (scripts/paper-claims.sh) -->", "<!-- paper-claims table: end -->"
text = open(readme).read() if os.path.exists(readme) else f"# The ZeroPP paper's claims, checked by the model\n\n{begin}\n{end}\n"
if begin not in text or end not in text:
    sys.exit(f"{readme}: markers {begin!r} / {end!r} missing")
pre, rest = text.split(begin, 1)
post = rest.split(end, 1)[1]
tmp = readme + ".tmp"
with open(tmp, "w") as f:
    f.write(pre + begin + "\n" + "\n".join(table) + "\n" + end + post)
os.replace(tmp, readme)
print("\n".join(table))
PY
