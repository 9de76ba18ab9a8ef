"""A rank's shard of a dataset (Ray's DataIterator, from trainrt.get_dataset_shard(name)): trainrt's
streaming reader over the run's dataset file. Every iteration of what iter_batches /
iter_torch_batches / to_tf return is the next epoch, as Ray re-runs a dataset per epoch; the
epoch counts and the position inside an unfinished epoch go into every checkpoint the function
reports, and come back when it takes its checkpoint (get_checkpoint()), so a resumed run reads
the batches the uninterrupted run read (exact resume, mid-epoch too).

batch_size is per rank, as Ray's: a split dataset's global batch is batch_size x ranks, each rank
reading its part (trainrt's reader); an unsplit one (DataConfig(datasets_to_split=)) gives every
rank all rows."""
import warnings

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
    """`reopen(seed)`: the shard's native reader with another shuffle seed (local_shuffle_seed)."""

    def __init__(self, name, native, state, *, split, epoch_shuffle, dtypes, ranks, reopen):
        self._name, self._native, self._state = name, native, state
        self._split, self._epoch_shuffle, self._dtypes, self._ranks = split, epoch_shuffle, dtypes, ranks
        self._reopen, self._seeded = reopen, {}

    def iter_batches(self, *, prefetch_batches=1, batch_size=256, batch_format="default", drop_last=False,
                     local_shuffle_buffer_size=None, local_shuffle_seed=None):
        """local_shuffle_seed (with local_shuffle_buffer_size) seeds the reader's blocks shuffle in
        place of run.seed: each epoch's order comes from (seed, epoch), the same in every run with
        that seed (Ray's repeats one order every epoch)."""
        return self._batches(prefetch_batches, batch_size, batch_format, drop_last, local_shuffle_buffer_size,
                             local_shuffle_seed, None, "iter_batches")

    def iter_torch_batches(self, *, prefetch_batches=1, batch_size=256, dtypes=None, device="auto", collate_fn=None,
                           drop_last=False, local_shuffle_buffer_size=None, local_shuffle_seed=None, pin_memory=False):
        if pin_memory:
            warnings.warn(f"trainrt.get_dataset_shard({self._name!r}).iter_torch_batches(pin_memory=True) is not "
                          f"used: the batches go to the device from unpinned memory (leave it out)", stacklevel=2)
        convert = collate_fn or (lambda batch: to_torch(batch, dtypes, device))
        return self._batches(prefetch_batches, batch_size, "default", drop_last, local_shuffle_buffer_size,
                             local_shuffle_seed, convert, "iter_torch_batches")

    def iter_rows(self, *, prefetch_batches=1):
        return BatchIterable(lambda: (row for batch in self._epoch(self._native,
                                                                   self._options(256, prefetch_batches, False, None),
                                                                   "default", None) for row in cols.to_rows(batch)))

    def to_tf(self, feature_columns, label_columns, *, additional_columns=None, prefetch_batches=1, batch_size=1,
              drop_last=False, local_shuffle_buffer_size=None, local_shuffle_seed=None, feature_type_spec=None,
              label_type_spec=None, additional_type_spec=None):
        """A tf.data.Dataset of (features, labels), or (features, labels, additional) with
        additional_columns: a column name gives a tensor, a list of names a dict of tensors; a type
        spec (a tf.TypeSpec, or {column: tf.TypeSpec} for a list) gives the tensors' dtype and the
        dataset's signature. Every pass over it (a Keras epoch) is the shard's next epoch; TensorFlow's
        auto-sharding is off (each rank holds its shard), as Ray's."""
        import tensorflow as tf
        inferred = {column["name"]: tf.TensorSpec([None] + list(column["shape"]), _tf_dtype(self._dtype(column)),
                                                  name=column["name"]) for column in self._native.columns}
        parts = [_tf_part(feature_columns, feature_type_spec, "feature", inferred),
                 _tf_part(label_columns, label_type_spec, "label", inferred)]
        if additional_columns is not None:
            parts.append(_tf_part(additional_columns, additional_type_spec, "additional", inferred))
        batches = self._batches(prefetch_batches, batch_size, "default", drop_last, local_shuffle_buffer_size,
                                local_shuffle_seed, None, "to_tf")
        dataset = tf.data.Dataset.from_generator(lambda: (tuple(pick(b) for pick, _ in parts) for b in batches),
                                                 output_signature=tuple(spec for _, spec in parts))
        options = tf.data.Options()
        options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
        return dataset.with_options(options)

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
    def _batches(self, prefetch_batches, batch_size, batch_format, drop_last, buffer, seed, convert, where):
        cols.check_format(batch_format, f"DataIterator.{where}")
        options = self._options(batch_size, prefetch_batches, drop_last, buffer)
        native = self._reader(options["shuffle"], seed, where)
        return BatchIterable(lambda: self._epoch(native, options, batch_format, convert))

    def _reader(self, shuffle, seed, where):
        """The native reader for local_shuffle_seed=seed (None: the shard's, seeded by run.seed); a
        seed with nothing to seed is one warning line at the user's call."""
        if seed is None:
            return self._native
        if shuffle != "blocks":
            why = ("the dataset's random_shuffle() already reads all its rows in a new order every epoch (seeded "
                   "by run.seed): leave it out" if shuffle == "global" else
                   "there is no local shuffle without local_shuffle_buffer_size=: give both, or leave it out")
            warnings.warn(f"trainrt.get_dataset_shard({self._name!r}).{where}(local_shuffle_seed=...) is not used: "
                          f"{why}", stacklevel=4)
            return self._native
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) < 2 ** 64:
            raise ValueError(f"trainrt.get_dataset_shard({self._name!r}).{where}: local_shuffle_seed={seed!r}: give "
                             f"an int from 0 to 2**64-1, or None")
        if int(seed) not in self._seeded:
            self._seeded[int(seed)] = self._reopen(int(seed))
        return self._seeded[int(seed)]

    def _options(self, batch_size, prefetch_batches, drop_last, local_shuffle_buffer_size, shuffle=None):
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"trainrt.get_dataset_shard({self._name!r}): batch_size={batch_size!r}: give a "
                             f"positive int (rows per rank)")
        if shuffle is None:
            shuffle = "global" if self._epoch_shuffle else ("blocks" if local_shuffle_buffer_size else "none")
        return {"batch_size": batch_size * (self._ranks if self._split else 1), "drop_last": bool(drop_last),
                "pad": False, "prefetch_batches": max(1, int(prefetch_batches or 1)), "shuffle": shuffle,
                "shuffle_buffer": int(local_shuffle_buffer_size or 0), "columns": None}

    def _epoch(self, native, options, batch_format, convert):
        state, order = self._state, native.order_key(options)
        epoch, next_batch = state.epochs, 0
        if state.resume is not None:
            epoch, next_batch = native.resume_position(options, {"epoch": state.resume[0],
                                                                 "next_batch": state.resume[1],
                                                                 "order": state.resume[2]})
            state.resume = None
        batches = native.iter_batches(options, epoch, next_batch)
        state.epochs, state.reading = epoch + 1, (batches, order)
        for batch in batches:
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


def _tf_part(columns, type_spec, argument, inferred):
    """(batch -> its array or {column: array}, the tf spec of that) for to_tf's `argument`_columns;
    a given type spec's dtype is the arrays' (a tf.RaggedTensorSpec: ragged tensors)."""
    import tensorflow as tf
    names = [columns] if isinstance(columns, str) else list(columns)
    for name in names:
        if name not in inferred:
            raise ValueError(f"trainrt.DataIterator.to_tf: {argument}_columns names {name!r}, not a column "
                             f"({', '.join(inferred)})")
    if type_spec is None:
        specs = {name: inferred[name] for name in names}
    elif isinstance(columns, str) and isinstance(type_spec, tf.TypeSpec):
        specs = {columns: type_spec}
    elif not isinstance(columns, str) and isinstance(type_spec, dict) and set(names) <= set(type_spec):
        specs = {name: type_spec[name] for name in names}
    else:
        raise TypeError(f"trainrt.DataIterator.to_tf: {argument}_type_spec={type_spec!r}: give a tf.TypeSpec for "
                        f"one column, a dict of one per column ({', '.join(names)}) for a list, or None")
    if isinstance(columns, str):
        return (lambda batch: _tf_value(batch[columns], specs[columns])), specs[columns]
    return (lambda batch: {name: _tf_value(batch[name], specs[name]) for name in names}), specs


def _tf_value(array, spec):
    import tensorflow as tf
    if isinstance(spec, tf.RaggedTensorSpec):
        return tf.RaggedTensor.from_tensor(tf.convert_to_tensor(array, dtype=spec.dtype))
    return array.astype(spec.dtype.as_numpy_dtype, copy=False)
