"""ray.air.integrations.comet after the port: Ray's CometLoggerCallback, a Tune callback in the
driver: one Comet experiment per trial (an OfflineExperiment with online=False: a local archive
that `comet upload` sends later), named after the trial, its config as parameters, each result
row's numbers as metrics at its training_iteration, trial_id and the like as "others", node
facts as system info. It calls Comet's own client; trainrt's own export has no Comet target."""
try:
    import comet_ml
    from comet_ml.config import set_global_experiment
except ImportError as error:  # the module is Ray's name: its users install comet_ml themselves
    raise ImportError(f"trainrt.air.integrations.comet needs Comet's client: pip install comet_ml ({error})") from None

from ...tune.logger import LoggerCallback
from ._flatten import flat

__all__ = ["CometLoggerCallback"]

_EXCLUDED = ("done", "should_checkpoint")
_SYSTEM = ("node_ip", "hostname", "pid", "date")
_OTHERS = ("trial_id", "experiment_id", "experiment_tag")
_NO_AUTOLOG = ("auto_output_logging", "log_git_metadata", "log_git_patch", "log_env_cpu", "log_env_gpu")


def _under(key, items):
    return any(key == item or key.startswith(item + "/") for item in items)


class CometLoggerCallback(LoggerCallback):
    """Ray's CometLoggerCallback(online=True, tags=None, save_checkpoints=False, **experiment_kwargs
    for comet_ml.Experiment or OfflineExperiment); Comet's automatic logging of output, git and
    the environment off unless a kwarg turns it on, as in Ray."""

    def __init__(self, online=True, tags=None, save_checkpoints=False, **experiment_kwargs):
        if save_checkpoints:
            raise ValueError("trainrt.air.integrations.comet.CometLoggerCallback: save_checkpoints=True is not "
                             "supported: a trial's checkpoints are committed inside its processes; log them as Comet "
                             "artifacts from the function if you need them there")
        self.online, self.tags = online, list(tags or [])
        self.experiment_kwargs = dict(experiment_kwargs)
        for option in _NO_AUTOLOG:
            self.experiment_kwargs.setdefault(option, False)
        self._experiments = {}

    def log_trial_start(self, trial):
        if trial.trial_id in self._experiments:
            return
        kind = comet_ml.Experiment if self.online else comet_ml.OfflineExperiment
        experiment = kind(**self.experiment_kwargs)
        set_global_experiment(None)  # else Comet ends this experiment when the next trial's begins
        self._experiments[trial.trial_id] = experiment
        experiment.set_name(str(trial))
        experiment.add_tags(self.tags)
        experiment.log_other("Created from", "trainrt")
        experiment.log_parameters({key: value for key, value in trial.config.items() if key != "callbacks"})

    def log_trial_result(self, iteration, trial, result):
        self.log_trial_start(trial)
        experiment = self._experiments[trial.trial_id]
        step = result["training_iteration"]
        metrics, others = {}, {}
        for key, value in flat({k: v for k, v in result.items() if k != "config"}).items():
            if _under(key, _EXCLUDED):
                continue
            if _under(key, _OTHERS):
                others[key] = value
            elif _under(key, _SYSTEM):
                experiment.log_system_info(key, value)
            else:
                metrics[key] = value
        experiment.log_others(others)
        experiment.log_metrics(metrics, step=step)

    def log_trial_end(self, trial, failed=False):
        experiment = self._experiments.pop(trial.trial_id, None)
        if experiment is not None:
            experiment.end()
