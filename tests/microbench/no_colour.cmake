# zeropp-bench's console output redirected to a file (not a terminal) carries no ANSI colour codes, even with a TERM
# that names a colour terminal (Google Benchmark colours by TERM alone; microbench/main.cpp turns it off).
#   cmake -DBENCH=<zeropp-bench> -P no_colour.cmake
execute_process(COMMAND ${CMAKE_COMMAND} -E env TERM=xterm-256color "${BENCH}" --zeropp_gemm_hidden=64
                        --zeropp_gemm_tokens=32 --zeropp_gemm_seq= --zeropp_gemm_square= --zeropp_iterations=1
                        --benchmark_filter=gemm
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "zeropp-bench: exit ${rc}\n${out}${err}")
endif()
string(ASCII 27 esc)
string(FIND "${out}" "${esc}[" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "zeropp-bench wrote ANSI escape codes into redirected output:\n${out}")
endif()
if(NOT out MATCHES "gemm/")
  message(FATAL_ERROR "zeropp-bench ran no GEMM benchmark:\n${out}${err}")
endif()
message(STATUS "no colour codes in redirected output")
