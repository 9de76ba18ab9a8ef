"""tune.sample_from(func): the Tuner's driver calls func once per trial, trial by trial, before the
sweep starts; each call sees the param_space constants and the sample_from values resolved
before it for that trial, a value trainrt's search draws is refused with one line; the values
are kept in the sweep's tuner/ folder (the same sweep run again keeps them), show in each
trial's ResultGrid config, and each trial's pickle of the constants loads its own value."""
import json
import pickle
import types

import pytest

from trainrt import _state, tune
from trainrt._trainrt import layout
from trainrt.tune import sample


def test_called_once_per_trial_in_order_seeing_the_constants_and_earlier_values(tmp_path):
    calls = []
    first = tune.sample_from(lambda spec: calls.append(("first", dict(spec))) or len(calls) * 10)
    second = tune.sample_from(lambda spec: spec["first"] + spec["steps"])
    values = {"steps": 1, "first": first, "second": second}
    sample.resolve(values, {"lr": tune.uniform(0, 1)}, tune.TuneConfig(num_samples=3), str(tmp_path))
    assert calls == [("first", {"steps": 1}), ("first", {"steps": 1}), ("first", {"steps": 1})]
    assert first.values == [10, 20, 30] and second.values == [11, 21, 31]
    assert sample.for_trial(values, 1) == {"steps": 1, "first": 20, "second": 21}


def test_num_samples_per_grid_point_and_functions_without_arguments(tmp_path):
    counter = iter(range(100))
    entry = tune.sample_from(lambda: next(counter))
    sample.resolve({"n": entry}, {"opt": tune.grid_search(["a", "b", "c"])}, tune.TuneConfig(num_samples=2),
                   str(tmp_path))
    assert entry.values == [0, 1, 2, 3, 4, 5]


def test_a_value_trainrts_search_draws_is_refused_in_either_spec_form(tmp_path):
    for func in (lambda config: config["lr"] / 100, lambda spec: spec.config.lr / 100):
        with pytest.raises(ValueError, match=r"reads config\['lr'\], which trainrt's search draws") as refused:
            sample.resolve({"decay": tune.sample_from(func)}, {"lr": tune.uniform(0, 1)}, tune.TuneConfig(),
                           str(tmp_path))
        assert "\n" not in str(refused.value)


def test_spec_config_form_reads_the_constants(tmp_path):
    entry = tune.sample_from(lambda spec: spec.config.width * 2)
    sample.resolve({"width": 4, "double": entry}, {}, tune.TuneConfig(), str(tmp_path))
    assert entry.values == [8]


def test_the_same_sweep_keeps_each_trials_values(tmp_path):
    draws = iter(range(100))
    sample.resolve({"x": tune.sample_from(lambda: next(draws))}, {}, tune.TuneConfig(num_samples=2), str(tmp_path))
    again = tune.sample_from(lambda: next(draws))
    sample.resolve({"x": again}, {}, tune.TuneConfig(num_samples=3), str(tmp_path))  # one trial more
    assert again.values == [0, 1, 2]
    assert sample.stored(str(tmp_path))["x"].values == [0, 1, 2]


def test_refused_with_population_based_training(tmp_path):
    config = tune.TuneConfig(metric="loss", mode="min", scheduler=tune.PopulationBasedTraining())
    with pytest.raises(NotImplementedError, match="PopulationBasedTraining"):
        sample.resolve({"x": tune.sample_from(lambda: 1)}, {}, config, str(tmp_path))


def test_an_unresolved_one_does_not_pickle_and_a_non_function_is_refused():
    with pytest.raises(TypeError, match="only Tuner.fit"):
        pickle.dumps({"x": tune.sample_from(lambda: 1)})
    with pytest.raises(TypeError, match="give a function"):
        tune.sample_from(3)


def test_each_trial_unpickles_its_own_value(tmp_path, monkeypatch):
    record = {"format": "trainrt-sweep", "format_version": 1, "definition": {}, "metric": "", "mode": "max",
              "trials": [{"index": i, "name": f"trial_000{i}", "status": "RUNNING", "attempts": 1, "last_exit": 0,
                          "values": {}} for i in range(3)]}
    with open(layout.sweep_record(str(tmp_path)), "w") as file:
        json.dump(record, file)
    entry = tune.sample_from(lambda: 0)
    entry.values = ["a", "b", "c"]
    stored = pickle.dumps({"x": entry, "y": 5})
    session = types.SimpleNamespace(context=lambda: {"run_dir": str(tmp_path / "trial_0002")})
    monkeypatch.setattr(_state, "_handle", session)
    monkeypatch.setattr(sample, "_this_trial", {})
    assert pickle.loads(stored) == {"x": "c", "y": 5}


def test_result_grid_shows_each_trials_value(tmp_path):
    record = {"format": "trainrt-sweep", "format_version": 1, "definition": {}, "metric": "", "mode": "max",
              "trials": [{"index": i, "name": f"trial_000{i}", "status": "TERMINATED", "attempts": 1, "last_exit": 0,
                          "values": {"train.lr": str(i)}} for i in range(2)]}
    with open(layout.sweep_record(str(tmp_path)), "w") as file:
        json.dump(record, file)
    entry = tune.sample_from(lambda: 0)
    entry.values = [16, 32]
    grid = tune.ResultGrid(str(tmp_path), {"l1": entry, "epochs": 2})
    assert [r.config for r in grid] == [{"l1": 16, "epochs": 2, "lr": 0}, {"l1": 32, "epochs": 2, "lr": 1}]
