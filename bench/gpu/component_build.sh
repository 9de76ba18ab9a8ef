# shellcheck shell=bash
# What build_python_on_gpu.sh and build_torch_on_gpu.sh share, sourced with their arguments
# (BUILD UNPACKED_BUNDLE) after `set -euo pipefail`: REPO, BUILD, UNPACKED, PYTHON (the Python
# whose packages they build against), die (named after the caller), the g++ check, trainrt's
# VERSION, a temporary $objects directory, compile (sources into $objects, in parallel) and
# link_names (a component's soname and .so links).
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
die() { echo "$(basename "$0" .sh): $*" >&2; exit 1; }
[[ $# -ge 2 ]] || die "usage: $(basename "$0") BUILD UNPACKED_BUNDLE"
BUILD=$1
UNPACKED=$2
command -v g++ >/dev/null || die "no g++ on this machine"
PYTHON=${PYTHON:-python3}
VERSION=$(sed -n 's/^#define TRAINRT_VERSION "\(.*\)"/\1/p' "$BUILD/generated/trainrt/version.hpp")
[[ -n $VERSION ]] || VERSION=0.1.0
objects=$(mktemp -d)
trap 'rm -rf "$objects"' EXIT

# compile SOURCE...: each with g++ "${FLAGS[@]}" $EXTRA into $objects/<its folder>_<its name>.o,
# all at once; dies when one fails.
compile() {
  local pids=() src
  for src in "$@"; do
    g++ "${FLAGS[@]}" ${EXTRA:+$EXTRA} -c "$src" -o "$objects/$(basename "$(dirname "$src")")_$(basename "$src" .cpp).o" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || die "a compile failed"; done
}

# soname_of LIB: the soname trainrt loads the component LIB (libtrainrt_torch) by.
soname_of() { echo "$1.so.${VERSION%.*}"; }

# link_names LIB: BUILD/lib/LIB.so.<soname version> and LIB.so pointing at LIB.so.VERSION.
link_names() {
  ln -sfn "$1.so.$VERSION" "$BUILD/lib/$(soname_of "$1")"
  ln -sfn "$(soname_of "$1")" "$BUILD/lib/$1.so"
}
