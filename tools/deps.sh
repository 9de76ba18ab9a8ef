#!/usr/bin/env bash
# Installs every Debian package in tools/packages.txt that is not installed yet.
# Idempotent: a machine that has them all makes no apt call at all.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t wanted < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/packages.txt")
missing=()
for pkg in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "deps: all ${#wanted[@]} packages installed"
else
  echo "deps: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Environment Modules (Debian's environment-modules) conflicts with lmod as a package, and the
# tests load trainrt's module files with both: its .deb is unpacked (not installed) here, and the
# tests run its modulecmd.tcl with tclsh, as its own init script does.
EM_DIR=${TRAINRT_EM_DIR:-/opt/trainrt-deps/environment-modules}
if [[ ! -r $EM_DIR/usr/lib/x86_64-linux-gnu/modulecmd.tcl ]]; then
  echo "deps: unpacking Debian's environment-modules into $EM_DIR"
  work=$(mktemp -d)
  chmod 0777 "$work"   # apt-get download runs as _apt
  (cd "$work" && apt-get download -q environment-modules) ||
    { "${sudo_cmd[@]}" apt-get update -q && (cd "$work" && apt-get download -q environment-modules); }
  "${sudo_cmd[@]}" mkdir -p "$EM_DIR"
  "${sudo_cmd[@]}" dpkg-deb -x "$work"/environment-modules_*.deb "$EM_DIR"
  rm -rf "$work"
fi
