"""Ray Data's arguments on trainrt.data (docs/guides/ray-data.md): every one Ray accepts is honoured,
one warning line (a hint that changes nothing here: what, where, what to do) or refused with one
line; a keyword Ray does not take is Python's TypeError."""
import gzip
import os
import shutil
import types
import warnings

import numpy as np
import pytest

import trainrt.data as data


@pytest.fixture
def files(tmp_path):
    """Two CSV files (a, b), a gzipped text file, a .npy and a Parquet file with a binary tensor."""
    (tmp_path / "csv").mkdir()
    (tmp_path / "csv" / "a.csv").write_text("x,y\n1,2\n3,4\n")
    (tmp_path / "csv" / "b.csv").write_text("x,y\n5,6\n")
    (tmp_path / "csv" / "notes.txt").write_text("not a csv\n")
    with gzip.open(tmp_path / "lines.txt.gz", "wt") as file:
        file.write("one\n\ntwo\n")
    np.save(tmp_path / "n.npy", np.arange(4))
    import pyarrow
    from pyarrow import parquet
    parquet.write_table(pyarrow.table({"a": [1, 2, 3], "t": [np.array([i, 1.0], np.float32).tobytes()
                                                             for i in (0, 1, 2)]}), tmp_path / "p.parquet")
    return tmp_path


@pytest.mark.parametrize("make, name", [
    (lambda d: data.from_items([1, 2], parallelism=2), "parallelism"),
    (lambda d: data.range(3, override_num_blocks=2), "override_num_blocks"),
    (lambda d: data.range_tensor(3, concurrency=2), "concurrency"),
    (lambda d: data.from_pandas(__import__("pandas").DataFrame({"a": [1]}), override_num_blocks=1),
     "override_num_blocks"),
    (lambda d: data.read_csv(d / "csv", num_cpus=2), "num_cpus"),
    (lambda d: data.read_csv(d / "csv", ray_remote_args={"num_cpus": 1}), "ray_remote_args"),
    (lambda d: data.read_numpy(d / "n.npy", concurrency=2), "concurrency"),
    (lambda d: data.read_parquet(d / "p.parquet", use_threads=False), "use_threads"),
    (lambda d: data.read_text(d / "lines.txt.gz", runtime_env={}), "runtime_env"),
])
def test_read_hints_are_one_warning_line_at_the_call(files, make, name):
    with pytest.warns(UserWarning) as caught:
        make(files)
    assert len(caught) == 1 and caught[0].filename == __file__
    message = str(caught[0].message)
    assert f"({name}=...) is not used" in message and "leave it out" in message and "\n" not in message


@pytest.mark.parametrize("make, name", [
    (lambda d: data.from_items([1], concurrency=2), "concurrency"),  # Ray's from_items has no concurrency
    (lambda d: data.read_csv(d / "csv", delimiter=";"), "delimiter"),
    (lambda d: data.read_numpy(d / "n.npy", num_cpus=1), "num_cpus"),
    (lambda d: data.range(3).random_shuffle(bogus=1), "bogus"),
])
def test_unknown_reader_keywords_are_type_errors(files, make, name):
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{name}'"):
        make(files)


def test_file_arguments_that_change_the_rows_are_honoured(files):
    csv = files / "csv"
    with_paths = data.read_csv(csv, include_paths=True).take_all()
    assert [(r["x"], os.path.basename(r["path"])) for r in with_paths] == [(1, "a.csv"), (3, "a.csv"), (5, "b.csv")]
    assert data.read_csv([csv / "a.csv", csv / "gone.csv"], ignore_missing_paths=True).count() == 2
    assert data.read_csv(csv, file_extensions=["txt"], read_options=_csv_names(["line"])).take_all() == \
        [{"line": "not a csv"}]
    assert data.read_csv(csv, partition_filter=lambda paths: [p for p in paths if p.endswith("b.csv")]).count() == 1
    text = data.read_text(files / "lines.txt.gz", arrow_open_stream_args={"compression": "gzip"})
    assert [r["text"] for r in text.take_all()] == ["one", "two"]
    assert data.read_numpy(files / "n.npy", mmap_mode="r").take_batch(4)["data"].tolist() == [0, 1, 2, 3]


def test_file_shuffle_orders_the_files_by_its_seed(files):
    for name in "cdefgh":
        (files / "csv" / f"{name}.csv").write_text(f"x,y\n{ord(name)},0\n")
    csv = sorted(p for p in os.listdir(files / "csv") if p.endswith(".csv"))
    seeded = data.read_csv(files / "csv", shuffle=types.SimpleNamespace(seed=7), include_paths=True)
    order = [os.path.basename(path) for path in dict.fromkeys(r["path"] for r in seeded.take_all())]
    assert order == [csv[i] for i in np.random.default_rng(7).permutation(len(csv))]
    assert sorted(r["x"] for r in data.read_csv(files / "csv", shuffle="files").take_all()) == \
        sorted(r["x"] for r in data.read_csv(files / "csv").take_all())


def test_parquet_arguments_are_honoured(files):
    import pyarrow.dataset as pds
    rows = data.read_parquet(files / "p.parquet", filter=pds.field("a") > 1,
                             tensor_column_schema={"t": (np.float32, (2,))}).take_all()
    assert [(r["a"], r["t"].tolist()) for r in rows] == [(2, [1.0, 1.0]), (3, [2.0, 1.0])]
    (files / "q").mkdir()
    for name in ("p1", "p2"):
        shutil.copy(files / "p.parquet", files / "q" / f"{name}.parquet")
    assert data.read_parquet(files / "q", skip_paths=[str(files / "q" / "p2.parquet")]).count() == 3


@pytest.mark.parametrize("make, words", [
    (lambda d: data.read_csv(d / "csv", filesystem=object()), "read_csv(filesystem=...) is not supported"),
    (lambda d: data.read_json(d / "x.jsonl", partitioning=object()), "read_json(partitioning=...) is not supported"),
    (lambda d: data.read_csv(d / "csv", shuffle="rows"), "read_csv(shuffle=...) is not supported"),
    (lambda d: data.read_parquet(d / "p.parquet", include_row_hash=True), "include_row_hash=...) is not supported"),
    (lambda d: data.read_parquet(d / "p.parquet", catalog=object()), "read_parquet(catalog=...) is not supported"),
    (lambda d: data.read_json(d / "x.jsonl", lines=True, parse_options=object()), "lines=True"),
    (lambda d: data.read_csv([d / "gone.csv"], ignore_missing_paths=True), "no files to read"),
    (lambda d: data.range(4).repartition(2, keys=["id"]), "repartition(keys=...) is not supported"),
    (lambda d: data.range(4).train_test_split(0.5, stratify="id"), "train_test_split(stratify='id')"),
])
def test_arguments_trainrt_cannot_honour_are_refused(files, make, words):
    with pytest.raises(ValueError) as raised:
        make(files)
    assert words in str(raised.value) and "\n" not in str(raised.value)


def test_partitioning_none_is_what_trainrt_does(files):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert data.read_csv(files / "csv", partitioning=None, filesystem=None).count() == 3


def test_dataset_local_shuffle_is_seeded_within_windows():
    def ids(seed):
        return np.concatenate([b["id"] for b in data.range(40).iter_batches(
            batch_size=8, local_shuffle_buffer_size=10, local_shuffle_seed=seed)])
    first = ids(3)
    assert first.tolist() == ids(3).tolist() and first.tolist() != list(range(40))
    assert all(sorted(first[i:i + 10]) == list(range(i, i + 10)) for i in range(0, 40, 10))
    with pytest.warns(UserWarning, match=r"iter_batches\(local_shuffle_seed=...\) is not used without"):
        list(data.range(4).iter_batches(local_shuffle_seed=3))


def test_context_options_that_change_nothing_warn_when_set():
    from trainrt.data import ExecutionOptions
    options = ExecutionOptions()
    for name in ("locality_with_output", "verbose_progress"):
        with pytest.warns(UserWarning, match=f"execution_options.{name} = True is not used") as caught:
            setattr(options, name, True)
        assert caught[0].filename == __file__ and "leave it unset" in str(caught[0].message)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            setattr(options, name, False)
    with pytest.raises(AttributeError):
        options.resource_limits = 1


def _csv_names(names):
    from pyarrow import csv
    return csv.ReadOptions(column_names=names)


# --- a rank's shard (DataIterator) over a dataset file, as trainrt.get_dataset_shard gives it ---

def _shard(tmp_path, run_seed=0, epoch_shuffle=False):
    from trainrt._raydata.iterator import DataIterator, ShardState
    from trainrt._trainrt import open_dataset, write_dataset
    path = str(tmp_path / "datasets")
    if not os.path.exists(path):
        write_dataset(path, [("train", [("x", np.arange(64, dtype=np.int64)),
                                        ("y", np.arange(64, dtype=np.float64))])], "test")

    def reopen(seed):
        return open_dataset(path, "train", 0, 1, seed)
    return DataIterator("train", reopen(run_seed), ShardState(), split=True, epoch_shuffle=epoch_shuffle, dtypes={},
                        ranks=1, reopen=reopen)


def _epochs(shard, **kwargs):
    batches = shard.iter_batches(batch_size=8, local_shuffle_buffer_size=16, **kwargs)
    return [np.concatenate([b["x"] for b in batches]).tolist() for _ in range(2)]


def test_local_shuffle_seed_replaces_the_run_seed(tmp_path):
    seeded = _epochs(_shard(tmp_path, run_seed=0), local_shuffle_seed=5)
    assert seeded == _epochs(_shard(tmp_path, run_seed=1), local_shuffle_seed=5)
    assert seeded != _epochs(_shard(tmp_path, run_seed=0), local_shuffle_seed=6)
    assert _epochs(_shard(tmp_path, run_seed=0)) != _epochs(_shard(tmp_path, run_seed=1))
    assert sorted(seeded[0]) == list(range(64)) and seeded[0] != seeded[1]  # a new order each epoch
    with pytest.raises(ValueError, match="local_shuffle_seed=-1: give an int"):
        _shard(tmp_path).iter_batches(local_shuffle_buffer_size=16, local_shuffle_seed=-1)


@pytest.mark.parametrize("method", ["iter_batches", "iter_torch_batches"])
@pytest.mark.parametrize("epoch_shuffle, kwargs, words", [
    (False, {}, "no local shuffle without local_shuffle_buffer_size="),
    (True, {"local_shuffle_buffer_size": 16}, "random_shuffle() already reads all its rows"),
])
def test_local_shuffle_seed_with_nothing_to_seed_warns(tmp_path, method, epoch_shuffle, kwargs, words):
    with pytest.warns(UserWarning) as caught:
        getattr(_shard(tmp_path, epoch_shuffle=epoch_shuffle), method)(local_shuffle_seed=3, **kwargs)
    assert len(caught) == 1 and caught[0].filename == __file__
    assert f"{method}(local_shuffle_seed=...) is not used" in str(caught[0].message)
    assert words in str(caught[0].message)


def test_to_tf_takes_additional_columns_and_type_specs(tmp_path):
    tf = pytest.importorskip("tensorflow")
    shard = _shard(tmp_path)
    dataset = shard.to_tf("x", ["y"], additional_columns="y", batch_size=4,
                          feature_type_spec=tf.TensorSpec([None], tf.float32, name="features"))
    features_spec, labels_spec, extra_spec = dataset.element_spec
    assert features_spec.dtype == tf.float32 and features_spec.name == "features"
    assert labels_spec["y"].dtype == tf.float64 and extra_spec.name == "y"
    features, labels, extra = next(iter(dataset))
    assert features.dtype == tf.float32 and features.numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert labels["y"].numpy().tolist() == extra.numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    options = dataset.options().experimental_distribute.auto_shard_policy
    assert options == tf.data.experimental.AutoShardPolicy.OFF
    with pytest.raises(TypeError, match="label_type_spec=.*give a tf.TypeSpec for one column, a dict"):
        shard.to_tf("x", ["y"], label_type_spec=tf.TensorSpec([None], tf.float32))


def test_pin_memory_is_one_warning_line(tmp_path):
    pytest.importorskip("torch")
    with pytest.warns(UserWarning, match=r"iter_torch_batches\(pin_memory=True\) is not used") as caught:
        _shard(tmp_path).iter_torch_batches(pin_memory=True)
    assert len(caught) == 1 and caught[0].filename == __file__


def test_hive_partitioned_directories_are_refused_unless_partitioning_is_none(tmp_path):
    (tmp_path / "year=2024").mkdir()
    (tmp_path / "year=2024" / "a.csv").write_text("x\n1\n2\n")
    with pytest.raises(ValueError) as raised:
        data.read_csv(str(tmp_path)).take_all()
    assert "year=2024" in str(raised.value) and "partitioning=None" in str(raised.value)
    assert "\n" not in str(raised.value)
    assert [row["x"] for row in data.read_csv(str(tmp_path), partitioning=None).take_all()] == [1, 2]
    assert data.read_csv(str(tmp_path / "year=2024")).count() == 2  # a directory given itself names no partition
