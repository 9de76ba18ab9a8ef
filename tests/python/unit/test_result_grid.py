"""trainrt.tune.ResultGrid over a sweep's directory (its record as `trainrt tune` writes it, each
trial's result rows): trial configs, errors, the best trial by Ray's scopes, and the dataframe."""
import json
import os

import pytest

from trainrt import tune
from trainrt._trainer import Result
from trainrt._trainrt import layout


def grid(tmp_path, trials, constants=None, rows=None):
    """A ResultGrid over a sweep directory holding `trials` (sweep.json as the C++ record writes
    it) and, for each, the result rows of `rows` (None: no run directory at all)."""
    record = {"format": "trainrt-sweep", "format_version": 1, "definition": {}, "metric": "acc", "mode": "max",
              "trials": [{"index": i, "name": t["name"], "status": t["status"], "attempts": 1, "last_exit": 0,
                          "values": t["values"]} for i, t in enumerate(trials)]}
    with open(layout.sweep_record(str(tmp_path)), "w") as file:
        json.dump(record, file)
    for t, trial_rows in zip(trials, rows or [None] * len(trials)):
        if trial_rows is not None:
            os.makedirs(tmp_path / t["name"], exist_ok=True)
            with open(layout.results(str(tmp_path / t["name"])), "w") as file:
                file.writelines(json.dumps({**row, "_training_iteration": i + 1}) + "\n"
                                for i, row in enumerate(trial_rows))
    return tune.ResultGrid(str(tmp_path), constants)


def trial(name, status="TERMINATED", **values):
    return {"name": name, "status": status, "values": values}


def test_configs_merge_constants_and_trial_values(tmp_path):
    results = grid(tmp_path, [trial("t0", **{"train.lr": "0.1", "train.opt": "adam"})], constants={"epochs": 3})
    assert len(results) == 1
    assert results[0].config == {"epochs": 3, "lr": 0.1, "opt": "adam"}
    assert results[0].path == str(tmp_path / "t0")


def test_an_errored_trial_carries_an_error(tmp_path):
    results = grid(tmp_path, [trial("t0"), trial("t1", status="ERROR")])
    assert results.num_errors == 1
    assert isinstance(results.errors[0], tune.TuneError) and results.errors[0].path == str(tmp_path / "t1")


def test_best_result_by_last_and_by_best_ever_value(tmp_path):
    results = grid(tmp_path, [trial("t0"), trial("t1")], rows=[[{"acc": 0.9}, {"acc": 0.5}], [{"acc": 0.6}, {"acc": 0.7}]])
    assert results.get_best_result().path.endswith("t1")             # last values: 0.5 vs 0.7
    assert results.get_best_result(scope="all").path.endswith("t0")  # best ever: 0.9 vs 0.7
    assert results.get_best_result(metric="acc", mode="min").path.endswith("t0")


def test_no_trial_with_the_metric_is_an_error(tmp_path):
    results = grid(tmp_path, [trial("t0")], rows=[[{"loss": 1.0}]])
    with pytest.raises(RuntimeError, match="no trial reported 'acc'"):
        results.get_best_result()


def test_dataframe_has_metrics_config_path_and_status(tmp_path):
    results = grid(tmp_path, [trial("t0", **{"train.lr": "0.1"})], rows=[[{"acc": 0.8}]])
    frame = results.get_dataframe()
    assert frame.loc[0, "acc"] == 0.8 and frame.loc[0, "config/lr"] == 0.1
    assert frame.loc[0, "status"] == "TERMINATED" and frame.loc[0, "trial_path"].endswith("t0")


def test_a_trial_without_a_directory_is_an_empty_result(tmp_path):
    result = grid(tmp_path, [trial("never_started", status="PENDING")])[0]
    assert isinstance(result, Result) and result.metrics == {} and result.checkpoint is None


def test_trials_carry_rays_trial_id(tmp_path):
    results = grid(tmp_path, [trial("t0"), trial("t1")], rows=[[{"acc": 0.5}], [{"acc": 0.5}]])
    assert [r.metrics["trial_id"] for r in results] == ["t0", "t1"]
    assert results[1].metrics_dataframe["trial_id"].tolist() == ["t1"]
    frame = results.get_dataframe()
    assert frame["trial_id"].tolist() == ["t0", "t1"] and frame["training_iteration"].tolist() == [1, 1]


def test_best_result_by_the_mean_scopes(tmp_path):
    rows = [[{"acc": 0.9}] + [{"acc": 0.1}] * 5, [{"acc": 0.0}] + [{"acc": 0.5}] * 5]
    results = grid(tmp_path, [trial("t0"), trial("t1")], rows=rows)
    assert results.get_best_result(scope="all").path.endswith("t0")
    assert results.get_best_result(scope="last-5-avg").path.endswith("t1")
    assert results.get_best_result(scope="avg").path.endswith("t1")


def test_an_unknown_scope_or_mode_is_a_value_error(tmp_path):
    results = grid(tmp_path, [trial("t0")], rows=[[{"acc": 0.5}]])
    with pytest.raises(ValueError, match="last-10-avg"):
        results.get_best_result(scope="best")
    with pytest.raises(ValueError, match="neither max nor min"):
        results.get_best_result(mode="maximum")
