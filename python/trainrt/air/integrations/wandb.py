"""ray.air.integrations.wandb after the port: Ray's setup_wandb (in a training function or trial:
a W&B run for it, rank 0 only by default, the others a disabled run) and WandbLoggerCallback (a
Tune callback in the driver: one W&B run per trial, its config as the run's config, each result
row's numbers logged at its training_iteration). Both call W&B's own client; WANDB_MODE=offline
keeps the runs on disk for `wandb sync` (a compute node without the internet).

trainrt's own export ([tracking], `trainrt results --export`, docs/guides/tracking.md) has no
W&B target; these are for scripts written for Ray."""
import os

try:
    import wandb
except ImportError as error:  # the module is Ray's name: its users install wandb themselves
    raise ImportError(f"trainrt.air.integrations.wandb needs wandb: pip install wandb ({error})") from None

from ...tune.logger import LoggerCallback
from ._flatten import flat

__all__ = ["WandbLoggerCallback", "setup_wandb"]

_EXCLUDED = ("done", "should_checkpoint")  # never logged (Ray's)
_TO_CONFIG = ("trial_id", "experiment_tag", "node_ip", "experiment_id", "hostname", "pid", "date")  # Ray's


def _set_api_key(api_key_file=None, api_key=None):
    if api_key_file:
        with open(os.path.expanduser(api_key_file)) as file:
            os.environ["WANDB_API_KEY"] = file.read().strip()
    elif api_key:
        os.environ["WANDB_API_KEY"] = api_key


def _loggable(value):
    return isinstance(value, (int, float, str, bool)) or hasattr(value, "__float__")


def _log_and_config(result, excluded):
    """(the row's values to log, its values that go to the run's config), as Ray splits a result."""
    log, config = {}, {}
    for key, value in flat(result).items():
        if any(key == item or key.startswith(item + "/") for item in excluded):
            continue
        if any(key == item or key.startswith(item + "/") for item in _TO_CONFIG):
            config[key] = value
        elif _loggable(value):
            log[key] = value
    return log, config


class WandbLoggerCallback(LoggerCallback):
    """Ray's WandbLoggerCallback(project=None, group=None, api_key_file=None, api_key=None,
    excludes=None, log_config=False, upload_checkpoints=False, **kwargs for wandb.init)."""

    def __init__(self, project=None, group=None, api_key_file=None, api_key=None, excludes=None, log_config=False,
                 upload_checkpoints=False, save_checkpoints=False, upload_timeout=1800, video_kwargs=None,
                 image_kwargs=None, **kwargs):
        if upload_checkpoints or save_checkpoints:
            raise ValueError("trainrt.air.integrations.wandb.WandbLoggerCallback: upload_checkpoints= is not "
                             "supported: a trial's checkpoints are committed inside its processes; log them as W&B "
                             "artifacts from the function (setup_wandb) if you need them there")
        if video_kwargs or image_kwargs:
            raise ValueError("trainrt.air.integrations.wandb.WandbLoggerCallback: video_kwargs= and image_kwargs= "
                             "are not used: trainrt's result rows hold numbers and strings, never videos or images")
        self.project, self.group = project, group
        self.api_key_file, self.api_key = api_key_file, api_key
        self.excludes, self.log_config, self.kwargs = list(excludes or []), log_config, kwargs
        self.upload_timeout = upload_timeout  # with upload_checkpoints only, which is refused above
        self._runs = {}

    def setup(self, *args, **kwargs):
        _set_api_key(self.api_key_file, self.api_key)
        self.project = self.project or os.environ.get("WANDB_PROJECT")
        if not self.project:
            raise ValueError("trainrt.air.integrations.wandb.WandbLoggerCallback: no W&B project: pass "
                             "project= or set WANDB_PROJECT")
        self.group = self.group or os.environ.get("WANDB_RUN_GROUP")

    def log_trial_start(self, trial):
        if trial.trial_id in self._runs:
            return
        config = {key: value for key, value in trial.config.items() if key != "callbacks"}
        group = self.group or os.path.basename(os.path.dirname(os.path.normpath(trial.local_path)))
        init = dict(id=trial.trial_id, name=str(trial), group=group, project=self.project, config=config,
                    resume="allow", reinit="create_new", allow_val_change=True)
        init.update(self.kwargs)
        self._runs[trial.trial_id] = wandb.init(**init)

    def log_trial_result(self, iteration, trial, result):
        self.log_trial_start(trial)
        run = self._runs[trial.trial_id]
        excluded = list(_EXCLUDED) + self.excludes + ([] if self.log_config else ["config"])
        log, config = _log_and_config(result, excluded)
        run.config.update(config, allow_val_change=True)
        run.log(log, step=result.get("training_iteration"))

    def log_trial_end(self, trial, failed=False):
        run = self._runs.pop(trial.trial_id, None)
        if run is not None:
            run.finish(exit_code=1 if failed else 0)


def setup_wandb(config=None, api_key=None, api_key_file=None, rank_zero_only=True, **kwargs):
    """Ray's setup_wandb: wandb.init for this function or trial, its id and name the trial's (a
    run's name outside a sweep), its group the experiment's, `config` the run's config; ranks
    other than 0 get a disabled run (rank_zero_only). kwargs go to wandb.init and win."""
    from ... import get_context
    context = get_context()
    if rank_zero_only and context.get_world_rank() != 0:
        return wandb.init(mode="disabled")
    _set_api_key(api_key_file, api_key)
    init = dict(id=context.get_trial_id(), name=context.get_trial_name(), group=context.get_experiment_name(),
                project=os.environ.get("WANDB_PROJECT"), config=dict(config or {}), resume="allow",
                reinit="create_new", allow_val_change=True)
    init.update(kwargs)
    return wandb.init(**init)
