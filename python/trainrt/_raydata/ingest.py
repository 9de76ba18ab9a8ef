"""A Trainer's datasets= at the start of a run: rank 0 runs each dataset's plan and writes the rows
into the run's dataset file (one split per dataset name, trainrt._trainrt.layout.datasets), the
other ranks wait for it, and every rank's trainrt.get_dataset_shard(name) streams its shard
(iterator.py). The file is rewritten at every start, from the same plans: a resumed run reads the
same rows. What cannot land (a column of strings, no rows) is one line before the function runs,
and the run ends with the data exit code."""
import json
import warnings

import numpy as np

from .. import _state
from .dataset import Dataset
from .iterator import DataIterator, ShardState

POSITIONS = "_ray_data_positions"  # the shards' epochs and positions, in every reported checkpoint


class DataConfig:
    """Ray's DataConfig: which datasets are split across the ranks ("all", or a list of names);
    the others are read whole by every rank."""

    def __init__(self, datasets_to_split="all", execution_options=None, enable_shard_locality=True):
        if datasets_to_split != "all" and not isinstance(datasets_to_split, (list, tuple)):
            raise ValueError(f"trainrt.DataConfig: datasets_to_split={datasets_to_split!r}: give 'all' or a list of "
                             f"dataset names")
        if execution_options is not None:
            warnings.warn("trainrt.DataConfig(execution_options=...) is not used: trainrt's reader streams each "
                          "rank's shard with its own prefetching (prefetch_batches)", stacklevel=2)
        self.datasets_to_split = datasets_to_split

    def splits(self, name):
        return self.datasets_to_split == "all" or name in self.datasets_to_split


def check_datasets(datasets, dataset_config):
    """The Trainer's arguments, checked in its constructor (the driver says what is wrong, once)."""
    if dataset_config is not None and not isinstance(dataset_config, DataConfig):
        raise TypeError(f"trainrt: dataset_config= takes a trainrt.DataConfig, not a "
                        f"{type(dataset_config).__name__} (a custom DataConfig subclass is not supported)")
    for name, dataset in dict(datasets or {}).items():
        if not isinstance(dataset, Dataset):
            raise TypeError(f"trainrt: datasets={{{name!r}: ...}} holds a {type(dataset).__name__}: give a "
                            f"trainrt.data dataset (trainrt.data.from_items, read_csv, read_parquet, from_pandas, "
                            f"from_numpy, from_huggingface, ...)")
    config = dataset_config or DataConfig()
    if config.datasets_to_split != "all":
        unknown = [n for n in config.datasets_to_split if n not in (datasets or {})]
        if unknown:
            raise ValueError(f"trainrt: DataConfig(datasets_to_split=) names {unknown[0]!r}, which datasets= does "
                             f"not have ({', '.join(datasets or {}) or 'none'})")
    return config


class DatasetsError(RuntimeError):
    """Rank 0 could not write the datasets: every rank raises it after the broadcast (one_line: the
    runtime says it once, the ranks agreed on it), the run ends with the data exit code."""

    def __init__(self, message):
        from .._trainrt import exit_codes
        super().__init__(message)
        self.exit_code = exit_codes.data
        self.one_line = True


def setup(datasets, config):
    """Collective, before the function runs: the datasets written by rank 0, every rank's shards."""
    from .._trainrt import layout
    context, session = _state.context(), _state.session()
    path = layout.datasets(context.run_dir)
    outcome = {}
    if context.world_rank == 0:
        try:
            outcome = {"dtypes": _write(path, datasets)}
        except Exception as error:  # noqa: BLE001 - every failure of a user's plan is reported alike
            outcome = {"error": f"{type(error).__name__}: {error}"}
    outcome = json.loads(session.broadcast_bytes(json.dumps(outcome).encode(), 0))
    if "error" in outcome:
        raise DatasetsError(f"datasets= could not be written to {path}: {outcome['error']}")
    _state.session_local("ray_datasets", dict).update(
        shard=shard, path=path, config=config, epoch_shuffle={n: d._epoch_shuffle for n, d in datasets.items()},
        dtypes=outcome["dtypes"], states={n: ShardState() for n in datasets})
    _state.add_checkpoint_hooks(_save_positions, _restore_positions)


def _write(path, datasets):
    """Each dataset's rows into `path`; {dataset: {column: numpy dtype to restore}}."""
    from .._trainrt import write_dataset
    splits, restore = [], {}
    for name, dataset in datasets.items():
        columns = dataset._columns()
        stored = []
        for column, array in columns.items():
            array, original = _storable(name, column, np.asarray(array))
            stored.append((column, np.ascontiguousarray(array)))
            if original:
                restore.setdefault(name, {})[column] = original
        splits.append((name, stored))
    write_dataset(path, splits, "trainrt.data (a Trainer's datasets=)")
    return restore


def _storable(dataset, column, array):
    """(array in a type the dataset file holds, the dtype to give back or None)."""
    kind = array.dtype.kind
    if kind == "b":
        return array.astype(np.uint8), "bool"
    if kind == "u" and array.dtype.itemsize > 1:
        wider = np.int64 if array.dtype.itemsize >= 4 else np.int32
        if array.dtype.itemsize == 8 and array.size and array.max() > np.iinfo(np.int64).max:
            raise ValueError(f"dataset '{dataset}': column '{column}' has uint64 values above int64's range")
        return array.astype(wider), array.dtype.name
    if kind in "iuf":
        return array, None
    held = "strings" if kind in "OUS" else f"{array.dtype} values"
    raise ValueError(f"dataset '{dataset}': column '{column}' holds {held}; trainrt's dataset files hold numbers: "
                     f"make it numbers in map_batches (token ids, category codes) or leave it out (drop_columns)")


def shard(name):
    """This rank's DataIterator of dataset `name` (trainrt.get_dataset_shard)."""
    from .._trainrt import open_dataset
    datasets = _state.session_local("ray_datasets", dict)
    if "states" not in datasets:
        raise KeyError(f"trainrt.get_dataset_shard({name!r}): the Trainer was given no datasets= (Ray Data); "
                       f"for data.path's splits use trainrt.get_dataset(split)")
    if name not in datasets["states"]:
        raise KeyError(f"trainrt.get_dataset_shard({name!r}): datasets= has {', '.join(datasets['states'])}")
    context = _state.context()
    split = datasets["config"].splits(name)

    def reopen(seed):
        return open_dataset(datasets["path"], name, context.world_rank if split else 0,
                            context.world_size if split else 1, seed)
    return DataIterator(name, reopen(int(_state.settings().run.seed)), datasets["states"][name], split=split,
                        epoch_shuffle=datasets["epoch_shuffle"][name], dtypes=datasets["dtypes"].get(name, {}),
                        ranks=context.world_size, reopen=reopen)


def _save_positions(checkpoint):
    datasets = _state.session_local("ray_datasets", dict)
    if datasets:
        checkpoint[POSITIONS] = json.dumps({n: state.saved() for n, state in datasets["states"].items()})


def _restore_positions(checkpoint):
    datasets = _state.session_local("ray_datasets", dict)
    if not datasets or POSITIONS not in checkpoint.attributes:
        return
    for name, saved in json.loads(checkpoint[POSITIONS]).items():
        if name in datasets["states"]:
            datasets["states"][name].restore(saved)

