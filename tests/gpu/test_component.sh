#!/usr/bin/env bash
# The CUDA component on any machine, GPU or not: a CPU job never loads CUDA's libraries (nor
# libtrainrt_cuda); a GPU job loads the component and, with no device visible, ends with one line,
# exit 2 and nothing written; an install that lacks the component still runs CPU jobs, and a GPU
# job there is refused with one line naming the missing file (`--version` says so too).
source "$(dirname "$0")/../install/lib.sh"
require_small_data
args=(--config jobs/fashion_mlp.ini --train.epochs=1 --data.path="$SMALL_DATA" --run.storage_path="$WORK")
cuda_libs='libtrainrt_cuda|libcudart|libcublas|libnccl'

# loaded OUT: the shared objects the dynamic loader opened (LD_DEBUG=files), one per line.
loaded() { sed -n 's/.*file=\([^ ]*\) \[0\];  generating link map.*/\1/p' "$1" | sort -u; }

rc=0; LD_DEBUG=files "$TRAINRT" "${args[@]}" --run.name=cpu >"$WORK/cpu.out" 2>"$WORK/cpu.ld" || rc=$?
[ "$rc" -eq 0 ] && ! loaded "$WORK/cpu.ld" | grep -qE "$cuda_libs" \
  && pass "a CPU job ran without loading CUDA ($(loaded "$WORK/cpu.ld" | wc -l) libraries, none of CUDA's)" \
  || fail "CPU job: exit $rc, loaded $(loaded "$WORK/cpu.ld" | grep -E "$cuda_libs" | tr '\n' ' ')"

rc=0; CUDA_VISIBLE_DEVICES= LD_DEBUG=files "$TRAINRT" "${args[@]}" --scaling.use_gpu=true --run.name=gpu \
  >"$WORK/gpu.out" 2>"$WORK/gpu.ld" || rc=$?
[ "$rc" -eq "$TRAINRT_EXIT_CONFIG" ] && grep -q "sees no CUDA device" "$WORK/gpu.ld" && [ ! -e "$WORK/gpu" ] \
  && loaded "$WORK/gpu.ld" | grep -q libtrainrt_cuda \
  && pass "a GPU job with no device loads the component, then: $(grep -m1 'sees no CUDA device' "$WORK/gpu.ld" | cut -c1-90)..." \
  || fail "GPU job without a device: exit $rc, $(grep -m1 error "$WORK/gpu.ld")"

cp -a "$PREFIX" "$WORK/prefix"
rm -f "$WORK/prefix"/lib/libtrainrt_cuda.so*
rc=0; "$WORK/prefix/bin/trainrt" "${args[@]}" --run.name=cpu_bare >"$WORK/cpu_bare.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && pass "an install without the CUDA component runs CPU jobs" || fail "CPU job without the component: exit $rc"
rc=0; "$WORK/prefix/bin/trainrt" "${args[@]}" --scaling.use_gpu=true --run.name=gpu_bare >"$WORK/gpu_bare.out" 2>&1 || rc=$?
[ "$rc" -eq "$TRAINRT_EXIT_CONFIG" ] && [ "$(grep -c "CUDA component .* is not beside libtrainrt" "$WORK/gpu_bare.out")" -eq 1 ] \
  && [ ! -e "$WORK/gpu_bare" ] && "$WORK/prefix/bin/trainrt" --version | grep -q "CUDA/NCCL: built, but unusable here" \
  && pass "without it a GPU job is refused: $(grep -m1 'not beside' "$WORK/gpu_bare.out" | cut -c1-100)..." \
  || { cat "$WORK/gpu_bare.out" >&2; fail "GPU job without the component: exit $rc"; }
finish
