# The optional LibTorch component (issue: LibTorch). TRAINRT_WITH_TORCH = AUTO builds it when
# find_package(Torch) finds the LibTorch of the project environment's torch wheel (cmake/venv.cmake),
# ON requires it, OFF leaves it out. It is its own library, libtrainrt_torch: jobs that do not use
# LibTorch never load it. Sets TRAINRT_HAS_TORCH and TRAINRT_TORCH_VERSION.
set(TRAINRT_HAS_TORCH 0)
set(TRAINRT_TORCH_VERSION "")
if(NOT TRAINRT_WITH_TORCH STREQUAL "OFF")
  # Caffe2's CUDA configuration (the wheel's torch is a CUDA build) otherwise runs a program to list
  # the GPUs, which fails where there is none; trainrt compiles no CUDA code against LibTorch.
  if(NOT TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(TORCH_CUDA_ARCH_LIST "8.0;9.0")
  endif()
  if(NOT Torch_DIR)
    trainrt_torch_prefix_of("${Python3_EXECUTABLE}" _trainrt_torch_prefix)
    if(_trainrt_torch_prefix)
      list(APPEND CMAKE_PREFIX_PATH ${_trainrt_torch_prefix})
    endif()
  endif()
  find_package(Torch QUIET)
  if(Torch_FOUND OR TORCH_FOUND)
    set(TRAINRT_HAS_TORCH 1)
    set(TRAINRT_TORCH_VERSION "${Torch_VERSION}")
    # An executable linking the wheel's libtorch_cuda resolves its CUDA libraries (NCCL, cuDNN, ...)
    # at link time from the wheel's nvidia-* packages, as the loader does through libtorch's
    # RUNPATH, not from a system CUDA that ld would find first (link-time only: no RUNPATH added).
    file(GLOB _trainrt_nvidia_libs LIST_DIRECTORIES true "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib")
    foreach(dir ${_trainrt_nvidia_libs})
      add_link_options("LINKER:-rpath-link,${dir}")
    endforeach()
  elseif(TRAINRT_WITH_TORCH STREQUAL "ON")
    message(FATAL_ERROR "TRAINRT_WITH_TORCH=ON but find_package(Torch) failed: the project environment "
                        "${TRAINRT_VENV} has no torch (make deps installs it) or set Torch_DIR")
  endif()
endif()
message(STATUS "trainrt: LibTorch component ${TRAINRT_HAS_TORCH} (TRAINRT_WITH_TORCH=${TRAINRT_WITH_TORCH}, torch ${TRAINRT_TORCH_VERSION} at ${Torch_DIR})")

# libtrainrt_torch (target trainrt_torch, exported as trainrt::torch): src/torch/, public API
# include/trainrt/torch.hpp.
function(trainrt_add_torch_library)
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/torch/*.cpp)
  add_library(trainrt_torch SHARED ${sources})
  set_target_properties(trainrt_torch PROPERTIES
    OUTPUT_NAME trainrt_torch EXPORT_NAME torch
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib INSTALL_RPATH "$ORIGIN")
  target_compile_options(trainrt_torch PRIVATE -O3 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)
  target_include_directories(trainrt_torch PUBLIC ${TORCH_INCLUDE_DIRS})
  # The wheel's include/ carries its own fmt (a newer major version than the libfmt trainrt links):
  # Debian's fmt headers go first, through a directory that holds only them.
  get_target_property(fmt_includes fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
  list(GET fmt_includes 0 fmt_include)
  set(fmt_first ${CMAKE_BINARY_DIR}/generated/fmt_first)
  file(MAKE_DIRECTORY ${fmt_first})
  file(CREATE_LINK ${fmt_include}/fmt ${fmt_first}/fmt SYMBOLIC)
  target_include_directories(trainrt_torch BEFORE PUBLIC $<BUILD_INTERFACE:${fmt_first}>)
  target_link_libraries(trainrt_torch PUBLIC trainrt_lib ${TORCH_LIBRARIES} PRIVATE trainrt_deps)
endfunction()
