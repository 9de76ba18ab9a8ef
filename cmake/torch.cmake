# The optional LibTorch component (issue: LibTorch). TRAINRT_WITH_TORCH = AUTO builds it when
# find_package(Torch) finds Debian's libtorch-dev, ON requires it, OFF leaves it out. It is its own
# library, libtrainrt_torch: jobs that do not use LibTorch never load it. Sets TRAINRT_HAS_TORCH.
set(TRAINRT_HAS_TORCH 0)
if(NOT TRAINRT_WITH_TORCH STREQUAL "OFF")
  find_package(Torch QUIET)
  if(Torch_FOUND OR TORCH_FOUND)
    set(TRAINRT_HAS_TORCH 1)
  elseif(TRAINRT_WITH_TORCH STREQUAL "ON")
    message(FATAL_ERROR "TRAINRT_WITH_TORCH=ON but find_package(Torch) failed: install libtorch-dev "
                        "(make deps does) or set Torch_DIR")
  endif()
endif()
message(STATUS "trainrt: LibTorch component ${TRAINRT_HAS_TORCH} (TRAINRT_WITH_TORCH=${TRAINRT_WITH_TORCH})")

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
  target_link_libraries(trainrt_torch PUBLIC trainrt_lib ${TORCH_LIBRARIES} PRIVATE trainrt_deps)
endfunction()
