# Finds NCCL for the CUDA targets: sets ZEROPP_NCCL_LIBRARY (libnccl) and ZEROPP_NCCL_INCLUDE (the folder of nccl.h).
#   -DZEROPP_NCCL_ROOT=<prefix>   an NCCL outside the CUDA toolkit (the NVIDIA tarball, a cluster's module, a
#                                 container's /opt/nccl): <prefix>/include/nccl.h and <prefix>/lib/libnccl.so
#                                 (or lib64). Only there: a prefix without NCCL is an error, never a silent fall
#                                 back to another NCCL. Defaults to the environment's NCCL_ROOT, else NCCL_HOME.
#   without it                    the CUDA toolkit's folders, /usr/local/cuda, then the system's (libnccl-dev).
#   -DZEROPP_NCCL_LIBRARY=<file> -DZEROPP_NCCL_INCLUDE=<dir>   name the two directly.
# Changing ZEROPP_NCCL_ROOT in an existing build folder searches again (the cache would keep the old NCCL).
# Used by cmake/cuda.cmake; a script (cmake -P) can include it too (tests/cmake/nccl_root_test.cmake).
set(zeropp_nccl_root_default "$ENV{NCCL_ROOT}")
if(NOT zeropp_nccl_root_default)
  set(zeropp_nccl_root_default "$ENV{NCCL_HOME}")
endif()
set(ZEROPP_NCCL_ROOT "${zeropp_nccl_root_default}" CACHE PATH "NCCL prefix outside the CUDA toolkit (include/, lib/)")
if(NOT "${ZEROPP_NCCL_ROOT}" STREQUAL "${ZEROPP_NCCL_ROOT_SEARCHED}")
  unset(ZEROPP_NCCL_LIBRARY CACHE)
  unset(ZEROPP_NCCL_INCLUDE CACHE)
  set(ZEROPP_NCCL_ROOT_SEARCHED "${ZEROPP_NCCL_ROOT}" CACHE INTERNAL "ZEROPP_NCCL_ROOT of the last search")
endif()
if(ZEROPP_NCCL_ROOT)
  find_library(ZEROPP_NCCL_LIBRARY nccl PATHS ${ZEROPP_NCCL_ROOT} PATH_SUFFIXES lib lib64 NO_DEFAULT_PATH)
  find_path(ZEROPP_NCCL_INCLUDE nccl.h PATHS ${ZEROPP_NCCL_ROOT} PATH_SUFFIXES include NO_DEFAULT_PATH)
  if(NOT ZEROPP_NCCL_LIBRARY OR NOT ZEROPP_NCCL_INCLUDE)
    message(FATAL_ERROR "zeropp: ZEROPP_NCCL_ROOT=${ZEROPP_NCCL_ROOT} has no lib/libnccl.so (or lib64/) and "
                        "include/nccl.h")
  endif()
else()
  find_library(ZEROPP_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  find_path(ZEROPP_NCCL_INCLUDE nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
endif()
