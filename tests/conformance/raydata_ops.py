"""Ray Data's dataset operations as Ray's documentation shows them, written with Ray's names: each
prints what it gives, one JSON object, under the key of the operation. Run as written under Ray
(the reference, stored in tests/conformance/raydata_ops.json) and after the port's sed under
trainrt (tests/python/test_python_raydata_ops.sh); the two outputs must be equal, key for key.

    python3 raydata_ops.py OUT_JSON      # under Ray, or under trainrt after the sed
Order: Ray keeps the rows' order when DataContext's preserve_order is set (the determinism section
of Ray's guide), as this script sets; trainrt always keeps it. A seeded random_shuffle and a union are
compared as the rows they hold (Ray's permutation is its own; its union order, below).
"""
import json
import os
import sys
import tempfile

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import ray


def plain(value):
    """JSON-able: numpy and pandas values as Python's."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float):
        return round(value, 9)
    return value


def rows(dataset):
    return plain(dataset.take_all())


def files(directory):
    """The user's files: a CSV, a Parquet file, a JSON Lines file and a .npy array."""
    frame = pd.DataFrame({"a": [1, 2, 3, 4], "b": [0.5, 1.5, 2.5, 3.5]})
    frame.to_csv(os.path.join(directory, "t.csv"), index=False)
    pq.write_table(pa.Table.from_pandas(frame), os.path.join(directory, "t.parquet"))
    frame.to_json(os.path.join(directory, "t.jsonl"), orient="records", lines=True)
    np.save(os.path.join(directory, "t.npy"), np.arange(6, dtype=np.int64).reshape(3, 2))


def operations(directory):
    items = ray.data.from_items([{"x": i, "y": 2 * i} for i in range(10)])
    out = {
        "from_items": rows(items),
        "from_items_values": rows(ray.data.from_items([1, 2, 3])),
        "range": rows(ray.data.range(5)),
        "range_tensor": rows(ray.data.range_tensor(3, shape=(2,))),
        "from_numpy": rows(ray.data.from_numpy(np.arange(6).reshape(3, 2))),
        "from_pandas": rows(ray.data.from_pandas(pd.DataFrame({"p": [1.0, 2.0], "q": [3, 4]}))),
        "map_batches": rows(items.map_batches(lambda b: {"x": b["x"], "z": b["x"] + b["y"]})),
        "map_batches_pandas": rows(items.map_batches(lambda df: df.assign(w=df["x"] * 10), batch_format="pandas")),
        "map": rows(items.map(lambda r: {"x": r["x"], "sq": r["x"] ** 2})),
        "flat_map": rows(ray.data.range(3).flat_map(lambda r: [r, {"id": r["id"] + 100}])),
        "filter": rows(items.filter(lambda r: r["x"] % 3 == 0)),
        "add_column": rows(items.add_column("s", lambda df: df["x"] + df["y"])),
        "drop_columns": rows(items.drop_columns(["y"])),
        "select_columns": rows(items.select_columns(["y"])),
        "rename_columns": rows(items.rename_columns({"x": "u"})),
        "limit": rows(items.limit(3)),
        "sort": rows(items.sort("x", descending=True).limit(4)),
        # Ray's documentation says union keeps each dataset's order and theirs one after the other;
        # Ray 2.60 interleaves single-row blocks even with preserve_order: compared as the rows held
        "union": sorted(r["id"] for r in rows(ray.data.range(2).union(ray.data.range(3)))),
        "train_test_split": [rows(part) for part in items.train_test_split(test_size=0.3)],
        "train_test_split_count": [part.count() for part in items.train_test_split(test_size=3)],
        "split_at_indices": [rows(part) for part in items.split_at_indices([3, 7])],
        "split_proportionately": [part.count() for part in items.split_proportionately([0.2, 0.5])],
        "shuffled_rows": sorted(r["x"] for r in rows(items.random_shuffle(seed=7))),
        "count": items.count(),
        "columns": items.columns(),
        "schema_names": items.schema().names,
        "aggregates": plain([items.sum("x"), items.min("y"), items.max("y"), items.mean("x")]),
        "unique": plain(sorted(ray.data.from_items([{"k": v} for v in [3, 1, 3, 2]]).unique("k"))),
        "take": plain(items.take(2)),
        "take_batch": plain(items.take_batch(3)),
        "iter_batches": [len(b["x"]) for b in items.iter_batches(batch_size=4)],
        "to_pandas": plain(items.to_pandas().to_dict("list")),
        "read_csv": rows(ray.data.read_csv(os.path.join(directory, "t.csv"))),
        "read_parquet": rows(ray.data.read_parquet(os.path.join(directory, "t.parquet"))),
        "read_json": rows(ray.data.read_json(os.path.join(directory, "t.jsonl"))),
        "read_numpy": rows(ray.data.read_numpy(os.path.join(directory, "t.npy"))),
        "materialize": ray.data.range(4).map(lambda r: {"id": r["id"] * 3}).materialize().count(),
    }
    return out


def main():
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    with tempfile.TemporaryDirectory() as directory:
        files(directory)
        out = operations(directory)
    with open(sys.argv[1], "w") as file:
        json.dump(out, file, indent=1, sort_keys=True)
        file.write("\n")


if __name__ == "__main__":
    main()
