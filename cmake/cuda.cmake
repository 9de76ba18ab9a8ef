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

# libtrainrt_cuda (target trainrt_cuda): every CUDA, cuBLAS and NCCL call (src/*/cuda/), loaded by
# libtrainrt on the first GPU call (comm/gpu_component.hpp), so CPU jobs never map CUDA's
# libraries. Host sources and kernels are compiled apart so that nvcc gets none of the host
# compiler's warning flags, and only these sources see CUDA's headers.
function(trainrt_add_cuda_component)
  file(GLOB_RECURSE host_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*/cuda/*.cpp)
  add_library(trainrt_gpu OBJECT ${host_sources})
  set_target_properties(trainrt_gpu PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(trainrt_gpu PRIVATE ${NCCL_INCLUDE_DIR})
  target_compile_options(trainrt_gpu PRIVATE -O3 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)
  target_link_libraries(trainrt_gpu PRIVATE trainrt_lib trainrt_deps CUDA::cudart CUDA::cublas)
  file(GLOB_RECURSE kernel_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/*/*/cuda/*.cu)
  add_library(trainrt_kernels OBJECT ${kernel_sources})
  set_target_properties(trainrt_kernels PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(trainrt_kernels PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include
                             ${CMAKE_BINARY_DIR}/generated)
  target_compile_options(trainrt_kernels PRIVATE -O3)
  target_link_libraries(trainrt_kernels PRIVATE CUDA::cudart CUDA::cublas)
  add_library(trainrt_cuda SHARED $<TARGET_OBJECTS:trainrt_gpu> $<TARGET_OBJECTS:trainrt_kernels>)
  set_target_properties(trainrt_cuda PROPERTIES
    OUTPUT_NAME trainrt_cuda
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib INSTALL_RPATH "$ORIGIN")
  target_link_libraries(trainrt_cuda PRIVATE trainrt_lib trainrt_deps CUDA::cudart CUDA::cublas ${NCCL_LIBRARY})
endfunction()
