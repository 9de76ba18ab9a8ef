"""Gradient-boosted trees on trainrt (Ray Train's XGBoostTrainer and RayTrainReportCallback), on
XGBoost (tools/requirements.txt) and its own collective layer (its tracker and communicator).

    def train_func(config):
        dtrain = trainrt.get_dataset("train").to_dmatrix()           # this rank's rows
        checkpoint = trainrt.get_checkpoint()
        booster = RayTrainReportCallback.get_model(checkpoint) if checkpoint else None
        done = booster.num_boosted_rounds() if booster else 0
        xgboost.train(config["params"], dtrain, num_boost_round=config["rounds"] - done, xgb_model=booster,
                      evals=[(dtrain, "train")], callbacks=[RayTrainReportCallback(frequency=10)])
    XGBoostTrainer(train_func, train_loop_config=..., scaling_config=ScalingConfig(num_workers=2)).fit()

- collective(): every rank joins XGBoost's communicator for the block. Rank 0 starts XGBoost's
  tracker on a port the kernel picks and its address reaches the other ranks over trainrt's MPI
  (no fixed port); Rabit's timeout is failure.collective_timeout. XGBoostTrainer and the built-in
  workload (run.workload = xgboost: builtin()) enter it around the function.
- RayTrainReportCallback: each round's eval metrics ("train-logloss", XGBoost's names) in one
  report; the booster (UBJSON bytes, tensor "xgboost.model") in the report's checkpoint every
  `frequency` rounds, when `[checkpoint] interval` says one is due, at a stop request (a stop needs
  no polling) and at the last round.
- A resumed run continues from the saved booster: the same bytes as an uninterrupted run on the
  same world size (tested), as long as no parameter draws random numbers XGBoost does not save
  (subsample/colsample_* < 1 draw from a generator that is not in the model).
"""
import contextlib
import json
import math
import signal

import numpy as np
import xgboost
from xgboost import collective as _rabit
from xgboost.tracker import RabitTracker

from . import _state
from ._trainer import DataParallelTrainer
from .checkpoint import Checkpoint

MODEL = "xgboost.model"  # the checkpoint tensor holding the booster's UBJSON bytes
ROUND = "xgboost.round"  # its attribute: rounds boosted


@contextlib.contextmanager
def collective():
    """Every rank of the job in XGBoost's communicator for the block (collective; one rank joins
    nothing). A rank that dies makes the others' next Rabit call fail, which ends the step as any
    failure does; Rabit's own wait is bounded by failure.collective_timeout."""
    handle = _state.session()
    context = handle.context()
    world, rank = context["world_size"], context["world_rank"]
    if world == 1:
        yield
        return
    timeout_s = max(1, int(math.ceil(handle.settings().failure.collective_timeout)))
    tracker, payload = None, b""
    if rank == 0:
        from ._entry import _address
        tracker = RabitTracker(n_workers=world, host_ip=_address(context), port=0, sortby="task",
                               timeout=timeout_s)
        tracker.start()
        payload = json.dumps(tracker.worker_args()).encode()
    envs = json.loads(handle.broadcast_bytes(payload, 0).decode())
    ended_together = False  # every rank leaves the communicator: the tracker sees each one's shutdown
    try:
        with _rabit.CommunicatorContext(**envs, dmlc_task_id=str(rank), dmlc_timeout=timeout_s):
            yield
        ended_together = True
    except _state.StopTraining:  # a stop is agreed: every rank unwinds at the same report
        ended_together = True
        raise
    finally:
        if tracker is not None and ended_together:
            tracker.wait_for(timeout_s)  # after a failure nobody waits: the step ends


def model_checkpoint(booster, rounds=None):
    """A trainrt.Checkpoint of `booster`: its UBJSON bytes (load_model(trainrt.Checkpoint.open(run_dir));
    in h5py, xgboost.Booster(model_file=bytearray(f["tensors/xgboost.model"][...])) for a model under
    1 MiB, which one rank's file holds whole; a larger one is in shares, as the manifest's parts say)."""
    raw = booster.save_raw("ubj")
    checkpoint = Checkpoint({MODEL: np.frombuffer(bytes(raw), dtype=np.uint8)})
    checkpoint[ROUND] = int(rounds if rounds is not None else booster.num_boosted_rounds())
    return checkpoint


def load_model(checkpoint):
    """The xgboost.Booster a checkpoint of model_checkpoint() holds."""
    return xgboost.Booster(model_file=bytearray(np.asarray(checkpoint[MODEL]).tobytes()))


def round_metrics(evals_log):
    """{"<data>-<metric>": value of the last round} from XGBoost's evals_log."""
    return {f"{data}-{metric}": float(values[-1]) for data, metrics in evals_log.items()
            for metric, values in metrics.items() if values}


# Signals that may ask for a stop ([stop] signals). Rabit's socket poll does not retry after EINTR:
# one landing on the training thread inside an allreduce fails the job ("Failed to poll") instead
# of stopping it. The callback keeps them blocked on that thread during the rounds and takes them
# at each round's end (any other thread may take them too: trainrt's handler only sets a flag).
_STOP_SIGNALS = {signal.SIGUSR2, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT,
                 signal.SIGXCPU, signal.SIGALRM}


class RayTrainReportCallback(xgboost.callback.TrainingCallback):
    """Reports each round (Ray's RayTrainReportCallback): the eval metrics of `metrics` (None: all;
    a list, or a dict {reported name: XGBoost name}) and "round", with the booster in the report's
    checkpoint every `frequency` rounds (0: none on the way), when [checkpoint] interval says one is
    due (trainrt.checkpoint_due()), at a stop request and at the end.
    `num_boost_round` (trainrt's): the round the run ends at, so that its report carries the last
    checkpoint; without it, a checkpoint_at_end comes in one more report after training, as Ray's."""

    CHECKPOINT_NAME = "model.ubj"  # Ray's file name; trainrt keeps the booster in the checkpoint's tensors

    def __init__(self, metrics=None, filename=None, frequency=0, checkpoint_at_end=True, num_boost_round=None):
        super().__init__()
        self._metrics = [metrics] if isinstance(metrics, str) else metrics
        self._frequency = int(frequency or 0)
        self._at_end = checkpoint_at_end
        self._last_round = num_boost_round
        self._unsaved = None  # (metrics, round) of the last report when it carried no checkpoint
        self._mask = None  # the training thread's signal mask before training

    def before_training(self, model):
        self._mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        return model

    @staticmethod
    def get_model(checkpoint, filename=None):
        return load_model(checkpoint)

    def _chosen(self, evals_log):
        everything = round_metrics(evals_log)
        if self._metrics is None:
            return everything
        if isinstance(self._metrics, dict):
            return {name: everything[key] for name, key in self._metrics.items() if key in everything}
        return {name: everything[name] for name in self._metrics if name in everything}

    def after_iteration(self, model, epoch, evals_log):
        if self._mask is not None:  # a stop signal pending since the last round is taken here
            signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
        try:
            return self._report_round(model, evals_log)
        finally:
            if self._mask is not None:
                signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)

    def _report_round(self, model, evals_log):
        boosted = model.num_boosted_rounds()
        metrics = dict(self._chosen(evals_log), round=boosted)
        due = (self._frequency and boosted % self._frequency == 0) or (
            self._at_end and self._last_round is not None and boosted >= self._last_round)
        # The stop agreement is this round's step boundary; checkpoint_due() is its verdict too.
        saving = due or self._stop_agreed() or _state.session().checkpoint_due()
        checkpoint = model_checkpoint(model, boosted) if saving else None
        self._unsaved = None if checkpoint is not None else (metrics, boosted)
        _state.report(metrics, checkpoint)
        return False

    @staticmethod
    def _stop_agreed():
        """A stop request that reached any rank since the last report, agreed now. should_stop()
        right after a report returns that report's verdict without communicating; the second call
        agrees afresh (one small collective, every rank calls it at the same round), so a signal
        that arrived during this round gives this round's report the booster to stop at."""
        session = _state.session()
        return session.should_stop() or session.should_stop()

    def after_training(self, model):
        if self._mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
            self._mask = None
        if self._at_end and self._unsaved is not None:
            metrics, boosted = self._unsaved
            _state.report(metrics, model_checkpoint(model, boosted))
        return model


def train(params, dtrain, num_boost_round=10, *, evals=(), frequency=10, resume=True, **kwargs):
    """xgboost.train on trainrt: reports every round (RayTrainReportCallback, a checkpoint every
    `frequency` rounds and at the end), and with `resume`, continues from the run's checkpoint,
    training only the rounds left of `num_boost_round`. Call it inside collective() (XGBoostTrainer
    and the built-in workload do) when there is more than one rank."""
    from . import get_checkpoint
    checkpoint = get_checkpoint() if resume else None
    booster = load_model(checkpoint) if checkpoint is not None else None
    params = dict(params)
    params.setdefault("nthread", _state.session().set_compute_threads())  # XGBoost's default: every core
    done = booster.num_boosted_rounds() if booster is not None else 0
    callbacks = list(kwargs.pop("callbacks", None) or [])
    callbacks.append(RayTrainReportCallback(frequency=frequency, num_boost_round=num_boost_round))
    if done >= num_boost_round:
        return booster
    return xgboost.train(params, dtrain, num_boost_round=num_boost_round - done, evals=list(evals),
                         xgb_model=booster, callbacks=callbacks, verbose_eval=False, **kwargs)


class XGBoostTrainer(DataParallelTrainer):
    """Ray's XGBoostTrainer for a training function: it runs on every rank inside collective()."""

    def _worker_context(self):
        return collective()


# --- run.workload = xgboost ---

_BUILTIN_KEYS = ("num_boost_round", "checkpoint_every_rounds", "label", "features", "quantile_dmatrix")


def _builtin_params(config):
    """XGBoost's params from [train] params.* (eval_metric may list several, comma-separated)."""
    params = {}
    for key, value in config.items():
        if key.startswith("params."):
            name = key[len("params."):]
            if name == "eval_metric" and isinstance(value, str):
                value = [metric.strip() for metric in value.split(",") if metric.strip()]
            params[name] = value
    return params


def _check_builtin_keys(config, keys):
    from ._entry import LoadError
    for key in config:
        if not key.startswith("params.") and key not in _BUILTIN_KEYS:
            raise LoadError(f"config: unknown key train.{key} for {keys.run.workload} = xgboost; its keys: "
                            f"{', '.join('train.' + k for k in _BUILTIN_KEYS)} and train.params.<XGBoost parameter>")


def builtin(config):
    """The built-in `xgboost` workload: trains on data.path's train split (label: train.label, else
    the file's label column) and evaluates every other split each round; train.quantile_dmatrix =
    true builds QuantileDMatrix instead of DMatrix (hist)."""
    label, features = config.get("label"), config.get("features")
    features = [f.strip() for f in features.split(",")] if isinstance(features, str) else None
    from .data import split_names, get_dataset
    quantile = str(config.get("quantile_dmatrix", False)).lower() == "true"
    with collective():
        dtrain = get_dataset("train").to_dmatrix(label=label, features=features, quantile=quantile)
        evals = [(dtrain, "train")] + [
            (get_dataset(split).to_dmatrix(label=label, features=features, quantile=quantile,
                                           **({"ref": dtrain} if quantile else {})), split)
            for split in split_names() if split != "train"]
        train(_builtin_params(config), dtrain, int(config.get("num_boost_round", 10)), evals=evals,
              frequency=int(config.get("checkpoint_every_rounds", 10)))


builtin.check_config = _check_builtin_keys  # called when the job is loaded (_entry.load)


# --- after the run: python3 -m trainrt.xgboost predict (_predict.py) ---

def _predicted(booster, matrix):
    return booster.predict(xgboost.DMatrix(matrix)), f"a booster of {booster.num_boosted_rounds()} rounds"


if __name__ == "__main__":
    import sys
    from . import _predict
    _predict.main(sys.argv[1:], "xgboost", "XGBoost booster", load_model, _predicted)
