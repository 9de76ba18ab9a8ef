"""Ray Tune's class API, `tune.Trainable`, on trainrt's function trainables
(docs/guides/sweeps.md, the class API).

Tuner(MyTrainable) runs the class as any function trainable: its sweep's workload is
python:FILE.py:MyTrainable, and a trial that calls the class as its workload (what trainrt does
with a function: MyTrainable(config)) runs it instead of constructing it: setup(config), then, if
the trial has a checkpoint (a retry, a requeue, PBT's copy), load_checkpoint() and the iteration
count it was saved at; then step() after step(), each result reported (trainrt.report), until a
result says done=True, a [stop] criterion (RunConfig(stop=...)) or the scheduler ends the trial,
or a stop (signal, time limit) does. A checkpoint (a directory: what save_checkpoint() wrote, its
returned dict pickled into it; load_checkpoint() gets the dict, or the directory) goes with:
- every CheckpointConfig(checkpoint_frequency=N) iterations;
- with checkpoint_at_end=True (Ray's default for a class Trainable: left None, it is True unless
  RunConfig(stop=...) stops by time_total_s), the last result: one with done=True or meeting a stop criterion,
  and, under a scheduler that pauses trials (ASHA), each result at one of its rungs (whether the
  trial ends there is decided as that result is reported);
- a stop's result, so that the requeued trial goes on from where it stopped;
- a result a driver's callback set result[SHOULD_CHECKPOINT] on: while a Tuner's driver whose
  callbacks define on_trial_result follows the sweep (CALLBACK_VERDICTS_ENV), rank 0 writes each
  result (RUN_DIR/callback/N.json, C++'s layout) before reporting it and waits for the driver's
  answer (N.verdict), as Ray's controller runs its callbacks before the trial's next step.
cleanup() runs at the end, however the trial ends. Each trial runs in processes of its own:
reset_config() (Ray's actor reuse) is never called.
"""
import copy
import json
import os
import pickle
import shutil
import tempfile
import time

__all__ = ["Trainable"]

# A Tuner's CheckpointConfig for a class trainable: the path of SWEEP_DIR/tuner/trainable.json,
# in the environment `trainrt tune` gives every trial.
OPTIONS_ENV = "TRAINRT_TUNE_TRAINABLE"
# Set for the trials by a Tuner's driver whose callbacks define on_trial_result (callback.py).
CALLBACK_VERDICTS_ENV = "TRAINRT_TUNE_CALLBACK_VERDICTS"
VERDICT_WAIT_S = 300  # a driver that does not answer by then is gone: the trial goes on, one warning line
# The file of a checkpoint that holds the dict save_checkpoint() returned.
DICT_FILE = "trainable_state.pickle"

_active = []  # the class whose trial this process runs (one at most)


class Trainable:
    """Ray's tune.Trainable: subclass it and define setup(config), step() -> dict of metrics,
    save_checkpoint(checkpoint_dir) -> dict or None, load_checkpoint(dict or directory), and
    optionally cleanup(). Constructed directly (outside a trial), it is Ray's object: train(),
    save(), restore(), stop()."""

    def __new__(cls, config=None, *args, **kwargs):
        if not _active and _runs_as_workload(cls):
            run_trial(cls, config, kwargs)
            return None
        return super().__new__(cls)

    def __init__(self, config=None, logger_creator=None, storage=None, **parameters):
        if logger_creator is not None or storage is not None:
            raise NotImplementedError("trainrt.tune.Trainable(logger_creator=..., storage=...) is not supported: a "
                                      "trial logs into its own run directory (self.logdir)")
        self.config = dict(config or {})
        self._iteration = 0
        self._time_total = 0.0
        self._last_result = None
        self.setup(copy.deepcopy(self.config), **parameters)

    # --- what a subclass defines ---

    def setup(self, config):
        pass

    def step(self):
        raise NotImplementedError(f"trainrt.tune.Trainable: {type(self).__name__} defines no step()")

    def save_checkpoint(self, checkpoint_dir):
        raise NotImplementedError(f"trainrt.tune.Trainable: {type(self).__name__} defines no save_checkpoint(), "
                                  f"and this trial checkpoints (CheckpointConfig, or a stop)")

    def load_checkpoint(self, checkpoint):
        raise NotImplementedError(f"trainrt.tune.Trainable: {type(self).__name__} defines no load_checkpoint(), "
                                  f"and this trial resumes from a checkpoint")

    def reset_config(self, new_config):
        return False

    def cleanup(self):
        pass

    def log_result(self, result):
        pass

    # --- what Ray's Trainable offers ---

    @property
    def iteration(self):
        return self._iteration

    training_iteration = iteration

    def get_config(self):
        return self.config

    @property
    def logdir(self):
        """The trial's run directory (None outside a trial)."""
        from .. import _state
        return _state.session().context()["run_dir"] if _state._handle is not None else None

    @property
    def trial_name(self):
        return os.path.basename(self.logdir) if self.logdir else "default"

    trial_id = trial_name

    def train(self):
        """One step(): its result with Ray's autofilled fields (done, training_iteration, times)."""
        _, result = self._advance()
        return result

    def save(self, checkpoint_dir=None):
        """save_checkpoint() into `checkpoint_dir` (a new temporary directory when None): a
        trainrt.Checkpoint of that directory, which restore() takes."""
        from ..checkpoint import Checkpoint
        directory = os.fspath(checkpoint_dir) if checkpoint_dir is not None else tempfile.mkdtemp()
        os.makedirs(directory, exist_ok=True)
        self._save_to(directory)
        return Checkpoint.from_directory(directory)

    def restore(self, checkpoint):
        """load_checkpoint() from a Checkpoint (a committed one also sets the iteration count it
        was saved at) or a checkpoint directory's path."""
        if isinstance(checkpoint, (str, os.PathLike)):
            self._load_from(os.fspath(checkpoint))
            return
        if checkpoint._committed is not None:  # as Ray: the count is set before load_checkpoint()
            self._iteration = checkpoint.iteration
        with checkpoint.as_directory() as directory:
            self._load_from(directory)

    def stop(self):
        self.cleanup()

    def reset(self, new_config):
        """Ray's actor reuse: reset_config(new_config), and on True the counts start over."""
        if not self.reset_config(new_config):
            return False
        self.config, self._iteration, self._time_total = dict(new_config), 0, 0.0
        return True

    # --- trainrt's ---

    def _advance(self):
        """step() once: (its result as returned, the result with Ray's autofilled fields)."""
        started = time.time()
        result = self.step()
        if not isinstance(result, dict):
            raise TypeError(f"trainrt.tune.Trainable: {type(self).__name__}.step() returned "
                            f"{type(result).__name__}; return a dict of metrics")
        self._iteration += 1
        spent = time.time() - started
        self._time_total += spent
        filled = {**result, "done": bool(result.get("done", False)), "training_iteration": self._iteration,
                  "time_this_iter_s": spent, "time_total_s": self._time_total}
        self._last_result = filled
        self.log_result(filled)
        return dict(result), filled

    def _save_to(self, directory):
        """save_checkpoint(directory); a returned dict is pickled into it (DICT_FILE)."""
        returned = self.save_checkpoint(directory)
        if isinstance(returned, dict):
            with open(os.path.join(directory, DICT_FILE), "wb") as file:
                pickle.dump(returned, file)
        elif returned is not None and os.path.abspath(os.fspath(returned)) != os.path.abspath(directory):
            raise ValueError(f"trainrt.tune.Trainable: {type(self).__name__}.save_checkpoint({directory!r}) returned "
                             f"{returned!r}: return None, a dict, or the directory it was given")

    def _load_from(self, directory):
        """load_checkpoint() with the dict a checkpoint holds (DICT_FILE), else its directory."""
        stored = os.path.join(directory, DICT_FILE)
        if os.path.exists(stored):
            with open(stored, "rb") as file:
                self.load_checkpoint(pickle.load(file))
        else:
            self.load_checkpoint(directory)


def _runs_as_workload(cls):
    """Whether a trainrt session runs with run.workload naming `cls` (python:FILE.py:NAME or
    python:package.module:NAME): then calling the class is the trial, not a construction."""
    from .. import _state
    if _state._handle is None:
        return False
    import inspect
    workload = _state.settings().run.workload
    target, _, name = workload[len("python:"):].rpartition(":") if workload.startswith("python:") else ("", "", "")
    if name != cls.__name__:
        return False
    if target.endswith(".py") or os.sep in target:
        source = inspect.getsourcefile(cls)
        return source is not None and os.path.abspath(source) == os.path.abspath(target)
    return target == cls.__module__


class CheckpointOptions:
    """A trial's CheckpointConfig as the Tuner wrote it (OPTIONS_ENV; none: no periodic or end ones)."""

    def __init__(self, frequency=0, at_end=False):
        self.frequency, self.at_end = frequency, at_end

    @classmethod
    def of_trial(cls):
        path = os.environ.get(OPTIONS_ENV)
        if not path:
            return cls()
        with open(path) as file:
            stored = json.load(file)
        return cls(stored["checkpoint_frequency"], stored["checkpoint_at_end"])

    def due(self, iteration, last, stopping):
        return stopping or bool(self.frequency and iteration % self.frequency == 0) or (self.at_end and last)


class _Session:
    """The trial's trainrt session, as the loop uses it (a test gives a fake with these methods)."""

    def restored(self):
        from .. import get_checkpoint
        return get_checkpoint()

    def should_stop(self):
        from .. import _state
        return _state.session().should_stop()

    def may_end_at(self, result):
        """Whether reporting `result` now may end the trial (trainrt's rule: a [stop] criterion it
        meets, a scheduler's pause point it reaches; collective)."""
        from .. import _state
        return _state.session().may_end_at(result)

    def asked_to_checkpoint(self, result):
        """Collective: whether the driver's callbacks asked for a checkpoint of `result` (False
        without a following driver)."""
        if not os.environ.get(CALLBACK_VERDICTS_ENV):
            return False
        import numpy as np
        from .. import _state
        context = _state.session().context()
        asked = np.array([_callback_verdict(context["run_dir"], result) if context["world_rank"] == 0 else 0],
                         dtype=np.int64)
        _state.session().allreduce(asked, "max")
        return bool(asked[0])

    def report(self, metrics, trainable=None):
        """trainrt.report(metrics), with a checkpoint of trainable's save_checkpoint() when given."""
        from .. import report
        from ..checkpoint import Checkpoint
        if trainable is None:
            report(metrics)
            return
        directory = tempfile.mkdtemp(prefix="trainrt_trainable_")
        try:
            trainable._save_to(directory)
            report(metrics, checkpoint=Checkpoint.from_directory(directory))
        finally:
            shutil.rmtree(directory, ignore_errors=True)


def _callback_verdict(run_dir, result):
    """Rank 0: writes `result` for the driver's callbacks and waits for their answer; 1 for
    checkpoint. An answer already there (a rerun of this iteration) stands."""
    from .._trainrt import layout
    iteration = result["training_iteration"]
    verdict = layout.callback_verdict(run_dir, iteration)
    if not os.path.exists(verdict):
        _write_whole(layout.callback_result(run_dir, iteration), json.dumps(result, default=repr))
    deadline = time.monotonic() + VERDICT_WAIT_S
    while not os.path.exists(verdict):
        if time.monotonic() > deadline:
            from .. import _state
            _state.log("warning", f"trainrt.tune: no answer from the driver's callbacks on iteration {iteration} "
                                  f"within {VERDICT_WAIT_S} s ({verdict}): the trial goes on without it")
            return 0
        time.sleep(0.01)
    with open(verdict) as file:
        return int(file.read().strip() == "checkpoint")


def _write_whole(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as file:
        file.write(text)
    os.replace(path + ".tmp", path)


def run_trial(cls, config, parameters, session=None, options=None):
    """A trial of `cls` (module docstring): construct, restore, step and report until it ends;
    cleanup() whatever ends it."""
    session = session or _Session()
    options = options or CheckpointOptions.of_trial()
    _active.append(cls)
    try:
        trainable = cls(config, **parameters)
        try:
            restored = session.restored()
            if restored is not None:
                trainable.restore(restored)
            _loop(trainable, session, options)
        finally:
            trainable.stop()
    finally:
        _active.pop()


def _loop(trainable, session, options):
    """step(), report, until a result says done (a stop, a criterion or the scheduler end the
    trial inside report(): trainrt.report raises to end the function)."""
    while True:
        result, filled = trainable._advance()
        last = bool(result.get("done")) or (options.at_end and session.may_end_at(result))
        stopping = session.should_stop()
        due = session.asked_to_checkpoint(filled) or options.due(trainable.iteration, last, stopping)
        session.report(result, trainable if due else None)
        if result.get("done"):
            return


def options_file(files, tuner):
    """The environment that names a class trainable's CheckpointConfig to its trials: writes
    SWEEP_DIR/tuner/trainable.json for fit() (a restored Tuner reuses the stored one). A function
    trainable given checkpoint_frequency or checkpoint_at_end is refused, as Ray refuses it."""
    path = os.path.join(files, "trainable.json")
    if tuner._restored is None:
        stored = checkpoint_options(tuner.trainable, tuner.run_config)
        if stored is None:
            if os.path.exists(path):
                os.remove(path)
            return {}
        with open(path + ".tmp", "w") as file:
            json.dump(stored, file)
        os.replace(path + ".tmp", path)
    return {OPTIONS_ENV: path} if os.path.exists(path) else {}


def checkpoint_options(trainable, run_config):
    """{checkpoint_frequency, checkpoint_at_end} for a Trainable subclass (inside with_parameters
    / with_resources too), None for a function; refused settings raise with one line."""
    while hasattr(trainable, "trainable") and not isinstance(trainable, type):
        trainable = trainable.trainable
    kept = getattr(run_config, "checkpoint_config", None)
    frequency = getattr(kept, "checkpoint_frequency", 0) or 0
    given_at_end = getattr(kept, "checkpoint_at_end", None)
    at_end = bool(given_at_end)
    if not (isinstance(trainable, type) and issubclass(trainable, Trainable)):
        if frequency or at_end:
            what = "checkpoint_frequency" if frequency else "checkpoint_at_end"
            raise ValueError(f"trainrt.tune: CheckpointConfig({what}=...) is for a class Trainable; a function "
                             f"reports its checkpoints itself: tune.report(metrics, checkpoint=...) every N "
                             f"iterations, and once more at its end")
        return None
    if given_at_end is None:  # Ray's default for a class Trainable, unless the stop cannot be foreseen
        at_end = "time_total_s" not in (run_config.stop or {})
    if at_end and "time_total_s" in (run_config.stop or {}):
        raise NotImplementedError("trainrt.tune: CheckpointConfig(checkpoint_at_end=True) with stop={'time_total_s': "
                                  "...}: a trial cannot tell beforehand which result that stop ends it at; stop by "
                                  "training_iteration or a metric, or use checkpoint_frequency")
    if hasattr(trainable, "default_resource_request"):
        raise NotImplementedError(f"trainrt.tune: {trainable.__name__}.default_resource_request is not used: give a "
                                  f"trial's resources with tune.with_resources({trainable.__name__}, {{\"cpu\": N}})")
    return {"checkpoint_frequency": frequency, "checkpoint_at_end": at_end}
