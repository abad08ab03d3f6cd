#!/usr/bin/env bash
# The measurements of issue 23 on a lent GPU machine (one H100 or H200), in one call of the device tool, from the
# package scripts/device/package.sh built here (why binaries are built here and carried: that script's header).
# docs/device.md gives the exact call, what comes back and how to import it.
#
# Steps, in the order the issue ranks them, so that a run cut short still returns the most important part. Each
# has its own time budget (`timeout`) inside one overall deadline (DEADLINE_S, default 420 s after the start), so
# one slow step cannot eat the others; a step past the deadline is recorded as not run.
#   env         nvidia-smi (name, driver, clocks, power limit), PyTorch, where the CUDA libraries were found,
#               ldd of every carried binary, the model shapes (zeropp-bench-cuda --zeropp_list_shapes: also the
#               first MPI singleton start)
#   tests       every CUDA test of the package's manifest (test_e2e_cuda, test_cuda_util, microbench.smoke_cuda,
#               ...: whatever ctest listed when it was built)
#   gemm_lt     bf16 GEMMs of GPT-3 1.3B and 13B, Llama-3 8B and 70B layers at tp 1/2/4/8, b 1/2/4 (and 8192^3) through
#               the trainer's LtMatmul (zeropp-bench-cuda)
#   gemm_torch  the same shapes through torch.matmul (microbench/compare_torch.py --shapes)
#   sdpa        causal attention forward/backward of those models through PyTorch's SDPA (flash, cuDNN, default)
#   kernels     the trainer's memory-bound kernels, block passes and optimizer step on its CUDA backend
#   trainer     zeropp-train, GPT-3 1.3B bf16 on one GPU: tokens/s, MFU, peak memory, the measured per-action
#               trace beside the simulator's prediction for the same plan (--compare-model=analytic, dgx-h100;
#               dgx-h200 on an H200)
#   torch       the same model and step in PyTorch eager and torch.compile (e2e/compare_torch.py)
#   trainer_flash  the trainer's GPT-3 1.3B step with its own flash attention kernels
#   trainer_llama  Meta-Llama-3-8B's config cut to 4 layers on one GPU (Llama layers, flash attention, GQA)
#   loss        the tiny GPT's and the tiny Llama's loss curves on the CPU and the CUDA backend, same seed and data
#   torch_math  PyTorch eager with the materialised softmax(QK^T)V zeropp's backend runs (last: least needed)
# Everything lands in $WORK (default /tmp/zeropp-device) and, after every step, is packed into $OUT: results.tar.gz
# (every step's JSON and log), summary.json (the headline numbers) and run.log (this script's output): 3 files,
# well inside the tool's 8. Nothing here changes the GPU's settings (no nvidia-smi -pm/-lgc/-pl/-r ...).
#
# Without a GPU (the rehearsal, scripts/device/rehearse.sh) every CUDA step fails or skips cleanly and says so.
# Environment: OUT (default results/device-run), WORK, DEVICE_PKG (default .device), STEPS (comma list, default
# all), BUDGET_<step> (seconds, overrides that step's budget: a second call reruns what the first cut short),
# TORCH_MODES (default eager,compile), DEADLINE_S, ZEROPP_DEVICE_SITE (a site-packages folder to search for CUDA
# wheels instead of torch's), ZEROPP_DEVICE_LIBDIRS (extra library folders, colon-separated).
set -uo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
if ! pkg=$(cd "${DEVICE_PKG:-.device}" 2>/dev/null && pwd); then
  echo "run: no package ${DEVICE_PKG:-.device} (scripts/device/package.sh makes it)"
  exit 2
fi
out=${OUT:-$src/results/device-run}
work=${WORK:-/tmp/zeropp-device}
steps=${STEPS:-env,tests,gemm_lt,gemm_torch,sdpa,kernels,trainer,torch,trainer_flash,trainer_llama,loss,torch_math}
deadline=${DEADLINE_S:-420}
mkdir -p "$out" "$work"
rm -rf "${work:?}"/*
exec > >(tee "$out/run.log") 2>&1
start=$(date +%s)
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1

# ---- the package's environment: Open MPI relocated into it, one singleton. Its libraries go before the system's
# for the carried programs only (ZEROPP_LD_LIBRARY_PATH, through `zp`): Python and PyTorch keep the device's own
# zlib and the rest.
export ZEROPP_LD_LIBRARY_PATH="$pkg/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OPAL_PREFIX="$pkg" OPAL_PKGLIBDIR="$pkg/lib/openmpi3" OPAL_LIBDIR="$pkg/lib" OPAL_PKGDATADIR="$pkg/share/openmpi"
export OPAL_DATADIR="$pkg/share" OPAL_SYSCONFDIR="$pkg/etc/openmpi"
export PMIX_MCA_mca_base_component_path="$pkg/lib/pmix" PMIX_INSTALL_PREFIX="$pkg"
export OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export ZEROPP_CONFIGS="$src/configs"
bin=$pkg/bin
zp="$src/scripts/device/zp"  # runs a carried program with ZEROPP_LD_LIBRARY_PATH as its LD_LIBRARY_PATH
export src pkg out work py bin zp  # the step_* functions run in a child bash (under `timeout`)
chmod +x "$zp" "$bin"/* 2>/dev/null || true  # in case a copy on the way dropped the modes

elapsed() { echo $(($(date +%s) - start)); }
steps_file=$work/steps.jsonl
: >"$steps_file"

pack() {
  "$py" "$src/scripts/device/summarize.py" "$work" >"$work/summary.txt" 2>&1 || true
  if [ -f "$work/summary.json" ]; then
    cp "$work/summary.json" "$out/summary.json.tmp" && mv "$out/summary.json.tmp" "$out/summary.json"
  fi
  tar czf "$out/results.tar.gz.tmp" -C "$work" . 2>/dev/null && mv "$out/results.tar.gz.tmp" "$out/results.tar.gz"
}

# run_step NAME BUDGET_S COMMAND...: the command (a program or one of the step_* functions below) runs under its
# budget with its output in $work/NAME.log (the log's tail is printed); one line of $work/steps.jsonl records it.
run_step() {
  local name=$1 budget=$2
  shift 2
  local budget_var="BUDGET_$name"
  budget=${!budget_var:-$budget}  # BUDGET_<step>=S overrides a step's budget (a rerun of the steps a first call cut)
  local left=$((deadline - $(elapsed) - 5)) status rc=null ms=null t0
  if [[ ",$steps," != *",$name,"* ]]; then
    status=not_selected
  elif [ "$left" -lt 10 ]; then
    status=deadline
    echo "== $name: not run (deadline ${deadline} s reached at $(elapsed) s)"
  else
    [ "$budget" -gt "$left" ] && budget=$left
    echo "== $name (budget ${budget} s, at $(elapsed) s)"
    t0=$(date +%s%N)
    if declare -F "$1" >/dev/null; then
      timeout -k 5 "$budget" bash -c "$*" >"$work/$name.log" 2>&1
    else
      timeout -k 5 "$budget" "$@" >"$work/$name.log" 2>&1
    fi
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    tail -n "${TAIL_LINES:-12}" "$work/$name.log"
    status=failed
    [ "$rc" -eq 0 ] && status=ok
    { [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; } && status=timeout
    echo "== $name: $status (rc $rc, $ms ms)"
  fi
  printf '{"step": "%s", "status": "%s", "rc": %s, "budget_s": %s, "at_s": %s, "ms": %s}\n' "$name" "$status" "$rc" \
    "$budget" "$(elapsed)" "$ms" >>"$steps_file"
  pack
}

# ---- env: where everything is, before any measurement.
step_env() {
  local fields=name,pci.bus_id,driver_version,memory.total,compute_cap,clocks.sm,clocks.max.sm,clocks.mem
  fields+=,clocks.max.mem,power.limit,power.default_limit,power.max_limit,pstate,temperature.gpu,persistence_mode
  # A field this driver does not know fails the whole query: then the five the issue needs, which every driver has.
  nvidia-smi --query-gpu="$fields" --format=csv >"$work/nvidia-smi.csv" 2>&1 ||
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv \
      >"$work/nvidia-smi.csv" 2>&1 || echo "nvidia-smi failed" >>"$work/nvidia-smi.csv"
  nvidia-smi -q >"$work/nvidia-smi-q.txt" 2>&1 || true
  cat "$work/nvidia-smi.csv"
  # CUDA libraries the binaries need, from the toolkit, the driver and PyTorch's wheels; ldd of every binary.
  local rc=0
  "$py" "$src/scripts/device/find_libs.py" --package "$pkg" --json "$work/libs.json" --env "$work/libs.env" || rc=1
  # shellcheck disable=SC1091
  [ -f "$work/libs.env" ] && . "$work/libs.env"  # ZEROPP_LD_LIBRARY_PATH with the CUDA libraries' folders
  "$py" - "$work/env.json" "$pkg/manifest.json" <<'PY'
import json, os, platform, subprocess, sys, time
def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except Exception as e:
        return f"error: {e}"
env = {"schema": 1, "time_unix": time.time(), "host": platform.node(), "kernel": platform.release(),
       "repo_root": os.environ["src"], "work": os.environ["work"],
       "cpu": run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"]).strip(), "cpus": os.cpu_count(),
       "glibc": platform.libc_ver()[1], "python": platform.python_version(),
       "nvcc": run(["sh", "-c", "nvcc --version 2>/dev/null | tail -2 | head -1"]),
       "package": json.load(open(sys.argv[2]))}
try:
    import torch
    env["torch"] = {"version": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
                    "nccl": ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else None,
                    "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None}
    if torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        env["torch"].update({"sm_count": p.multi_processor_count, "memory_bytes": p.total_memory,
                             "capability": f"{p.major}.{p.minor}"})
except Exception as e:
    env["torch"] = {"error": repr(e)}
json.dump(env, open(sys.argv[1], "w"), indent=1)
print("torch:", env["torch"])
PY
  "$zp" "$bin/zeropp-bench-cuda" --version || rc=1
  "$zp" "$bin/zeropp-bench-cuda" --zeropp_gemm_models=gpt3-1.3b,gpt3-13b,llama3-8b,llama3-70b --zeropp_gemm_tp=1,2,4,8 \
    --zeropp_gemm_batch=1,2,4 --zeropp_list_shapes="$work/shapes.json" || rc=1
  return $rc
}
export -f step_env
run_step env 60 step_env
[ -f "$work/libs.env" ] && . "$work/libs.env"

# ---- a. the CUDA tests.
run_step tests 90 "$py" "$src/scripts/device/run_tests.py" --package "$pkg" --src "$src" --work "$work" \
  --json "$work/tests.json" --per-test-timeout 60

# ---- b. the operation table.
run_step gemm_lt 100 "$zp" "$bin/zeropp-bench-cuda" --zeropp_gemm_hidden= --zeropp_gemm_seq= --zeropp_gemm_square=8192 \
  --zeropp_gemm_models=gpt3-1.3b,gpt3-13b,llama3-8b,llama3-70b --zeropp_gemm_tp=1,2,4,8 --zeropp_gemm_batch=1,2,4 \
  --zeropp_layer_hidden= --zeropp_optimizer_params= --zeropp_iterations=5 \
  --benchmark_out="$work/gemm-cublaslt.json" --benchmark_out_format=json
# Without the shape list (the env step failed to write it) torch.matmul still measures its default shapes.
shapes_arg=()
[ -f "$work/shapes.json" ] && shapes_arg=(--shapes "$work/shapes.json")
run_step gemm_torch 60 "$py" "$src/microbench/compare_torch.py" "${shapes_arg[@]}" --square 8192 \
  --repetitions 5 --json "$work/gemm-torch.json" --compare "$work/gemm-cublaslt.json"
run_step sdpa 75 "$py" "$src/scripts/device/sdpa_bench.py" --shapes "$work/shapes.json" --json "$work/sdpa.json"
# Layer passes at GPT-3 1.3B's and 13B's width (d = 128, s = 2048), the optimizer at 16 M to 256 M parameters,
# kernels at 8192 tokens of Llama-3 8B/70B and GPT-3 1.3B widths (with the weight passes' column sums, bias_W,
# layernorm_W and rmsnorm_W, by both kernels: -scalar, which the trainer runs, beside -vec16, which it runs once
# measured faster: e2e/backend/cuda/kernels.cuh kColumnSumsDefault), cross-entropy at GPT's (padded) and Llama-3's
# vocabularies; the attention core (the backend's flash kernels, its unfused core, and the mma.sync and WMMA flash
# kernels by name, forward/backward) at Llama-3 8B's heads (32 over 8 KV heads) and 16 heads (GPT-3 1.3B's width),
# d = 128, s = 2048, b = 1 (microbench/attention_bench.hpp).
run_step kernels 50 "$zp" "$bin/zeropp-bench-cuda" --zeropp_gemm_hidden= --zeropp_gemm_seq= \
  --zeropp_layer_hidden=2048,5120 --zeropp_layer_head_dim=128 --zeropp_layer_seq=2048 --zeropp_layer_batch=1 \
  --zeropp_attention_heads=32,16 --zeropp_attention_kv_heads=8,16 --zeropp_attention_seq=2048 \
  --zeropp_attention_head_dim=128 --zeropp_attention_batch=1 --zeropp_attention_kernels=mma,wmma \
  --zeropp_optimizer_params=16777216,67108864,268435456 \
  --zeropp_kernel_rows=8192 --zeropp_kernel_hidden=2048,4096,8192 --zeropp_kernel_vocab=50304,128256 \
  --zeropp_iterations=5 --benchmark_out="$work/bench-trainer-cuda.json" --benchmark_out_format=json

# ---- c. the trainer on one GPU, and PyTorch on the same model and step.
micro_batch=${MICRO_BATCH:-1} micro_batches=${MICRO_BATCHES:-8}
# The profile the trainer's plans predict with (--compare-model=analytic): the zoo's spec profile of the GPU
# nvidia-smi names (H200: dgx-h200, with its HBM3e bandwidth and capacity), else dgx-h100.
cluster=dgx-h100
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -q "H200" && cluster=dgx-h200
# GPT-3 1.3B's shape without dropout (the trainer has none and refuses a model that asks for it) and with the
# unfused attention of the GPT-era validation; bf16, the CUDA backend's precision; transformer_impl local: the trainer
# reduces the bias and norm-weight gradients in kernels of their own (spec/framework.hpp, weight_reductions), which
# it states for a Megatron plan without the key anyway (e2e/model/gpt_config.hpp, state_execution).
cat >"$work/gpt3-1.3b-1gpu.plan.json" <<JSON
{"model": {"name": "gpt3-1.3b-no-dropout", "layers": 24, "hidden": 2048, "heads": 16, "seq_len": 2048,
           "vocab": 50257, "dropout": false, "attention": "unfused"},
 "cluster": "$src/configs/clusters/$cluster.json",
 "parallel": {"strategy": "1f1b_zero1", "schedule": "1f1b", "pp": 1, "micro_batch": $micro_batch,
              "micro_batches": $micro_batches, "dtype": "bf16", "transformer_impl": "local"}}
JSON
run_step trainer 90 "$zp" "$bin/zeropp-train" --plan "$work/gpt3-1.3b-1gpu.plan.json" --backend cuda --steps 8 \
  --compare-model=analytic --trace "$work/trainer-gpt3-1.3b.trace.json" --out "$work/trainer-gpt3-1.3b.json"
run_step torch 150 "$py" "$src/e2e/compare_torch.py" --layers 24 --hidden 2048 --heads 16 --seq 2048 --vocab 50257 \
  --micro-batch "$micro_batch" --micro-batches "$micro_batches" --warmup 2 --steps 6 \
  --modes "${TORCH_MODES:-eager,compile}" --json "$work/torch-gpt3-1.3b.json"
# The same GPT-3 1.3B step with the trainer's own flash attention kernels instead of the materialised scores (the
# kernel PyTorch eager's SDPA row is compared with).
sed 's/"attention": "unfused"/"attention": "flash"/' "$work/gpt3-1.3b-1gpu.plan.json" >"$work/gpt3-1.3b-flash-1gpu.plan.json"
run_step trainer_flash 60 "$zp" "$bin/zeropp-train" --plan "$work/gpt3-1.3b-flash-1gpu.plan.json" --backend cuda \
  --steps 8 --compare-model=analytic --trace "$work/trainer-gpt3-1.3b-flash.trace.json" \
  --out "$work/trainer-gpt3-1.3b-flash.json"
# Meta-Llama-3-8B's config cut to 4 of its 32 layers: the Llama layers and the flash kernels at full width.
cat >"$work/llama3-8b-l4-1gpu.plan.json" <<JSON
{"model": "$src/tests/data/hf/llama-3-8b.json", "cluster": "$src/configs/clusters/$cluster.json",
 "parallel": {"strategy": "1f1b_zero1", "schedule": "1f1b", "pp": 1, "micro_batch": 1,
              "micro_batches": $micro_batches, "dtype": "bf16", "transformer_impl": "local"}}
JSON
run_step trainer_llama 60 "$zp" "$bin/zeropp-train" --plan "$work/llama3-8b-l4-1gpu.plan.json" --backend cuda \
  --steps 6 --model-override layers=4,seq_len=2048 --compare-model=analytic \
  --trace "$work/trainer-llama3-8b-l4.trace.json" --out "$work/trainer-llama3-8b-l4.json"

# ---- d. the tiny models' loss curves on both backends: the CPU backend computes in fp32, the CUDA one in bf16
# (Megatron's precision), and the trainer refuses a plan whose dtype is not its backend's, so each backend gets its
# own plan of the same model and step.
for model in tiny_gpt tiny_llama; do
  for be in cpu cuda; do
    dtype=fp32
    [ "$be" = cuda ] && dtype=bf16
    cat >"$work/$model-$be.plan.json" <<JSON
{"model": "$src/tests/e2e/plans/$model.json", "cluster": "$src/configs/clusters/$cluster.json",
 "parallel": {"strategy": "1f1b_zero1", "schedule": "1f1b", "pp": 1, "micro_batch": 2, "micro_batches": 4,
              "dtype": "$dtype"}}
JSON
  done
done
step_loss() {
  local rc=0
  for model in tiny_gpt tiny_llama; do
    for be in cpu cuda; do
      "$zp" "$bin/zeropp-train" --plan "$work/$model-$be.plan.json" --backend "$be" --steps "${TRACK_STEPS:-30}" \
        --seed 1234 --quiet --out "$work/loss-$model-$be.json" || rc=1
    done
  done
  return $rc
}
export -f step_loss
run_step loss 30 step_loss
run_step torch_math 60 "$py" "$src/e2e/compare_torch.py" --layers 24 --hidden 2048 --heads 16 --seq 2048 \
  --vocab 50257 --micro-batch "$micro_batch" --micro-batches "$micro_batches" --warmup 2 --steps 4 --modes eager \
  --attention math --json "$work/torch-gpt3-1.3b-math.json"

# ---- ncu_flash (only when STEPS names it): Nsight Compute's sections for the flash kernels the trainer runs at
# GPT-3 1.3B's attention (16 heads, d 128, s 2048, b 1: the mma.sync kernels, flash_mma_*; the WMMA ones, flash_tc_*,
# where the backend takes those), one launch of each: where their time goes (issue 23, item 4). --clock-control none
# leaves the GPU's clocks as they are (the device README asks for that).
step_ncu_flash() {
  local ncu
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
  [ -n "$ncu" ] || { echo "ncu_flash: no ncu on this machine"; return 1; }
  local pass count
  for pass in F B; do
    count=1; [ "$pass" = B ] && count=3  # the backward benchmark may run the forward first: dq and dk/dv after it
    "$ncu" --clock-control none --target-processes all --kernel-name regex:'flash_(tc|mma)_' --launch-count "$count" \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
      --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section InstructionStats \
      --export "$work/ncu-flash-$pass" --force-overwrite \
      "$zp" "$bin/zeropp-bench-cuda" --benchmark_filter="attention/trainer/bf16/flash/$pass/" \
      --zeropp_attention_heads=16 --zeropp_attention_kv_heads=16 --zeropp_attention_seq=2048 \
      --zeropp_attention_head_dim=128 --zeropp_attention_batch=1 --zeropp_iterations=1 || return 1
    "$ncu" --import "$work/ncu-flash-$pass.ncu-rep" --page details >"$work/ncu-flash-$pass.txt" || return 1
  done
}
export -f step_ncu_flash
run_step ncu_flash 150 step_ncu_flash

echo "== summary (at $(elapsed) s)"
pack
cat "$work/summary.txt"
ls -la "$out"
