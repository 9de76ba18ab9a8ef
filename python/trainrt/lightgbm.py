"""Gradient-boosted trees with LightGBM on trainrt (Ray Train's `ray.train.lightgbm`:
LightGBMTrainer, get_network_params, RayTrainReportCallback), on LightGBM (tools/requirements.txt)
and its own socket network between the ranks.

    def train_func(config):
        train_set = lightgbm.Dataset(X_of_this_rank, label=y_of_this_rank)
        checkpoint = trainrt.get_checkpoint()
        booster = RayTrainReportCallback.get_model(checkpoint) if checkpoint else None
        done = booster.current_iteration() if booster else 0
        params = {"objective": "regression", "tree_learner": "data_parallel", "pre_partition": True,
                  **trainrt.lightgbm.get_network_params()}
        lightgbm.train(params, train_set, num_boost_round=config["rounds"] - done, init_model=booster,
                       valid_sets=[eval_set], valid_names=["eval"], callbacks=[RayTrainReportCallback(frequency=10)])
    LightGBMTrainer(train_func, train_loop_config=..., scaling_config=ScalingConfig(num_workers=2)).fit()

- get_network_params(): {"num_machines", "local_listen_port", "machines", "time_out"} for
  lightgbm.train's params, every rank's port picked by the kernel and shared over trainrt's MPI
  (_network.py). LightGBM's socket time-out (minutes) is failure.collective_timeout rounded up.
- RayTrainReportCallback: each iteration's eval results in one report, under Ray's names
  ("eval-l2"; a cv's "-mean" and "-stdv"), with "iteration" (boosted so far); rank 0's booster as
  `model.txt` in a directory checkpoint every `frequency` iterations, when [checkpoint] interval
  says one is due, at a stop request and at the last iteration (checkpoint_at_end).
- LightGBM's sockets do not retry a call that a signal interrupts: get_network_params() keeps
  trainrt's stop signals off the calling thread from then on, and the callback takes them at each
  iteration's report and lets them through again after the last iteration (LightGBMTrainer also
  restores the thread's mask when the function returns): a stop (USR2, the time limit) ends the
  run at the next iteration with its checkpoint.
- LightGBMTrainer: Ray's trainer for a training function, on every rank.
- A resumed run continues from the saved booster (init_model), counting its iterations on; its
  trees are those of the uninterrupted run as long as no parameter draws random numbers LightGBM
  does not save (bagging, feature_fraction < 1 draw anew after a restart).
"""
import contextlib
import math
import os
import signal
import tempfile

import lightgbm

from . import _network, _state
from ._trainer import DataParallelTrainer
from .checkpoint import Checkpoint

__all__ = ["LightGBMTrainer", "RayTrainReportCallback", "get_network_params"]

# Signals that may ask for a stop ([stop] signals): blocked on the training thread while LightGBM's
# sockets are in use, taken at each iteration's report (trainrt's handler only sets a flag).
_STOP_SIGNALS = {signal.SIGUSR2, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT,
                 signal.SIGXCPU, signal.SIGALRM}
_mask_before = []  # the training thread's signal mask before the stop signals were blocked (one at most)
_trainer_context = []  # non-empty while LightGBMTrainer's worker context holds the mask


def get_network_params():
    """LightGBM's network parameters for this rank of the run (Ray's get_network_params): a
    collective, called by every rank at the same point. Outside a trainrt run: ValueError."""
    if _state._handle is None:
        raise ValueError("trainrt.lightgbm.get_network_params() is called inside a training function that trainrt "
                         "runs (LightGBMTrainer.fit(), or a run.workload), on every rank")
    machines, port = _network.rank_addresses()
    minutes = max(1, int(math.ceil(_state.settings().failure.collective_timeout / 60)))
    if not _mask_before:  # from here to the last iteration the stop signals come at the reports
        _mask_before.append(signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS))
    return {"num_machines": len(machines), "local_listen_port": port, "machines": ",".join(machines), "time_out": minutes}


def _eval_results(env):
    """{"<data>-<metric>": value} of this iteration (a cv's "-mean" and "-stdv"), as Ray names them."""
    results = {}
    for entry in env.evaluation_result_list:
        data, metric, value = entry[0], entry[1], entry[2]
        if len(entry) > 4:  # lightgbm.cv: (data, metric, mean, higher_better, stdv)
            results[f"{data}-{metric}-mean"] = float(value)
            results[f"{data}-{metric}-stdv"] = float(entry[4])
        else:
            results[f"{data}-{metric}"] = float(value)
    return results


class RayTrainReportCallback:
    """Reports each iteration (Ray's lightgbm RayTrainReportCallback): the eval results of `metrics`
    (None: all; a list, or a dict {reported name: LightGBM's name}), post-processed by
    `results_postprocessing_fn` if given, and "iteration"; rank 0's booster saved as `filename` in
    the report's directory checkpoint every `frequency` iterations (0: none on the way), when
    [checkpoint] interval says one is due, at a stop request and at the last iteration."""
    CHECKPOINT_NAME = "model.txt"
    order = 40  # LightGBM calls callbacks by `order`: after its own (early stopping is 30)
    before_iteration = False

    def __init__(self, metrics=None, filename=CHECKPOINT_NAME, frequency=0, checkpoint_at_end=True,
                 results_postprocessing_fn=None):
        self._metrics = [metrics] if isinstance(metrics, str) else metrics
        self._filename = filename
        self._frequency = int(frequency or 0)
        self._at_end = checkpoint_at_end
        self._postprocess = results_postprocessing_fn

    @classmethod
    def get_model(cls, checkpoint, filename=CHECKPOINT_NAME):
        """The lightgbm.Booster a checkpoint of this callback holds."""
        with checkpoint.as_directory() as path:
            return lightgbm.Booster(model_file=os.path.join(path, filename))

    def _chosen(self, env):
        everything = _eval_results(env)
        if self._metrics is None:
            chosen = everything
        elif isinstance(self._metrics, dict):
            chosen = {name: everything[key] for name, key in self._metrics.items()}
        else:
            chosen = {name: everything[name] for name in self._metrics}
        return self._postprocess(chosen) if self._postprocess else chosen

    def __call__(self, env):
        if _mask_before:  # a stop signal pending since the last iteration is taken here
            signal.pthread_sigmask(signal.SIG_SETMASK, _mask_before[-1])
        try:
            self._report(env)
        finally:
            if _mask_before and env.iteration < env.end_iteration - 1:
                signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
            elif _mask_before and not _trainer_context:  # the last iteration: LightGBM's network is done
                _mask_before.pop()

    def _report(self, env):
        boosted = env.iteration + 1  # counted from the init_model's iterations on
        last = env.iteration == env.end_iteration - 1
        due = (self._frequency and boosted % self._frequency == 0) or (self._at_end and last)
        session = _state.session()
        # should_stop() twice: the first returns the last report's verdict, the second agrees afresh
        saving = due or session.should_stop() or session.should_stop() or session.checkpoint_due()
        metrics = dict(self._chosen(env), iteration=boosted)
        if not saving:
            _state.report(metrics, None)
            return
        with tempfile.TemporaryDirectory() as folder:
            checkpoint = None
            if session.context()["world_rank"] == 0:  # the model is the same on every rank
                env.model.save_model(os.path.join(folder, self._filename))
                checkpoint = Checkpoint.from_directory(folder)
            _state.report(metrics, checkpoint)


@contextlib.contextmanager
def _stop_signals_at_reports():
    """The stop signals blocked on this thread for the block, taken at each report of the callback."""
    _mask_before.append(signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS))
    _trainer_context.append(True)
    try:
        yield
    finally:
        _trainer_context.pop()
        signal.pthread_sigmask(signal.SIG_SETMASK, _mask_before.pop())


class LightGBMTrainer(DataParallelTrainer):
    """Ray's LightGBMTrainer for a training function: every rank runs it, the stop signals taken at
    its reports (see above). `get_model(checkpoint)`: the booster of a RayTrainReportCallback checkpoint."""

    get_model = staticmethod(RayTrainReportCallback.get_model)

    def _worker_context(self):
        return _stop_signals_at_reports()


# --- run.workload = lightgbm ---

_BUILTIN_KEYS = ("num_boost_round", "checkpoint_every_rounds", "label", "features")


def _check_builtin_keys(config, keys):
    from ._entry import LoadError
    for key in config:
        if not key.startswith("params.") and key not in _BUILTIN_KEYS:
            raise LoadError(f"config: unknown key train.{key} for {keys.run.workload} = lightgbm; its keys: "
                            f"{', '.join('train.' + k for k in _BUILTIN_KEYS)} and train.params.<LightGBM parameter>")


def _columns(config):
    features = config.get("features")
    return config.get("label"), [f.strip() for f in features.split(",")] if isinstance(features, str) else None


def _eval_sets(path, label, features, reference):
    """(lightgbm.Dataset, split name) of every split but train that has a label: all its rows on
    every rank, so that each rank's metric is the split's."""
    from .data import Dataset, split_names
    sets = []
    for split in split_names():
        if split == "train":
            continue
        matrix, labels = Dataset.open(path, split).features_and_label(label, features)
        if labels is not None:
            sets.append((lightgbm.Dataset(matrix, label=labels, reference=reference), split))
    return sets


def builtin(config):
    """The built-in `lightgbm` workload: trains on data.path's train split (each rank its rows,
    pre-partitioned; label: train.label, else the file's label column; features: train.features,
    else the file's) for train.num_boost_round iterations with LightGBM's data-parallel learner,
    evaluates every other labelled split each iteration, a checkpoint every
    train.checkpoint_every_rounds, and goes on from the run's checkpoint when there is one."""
    from . import get_checkpoint
    from .data import get_dataset
    label, features = _columns(config)
    matrix, labels = get_dataset("train").features_and_label(label, features)
    train_set = lightgbm.Dataset(matrix, label=labels)
    evals = _eval_sets(_state.settings().data.path, label, features, train_set)
    checkpoint = get_checkpoint()
    booster = RayTrainReportCallback.get_model(checkpoint) if checkpoint is not None else None
    rounds, done = int(config.get("num_boost_round", 100)), booster.current_iteration() if booster else 0
    if done >= rounds:
        return
    params = {"verbose": -1, **{key[len("params."):]: value for key, value in config.items() if key.startswith("params.")}}
    params.setdefault("tree_learner", "data_parallel")
    params.setdefault("num_threads", _state.session().set_compute_threads())  # LightGBM's default: every core
    params.update(pre_partition=True, **get_network_params())
    lightgbm.train(params, train_set, num_boost_round=rounds - done, init_model=booster,
                   valid_sets=[dataset for dataset, _ in evals], valid_names=[name for _, name in evals],
                   callbacks=[RayTrainReportCallback(frequency=int(config.get("checkpoint_every_rounds", 10)))])


builtin.check_config = _check_builtin_keys  # called when the job is loaded (_entry.load)


# --- after the run: python3 -m trainrt.lightgbm predict (_predict.py) ---

def _predicted(booster, matrix):
    return booster.predict(matrix), f"a model of {booster.current_iteration()} iterations"


if __name__ == "__main__":
    import sys
    from . import _predict
    _predict.main(sys.argv[1:], "lightgbm", "LightGBM model", RayTrainReportCallback.get_model, _predicted,
                  load_errors=(lightgbm.basic.LightGBMError,))
