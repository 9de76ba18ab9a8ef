"""ray.air.integrations.mlflow after the port: Ray's MLflowLoggerCallback (a Tune callback in the
driver: one MLflow run per trial, its config as parameters, each result row's numbers as metrics
at its training_iteration, the trial's folder as artifacts) and setup_mlflow (in a training
function or trial: MLflow's module with a run started for it, rank 0 only by default). Both speak
to MLflow's own client; the experiment is found or created as Ray's helper does.

trainrt's own export ([tracking] mlflow_uri, `trainrt results --export`, docs/guides/tracking.md)
needs no code and continues a requeued run's MLflow run; these are for scripts written for Ray."""
import numbers
import os

try:
    import mlflow
    from mlflow.exceptions import MlflowException
except ImportError as error:  # the module is Ray's name: its users install MLflow themselves
    raise ImportError(f"trainrt.air.integrations.mlflow needs MLflow: pip install mlflow ({error})") from None

from ...tune.logger import LoggerCallback
from ._flatten import flat as _flat

__all__ = ["MLflowLoggerCallback", "setup_mlflow"]


def _numbers(values):
    """The entries MLflow can hold as metrics: those float() accepts, as Ray keeps them."""
    kept = {}
    for key, value in _flat(values).items():
        try:
            kept[key] = float(value)
        except (TypeError, ValueError):
            pass
    return kept


def _experiment(client, experiment_id=None, experiment_name=None, artifact_location=None, create=True):
    """The experiment's id as Ray's helper finds it: the id given (or MLFLOW_EXPERIMENT_ID) if it
    exists, else the name given (or MLFLOW_EXPERIMENT_NAME) if it exists, else that name created
    when `create`; ValueError otherwise."""
    experiment_id = experiment_id if experiment_id is not None else os.environ.get("MLFLOW_EXPERIMENT_ID")
    if experiment_id is not None:
        try:
            return client.get_experiment(str(experiment_id)).experiment_id
        except MlflowException:
            pass
    name = experiment_name if experiment_name is not None else os.environ.get("MLFLOW_EXPERIMENT_NAME")
    found = client.get_experiment_by_name(name) if name is not None else None
    if found is not None:
        return found.experiment_id
    if name and create:
        return client.create_experiment(name, artifact_location=artifact_location)
    raise ValueError(f"MLflow experiment with id {experiment_id} or name {name} does not exist: create it, or "
                     f"pass create_experiment_if_not_exists=True with an experiment_name")


class MLflowLoggerCallback(LoggerCallback):
    """Ray's MLflowLoggerCallback(tracking_uri=None, *, registry_uri=None, experiment_name=None,
    tags=None, tracking_token=None, save_artifact=False, log_params_on_trial_end=False)."""

    def __init__(self, tracking_uri=None, *, registry_uri=None, experiment_name=None, tags=None,
                 tracking_token=None, save_artifact=False, log_params_on_trial_end=False):
        self.tracking_uri, self.registry_uri = tracking_uri, registry_uri
        self.experiment_name, self.tags, self.tracking_token = experiment_name, dict(tags or {}), tracking_token
        self.should_save_artifact, self.log_params_on_trial_end = save_artifact, log_params_on_trial_end
        self._client = self._experiment_id = None
        self._trial_runs = {}

    def setup(self, *args, **kwargs):
        if self.tracking_token:
            os.environ["MLFLOW_TRACKING_TOKEN"] = self.tracking_token
        mlflow.set_tracking_uri(self.tracking_uri)
        mlflow.set_registry_uri(self.registry_uri)
        self._client = mlflow.tracking.MlflowClient(tracking_uri=mlflow.get_tracking_uri(),
                                                    registry_uri=self.registry_uri)
        self._experiment_id = _experiment(self._client, experiment_name=self.experiment_name)

    def _params(self, run_id, config):
        for key, value in _flat(config).items():
            self._client.log_param(run_id, key, value)

    def log_trial_start(self, trial):
        if trial.trial_id not in self._trial_runs:
            tags = dict(self.tags, trial_name=str(trial))
            run = self._client.create_run(self._experiment_id, run_name=str(trial), tags=tags)
            self._trial_runs[trial.trial_id] = run.info.run_id
        if not self.log_params_on_trial_end:
            self._params(self._trial_runs[trial.trial_id], trial.config)

    def log_trial_result(self, iteration, trial, result):
        step = result.get("timesteps_total") or result["training_iteration"]
        run_id = self._trial_runs[trial.trial_id]
        for key, value in _numbers(result).items():
            self._client.log_metric(run_id, key, value, step=step)

    def log_trial_end(self, trial, failed=False):
        run_id = self._trial_runs[trial.trial_id]
        if self.should_save_artifact:
            self._client.log_artifacts(run_id, local_dir=trial.local_path)
        if self.log_params_on_trial_end:
            self._params(run_id, trial.config)
        self._client.set_terminated(run_id, status="FAILED" if failed else "FINISHED")


class _NoopModule:
    """What setup_mlflow returns on ranks other than 0: every attribute a call that does nothing."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def setup_mlflow(config=None, tracking_uri=None, registry_uri=None, experiment_id=None, experiment_name=None,
                 tracking_token=None, artifact_location=None, run_name=None, create_experiment_if_not_exists=False,
                 tags=None, rank_zero_only=True):
    """Ray's setup_mlflow: MLflow's module with an active run, `config` logged as its parameters.
    In a Tune trial the experiment defaults, as in Ray, to the trial's id, then its name; in a
    training function ranks other than 0 get a module whose calls do nothing (rank_zero_only)."""
    from ... import get_context
    context = get_context()
    in_trial = context._in_sweep()
    if not in_trial and rank_zero_only and context.get_world_rank() != 0:
        return _NoopModule()
    experiment_id = experiment_id or (context.get_trial_id() if in_trial else None)
    experiment_name = experiment_name or (context.get_trial_name() if in_trial else None)
    if tracking_token:
        os.environ["MLFLOW_TRACKING_TOKEN"] = tracking_token
    mlflow.set_tracking_uri(tracking_uri)
    mlflow.set_registry_uri(registry_uri)
    client = mlflow.tracking.MlflowClient(tracking_uri=mlflow.get_tracking_uri(), registry_uri=registry_uri)
    found = _experiment(client, experiment_id, experiment_name, artifact_location, create_experiment_if_not_exists)
    mlflow.set_experiment(experiment_id=found)
    mlflow.start_run(run_name=run_name or experiment_name, tags=tags)
    mlflow.log_params(_flat(dict(config or {})))
    return mlflow
