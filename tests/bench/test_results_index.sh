#!/usr/bin/env bash
# bench/results/index.json (bench/results/README.md) agrees with the files stored under
# bench/results/: `results_index.py check` passes on the repository, and in a copy it names a
# stored file the index lacks and an indexed file that is gone, exiting 1.
# ctest: processors=1
source "$(dirname "$0")/../lib/common.sh"
cd "$TRAINRT_SRC"

out=$(python3 bench/reporting/results_index.py check 2>&1) && pass "the index lists every stored result: $out" \
  || fail "results_index.py check on the repository: $out"

mkdir -p "$WORK/bench" && cp -r bench/reporting bench/results "$WORK/bench/"
first=$(cd "$WORK/bench/results" && find . -type f ! -name index.json ! -name README.md | sort | head -1)
[ -n "$first" ] || { fail "no stored result under bench/results/"; finish; }
echo '{}' > "$WORK/bench/results/stray.json"
rm "$WORK/bench/results/$first"
rc=0; out=$(python3 "$WORK/bench/reporting/results_index.py" check 2>&1) || rc=$?
[ "$rc" -eq 1 ] && grep -q "not indexed: bench/results/stray.json" <<<"$out" \
  && grep -q "indexed but missing: bench/results/${first#./}" <<<"$out" \
  && pass "a copy with a stray file and a missing one: exit 1, both named" \
  || fail "results_index.py check on a damaged copy exits $rc: $out"
finish
