# What `zeropp` does with the output paths it is given (cost_model/spec/atomic_file.hpp, README "Output files"),
# one case per run, in a fresh folder of the build tree: every special file is made here (a FIFO, links), none of
# the machine's own /dev nodes is written.
#   cmake -DZEROPP=<exe> -DCASE=<name> -DWORK=<folder> -DSOURCE=<source root> -P output_paths.cmake
# Cases:
#   csv_is_the_model        search --model m.json --csv m.json: refused, m.json unchanged
#   csv_is_the_experiment   search --experiment e.json --csv e.json: refused, e.json unchanged
#   csv_links_to_the_model  --csv a symbolic link to the model: refused (the same file under another name)
#   calibrate_over_input    calibrate in.txt -o in.txt: refused, in.txt unchanged
#   calibrate_over_base     calibrate ... --base b.json -o b.json: refused, b.json unchanged
#   csv_empty, o_empty, trace_empty   an empty path: one line naming the option
#   trace_to_own_stdout     schedule --trace LINK, LINK -> /proc/self/fd/1 (what /dev/stdout is): the trace comes
#                           out on standard output, the link stays a link
#   trace_into_fifo         schedule --trace FIFO with a reader: the reader gets the trace, the FIFO stays a FIFO
#   csv_through_link        --csv LINK -> out.csv: out.csv written, the link stays a link
#   csv_dangling_link       --csv LINK -> nothing: refused, the link stays, nothing is created
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

set(search_args search --cluster dgx-a100-80gb --gpus 8 --global-batch 16 --strategies 3d --top 1)
set(schedule_args schedule --schedule 1f1b --pp 2 --micro-batches 4)
set(nccl_file ${SOURCE}/tests/data/nccl-tests/all_reduce_8gpu.txt)

# Runs zeropp with the given arguments; sets rc and out (stdout and stderr together) in the caller.
macro(run)
  execute_process(COMMAND ${ZEROPP} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  set(out "${stdout}${stderr}")
endmacro()

function(expect_refused regex)
  if(NOT rc STREQUAL "2" OR NOT out MATCHES "^zeropp: error: ${regex}[^\n]*\n$")
    message(FATAL_ERROR "${CASE}: expected exit 2 and one line matching /${regex}/, got exit ${rc}:\n${out}")
  endif()
endfunction()

function(expect_unchanged path original)
  file(READ ${path} now)
  file(READ ${original} before)
  if(NOT now STREQUAL before)
    message(FATAL_ERROR "${CASE}: ${path} was changed")
  endif()
endfunction()

if(CASE STREQUAL "csv_is_the_model")
  configure_file(${SOURCE}/configs/models/gpt3-1.3b.json ${WORK}/m.json COPYONLY)
  run(${search_args} --model ${WORK}/m.json --csv ${WORK}/m.json)
  expect_refused("--csv: [^\n]*/m.json is the same file as the input [^\n]*/m.json; writing it would destroy")
  expect_unchanged(${WORK}/m.json ${SOURCE}/configs/models/gpt3-1.3b.json)
elseif(CASE STREQUAL "csv_is_the_experiment")
  file(WRITE ${WORK}/e.json
       "{\"name\": \"e\", \"model\": \"gpt3-1.3b\", \"cluster\": \"dgx-a100-80gb\", \"gpus\": 8, \"global_batch\": 16}\n")
  configure_file(${WORK}/e.json ${WORK}/e.orig COPYONLY)
  run(search --experiment ${WORK}/e.json --csv ${WORK}/e.json)
  expect_refused("--csv: [^\n]*/e.json is the same file as the input [^\n]*/e.json")
  expect_unchanged(${WORK}/e.json ${WORK}/e.orig)
elseif(CASE STREQUAL "csv_links_to_the_model")
  configure_file(${SOURCE}/configs/models/gpt3-1.3b.json ${WORK}/m.json COPYONLY)
  file(CREATE_LINK ${WORK}/m.json ${WORK}/link.csv SYMBOLIC)
  run(${search_args} --model ${WORK}/m.json --csv ${WORK}/link.csv)
  expect_refused("--csv: [^\n]*/link.csv is the same file as the input [^\n]*/m.json")
  expect_unchanged(${WORK}/m.json ${SOURCE}/configs/models/gpt3-1.3b.json)
elseif(CASE STREQUAL "calibrate_over_input")
  configure_file(${nccl_file} ${WORK}/in.txt COPYONLY)
  run(calibrate ${WORK}/in.txt --base dgx-h100 -o ${WORK}/in.txt)
  expect_refused("-o: [^\n]*/in.txt is the same file as the input [^\n]*/in.txt")
  expect_unchanged(${WORK}/in.txt ${nccl_file})
elseif(CASE STREQUAL "calibrate_over_base")
  configure_file(${SOURCE}/configs/clusters/dgx-h100.json ${WORK}/b.json COPYONLY)
  run(calibrate ${nccl_file} --base ${WORK}/b.json -o ${WORK}/b.json)
  expect_refused("-o: [^\n]*/b.json is the same file as the input [^\n]*/b.json")
  expect_unchanged(${WORK}/b.json ${SOURCE}/configs/clusters/dgx-h100.json)
# An empty argument does not survive a macro's ARGN: these call execute_process themselves.
elseif(CASE STREQUAL "csv_empty")
  execute_process(COMMAND ${ZEROPP} ${search_args} --model gpt3-1.3b --csv ""
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  set(out "${stdout}${stderr}")
  expect_refused("--csv: the output path is empty")
elseif(CASE STREQUAL "o_empty")
  execute_process(COMMAND ${ZEROPP} calibrate ${nccl_file} --base dgx-h100 -o ""
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  set(out "${stdout}${stderr}")
  expect_refused("--output: the output path is empty")
elseif(CASE STREQUAL "trace_empty")
  execute_process(COMMAND ${ZEROPP} ${schedule_args} --trace ""
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  set(out "${stdout}${stderr}")
  expect_refused("--trace: the output path is empty")
elseif(CASE STREQUAL "trace_to_own_stdout")
  file(CREATE_LINK /proc/self/fd/1 ${WORK}/stdout SYMBOLIC)
  run(${schedule_args} --trace ${WORK}/stdout)
  if(NOT rc STREQUAL "0" OR NOT stdout MATCHES "^{\"displayTimeUnit\":\"ms\",\"traceEvents\":\\[.*\n\\]}\nschedule 1f1b")
    message(FATAL_ERROR "${CASE}: expected the trace, then the table, on standard output; exit ${rc}:\n${out}")
  endif()
  if(NOT IS_SYMLINK ${WORK}/stdout)
    message(FATAL_ERROR "${CASE}: the link was replaced")
  endif()
elseif(CASE STREQUAL "trace_into_fifo")
  execute_process(COMMAND mkfifo ${WORK}/fifo RESULT_VARIABLE made)
  if(NOT made STREQUAL "0")
    message(FATAL_ERROR "${CASE}: mkfifo failed")
  endif()
  # `cat FIFO -` reads the trace from the FIFO, then zeropp's own output from the pipe until zeropp exits.
  execute_process(COMMAND ${ZEROPP} ${schedule_args} --trace ${WORK}/fifo COMMAND cat ${WORK}/fifo -
                  RESULTS_VARIABLE codes OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT codes STREQUAL "0;0" OR NOT stdout MATCHES "^{\"displayTimeUnit\":\"ms\",\"traceEvents\":\\[.*\n\\]}\nschedule 1f1b")
    message(FATAL_ERROR "${CASE}: expected the trace through the FIFO; exit codes ${codes}:\n${stdout}${stderr}")
  endif()
  execute_process(COMMAND test -p ${WORK}/fifo RESULT_VARIABLE still_fifo)
  if(NOT still_fifo STREQUAL "0")
    message(FATAL_ERROR "${CASE}: the FIFO was replaced")
  endif()
elseif(CASE STREQUAL "csv_through_link")
  file(WRITE ${WORK}/out.csv "old\n")
  file(CREATE_LINK ${WORK}/out.csv ${WORK}/link.csv SYMBOLIC)
  run(${search_args} --model gpt3-1.3b --csv ${WORK}/link.csv)
  file(READ ${WORK}/out.csv csv)
  if(NOT rc STREQUAL "0" OR NOT csv MATCHES "^index,strategy," OR NOT IS_SYMLINK ${WORK}/link.csv)
    message(FATAL_ERROR "${CASE}: expected the CSV in out.csv behind the link; exit ${rc}:\n${out}\n${csv}")
  endif()
elseif(CASE STREQUAL "csv_dangling_link")
  file(CREATE_LINK ${WORK}/nowhere.csv ${WORK}/link.csv SYMBOLIC)
  run(${search_args} --model gpt3-1.3b --csv ${WORK}/link.csv)
  expect_refused("--csv: [^\n]*/link.csv is a symbolic link to [^\n]*/nowhere.csv, which does not exist")
  if(NOT IS_SYMLINK ${WORK}/link.csv OR EXISTS ${WORK}/nowhere.csv)
    message(FATAL_ERROR "${CASE}: the link was replaced or its target created")
  endif()
else()
  message(FATAL_ERROR "unknown case ${CASE}")
endif()
message(STATUS "${CASE}: as expected")
