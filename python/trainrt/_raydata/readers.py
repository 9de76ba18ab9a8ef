"""Ray Data's constructors (trainrt.data.from_items, read_csv, ...): each returns a lazy dataset
whose rows are read when the plan runs. Files are read where the ranks run: local paths or the
cluster's shared filesystems; a URI (s3://, gs://, hf://) is refused with one line, since nothing
outside the cluster is reached.

Ray's arguments: those that choose or change the rows (file_extensions, include_paths,
ignore_missing_paths, partition_filter, shuffle="files", arrow_open_stream_args, each reader's
parse options) are honoured; those trainrt cannot honour (another filesystem, partitioning, ...)
are refused with one line; Ray's hints on how many blocks and tasks read, and where (parallelism,
override_num_blocks, concurrency, num_cpus, ray_remote_args, ...), change nothing here and are one
warning line each; any other keyword is Python's TypeError."""
import glob
import io
import os

import numpy as np

from . import columns as cols
from .dataset import _READ_HINTS, Dataset, _rng, _warn_hints

_BLOCK_HINTS = ("parallelism", "override_num_blocks")
_TASK_HINTS = _BLOCK_HINTS + ("concurrency",)
_READING = "reads the data"
_UNSET = object()
# Ray's arguments of its file-based readers, with their defaults (_read_files).
_FILE_ARGS = {"filesystem": None, "arrow_open_stream_args": None, "partition_filter": None, "partitioning": _UNSET,
              "include_paths": False, "ignore_missing_paths": False, "shuffle": None}
# read_numpy's **numpy_load_args: numpy.load's own.
_NUMPY_LOAD = ("mmap_mode", "fix_imports", "encoding", "max_header_size")
# read_parquet's **arrow_parquet_args that only tune the scan (pyarrow's Scanner).
_PARQUET_SCAN_HINTS = ("batch_size", "batch_readahead", "fragment_readahead", "fragment_scan_options", "use_threads",
                       "cache_metadata", "memory_pool")


def from_items(items, **hints):
    _warn_hints("from_items", hints, _BLOCK_HINTS, _READING)
    items = list(items)
    return Dataset(lambda: cols.from_rows(items, "from_items"), name="from_items")


def range(n, **hints):  # noqa: A001 (Ray's name)
    _warn_hints("range", hints, _TASK_HINTS, _READING)
    return Dataset(lambda: {"id": np.arange(int(n), dtype=np.int64)}, name="range")


def range_tensor(n, *, shape=(1,), **hints):
    _warn_hints("range_tensor", hints, _TASK_HINTS, _READING)

    def build():
        ids = np.arange(int(n), dtype=np.int64)
        return {"data": np.broadcast_to(ids.reshape((-1,) + (1,) * len(shape)), (int(n),) + tuple(shape)).copy()}
    return Dataset(build, name="range_tensor")


def from_numpy(ndarrays):
    arrays = [ndarrays] if isinstance(ndarrays, np.ndarray) else list(ndarrays)
    return Dataset(lambda: cols.joined([{"data": np.asarray(a)} for a in arrays], "from_numpy"), name="from_numpy")


def from_pandas(dfs, **hints):
    _warn_hints("from_pandas", hints, ("override_num_blocks",), _READING)
    frames = dfs if isinstance(dfs, (list, tuple)) else [dfs]
    return Dataset(lambda: cols.joined([cols.from_output(frame, "from_pandas") for frame in frames], "from_pandas"),
                   name="from_pandas")


def from_arrow(tables, **hints):
    _warn_hints("from_arrow", hints, ("override_num_blocks",), _READING)
    tables = tables if isinstance(tables, (list, tuple)) else [tables]
    return Dataset(lambda: cols.joined([_from_table(table) for table in tables], "from_arrow"), name="from_arrow")


def from_huggingface(dataset, **hints):
    """A datasets.Dataset (made or loaded locally): its columns as numpy arrays."""
    _warn_hints("from_huggingface", hints, _TASK_HINTS, _READING)

    def build():
        if not hasattr(dataset, "with_format"):
            raise ValueError(f"trainrt.data.from_huggingface: a {type(dataset).__name__} is not a datasets.Dataset "
                             f"(an IterableDataset or DatasetDict: pick one split, e.g. ds['train'])")
        table = dataset.with_format("numpy")[:]
        return {name: np.asarray(values) for name, values in table.items()}
    return Dataset(build, name="from_huggingface")


def read_csv(paths, *, parse_options=None, read_options=None, convert_options=None, **options):
    """CSV files (a file, a directory of them, or a list) through pyarrow.csv, in path order."""
    arrow = {k: v for k, v in (("parse_options", parse_options), ("read_options", read_options),
                               ("convert_options", convert_options)) if v is not None}

    def read(source):
        from pyarrow import csv
        return _from_table(csv.read_csv(source, **arrow))
    return _read_files("read_csv", paths, ("csv",), options, read)


def read_parquet(paths, *, columns=None, tensor_column_schema=None, include_row_hash=False, skip_paths=None,
                 catalog=None, **options):
    """Parquet files through pyarrow.parquet.read_table (columns=, and Ray's filter= and schema=
    passed on); tensor_column_schema ({column: (dtype, shape)}) makes those binary columns tensors."""
    for name, given in (("catalog", catalog is not None), ("include_row_hash", bool(include_row_hash)),
                        ("dataset_kwargs", options.get("dataset_kwargs") is not None)):
        if given:
            _refuse("read_parquet", name, "trainrt reads the files with pyarrow.parquet.read_table: leave it out")
    options.pop("dataset_kwargs", None)
    arrow = {"columns": columns, "filters": options.pop("filter", None), "schema": options.pop("schema", None)}

    def read(source):
        from pyarrow import parquet
        return _tensor_columns(_from_table(parquet.read_table(source, **arrow)), tensor_column_schema or {})
    return _read_files("read_parquet", paths, ("parquet",), options, read, _READ_HINTS + _PARQUET_SCAN_HINTS,
                       skip=skip_paths)


def read_json(paths, *, lines=False, read_options=None, parse_options=None, **options):
    """JSON Lines files (one object per line), through pyarrow.json (lines=True or False alike:
    Ray reads such files the same either way)."""
    arrow = {k: v for k, v in (("read_options", read_options), ("parse_options", parse_options)) if v is not None}
    if lines and (arrow or options.get("arrow_open_stream_args") or options.get("filesystem")):
        raise ValueError("trainrt.data.read_json(lines=True): read_options, parse_options, arrow_open_stream_args "
                         "and filesystem are not supported with it (as in Ray): leave them out or lines=False")

    def read(source):
        from pyarrow import json
        return _from_table(json.read_json(source, **arrow))
    return _read_files("read_json", paths, ("json", "jsonl"), options, read)


def read_numpy(paths, *, allow_pickle=False, **options):
    """.npy files: their rows in one column "data", as Ray's (numpy.load's arguments passed on)."""
    load = {name: options.pop(name) for name in _NUMPY_LOAD if name in options}
    return _read_files("read_numpy", paths, ("npy",), options,
                       lambda source: {"data": np.load(source, allow_pickle=allow_pickle, **load)}, _TASK_HINTS)


def read_text(paths, *, drop_empty_lines=True, encoding="utf-8", **options):
    """Lines of text files in one column "text" (strings: map them to numbers, e.g. token ids, before
    a Trainer's datasets= take them)."""
    def read(source):
        text = source if not isinstance(source, str) else open(source, "rb")
        with io.TextIOWrapper(text, encoding=encoding) as file:
            lines = [line.rstrip("\r\n") for line in file if not drop_empty_lines or line.strip()]
        return {"text": np.array(lines, dtype=object)} if lines else {}
    return _read_files("read_text", paths, None, options, read)


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


def _read_files(where, paths, extensions, options, read, hints=_READ_HINTS, skip=None):
    """The dataset of what read(source) gives for each file of `paths` (source: the path, or its
    bytes through arrow_open_stream_args), Ray's file arguments in `options` honoured or refused
    (_FILE_ARGS) and the rest taken as Ray's hints (`hints`: one warning line each)."""
    given = {name: options.pop(name, default) for name, default in _FILE_ARGS.items()}
    extensions = options.pop("file_extensions", extensions)
    _warn_hints(where, options, hints, _READING, stacklevel=4)
    _check_file_args(where, given)
    files = _files(paths, extensions, where, given["ignore_missing_paths"], skip)
    if given["partitioning"] is _UNSET:
        _refuse_hive_directories(where, paths, files)
    if given["partition_filter"] is not None:
        files = list(given["partition_filter"](files))
    stream, include_paths = given["arrow_open_stream_args"], bool(given["include_paths"])

    def build():
        parts = []
        for path in _shuffled(files, given["shuffle"]):
            part = read(_opened(path, stream))
            parts.append({**part, "path": np.full(cols.row_count(part), path, dtype=object)} if include_paths and part
                         else part)
        return cols.joined(parts, where)
    return Dataset(build, name=where)


def _check_file_args(where, given):
    """One ValueError for a file argument of Ray's that trainrt cannot honour."""
    filesystem = given["filesystem"]
    if filesystem is not None and type(filesystem).__name__ != "LocalFileSystem":
        _refuse(where, "filesystem", f"a {type(filesystem).__name__}: trainrt reads files where the ranks run; give "
                                     f"local or shared-filesystem paths and leave filesystem out")
    if given["partitioning"] is not _UNSET and given["partitioning"] is not None:
        _refuse(where, "partitioning", "trainrt adds no columns from key=value directory names: give "
                                       "partitioning=None, or add the column with add_column or map")
    shuffle = given["shuffle"]
    if shuffle is not None and shuffle != "files" and not hasattr(shuffle, "seed"):
        _refuse(where, "shuffle", f"{shuffle!r}: give None, 'files' or a FileShuffleConfig(seed=)")
    if given["partition_filter"] is not None and not callable(given["partition_filter"]):
        _refuse(where, "partition_filter", "give a callable of the list of paths (Ray's PathPartitionFilter)")


def _refuse_hive_directories(where, paths, files):
    """Ray reads key=value directory names under a directory it is given as columns (its default
    hive partitioning), which trainrt does not: one ValueError rather than rows without them."""
    roots = [os.fspath(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths) if os.path.isdir(p)]
    for root in roots:
        for path in files:
            relative = os.path.relpath(os.path.dirname(path), root)
            named = [part for part in relative.split(os.sep) if "=" in part and not relative.startswith("..")]
            if named:
                raise ValueError(f"trainrt.data.{where}: {root} holds a hive-partitioned directory ({named[0]}), whose "
                                 f"key=value Ray adds as a column and trainrt does not: give partitioning=None to read "
                                 f"the files without it, or add the column with add_column or map")


def _refuse(where, name, why):
    raise ValueError(f"trainrt.data.{where}({name}=...) is not supported: {why}")


def _shuffled(files, shuffle):
    """Ray's shuffle="files" (or a FileShuffleConfig's seed): the files in a random order, drawn
    when the plan runs (unseeded: as an unseeded random_shuffle's split, _rng), not each epoch:
    random_shuffle() reads a new order every epoch."""
    if shuffle is None:
        return files
    seed = None if shuffle == "files" else shuffle.seed
    return [files[i] for i in _rng(seed).permutation(len(files))]


def _opened(path, stream_args):
    """`path`, or with Ray's arrow_open_stream_args (compression=, buffer_size=) its bytes read
    through pyarrow.input_stream."""
    if not stream_args:
        return path
    import pyarrow
    with pyarrow.input_stream(path, **stream_args) as stream:
        return io.BytesIO(stream.read())


def _tensor_columns(columns, schema):
    """read_parquet's tensor_column_schema: {column: (dtype, shape)}, each value of those binary
    columns a tensor of that dtype and shape."""
    for name, (dtype, shape) in schema.items():
        if name not in columns:
            raise ValueError(f"trainrt.data.read_parquet: tensor_column_schema names {name!r}, not a column "
                             f"({', '.join(columns)})")
        columns[name] = np.stack([np.frombuffer(value, dtype=dtype).reshape(shape) for value in columns[name]])
    return columns


def _files(paths, extensions, where, ignore_missing=False, skip=None):
    """The files `paths` names (directories expanded to their files ending in one of `extensions`,
    in name order), less those in `skip`; one ValueError for a URI or a path that does not exist
    (skipped with ignore_missing)."""
    given = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    skipped = {os.path.abspath(p) for p in ([skip] if isinstance(skip, (str, os.PathLike)) else skip or [])}
    files = []
    for path in map(os.fspath, given):
        if "://" in path:
            raise ValueError(f"trainrt.data.{where}: {path} is not a path on this cluster (trainrt reads files "
                             f"where the ranks run): copy it to a shared filesystem and give that path")
        if os.path.isdir(path):
            files += _directory_files(path, extensions, where)
        elif os.path.isfile(path):
            files.append(path)
        elif not ignore_missing:
            raise ValueError(f"trainrt.data.{where}: {path} does not exist")
    files = [f for f in files if os.path.abspath(f) not in skipped]
    if not files and (ignore_missing or skipped):
        raise ValueError(f"trainrt.data.{where}: no files to read in {', '.join(map(os.fspath, given))}")
    return files


def _directory_files(path, extensions, where):
    found = sorted(f for f in glob.glob(os.path.join(path, "**", "*"), recursive=True) if os.path.isfile(f)
                   and (not extensions or any(f.endswith("." + e) for e in extensions)))
    if not found:
        endings = f" ending in {', '.join('.' + e for e in extensions)}" if extensions else ""
        raise ValueError(f"trainrt.data.{where}: directory {path} has no files{endings}")
    return found
