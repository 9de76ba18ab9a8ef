"""Ray Data's constructors (trainrt.data.from_items, read_csv, ...): each returns a lazy dataset
whose rows are read when the plan runs. Files are read where the ranks run: local paths or the
cluster's shared filesystems; a URI (s3://, gs://, hf://) is refused with one line, since nothing
outside the cluster is reached."""
import glob
import os

import numpy as np

from . import columns as cols
from .dataset import Dataset


def from_items(items, **hints):
    items = list(items)
    return Dataset(lambda: cols.from_rows(items, "from_items"), name="from_items")


def range(n, **hints):  # noqa: A001 (Ray's name)
    return Dataset(lambda: {"id": np.arange(int(n), dtype=np.int64)}, name="range")


def range_tensor(n, *, shape=(1,), **hints):
    def build():
        ids = np.arange(int(n), dtype=np.int64)
        return {"data": np.broadcast_to(ids.reshape((-1,) + (1,) * len(shape)), (int(n),) + tuple(shape)).copy()}
    return Dataset(build, name="range_tensor")


def from_numpy(ndarrays):
    arrays = [ndarrays] if isinstance(ndarrays, np.ndarray) else list(ndarrays)
    return Dataset(lambda: cols.joined([{"data": np.asarray(a)} for a in arrays], "from_numpy"), name="from_numpy")


def from_pandas(dfs, **hints):
    frames = dfs if isinstance(dfs, (list, tuple)) else [dfs]
    return Dataset(lambda: cols.joined([cols.from_output(frame, "from_pandas") for frame in frames], "from_pandas"),
                   name="from_pandas")


def from_arrow(tables, **hints):
    tables = tables if isinstance(tables, (list, tuple)) else [tables]
    return Dataset(lambda: cols.joined([_from_table(table) for table in tables], "from_arrow"), name="from_arrow")


def from_huggingface(dataset, **hints):
    """A datasets.Dataset (made or loaded locally): its columns as numpy arrays."""
    def build():
        if not hasattr(dataset, "with_format"):
            raise ValueError(f"trainrt.data.from_huggingface: a {type(dataset).__name__} is not a datasets.Dataset "
                             f"(an IterableDataset or DatasetDict: pick one split, e.g. ds['train'])")
        table = dataset.with_format("numpy")[:]
        return {name: np.asarray(values) for name, values in table.items()}
    return Dataset(build, name="from_huggingface")


def read_csv(paths, *, file_extensions=("csv",), parse_options=None, read_options=None, convert_options=None,
             **hints):
    """CSV files (a file, a directory of them, or a list) through pyarrow.csv, in path order."""
    files = _files(paths, file_extensions, "read_csv")

    def build():
        from pyarrow import csv
        options = {k: v for k, v in (("parse_options", parse_options), ("read_options", read_options),
                                     ("convert_options", convert_options)) if v is not None}
        return cols.joined([_from_table(csv.read_csv(f, **options)) for f in files], "read_csv")
    return Dataset(build, name="read_csv")


def read_parquet(paths, *, columns=None, file_extensions=("parquet",), **hints):
    files = _files(paths, file_extensions, "read_parquet")

    def build():
        from pyarrow import parquet
        return cols.joined([_from_table(parquet.read_table(f, columns=columns)) for f in files], "read_parquet")
    return Dataset(build, name="read_parquet")


def read_json(paths, *, file_extensions=("json", "jsonl"), **hints):
    """JSON Lines files (one object per line), through pyarrow.json."""
    files = _files(paths, file_extensions, "read_json")

    def build():
        from pyarrow import json
        return cols.joined([_from_table(json.read_json(f)) for f in files], "read_json")
    return Dataset(build, name="read_json")


def read_numpy(paths, *, file_extensions=("npy",), **hints):
    """.npy files: their rows in one column "data", as Ray's."""
    files = _files(paths, file_extensions, "read_numpy")
    return Dataset(lambda: cols.joined([{"data": np.load(f)} for f in files], "read_numpy"), name="read_numpy")


def read_text(paths, *, drop_empty_lines=True, file_extensions=None, encoding="utf-8", **hints):
    """Lines of text files in one column "text" (strings: map them to numbers, e.g. token ids, before
    a Trainer's datasets= take them)."""
    files = _files(paths, file_extensions, "read_text")

    def build():
        lines = []
        for f in files:
            with open(f, encoding=encoding) as file:
                lines += [line.rstrip("\r\n") for line in file if not drop_empty_lines or line.strip()]
        return {"text": np.array(lines, dtype=object)} if lines else {}
    return Dataset(build, name="read_text")


def _from_table(table):
    out = {}
    for name in table.column_names:
        column = table.column(name)
        try:
            values = column.to_numpy()
        except Exception:  # nested lists: rows of equal length become a tensor column
            values = np.array(column.to_pylist(), dtype=object)
        if values.dtype == object and len(values) and isinstance(values[0], (list, np.ndarray)):
            values = np.stack([np.asarray(v) for v in values])
        out[name] = values
    return out


def _files(paths, extensions, where):
    """The files `paths` names (directories expanded to their files with one of `extensions`, in
    name order); one ValueError for a URI or a path that does not exist."""
    given = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    files = []
    for path in map(os.fspath, given):
        if "://" in path:
            raise ValueError(f"trainrt.data.{where}: {path} is not a path on this cluster (trainrt reads files "
                             f"where the ranks run): copy it to a shared filesystem and give that path")
        if os.path.isdir(path):
            found = sorted(f for f in glob.glob(os.path.join(path, "**", "*"), recursive=True) if os.path.isfile(f)
                           and (not extensions or f.rsplit(".", 1)[-1] in extensions))
            if not found:
                raise ValueError(f"trainrt.data.{where}: directory {path} has no files ending in "
                                 f"{', '.join('.' + e for e in extensions)}")
            files += found
        elif os.path.isfile(path):
            files.append(path)
        else:
            raise ValueError(f"trainrt.data.{where}: {path} does not exist")
    return files
