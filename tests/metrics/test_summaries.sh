#!/usr/bin/env bash
# Cross-rank summaries with a deliberately slow rank: its own work (_time_compute_s) is the max
# and names it, while every rank's iteration time is alike (the others wait for it in the
# collectives); the straggler is logged once, naming the rank; no line without a straggler or
# with the threshold off.
source "$(dirname "$0")/lib.sh"

# check_straggler NP RANK: a run with RANK 150 ms slower per iteration than the others.
check_straggler() {
  local np=$1 slow=$2 name="slow_np$1"
  report_run "$np" "$name" "$WORK/$name.out" --train.reports=8 --train.sleep_ms=10 \
    --train.slow_rank="$slow" --train.slow_ms=150
  [ "$rc" -eq 0 ] || { show "$WORK/$name.out"; fail "$name: exits $rc"; return; }
  jq -se --argjson s "$slow" 'all(.[1:][]; ._ranks._time_compute_s.max_rank == $s
        and ._ranks._time_compute_s.max >= 0.15 and ._ranks._time_compute_s.min < 0.1)' "$WORK/$name/result.jsonl" >/dev/null \
    && pass "$name: _time_compute_s max on rank $slow (≥ 0.15 s), min < 0.1 s" \
    || fail "$name: _time_compute_s $(jq -c ._ranks._time_compute_s "$WORK/$name/result.jsonl" | tail -3)"
  jq -se 'all(.[2:][]; ._ranks._time_this_iter_s.max - ._ranks._time_this_iter_s.min < 0.1)' "$WORK/$name/result.jsonl" >/dev/null \
    && pass "$name: iteration times alike on every rank (the others wait)" \
    || fail "$name: _time_this_iter_s $(jq -c ._ranks._time_this_iter_s "$WORK/$name/result.jsonl" | tail -3)"
  local lines
  lines=$(grep -c "\[trainrt 0\] straggler: rank $slow " "$WORK/$name.out" || true)
  [ "$lines" -eq 1 ] && pass "$name: logged once: $(grep -o 'straggler: rank.*iteration [0-9]*' "$WORK/$name.out")" \
    || { show "$WORK/$name.out"; fail "$name: $lines straggler lines for rank $slow"; }
}

check_straggler 2 1
check_straggler 4 3

report_run 2 even "$WORK/even.out" --train.reports=8 --train.sleep_ms=30
[ "$rc" -eq 0 ] && ! grep -q straggler "$WORK/even.out" && pass "no straggler line when ranks are even" \
  || { show "$WORK/even.out"; fail "even ranks: rc $rc or a straggler line"; }
report_run 2 off "$WORK/off.out" --train.reports=6 --train.slow_rank=1 --train.slow_ms=150 --metrics.straggler_threshold=0
[ "$rc" -eq 0 ] && ! grep -q straggler "$WORK/off.out" && pass "straggler_threshold = 0: no line" \
  || { show "$WORK/off.out"; fail "threshold 0: rc $rc or a straggler line"; }
report_run 2 bad "$WORK/bad.out" --train.reports=2 --metrics.straggler_threshold=-1
[ "$rc" -eq 2 ] && [ "$(grep -c . "$WORK/bad.out")" -le 2 ] && grep -q "metrics.straggler_threshold" "$WORK/bad.out" \
  && pass "negative threshold refused: $(head -1 "$WORK/bad.out" | cut -c1-120)" || { show "$WORK/bad.out"; fail "bad threshold: rc $rc"; }
finish
