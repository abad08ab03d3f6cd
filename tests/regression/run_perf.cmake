# Runs the model's speed benchmarks for the performance regression check and, given a baseline, compares.
#   cmake -DBENCH=<zeropp-model-bench> -DOUT=<run.json> [-DREPETITIONS=12]
#         [-DCOMPARE=<zeropp-bench-compare> -DBASELINE=<perf-baseline.json>] -P run_perf.cmake
# The one place that says which benchmarks run and how (the CTest test regression.perf and
# scripts/update-perf-baseline.sh both come here), so the baseline and the check always measure the same thing.
#
# Choices (docs/regression.md):
# - What users run: BM_CompareDefaultStudy is `zeropp compare`'s own path (search::compare_rows, simulator on)
#   on the default study, ~0.2 s of CPU per repetition (the exact search over the whole space, issue 13).
# - The benchmarks whose data stay in the caches, like the reference's: the three analytic estimates and a
#   lowered ZeroPP program of 7448 actions (p 8, v 2, B 64, U 8). Left out: the 1024-rank ones (seconds per iteration,
#   too few repetitions in the time CI can spare) and the 64-rank simulations (tens of MB of actions): their time
#   follows the memory bandwidth left by the neighbours, which the reference does not see. On this shared 2-core
#   VM, BM_SimulateOneFOneB/64/512 went from 5.5 to 8.2 ms of CPU time within five minutes while the reference
#   stayed at 1.07 ms and the cache-resident benchmarks moved by less than 3%.
#   BM_ReferenceWorkload is the unit of time.
# - Each repetition runs for at least MIN_TIME seconds, REPETITIONS times, and the repetitions of all benchmarks
#   run in a random order (--benchmark_enable_random_interleaving): a burst of load from a test running beside
#   this one then lands on random benchmarks, the reference included, instead of all repetitions of one.
# - The threshold and alpha of the check: a slowdown must exceed +THRESHOLD on the normalized median with a
#   one-sided Mann-Whitney p < ALPHA. +50% because the normalized times themselves drift with the neighbours'
#   load: on this VM, BM_SimulateZeroPP/8/2/64/8 measured 0.31 reference units at 20:20 and 0.38 at 20:26 on
#   the same day with the same simulator code (+23%), and another machine adds its own micro-architectural
#   difference. +50% is twice the drift seen; a 2x slowdown fails with margin. Smaller changes are printed in
#   every log but do not fail. With 12 repetitions against the baseline's 20 the smallest possible p is
#   1/C(32,12) ~ 4e-9, so a real slowdown is significant with room to spare. alpha = 1e-4, not 0.01: a burst of
#   load during the 5 s run once gave two benchmarks +65% and +76% at p = 0.0094 (2 failures in 7 quiet runs at
#   0.01); a real slowdown separates the repetitions completely (p ~ 4e-9), noise does not.
set(FILTER "^BM_(ReferenceWorkload|AnalyticEstimateZeroPP|AnalyticEstimate3D|AnalyticEstimateValidated|CompareDefaultStudy|SimulateZeroPP/8/2/64/8)$")
set(MIN_TIME 0.05)
if(NOT DEFINED REPETITIONS)
  set(REPETITIONS 12)
endif()
if(NOT DEFINED THRESHOLD)
  set(THRESHOLD 0.5)
endif()
if(NOT DEFINED ALPHA)
  set(ALPHA 1e-4)
endif()

# Load beside the run (another build, another test suite) takes the cores and, worse for a ratio, the caches:
# the cache-resident benchmarks lose more to a context switch than the compute-bound reference, so under a
# load average of ~18 on 2 cores every benchmark's normalized time rose by 45-50% at once (issue 21's branch,
# 2026-11-26), and BM_SimulateZeroPP by 51%, over the threshold, with the code unchanged. Two defences that keep
# the threshold and alpha: the benchmark runs at the highest CPU priority the user may set (nice -20 as root, the
# README's set-up; unchanged otherwise), so fewer switches interrupt it; and a failed comparison is measured
# again, ATTEMPTS times in all, the test failing only if every attempt fails. A real slowdown moves every
# repetition of every attempt and still fails each one (p ~ 4e-9 per attempt); a burst of load seldom lasts
# through three runs.
if(NOT DEFINED ATTEMPTS)
  set(ATTEMPTS 3)
endif()
set(priority)
find_program(NICE_PROGRAM nice)
if(NICE_PROGRAM)
  execute_process(COMMAND "${NICE_PROGRAM}" -n -20 true RESULT_VARIABLE nice_rc OUTPUT_QUIET ERROR_QUIET)
  if(nice_rc EQUAL 0)
    set(priority "${NICE_PROGRAM}" -n -20)
  endif()
endif()

set(failures "")
foreach(attempt RANGE 1 ${ATTEMPTS})
  execute_process(COMMAND ${priority} "${BENCH}" "--benchmark_filter=${FILTER}" "--benchmark_min_time=${MIN_TIME}"
                          "--benchmark_repetitions=${REPETITIONS}" --benchmark_enable_random_interleaving=true
                          "--benchmark_out=${OUT}" --benchmark_out_format=json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${BENCH}: exit code ${rc}\n${out}${err}")
  endif()
  if(NOT DEFINED BASELINE)
    message(STATUS "wrote ${OUT}")
    return()
  endif()
  execute_process(COMMAND "${COMPARE}" "${BASELINE}" "${OUT}" --threshold ${THRESHOLD} --alpha ${ALPHA}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    if(failures)
      message(STATUS "${failures}")
    endif()
    message(STATUS "attempt ${attempt} of ${ATTEMPTS} (priority: ${priority}):\n${out}")
    return()
  endif()
  set(load "unknown")
  if(EXISTS /proc/loadavg)
    file(READ /proc/loadavg load)
    string(STRIP "${load}" load)
  endif()
  string(APPEND failures "attempt ${attempt} of ${ATTEMPTS} failed (/proc/loadavg: ${load}):\n${out}${err}\n")
endforeach()
message(FATAL_ERROR "${failures}\nEvery attempt was slower. This run: ${OUT}. If the slowdown is intended (or the "
                    "reference benchmark or the benchmark set changed), refresh the baseline with "
                    "scripts/update-perf-baseline.sh.")
