# Lays out a results folder for the `zeropp report` tests:
#   cmake -DDIR=<folder> -DOUT=<-o folder> -DDATA=<tests/cli/data> [-DCACHE=<validation-cache>] -P report_fixture.cmake
# loop/ holds a trainer result with known numbers (measured 2.0 s, predicted 2.1 s: +5.0%) and a file that is not
# a trainer result (skipped); figures/ holds one figure the report must link (only its existence matters).
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}/loop" "${DIR}/figures")
# The tests' -o folder: `zeropp report -o` writes into an existing folder only (a mistyped one is not created).
file(MAKE_DIRECTORY "${OUT}")
file(COPY "${DATA}/report_trainer_run.json" DESTINATION "${DIR}/loop")
file(WRITE "${DIR}/loop/report_trainer_run.plan.json" "{\"model\": \"gpt3-1.3b\"}\n")
file(WRITE "${DIR}/figures/criterion_map.png" "")
# The leave-one-out errors the repository's report cached (results/validation-cache): used when their input hash
# still matches, recomputed (slower, same result) when the model changed since.
# The tests without a results folder (--results <report dir>/absent) get them too: they hold nothing else.
if(DEFINED CACHE AND EXISTS "${CACHE}")
  file(COPY "${CACHE}" DESTINATION "${DIR}")
  file(REMOVE_RECURSE "${DIR}/../absent")
  file(COPY "${CACHE}" DESTINATION "${DIR}/../absent")
endif()
