"""trainrt.tune.ResultGrid over a sweep's report (the form `trainrt results SWEEP --json` gives):
trial configs, errors, the best trial by last or best-ever value, and the dataframe."""
import pandas
import pytest

from trainrt import tune
from trainrt._trainer import Result
from trainrt._trainrt import layout


def grid(tmp_path, trials, constants=None):
    report = {"metric": "acc", "mode": "max", "trials": trials}
    result_grid = tune.ResultGrid(str(tmp_path), report, constants)
    return result_grid


def trial(name, status="TERMINATED", **values):
    return {"name": name, "status": status, "values": values}


def with_rows(result_grid, rows_by_trial):
    """Gives each Result the rows a finished trial would have reported."""
    for result, rows in zip(result_grid, rows_by_trial):
        result.metrics = rows[-1] if rows else {}
        result.metrics_dataframe = pandas.DataFrame(rows) if rows else None
    return result_grid


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
    results = with_rows(grid(tmp_path, [trial("t0"), trial("t1")]),
                        [[{"acc": 0.9}, {"acc": 0.5}], [{"acc": 0.6}, {"acc": 0.7}]])
    assert results.get_best_result().path.endswith("t1")             # last values: 0.5 vs 0.7
    assert results.get_best_result(scope="all").path.endswith("t0")  # best ever: 0.9 vs 0.7
    assert results.get_best_result(metric="acc", mode="min").path.endswith("t0")


def test_no_trial_with_the_metric_is_an_error(tmp_path):
    results = with_rows(grid(tmp_path, [trial("t0")]), [[{"loss": 1.0}]])
    with pytest.raises(RuntimeError, match="no trial reported 'acc'"):
        results.get_best_result()


def test_dataframe_has_metrics_config_path_and_status(tmp_path):
    results = with_rows(grid(tmp_path, [trial("t0", **{"train.lr": "0.1"})]), [[{"acc": 0.8}]])
    frame = results.get_dataframe()
    assert frame.loc[0, "acc"] == 0.8 and frame.loc[0, "config/lr"] == 0.1
    assert frame.loc[0, "status"] == "TERMINATED" and frame.loc[0, "trial_path"].endswith("t0")


def test_a_trial_without_a_directory_is_an_empty_result(tmp_path):
    result = grid(tmp_path, [trial("never_started", status="PENDING")])[0]
    assert isinstance(result, Result) and result.metrics == {} and result.checkpoint is None


def test_trials_carry_rays_trial_id(tmp_path):
    for name in ("t0", "t1"):
        (tmp_path / name).mkdir()
        with open(layout.results(str(tmp_path / name)), "w") as file:
            file.write('{"acc": 0.5, "_training_iteration": 1}\n')
    results = grid(tmp_path, [trial("t0"), trial("t1")])
    assert [r.metrics["trial_id"] for r in results] == ["t0", "t1"]
    assert results[1].metrics_dataframe["trial_id"].tolist() == ["t1"]
    frame = results.get_dataframe()
    assert frame["trial_id"].tolist() == ["t0", "t1"] and frame["training_iteration"].tolist() == [1, 1]
