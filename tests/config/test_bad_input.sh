#!/usr/bin/env bash
# Bad input: one clear line on stderr, the documented exit code, and nothing written.
source "$(dirname "$0")/../lib/common.sh"
require_data

# expect_error NAME CODE PATTERN CMD...: the command exits CODE, prints exactly one line on
# stderr matching PATTERN, and leaves no run directory behind.
expect_error() {
  local name=$1 code=$2 pattern=$3; shift 3
  local storage="$WORK/$name"
  set +e
  "$@" --run.storage_path="$storage" >"$WORK/$name.out" 2>"$WORK/$name.err"
  local rc=$?
  set -e
  local lines; lines=$(wc -l <"$WORK/$name.err")
  if [ "$rc" -ne "$code" ]; then fail "$name: exit $rc, expected $code: $(cat "$WORK/$name.err")"; return; fi
  if [ "$lines" -ne 1 ]; then fail "$name: $lines stderr lines, expected 1: $(cat "$WORK/$name.err")"; return; fi
  if ! grep -qE -- "$pattern" "$WORK/$name.err"; then fail "$name: '$(cat "$WORK/$name.err")' lacks /$pattern/"; return; fi
  if [ -e "$storage" ]; then fail "$name: left $storage behind"; return; fi
  pass "$name: $(cat "$WORK/$name.err")"
}

JOB=jobs/fashion_mlp.ini
cat >"$WORK/typo.ini" <<'INI'
[run]
workload = fashion_mlp
[train]
epochs = 1
epoch = 2
INI
expect_error unknown_key 2 "unknown key 'train.epoch' \(.*typo.ini:5\).*did you mean 'train.epochs'" \
  "$TRAINRT" --config "$WORK/typo.ini"
expect_error no_workload 2 "run.workload is not set; name the training function" \
  "$TRAINRT" --train.epochs=1
expect_error unknown_flag 2 "unknown key 'train.epocs' \(command line\).*did you mean 'train.epochs'" \
  "$TRAINRT" --config $JOB --train.epocs=2
expect_error wrong_type 2 "bad value 'two' for train.epochs \(command line\): expected an integer" \
  "$TRAINRT" --config $JOB --train.epochs=two
expect_error epochs_zero 2 "bad value '0' for train.epochs.*>= 1" \
  "$TRAINRT" --config $JOB --train.epochs=0
TRAINRT_TRAIN_LR=fast expect_error env_value 2 "bad value 'fast' for train.lr \(env TRAINRT_TRAIN_LR\)" \
  "$TRAINRT" --config $JOB
expect_error bad_stop_signal 2 "bad value 'USR2,KILL' for stop.signals \(command line\): 'KILL' is not a stop signal" \
  "$TRAINRT" --config $JOB --stop.signals=USR2,KILL
expect_error bad_time_margin 2 "bad value 'soon' for stop.time_margin \(command line\): expected a number" \
  "$TRAINRT" --config $JOB --stop.time_margin=soon
expect_error negative_time_margin 2 "bad value '-5' for stop.time_margin .*auto or a number of seconds >= 0" \
  "$TRAINRT" --config $JOB --stop.time_margin=-5
expect_error bad_requeue 2 "bad value 'always' for failure.requeue .*one of auto, never" \
  "$TRAINRT" --config $JOB --failure.requeue=always
expect_error bad_max_failures 2 "bad value '-2' for failure.max_failures .*>= -1" \
  "$TRAINRT" --config $JOB --failure.max_failures=-2
# use_gpu = true where it cannot work: a build without CUDA says so; a CUDA build on a machine
# without a GPU (this one) names the missing device. Where a GPU is visible the gpu suite runs it.
if "$TRAINRT" --version | grep -q 'CUDA/NCCL: no;'; then
  expect_error gpu_without_cuda 2 "use_gpu=true / scaling.backend=nccl .* needs a trainrt built with CUDA" \
    "$TRAINRT" --config $JOB --scaling.use_gpu=true
elif ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  expect_error gpu_without_device 2 "gpu: scaling.use_gpu = true but rank 0 sees no CUDA device .*set use_gpu = false" \
    "$TRAINRT" --config $JOB --scaling.use_gpu=true
fi
expect_error nccl_without_gpu 2 "scaling.backend = nccl \(command line\) needs scaling.use_gpu = true|needs a trainrt built with CUDA" \
  "$TRAINRT" --config $JOB --scaling.backend=nccl
expect_error missing_config 2 "cannot read config file '$WORK/nope.ini'" \
  "$TRAINRT" --config "$WORK/nope.ini"
mkdir -p "$WORK/a_directory"
expect_error config_is_directory 2 "config file '$WORK/a_directory' is a directory; give an INI file" \
  "$TRAINRT" --config "$WORK/a_directory"
# A run name is one path component: nothing may be written outside run.storage_path.
for bad in '../../etc' 'a/b' '.' '..'; do
  expect_error "bad_run_name_$(printf '%s' "$bad" | tr './' 'DS')" 2 \
    "bad value '$bad' for run.name \(command line\): expected a name of letters, digits" \
    "$TRAINRT" --config $JOB --train.epochs=1 --run.name="$bad"
done
printf '[run]\nname =\nworkload = fashion_mlp\n' >"$WORK/empty_name.ini"
expect_error bad_run_name_empty 2 "bad value '' for run.name \($WORK/empty_name.ini:2\)" \
  "$TRAINRT" --config "$WORK/empty_name.ini" --train.epochs=1
[ ! -e "$WORK/../etc" ] && [ ! -e "$WORK/a" ] || fail "a bad run name wrote outside run.storage_path"
expect_error missing_dataset 6 "dataset file $WORK/none.h5 does not exist.*trainrt data import" \
  "$TRAINRT" --config $JOB --train.epochs=1 --data.path="$WORK/none.h5"
echo "not hdf5" >"$WORK/bad.h5"
expect_error malformed_dataset 6 "$WORK/bad.h5 is not a trainrt dataset" \
  "$TRAINRT" --config $JOB --train.epochs=1 --data.path="$WORK/bad.h5"
expect_error missing_init_weights 7 "init_weights file $WORK/w.h5 does not exist" \
  "$TRAINRT" --config $JOB --train.epochs=1 --train.init_weights="$WORK/w.h5"

# Unwritable storage path: a regular file where a directory is needed (root ignores modes).
touch "$WORK/a_file"
set +e
"$TRAINRT" --config $JOB --train.epochs=1 --run.storage_path="$WORK/a_file/runs" 2>"$WORK/unwritable.err" >/dev/null
rc=$?
set -e
[ "$rc" -eq 5 ] && grep -q "cannot create directory $WORK/a_file/runs" "$WORK/unwritable.err" \
  && [ "$(wc -l <"$WORK/unwritable.err")" -eq 1 ] \
  && pass "unwritable: $(cat "$WORK/unwritable.err")" || fail "unwritable: rc $rc: $(cat "$WORK/unwritable.err")"

# A batch smaller than the world (any other batch trains: local batches differ by at most one):
# all 3 ranks agree, rank 0 prints one line, exit 2.
expect_error batch_below_ranks 2 "train.batch_size=2 .* is smaller than the 3 ranks" \
  mpiexec -n 3 "$TRAINRT" --config $JOB --train.epochs=1 --train.batch_size=2

# Four tasks that each come up as an MPI singleton (what srun --mpi=none gives MPICH).
for i in 0 1 2 3; do
  ( set +e; env SLURM_PROCID=$i SLURM_NTASKS=4 SLURM_STEP_ID=0 SLURM_JOB_ID=999 \
      "$TRAINRT" --config $JOB --train.epochs=1 --run.storage_path="$WORK/singletons" \
      >/dev/null 2>"$WORK/singleton.$i.err"; echo $? >"$WORK/singleton.$i.rc" ) &
done
wait
for i in 0 1 2 3; do
  rc=$(cat "$WORK/singleton.$i.rc")
  if [ "$rc" -eq 3 ] && grep -q "started 4 tasks (this is task $i), but MPI_Init came up as a singleton" "$WORK/singleton.$i.err"; then
    pass "singleton $i: exit 3"
  else
    fail "singleton $i: rc $rc: $(cat "$WORK/singleton.$i.err")"
  fi
done
[ ! -e "$WORK/singletons" ] && pass "singletons wrote nothing" || fail "singletons left a run directory"
finish
