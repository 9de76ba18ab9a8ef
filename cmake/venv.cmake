# The project's Python environment (tools/deps.sh makes it from tools/requirements.txt): its
# interpreter is the one the Python component embeds and builds for, and its torch wheel is the
# LibTorch the LibTorch component builds against (one torch for Python and C++). TRAINRT_VENV (or
# the environment variable of that name) names another environment; -DPython3_EXECUTABLE= and
# -DTorch_DIR= still override each choice.
if(DEFINED ENV{TRAINRT_VENV})
  set(_trainrt_venv_default "$ENV{TRAINRT_VENV}")
else()
  set(_trainrt_venv_default /opt/trainrt-deps/venv)
endif()
set(TRAINRT_VENV "${_trainrt_venv_default}" CACHE PATH
    "Python environment whose interpreter and torch trainrt builds for (tools/deps.sh makes it)")
if(NOT Python3_EXECUTABLE AND EXISTS ${TRAINRT_VENV}/bin/python3)
  set(Python3_EXECUTABLE ${TRAINRT_VENV}/bin/python3 CACHE FILEPATH
      "the interpreter the Python component is built for and embeds (the project environment's)")
endif()
# FindPython keeps what it found for an earlier interpreter (its libpython, its headers) when the
# interpreter changes to one of the same version: a build directory configured before the
# environment existed (make demo on a new machine, then make deps and make test) would embed the
# interpreter on PATH's libpython with the environment's standard library. Forgotten here.
if(Python3_EXECUTABLE AND DEFINED CACHE{_Python3_EXECUTABLE} AND NOT _Python3_EXECUTABLE STREQUAL Python3_EXECUTABLE)
  get_cmake_property(_trainrt_cached CACHE_VARIABLES)
  list(FILTER _trainrt_cached INCLUDE REGEX "^(_Python3?_.*|pybind11_INCLUDE_DIRS)$")  # pybind11 finds Python_ too
  foreach(_trainrt_var IN LISTS _trainrt_cached)
    unset(${_trainrt_var} CACHE)
  endforeach()
endif()

# torch.utils.cmake_prefix_path of the interpreter's torch, for find_package(Torch), when Torch_DIR
# is not given. Empty when that interpreter has no torch.
function(trainrt_torch_prefix_of python out)
  set(prefix "")
  if(python)
    execute_process(COMMAND ${python} -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
                    OUTPUT_VARIABLE prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
    if(failed)
      set(prefix "")
    endif()
  endif()
  set(${out} "${prefix}" PARENT_SCOPE)
endfunction()
