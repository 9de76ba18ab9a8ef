#!/usr/bin/env bash
# The documentation's key table and exit code tables (docs/reference/configuration.md,
# exit-codes.md) are the declarations' (src/config/settings.hpp, each workload's TRAINRT_KEYS,
# trainrt/error.hpp): `trainrt --keys-markdown` and `trainrt --exit-codes-markdown` must be exactly
# what stands between the pages' markers. A key or exit code added, removed or reworded fails here
# until the documentation follows.
source "$(dirname "$0")/../lib/common.sh"

# readme_part NAME PAGE: the page's lines between <!-- NAME:begin ... --> and <!-- NAME:end -->.
readme_part() { sed -n "/<!-- $1:begin/,/<!-- $1:end -->/p" "$2" | sed '1d;$d'; }

check_table() {
  local name=$1 flag=$2 page=$3
  "$TRAINRT" "$flag" >"$WORK/$name.declared" || { fail "trainrt $flag exits $?"; return; }
  readme_part "$name" "$page" >"$WORK/$name.readme"
  [ -s "$WORK/$name.readme" ] || { fail "$page has no <!-- $name:begin --> ... <!-- $name:end --> section"; return; }
  if diff -u "$WORK/$name.readme" "$WORK/$name.declared" >"$WORK/$name.diff"; then
    pass "$page's $name table = trainrt $flag ($(grep -c '^| ' "$WORK/$name.declared") rows)"
  else
    fail "$page's $name table differs from the declarations (paste \`trainrt $flag\` between the markers):"
    head -40 "$WORK/$name.diff" >&2
  fi
}

check_table keys --keys-markdown docs/reference/configuration.md
check_table exit-codes --exit-codes-markdown docs/reference/exit-codes.md

# Every key of the declarations is also accepted as TRAINRT_<SECTION>_<KEY> and on the command line.
"$TRAINRT" --config jobs/fashion_mlp.ini --print-config --data.prefetch_batches=3 \
  | grep -q '^prefetch_batches = 3    # command line$' && pass "--print-config shows a command-line value and its source" \
  || fail "--print-config: $("$TRAINRT" --config jobs/fashion_mlp.ini --print-config --data.prefetch_batches=3 2>&1 | head -5)"
finish
