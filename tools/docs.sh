#!/usr/bin/env bash
# Builds the documentation site (`make docs`): Doxygen's XML of include/trainrt/ for the C++ API
# page, then Sphinx (docs/conf.py) into OUT_DIR/html with every warning an error (-W: an unresolved
# link or cross-reference, a malformed page, a Doxygen symbol Breathe cannot render).
#
#   bash tools/docs.sh OUT_DIR [PYTHON]     # PYTHON: the project environment's (Sphinx, MyST, Breathe)
#
# DOCS_SRC (default docs/) builds another copy of the pages (the docs tests break one on purpose).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:?usage: tools/docs.sh OUT_DIR [PYTHON]}
PYTHON=${2:-${TRAINRT_VENV:-/opt/trainrt-deps/venv}/bin/python3}
command -v doxygen >/dev/null || { echo "docs: doxygen is not installed (make deps)" >&2; exit 1; }
"$PYTHON" -c 'import sphinx, myst_parser, breathe, furo' 2>/dev/null ||
  { echo "docs: $PYTHON has no Sphinx, MyST, Breathe or Furo (make deps installs tools/requirements.txt)" >&2; exit 1; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
(cd "$REPO" && { cat docs/Doxyfile; echo "OUTPUT_DIRECTORY = $OUT/doxygen"; } | doxygen - >"$OUT/doxygen.log" 2>&1) ||
  { cat "$OUT/doxygen.log" >&2; echo "docs: doxygen failed" >&2; exit 1; }
TRAINRT_DOXYGEN_XML=$OUT/doxygen/xml "$PYTHON" -m sphinx -W --keep-going -q -b html -d "$OUT/doctrees" \
  "${DOCS_SRC:-$REPO/docs}" "$OUT/html"
echo "docs: $OUT/html/index.html"
