# Runs the `zeropp` CLI once and checks its exit code and output (stdout and stderr together).
#   cmake -DZEROPP=<exe> -DARGS=<args joined by @@> -DEXPECT_RC=<code> -DEXPECT_REGEX=<regex>
#         [-DREJECT_REGEX=<regex>] -P run_cli.cmake
# REJECT_REGEX: the output must not match it (a warning that must not appear).
# A list of arguments cannot pass through -D unchanged (';' splits it), hence the @@ separator.
string(REPLACE "@@" ";" args "${ARGS}")
execute_process(COMMAND "${ZEROPP}" ${args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "zeropp ${args}: exit code ${rc}, expected ${EXPECT_RC}\n${all}")
endif()
if(DEFINED EXPECT_REGEX AND NOT EXPECT_REGEX STREQUAL "" AND NOT all MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "zeropp ${args}: output does not match /${EXPECT_REGEX}/\n${all}")
endif()
if(DEFINED REJECT_REGEX AND NOT REJECT_REGEX STREQUAL "" AND all MATCHES "${REJECT_REGEX}")
  message(FATAL_ERROR "zeropp ${args}: output matches /${REJECT_REGEX}/, which it must not\n${all}")
endif()
message(STATUS "zeropp ${args}: exit ${rc}, output matches")
