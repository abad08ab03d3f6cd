# CUDA is optional: the project builds and passes its tests without it.
# ZEROPP_HAVE_CUDA is ON only when nvcc, cuBLASLt and NCCL are all found. It builds cuda_util/ (zeropp_cuda_util:
# the helpers both users share), the trainer's CUDA backend and NCCL communicator (in zeropp_e2e),
# zeropp-bench-cuda, and their tests; the zeropp_nccl target below carries NCCL's library and headers.
# A toolkit outside /usr/local/cuda: -DCMAKE_CUDA_COMPILER=<toolkit>/bin/nvcc (CMake's CUDAToolkit follows it);
# NCCL outside the toolkit: -DZEROPP_NCCL_ROOT=<prefix> (cmake/nccl.cmake; docs/multi-node.md).
set(ZEROPP_HAVE_CUDA OFF)
if(ZEROPP_ENABLE_CUDA)
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Hopper is the target; a GPU-less build machine cannot use "native".
      set(CMAKE_CUDA_ARCHITECTURES 90a)
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)  # every .cu file: CMake 3.25 cannot pass C++20 to nvcc 13; host code stays C++20
    find_package(CUDAToolkit REQUIRED)
    include(${CMAKE_CURRENT_LIST_DIR}/nccl.cmake)  # ZEROPP_NCCL_ROOT: an NCCL outside the toolkit
    if(TARGET CUDA::cublasLt AND ZEROPP_NCCL_LIBRARY AND ZEROPP_NCCL_INCLUDE)
      message(STATUS "zeropp: NCCL ${ZEROPP_NCCL_LIBRARY} (headers ${ZEROPP_NCCL_INCLUDE})")
      add_library(zeropp_nccl INTERFACE)
      target_link_libraries(zeropp_nccl INTERFACE ${ZEROPP_NCCL_LIBRARY})
      target_include_directories(zeropp_nccl INTERFACE ${ZEROPP_NCCL_INCLUDE})
      set(ZEROPP_HAVE_CUDA ON)
    else()
      message(STATUS "zeropp: CUDA compiler found but cuBLASLt or NCCL missing; CUDA targets off")
    endif()
  endif()
endif()
message(STATUS "zeropp: CUDA targets ${ZEROPP_HAVE_CUDA}")
