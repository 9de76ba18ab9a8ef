#!/usr/bin/env bash
# `trainrt plot RUN_DIR -o FILE.png`: a PNG of the size asked for, drawn by gnuplot, with the
# loss / accuracy / step-time panels and a labelled line where a stopped run was resumed; a run
# still in progress plots; bad input and a failing gnuplot exit 2 with one stderr line and
# leave no PNG, no FILE.png.tmp-* and no temporary directory behind.
source "$(dirname "$0")/../metrics/lib.sh"
export TMPDIR=$WORK/tmp  # trainrt plot's private directories land here: checked empty below
mkdir -p "$TMPDIR" "$WORK/out"

# png_size FILE: "WIDTHxHEIGHT" from the IHDR chunk; empty unless FILE starts with the PNG signature.
png_size() {
  [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || return 0
  local b
  read -ra b <<<"$(od -An -tu1 -j16 -N8 "$1")"
  echo "$(((b[0] << 24) + (b[1] << 16) + (b[2] << 8) + b[3]))x$(((b[4] << 24) + (b[5] << 16) + (b[6] << 8) + b[7]))"
}

# plot OUT_PREFIX ARGS...: `trainrt plot ARGS` (with PATH=$PLOT_PATH when set), stdout/stderr to
# OUT_PREFIX.{out,err}; sets prc.
plot() {
  local prefix=$1
  shift
  prc=0
  PATH=${PLOT_PATH:-$PATH} "$TRAINRT" plot "$@" >"$prefix.out" 2>"$prefix.err" || prc=$?
}

# check_png NAME FILE SIZE: FILE is a PNG of SIZE (WxH) pixels and more than 10 KB.
check_png() {
  local got bytes
  got=$(png_size "$2") bytes=$(stat -c %s "$2" 2>/dev/null || echo 0)
  [ "$got" = "$3" ] && [ "$bytes" -gt 10240 ] && pass "$1: PNG $got, $((bytes / 1024)) KB" \
    || fail "$1: $2 is '$got' (want $3), $bytes bytes"
}

# no_leftovers NAME: no FILE.png.tmp-* in $WORK/out, no trainrt-plot.* in $TMPDIR.
no_leftovers() {
  local left
  left=$(find "$WORK/out" "$TMPDIR" -mindepth 1 \( -name '*.tmp-*' -o -name 'trainrt-plot.*' \) | tr '\n' ' ')
  [ -z "$left" ] && pass "$1: no temporary files left" || fail "$1: left behind: $left"
}

# refused NAME WANT_TEXT ARGS...: exit 2, one stderr line "trainrt: plot: ..." containing
# WANT_TEXT, no $WORK/out/bad.png, no leftovers.
refused() {
  local name=$1 want=$2
  shift 2
  plot "$WORK/$name" "$@"
  [ "$prc" -eq 2 ] && [ "$(grep -c . "$WORK/$name.err")" -eq 1 ] && grep -q "^\[trainrt\] error: plot: .*$want" "$WORK/$name.err" \
    && pass "$name: exit 2: $(cut -c1-150 "$WORK/$name.err")" \
    || fail "$name: exit $prc, stderr: $(cat "$WORK/$name.err")"
  [ ! -e "$WORK/out/bad.png" ] || fail "$name: $WORK/out/bad.png written"
  no_leftovers "$name"
}

# 1. A run without restarts: 30 reports, val_loss from iteration 10, a string tag (phase).
report_run 2 plain "$WORK/plain.run" --train.reports=30 --train.checkpoint_every=5 --train.late_key_at=10
[ "$rc" -eq 0 ] || { show "$WORK/plain.run"; fail "plain run exits $rc"; finish; }
plot "$WORK/plain" "$WORK/plain" -o "$WORK/out/plain.png" --keep-script "$WORK/plain.keep"
[ "$prc" -eq 0 ] && [ ! -s "$WORK/plain.err" ] && pass "plain: exit 0: $(cat "$WORK/plain.out")" \
  || fail "plain: exit $prc: $(cat "$WORK/plain.err")"
check_png plain "$WORK/out/plain.png" 1200x900
gp=$WORK/plain.keep/plot.gp
for panel in loss accuracy "step time across ranks"; do
  grep -q "^# panel: $panel\$" "$gp" || fail "plain: no $panel panel in plot.gp"
done
grep -q "title 'val_loss'" "$gp" && grep -q "title 'min..max over ranks'" "$gp" && grep -q "title 'compute, slowest rank'" "$gp" \
  && pass "plain: plot.gp has three panels, val_loss, the rank band and compute time" || fail "plain: plot.gp: $(grep -E '^plot|title' "$gp")"
! grep -q "restart" "$gp" && ! grep -q "set arrow" "$gp" && pass "plain: no restart line" || fail "plain: restart marks in $gp"
col=$(head -1 "$WORK/plain.keep/rows.dat" | tr -d '#' | awk -F' [|] ' '{for (i = 1; i <= NF; i++) if ($i == "val_loss") print i}')
[ -n "$col" ] && [ "$(awk -v c="$col" '$1 == 9 {print $c}' "$WORK/plain.keep/rows.dat")" = NaN ] \
  && [ "$(awk -v c="$col" '$1 == 10 {print $c}' "$WORK/plain.keep/rows.dat")" = 0.20000000000000001 ] \
  && pass "plain: val_loss NaN before iteration 10, 0.2 at 10" || fail "plain: val_loss column '$col' in rows.dat"
! head -1 "$WORK/plain.keep/rows.dat" | grep -q phase && pass "plain: string tag 'phase' not plotted" || fail "plain: phase in rows.dat"
(cd "$WORK/plain.keep" && gnuplot plot.gp 2>/dev/null) && check_png "kept script rerun" "$WORK/plain.keep/plot.png" 1200x900 \
  || fail "kept script does not rerun"
plot "$WORK/sized" "$WORK/plain/" -o "$WORK/out/sized.png" --size 800x500
[ "$prc" -eq 0 ] && check_png "--size 800x500" "$WORK/out/sized.png" 800x500 || fail "--size: exit $prc: $(cat "$WORK/sized.err")"

# 2. A run stopped by USR2 on rank 1 and rerun: plotted while running, then with its restart.
( report_run 2 resumed "$WORK/resumed.run1" --train.reports=30 --train.checkpoint_every=5 --train.sleep_ms=100
  echo "$rc" >"$WORK/resumed.rc" ) &
runner=$!
wait_rows "$WORK/resumed" 4 || fail "resumed: no 4 rows within 60 s"
plot "$WORK/running" "$WORK/resumed" -o "$WORK/out/running.png"
[ "$prc" -eq 0 ] && check_png "a run in progress" "$WORK/out/running.png" 1200x900 || fail "running: exit $prc: $(cat "$WORK/running.err")"
wait_rows "$WORK/resumed" 7 || fail "resumed: no 7 rows within 60 s"
pid=$(rank_pid resumed 1) && kill -USR2 "$pid" || fail "resumed: rank 1 not found"
wait "$runner" || true
[ "$(cat "$WORK/resumed.rc")" = 9 ] || { show "$WORK/resumed.run1"; fail "resumed: stopped run exits $(cat "$WORK/resumed.rc"), expected 9"; }
report_run 2 resumed "$WORK/resumed.run2" --train.reports=30 --train.checkpoint_every=5
[ "$rc" -eq 0 ] || { show "$WORK/resumed.run2"; fail "resumed: rerun exits $rc"; finish; }
first=$(($(jq -s 'map(select(.event == "restore"))[0].iteration' "$WORK/resumed/events.jsonl") + 1))
plot "$WORK/restart" "$WORK/resumed" -o "$WORK/out/restart.png" --keep-script "$WORK/restart.keep"
[ "$prc" -eq 0 ] && grep -q "1 restart(s)" "$WORK/restart.out" && pass "restart: $(cat "$WORK/restart.out")" \
  || fail "restart: exit $prc: $(cat "$WORK/restart.out" "$WORK/restart.err")"
check_png restart "$WORK/out/restart.png" 1200x900
grep -q "^set arrow 1 from $first, graph 0 to $first, graph 1 nohead dt 2" "$WORK/restart.keep/plot.gp" \
  && grep -q "^set label 1 'restart 1: after stop (signal USR2)' at $first," "$WORK/restart.keep/plot.gp" \
  && pass "restart: dashed line labelled 'restart 1: after stop (signal USR2)' at iteration $first" \
  || fail "restart: no restart line at $first: $(grep -E 'arrow|label' "$WORK/restart.keep/plot.gp")"
cp -r "$WORK/resumed" "$WORK/no_events" && rm "$WORK/no_events/events.jsonl"
plot "$WORK/no_events" "$WORK/no_events" -o "$WORK/out/no_events.png"
[ "$prc" -eq 0 ] && grep -q "0 restart(s)" "$WORK/no_events.out" && ! cmp -s "$WORK/out/no_events.png" "$WORK/out/restart.png" \
  && pass "the same rows without events.jsonl: no restart, a different PNG" || fail "no_events: exit $prc: $(cat "$WORK/no_events.out")"

# 3. Hand-written rows: no run.json, a torn line, rows without _ranks, a bool, restart_count
#    rising (a Slurm requeue) with its start event's reason.
mkdir -p "$WORK/slurm"
t0=$(date +%s)
for i in 1 2 3 4 5 6; do
  ranks='' count=0
  [ "$i" -ge 4 ] && ranks=',"_ranks":{"_time_this_iter_s":{"min":0.1,"mean":0.2,"max":0.3,"max_rank":1}}'
  [ "$i" -ge 5 ] && count=1
  echo "{\"Loss\":0.$((9 - i)),\"ok\":true,\"_training_iteration\":$i,\"_timestamp\":$((t0 + i)).5,\"_time_this_iter_s\":0.2,\"restart_count\":$count,\"world_size\":4$ranks}"
  [ "$i" -eq 2 ] && echo '{"Loss": 0.7, "_train'
done >"$WORK/slurm/result.jsonl"
{ echo "{\"event\":\"start\",\"time\":\"$(date -u -d @"$t0" +%FT%T).000Z\",\"restart_count\":0,\"reason\":\"first start\"}"
  echo "{\"event\":\"start\",\"time\":\"$(date -u -d @"$((t0 + 5))" +%FT%T).000Z\",\"restart_count\":1,\"reason\":\"after requeue\"}"
} >"$WORK/slurm/events.jsonl"
plot "$WORK/slurm" "$WORK/slurm" -o "$WORK/out/slurm.png" --keep-script "$WORK/slurm.keep"
[ "$prc" -eq 0 ] && check_png "hand-written rows" "$WORK/out/slurm.png" 1200x900 || fail "slurm: exit $prc: $(cat "$WORK/slurm.err")"
gp=$WORK/slurm.keep/plot.gp
grep -q "^set label 1 'restart 1: after requeue' at 5," "$gp" && grep -q "title 'rank 0 (no _ranks)'" "$gp" \
  && grep -q "title 'Loss'" "$gp" && ! head -1 "$WORK/slurm.keep/rows.dat" | grep -q ' ok\b' && ! grep -q "^# panel: accuracy" "$gp" && grep -q "layout 2,1 title 'slurm: workload ?, world size 4, 6 reports'" "$gp" \
  && pass "hand-written rows: restart 1 at 5, rank 0 step time, Loss (no bool), no accuracy panel, title from the rows" \
  || fail "slurm: plot.gp: $(grep -E 'label|title|layout' "$gp")"

# 4. Bad input: exit 2, one line, nothing written.
refused missing_dir "no run directory" "$WORK/nowhere" -o "$WORK/out/bad.png"
mkdir -p "$WORK/not_a_run"
refused not_a_run "not a trainrt run" "$WORK/not_a_run" -o "$WORK/out/bad.png"
mkdir -p "$WORK/no_rows" && echo '{}' >"$WORK/no_rows/run.json"
refused no_rows "no result rows yet" "$WORK/no_rows" -o "$WORK/out/bad.png"
refused no_output "no -o FILE.png" "$WORK/plain"
refused bad_size "--size" "$WORK/plain" -o "$WORK/out/bad.png" --size big
refused no_out_dir "does not exist" "$WORK/plain" -o "$WORK/out/nowhere/bad.png"
refused unwritable "cannot write in the output directory /proc" "$WORK/plain" -o /proc/bad.png
PLOT_PATH=$WORK/empty refused no_gnuplot "install gnuplot (Debian: gnuplot-nox)" "$WORK/plain" -o "$WORK/out/bad.png"

# 5. gnuplot failing after writing half an image: its message, the old PNG kept, no leftovers.
mkdir -p "$WORK/fakebin"
cat >"$WORK/fakebin/gnuplot" <<'SH'
#!/bin/sh
out=$(printf '%s' "$2" | sed -n "s/.*outfile = '\(.*\)'.*/\1/p")
printf '\211PNG half' >"$out"
echo "\"plot.gp\" line 7: fake gnuplot: cannot draw" >&2
exit 1
SH
chmod +x "$WORK/fakebin/gnuplot"
cp "$WORK/out/plain.png" "$WORK/out/bad.png.before"
cp "$WORK/out/plain.png" "$WORK/out/bad.png"
PLOT_PATH=$WORK/fakebin:$PATH plot "$WORK/fake" "$WORK/plain" -o "$WORK/out/bad.png"
[ "$prc" -eq 2 ] && [ "$(grep -c . "$WORK/fake.err")" -eq 1 ] && grep -q "gnuplot failed (exit 1): \"plot.gp\" line 7: fake gnuplot: cannot draw" "$WORK/fake.err" \
  && pass "failing gnuplot: exit 2: $(cut -c1-150 "$WORK/fake.err")" || fail "failing gnuplot: exit $prc: $(cat "$WORK/fake.err")"
cmp -s "$WORK/out/bad.png" "$WORK/out/bad.png.before" && pass "failing gnuplot: the previous PNG is untouched" \
  || fail "failing gnuplot: $WORK/out/bad.png changed"
rm -f "$WORK/out/bad.png" "$WORK/out/bad.png.before"
no_leftovers "failing gnuplot"

"$TRAINRT" plot --help >"$WORK/help.out" 2>&1 && grep -q "^usage: trainrt plot RUN_DIR|SWEEP_DIR -o FILE.png" "$WORK/help.out" \
  && grep -q "start event" "$WORK/help.out" && grep -q "sweep.json" "$WORK/help.out" && pass "plot --help: usage and the restart rule" || fail "plot --help: $(head -3 "$WORK/help.out")"
finish
