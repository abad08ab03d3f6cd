# The user's study end to end (issue 21): a HuggingFace config, nccl-tests output of one host and of 2 hosts x 8 GPUs,
# `zeropp calibrate` on the H100 base, `zeropp clusters` of the profile, and `zeropp report` of an H100 experiment
# with that model and profile. Each step's output is checked here; the report's Markdown and figures too.
#   cmake -DZEROPP=<exe> -DDIR=<work folder> -DSRC=<source tree> -P user_flow.cmake
set(nccl "${SRC}/tests/data/nccl-tests")
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}/results")

function(run name)
  execute_process(COMMAND "${ZEROPP}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name}: zeropp ${ARGN}: exit ${rc}\n${out}${err}")
  endif()
  set(${name} "${out}${err}" PARENT_SCOPE)
endfunction()

function(expect text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: does not match /${regex}/\n${text}")
  endif()
endfunction()

# 1. Calibrate: intra reduce_scatter from one host, inter all_reduce from 2 hosts x 8 (derived per GPU: busbw / 8,
# judged against the base's intra all_reduce, 480 GB/s: network-bound).
run(cal calibrate "${nccl}/reduce_scatter_8gpu.txt" "${nccl}/all_reduce_2hosts_8gpu.txt" --base dgx-h100
    --name my-h100 -o "${DIR}/my-h100.json")
expect("${cal}" "note: inter/all_reduce: derived from a ring over 2 hosts of 8 GPUs[^\n]*43\\.3[0-9] GB/s per GPU" "calibrate")
expect("${cal}" "wrote [^\n]*my-h100.json" "calibrate")

# 2. What was measured and what was kept, entry by entry.
run(clusters clusters "${DIR}/my-h100.json")
expect("${clusters}" "collectives.intra.reduce_scatter +calibrated \\(reduce_scatter_8gpu.txt\\)" "clusters")
expect("${clusters}" "collectives.intra.all_reduce +published \\(base dgx-h100\\)" "clusters")
expect("${clusters}" "collectives.intra.all_gather +published \\(base dgx-h100\\)" "clusters")
expect("${clusters}" "collectives.inter.all_reduce +calibrated \\(all_reduce_2hosts_8gpu.txt, derived: busbw / 8 GPUs per host\\)" "clusters")
expect("${clusters}" "collectives.inter.reduce_scatter +published \\(base dgx-h100\\)" "clusters")
expect("${clusters}" "all_reduce +480 GB/s[^\n]*\\| +43\\.3[0-9]* GB/s" "clusters")
expect("${clusters}" "all_gather +350 GB/s[^\n]*\\| +47 GB/s" "clusters")

# 3. The experiment: Llama-3 8B from its HuggingFace config on 64 GPUs of the calibrated profile.
file(WRITE "${DIR}/my-study.json"
     "{\"name\": \"my-study\", \"model\": \"${SRC}/tests/data/hf/llama-3-8b.json\", \"cluster\": \"${DIR}/my-h100.json\", \"gpus\": 64, \"global_batch\": 256}\n")

# 4. The report: its own figures beside it, the H100 validation set (a three-row subset, so that the leave-one-out
# runs in seconds here) with the error band, the FLOP convention, the criterion of the model's own layer.
run(report report --experiment "${DIR}/my-study.json" --seq 4096 --results "${DIR}/results"
    --validation-set "${SRC}/tests/cli/data/h100_small_set.json" -o "${DIR}/my-study.md")
expect("${report}" "my-study: llama-3-8b on 64 GPUs of my-h100" "report")
expect("${report}" "error band of ZeroPP vs 3D at the typical error [0-9.]+%" "report")
expect("${report}" "figures linked: 4\n" "report")
file(READ "${DIR}/my-study.md" md)
expect("${md}" "Cluster figures: collectives calibrated\\+published" "report.md")
expect("${md}" "Error band of ZeroPP vs 3D [0-9.]+x: [0-9.]+x to [0-9.]+x at the typical error" "report.md")
expect("${md}" "P = [0-9]+ parameters = 13 h²" "report.md")
expect("${md}" "vs 3P/\\(4h\\) = 39938 \\(the paper's 9·h = 36864\\)" "report.md")
expect("${md}" "TP over 8 GPUs with TP [^\n]*, the rule of the 3D plan it is compared with" "report.md")
expect("${md}" "### Peak memory by part, and when it occurs" "report.md")
expect("${md}" "\\*\\*Published runs: [^\n]*h100_small_set.json\\*\\*" "report.md")
expect("${md}" "\\*\\*FLOP convention\\.\\*\\* TFLOP/s per GPU counts the FLOPs the plan executes" "report.md")
expect("${md}" "!\\[schedule_gantt\\]\\(my-study-figures/schedule_gantt\\.png\\)" "report.md")
foreach(f memory_breakdown schedule_gantt criterion_map validation)
  if(NOT EXISTS "${DIR}/my-study-figures/${f}.png")
    message(FATAL_ERROR "report: ${DIR}/my-study-figures/${f}.png was not drawn")
  endif()
endforeach()
if(md MATCHES "NOMINAL")
  message(FATAL_ERROR "report.md: a calibrated H100 profile is not nominal\n${md}")
endif()
# The Gantt's trace holds the ZeroPP plan's gathers and reduce-scatters (z > 1).
file(READ "${DIR}/my-study-figures/gantt-trace.json" trace)
expect("${trace}" "UNSHARD" "gantt-trace.json")
expect("${trace}" "REDUCE_GRAD" "gantt-trace.json")
message(STATUS "user flow: calibrate, clusters, report: all checked")
