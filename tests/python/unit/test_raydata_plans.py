"""trainrt.data's lazy datasets outside a run (docs/guides/ray-data.md): plans run only when rows
are needed; what Ray Data would refuse, or trainrt cannot do, is one clear error naming it.
(What each operation gives is compared with Ray itself: tests/conformance/raydata_ops.py.)"""
import numpy as np
import pytest

import trainrt.data as data


def test_plans_are_lazy_and_split_parts_share_one_run():
    calls = []

    def build(batch):
        calls.append(len(batch["id"]))
        return batch
    dataset = data.range(10).map_batches(build)
    assert calls == []
    train, test = dataset.train_test_split(0.3)
    assert (train.count(), test.count()) == (7, 3)
    assert calls == [10]  # one run of the plan for both parts


def test_seeded_shuffle_is_one_order_and_unseeded_keeps_rows_for_the_reader():
    ids = [r["id"] for r in data.range(20).random_shuffle(seed=3).take_all()]
    assert ids == [r["id"] for r in data.range(20).random_shuffle(seed=3).take_all()]
    assert sorted(ids) == list(range(20)) and ids != list(range(20))
    unseeded = data.range(5).random_shuffle().map(lambda r: r)
    assert unseeded._epoch_shuffle and sorted(r["id"] for r in unseeded.take_all()) == list(range(5))


def test_callable_class_is_made_once_with_its_arguments():
    class AddK:
        made = 0

        def __init__(self, k):
            AddK.made += 1
            self.k = k

        def __call__(self, batch):
            return {"id": batch["id"] + self.k}
    out = data.range(10).map_batches(AddK, batch_size=3, fn_constructor_args=(100,)).take_all()
    assert [r["id"] for r in out] == list(range(100, 110)) and AddK.made == 1


@pytest.mark.parametrize("make, words", [
    (lambda: data.from_items([{"a": 1}, {"b": 2}]).count(), "every row needs the same keys"),
    (lambda: data.range(3).map_batches(lambda b: None).count(), "returned None"),
    (lambda: data.range(3).map(lambda r: 1).count(), "return a dict"),
    (lambda: data.range(3).select_columns(["nope"]).count(), "no column 'nope'"),
    (lambda: data.range(3).map_batches(lambda b: b, batch_size=0), "batch_size=0"),
    (lambda: data.range(3).map_batches(lambda b: b, batch_format="arrow"), "batch_format='arrow'"),
    (lambda: data.range(3).filter(expr="id > 1"), "expr="),
    (lambda: data.range(3).map_batches(lambda b: b, fn_constructor_args=(1,)), "callable class"),
    (lambda: data.read_csv("hf://datasets/x"), "not a path on this cluster"),
    (lambda: data.read_parquet("/nonexistent/x.parquet"), "/nonexistent/x.parquet does not exist"),
    (lambda: _trainer(datasets={"train": [1, 2]}), "holds a list: give a trainrt.data dataset"),
    (lambda: _trainer(datasets={"train": data.range(4)}, dataset_config=_config(datasets_to_split=["valid"])),
     "names 'valid', which datasets= does not have (train)"),
    (lambda: _trainer(datasets={"train": data.range(4)}, dataset_config={"datasets_to_split": "all"}),
     "takes a trainrt.DataConfig"),
])
def test_refusals_name_what_is_wrong(make, words):
    with pytest.raises((ValueError, TypeError)) as raised:
        make()
    assert words in str(raised.value) and "\n" not in str(raised.value)


def _trainer(**kwargs):
    import trainrt
    return trainrt.DataParallelTrainer(lambda: None, **kwargs)


def _config(**kwargs):
    import trainrt
    return trainrt.DataConfig(**kwargs)


def test_execution_hints_are_a_warning_and_unknown_arguments_an_error():
    with pytest.warns(UserWarning, match="concurrency"):
        data.range(3).map_batches(lambda b: b, concurrency=4)
    with pytest.raises(TypeError, match="unexpected keyword argument 'batchsize'"):
        data.range(3).map_batches(lambda b: b, batchsize=4)


def test_preprocessors_fit_then_transform():
    from trainrt.data.preprocessors import Concatenator, StandardScaler
    dataset = data.from_items([{"a": float(i), "b": 2.0 * i, "y": i} for i in range(4)])
    scaled = StandardScaler(columns=["a"]).fit_transform(dataset).take_batch(4)["a"]
    assert np.allclose(scaled, (np.arange(4) - 1.5) / np.std(np.arange(4)))
    joined = Concatenator(columns=["a", "b"], output_column_name="x").transform(dataset).take_batch(2)
    assert joined["x"].tolist() == [[0.0, 0.0], [1.0, 2.0]] and sorted(joined) == ["x", "y"]
