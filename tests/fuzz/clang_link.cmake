# fuzz.clang_link (tests/fuzz/CMakeLists.txt): builds the fuzz targets' entry points with clang++ and libFuzzer
# against this build's libraries (clang_link/CMakeLists.txt), then runs each binary on two generated inputs, so
# the `fuzz` preset's targets cannot stop linking unseen again.
#   cmake -DCLANGXX=<clang++> -DSOURCE=<source root> -DGENERATED=<build>/generated -DWORK=<folder>
#         -DLIBS=<libraries joined by @@> -DTARGETS=<names joined by @@> -DGENERATOR=<generator> -P clang_link.cmake
# Prints "fuzz.clang_link: skipped" (the test's SKIP_REGULAR_EXPRESSION) when clang has no fuzzer runtime.
execute_process(COMMAND ${CLANGXX} -print-resource-dir OUTPUT_VARIABLE resources OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE rc)
file(GLOB runtime "${resources}/lib/linux/libclang_rt.fuzzer-*.a" "${resources}/lib/*/libclang_rt.fuzzer.a")
if(NOT rc EQUAL 0 OR NOT runtime)
  message("fuzz.clang_link: skipped: ${CLANGXX} has no libFuzzer runtime (Debian: libclang-rt-dev, docs/fuzz.md)")
  return()
endif()

execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE}/tests/fuzz/clang_link -B ${WORK} -G ${GENERATOR}
                        -DCMAKE_CXX_COMPILER=${CLANGXX} -DCMAKE_BUILD_TYPE=Release -DZEROPP_SOURCE=${SOURCE}
                        -DZEROPP_GENERATED=${GENERATED} "-DZEROPP_LIBS=${LIBS}" "-DZEROPP_TARGETS=${TARGETS}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the clang fuzz targets failed:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the fuzz targets with clang failed:\n${out}")
endif()
string(REPLACE "@@" ";" targets "${TARGETS}")
foreach(name ${targets})
  execute_process(COMMAND ${WORK}/zeropp-fuzz-${name} -runs=2 -seed=1 WORKING_DIRECTORY ${SOURCE}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "Done 2 runs")
    message(FATAL_ERROR "zeropp-fuzz-${name} -runs=2 failed (exit ${rc}):\n${out}")
  endif()
endforeach()
message("fuzz.clang_link: ${targets} built with ${CLANGXX} and libFuzzer, linked, and run")
