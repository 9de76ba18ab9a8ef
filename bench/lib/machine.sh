# shellcheck shell=bash
# Sourced by the benchmark scripts that write a results directory's machine.txt
# (bench/reporting/render.py reads it). machine_lines BUILD: the lines naming the machine and the
# build (cpu, nproc, date, kernel, trainrt, compiler, build_type, mpich); each script adds its own.
machine_lines() {
  local build=$1 build_type
  printf 'cpu=%s\n' "$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n1)"
  printf 'nproc=%s\n' "$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)"  # nproc obeys OMP_NUM_THREADS
  printf 'date=%s\n' "$(date -u '+%Y-%m-%d %H:%M UTC')"
  printf 'kernel=%s\n' "$(uname -r)"
  printf 'trainrt=%s\n' "$(git describe --always --dirty 2>/dev/null || echo unknown)"
  printf 'compiler=%s\n' "$(sed -n 's/^CMAKE_CXX_COMPILER:[^=]*=//p' "$build/CMakeCache.txt") $(c++ -dumpfullversion 2>/dev/null || true)"
  build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[^=]*=//p' "$build/CMakeCache.txt")
  printf 'build_type=%s\n' "${build_type:-RelWithDebInfo (CMakeLists.txt default)}"
  printf 'mpich=%s\n' "$(dpkg-query -W -f='${Version}' mpich 2>/dev/null || echo "not installed")"
}

# build_python BUILD: the interpreter the build's Python component was built for (the project
# environment's python3, cmake/venv.cmake): the one every benchmark's Python runs with.
build_python() {
  local python
  python=$(sed -n 's/^Python3_EXECUTABLE:[^=]*=//p' "$1/CMakeCache.txt" 2>/dev/null)
  [[ -x $python ]] || { echo "bench: $1 has no Python3_EXECUTABLE (configure it after make deps)" >&2; return 1; }
  echo "$python"
}
