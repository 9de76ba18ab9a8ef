#!/usr/bin/env bash
# `trainrt data import csv` on real CSV files (scikit-learn's, from Debian's python3-sklearn),
# checked value for value against numpy.loadtxt with h5py: splits by fraction (sizes, file order,
# seeds) and by file, labels (int with num_classes, float, from a --label-file), headers, .gz,
# --columns, --dtype f64, other delimiters; `trainrt data info`; and bad input: exit 6, one
# stderr line naming FILE:LINE[:COLUMN], nothing written, an existing output left as it was.
source "$(dirname "$0")/lib.sh"

SK=/usr/lib/python3/dist-packages/sklearn/datasets/data
for file in breast_cancer.csv iris.csv wine_data.csv diabetes_data_raw.csv.gz diabetes_target.csv.gz \
  boston_house_prices.csv; do
  [ -f "$SK/$file" ] || { echo "FAIL: $SK/$file missing (install Debian's python3-sklearn)" >&2; exit 1; }
done
IN=$WORK/in
# scikit-learn's own CSVs: a first line "ROWS,FEATURES,class names..." that is no header, the
# class (an integer) last.
SKLEARN=(--skip-rows 1 --no-header --label -1)

# --- breast_cancer.csv: 569 rows, split 0.8/0.2 by seed --------------------------------------
# shellcheck disable=SC2054  # the commas are inside one argument
BC=(csv "$SK/breast_cancer.csv" "${SKLEARN[@]}" --split train=0.8,test=0.2)
if import_ok bc3 "${BC[@]}" --seed 3 --out "$WORK/bc3.h5" &&
  import_ok bc3_again "${BC[@]}" --seed 3 --out "$WORK/bc3_again.h5" &&
  import_ok bc4 "${BC[@]}" --seed 4 --out "$WORK/bc4.h5"; then
  # floor(0.8 * 569) = 455, floor(0.2 * 569) = 113, the one row left over goes to the first split.
  grep -q "train 456, test 113" "$WORK/bc3.out" && pass "breast_cancer: summary says train 456, test 113" ||
    fail "breast_cancer: summary '$(cat "$WORK/bc3.out")' lacks 'train 456, test 113'"
  pycheck "breast_cancer split by --seed: every row once, file order kept, same seed same split" \
    "$SK/breast_cancer.csv" "$WORK/bc3.h5" "$WORK/bc3_again.h5" "$WORK/bc4.h5" <<'EOF'
from tcheck import *
src, path, again, other = sys.argv[1:]
ref = np.loadtxt(src, skiprows=1, delimiter=",")
N = len(ref)
X, y = ref[:, :30].astype(np.float32), ref[:, 30].astype(np.int64)
check(N == 569 and ref.shape[1] == 31, f"loadtxt: shape {ref.shape}")
counts = expected_counts([0.8, 0.2], N)
check(counts == [456, 113], f"the rule gives {counts}")
index = {}
for i in range(N):
    index.setdefault((X[i].tobytes(), int(y[i])), []).append(i)
check(all(len(v) == 1 for v in index.values()), "breast_cancer.csv has duplicate rows (the check needs none)")

def assignment(path):
    """The file row of each split row, per split."""
    out = {}
    with h5py.File(path, "r") as f:
        check(sorted(f.keys()) == ["test", "train"], f"{path}: splits {sorted(f.keys())}")
        for split in ("train", "test"):
            F, L = f[split]["features"][()], f[split]["label"][()]
            rows = [index.get((F[r].tobytes(), int(L[r])), [None])[0] for r in range(len(F))]
            check(None not in rows, f"{path}:/{split}: {rows.count(None)} rows are in no row of the file")
            out[split] = [r for r in rows if r is not None]
    return out

with h5py.File(path, "r") as f:
    check_root(f, "bc3", "features", "label", "breast_cancer.csv")
a = assignment(path)
for split, count in zip(("train", "test"), counts):
    rows = a[split]
    check(len(rows) == count, f"{split}: {len(rows)} rows, expected {count}")
    check(all(p < q for p, q in zip(rows, rows[1:])), f"{split}: rows not in file order")
    check_table(path, X, y, [f"c{i}" for i in range(30)], "c30", np.int64, 2, split=split, rows=rows)
check(sorted(a["train"] + a["test"]) == list(range(N)), "train + test are not the file's rows, each once")
# The same as a multiset, directly: stored (features, label) rows == the file's rows.
with h5py.File(path, "r") as f:
    got = np.concatenate([np.column_stack([f[s]["features"][()].astype(np.float64), f[s]["label"][()]])
                          for s in ("train", "test")])
want = np.column_stack([X.astype(np.float64), y])
check(got.shape == want.shape and np.array_equal(got[np.lexsort(got.T[::-1])], want[np.lexsort(want.T[::-1])]),
      "train + test differ from np.loadtxt as a multiset of rows")
check(assignment(again) == a, "the same --seed gave another split")
with h5py.File(path, "r") as f, h5py.File(again, "r") as g:
    for s in ("train", "test"):
        for c in ("features", "label"):
            check(np.array_equal(f[s][c][()], g[s][c][()]), f"same seed: /{s}/{c} differs")
b = assignment(other)
check([len(b["train"]), len(b["test"])] == counts, f"--seed 4: sizes {len(b['train'])}/{len(b['test'])}")
check(b["train"] != a["train"], "--seed 4 gave the same split as --seed 3")
check(sorted(b["train"] + b["test"]) == list(range(N)), "--seed 4: not every row once")
print(f"train {len(a['train'])}, test {len(a['test'])}")
EOF
fi

# --- iris, wine: integer class labels -----------------------------------------------------------
for set in iris:150:4 wine_data:178:13; do
  IFS=: read -r stem rows features <<<"$set"
  if import_ok "$stem" csv "$SK/$stem.csv" "${SKLEARN[@]}" --out "$WORK/$stem.h5"; then
    pycheck "$stem.csv: $rows rows, $features features, label i64 with num_classes 3" \
      "$SK/$stem.csv" "$WORK/$stem.h5" "$rows" "$features" <<'EOF'
from tcheck import *
src, path, rows, features = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
ref = np.loadtxt(src, skiprows=1, delimiter=",")
check(ref.shape == (rows, features + 1), f"loadtxt: {ref.shape}")
with h5py.File(path, "r") as f:
    check(list(f.keys()) == ["train"], f"splits {list(f.keys())}")
    check_root(f, os.path.basename(path)[:-3], "features", "label")
check_table(path, ref[:, :-1], ref[:, -1], [f"c{i}" for i in range(features)], f"c{features}", np.int64, 3)
EOF
  fi
done

# --label-type float; negative integer labels: i64 without num_classes
sed 's/,0$/,-1/' "$SK/iris.csv" >"$IN/iris_negative.csv"
if import_ok iris_float csv "$SK/iris.csv" "${SKLEARN[@]}" --label-type float --out "$WORK/iris_float.h5" &&
  import_ok iris_negative csv "$IN/iris_negative.csv" "${SKLEARN[@]}" --out "$WORK/iris_negative.h5"; then
  pycheck "iris: --label-type float gives f64 labels; labels -1, 1, 2 give i64 without num_classes" \
    "$SK/iris.csv" "$WORK/iris_float.h5" "$WORK/iris_negative.h5" <<'EOF'
from tcheck import *
src, floats, negative = sys.argv[1:]
ref = np.loadtxt(src, skiprows=1, delimiter=",")
names = ["c0", "c1", "c2", "c3"]
check_table(floats, ref[:, :4], ref[:, 4], names, "c4", np.float64, None)
y = np.where(ref[:, 4] == 0, -1, ref[:, 4])
check(int((y == -1).sum()) == 50, "iris_negative.csv: not 50 labels -1")
check_table(negative, ref[:, :4], y, names, "c4", np.int64, None)
EOF
fi
refused label_type_int 6 "--label-type int, but some labels are not written as integers" \
  import csv "$SK/boston_house_prices.csv" --skip-rows 1 --label MEDV --label-type int

# --- diabetes: space-delimited .gz, float targets from --label-file; --dtype f64 --------------
DIAB=(csv "$SK/diabetes_data_raw.csv.gz" --delimiter space --no-header --label-file "$SK/diabetes_target.csv.gz")
if import_ok diabetes "${DIAB[@]}" --out "$WORK/diabetes.h5" &&
  import_ok diabetes64 "${DIAB[@]}" --dtype f64 --name diab --out "$WORK/diabetes64.h5"; then
  pycheck "diabetes: 442 x 10 features (f32, and f64 exactly), label f64 from --label-file" \
    "$SK/diabetes_data_raw.csv.gz" "$SK/diabetes_target.csv.gz" "$WORK/diabetes.h5" "$WORK/diabetes64.h5" <<'EOF'
from tcheck import *
data, target, path, path64 = sys.argv[1:]
X, y = np.loadtxt(data), np.loadtxt(target)
check(X.shape == (442, 10) and y.shape == (442,), f"loadtxt: {X.shape} {y.shape}")
names = [f"c{i}" for i in range(10)]
check_table(path, X, y, names, "label", np.float64, None)
check_table(path64, X, y, names, "label", np.float64, None, feature_dtype=np.float64)
with h5py.File(path64, "r") as f:
    check_root(f, "diab", "features", "label", "diabetes_data_raw.csv.gz")
EOF
fi

# --- boston_house_prices.csv: a real header after one skipped line, label by name -----------------
BOSTON=(csv "$SK/boston_house_prices.csv" --skip-rows 1)
if import_ok boston "${BOSTON[@]}" --label MEDV --out "$WORK/boston.h5" &&
  import_ok boston_cols "${BOSTON[@]}" --label MEDV --columns LSTAT,RM,0 --out "$WORK/boston_cols.h5" &&
  import_ok boston_nolabel "${BOSTON[@]}" --out "$WORK/boston_nolabel.h5"; then
  pycheck "boston: header names, label MEDV (f64), --columns LSTAT,RM,0 in that order, no --label" \
    "$SK/boston_house_prices.csv" "$WORK/boston.h5" "$WORK/boston_cols.h5" "$WORK/boston_nolabel.h5" <<'EOF'
from tcheck import *
import csv
src, path, cols, nolabel = sys.argv[1:]
with open(src) as f:
    lines = f.read().splitlines()
header = next(csv.reader([lines[1]]))
check(header[-1] == "MEDV" and len(header) == 14, f"header {header}")
ref = np.loadtxt(src, skiprows=2, delimiter=",")
check(ref.shape == (506, 14), f"loadtxt: {ref.shape}")
check_table(path, ref[:, :13], ref[:, 13], header[:13], "MEDV", np.float64, None)
check_table(cols, ref[:, [12, 5, 0]], ref[:, 13], ["LSTAT", "RM", "CRIM"], "MEDV", np.float64, None)
check_table(nolabel, ref, None, header, None, None, None)
with h5py.File(nolabel, "r") as f:
    check_root(f, "boston_nolabel", "features", None)
EOF
fi

# --- the same rows through .gz, tab-separated CRLF with quotes, and two files -------------------
gzip -c "$SK/iris.csv" >"$IN/iris.csv.gz"
"$PY" - "$SK/iris.csv" "$IN/iris.tsv" <<'EOF'
import sys
lines = open(sys.argv[1]).read().splitlines()
with open(sys.argv[2], "w", newline="") as out:
    for n, line in enumerate(lines):
        cells = line.split(",")
        if n % 3 == 0:
            cells = [f'"{c}"' for c in cells]
        out.write("\t".join(cells) + ("\r\n" if n % 2 else "\n"))
    out.write("\n\n")  # blank lines at the end are no rows
EOF
{ head -1 "$SK/iris.csv"; sed -n 2,101p "$SK/iris.csv"; } >"$IN/iris_a.csv"
{ head -1 "$SK/iris.csv"; sed -n 102,151p "$SK/iris.csv"; } >"$IN/iris_b.csv"
iris_check() {  # iris_check WHAT ARGS...: the Python below on iris.csv and ARGS
  pycheck "$1" "$SK/iris.csv" "${@:2}" <<'EOF'
from tcheck import *
src, kind, path = sys.argv[1:]
ref = np.loadtxt(src, skiprows=1, delimiter=",")
X, y, names = ref[:, :4], ref[:, 4], ["c0", "c1", "c2", "c3"]
if kind == "whole":
    check_table(path, X, y, names, "c4", np.int64, 3)
else:  # by files: iris_a.csv -> train, iris_b.csv -> test, in file order
    with h5py.File(path, "r") as f:
        check(sorted(f.keys()) == ["test", "train"], f"{path}: splits {sorted(f.keys())}")
    # the label's range is the whole data's: test holds class 2 only, train classes 0 and 1
    check_table(path, X, y, names, "c4", np.int64, 3, split="train", rows=slice(0, 100))
    check_table(path, X, y, names, "c4", np.int64, 3, split="test", rows=slice(100, 150))
EOF
}
import_ok iris_gz csv "$IN/iris.csv.gz" "${SKLEARN[@]}" --out "$WORK/iris_gz.h5" &&
  iris_check "iris.csv.gz: the same rows as iris.csv" whole "$WORK/iris_gz.h5"
import_ok iris_tsv csv "$IN/iris.tsv" "${SKLEARN[@]}" --delimiter tab --out "$WORK/iris_tsv.h5" &&
  iris_check "iris as tab-separated, CRLF, some cells quoted: the same rows" whole "$WORK/iris_tsv.h5"
import_ok iris_two csv "$IN/iris_a.csv" "$IN/iris_b.csv" "${SKLEARN[@]}" --out "$WORK/iris_two.h5" &&
  iris_check "two files in one split: their rows in order" whole "$WORK/iris_two.h5"
if import_ok iris_files csv "$IN/iris_a.csv" "$IN/iris_b.csv" "${SKLEARN[@]}" \
  --split train=iris_a.csv,test=iris_b.csv --out "$WORK/iris_files.h5"; then
  grep -q "train 100, test 50" "$WORK/iris_files.out" && pass "iris by files: summary says train 100, test 50" ||
    fail "iris by files: summary '$(cat "$WORK/iris_files.out")' lacks 'train 100, test 50'"
  iris_check "--split train=iris_a.csv,test=iris_b.csv: each file's rows in its split" files "$WORK/iris_files.h5"
fi

# --- trainrt data info ------------------------------------------------------------------------------
if "$TRAINRT" data info "$WORK/bc3.h5" >"$WORK/info.out" 2>"$WORK/info.err"; then
  missing=()
  for want in "format version 2" "features: features" "label: +label" "split train: 456 samples" \
    "split test: 113 samples" "features +f32 +\[456, 30\]" "label +i64 +\[456\]" "features +f32 +\[113, 30\]" \
    "label +i64 +\[113\]"; do
    grep -qE -- "$want" "$WORK/info.out" || missing+=("$want")
  done
  [ "${#missing[@]}" -eq 0 ] && pass "data info bc3.h5: splits, columns, types, shapes" ||
    fail "data info bc3.h5 lacks /${missing[*]}/: $(cat "$WORK/info.out")"
else
  fail "data info bc3.h5 exited non-zero: $(cat "$WORK/info.err")"
fi
if "$TRAINRT" data info "$WORK/boston_cols.h5" >"$WORK/info2.out" 2>&1 &&
  grep -qE "features +f32 +\[506, 3\]" "$WORK/info2.out" && grep -qE "label +f64 +\[506\]" "$WORK/info2.out"; then
  pass "data info boston_cols.h5: features f32 [506, 3], label f64 [506]"
else
  fail "data info boston_cols.h5: $(cat "$WORK/info2.out")"
fi

# --- bad input: exit 6, one line, nothing written ------------------------------------------------
IRIS=$SK/iris.csv
BOSTON_CSV=$SK/boston_house_prices.csv
sed '5s/^\([^,]*,[^,]*,\)[^,]*/\1abc/' "$IRIS" >"$IN/bad_cell.csv"  # line 5, column 3
sed '9s/^[^,]*//' "$IRIS" >"$IN/empty_cell.csv"                      # line 9, column 1
sed '4s/,[^,]*$/,setosa/' "$IRIS" >"$IN/bad_label.csv"               # line 4, column 5 (the label)
sed '7s/,[^,]*$//' "$IRIS" >"$IN/ragged.csv"                         # line 7: 4 fields
sed '8s/$/,1/' "$IRIS" >"$IN/long_row.csv"                           # line 8: 6 fields
: >"$IN/empty.csv"
head -2 "$BOSTON_CSV" >"$IN/header_only.csv"
sed '2s/"ZN"/"CRIM"/' "$BOSTON_CSV" >"$IN/dup_header.csv"
sed '2s/"LSTAT"/"LSTAT2"/' "$BOSTON_CSV" >"$IN/other_header.csv"
sed '3s/^/"/' "$BOSTON_CSV" >"$IN/unclosed.csv"                    # line 3: "0.00632,18,...
gzip -dc "$SK/diabetes_target.csv.gz" | head -400 >"$IN/short_target.csv"
sed '10s/,[^,]*$//' "$BOSTON_CSV" >"$IN/ragged_header.csv"          # line 10: 13 fields, the header 14
tr , '\t' <"$IRIS" | sed '6s/\t[^\t]*\t/\t\t/' >"$IN/empty_cell.tsv"  # line 6, column 2
grep -q abc "$IN/bad_cell.csv" && [ "$(sed -n 7p "$IN/ragged.csv" | tr -cd , | wc -c)" -eq 3 ] ||
  { echo "FAIL: the broken CSVs were not made as meant" >&2; exit 1; }

refused bad_cell 6 "bad_cell\.csv:5:3: 'abc' \(column 'c2'\) is not a number" \
  import csv "$IN/bad_cell.csv" "${SKLEARN[@]}"
refused empty_cell 6 "empty_cell\.csv:9:1: an empty cell" import csv "$IN/empty_cell.csv" "${SKLEARN[@]}"
refused bad_label_cell 6 "bad_label\.csv:4:5: 'setosa'" import csv "$IN/bad_label.csv" "${SKLEARN[@]}"
refused empty_cell_tab 6 "empty_cell\.tsv:6:2: an empty cell" \
  import csv "$IN/empty_cell.tsv" "${SKLEARN[@]}" --delimiter tab
refused ragged_row 6 "ragged\.csv:7: 4 fields, expected 5 \(one per column\)" \
  import csv "$IN/ragged.csv" "${SKLEARN[@]}"
refused long_row 6 "long_row\.csv:8: 6 fields, expected 5 \(one per column\)" \
  import csv "$IN/long_row.csv" "${SKLEARN[@]}"
refused ragged_header 6 "ragged_header\.csv:10: 13 fields, expected 14 \(one per column\)" \
  import csv "$IN/ragged_header.csv" --skip-rows 1 --label MEDV
refused empty_file 6 "empty\.csv: no header line" import csv "$IN/empty.csv"
refused empty_file_skip 6 "empty\.csv: .*fewer than --skip-rows 1" import csv "$IN/empty.csv" "${SKLEARN[@]}"
refused header_only 6 "header_only\.csv: no data rows" import csv "$IN/header_only.csv" --skip-rows 1
refused duplicate_column 6 "dup_header\.csv:2: column name 'CRIM' appears twice" \
  import csv "$IN/dup_header.csv" --skip-rows 1 --label MEDV
refused different_columns 6 "other_header\.csv: its columns .* differ from" \
  import csv "$BOSTON_CSV" "$IN/other_header.csv" --skip-rows 1 --label MEDV
refused unclosed_quote 6 "unclosed\.csv:3: a quoted field is not closed" \
  import csv "$IN/unclosed.csv" --skip-rows 1 --label MEDV
refused fractions_sum 6 "fractions add up to 0\.75, not 1" import csv "$IRIS" "${SKLEARN[@]}" --split train=0.5,test=0.25
refused empty_split 6 "split 'test' would get none of the 150 rows" \
  import csv "$IRIS" "${SKLEARN[@]}" --split train=0.999,test=0.001
refused unknown_label 6 "--label 'PRICE' is neither a column name nor an index" \
  import csv "$BOSTON_CSV" --skip-rows 1 --label PRICE
refused label_index_range 6 "--label '5' is neither" import csv "$IRIS" --skip-rows 1 --no-header --label 5
refused label_and_label_file 6 "give --label or --label-file, not both" \
  import csv "$IRIS" "${SKLEARN[@]}" --label-file "$IN/short_target.csv"
refused columns_has_label 6 "--columns names the label column" \
  import csv "$BOSTON_CSV" --skip-rows 1 --label MEDV --columns RM,MEDV
refused label_file_rows 6 "short_target\.csv has 400 rows, the data has 442" \
  import csv "$SK/diabetes_data_raw.csv.gz" --delimiter space --no-header --label-file "$IN/short_target.csv"
refused split_unknown_file 6 "--split names nope\.csv, which is not one of the input files" \
  import csv "$IN/iris_a.csv" "$IN/iris_b.csv" "${SKLEARN[@]}" --split train=iris_a.csv,test=nope.csv
refused missing_file 6 "cannot open .*no_such\.csv" import csv "$IN/no_such.csv"
refused columns_twice 6 "--columns names column 'RM' twice \(as 'RM'\)" \
  import csv "$BOSTON_CSV" --skip-rows 1 --label MEDV --columns RM,LSTAT,RM
refused columns_twice_index 6 "--columns names column 'RM' twice \(as '5'\)" \
  import csv "$BOSTON_CSV" --skip-rows 1 --label MEDV --columns RM,5

# Missing and infinite values: NumPy's spellings of NaN and infinity (any case, signed), which
# std::from_chars reads as numbers, are refused as cells, like text; so are numbers float64 cannot
# hold, and float32 features beyond float32's range (--dtype f64 takes them).
sed '6s/^[^,]*/nan/' "$IRIS" >"$IN/nan.csv"                               # line 6, column 1
sed '7s/^\([^,]*,\)[^,]*/\1-Infinity/' "$IRIS" >"$IN/neg_infinity.csv"    # line 7, column 2
sed '8s/^\([^,]*,[^,]*,[^,]*,\)[^,]*/\1+INF/' "$IRIS" >"$IN/plus_inf.csv" # line 8, column 4
sed '9s/,[^,]*$/,NaN/' "$IRIS" >"$IN/nan_label.csv"                       # line 9, column 5 (the label)
sed '10s/^[^,]*/1e999/' "$IRIS" >"$IN/huge.csv"                           # line 10, column 1
sed '11s/^[^,]*/-1e39/' "$IRIS" >"$IN/beyond_f32.csv"                     # line 11, column 1
printf "skipped\n1.5\nnAn\n2\n" >"$IN/nan_target.csv"                     # line 3 of a --label-file
head -4 "$IRIS" | sed '2,$s/,[^,]*$//' >"$IN/iris3.csv"                   # 3 rows, no label column
grep -q '^nan,' "$IN/nan.csv" && grep -q ',-Infinity,' "$IN/neg_infinity.csv" && grep -q ',+INF,' "$IN/plus_inf.csv" &&
  grep -q ',NaN$' "$IN/nan_label.csv" && grep -q '^1e999,' "$IN/huge.csv" && grep -q '^-1e39,' "$IN/beyond_f32.csv" ||
  { echo "FAIL: the CSVs with non-finite cells were not made as meant" >&2; exit 1; }
FINITE="is not a finite number; fill or drop missing and infinite values before importing"
refused nan_cell 6 "nan\.csv:6:1: 'nan' \(column 'c0'\) $FINITE" import csv "$IN/nan.csv" "${SKLEARN[@]}"
refused neg_infinity_cell 6 "neg_infinity\.csv:7:2: '-Infinity' \(column 'c1'\) $FINITE" \
  import csv "$IN/neg_infinity.csv" "${SKLEARN[@]}"
refused plus_inf_cell 6 "plus_inf\.csv:8:4: '\+INF' \(column 'c3'\) $FINITE" \
  import csv "$IN/plus_inf.csv" "${SKLEARN[@]}"
refused nan_label_cell 6 "nan_label\.csv:9:5: 'NaN' \(column 'c4'\) $FINITE" \
  import csv "$IN/nan_label.csv" "${SKLEARN[@]}"
refused nan_label_file 6 "nan_target\.csv:3:1: 'nAn' \(column 'c0'\) $FINITE" \
  import csv "$IN/iris3.csv" --skip-rows 1 --no-header --label-file "$IN/nan_target.csv"
refused huge_cell 6 "huge\.csv:10:1: '1e999' \(column 'c0'\) is a number float64 cannot hold" \
  import csv "$IN/huge.csv" "${SKLEARN[@]}"
refused beyond_f32_cell 6 "beyond_f32\.csv:11:1: '-1e39' \(column 'c0'\) is beyond float32's range .*--dtype f64" \
  import csv "$IN/beyond_f32.csv" "${SKLEARN[@]}"
if import_ok beyond_f32_f64 csv "$IN/beyond_f32.csv" "${SKLEARN[@]}" --dtype f64 --out "$WORK/beyond_f32.h5"; then
  pycheck "-1e39 in a feature, imported with --dtype f64: stored exactly" "$WORK/beyond_f32.h5" <<'EOF'
from tcheck import *
with h5py.File(sys.argv[1], "r") as f:
    x = f["train/features"][()]
    check(x.dtype == np.float64 and x[9, 0] == -1e39 and np.all(np.isfinite(x)), f"row 10: {x[9]}")
EOF
fi

# Usage errors exit 2 (and write nothing either).
rc=0
"$TRAINRT" data import csv "$IRIS" "${SKLEARN[@]}" >"$WORK/noout.out" 2>"$WORK/noout.err" || rc=$?
[ "$rc" -eq 2 ] && [ "$(nlines "$WORK/noout.err")" -eq 1 ] && grep -q -- "--out DATA.h5 is required" "$WORK/noout.err" &&
  pass "no --out: exit 2, one line" ||
  fail "no --out: exit $rc (expected 2), $(nlines "$WORK/noout.err") stderr lines (expected 1): $(cat "$WORK/noout.err")"

# A failed import into an existing dataset leaves it as it was.
if import_ok keep csv "$IRIS" "${SKLEARN[@]}" --out "$WORK/keep.h5"; then
  before=$(sha256sum <"$WORK/keep.h5")
  for bad in bad_cell.csv ragged.csv unclosed.csv; do
    rc=0
    "$TRAINRT" data import csv "$IN/$bad" "${SKLEARN[@]}" --out "$WORK/keep.h5" >/dev/null 2>"$WORK/keep.err" || rc=$?
    if [ "$rc" -eq 6 ] && [ "$(sha256sum <"$WORK/keep.h5")" = "$before" ] && [ -z "$(leftovers)" ]; then
      pass "failed import of $bad over an existing output: exit 6, output unchanged"
    else
      fail "failed import of $bad over keep.h5: exit $rc, checksum $(sha256sum <"$WORK/keep.h5" | cut -c1-12) vs" \
        "${before:0:12}, leftovers: $(leftovers)"
    fi
  done
fi

finish
