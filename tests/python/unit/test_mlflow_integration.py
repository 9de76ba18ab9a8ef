"""Ray's ray.air.integrations.mlflow under trainrt's name: MLflowLoggerCallback's trial events
become one MLflow run per trial (parameters, metrics per training_iteration, artifacts, status),
in an SQLite store; the experiment is found, created or refused as Ray's helper does."""
import os

import pytest

from mlflow.tracking import MlflowClient

from trainrt.air.integrations import mlflow as mlflow_integration
from trainrt.tune.callback import Trial


def _trial(tmp_path, trial_id, config):
    folder = tmp_path / trial_id
    folder.mkdir()
    (folder / "result.jsonl").write_text("{}\n")
    return Trial(trial_id, config, "train_function", str(folder))


def test_callback_makes_one_run_per_trial_with_rays_params_metrics_and_artifacts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an SQLite store's artifacts go to ./mlruns
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    callback = mlflow_integration.MLflowLoggerCallback(tracking_uri=uri, experiment_name="example",
                                                       tags={"team": "a"}, save_artifact=True)
    callback.setup()
    ok, bad = _trial(tmp_path, "trial_0000", {"width": 3, "nested": {"lr": 0.1}}), _trial(tmp_path, "trial_0001", {})
    for trial in (ok, bad):
        callback.on_trial_start(0, [ok, bad], trial)
    for step in (1, 2):
        callback.on_trial_result(step, [ok, bad], ok, {"training_iteration": step, "mean_loss": 1.0 / step,
                                                       "hostname": "n1", "config": {"width": 3}})
    callback.on_trial_complete(3, [ok, bad], ok)
    callback.on_trial_error(3, [ok, bad], bad)

    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("example")
    runs = {run.info.run_name: run for run in client.search_runs([experiment.experiment_id])}
    assert set(runs) == {str(ok), str(bad)}
    run = runs[str(ok)]
    assert run.data.params == {"width": "3", "nested/lr": "0.1"}
    assert run.data.tags["trial_name"] == str(ok) and run.data.tags["team"] == "a"
    assert [(m.step, m.value) for m in client.get_metric_history(run.info.run_id, "mean_loss")] == [(1, 1.0), (2, 0.5)]
    assert "hostname" not in run.data.metrics and "config/width" in run.data.metrics  # numbers only, flattened
    assert [a.path for a in client.list_artifacts(run.info.run_id)] == ["result.jsonl"]
    assert run.info.status == "FINISHED" and runs[str(bad)].info.status == "FAILED"


def test_experiment_is_found_created_or_refused_as_rays_helper_does(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_EXPERIMENT_ID", raising=False)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_NAME", raising=False)
    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path}/mlflow.db")
    made = mlflow_integration._experiment(client, experiment_name="made", create=True)
    assert mlflow_integration._experiment(client, experiment_id="no-such-id", experiment_name="made") == made
    assert mlflow_integration._experiment(client, experiment_id=made, create=False) == made
    with pytest.raises(ValueError, match="does not exist"):
        mlflow_integration._experiment(client, experiment_name="absent", create=False)
    monkeypatch.setenv("MLFLOW_EXPERIMENT_NAME", "made")
    assert mlflow_integration._experiment(client, create=False) == made
    assert os.path.exists(f"{tmp_path}/mlflow.db")
