# The optional Python component (issue: Python training functions). TRAINRT_WITH_PYTHON = AUTO
# builds it, for the project environment's interpreter (cmake/venv.cmake), when its development
# files (Debian's python3-dev) and pybind11 >= 2.12 (the environment's) are found, ON requires them, OFF leaves it
# out. Sets TRAINRT_HAS_PYTHON. Three parts, none loaded by a job that does not use Python:
#   libtrainrt_python.so    the `python:FILE.py:FUNC` workload: embeds CPython, runs the function
#   trainrt/_trainrt.*.so   the extension module: the session, checkpoints, trainrt.run()
#   trainrt/*.py            the `trainrt` package users import (python/trainrt/)
# In the build tree and the install alike the package lives in <libdir>/trainrt/python/trainrt,
# so the embedding finds it beside its own library.
set(TRAINRT_HAS_PYTHON 0)
if(NOT TRAINRT_WITH_PYTHON STREQUAL "OFF")
  # Python3_EXECUTABLE: the project environment's interpreter (cmake/venv.cmake) unless given.
  find_package(Python3 3.9 QUIET COMPONENTS Interpreter Development.Embed Development.Module)
  # pybind11 2.12 or later (numpy 2 changed the array struct that older versions read: an array's
  # size came back 0): the environment's own (tools/requirements.txt), unless pybind11_DIR is given.
  if(Python3_FOUND AND NOT pybind11_DIR)
    execute_process(COMMAND ${Python3_EXECUTABLE} -m pybind11 --cmakedir OUTPUT_VARIABLE _trainrt_pybind11_dir
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _trainrt_no_pybind11)
    if(NOT _trainrt_no_pybind11)
      set(pybind11_DIR ${_trainrt_pybind11_dir})
    endif()
  endif()
  # pybind11 3's CMake tools take FindPython's "Python" once a package has found it (LibTorch's
  # config does, the interpreter alone): the same interpreter, with its development parts.
  if(Python3_FOUND)
    set(Python_EXECUTABLE ${Python3_EXECUTABLE})
    find_package(Python 3.9 QUIET COMPONENTS Interpreter Development.Embed Development.Module)
  endif()
  find_package(pybind11 2.12 CONFIG QUIET)
  if(Python3_FOUND AND pybind11_FOUND)
    set(TRAINRT_HAS_PYTHON 1)
  elseif(TRAINRT_WITH_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "TRAINRT_WITH_PYTHON=ON but Python 3 development files or pybind11 >= 2.12 were not "
                        "found: install python3-dev and, in the environment, pybind11 (make deps does)")
  endif()
endif()
message(STATUS "trainrt: Python component ${TRAINRT_HAS_PYTHON} (TRAINRT_WITH_PYTHON=${TRAINRT_WITH_PYTHON})")

set(TRAINRT_PYTHON_DIR ${CMAKE_INSTALL_LIBDIR}/trainrt/python)

# The package folder of the build: the build tree's lib/trainrt/python/trainrt, or, for an
# environment's own build (cmake/environment/), TRAINRT_PACKAGE_DIR.
function(trainrt_add_python_component)
  set(package_dir ${CMAKE_BINARY_DIR}/lib/trainrt/python/trainrt)
  if(TRAINRT_PACKAGE_DIR)
    set(package_dir ${TRAINRT_PACKAGE_DIR})
  endif()
  set(warnings -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)
  # The extension module: links libtrainrt (found by RUNPATH three directories up).
  file(GLOB module_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/python/module/*.cpp)
  pybind11_add_module(trainrt_python_module MODULE NO_EXTRAS ${module_sources})
  set_target_properties(trainrt_python_module PROPERTIES OUTPUT_NAME _trainrt
    LIBRARY_OUTPUT_DIRECTORY ${package_dir} INSTALL_RPATH "$ORIGIN/../../.." BUILD_RPATH "$ORIGIN/../../..")
  target_compile_options(trainrt_python_module PRIVATE -O2 ${warnings})
  target_link_libraries(trainrt_python_module PRIVATE trainrt_lib trainrt_deps)
  # The embedding: the `python` workload.
  file(GLOB embed_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/python/embed/*.cpp)
  add_library(trainrt_python SHARED ${embed_sources})
  set_target_properties(trainrt_python PROPERTIES OUTPUT_NAME trainrt_python
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib INSTALL_RPATH "$ORIGIN")
  target_compile_options(trainrt_python PRIVATE -O2 ${warnings})
  target_link_libraries(trainrt_python PRIVATE trainrt_lib trainrt_deps pybind11::embed)
  # The environment the embedding takes (interpreter.cpp): the interpreter it was built for.
  target_compile_definitions(trainrt_python PRIVATE TRAINRT_EMBED_PYTHON="${Python3_EXECUTABLE}")
  # The pure-Python package, copied beside the extension module.
  # Subpackages (trainrt.tune.schedulers, ...) keep their folders.
  set(py_root ${PROJECT_SOURCE_DIR}/python/trainrt)
  file(GLOB_RECURSE py_sources CONFIGURE_DEPENDS RELATIVE ${py_root} ${py_root}/*.py)
  set(copied)
  foreach(name ${py_sources})
    get_filename_component(folder ${package_dir}/${name} DIRECTORY)
    add_custom_command(OUTPUT ${package_dir}/${name} DEPENDS ${py_root}/${name}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${folder}
      COMMAND ${CMAKE_COMMAND} -E copy_if_different ${py_root}/${name} ${package_dir}/${name})
    list(APPEND copied ${package_dir}/${name})
  endforeach()
  add_custom_target(trainrt_python_package ALL DEPENDS ${copied})
  add_dependencies(trainrt_python trainrt_python_module trainrt_python_package)
  set(torch_backend "")
  if(TRAINRT_HAS_TORCH)
    trainrt_add_python_torch_module(${package_dir} "${warnings}")
    if(TRAINRT_HAS_PYTHON_TORCH)
      set(torch_backend "${TRAINRT_TORCH_VERSION}")
    endif()
  endif()
  # What the package's libraries were built for: trainrt._entry refuses the torch backend, naming
  # both versions, in a process whose torch is another one (a C++ ABI mismatch), and uses gloo.
  set(version "${PROJECT_VERSION}")
  if(trainrt_VERSION)
    set(version "${trainrt_VERSION}")
  endif()
  file(WRITE ${package_dir}/_build_info.py
    "# Written by trainrt's build (cmake/python.cmake): what this folder's libraries were built for.\n"
    "PYTHON = \"${Python3_VERSION}\"\nTORCH = \"${torch_backend}\"\nTRAINRT = \"${version}\"\n")
endfunction()

# trainrt/_trainrt_torch.*.so (with the LibTorch component too): libtrainrt_torch's process group
# handed to torch.distributed (scaling.backend = trainrt). Links PyTorch's libtorch_python.
function(trainrt_add_python_torch_module package_dir warnings)
  find_library(TRAINRT_TORCH_PYTHON_LIBRARY NAMES torch_python HINTS ${Python3_SITEARCH}/torch/lib NO_DEFAULT_PATH)
  if(NOT TRAINRT_TORCH_PYTHON_LIBRARY)
    message(WARNING "trainrt: libtorch_python not found under ${Python3_SITEARCH}/torch: no scaling.backend = trainrt")
    return()
  endif()
  pybind11_add_module(trainrt_python_torch_module MODULE NO_EXTRAS
                      ${PROJECT_SOURCE_DIR}/src/python/torch_module/module.cpp)
  set_target_properties(trainrt_python_torch_module PROPERTIES OUTPUT_NAME _trainrt_torch
    LIBRARY_OUTPUT_DIRECTORY ${package_dir} INSTALL_RPATH "$ORIGIN/../../.." BUILD_RPATH "$ORIGIN/../../..")
  target_compile_options(trainrt_python_torch_module PRIVATE -O2 ${warnings})
  target_link_libraries(trainrt_python_torch_module PRIVATE trainrt_torch ${TRAINRT_TORCH_PYTHON_LIBRARY})
  # torch's own pybind11 headers (in its include/) before any other: the process group this module
  # returns is a type torch registered, found only through the same pybind11 internals.
  target_include_directories(trainrt_python_torch_module BEFORE PRIVATE ${TORCH_INCLUDE_DIRS})
  add_dependencies(trainrt_python trainrt_python_torch_module)
  set(TRAINRT_HAS_PYTHON_TORCH 1 PARENT_SCOPE)
endfunction()
