"""A Ray Data Dataset as trainrt holds one: a lazy plan over columns in memory. Nothing runs until
the rows are needed (count(), take(), iteration, or a Trainer's fit() writing datasets=), and then
in the one process that needs them: the ranks a plain python3's fit() starts run the script again,
and only rank 0 executes the plans when it writes the run's dataset file (ingest.py).

An unseeded random_shuffle() is what Ray does each epoch: trainrt's reader shuffles such a dataset
anew every epoch, seeded by run.seed and the epoch, so a resumed run reads the same order as the
uninterrupted one. It stays an epoch shuffle through row-wise transforms (map, map_batches,
filter, column edits); anything that depends on the order (split, limit, take) shuffles the rows
there, once."""
import inspect
import warnings

import numpy as np

from . import columns as cols

DEFAULT_MAP_BATCH_SIZE = 1024  # Ray's default for map_batches(batch_size="default")

# Ray's execution hints: where Ray would run a transform (tasks, actors, GPUs); trainrt runs it in
# rank 0's process, so they change nothing here and each is one warning line.
_EXECUTION_HINTS = ("concurrency", "num_cpus", "num_gpus", "memory", "compute", "ray_remote_args",
                    "ray_remote_args_fn", "zero_copy_batch", "udf_modifying_row_count", "scheduling_strategy",
                    "label_selector", "fallback_strategy", "max_calls", "resources", "accelerator_type",
                    "runtime_env")
# The same for Ray's readers (ray.data.read_*: how many blocks and tasks read the files, and where);
# the constructors (from_items, range, ...) take some of them (readers.py).
_READ_HINTS = ("parallelism", "override_num_blocks", "concurrency", "num_cpus", "num_gpus", "memory",
               "ray_remote_args", "label_selector", "fallback_strategy", "max_calls", "resources", "accelerator_type",
               "runtime_env")


class _Once:
    """A plan's columns, computed at the first call and kept (for a dataset several others derive
    from: a split's parts share one shuffle)."""

    def __init__(self, compute):
        self._compute, self._value = compute, None

    def __call__(self):
        if self._value is None:
            self._value = self._compute()
        return self._value


class Dataset:
    """Ray's ray.data.Dataset (trainrt.data.RayDataset): constructors in trainrt.data
    (from_items, read_csv, ...), transforms return new datasets, consumers run the plan."""

    def __init__(self, compute, epoch_shuffle=False, name="dataset"):
        self._compute = compute
        self._epoch_shuffle = epoch_shuffle
        self._name = name

    # --- running the plan ---
    def _columns(self):
        """The rows in order; an epoch shuffle left for the reader (see the module's text)."""
        return self._compute()

    def _ordered(self):
        """The rows as an order-dependent operation sees them: an epoch shuffle applied once."""
        columns = self._columns()
        if self._epoch_shuffle and columns:
            columns = cols.taken(columns, _rng(None).permutation(cols.row_count(columns)))
        return columns

    def materialize(self):
        """This dataset with its rows computed once and kept (Ray's MaterializedDataset)."""
        return Dataset(_Once(self._columns), self._epoch_shuffle, self._name)

    def _derive(self, transform, keeps_epoch_shuffle=True):
        parent = self
        if keeps_epoch_shuffle:
            return Dataset(lambda: transform(parent._columns()), self._epoch_shuffle, self._name)
        return Dataset(lambda: transform(parent._ordered()), False, self._name)

    # --- transforms ---
    def map_batches(self, fn, *, batch_size="default", batch_format="default", fn_args=None, fn_kwargs=None,
                    fn_constructor_args=None, fn_constructor_kwargs=None, **hints):
        _warn_hints("map_batches", hints)
        cols.check_format(batch_format, "map_batches")
        size = DEFAULT_MAP_BATCH_SIZE if batch_size == "default" else batch_size
        if size is not None and (not isinstance(size, int) or size < 1):
            raise ValueError(f"trainrt.data.map_batches: batch_size={batch_size!r}: give a positive int, 'default' "
                             f"({DEFAULT_MAP_BATCH_SIZE}) or None (the whole dataset in one batch)")
        call = _udf(fn, fn_constructor_args, fn_constructor_kwargs, "map_batches")
        args, kwargs = tuple(fn_args or ()), dict(fn_kwargs or {})

        def transform(columns):
            count = cols.row_count(columns)
            step = size or max(count, 1)
            outputs = [cols.from_output(call()(cols.as_format(cols.sliced(columns, start, start + step),
                                                              batch_format), *args, **kwargs), "map_batches")
                       for start in range(0, count, step)]
            return cols.joined(outputs, "map_batches")
        return self._derive(transform)

    def map(self, fn, *, fn_args=None, fn_kwargs=None, fn_constructor_args=None, fn_constructor_kwargs=None,
            **hints):
        _warn_hints("map", hints)
        call = _udf(fn, fn_constructor_args, fn_constructor_kwargs, "map")
        args, kwargs = tuple(fn_args or ()), dict(fn_kwargs or {})
        return self._derive(lambda columns: cols.from_rows([_row_out(call()(row, *args, **kwargs), "map")
                                                            for row in cols.to_rows(columns)], "map"))

    def flat_map(self, fn, *, fn_args=None, fn_kwargs=None, **hints):
        _warn_hints("flat_map", hints)
        args, kwargs = tuple(fn_args or ()), dict(fn_kwargs or {})
        return self._derive(lambda columns: cols.from_rows([_row_out(out, "flat_map") for row in cols.to_rows(columns)
                                                            for out in fn(row, *args, **kwargs)], "flat_map"))

    def filter(self, fn=None, *, expr=None, **hints):
        _warn_hints("filter", hints)
        if fn is None or expr is not None:
            raise ValueError("trainrt.data.filter: give a function of a row (filter(lambda row: ...)); expr= "
                             "strings are not supported")
        return self._derive(lambda columns: cols.taken(columns, np.array(
            [bool(fn(row)) for row in cols.to_rows(columns)], dtype=bool)) if columns else columns)

    def add_column(self, col, fn, *, batch_format="pandas", **hints):
        _warn_hints("add_column", hints)
        cols.check_format(batch_format, "add_column")

        def transform(columns):
            value = fn(cols.as_format(columns, batch_format))
            value = value.to_numpy() if hasattr(value, "to_numpy") else np.asarray(value)
            return {**columns, col: value}
        return self._derive(transform)

    def drop_columns(self, cols_, **hints):
        _warn_hints("drop_columns", hints)
        names = [cols_] if isinstance(cols_, str) else list(cols_)

        def transform(columns):
            _known(names, columns, "drop_columns")
            return {n: a for n, a in columns.items() if n not in names}
        return self._derive(transform)

    def select_columns(self, cols_, **hints):
        _warn_hints("select_columns", hints)
        names = [cols_] if isinstance(cols_, str) else list(cols_)
        return self._derive(lambda columns: {n: columns[n] for n in _known(names, columns, "select_columns")})

    def rename_columns(self, names, **hints):
        _warn_hints("rename_columns", hints)
        mapping = dict(names)

        def transform(columns):
            _known(list(mapping), columns, "rename_columns")
            return {mapping.get(n, n): a for n, a in columns.items()}
        return self._derive(transform)

    def random_shuffle(self, *, seed=None, num_blocks=None, **hints):
        """Unseeded: a new order every epoch (the reader's, from run.seed); seeded: one order, as Ray's.
        num_blocks: there are no blocks here (see repartition)."""
        _warn_hints("random_shuffle", hints)
        if seed is None:
            return Dataset(self._compute, True, self._name)
        return self._derive(lambda columns: cols.taken(columns, _rng(seed).permutation(cols.row_count(columns))),
                            keeps_epoch_shuffle=False)

    def repartition(self, num_blocks=None, target_num_rows_per_block=None, *, strict=False, shuffle=False, keys=None,
                    sort=False):
        """Blocks do not exist here (a rank streams chunks of the file): the rows stay as they are
        whatever the blocks' number or size, or are shuffled with shuffle=True, as Ray's. keys= and
        sort= (rows grouped or sorted by key) are refused: sort(key) orders the rows by key."""
        for name, given in (("keys", keys is not None), ("sort", bool(sort))):
            if given:
                raise ValueError(f"trainrt.data.repartition({name}=...) is not supported: trainrt has no blocks to "
                                 f"partition by key; use sort(key) to order the rows by a column")
        return self.random_shuffle() if shuffle else self

    def limit(self, limit):
        return self._derive(lambda columns: cols.sliced(columns, 0, int(limit)), keeps_epoch_shuffle=False)

    def sort(self, key, descending=False):
        keys = [key] if isinstance(key, str) else list(key)

        def transform(columns):
            order = np.lexsort([columns[k] for k in reversed(_known(keys, columns, "sort"))], axis=-1)
            return cols.taken(columns, order[::-1] if descending else order)
        return self._derive(transform, keeps_epoch_shuffle=False)

    def union(self, *others):
        parts = [self] + list(others)
        return Dataset(lambda: cols.joined([part._ordered() for part in parts], "union"), False, self._name)

    # --- splits: the parts share one computation of this dataset ---
    def split_at_indices(self, indices):
        shared = _Once(self._ordered)
        bounds = [0] + [int(i) for i in indices] + [None]
        return [Dataset(lambda a=a, b=b: cols.sliced(shared(), a, b), False, self._name)
                for a, b in zip(bounds[:-1], bounds[1:])]

    def split_proportionately(self, proportions):
        shared = _Once(self._ordered)
        parts = []
        for index in range(len(proportions) + 1):
            def part(index=index):
                count = cols.row_count(shared())
                cuts = [0] + [int(sum(proportions[:i + 1]) * count) for i in range(len(proportions))] + [count]
                return cols.sliced(shared(), cuts[index], cuts[index + 1])
            parts.append(Dataset(part, False, self._name))
        return parts

    def split(self, n, *, equal=False, locality_hints=None):
        shared = _Once(self._ordered)

        def part(index):
            count = cols.row_count(shared())
            size = count // n if equal else -(-count // n)
            return cols.sliced(shared(), index * size, min((index + 1) * size, count))
        return [Dataset(lambda i=i: part(i), False, self._name) for i in range(int(n))]

    def train_test_split(self, test_size, *, shuffle=False, seed=None, stratify=None):
        """Ray's: the last test_size (a fraction of the rows, rounded down, or a count) after an
        optional shuffle. stratify= is refused."""
        if stratify is not None:
            raise ValueError(f"trainrt.data.train_test_split(stratify={stratify!r}) is not supported: split each "
                             f"class's rows (filter) and union the parts, or leave stratify out")
        source = self.random_shuffle(seed=seed if seed is not None else _UNSEEDED) if shuffle else self
        shared = _Once(source._ordered)

        def cut():
            count = cols.row_count(shared())
            test = int(count * test_size) if isinstance(test_size, float) else int(test_size)
            if not 0 <= test <= count:
                raise ValueError(f"trainrt.data.train_test_split: test_size={test_size!r} of {count} rows")
            return count - test
        return [Dataset(lambda: cols.sliced(shared(), 0, cut()), False, self._name),
                Dataset(lambda: cols.sliced(shared(), cut(), None), False, self._name)]

    # --- consumers (run the plan in this process) ---
    def count(self):
        return cols.row_count(self._columns())

    def columns(self, fetch_if_missing=True):
        return list(self._columns())

    def schema(self, fetch_if_missing=True):
        return Schema(self._columns())

    def take(self, limit=20):
        return cols.to_rows(cols.sliced(self._ordered(), 0, int(limit)))

    def take_all(self, limit=None):
        return cols.to_rows(self._ordered() if limit is None else cols.sliced(self._ordered(), 0, int(limit)))

    def take_batch(self, batch_size=20, *, batch_format="default"):
        cols.check_format(batch_format, "take_batch")
        return cols.as_format(cols.sliced(self._ordered(), 0, int(batch_size)), batch_format)

    def show(self, limit=20):
        for row in self.take(limit):
            print(row)

    def iter_rows(self):
        return iter(cols.to_rows(self._ordered()))

    def iter_batches(self, *, prefetch_batches=1, batch_size=256, batch_format="default", drop_last=False,
                     local_shuffle_buffer_size=None, local_shuffle_seed=None):
        """Batches of the rows in memory (prefetch_batches: they are all there already); with
        local_shuffle_buffer_size, the rows shuffled within consecutive windows of that many rows
        (seeded by local_shuffle_seed, else as an unseeded shuffle: _rng)."""
        cols.check_format(batch_format, "iter_batches")
        if local_shuffle_seed is not None and not local_shuffle_buffer_size:
            warnings.warn("trainrt.data.iter_batches(local_shuffle_seed=...) is not used without "
                          "local_shuffle_buffer_size= (there is no local shuffle): give both, or leave it out",
                          stacklevel=2)
        columns = _local_shuffled(self._ordered(), local_shuffle_buffer_size, local_shuffle_seed)
        count = cols.row_count(columns)
        step = batch_size or max(count, 1)
        for start in range(0, count, step):
            if drop_last and start + step > count:
                return
            yield cols.as_format(cols.sliced(columns, start, start + step), batch_format)

    def iter_torch_batches(self, *, prefetch_batches=1, batch_size=256, dtypes=None, device="auto", collate_fn=None,
                           drop_last=False, local_shuffle_buffer_size=None, local_shuffle_seed=None, pin_memory=False):
        if pin_memory:
            warnings.warn("trainrt.data.iter_torch_batches(pin_memory=True) is not used: the batches are made from "
                          "rows in memory, unpinned (leave it out)", stacklevel=2)
        for batch in self.iter_batches(batch_size=batch_size, drop_last=drop_last,
                                       local_shuffle_buffer_size=local_shuffle_buffer_size,
                                       local_shuffle_seed=local_shuffle_seed):
            yield collate_fn(batch) if collate_fn else cols.to_torch(batch, dtypes, device)

    def to_pandas(self, limit=None):
        return cols.as_format(self._ordered() if limit is None else cols.sliced(self._ordered(), 0, limit), "pandas")

    def to_numpy_refs(self, *args, **kwargs):
        raise NotImplementedError("trainrt.data: there is no object store: use take_batch() or iter_batches()")

    def sum(self, on):
        return _aggregate(self, on, np.sum)

    def min(self, on):
        return _aggregate(self, on, np.min)

    def max(self, on):
        return _aggregate(self, on, np.max)

    def mean(self, on):
        return _aggregate(self, on, np.mean)

    def std(self, on, ddof=1):
        return _aggregate(self, on, lambda a: np.std(a, ddof=ddof))

    def unique(self, column):
        return list(np.unique(self._columns()[_known([column], self._columns(), "unique")[0]]))

    def __repr__(self):
        return f"trainrt.data.RayDataset({self._name}, epoch_shuffle={self._epoch_shuffle})"


class Schema:
    """names and types of a dataset's columns (Ray's Schema: .names, .types)."""

    def __init__(self, columns):
        self.names = list(columns)
        self.types = [array.dtype if array.ndim == 1 else (array.dtype, array.shape[1:]) for array in columns.values()]

    def __repr__(self):
        return "Column  Type\n" + "\n".join(f"{n}  {t}" for n, t in zip(self.names, self.types))


_UNSEEDED = object()


def _rng(seed):
    """An unseeded shuffle inside a run is seeded by run.seed (the same split at every start of the
    run: a resume reads the same rows); outside a run it is random, as Ray's."""
    if seed is None or seed is _UNSEEDED:
        from .. import _state
        seed = _state.settings().run.seed if _state._handle is not None else None
    return np.random.default_rng(seed)


def _local_shuffled(columns, window, seed):
    """Ray's local shuffle buffer: the rows permuted within consecutive windows of `window` rows."""
    if not window or not columns:
        return columns
    count, window, rng = cols.row_count(columns), int(window), _rng(seed)
    order = np.concatenate([start + rng.permutation(min(window, count - start)) for start in range(0, count, window)])
    return cols.taken(columns, order)


def _udf(fn, constructor_args, constructor_kwargs, where):
    """A function, or a callable class (Ray's actor form) made once per run of the plan."""
    if not inspect.isclass(fn):
        if constructor_args or constructor_kwargs:
            raise ValueError(f"trainrt.data.{where}: fn_constructor_args are for a callable class, and "
                             f"{getattr(fn, '__name__', fn)!r} is a function")
        return lambda: fn
    made = []

    def instance():
        if not made:
            made.append(fn(*(constructor_args or ()), **(constructor_kwargs or {})))
        return made[0]
    return instance


def _row_out(row, where):
    if not isinstance(row, dict):
        raise ValueError(f"trainrt.data.{where}: the function returned a {type(row).__name__}: return a dict "
                         f"(a row: {{column: value}})")
    return row


def _known(names, columns, where):
    missing = [name for name in names if name not in columns]
    if missing:
        raise ValueError(f"trainrt.data.{where}: no column {', '.join(map(repr, missing))} (the columns: "
                         f"{', '.join(columns)})")
    return names


def _aggregate(dataset, on, reduce):
    columns = dataset._columns()
    return reduce(columns[_known([on], columns, "aggregate")[0]]).item()


def _warn_hints(where, hints, known=_EXECUTION_HINTS, runs="runs the transform", stacklevel=3):
    """One warning line per Ray hint in `hints` (names in `known`: they change nothing here); any
    other name is Python's TypeError for an unexpected keyword. stacklevel: the user's call, as
    warnings.warn counts from this function."""
    unknown = [name for name in hints if name not in known]
    if unknown:
        raise TypeError(f"trainrt.data.{where}() got an unexpected keyword argument {unknown[0]!r}")
    for name in hints:
        warnings.warn(f"trainrt.data.{where}({name}=...) is not used: trainrt {runs} in rank 0's process when "
                      f"the run starts (leave it out)", stacklevel=stacklevel)
