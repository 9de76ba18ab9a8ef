#!/usr/bin/env bash
# Progress on rank 0's stdout: on a terminal (a pty from script(1)) one line redrawn in place at
# every report (\r, erase line), never plain lines; into a file (Slurm's output) plain lines at
# most every [metrics] progress_interval seconds plus the last row, never \r; `off` prints none.
# The line holds iteration, epoch/total, loss, accuracy, samples/s, elapsed time and ETA.
source "$(dirname "$0")/lib.sh"
common=(--train.reports=20 --train.sleep_ms=100 --train.epochs=4)

# A terminal: a single-process run (no launcher in between) under script(1).
script -qec "$TRAINRT --config $WORK/reporter.ini --run.name=tty ${common[*]}" "$WORK/tty.log" >/dev/null 2>&1 \
  || { show "$WORK/tty.log"; fail "run on a terminal failed"; }
redraws=$(grep -o $'\r\e\\[K\\[trainrt 0\\] iter [0-9]*' "$WORK/tty.log" | wc -l)
[ "$redraws" -eq 20 ] && pass "terminal: the line was redrawn at each of the 20 reports" \
  || { cat -v "$WORK/tty.log" | tail -5 >&2; fail "terminal: $redraws redraws"; }
plain=$(grep -ac '^\[trainrt 0\] iter' "$WORK/tty.log" || true)
[ "$plain" -eq 0 ] && pass "terminal: no plain progress lines" \
  || { cat -v "$WORK/tty.log" | head -20 >&2; fail "terminal: $plain plain progress lines"; }
grep -aq $'first step.*\r$' "$WORK/tty.log" && ! grep -aq $'samples/s | [0-9:]*\\[trainrt 0\\] first step' "$WORK/tty.log" \
  && pass "terminal: trainrt's own notice gets a line of its own" || { cat -v "$WORK/tty.log" | head >&2; fail "terminal: notice torn into the progress line"; }
last=$(tr '\r' '\n' <"$WORK/tty.log" | grep -ao '\[trainrt 0\] iter 20 .*' | head -1 | grep -o '.*| [0-9]*:[0-9][0-9]:[0-9][0-9]\( | ETA [0-9:]*\)\?')
grep -Eq 'iter 20 \| epoch 4/4 \| loss 0\.0500 \| accuracy 0\.9500 \| 1000 samples/s \| 0:00:0[0-9]' <<<"$last" \
  && pass "terminal: last line: $last" || fail "terminal: last line '$last'"
mid=$(tr '\r' '\n' <"$WORK/tty.log" | grep -a 'iter 12 ' | head -1)
grep -q 'ETA 0:00:0' <<<"$mid" && pass "terminal: ETA shown mid-run ($(grep -o 'ETA.*' <<<"$mid"))" || fail "terminal: no ETA in '$mid'"

# A file: plain lines every 0.5 s (each report takes about 0.1 s) and the last row.
report_run 2 lines "$WORK/lines.out" "${common[@]}" --metrics.progress_interval=0.5
[ "$rc" -eq 0 ] || { show "$WORK/lines.out"; fail "file mode: exits $rc"; }
mapfile -t iters < <(grep -o '^\[trainrt 0\] iter [0-9]*' "$WORK/lines.out" | awk '{print $4}')
gaps_ok=1
for ((i = 1; i < ${#iters[@]} - 1; i++)); do ((iters[i] - iters[i - 1] >= 3)) || gaps_ok=0; done
[ "${#iters[@]}" -ge 3 ] && [ "${#iters[@]}" -le 10 ] && [ "${iters[0]}" = 1 ] && [ "${iters[-1]}" = 20 ] && [ "$gaps_ok" = 1 ] \
  && pass "file: ${#iters[@]} plain lines (iterations ${iters[*]}): the first, one per interval, the last" \
  || { show "$WORK/lines.out"; fail "file: progress iterations '${iters[*]}'"; }
! grep -q $'\r' "$WORK/lines.out" && pass "file: no carriage returns" || fail "file: carriage returns in the output"
grep -q $'\r\e' "$WORK/lines.out" && fail "file: terminal redraws"

# auto in a file is lines; off prints none; a bad mode is refused in one line.
report_run 2 auto "$WORK/auto.out" --train.reports=3
[ "$(grep -c '^\[trainrt 0\] iter' "$WORK/auto.out")" -ge 1 ] && ! grep -q $'\r' "$WORK/auto.out" \
  && pass "auto, stdout a file: plain lines" || { show "$WORK/auto.out"; fail "auto into a file"; }
report_run 2 off "$WORK/off.out" --train.reports=3 --metrics.progress=off
[ "$rc" -eq 0 ] && ! grep -q '\[trainrt 0\] iter' "$WORK/off.out" && pass "off: no progress lines" || fail "off: rc $rc or progress printed"
report_run 2 badmode "$WORK/badmode.out" --metrics.progress=fancy
[ "$rc" -eq 2 ] && grep -q "metrics.progress" "$WORK/badmode.out" && pass "bad mode refused: $(head -1 "$WORK/badmode.out" | cut -c1-110)" \
  || fail "bad mode: rc $rc"
finish
