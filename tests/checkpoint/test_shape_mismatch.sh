#!/usr/bin/env bash
# Resuming from a checkpoint whose fc2.weight has another shape stops with exit 8 and a line naming
# 'fc2.weight' and both shapes, before any training or any new checkpoint.
#  1. "another model": a consistent checkpoint (dataset, its attributes, the manifest's shapes,
#     size and XXH3-64 all rewritten) with fc2.weight [256, 512]; `checkpoints verify` accepts it.
#  2. "inconsistent": the dataset is [256, 512] but the manifest still says [512, 512] (size and
#     checksum updated, so only the schema check can tell); verify and resume both reject it.
# The checkpoints are rewritten with the project environment's python3 + h5py; XXH3-64 comes from libxxhash (the
# library trainrt itself links) through ctypes.
# ctest: fixture=small_data
source "$(dirname "$0")/lib.sh"
PY="$TRAINRT_PYTHON"
"$PY" -c 'import h5py, numpy' || { echo "FAIL: $PY lacks h5py/numpy (python3-h5py, python3-numpy)" >&2; exit 1; }

# Rank 0 writes the replicated weights whole (not in shares over the ranks' files), so that one
# dataset in rank_00000.h5 is the whole of fc2.weight for the doctor below.
train 2 source "$WORK/source.out" --train.epochs=1 --checkpoint.spread_replicated=false
[ "$rc" -eq 0 ] && [ -d "$WORK/source/checkpoints/checkpoint_000004" ] \
  || { show "$WORK/source.out"; echo "FAIL: the run that makes the checkpoint exits $rc" >&2; exit 1; }
pass "source run: checkpoint_000004 written"

# doctor CKPT_DIR TENSOR ROWS COLS MODE: rewrite TENSOR in rank_00000.h5 as a ROWS x COLS float32
# dataset; MODE consistent also rewrites the manifest's shapes; both update size and XXH3-64.
doctor() {
  "$PY" - "$@" <<'EOF'
import ctypes, json, os, sys
import h5py, numpy as np
ckpt, tensor, rows, cols, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
shape = [rows, cols]
shard = os.path.join(ckpt, "rank_00000.h5")
with h5py.File(shard, "r+") as f:
    path = "/tensors/" + tensor
    old = f[path]
    attrs = {k: old.attrs[k] for k in old.attrs}
    del f[path]
    data = np.random.default_rng(1).uniform(-0.05, 0.05, size=shape).astype("<f4")
    new = f.create_dataset(path, data=data, dtype="<f4")
    new.attrs["replicated"] = np.int64(attrs["replicated"])
    new.attrs["global_shape"] = np.array(shape if mode == "consistent" else attrs["global_shape"], dtype=np.int64)
    new.attrs["offset"] = np.zeros(2, dtype=np.int64)
lib = ctypes.CDLL("libxxhash.so.0")
lib.XXH3_64bits.restype = ctypes.c_uint64
lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
content = open(shard, "rb").read()
manifest_path = os.path.join(ckpt, "manifest.json")
manifest = json.load(open(manifest_path))
for entry in manifest["files"]:
    if entry["name"] == "rank_00000.h5":
        entry["size"] = len(content)
        entry.pop("ranges", None)  # its data runs' checksums, replaced by one of the whole file
        entry["xxh3"] = "%016x" % lib.XXH3_64bits(content, len(content))
if mode == "consistent":
    manifest["tensors"][tensor]["global_shape"] = shape
    for part in manifest["tensors"][tensor]["parts"]:
        part["shape"] = shape
with open(manifest_path, "w") as out:
    json.dump(manifest, out, indent=2)
    out.write("\n")
EOF
}

# resume_rejected CASE CKPT STORED: a new run resuming from CKPT exits 8 naming fc2.weight, the
# stored shape STORED (e.g. "256, 512") and the model's [512, 512]; no checkpoint is written.
resume_rejected() {
  local what=$1 ckpt=$2 stored=$3 name="resume_${1// /_}" out="$WORK/resume_${1// /_}.out"  # run names: no spaces
  train 2 "$name" "$out" --checkpoint.resume_from="$ckpt"
  [ "$rc" -eq 8 ] && pass "$what: resume exits 8" || { show "$out"; fail "$what: resume exits $rc, expected 8"; }
  local line; line=$(grep -F "fc2.weight" "$out.stderr" | grep -F "$stored" | grep -F "512, 512" | head -1 || true)
  [ -n "$line" ] && pass "$what: $line" \
    || { show "$out"; fail "$what: no error line names 'fc2.weight' with [$stored] and [512, 512]"; }
  grep -q '^\[trainrt 0\] iter ' "$out.stdout" && fail "$what: training ran (an iteration was reported)"
  local n; n=$(committed "$WORK/$name" | wc -l)
  [ "$n" -eq 0 ] || fail "$what: $n checkpoints written by the rejected run"
}

# ---- 1. a valid checkpoint of another model
mkdir -p "$WORK/other/checkpoints"
cp -a "$WORK/source/checkpoints/checkpoint_000004" "$WORK/other/checkpoints/"
doctor "$WORK/other/checkpoints/checkpoint_000004" fc2.weight 256 512 consistent
verify "$WORK/other" "$WORK/other.verify.out"
[ "$vrc" -eq 0 ] && pass "another model: the doctored checkpoint verifies (checksums and schema)" \
  || { show "$WORK/other.verify.out"; fail "another model: verify exits $vrc; the doctored checkpoint is not self-consistent"; }
resume_rejected "another model" "$WORK/other/checkpoints/checkpoint_000004" "256, 512"

# ---- 2. data and manifest disagree
mkdir -p "$WORK/torn/checkpoints"
cp -a "$WORK/source/checkpoints/checkpoint_000004" "$WORK/torn/checkpoints/"
doctor "$WORK/torn/checkpoints/checkpoint_000004" fc2.weight 256 512 inconsistent
verify "$WORK/torn" "$WORK/torn.verify.out"
[ "$vrc" -eq 8 ] && grep -q "fc2.weight" "$WORK/torn.verify.out" \
  && pass "inconsistent: verify exits 8: $(grep -m1 BAD "$WORK/torn.verify.out" | sed 's/.*schema: /schema: /')" \
  || { show "$WORK/torn.verify.out"; fail "inconsistent: verify exits $vrc, expected 8 naming fc2.weight"; }
resume_rejected "inconsistent" "$WORK/torn/checkpoints/checkpoint_000004" "256, 512"
finish
