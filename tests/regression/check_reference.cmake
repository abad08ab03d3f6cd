# Runs one reference case of the `zeropp` CLI and compares its JSON with the committed baseline.
#   cmake -DZEROPP=<exe> -DCOMPARE=<zeropp-json-compare> -DARGS=<args joined by @@> -DEXPECTED=<baseline.json>
#         -DGOT=<output.json> -DREL=<relative tolerance> -DABS=<absolute floor> -P check_reference.cmake
string(REPLACE "@@" ";" args "${ARGS}")
string(REPLACE "@@" " " shown "${ARGS}")  # for messages
get_filename_component(out_dir "${GOT}" DIRECTORY)
file(MAKE_DIRECTORY "${out_dir}")
execute_process(COMMAND "${ZEROPP}" ${args} RESULT_VARIABLE rc OUTPUT_FILE "${GOT}" ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "zeropp ${shown}: exit code ${rc}\n${err}")
endif()
if(NOT EXISTS "${EXPECTED}")
  message(FATAL_ERROR "${EXPECTED}: no baseline for this case; run scripts/update-reference.sh and commit it")
endif()
execute_process(COMMAND "${COMPARE}" "${EXPECTED}" "${GOT}" --rel ${REL} --abs ${ABS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "zeropp ${shown}\n${out}${err}The model's answer changed. If that is intended, run "
                      "scripts/update-reference.sh, look at `git diff results/reference` and commit it.")
endif()
message(STATUS "${out}")
