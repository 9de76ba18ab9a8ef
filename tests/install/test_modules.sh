#!/usr/bin/env bash
# The generated module files with real Lmod (Debian's lmod) and real Environment Modules (Debian's
# environment-modules, unpacked by make deps): in a clean shell, `module use PREFIX/modulefiles;
# module load trainrt` puts the installed trainrt on PATH (`trainrt --version` works) and sets
# LD_LIBRARY_PATH, CMAKE_PREFIX_PATH and TRAINRT_ROOT; `module unload trainrt` restores the
# environment exactly; help and whatis text are there.
# ctest: fixture=trainrt_installed
source "$(dirname "$0")/lib.sh"
EM=${TRAINRT_EM_DIR:-/opt/trainrt-deps/environment-modules}/usr/lib/x86_64-linux-gnu/modulecmd.tcl
LMOD_INIT=/usr/share/lmod/lmod/init/bash
[ -r "$LMOD_INIT" ] || { fail "$LMOD_INIT missing (make deps installs lmod)"; finish; }
[ -r "$EM" ] || { fail "$EM missing (make deps unpacks environment-modules)"; finish; }
root=$(cd "$PREFIX" && pwd)

# The check, run in a clean shell after a line that defines `module` for one module system.
check='
set -u
snapshot() { env | grep -E "^(PATH|LD_LIBRARY_PATH|CMAKE_PREFIX_PATH|TRAINRT_ROOT)=" | sort; }
before=$(snapshot)
command -v trainrt >/dev/null && { echo "trainrt already on PATH"; exit 1; }
module use "$ROOT/modulefiles"
module load trainrt || { echo "module load failed"; exit 1; }
echo "version: $(trainrt --version)"
echo "root: $TRAINRT_ROOT"
echo "ld: $LD_LIBRARY_PATH"
echo "cmake: $CMAKE_PREFIX_PATH"
module help trainrt 2>&1 | grep -q "srun --mpi=pmix trainrt --config job.ini" && echo "help: ok"
module whatis trainrt 2>&1 | grep -q "data-parallel training runtime for Slurm" && echo "whatis: ok"
module unload trainrt
module unuse "$ROOT/modulefiles"
[ "$(snapshot)" = "$before" ] && echo "restored: ok" || { echo "after unload:"; snapshot; echo "before:"; echo "$before"; }
'
clean_env=(env -i HOME="$HOME" PATH=/usr/bin:/bin ROOT="$root" TERM=dumb)
"${clean_env[@]}" bash --noprofile --norc -c "source $LMOD_INIT; $check" >"$WORK/lmod.out" 2>&1 || true
"${clean_env[@]}" bash --noprofile --norc -c "module() { eval \"\$(tclsh $EM bash \"\$@\")\"; }; $check" >"$WORK/em.out" 2>&1 || true

for system in lmod em; do
  out=$WORK/$system.out
  grep -q "^version: trainrt 0.1.0 (plugin ABI 1;" "$out" && pass "$system: module load trainrt; trainrt --version" \
    || { cat "$out" >&2; fail "$system: trainrt --version after module load"; continue; }
  grep -qx "root: $root" "$out" && grep -q "^ld: $root/lib" "$out" && grep -q "^cmake: $root" "$out" \
    && pass "$system: TRAINRT_ROOT, LD_LIBRARY_PATH, CMAKE_PREFIX_PATH set" || { cat "$out" >&2; fail "$system: environment"; }
  grep -qx "help: ok" "$out" && grep -qx "whatis: ok" "$out" && pass "$system: help and whatis" || { cat "$out" >&2; fail "$system: help/whatis"; }
  grep -qx "restored: ok" "$out" && pass "$system: module unload restores PATH, LD_LIBRARY_PATH, CMAKE_PREFIX_PATH, TRAINRT_ROOT" \
    || { cat "$out" >&2; fail "$system: unload did not restore the environment"; }
done
grep -q prereq "$PREFIX/modulefiles/trainrt/0.1.0" && fail "prereq present though TRAINRT_MODULE_PREREQ is empty"
finish
