#!/usr/bin/env bash
# The documentation site (docs/, tools/docs.sh = make docs): it builds with no Sphinx warning
# (-W: an unresolved page link or heading anchor, a malformed page, a C++ symbol Breathe cannot
# render fail it); its reference pages hold the declarations (the keys and exit codes tables:
# tests/config/test_readme_tables.sh compares them with trainrt's own output) and the C++ API of
# include/trainrt/; a broken link and a broken anchor planted in a copy make the build fail, naming
# the page; every code block of README.md and docs/ that is a command or a script is run by a test
# or marked as not run (tests/docs/code_blocks.py), and a block with neither is caught; the README
# stays a front page (at most 200 lines).
# ctest: processors=1
source "$(dirname "$0")/../lib/common.sh"
cd "$TRAINRT_SRC"

rc=0; bash tools/docs.sh "$WORK/site" "$TRAINRT_PYTHON" >"$WORK/site.log" 2>&1 || rc=$?
[ "$rc" -eq 0 ] && pass "the site builds with no warning ($(find "$WORK/site/html" -name '*.html' | wc -l) pages)" \
  || { tail -30 "$WORK/site.log" >&2; fail "tools/docs.sh exits $rc"; finish; }
html=$WORK/site/html
grep -q 'scaling.use_gpu' "$html/reference/configuration.html" && grep -q 'failure_limit\|max_failures' "$html/reference/exit-codes.html" \
  && pass "the reference pages hold the keys and the exit codes" || fail "the reference pages lack the keys or exit codes"
grep -q 'CheckpointError' "$html/reference/cpp-api.html" && grep -q 'CheckpointState' "$html/reference/cpp-api.html" \
  && pass "the C++ API page documents include/trainrt/ (CheckpointError, CheckpointState)" || fail "the C++ API page lacks include/trainrt/'s classes"
for page in getting-started concepts guides/slurm guides/python guides/coming-from-ray limitations changelog architecture; do
  [ -s "$html/$page.html" ] || fail "no $page.html in the site"
done

# A broken link and a broken anchor fail the build, each named.
cp -r docs "$WORK/broken"
printf '\nSee [nowhere](nowhere.md) and [no heading](concepts.md#no-such-heading).\n' >>"$WORK/broken/guides/data.md"
rc=0; DOCS_SRC=$WORK/broken bash tools/docs.sh "$WORK/broken-site" "$TRAINRT_PYTHON" >"$WORK/broken.log" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && grep -q 'guides/data.md.*nowhere' "$WORK/broken.log" && grep -q 'guides/data.md.*no-such-heading' "$WORK/broken.log" \
  && pass "a broken link and a broken anchor fail the build (exit $rc), each naming guides/data.md" \
  || { tail -20 "$WORK/broken.log" >&2; fail "a broken link or anchor passed (exit $rc)"; }

# Code blocks.
"$TRAINRT_PYTHON" tests/docs/code_blocks.py . >"$WORK/blocks.out" 2>&1 \
  && pass "$(tail -1 "$WORK/blocks.out")" || { cat "$WORK/blocks.out" >&2; fail "code blocks without a test or a not-run mark"; }
mkdir -p "$WORK/unmarked/docs"
printf '# x\n\n```bash\nrm -rf /\n```\n' >"$WORK/unmarked/README.md"
rc=0; "$TRAINRT_PYTHON" tests/docs/code_blocks.py "$WORK/unmarked" >"$WORK/unmarked.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q 'README.md:3: a bash block with no' "$WORK/unmarked.out" \
  && pass "an unmarked block is caught: $(head -1 "$WORK/unmarked.out")" || fail "an unmarked block passed (exit $rc)"

lines=$(wc -l <README.md)
[ "$lines" -le 200 ] && pass "README.md is $lines lines" || fail "README.md is $lines lines (at most 200: the rest belongs in docs/)"
finish
