#!/usr/bin/env bash
# trainrt inside users' own environments (docs/guides/python.md, "Your own environment"): the same Python job
# with scaling.backend = trainrt in
#   A: trainrt's own environment (Debian's CPython 3.11, torch of tools/requirements.txt): the
#      component trainrt was built with;
#   B: another CPython minor version and another torch (the user_environment fixture built
#      trainrt's package in it): its own build, chosen by VIRTUAL_ENV, by TRAINRT_PYTHON, or run
#      by its own interpreter under mpiexec (trainrt.run());
# each reports its Python and torch versions and a trainrt-backend allreduce. Then what goes wrong:
# an environment whose torch changed after the build (backend built for another torch: one warning
# line, gloo, the run passes), trainrt's own package imported by another CPython (one line), and
# the module's PYTHONPATH not shadowing the environment's own build.
# ctest: fixture=user_environment
# ctest: fixture=trainrt_installed
source "$(dirname "$0")/../lib/common.sh"
ENVA=$(dirname "$(dirname "$TRAINRT_PYTHON")")
ENVB=${TRAINRT_USER_ENV:-/opt/trainrt-deps/user-py312}
PREFIX=$TRAINRT_BUILD/test-install/prefix
ITRAINRT=$PREFIX/bin/trainrt
cat >"$WORK/job.py" <<'PY'
import sys
import torch
import torch.distributed as dist
import trainrt

def train(config):
    total = torch.ones(3) * (dist.get_rank() + 1)
    dist.all_reduce(total)
    trainrt.report({"python": f"{sys.version_info.major}.{sys.version_info.minor}", "torch": torch.__version__.split("+")[0],
                    "backend": str(dist.get_backend()), "sum": float(total[0]), "prefix": sys.prefix})

if __name__ == "__main__":
    raise SystemExit(trainrt.run(train))
PY
clean=(env -u TRAINRT_PYTHON -u VIRTUAL_ENV -u CONDA_PREFIX)  # ctest's TRAINRT_PYTHON names environment A
RUN=(--scaling.backend=trainrt --run.storage_path="$WORK/runs" --metrics.progress=off)
versions() { "$1/bin/python3" -c 'import sys, torch; print(f"{sys.version_info.major}.{sys.version_info.minor}", torch.__version__.split("+")[0])'; }
# expect NAME PYTHON_DIR BACKEND: the run's row says that environment's versions, BACKEND, sum 3.
expect() {
  local row want
  row=$(jq -r '"\(.python) \(.torch) \(.backend) \(.sum) \(.prefix)"' "$WORK/runs/$1/result.jsonl" 2>/dev/null || true)
  want="$(versions "$2") $3 3 $2"
  [ "$row" = "$want" ] && pass "$1: $row" || { tail -5 "$WORK/$1.out" >&2; fail "$1: '$row', wanted '$want'"; }
}
read -r pa ta <<<"$(versions "$ENVA")"; read -r pb tb <<<"$(versions "$ENVB")"
[ "$pa" != "$pb" ] && [ "$ta" != "$tb" ] && pass "A: CPython $pa, torch $ta; B: CPython $pb, torch $tb" \
  || fail "the environments differ in neither Python ($pa, $pb) nor torch ($ta, $tb)"

"${clean[@]}" timeout -k 5 180 mpiexec -n 2 "$ITRAINRT" --run.workload=python:"$WORK/job.py":train "${RUN[@]}" --run.name=own \
  >"$WORK/own.out" 2>&1 || true
expect own "$ENVA" trainrt
"${clean[@]}" VIRTUAL_ENV=$ENVB timeout -k 5 180 mpiexec -n 2 "$ITRAINRT" --run.workload=python:"$WORK/job.py":train "${RUN[@]}" \
  --run.name=venv >"$WORK/venv.out" 2>&1 || true
expect venv "$ENVB" trainrt
"${clean[@]}" TRAINRT_PYTHON=$ENVB/bin/python3 timeout -k 5 180 mpiexec -n 2 "$ITRAINRT" --run.workload=python:"$WORK/job.py":train \
  "${RUN[@]}" --run.name=named >"$WORK/named.out" 2>&1 || true
expect named "$ENVB" trainrt
"${clean[@]}" PYTHONPATH=$PREFIX/lib/trainrt/python timeout -k 5 180 mpiexec -n 2 "$ENVB/bin/python3" "$WORK/job.py" "${RUN[@]}" \
  --run.name=script >"$WORK/script.out" 2>&1 || true
expect script "$ENVB" trainrt

# B's torch "upgraded" after the build: its build information names another torch.
info=$("$ENVB/bin/python3" -c 'import trainrt._build_info as b; print(b.__file__)')
cp "$info" "$WORK/build_info.saved"
trap 'cp "$WORK/build_info.saved" "$info"; rm -rf "$WORK"' EXIT
sed -i 's/^TORCH = .*/TORCH = "2.0.0"/' "$info"
"${clean[@]}" VIRTUAL_ENV=$ENVB timeout -k 5 180 mpiexec -n 2 "$ITRAINRT" --run.workload=python:"$WORK/job.py":train "${RUN[@]}" \
  --run.name=mismatch >"$WORK/mismatch.out" 2>&1 || true
cp "$WORK/build_info.saved" "$info"
expect mismatch "$ENVB" gloo
[ "$(grep -c "built against torch 2.0.0, and this environment's torch is $tb" "$WORK/mismatch.out")" -eq 1 ] \
  && pass "another torch than the build's: one line, $(grep -o 'warning: .*' "$WORK/mismatch.out" | cut -c1-110)..." \
  || { cat "$WORK/mismatch.out" >&2; fail "the torch mismatch was not named once"; }

# trainrt's own package (CPython 3.11) from another CPython: one line naming both and the fix.
other=""  # a CPython 3.13 that runs (pyenv's shim on PATH may not)
for candidate in "$(command -v python3.13 || true)" $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3.13 2>/dev/null); do
  if [ -n "$candidate" ] && "$candidate" -c 'import sys' 2>/dev/null; then other=$candidate; break; fi
done
if [ -n "$other" ]; then
  code=0
  PYTHONPATH=$PREFIX/lib/trainrt/python "$other" -c 'import trainrt' >"$WORK/other.out" 2>&1 || code=$?
  [ "$code" -ne 0 ] && grep -q "^ImportError: trainrt: the trainrt package at .* was built for CPython $pa\.[0-9]* and this is 3\.13" "$WORK/other.out" \
    && grep -q 'pip install --no-build-isolation \$TRAINRT_ROOT/share/trainrt/python' "$WORK/other.out" \
    && pass "CPython 3.13 importing trainrt's own package: $(tail -1 "$WORK/other.out" | cut -c1-120)..." \
    || { cat "$WORK/other.out" >&2; fail "another CPython importing trainrt's own package"; }
else
  fail "no python3.13 on this machine to import trainrt's own package with"
fi
# The module's PYTHONPATH (trainrt's own package first) does not shadow B's own build.
where=$(PYTHONPATH=$PREFIX/lib/trainrt/python "$ENVB/bin/python3" -c 'import trainrt; print(trainrt.__file__)')
case $where in "$ENVB"/lib/python3.*/site-packages/trainrt/__init__.py) pass "PYTHONPATH=<libdir>/trainrt/python in B imports B's own build";;
  *) fail "B imported trainrt from $where";; esac
finish
