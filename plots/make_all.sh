#!/usr/bin/env bash
# Makes every figure: runs the zeropp CLI into a temporary folder, then the plot scripts over that JSON and over
# the committed results (results/loop). Takes well under a minute.
# Usage: plots/make_all.sh [OUT]   (OUT default results/figures)
# Environment: BUILD (build dir, default build), CLUSTER (default dgx-a100-80gb), PYTHON (default /usr/bin/python3,
# Debian's, which has matplotlib), MEASURED_TRACE (a zeropp-train --trace file for the Gantt's measured panel;
# unset: one is made with 2 MPI ranks when zeropp-train and mpirun exist, else that panel is left out).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-results/figures}
BUILD=${BUILD:-build}
CLUSTER=${CLUSTER:-dgx-a100-80gb}
PYTHON=${PYTHON:-/usr/bin/python3}
Z=$BUILD/cost_model/zeropp
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[[ -x $Z ]] || { echo "make_all.sh: $Z not built (cmake --build $BUILD --target zeropp, or set BUILD)" >&2; exit 1; }
# Fail here, in one line, rather than with a traceback from the first plot script.
if ! "$PYTHON" -c 'import matplotlib' 2>/dev/null; then
  echo "make_all.sh: $PYTHON cannot import matplotlib: install Debian's python3-matplotlib (scripts/deps.sh)" \
    "or set PYTHON to an interpreter that has it" >&2
  exit 1
fi

# (b) memory breakdown of the default experiment.
"$Z" compare --experiment default --format json >"$TMP/compare.json"
"$Z" clusters "$(grep -o '"cluster": *"[^"]*"' "$TMP/compare.json" | head -1 | cut -d'"' -f4)" --format json \
  >"$TMP/default-cluster.json"
"$PYTHON" plots/memory.py --compare "$TMP/compare.json" --cluster "$TMP/default-cluster.json" --out "$OUT"

# (c) criterion map with every zoo model and its time-based smallest U on $CLUSTER, and the time-based boundary:
# one GPT-style layer (d_head 128, s = 2048, b = 1) per hidden size h, the U at which ZeroPP's exposed time
# equals TP's on $CLUSTER.
"$Z" models --format json >"$TMP/models.json"
mkdir -p "$TMP/criterion" "$TMP/boundary"
# The time-based answer puts TP over the node's 8 GPUs: models whose heads 8 does not divide (GPT-2's 12) have no
# such TP layout and are left out of the map.
for m in $("$PYTHON" -c 'import json,sys; print(" ".join(m["name"] for m in json.load(open(sys.argv[1]))["models"]
                                                   if m["heads"] % 8 == 0))' "$TMP/models.json"); do
  "$Z" criterion --model "$m" --cluster "$CLUSTER" --format json >"$TMP/criterion/$m.json"
done
for h in 1024 2048 3072 4096 5120 6144 8192 10240 12288 16384 20480 24576 32768; do  # tp = 8 divides h/128 heads
  printf '{"name": "layer-h%d", "layers": 1, "hidden": %d, "heads": %d, "seq_len": 2048, "vocab": 51200,
    "mlp": "gelu", "tied_embedding": true, "learned_positions": true}\n' "$h" "$h" $((h / 128)) \
    >"$TMP/boundary/h$h.model.json"
  "$Z" criterion --model "$TMP/boundary/h$h.model.json" --micro-batch 1 --unit 1 --cluster "$CLUSTER" \
    --format json >"$TMP/boundary/h$h.json"
done
"$PYTHON" plots/criterion.py --models "$TMP/models.json" --criterion "$TMP"/criterion/*.json \
  --boundary "$TMP"/boundary/h*[0-9].json --out "$OUT"

# (e) validation table and the trainer runs on this machine.
"$Z" validate --set narayanan2021 --format json >"$TMP/validate-a100.json"
"$Z" validate --set megatron_core_h100 --format json >"$TMP/validate-h100.json"
"$PYTHON" plots/predicted_vs_measured.py --validate "$TMP/validate-a100.json" "$TMP/validate-h100.json" \
  --runs results/loop/1f1b.json results/loop/1f1b-measured-costs.json \
  results/loop/zeropp.json results/loop/zeropp-measured-costs.json --out "$OUT"

# (f) collective busbw and GEMM FLOP/s with the calibrated fits.
"$PYTHON" plots/collectives.py --bench results/loop/bench.json --profile configs/clusters/local-cpu.json --out "$OUT"
"$PYTHON" plots/gemm.py --bench results/loop/bench.json --profile configs/clusters/local-cpu.json --out "$OUT"

# (d) the ZeroPP plan of results/loop (pp 2, v 2, U 4, B 8): one measured iteration beside the simulator running the
# same program on that run's mean measured cost per action kind. Both come from one trainer run (3 iterations; the
# costs are means over iterations 2-3, the panel draws iteration 3), so a loaded machine slows both alike. With
# MEASURED_TRACE set, or without zeropp-train/mpirun, the costs are those of results/loop/zeropp-measured-costs.json.
TRAIN=$BUILD/e2e/zeropp-train
COSTS_FROM=results/loop/zeropp-measured-costs.json
MEASURED_TITLE="measured: zeropp-train, 2 MPI ranks on this CPU"
if [[ -z ${MEASURED_TRACE:-} && -x $TRAIN ]] && command -v mpirun >/dev/null; then
  if OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
    mpirun -np 2 "$TRAIN" --plan results/loop/zeropp.plan.json --steps 3 --quiet --compare-model=measured \
    --trace "$TMP/measured-trace.json" --out "$TMP/train.json" >"$TMP/train.log" 2>&1; then
    MEASURED_TRACE=$TMP/measured-trace.json
    COSTS_FROM=$TMP/train.json
    MEASURED_TITLE="measured: zeropp-train, 2 MPI ranks, iteration 3"
  else
    echo "make_all.sh: zeropp-train failed (log below), Gantt without a measured panel" >&2
    tail -5 "$TMP/train.log" >&2
  fi
fi
COSTS=$("$PYTHON" - "$COSTS_FROM" <<'PY'
import json, sys
k = {x["kind"]: x["measured_mean_s"] for x in json.load(open(sys.argv[1]))["model_comparison"]["kinds"]}
print(f"F={k['F']},B={k['B']},W={k['W']},P2P={k['SEND_F']},OPT={k['OPT_STEP']}")
PY
)
"$Z" schedule --schedule zeropp --pp 2 --chunks 2 --micro-batches 8 --unit 4 --costs "$COSTS" \
  --trace "$TMP/simulated-trace.json" >/dev/null
GANTT=(--trace "$TMP/simulated-trace.json" --title "simulated: same program, mean cost per kind")
if [[ -n ${MEASURED_TRACE:-} ]]; then
  GANTT+=(--trace "$MEASURED_TRACE" --title "$MEASURED_TITLE")
fi
"$PYTHON" plots/gantt.py "${GANTT[@]}" --out "$OUT"

# (a) throughput per GPU across model sizes and GPU counts (weak scaling: 2 sequences per GPU, at least 64).
mkdir -p "$TMP/scaling"
for m in gpt3-1.3b gpt3-13b megatron-39.1b gpt3-175b; do
  for n in 8 32 128 512 1024; do
    g=$((2 * n < 64 ? 64 : 2 * n))
    "$Z" compare --model "$m" --cluster "$CLUSTER" --gpus "$n" --global-batch "$g" --format json \
      >"$TMP/scaling/$m-$n.json"
  done
done
"$Z" clusters "$CLUSTER" --format json >"$TMP/scaling-cluster.json"
"$PYTHON" plots/throughput.py --compare "$TMP"/scaling/*.json --cluster "$TMP/scaling-cluster.json" --note "global batch max(64, 2·GPUs) sequences" \
  --out "$OUT"
