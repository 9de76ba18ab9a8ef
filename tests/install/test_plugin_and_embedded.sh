#!/usr/bin/env bash
# The installed package: layout (bin, versioned libtrainrt.so, headers, CMake package, share/,
# module files); the installed trainrt runs on its own (RPATH, no build tree); the example built
# out of tree with find_package(trainrt) runs as a plugin and as an embedded program under
# mpiexec -n 2 with the same result, and both stop (USR2 to rank 1) and resume to the same weights.
# ctest: fixture=trainrt_installed
# ctest: processors=1
source "$(dirname "$0")/lib.sh"

for f in bin/trainrt bin/trainrt-srun include/trainrt/session.hpp include/trainrt/plugin.hpp \
         include/trainrt/run.hpp include/trainrt/build_config.hpp lib/cmake/trainrt/trainrtConfig.cmake \
         lib/cmake/trainrt/trainrtConfigVersion.cmake lib/cmake/trainrt/trainrtTargets.cmake \
         share/trainrt/jobs/fashion_mlp.sbatch share/trainrt/slurm/trainrt.sbatch share/trainrt/slurm/trainrt-srun \
         share/trainrt/hdf5_schemas/checkpoint.md share/trainrt/examples/regression/regression.cpp \
         modulefiles/trainrt/0.1.0 modulefiles/trainrt/0.1.0.lua; do
  [ -e "$PREFIX/$f" ] || fail "install lacks $f"
done
lib=$(find "$PREFIX/lib" -maxdepth 1 -name 'libtrainrt.so.*.*.*' | head -1)
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libtrainrt.so.0.1 ] && [ -L "$PREFIX/lib/libtrainrt.so.0.1" ] && [ -L "$PREFIX/lib/libtrainrt.so" ] \
  && pass "libtrainrt: $(basename "$lib"), SONAME $soname" || fail "libtrainrt SONAME '$soname' or links missing"
resolved=$(env -u LD_LIBRARY_PATH ldd "$ITRAINRT" | awk '/libtrainrt/ {print $3}')
[ -n "$resolved" ] && [ "$(readlink -f "$resolved")" = "$(readlink -f "$PREFIX/lib/libtrainrt.so.0.1")" ] && pass "installed trainrt loads $resolved (RPATH)" \
  || fail "installed trainrt resolves libtrainrt to '$resolved'"
"$ITRAINRT" --version | grep -qE '^trainrt 0\.1\.0 \(plugin ABI 1;' && pass "installed trainrt --version" || fail "installed --version"
[ -f "$PLUGIN" ] && [ -x "$EMBEDDED" ] || { fail "the example was not built ($EXAMPLE)"; finish; }
[ "$(readlink -f "$(ldd "$EMBEDDED" | awk '/libtrainrt/ {print $3}')")" = "$(readlink -f "$PREFIX/lib/libtrainrt.so.0.1")" ] \
  && pass "the embedded example links the installed libtrainrt" || fail "embedded example links $(ldd "$EMBEDDED" | grep trainrt)"

launch plugin "$WORK/plugin.out" "$ITRAINRT" --run.workload="plugin:$PLUGIN" --train.epochs=6
ref=$(digest_in "$WORK/plugin.out")
[ "$rc" -eq 0 ] && [ -n "$ref" ] && pass "plugin under mpiexec -n 2: digest $ref" || { cat "$WORK/plugin.out" >&2; fail "plugin run: exit $rc"; finish; }
jq -e -s 'map(select(has("loss"))) | length == 6 and (.[5].loss < .[0].loss)' "$WORK/plugin/result.jsonl" >/dev/null \
  && pass "plugin: 6 epoch rows, loss going down ($(jq -s -r 'map(.loss) | "\(.[0]) -> \(.[5])"' "$WORK/plugin/result.jsonl"))" \
  || fail "plugin result rows: $(cat "$WORK/plugin/result.jsonl")"
[ "$(ls "$WORK/plugin/checkpoints" | grep -c '^checkpoint_')" -eq 3 ] && pass "plugin: checkpoints kept by num_to_keep = 3" \
  || fail "plugin checkpoints: $(ls "$WORK/plugin/checkpoints")"
launch plugin_named "$WORK/named.out" "$ITRAINRT" --run.workload="plugin:$PLUGIN:regression" --train.epochs=6
[ "$rc" -eq 0 ] && [ "$(digest_in "$WORK/named.out")" = "$ref" ] && pass "plugin:PATH:regression (named) gives the same digest" \
  || fail "named plugin: exit $rc"

launch embedded "$WORK/embedded.out" "$EMBEDDED" --train.epochs=6
[ "$rc" -eq 0 ] && [ "$(digest_in "$WORK/embedded.out")" = "$ref" ] && pass "embedded program: same digest as the plugin" \
  || { cat "$WORK/embedded.out" >&2; fail "embedded run: exit $rc, digest $(digest_in "$WORK/embedded.out")"; }
jq -e -s '.[0].event == "start" and .[0].workload == "embedded:regression"' "$WORK/embedded/events.jsonl" >/dev/null \
  && pass "embedded run records workload embedded:regression" || fail "embedded start event: $(head -1 "$WORK/embedded/events.jsonl")"

stop_and_resume plugin_stop "$ref" "$ITRAINRT" --run.workload="plugin:$PLUGIN" --train.epochs=6
stop_and_resume embedded_stop "$ref" "$EMBEDDED" --train.epochs=6
finish
