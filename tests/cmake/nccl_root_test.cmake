# cmake/nccl.cmake with ZEROPP_NCCL_ROOT: an NCCL under the prefix is found there (lib64 too), and a prefix without
# one is an error naming it, not a fall back to another NCCL.
#   cmake -DMODULE=<cmake/nccl.cmake> -DWORK=<scratch folder> -P nccl_root_test.cmake
file(REMOVE_RECURSE ${WORK})
file(WRITE ${WORK}/nccl-2.28/include/nccl.h "")
file(WRITE ${WORK}/nccl-2.28/lib64/libnccl.so "")
file(MAKE_DIRECTORY ${WORK}/empty)
# Another NCCL on CMake's search path, which a prefix without NCCL must not fall back to.
file(WRITE ${WORK}/other/include/nccl.h "")
file(WRITE ${WORK}/other/lib/libnccl.so "")
# The module as a build includes it, then what it found.
file(WRITE ${WORK}/find.cmake "include(\"${MODULE}\")\nmessage(\"found \${ZEROPP_NCCL_LIBRARY} \${ZEROPP_NCCL_INCLUDE}\")\n")

function(find_with root expect_rc expect_regex)
  execute_process(COMMAND ${CMAKE_COMMAND} -DZEROPP_NCCL_ROOT=${root} -DCMAKE_LIBRARY_PATH=${WORK}/other/lib
                          -DCMAKE_INCLUDE_PATH=${WORK}/other/include -P ${WORK}/find.cmake
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if((expect_rc EQUAL 0 AND NOT rc EQUAL 0) OR (NOT expect_rc EQUAL 0 AND rc EQUAL 0))
    message(FATAL_ERROR "ZEROPP_NCCL_ROOT=${root}: exit ${rc}\n${out}${err}")
  endif()
  string(REGEX REPLACE "[ \n]+" " " flat "${out}${err}")  # CMake wraps long messages at a width of its own
  if(NOT flat MATCHES "${expect_regex}")
    message(FATAL_ERROR "ZEROPP_NCCL_ROOT=${root}: output does not match /${expect_regex}/\n${out}${err}")
  endif()
endfunction()

find_with(${WORK}/nccl-2.28 0 "found ${WORK}/nccl-2.28/lib64/libnccl.so ${WORK}/nccl-2.28/include ")
find_with(${WORK}/empty 1 "ZEROPP_NCCL_ROOT=${WORK}/empty has no lib/libnccl.so")
message(STATUS "cmake/nccl.cmake: ZEROPP_NCCL_ROOT found the prefix's NCCL and refused an empty prefix")
