"""Ray Tune's `ray.tune.logger`: LoggerCallback, a Callback whose trial events arrive as
log_trial_start / log_trial_result / log_trial_end, called in the driver as the sweep runs
(trainrt.tune.callback says when). trainrt writes every trial's rows itself (result.jsonl,
metrics.h5: `trainrt results`, `trainrt plot`), so Ray's CSV, JSON and TensorBoard loggers are
not provided: importing one says so."""
from .callback import Callback

__all__ = ["LoggerCallback"]

# Ray's logger callbacks that trainrt does not provide, and why.
_NOT_PROVIDED = ("CSVLoggerCallback", "JsonLoggerCallback", "TBXLoggerCallback", "CSVLogger", "JsonLogger",
                 "TBXLogger")


class LoggerCallback(Callback):
    """Ray's LoggerCallback: override log_trial_start(trial), log_trial_result(iteration, trial,
    result) and log_trial_end(trial, failed) (failed: the trial ended ERROR)."""

    def log_trial_start(self, trial):
        pass

    def log_trial_result(self, iteration, trial, result):
        pass

    def log_trial_end(self, trial, failed=False):
        pass

    def on_trial_start(self, iteration, trials, trial, **info):
        self.log_trial_start(trial)

    def on_trial_result(self, iteration, trials, trial, result, **info):
        self.log_trial_result(iteration, trial, result)

    def on_trial_complete(self, iteration, trials, trial, **info):
        self.log_trial_end(trial, failed=False)

    def on_trial_error(self, iteration, trials, trial, **info):
        self.log_trial_end(trial, failed=True)


def __getattr__(name):
    if name in _NOT_PROVIDED:
        raise ImportError(f"trainrt.tune.logger.{name} is not provided: trainrt writes each trial's result rows "
                          f"itself (TRIAL_DIR/result.jsonl and metrics.h5; `trainrt results` and `trainrt plot` read "
                          f"them); subclass trainrt.tune.logger.LoggerCallback for a logger of your own")
    raise AttributeError(f"module 'trainrt.tune.logger' has no attribute '{name}'")
