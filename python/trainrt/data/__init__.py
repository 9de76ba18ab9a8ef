"""Datasets from Python: trainrt's streaming reader (docs/guides/data.md) behind Ray Data's names,
and Ray Data's constructors (from_items, read_csv, ...: lazy datasets a Trainer's datasets= takes;
docs/guides/ray-data.md), loaded at their first use.

    ds = trainrt.get_dataset("train")                  # data.path's split, this rank's view
    it = ds.iter_batches(batch_size=32, epoch=epoch)   # dicts of numpy arrays, read in the background
    for batch in it:                                   # {"features": float32 [n, F], "label": int64 [n]}
        ...
    state = it.state_dict()                            # save it in the checkpoint: exact resume

batch_size is per worker, as in Ray: the global batch is batch_size x world size, split so that
every rank gets batch_size samples (the last batch may be smaller, and differ by one between
ranks). The order is the same for every world size; shuffle is none, global or blocks (default:
data.shuffle for "train", none otherwise). A rank holds only its prefetch window, not the dataset.
"""
import os

from .. import _state

_UNSET = object()


class BatchIterator:
    """One epoch of this rank's batches. `position` / `state_dict()`: where it stands (the next
    global batch), for a checkpoint; `wait_seconds`: time spent waiting for the reader."""

    def __init__(self, native, options, order, torch):
        self._native, self._options, self._order, self._torch = native, options, order, torch

    def __iter__(self):
        return self

    def __next__(self):
        batch = next(self._native)
        if self._torch:
            import torch
            return {name: torch.from_numpy(array) for name, array in batch.items()}
        return batch

    def __len__(self):
        return len(self._native)

    @property
    def position(self):
        return self._native.position

    @property
    def wait_seconds(self):
        return self._native.wait_seconds

    def state_dict(self):
        """{"epoch", "next_batch", "batch_size", "shuffle", "order"}: numbers and strings a
        trainrt.Checkpoint stores as attributes ("order": what fixes the samples of each batch)."""
        return dict(self._native.position, batch_size=self._options["batch_size"], shuffle=self._options["shuffle"],
                    order=self._order)


class Dataset:
    """A split of data.path as this rank streams it (trainrt.get_dataset)."""

    def __init__(self, native, outside_run=False):
        self._native = native
        self._outside_run = outside_run

    @classmethod
    def open(cls, path, split):
        """A split of a dataset file outside a run (after it, on a login node): every row, read by
        trainrt's reader (file order; to_numpy and to_dmatrix). trainrt.Error (exit code data)
        naming the file when it is missing, malformed or has no such split."""
        from .. import _trainrt
        return cls(_trainrt.open_dataset(os.fspath(path), split), outside_run=True)

    @property
    def size(self):
        return self._native.size

    @property
    def columns(self):
        """[{"name", "dtype", "shape", "mean", "std", "num_classes"}] in name order."""
        return self._native.columns

    @property
    def feature_column(self):
        return self._native.feature_column

    @property
    def label_column(self):
        return self._native.label_column

    def iter_batches(self, batch_size=64, *, epoch=0, shuffle=_UNSET, columns=None, prefetch_batches=_UNSET,
                     drop_last=False, shuffle_buffer=_UNSET, resume=None, _torch=False):
        """The batches of `epoch` as dicts of numpy arrays (columns: all, or those named). What the
        call leaves out comes from [data] (shuffle for the train split, prefetch_batches,
        shuffle_buffer). resume: a state_dict() saved mid-epoch (its epoch and next batch; the order
        it was saved in, i.e. batch size, shuffle, shuffle_buffer, columns, seed and file, must be
        the same, else trainrt.Error)."""
        given = {name: value for name, value in (("shuffle", shuffle), ("prefetch_batches", prefetch_batches),
                                                 ("shuffle_buffer", shuffle_buffer)) if value is not _UNSET}
        given.update(drop_last=bool(drop_last), columns=None if columns is None else list(columns))
        options = _state.session().iter_options(self._native.split, int(batch_size), given)
        order = self._native.order_key(options)
        next_batch = 0
        if resume is not None:
            epoch, next_batch = self._native.resume_position(options, dict(resume))
        return BatchIterator(self._native.iter_batches(options, int(epoch), next_batch), options, order, _torch)

    def iter_torch_batches(self, batch_size=64, **kwargs):
        """iter_batches with torch tensors instead of numpy arrays (Ray's iter_torch_batches)."""
        return self.iter_batches(batch_size, _torch=True, **kwargs)

    def to_numpy(self, columns=None, batch_size=65536):
        """This rank's rows of the split, in file order (no shuffle), as {column: numpy array}: every
        rank's rows together are the split, each row once."""
        parts = {}
        for batch in self._file_order(batch_size, columns):
            for name, array in batch.items():
                parts.setdefault(name, []).append(array)
        names = columns if columns is not None else [column["name"] for column in self.columns]
        return {name: _joined(parts.get(name), column) for name, column in
                ((n, self._column(n)) for n in names)}

    def to_dmatrix(self, label=None, features=None, missing=float("nan"), quantile=False, ref=None, **kwargs):
        """This rank's rows as an xgboost.DMatrix: the label column (None: the file's label column),
        the features (None: the file's feature column, else every other column; [n] and [n, k]
        columns side by side as float32); NaN is missing. quantile: an xgboost.QuantileDMatrix (hist
        only, less memory; an evaluation set passes ref=the training one; with several ranks, built
        inside trainrt.xgboost.collective()). kwargs go to the constructor."""
        import xgboost
        matrix, labels = self.features_and_label(label, features)
        if quantile:
            return xgboost.QuantileDMatrix(matrix, label=labels, missing=missing, ref=ref, **kwargs)
        return xgboost.DMatrix(matrix, label=labels, missing=missing, **kwargs)

    def _file_order(self, batch_size, columns):
        if not self._outside_run:
            return self.iter_batches(batch_size, shuffle="none", columns=columns)
        options = {"batch_size": int(batch_size), "drop_last": False, "pad": False, "prefetch_batches": 2,
                   "shuffle": "none", "shuffle_buffer": 0, "columns": None if columns is None else list(columns)}
        return BatchIterator(self._native.iter_batches(options, 0, 0), options, None, False)

    def features_and_label(self, label=None, features=None):
        """(features [n, F] float32, label array or None) of this rank's rows: the label column
        (None: the file's label column), the features (None: the file's feature column, else every
        other column; [n] and [n, k] columns side by side). What to_dmatrix() builds from."""
        import numpy as np
        names = {column["name"] for column in self.columns}
        if label is None:  # the file's label column, when this split has it (a test split may not)
            label = self.label_column if self.label_column in names else None
        if features is None:
            features = [self.feature_column] if self.feature_column else \
                [column["name"] for column in self.columns if column["name"] != label]
        columns = self.to_numpy(list(features) + ([label] if label else []))
        matrix = np.hstack([np.asarray(columns[name], dtype=np.float32).reshape(len(columns[name]), -1)
                            for name in features])
        return matrix, (columns[label] if label else None)

    def _column(self, name):
        for column in self.columns:
            if column["name"] == name:
                return column
        known = ", ".join(column["name"] for column in self.columns)
        raise ValueError(f"trainrt: split '{self._native.split}' of {self._native.path} has no column '{name}' "
                         f"(its columns: {known})")


def _joined(arrays, column):
    """One array from a column's batches; an empty one of the column's dtype and shape for a rank
    with no rows."""
    import numpy as np
    if arrays:
        return np.concatenate(arrays)
    return np.empty([0] + list(column["shape"]), dtype=_NUMPY_TYPES[column["dtype"]])


_NUMPY_TYPES = {"u8": "uint8", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "f16": "float16",
                "f32": "float32", "f64": "float64"}


def split_names():
    """The splits of data.path, in name order."""
    from .._trainrt import dataset_splits
    return dataset_splits(_state.settings().data.path)


def get_dataset(split="train"):
    """`split` of data.path as this rank streams it (DataError naming the file when unusable)."""
    return Dataset(_state.session().dataset(split))


# Ray Data's names (ray.data.X after the port): the lazy datasets of trainrt/_raydata.
_RAY_DATA = {"from_items": "readers", "from_numpy": "readers", "from_pandas": "readers", "from_arrow": "readers",
             "from_huggingface": "readers", "range": "readers", "range_tensor": "readers", "read_csv": "readers",
             "read_parquet": "readers", "read_json": "readers", "read_numpy": "readers", "read_text": "readers",
             "RayDataset": "dataset", "MaterializedDataset": "dataset", "Schema": "dataset",
             "DataIterator": "iterator", "DataContext": "context", "ExecutionOptions": "context"}


def __getattr__(name):
    module = _RAY_DATA.get(name)
    if module is None:
        raise AttributeError(f"module 'trainrt.data' has no attribute {name!r}")
    import importlib
    found = importlib.import_module(f"trainrt._raydata.{module}")
    return getattr(found, {"RayDataset": "Dataset", "MaterializedDataset": "Dataset"}.get(name, name))
