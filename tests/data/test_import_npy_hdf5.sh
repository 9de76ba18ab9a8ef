#!/usr/bin/env bash
# `trainrt data import npy|hdf5|fashion-mnist|mnist`, checked with h5py value for value (bit for
# bit for floats): every stored NumPy dtype (bool, u1, u2, u4, i1-i8, f2, f4, f8, big-endian) as
# .npy, NAME=FILE.npy, .npz (stored and deflated), multi-dimensional samples, rows kept aligned
# across columns by --split, HDF5 datasets picked by path from nested groups (big-endian, u16/u32
# widened), the FashionMNIST IDX files; and bad input: exit 6, one stderr line, nothing written.
source "$(dirname "$0")/lib.sh"

IN=$WORK/in
FASHION=/usr/share/datasets/fashion-mnist

# --- inputs ------------------------------------------------------------------------------------
"$PY" - "$IN" <<'EOF'
import os, sys
import numpy as np, h5py
out = sys.argv[1]
rng = np.random.default_rng(20240611)
N = 50

def sample(dtype, shape=(N, 3, 2), special=True):
    """Random values over the type's whole range, its extremes (and NaN, inf, -0, subnormals) in it
    unless not `special`."""
    dtype = np.dtype(dtype)
    native = dtype.newbyteorder("=")
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(native)
        a = rng.integers(info.min, info.max, shape, dtype=native, endpoint=True)
        flat = a.reshape(-1)
        flat[:2] = info.min, info.max
    else:
        a = (rng.standard_normal(shape) * 1000).astype(native)
        flat = a.reshape(-1)
        info = np.finfo(native)
        if special:
            flat[:8] = [np.nan, np.inf, -np.inf, -0.0, info.tiny / 4, info.max, -info.max, info.tiny]
    return a.astype(dtype)

# one .npy per type (the tag is the column name)
types = {"u1": "u1", "u2": "<u2", "u4": "<u4", "i1": "i1", "i2": "<i2", "i4": "<i4", "i8": "<i8",
         "f2": "<f2", "f4": "<f4", "f8": "<f8", "bool": "?", "be_f8": ">f8", "be_f4": ">f4", "be_f2": ">f2",
         "be_i2": ">i2", "be_i4": ">i4", "be_i8": ">i8", "be_u2": ">u2", "be_u4": ">u4"}
for tag, dtype in types.items():
    np.save(f"{out}/{tag}.npy", sample(dtype))
np.save(f"{out}/vec.npy", sample("<i8", (N,)))         # 1-d: one scalar per sample
np.save(f"{out}/wide.npy", sample("<f4", (N, 7), special=False))  # finite: its mean/std are checked
# every float16 bit pattern (NaN payloads, subnormals, both zeros), 50 rows of 1311
halves = (np.arange(N * 1311) % 65536).astype("<u2").view("<f2").reshape(N, 1311)
np.save(f"{out}/halves.npy", halves)
# the same kinds of arrays in archives, stored and deflated
members = {"img": sample("<u2", (N, 4, 4)), "lab": sample("<i8", (N,)), "big": sample(">f8", (N, 2)),
           "flag": sample("?", (N, 5)), "h": halves}
np.savez(f"{out}/stored.npz", **members)
np.savez_compressed(f"{out}/deflated.npz", **members)
# aligned columns for the split: row i of x is i, of y is (2i, 2i + 1), of z is i % 65536 as u2;
# y is 4.8 MB, so it is read in several blocks and written in several chunks
M = 300_000
x = np.arange(M, dtype="<i8")
y = np.stack([2 * x, 2 * x + 1], axis=1).astype(">f8")
np.save(f"{out}/x.npy", x)
np.save(f"{out}/y.npy", y)
np.save(f"{out}/z.npy", (x % 65536).astype("<u2"))
np.savez_compressed(f"{out}/xyz.npz", x=x, y=y, z=(x % 65536).astype("<u2"))
# split by file: two archives with the same keys (and one with other keys)
np.savez(f"{out}/part_train.npz", x=np.arange(10), y=np.arange(10) * 2.0)
np.savez(f"{out}/part_test.npz", x=np.arange(10, 15), y=np.arange(10, 15) * 2.0)
np.savez(f"{out}/part_other.npz", x=np.arange(10, 15), w=np.arange(10, 15) * 2.0)
# npy format versions 2 and 3 (headers of 4 bytes' length)
for version in (2, 3):
    with open(f"{out}/v{version}.npy", "wb") as f:
        np.lib.format.write_array(f, sample("<f8", (N, 3)), version=(version, 0))

# bad ones
np.save(f"{out}/fortran.npy", np.asfortranarray(rng.standard_normal((N, 3))))
np.save(f"{out}/object.npy", np.array([1, "a", None, 2.5], dtype=object), allow_pickle=True)
np.save(f"{out}/short.npy", sample("<f4", (N - 1, 3, 2)))
np.save(f"{out}/uint64.npy", np.arange(N, dtype="<u8"))
np.save(f"{out}/complex.npy", np.zeros(N, dtype="<c8"))
np.save(f"{out}/scalar.npy", np.float64(1.5))
np.save(f"{out}/records.npy", np.zeros(N, dtype=[("a", "<i4"), ("b", "<f4")]))
np.save(f"{out}/strings.npy", np.array(["a", "bc"] * 25))
np.save(f"{out}/no_columns.npy", np.zeros((N, 0)))
full = open(f"{out}/f8.npy", "rb").read()
open(f"{out}/truncated.npy", "wb").write(full[:-100])
open(f"{out}/truncated_header.npy", "wb").write(full[:40])
open(f"{out}/not_numpy.npy", "w").write("x,y\n1,2\n")
archive = open(f"{out}/stored.npz", "rb").read()
open(f"{out}/truncated.npz", "wb").write(archive[: len(archive) // 2])
# deflated data damaged far into the member: its header reads, its data do not (found while writing)
np.savez_compressed(f"{out}/corrupt.npz", a=rng.standard_normal((20000, 8)))
damaged = bytearray(open(f"{out}/corrupt.npz", "rb").read())
middle = len(damaged) * 3 // 5
damaged[middle:middle + 64] = bytes(64)
open(f"{out}/corrupt.npz", "wb").write(damaged)

# HDF5: nested groups, big-endian, u16 and u32 (widened), chunked + gzip, float16, bool
R = 200_000
i = np.arange(R)
with h5py.File(f"{out}/source.h5", "w") as f:
    f["meta/version"] = 3
    f.create_dataset("group/sub/features", data=np.stack([i, -i, i / 7, i * 0.5], axis=1).astype(">f8"))
    f["group/labels"] = (i * 40503 % 65536).astype("<u2")
    f["group/u16_max"] = np.full(R, 65535, dtype="<u2")
    f["rowid"] = (np.uint64(4294967295 - (R - 1)) + i.astype(np.uint64)).astype("<u4")  # up to 2^32 - 1
    f.create_dataset("other/deep/img", data=(i[:, None, None] % 32768 - np.arange(6).reshape(2, 3)).astype(">i2"),
                     chunks=(1000, 2, 3), compression="gzip")
    f["half"] = (i % 65536).astype("<u2").view("<f2")
    f["flags"] = (i % 3 == 0)
    f["bad/u64"] = i.astype("<u8")
    f["bad/fixed_strings"] = np.array([b"ab"] * R)
    f.create_dataset("bad/vlen_strings", data=["s"] * 10, dtype=h5py.string_dtype())
    f["bad/short"] = np.zeros(R - 1)
    f["bad/scalar"] = 1.0
    f["bad/compound"] = np.zeros(10, dtype=[("a", "<i4"), ("b", "<f4")])

# crafted .npy headers (NumPy never writes these): each must be one line naming the file, exit 6
def raw_npy(name, header, data=b"", version=1, length=None):
    text = header.encode("latin1") + b"\n"
    size = len(text) if length is None else length
    prefix = b"\x93NUMPY" + bytes([version, 0])
    prefix += size.to_bytes(2 if version == 1 else 4, "little")
    with open(f"{out}/{name}.npy", "wb") as f:
        f.write(prefix + text + data)

def header(shape, descr="'<f8'", fortran="False"):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)

raw_npy("huge_dim", header("(99999999999999999999999, 3)"), bytes(48))
raw_npy("negative_dim", header("(-1, 3)"), bytes(48))
raw_npy("overflow", header("(4294967296, 4294967296, 8)"), bytes(64))
raw_npy("claims_more", header("(1000000000000, 3)"), bytes(48))
raw_npy("huge_row", header("(1, 100000000000)", "'|u1'"), bytes(64))
raw_npy("shape_text", header("'abc'"), bytes(48))
raw_npy("many_dims", header("(" + "1, " * 33 + ")"), bytes(8))
raw_npy("no_item_size", header("(2, 3)", "'<f'"), bytes(48))
raw_npy("descr_tuple", header("(2, 3)", "('<f8', 3)"), bytes(48))
raw_npy("bad_version", header("(2, 3)"), bytes(48), version=9)
raw_npy("huge_header", header("(2, 3)"), bytes(48), version=2, length=0xFFFFFFF0)
import zipfile
with zipfile.ZipFile(f"{out}/crafted.npz", "w") as z:
    z.writestr("ok.npy", open(f"{out}/f8.npy", "rb").read())
    z.writestr("huge.npy", open(f"{out}/huge_dim.npy", "rb").read())

# A dataset file written by h5py after hdf5_schemas/dataset.md: its string attributes are h5py's
# (variable-length UTF-8 for str, ASCII where asked, fixed-length for numpy.bytes_), its bools
# h5py's enums.
def schema_file(path, name):
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "trainrt-dataset"                      # variable-length, UTF-8
        f.attrs["format_version"] = np.int64(2)
        f.attrs["name"] = name
        f.attrs.create("source", "h5py by hand", dtype=h5py.string_dtype("ascii"))
        f.attrs["feature_column"] = "x"
        f.attrs["label_column"] = np.bytes_("y")                   # fixed-length
        for split, n in (("train", 300), ("test", 100)):
            g = f.create_group(split)
            g.attrs["source"] = f"h5py {split}"
            g.attrs["count"] = np.int64(n)
            g.create_dataset("x", data=np.arange(n * 4, dtype="<f4").reshape(n, 4), chunks=(64, 4))
            space_padded = h5py.h5t.C_S1.copy()                    # as Fortran writes strings
            space_padded.set_size(12)
            space_padded.set_strpad(h5py.h5t.STR_SPACEPAD)
            g["x"].attrs.create("source", np.bytes_("np.arange"), dtype=h5py.Datatype(space_padded))
            g["y"] = (np.arange(n) % 3).astype("<i8")
            g["flag"] = np.arange(n) % 2 == 0
schema_file(f"{out}/h5py_schema.h5", "données-h5py")
schema_file(f"{out}/h5py_name_array.h5", "x")
with h5py.File(f"{out}/h5py_name_array.h5", "a") as f:
    f.attrs["name"] = ["two", "strings"]
EOF

# --- every dtype, as .npy and NAME=FILE.npy ---------------------------------------------------------
NPYS=()
for tag in u1 u2 u4 i1 i2 i4 i8 f2 f4 f8 bool be_f8 be_f4 be_f2 be_i2 be_i4 be_i8 be_u2 be_u4 vec wide halves v2 v3; do
  NPYS+=("$IN/$tag.npy")
done
if import_ok npy_all npy "${NPYS[@]}" --out "$WORK/npy_all.h5" &&
  import_ok npy_named npy "feats=$IN/wide.npy" "target=$IN/vec.npy" --label target --name named \
    --out "$WORK/npy_named.h5" &&
  import_ok npz_stored npy "$IN/stored.npz" --out "$WORK/npz_stored.h5" &&
  import_ok npz_deflated npy "$IN/deflated.npz" --label lab --features img --compress 6 \
    --out "$WORK/npz_deflated.h5"; then
  pycheck "npy/npz: every dtype round-trips bit for bit, stored as the documented type" \
    "$IN" "$WORK/npy_all.h5" "$WORK/npy_named.h5" "$WORK/npz_stored.h5" "$WORK/npz_deflated.h5" <<'EOF'
from tcheck import *
src, all_path, named, stored, deflated = sys.argv[1:]
STORED = {"b": {1: "u1"}, "u": {1: "u1", 2: "<i4", 4: "<i8"}, "i": {1: "i1", 2: "<i2", 4: "<i4", 8: "<i8"},
          "f": {2: "<f2", 4: "<f4", 8: "<f8"}}

def same(column, want, where):
    """column (an h5py dataset) holds `want` in the documented type, bit for bit."""
    target = np.dtype(STORED[want.dtype.kind][want.dtype.itemsize])
    check(column.dtype == target, f"{where}: dtype {column.dtype}, expected {target} for {want.dtype.str}")
    check(column.shape == want.shape, f"{where}: shape {column.shape}, expected {want.shape}")
    if column.dtype != target or column.shape != want.shape:
        return
    got = column[()]
    if want.dtype.kind == "f":
        bits = f"<u{target.itemsize}"
        ok = np.array_equal(got.view(bits), want.astype(target).view(bits))
    else:
        ok = np.array_equal(got.astype(np.int64), want.astype(np.int64))
    check(ok, f"{where}: values differ")

with h5py.File(all_path, "r") as f:
    check_root(f, "npy_all", None, None, "u1.npy")
    check(list(f.keys()) == ["train"], f"{all_path}: splits {list(f.keys())}")
    g = f["train"]
    check(int(g.attrs.get("count", -1)) == 50, f"{all_path}: count {g.attrs.get('count')}")
    tags = [n[:-4] for n in os.listdir(src) if n.endswith(".npy")]
    wanted = "u1 u2 u4 i1 i2 i4 i8 f2 f4 f8 bool be_f8 be_f4 be_f2 be_i2 be_i4 be_i8 be_u2 be_u4 vec wide halves v2 v3"
    check(sorted(g.keys()) == sorted(wanted.split()), f"columns {sorted(g.keys())}")
    for tag in wanted.split():
        if tag in g:
            same(g[tag], np.load(f"{src}/{tag}.npy"), f"/train/{tag}")
    if "wide" in g:
        check_stats(g["wide"], "/train/wide")
    if "i2" in g:
        check_stats(g["i2"], "/train/i2")
with h5py.File(named, "r") as f:
    check_root(f, "named", "feats", "target")
    check(sorted(f["train"].keys()) == ["feats", "target"], f"{named}: columns {sorted(f['train'].keys())}")
    same(f["train/feats"], np.load(f"{src}/wide.npy"), "named /train/feats")
    same(f["train/target"], np.load(f"{src}/vec.npy"), "named /train/target")
for path, archive, features, label in ((stored, "stored.npz", None, None), (deflated, "deflated.npz", "img", "lab")):
    members = np.load(f"{src}/{archive}")
    with h5py.File(path, "r") as f:
        check_root(f, os.path.basename(path)[:-3], features, label)
        check(sorted(f["train"].keys()) == sorted(members.files), f"{path}: columns {sorted(f['train'].keys())}")
        for key in members.files:
            if key in f["train"]:
                same(f["train"][key], members[key], f"{archive} /train/{key}")
                compressed = (f["train"][key].compression, f["train"][key].shuffle)
                check(compressed == (("gzip", True) if label else (None, False)),
                      f"{archive} /train/{key}: compression, shuffle {compressed}")
EOF
  if "$TRAINRT" data info "$WORK/npy_all.h5" >"$WORK/info.out" 2>&1 &&
    grep -qE "be_u2 +i32 +\[50, 3, 2\]" "$WORK/info.out" && grep -qE "halves +f16 +\[50, 1311\]" "$WORK/info.out" &&
    grep -qE "vec +i64 +\[50\] " "$WORK/info.out" && grep -qE "bool +u8 +\[50, 3, 2\]" "$WORK/info.out"; then
    pass "data info npy_all.h5: types and shapes"
  else
    fail "data info npy_all.h5: $(cat "$WORK/info.out")"
  fi
fi

# --- --split keeps the rows of all columns together ---------------------------------------------
# shellcheck disable=SC2054  # the commas are inside one argument
SPLIT=(--split train=0.6,val=0.25,test=0.15 --seed 7)
if import_ok split_npy npy "$IN/x.npy" "$IN/y.npy" "$IN/z.npy" "${SPLIT[@]}" --out "$WORK/split_npy.h5" &&
  import_ok split_npz npy "$IN/xyz.npz" "${SPLIT[@]}" --out "$WORK/split_npz.h5" &&
  import_ok split_other npy "$IN/x.npy" "$IN/y.npy" --split train=0.6,val=0.25,test=0.15 --seed 8 \
    --out "$WORK/split_other.h5"; then
  pycheck "npy --split 0.6/0.25/0.15 of 300000 rows: sizes, y == 2x and z == x % 65536 in every split, order kept" \
    "$WORK/split_npy.h5" "$WORK/split_npz.h5" "$WORK/split_other.h5" <<'EOF'
from tcheck import *
N = 300_000
counts = expected_counts([0.6, 0.25, 0.15], N)
def rows_of(path, columns=("x", "y", "z")):
    out = {}
    with h5py.File(path, "r") as f:
        check(sorted(f.keys()) == ["test", "train", "val"], f"{path}: splits {sorted(f.keys())}")
        for split, count in zip(("train", "val", "test"), counts):
            g = f[split]
            x = g["x"][()]
            check(len(x) == count and int(g.attrs.get("count", -1)) == count,
                  f"{path}:/{split}: {len(x)} rows (count {g.attrs.get('count')}), expected {count}")
            check(np.all(np.diff(x) > 0), f"{path}:/{split}: x not increasing (input order lost)")
            y = g["y"][()]
            check(g["y"].dtype == np.dtype("<f8") and y.shape == (len(x), 2), f"{path}:/{split}/y: {g['y'].dtype} {y.shape}")
            check(np.array_equal(y[:, 0], 2 * x) and np.array_equal(y[:, 1], 2 * x + 1),
                  f"{path}:/{split}: y != (2x, 2x + 1): rows not aligned")
            if "z" in columns:
                z = g["z"][()]
                check(g["z"].dtype == np.dtype("<i4"), f"{path}:/{split}/z: dtype {g['z'].dtype}")
                check(np.array_equal(z, x % 65536), f"{path}:/{split}: z != x % 65536: rows not aligned")
            out[split] = x
    check(np.array_equal(np.sort(np.concatenate(list(out.values()))), np.arange(N)), f"{path}: not every row once")
    return out
a, b = rows_of(sys.argv[1]), rows_of(sys.argv[2])
check(all(np.array_equal(a[s], b[s]) for s in a), ".npy and .npz inputs with the same seed split differently")
c = rows_of(sys.argv[3], ("x", "y"))
check(not np.array_equal(a["train"], c["train"]), "--seed 8 split as --seed 7")
print(" / ".join(map(str, counts)))
EOF
fi

# --- --split by file: each archive's rows in its split
if import_ok split_files npy "$IN/part_train.npz" "$IN/part_test.npz" --split train=part_train.npz,test=part_test.npz \
  --out "$WORK/split_files.h5"; then
  pycheck "npz --split train=A.npz,test=B.npz: each archive's arrays in its split" "$WORK/split_files.h5" <<'EOF'
from tcheck import *
with h5py.File(sys.argv[1], "r") as f:
    check(sorted(f.keys()) == ["test", "train"], f"splits {sorted(f.keys())}")
    for split, rows in (("train", np.arange(10)), ("test", np.arange(10, 15))):
        check(sorted(f[split].keys()) == ["x", "y"], f"/{split}: columns {sorted(f[split].keys())}")
        check(np.array_equal(f[split]["x"][()], rows) and np.array_equal(f[split]["y"][()], rows * 2.0),
              f"/{split}: x {f[split]['x'][()]}, y {f[split]['y'][()]}")
EOF
fi

# --- hdf5: datasets by path from nested groups -------------------------------------------------------
COLUMNS=/group/sub/features,label=/group/labels,/group/u16_max,/rowid,img=/other/deep/img,/half,/flags
if import_ok hdf5 hdf5 "$IN/source.h5" --columns "$COLUMNS" --label label --features features \
  --split train=0.75,test=0.25 --seed 11 --out "$WORK/hdf5.h5" &&
  import_ok hdf5_plain hdf5 "$IN/source.h5" --columns /rowid,half16=/half --out "$WORK/hdf5_plain.h5"; then
  pycheck "hdf5: paths and renames, big-endian, u16 -> i32, u32 -> i64, gzip source, rows aligned by --split" \
    "$IN/source.h5" "$WORK/hdf5.h5" "$WORK/hdf5_plain.h5" <<'EOF'
from tcheck import *
src_path, path, plain = sys.argv[1:]
R = 200_000
base = 4294967295 - (R - 1)
with h5py.File(src_path, "r") as s:
    src = {name: s[p][()] for name, p in (("features", "group/sub/features"), ("label", "group/labels"),
           ("u16_max", "group/u16_max"), ("rowid", "rowid"), ("img", "other/deep/img"), ("half", "half"),
           ("flags", "flags"))}
types = {"features": "<f8", "label": "<i4", "u16_max": "<i4", "rowid": "<i8", "img": "<i2", "half": "<f2",
         "flags": "u1"}  # h5py's bool (an enum over int8) as u8, like an .npy bool
counts = expected_counts([0.75, 0.25], R)
seen = []
with h5py.File(path, "r") as f:
    check_root(f, "hdf5", "features", "label", "source.h5")
    for split, count in zip(("train", "test"), counts):
        g = f[split]
        check(sorted(g.keys()) == sorted(src), f"/{split}: columns {sorted(g.keys())}")
        rowid = g["rowid"][()]
        check(len(rowid) == count, f"/{split}: {len(rowid)} rows, expected {count}")
        rows = rowid.astype(np.int64) - base
        check(rows.min() >= 0 and np.all(np.diff(rows) > 0), f"/{split}: rows out of order")
        seen.append(rows)
        for name, want in src.items():
            if name not in g:
                continue
            column = g[name]
            if name in types:
                check(column.dtype == np.dtype(types[name]), f"/{split}/{name}: dtype {column.dtype}, expected {types[name]}")
            got, expect = column[()], want[rows]
            check(got.shape == expect.shape, f"/{split}/{name}: shape {got.shape}, expected {expect.shape}")
            if got.shape != expect.shape:
                continue
            if got.dtype.kind == "f":
                bits = f"<u{got.dtype.itemsize}"
                ok = np.array_equal(got.view(bits), expect.astype(got.dtype).view(bits))
            else:
                ok = np.array_equal(got.astype(np.int64), expect.astype(np.int64))
            check(ok, f"/{split}/{name}: values differ from the source's rows")
    check(int(f["train/rowid"][-1]) <= 4294967295 and f["train/u16_max"][0] == 65535, "widened extremes")
check(np.array_equal(np.sort(np.concatenate(seen)), np.arange(R)), "train + test are not every row once")
with h5py.File(plain, "r") as f:
    check_root(f, "hdf5_plain", None, None)
    check(sorted(f["train"].keys()) == ["half16", "rowid"], f"{plain}: columns {sorted(f['train'].keys())}")
    check(np.array_equal(f["train/rowid"][()], src["rowid"].astype(np.int64)), f"{plain}: rowid differs")
    check(np.array_equal(f["train/half16"][()].view("<u2"), src["half"].view("<u2")), f"{plain}: half16 differs")
EOF
fi
  if "$TRAINRT" data info "$WORK/hdf5.h5" >"$WORK/hdf5_info.out" 2>&1 && grep -qE "flags +u8 +\[150000\]" "$WORK/hdf5_info.out" &&
    grep -qE "label +i32 +\[150000\]" "$WORK/hdf5_info.out"; then
    pass "data info hdf5.h5: h5py's bool stored as u8, u16 as i32"
  else
    fail "data info hdf5.h5: $(cat "$WORK/hdf5_info.out")"
  fi

# --- a dataset file written by h5py (hdf5_schemas/dataset.md), not by trainrt ---------------------
# h5py writes str attributes as variable-length strings and bools as enums: `data info` reads the
# attributes (variable-length UTF-8 and ASCII, fixed-length null- and space-padded) and shows the
# bools as u8, and the streaming reader hands out every sample of each split.
if "$TRAINRT" data info "$IN/h5py_schema.h5" >"$WORK/h5py_info.out" 2>"$WORK/h5py_info.err"; then
  missing=()
  for want in "format version 2" "name: +données-h5py" "source: +h5py by hand" "features: x" "label: +y" \
    "split train: 300 samples" "split test: 100 samples" "x +f32 +\[300, 4\] +chunks of 64 rows +from np\.arange$" \
    "y +i64 +\[300\]" "flag +u8 +\[300\]" "flag +u8 +\[100\]"; do
    grep -qE -- "$want" "$WORK/h5py_info.out" || missing+=("$want")
  done
  [ "${#missing[@]}" -eq 0 ] && pass "data info on an h5py-written dataset: variable-length string attributes, bool as u8" ||
    fail "data info h5py_schema.h5 lacks /${missing[*]}/: $(cat "$WORK/h5py_info.out")"
else
  fail "data info h5py_schema.h5 exited non-zero: $(cat "$WORK/h5py_info.err")"
fi
BENCH="$TRAINRT_BUILD/bench/stream_read_bench"
for case in train:300 test:100; do
  split=${case%:*} rows=${case#*:}
  if out=$("$BENCH" "$IN/h5py_schema.h5" --split "$split" --batch 32 --shuffle global 2>&1) &&
    [ "$(jq -r .samples <<<"$out")" -eq "$rows" ] && [ "$(jq -r .bytes <<<"$out")" -eq $((rows * (16 + 8 + 1))) ]; then
    pass "h5py-written dataset, split $split: streamed, $rows samples of x, y, flag"
  else
    fail "streaming h5py_schema.h5 split $split: $out"
  fi
done
rc=0
"$TRAINRT" data info "$IN/h5py_name_array.h5" >"$WORK/name_array.out" 2>"$WORK/name_array.err" || rc=$?
[ "$rc" -eq 6 ] && [ "$(nlines "$WORK/name_array.err")" -eq 1 ] &&
  grep -q "h5py_name_array\.h5 is damaged or not a trainrt dataset (HDF5 attribute 'name' is not one string" \
    "$WORK/name_array.err" && pass "data info: a name attribute of two strings is refused, exit 6, one line" ||
  fail "data info h5py_name_array.h5: exit $rc, stderr: $(cat "$WORK/name_array.err")"

# --- FashionMNIST and MNIST IDX files ------------------------------------------------------------
if [ -f "$FASHION/train-images-idx3-ubyte.gz" ]; then
  if import_ok fashion fashion-mnist --out "$WORK/fashion.h5" &&
    import_ok mnist mnist --from "$FASHION" --name mnist-from-dir --out "$WORK/mnist.h5"; then
    grep -q "train 60000, test 10000" "$WORK/fashion.out" && grep -q "train 60000, test 10000" "$WORK/mnist.out" &&
      pass "fashion-mnist, mnist: summaries say train 60000, test 10000" ||
      fail "IDX summaries: $(cat "$WORK/fashion.out" "$WORK/mnist.out")"
    pycheck "fashion-mnist and mnist --from --name: u8 images [N, 28, 28] and labels equal to the IDX files" \
      "$FASHION" "$WORK/fashion.h5" "$WORK/mnist.h5" <<'EOF'
from tcheck import *
import gzip
src, fashion, mnist = sys.argv[1:]
def idx(name):
    raw = gzip.open(f"{src}/{name}.gz").read()
    dims = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * d: 8 + 4 * d], "big") for d in range(dims))
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)
ref = {"train": (idx("train-images-idx3-ubyte"), idx("train-labels-idx1-ubyte")),
       "test": (idx("t10k-images-idx3-ubyte"), idx("t10k-labels-idx1-ubyte"))}
for path, name in ((fashion, "fashion-mnist"), (mnist, "mnist-from-dir")):
    with h5py.File(path, "r") as f:
        check_root(f, name, "images", "labels")
        check(sorted(f.keys()) == ["test", "train"], f"{name}: splits {sorted(f.keys())}")
        if name == "fashion-mnist":
            check(text(f.attrs.get("classes", "")).startswith("T-shirt"), f"{name}: classes {f.attrs.get('classes')!r}")
        for split, n in (("train", 60000), ("test", 10000)):
            images, labels = f[split]["images"], f[split]["labels"]
            check(images.dtype == np.uint8 and images.shape == (n, 28, 28), f"{name}/{split}/images: {images.dtype} {images.shape}")
            check(labels.dtype == np.uint8 and labels.shape == (n,), f"{name}/{split}/labels: {labels.dtype} {labels.shape}")
            check(int(f[split].attrs.get("count", -1)) == n, f"{name}/{split}: count {f[split].attrs.get('count')}")
            check(np.array_equal(images[()], ref[split][0]), f"{name}/{split}/images differ from the IDX file")
            check(np.array_equal(labels[()], ref[split][1]), f"{name}/{split}/labels differ from the IDX file")
            check(int(labels.attrs.get("num_classes", -1)) == 10, f"{name}/{split}/labels: num_classes {labels.attrs.get('num_classes')}")
EOF
  fi
else
  fail "$FASHION/train-images-idx3-ubyte.gz missing (Debian's dataset-fashion-mnist)"
fi
mkdir -p "$IN/idx_bad"
for file in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz; do
  ln -s "$FASHION/$file" "$IN/idx_bad/$file"
done
gzip -dc "$FASHION/t10k-labels-idx1-ubyte.gz" | head -c 5000 | gzip >"$IN/idx_bad/t10k-labels-idx1-ubyte.gz"
refused idx_truncated 6 "t10k-labels-idx1-ubyte\.gz is truncated" import mnist --from "$IN/idx_bad"
mkdir -p "$IN/idx_none"
refused idx_missing 6 "cannot open .*idx_none/train-images-idx3-ubyte" import mnist --from "$IN/idx_none"
refused mnist_without_from 2 "mnist: give the directory of its IDX files with --from DIR" import mnist
# Options that choose splits or a label do not apply to the IDX files: a usage error naming them.
# shellcheck disable=SC2054  # the commas are inside one argument
refused idx_split 2 "^\[trainrt\] error: data import fashion-mnist: --split does not apply \(the IDX files come split" \
  import fashion-mnist --split train=0.5,test=0.5
refused idx_seed 2 "data import mnist: --seed does not apply" import mnist --from "$FASHION" --seed 3
refused idx_label 2 "data import fashion-mnist: --label does not apply" import fashion-mnist --label labels

# --- bad input ------------------------------------------------------------------------------------
refused fortran_order 6 "fortran\.npy is a Fortran-order array" import npy "$IN/fortran.npy"
refused object_array 6 "object\.npy: dtype '\|O' is not a plain numeric type" import npy "$IN/object.npy"
refused different_rows 6 "f4\.npy has 50 rows, .*short\.npy has 49" import npy "$IN/f4.npy" "$IN/short.npy"
refused name_twice 6 "column name 'x' appears twice" import npy "x=$IN/f4.npy" "x=$IN/f8.npy"
refused name_twice_npz 6 "column name 'img' appears twice" import npy "$IN/stored.npz" "$IN/deflated.npz"
refused truncated_data 6 "truncated\.npy ends inside its data: the file is truncated" import npy "$IN/truncated.npy"
refused truncated_header 6 "truncated_header\.npy ends inside its header" import npy "$IN/truncated_header.npy"
refused truncated_npz 6 "truncated\.npz" import npy "$IN/truncated.npz"
refused uint64 6 "uint64\.npy: dtype .*u8.* is not stored" import npy "$IN/uint64.npy"
refused complex 6 "complex\.npy: dtype .*c8.* is not stored" import npy "$IN/complex.npy"
refused zero_d 6 "scalar\.npy holds a 0-d array" import npy "$IN/scalar.npy"
refused records 6 "records\.npy" import npy "$IN/records.npy"
refused npy_strings 6 "strings\.npy: dtype .*U2.* is not stored" import npy "$IN/strings.npy"
refused not_numpy 6 "not_numpy\.npy is not a \.npy array" import npy "$IN/not_numpy.npy"
refused no_columns 6 "no_columns\.npy" import npy "$IN/no_columns.npy"

# Malformed .npy headers: one line naming the file and what is wrong, exit 6; nothing is allocated
# for what a header claims before the file is known to hold it.
refused npy_huge_dim 6 "huge_dim\.npy: its \.npy header is malformed \(shape .*'99999999999999999999999' is not a dimension" \
  import npy "$IN/huge_dim.npy"
refused npy_negative_dim 6 "negative_dim\.npy: its \.npy header is malformed \(shape \(-1, 3\): '-1' is not a dimension" \
  import npy "$IN/negative_dim.npy"
refused npy_overflow 6 "overflow\.npy: its \.npy header is malformed \(its shape holds more than 2\^64 bytes\)" \
  import npy "$IN/overflow.npy"
refused npy_claims_more 6 "claims_more\.npy ends inside its data: the file is truncated \(its header promises 24000000000000 bytes of data, 48 follow\)" \
  import npy "$IN/claims_more.npy"
refused npy_huge_row 6 "huge_row\.npy ends inside its data: the file is truncated \(its header promises 100000000000 bytes" \
  import npy "$IN/huge_row.npy"
refused npy_shape_text 6 "shape_text\.npy: its \.npy header is malformed \(shape 'abc' is not a tuple\)" \
  import npy "$IN/shape_text.npy"
refused npy_many_dims 6 "many_dims\.npy: its \.npy header is malformed \(shape .* has 33 dimensions; HDF5 holds at most 32\)" \
  import npy "$IN/many_dims.npy"
refused npy_no_item_size 6 "no_item_size\.npy: dtype '<f' is not a plain numeric type" import npy "$IN/no_item_size.npy"
refused npy_descr_tuple 6 "descr_tuple\.npy: its \.npy header is malformed \(descr \('<f8', 3\) is not a string\)" \
  import npy "$IN/descr_tuple.npy"
refused npy_bad_version 6 "bad_version\.npy: its \.npy header is malformed \(format version 9\.0;" \
  import npy "$IN/bad_version.npy"
refused npy_huge_header 6 "huge_header\.npy: its \.npy header is malformed \(a header of 4294967280 bytes" \
  import npy "$IN/huge_header.npy"
refused npz_huge_dim 6 "crafted\.npz\[huge\]: its \.npy header is malformed \(shape" import npy "$IN/crafted.npz"
refused npy_label 6 "--label nope is not one of the arrays" import npy "$IN/x.npy" "$IN/y.npy" --label nope
refused split_files_columns 6 "split 'train' has arrays x, y, split 'test' has w, x" \
  import npy "$IN/part_train.npz" "$IN/part_other.npz" --split train=part_train.npz,test=part_other.npz
refused npy_empty_split 6 "split 'test' would get none of the 50 rows" import npy "$IN/f4.npy" --split train=0.99,test=0.01

refused h5_missing_path 6 "source\.h5 has no dataset /group/nope" import hdf5 "$IN/source.h5" --columns /rowid,/group/nope
refused h5_missing_group 6 "source\.h5 has no dataset /nope/x" import hdf5 "$IN/source.h5" --columns /nope/x
refused h5_fixed_strings 6 "/bad/fixed_strings: only numeric columns" import hdf5 "$IN/source.h5" --columns /bad/fixed_strings
refused h5_vlen_strings 6 "/bad/vlen_strings: only numeric columns" import hdf5 "$IN/source.h5" --columns /bad/vlen_strings
refused h5_compound 6 "/bad/compound: only numeric columns" import hdf5 "$IN/source.h5" --columns /bad/compound
refused h5_u64 6 "/bad/u64: 64-bit unsigned integers are not stored" import hdf5 "$IN/source.h5" --columns /bad/u64
refused h5_rows 6 "/bad/short has 199999" import hdf5 "$IN/source.h5" --columns /rowid,/bad/short
refused h5_name_twice 6 "column name 'rowid' appears twice" import hdf5 "$IN/source.h5" --columns /rowid,rowid=/half
refused h5_scalar 6 "/bad/scalar has no rows" import hdf5 "$IN/source.h5" --columns /bad/scalar
refused h5_group 6 "source\.h5.*/group/sub" import hdf5 "$IN/source.h5" --columns /group/sub
refused h5_not_hdf5 6 "cannot open .*not_numpy\.npy as HDF5" import hdf5 "$IN/not_numpy.npy" --columns /x
refused h5_label 6 "'nope' is not one of the imported columns" import hdf5 "$IN/source.h5" --columns /rowid --label nope
refused h5_empty_item 6 "--columns has an empty item" import hdf5 "$IN/source.h5" --columns /rowid,

# `data info` on an HDF5 file that is no dataset: exit 6, one line
rc=0
"$TRAINRT" data info "$IN/source.h5" >"$WORK/info_bad.out" 2>"$WORK/info_bad.err" || rc=$?
[ "$rc" -eq 6 ] && [ "$(nlines "$WORK/info_bad.err")" -eq 1 ] && pass "data info source.h5 (no dataset): exit 6, one line" ||
  fail "data info source.h5: exit $rc, stderr: $(cat "$WORK/info_bad.err")"

# A failure leaves an existing output as it was and no temporary file: before the output is begun
# (an .npy whose data end early: its size is checked against its header first) and after (deflated
# data damaged in the middle of an .npz member, found only while the rows are copied).
if import_ok keep npy "$IN/f4.npy" --out "$WORK/keep.h5"; then
  before=$(sha256sum <"$WORK/keep.h5")
  for bad in "truncated.npy:truncated\.npy ends inside its data" "corrupt.npz:corrupt\.npz\[a\]: cannot read its data"; do
    file=${bad%%:*} pattern=${bad#*:} rc=0
    "$TRAINRT" data import npy "$IN/$file" --out "$WORK/keep.h5" >/dev/null 2>"$WORK/keep.err" || rc=$?
    if [ "$rc" -eq 6 ] && [ "$(nlines "$WORK/keep.err")" -eq 1 ] && grep -q "$pattern" "$WORK/keep.err" &&
      [ "$(sha256sum <"$WORK/keep.h5")" = "$before" ] && [ -z "$(leftovers)" ]; then
      pass "$file over an existing output: exit 6 ($(cat "$WORK/keep.err")), output unchanged, no temporary file"
    else
      fail "$file over keep.h5: exit $rc ($(cat "$WORK/keep.err")), output $(
        [ "$(sha256sum <"$WORK/keep.h5")" = "$before" ] && echo unchanged || echo changed), leftovers: $(leftovers)"
    fi
  done
fi

finish
