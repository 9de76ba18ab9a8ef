"""A rank's shard of a dataset (Ray's DataIterator, from trainrt.get_dataset_shard(name)): trainrt's
streaming reader over the run's dataset file. Every iteration of what iter_batches /
iter_torch_batches / to_tf return is the next epoch, as Ray re-runs a dataset per epoch; the
epoch counts and the position inside an unfinished epoch go into every checkpoint the function
reports, and come back when it takes its checkpoint (get_checkpoint()), so a resumed run reads
the batches the uninterrupted run read (exact resume, mid-epoch too).

batch_size is per rank, as Ray's: a split dataset's global batch is batch_size x ranks, each rank
reading its part (trainrt's reader); an unsplit one (DataConfig(datasets_to_split=)) gives every
rank all rows."""
import numpy as np

from . import columns as cols
from .columns import to_torch


class ShardState:
    """What a shard has read, for checkpoints: epochs begun, and the position of the epoch being
    read (None when it ended)."""

    def __init__(self):
        self.epochs = 0
        self.reading = None   # (native iterator, order key) of the epoch in progress
        self.resume = None    # (epoch, next_batch, order key) from the checkpoint taken

    def saved(self):
        if self.reading is not None:
            native, order = self.reading
            position = native.position
            if position["next_batch"] < len(native):
                return {"epochs": self.epochs, "epoch": position["epoch"], "next_batch": position["next_batch"],
                        "order": order}
        return {"epochs": self.epochs}

    def restore(self, saved):
        self.epochs, self.reading = int(saved["epochs"]), None
        self.resume = (int(saved["epoch"]), int(saved["next_batch"]), saved["order"]) if "epoch" in saved else None


class DataIterator:
    def __init__(self, name, native, state, *, split, epoch_shuffle, dtypes, ranks):
        self._name, self._native, self._state = name, native, state
        self._split, self._epoch_shuffle, self._dtypes, self._ranks = split, epoch_shuffle, dtypes, ranks

    def iter_batches(self, *, prefetch_batches=1, batch_size=256, batch_format="default", drop_last=False,
                     local_shuffle_buffer_size=None, local_shuffle_seed=None, _collate_fn=None):
        cols.check_format(batch_format, "DataIterator.iter_batches")
        options = self._options(batch_size, prefetch_batches, drop_last, local_shuffle_buffer_size)
        return BatchIterable(lambda: self._epoch(options, batch_format, _collate_fn))

    def iter_torch_batches(self, *, prefetch_batches=1, batch_size=256, dtypes=None, device="auto", collate_fn=None,
                           drop_last=False, local_shuffle_buffer_size=None, local_shuffle_seed=None):
        convert = collate_fn or (lambda batch: to_torch(batch, dtypes, device))
        return self.iter_batches(prefetch_batches=prefetch_batches, batch_size=batch_size, drop_last=drop_last,
                                 local_shuffle_buffer_size=local_shuffle_buffer_size, _collate_fn=convert)

    def iter_rows(self, *, prefetch_batches=1):
        return BatchIterable(lambda: (row for batch in self._epoch(self._options(256, prefetch_batches, False, None),
                                                             "default", None) for row in cols.to_rows(batch)))

    def to_tf(self, feature_columns, label_columns, *, prefetch_batches=1, batch_size=1, drop_last=False,
              local_shuffle_buffer_size=None, local_shuffle_seed=None, feature_type_spec=None, label_type_spec=None,
              additional_columns=None):
        """A tf.data.Dataset of (features, labels): a column name gives a tensor, a list of names a dict
        of tensors; every pass over it (a Keras epoch) is the shard's next epoch."""
        import tensorflow as tf
        signature = {column["name"]: tf.TensorSpec([None] + list(column["shape"]), _tf_dtype(self._dtype(column)))
                     for column in self._native.columns}
        pick = _picker(feature_columns, "feature_columns", signature), _picker(label_columns, "label_columns", signature)
        batches = self.iter_batches(prefetch_batches=prefetch_batches, batch_size=batch_size, drop_last=drop_last,
                                    local_shuffle_buffer_size=local_shuffle_buffer_size)
        return tf.data.Dataset.from_generator(lambda: ((pick[0](b), pick[1](b)) for b in batches),
                                              output_signature=(pick[0](signature), pick[1](signature)))

    def materialize(self):
        """This shard's rows (file order) as a dataset in memory: .to_pandas(), .count() (Ray's)."""
        from .dataset import Dataset
        native = self._native.iter_batches(self._options(65536, 2, False, None, shuffle="none"), 0, 0)
        rows = cols.joined([self._restored(batch) for batch in native], "materialize")
        return Dataset(lambda: rows, name=self._name)

    def stats(self):
        return f"trainrt.get_dataset_shard({self._name!r}): {self._native.size} rows, split={self._split}"

    def __repr__(self):
        return f"DataIterator({self._name!r}, split={self._split})"

    # --- the epochs ---
    def _options(self, batch_size, prefetch_batches, drop_last, local_shuffle_buffer_size, shuffle=None):
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"trainrt.get_dataset_shard({self._name!r}): batch_size={batch_size!r}: give a "
                             f"positive int (rows per rank)")
        if shuffle is None:
            shuffle = "global" if self._epoch_shuffle else ("blocks" if local_shuffle_buffer_size else "none")
        return {"batch_size": batch_size * (self._ranks if self._split else 1), "drop_last": bool(drop_last),
                "pad": False, "prefetch_batches": max(1, int(prefetch_batches or 1)), "shuffle": shuffle,
                "shuffle_buffer": int(local_shuffle_buffer_size or 0), "columns": None}

    def _epoch(self, options, batch_format, convert):
        state, order = self._state, self._native.order_key(options)
        epoch, next_batch = state.epochs, 0
        if state.resume is not None:
            epoch, next_batch = self._native.resume_position(options, {"epoch": state.resume[0],
                                                                       "next_batch": state.resume[1],
                                                                       "order": state.resume[2]})
            state.resume = None
        native = self._native.iter_batches(options, epoch, next_batch)
        state.epochs, state.reading = epoch + 1, (native, order)
        for batch in native:
            batch = cols.as_format(self._restored(batch), batch_format)
            yield convert(batch) if convert else batch

    def _restored(self, batch):
        """Columns whose dtype the file cannot hold (bool) back in theirs."""
        for name, dtype in self._dtypes.items():
            if name in batch:
                batch[name] = batch[name].astype(dtype)
        return batch

    def _dtype(self, column):
        return np.dtype(self._dtypes.get(column["name"], _NUMPY[column["dtype"]]))


class BatchIterable:
    """An iterable whose every iteration is a new epoch (Ray's iter_batches result)."""

    def __init__(self, start):
        self._start = start

    def __iter__(self):
        return iter(self._start())


_NUMPY = {"u8": "uint8", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "f16": "float16",
          "f32": "float32", "f64": "float64"}


def _tf_dtype(dtype):
    import tensorflow as tf
    return tf.as_dtype(dtype)


def _picker(names, argument, signature):
    if isinstance(names, str):
        if names not in signature:
            raise ValueError(f"trainrt.DataIterator.to_tf: {argument}={names!r} is not a column "
                             f"({', '.join(signature)})")
        return lambda batch: batch[names]
    names = list(names)
    for name in names:
        if name not in signature:
            raise ValueError(f"trainrt.DataIterator.to_tf: {argument} names {name!r}, not a column "
                             f"({', '.join(signature)})")
    return lambda batch: {name: batch[name] for name in names}
