# The optional CUDA/NCCL path (issue: GPU). TRAINRT_WITH_CUDA = AUTO builds it when nvcc, the CUDA
# runtime, cuBLAS and NCCL are found (this image has them under /usr/local/cuda, without a GPU),
# ON requires them, OFF leaves them out. Sets TRAINRT_HAS_CUDA (0/1) for build_config.hpp.
set(TRAINRT_HAS_CUDA 0)
if(NOT TRAINRT_WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS /usr/local/cuda/include ENV NCCL_HOME PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY nccl HINTS /usr/local/cuda/lib64 ENV NCCL_HOME PATH_SUFFIXES lib lib64)
  if(CMAKE_CUDA_COMPILER AND NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)  # A100, H100/H200
    endif()
    enable_language(CUDA)
    # CMake 3.25 predates nvcc 12's C++20 support and does not know its flag; CUDA sources take
    # the project's C++ standard (20).
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    find_package(CUDAToolkit)
    if(CUDAToolkit_FOUND AND TARGET CUDA::cublas)
      set(TRAINRT_HAS_CUDA 1)
    endif()
  endif()
  if(TRAINRT_WITH_CUDA STREQUAL "ON" AND NOT TRAINRT_HAS_CUDA)
    message(FATAL_ERROR "TRAINRT_WITH_CUDA=ON but nvcc, cuBLAS or NCCL was not found "
                        "(nvcc: '${CMAKE_CUDA_COMPILER}', nccl.h: '${NCCL_INCLUDE_DIR}', libnccl: '${NCCL_LIBRARY}')")
  endif()
endif()
message(STATUS "trainrt: CUDA/NCCL path ${TRAINRT_HAS_CUDA} (TRAINRT_WITH_CUDA=${TRAINRT_WITH_CUDA})")
