# shellcheck shell=bash
# Helpers for the install suite: the prefix and the example the `trainrt_installed` fixture made.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
PREFIX=$TRAINRT_BUILD/test-install/prefix
EXAMPLE=$TRAINRT_BUILD/test-install/example
[ -x "$PREFIX/bin/trainrt" ] || { echo "FAIL: $PREFIX/bin/trainrt missing: the install.setup fixture did not run" >&2; exit 1; }
ITRAINRT=$PREFIX/bin/trainrt
PLUGIN=$EXAMPLE/libregression.so
EMBEDDED=$EXAMPLE/regression_embedded
REGRESSION_INI=$PREFIX/share/trainrt/examples/regression/regression.ini
RUN_TIMEOUT=${RUN_TIMEOUT:-180}

# launch NAME OUT CMD...: mpiexec -n 2 CMD --config regression.ini into $WORK/NAME; sets $rc.
launch() {
  local name=$1 out=$2; shift 2
  rc=0
  timeout -k 10 "$RUN_TIMEOUT" mpiexec -n 2 "$@" --config "$REGRESSION_INI" --run.storage_path="$WORK" \
    --run.name="$name" >"$out" 2>&1 || rc=$?
}
digest_in() { sed -n 's/^regression_digest=//p' "$1" | tail -1; }

# stop_and_resume NAME REF_DIGEST CMD...: starts CMD (slowed to ~1 ms per step), sends USR2 to
# rank 1 after 2 reports, expects exit 9 and a stop event, reruns to the end, expects REF_DIGEST.
stop_and_resume() {
  local name=$1 ref=$2 pid=""; shift 2
  ( launch "$name" "$WORK/$name.stop.out" "$@" --train.step_delay_ms=1; echo "$rc" >"$WORK/$name.rc" ) &
  local runner=$! deadline=$((SECONDS + 60))
  until [ -s "$WORK/$name/result.jsonl" ] && [ "$(wc -l <"$WORK/$name/result.jsonl")" -ge 2 ]; do
    [ "$SECONDS" -lt "$deadline" ] || break
    sleep 0.1
  done
  for p in $(pgrep -f -- "--run.name=$name" || true); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx PMI_RANK=1 && pid=$p
  done
  [ -n "$pid" ] && kill -USR2 "$pid" || fail "$name: rank 1 not found to signal"
  wait "$runner" || true
  [ "$(cat "$WORK/$name.rc")" = 9 ] && pass "$name: USR2 to rank 1 -> exit 9" \
    || { tail "$WORK/$name.stop.out" >&2; fail "$name: stopped run exits $(cat "$WORK/$name.rc")"; }
  jq -e -s 'map(select(.event == "stop"))[0] | .reason == "signal" and (.checkpoint | type) == "string"' \
    "$WORK/$name/events.jsonl" >/dev/null && pass "$name: stop event with its checkpoint" || fail "$name: no stop event"
  launch "$name" "$WORK/$name.resume.out" "$@"
  [ "$rc" -eq 0 ] && grep -q '^\[trainrt 0\] resuming from' "$WORK/$name.resume.out" \
    && [ "$(digest_in "$WORK/$name.resume.out")" = "$ref" ] \
    && pass "$name: resumed and finished with the uninterrupted digest $ref" \
    || { tail "$WORK/$name.resume.out" >&2; fail "$name: resume exit $rc, digest $(digest_in "$WORK/$name.resume.out") vs $ref"; }
}
