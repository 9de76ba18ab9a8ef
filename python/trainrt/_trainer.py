"""Ray Train's driver API on trainrt (docs/guides/coming-from-ray.md): ScalingConfig, RunConfig,
CheckpointConfig, FailureConfig, DataParallelTrainer / trainrt.torch.TorchTrainer(...).fit() ->
Result.

Where fit() runs the function:
- in a process a launcher started (srun, mpiexec, `trainrt supervise`: one rank of a world): here,
  on that world; every rank's fit() returns the Result;
- in a plain `python3 train.py`: it starts num_workers ranks of this same script (mpiexec, or srun
  inside a Slurm allocation); each rank runs the function in its own fit() and leaves the script
  there; the Result comes back to this process.
Settings, lowest first: trainrt's defaults < the INI file (--config) < TRAINRT_* variables < these
objects < the script's own --section.key=value arguments.
A stop (a stop signal, the time limit: exit 9) or a failure ends each rank's process with trainrt's
exit code, as `trainrt` would end (Slurm and the supervisor act on it); the driver of a spawned run
exits with a stop's code and raises TrainingFailedError for a failure.
"""
import contextlib
import dataclasses
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile

from . import _state

_CHILD = "TRAINRT_FIT_CHILD"  # set for the ranks fit() starts: the driver's pickled arguments
_driver_runs = []  # the run directories of the fit() calls this driver finished, in order
_child_calls = 0   # the fit() calls a started rank has passed on its way to the driver's current one


@dataclasses.dataclass
class ScalingConfig:
    num_workers: int = None   # ranks to start from a plain python3; under srun/mpiexec the launcher's
    use_gpu: bool = False
    resources_per_worker: dict = None  # accepted for Ray's scripts; Slurm's allocation decides
    trainer_resources: dict = None
    placement_strategy: str = "PACK"


@dataclasses.dataclass
class CheckpointConfig:
    num_to_keep: int = None
    checkpoint_score_attribute: str = None
    checkpoint_score_order: str = "max"


@dataclasses.dataclass
class FailureConfig:
    max_failures: int = 0
    fail_fast: bool = False


@dataclasses.dataclass
class RunConfig:
    name: str = None           # None: run.name from the job's settings
    storage_path: str = None   # None: run.storage_path
    checkpoint_config: CheckpointConfig = None
    failure_config: FailureConfig = None
    verbose: int = None
    stop: object = None        # Ray's stop dict {metric: threshold}: [stop] criteria

    def __post_init__(self):
        if self.stop is not None:
            stop_criteria(self.stop)  # refused here, in the driver, once


class TrainingFailedError(RuntimeError):
    """A run failed: exit_code is trainrt's (docs/reference/exit-codes.md); its one line was printed.
    `outcome` is how the run's record ends (trainrt._trainrt.layout.outcome): its message and the
    reports made before the failure."""

    def __init__(self, exit_code, path, outcome=None):
        if not path:
            where = "before the run started: the lines above say why"
        else:
            where = f"run directory {path}; `trainrt results {path}` shows what happened"
            if outcome and outcome.get("status") == "failed":
                where = f"after {outcome['reports']} reports: {outcome['message']}; {where}"
        super().__init__(f"training failed with exit code {exit_code} ({where})")
        self.exit_code = exit_code
        self.path = path


@dataclasses.dataclass
class Result:
    """What a finished run left (Ray's Result): the last reported metrics, the newest checkpoint,
    the retained checkpoints with their metrics, and the run directory."""
    metrics: dict
    checkpoint: object
    best_checkpoints: list
    path: str
    error: BaseException = None
    metrics_dataframe: object = None

    @classmethod
    def from_path(cls, path):
        from .checkpoint import Checkpoint
        from ._trainrt import layout
        rows = json.loads(layout.rows(path))
        retained = _retained_checkpoints(path)
        latest = None
        if retained:
            latest = Checkpoint.open(path)
        return cls(metrics=rows[-1] if rows else {}, checkpoint=latest, best_checkpoints=retained,
                   path=os.path.abspath(path), metrics_dataframe=_dataframe(rows), error=_error_of(path))


def _error_of(run_dir):
    """The run's failure as Ray's Result.error gives it (a TrainingFailedError), or None."""
    from ._trainrt import exit_codes, layout
    outcome = layout.outcome(run_dir)
    if outcome["status"] != "failed":
        return None
    return TrainingFailedError(outcome["exit_code"] or exit_codes.internal, os.path.abspath(run_dir), outcome)


def _retained_checkpoints(run_dir):
    """[(Checkpoint, metrics)] of the run's committed checkpoints, oldest first."""
    from .checkpoint import Checkpoint
    from ._trainrt import Error, layout
    found = []
    for path, metrics in layout.checkpoints(run_dir):
        try:
            checkpoint = Checkpoint.open(path)
        except Error:
            continue  # not committed or damaged: trainrt would not restore it either
        found.append((checkpoint, json.loads(metrics)))
    return found


def _dataframe(rows):
    try:
        import pandas
    except ImportError:
        return None
    return pandas.DataFrame(rows)


def _object_settings(scaling, run):
    """These objects as trainrt settings {key: (text, source)}, named by trainrt's own
    declarations; the source (`--print-config`) names the script and the object's field."""
    from ._trainrt import setting_keys
    keys = setting_keys()
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"
    settings = {}

    def take(key, value, field):
        settings[key] = (str(value), f"{script}: {field}")

    if scaling.use_gpu:
        take(keys.scaling.use_gpu, "true", "ScalingConfig(use_gpu=True)")
    if run.name:
        take(keys.run.name, run.name, "RunConfig(name=)")
    if run.storage_path:
        path = os.path.abspath(os.path.expanduser(os.fspath(run.storage_path)))
        take(keys.run.storage_path, path, "RunConfig(storage_path=)")
    kept = run.checkpoint_config
    if kept is not None and (getattr(kept, "checkpoint_frequency", 0) or getattr(kept, "checkpoint_at_end", None)):
        raise ValueError("trainrt: CheckpointConfig(checkpoint_frequency=, checkpoint_at_end=) is for a Tuner over a "
                         "tune.Trainable class; a Trainer's function saves with report(metrics, checkpoint=...) "
                         "where it chooses, as Ray refuses them for a Trainer")
    if kept is not None:
        if kept.num_to_keep is not None:
            take(keys.checkpoint.num_to_keep, kept.num_to_keep, "CheckpointConfig(num_to_keep=)")
        if kept.checkpoint_score_attribute:
            take(keys.checkpoint.score_attribute, kept.checkpoint_score_attribute,
                 "CheckpointConfig(checkpoint_score_attribute=)")
            take(keys.checkpoint.score_order, kept.checkpoint_score_order, "CheckpointConfig(checkpoint_score_order=)")
    if run.failure_config is not None:
        take(keys.failure.max_failures, run.failure_config.max_failures, "FailureConfig(max_failures=)")
    if run.stop is not None:
        take(keys.stop.criteria, stop_criteria(run.stop), "RunConfig(stop=)")
    return settings


def stop_criteria(stop):
    """RunConfig(stop={"metric": threshold, ...}) as [stop] criteria ("metric>=threshold,..."): the run
    ends as finished at the first report where any reported value reaches its threshold, as Ray's."""
    if not isinstance(stop, dict):
        raise NotImplementedError(f"trainrt: RunConfig(stop={type(stop).__name__}) is not supported: give a dict "
                                  f"{{metric: threshold}} (the run ends at the first report where a value reaches "
                                  f"its threshold, as Ray's), or return from the function")
    for metric, threshold in stop.items():
        if not isinstance(threshold, (int, float)) or "," in str(metric):
            raise ValueError(f"trainrt: RunConfig(stop={{{metric!r}: {threshold!r}}}): a stop dict maps a reported "
                             f"metric's name to a number (or True: a flag the function reports)")
    # A flag (stop={"done": True}, the function reporting "done": a bool) is reached at 1, as Ray
    # compares result >= True.
    return ",".join(f"{metric}>={int(threshold) if isinstance(threshold, bool) else threshold!r}"
                    for metric, threshold in stop.items())


# What to do instead of a Trainer argument trainrt refuses.
_REFUSED_TRAINER_ARGUMENTS = {
    "metadata": "put what the checkpoint must carry into it (Checkpoint attributes or files)",
    "torch_config": "the process group's backend is scaling.backend (--scaling.backend=gloo, or [scaling] in the "
                    "job's INI file), its timeout failure.collective_timeout",
    "backend_config": "the process group's backend is scaling.backend (--scaling.backend=gloo, or [scaling] in the "
                      "job's INI file)",
    "resume_from_checkpoint": "a run resumes from its own run directory's newest checkpoint (run it again with the "
                              "same RunConfig(name)); to start a new run from another run's checkpoint, pass "
                              "--checkpoint.resume_from=DIR for its first start",
}


# trainrt's flags that answer and exit (`python3 train.py --print-config`): no ranks are started.
_ANSWERED_HERE = {"--print-config", "--help", "--version", "--exit-codes", "--keys-markdown"}


class DataParallelTrainer:
    """Runs train_loop_per_worker on every rank (Ray's DataParallelTrainer); fit() -> Result."""

    def __init__(self, train_loop_per_worker, *, train_loop_config=None, scaling_config=None, run_config=None,
                 datasets=None, dataset_config=None, resume_from_checkpoint=None, metadata=None, torch_config=None,
                 backend_config=None):
        from ._raydata import ingest
        self.dataset_config = ingest.check_datasets(datasets, dataset_config)
        self.datasets = dict(datasets or {})
        for name, given in (("metadata", metadata), ("torch_config", torch_config), ("backend_config", backend_config),
                            ("resume_from_checkpoint", resume_from_checkpoint)):
            if given is not None:
                raise NotImplementedError(f"trainrt: {name}= is not supported: "
                                          + _REFUSED_TRAINER_ARGUMENTS[name])
        self.train_loop_per_worker = train_loop_per_worker
        self.train_loop_config = dict(train_loop_config or {})
        self.scaling_config = scaling_config or ScalingConfig()
        self.run_config = run_config or RunConfig()

    def fit(self):
        if _state.loading_file is not None:
            raise RuntimeError(
                f"trainrt: {_state.loading_file} calls fit() while trainrt loads it as the workload "
                f"(run.workload = python:FILE:FUNC runs FUNC itself): put the driver code under "
                f"`if __name__ == \"__main__\":`, or run the script with python3 instead")
        from ._trainrt import launcher
        mode, job_id = launcher()
        if os.environ.get(_CHILD):
            return _earlier_result(os.environ[_CHILD]) or self._fit_here()
        if mode != "single" or _ANSWERED_HERE.intersection(sys.argv[1:]):
            return self._fit_here()
        return self._spawn("srun" if job_id else "mpiexec")

    def _worker_context(self):
        """What every rank enters around the function (a framework's collective: XGBoostTrainer)."""
        return contextlib.nullcontext()

    # --- a rank of a launched world ---

    def _fit_here(self):
        from . import _entry, _trainrt
        config = self.train_loop_config
        child = os.environ.pop(_CHILD, None)
        if child:
            with open(os.path.join(child, "config.pickle"), "rb") as file:
                config = pickle.load(file)
        ran = {}
        wanted = self.scaling_config.num_workers

        def train_func(from_job):
            context = _state.context()
            ran.update(run_dir=context.run_dir, rank=context.world_rank)
            if child and context.world_rank == 0:  # the driver knows the run even if the ranks die
                _write_json(os.path.join(child, "result.json"), {"run_dir": context.run_dir})
            if self.scaling_config.resources_per_worker:
                _state.log("warning", f"ScalingConfig(resources_per_worker={self.scaling_config.resources_per_worker}) "
                           f"is not used: the Slurm allocation decides each rank's CPUs and GPUs (sbatch "
                           f"--cpus-per-task, --gpus-per-task)", once=True)
            if wanted and context.world_size != wanted:
                _state.log("warning", f"ScalingConfig(num_workers={wanted}), but the launcher started "
                           f"{context.world_size} ranks: training on {context.world_size}", once=True)
            if self.datasets:
                from ._raydata import ingest
                ingest.setup(self.datasets, self.dataset_config)
            with self._worker_context():
                return _entry._call(self.train_loop_per_worker, {**config, **from_job})

        _entry.activate_virtual_env()
        settings = _object_settings(self.scaling_config, self.run_config)
        name = getattr(self.train_loop_per_worker, "__name__", "python")
        reads = [f"train.{key}" for key in config if isinstance(key, str)]  # a --train.KEY close to one: misspelt
        code = _trainrt.run(list(sys.argv), train_func, name, settings, reads)
        if child:
            if ran.get("rank") == 0:
                _write_json(os.path.join(child, "result.json"), {"exit_code": code, "run_dir": ran["run_dir"]})
            raise SystemExit(code)  # a spawned rank leaves the script here: the driver goes on
        if code != 0 or "run_dir" not in ran:  # failed, or answered --print-config & co.
            raise SystemExit(code)
        return Result.from_path(ran["run_dir"])

    # --- the driver of a plain python3 ---

    def _launch(self, launcher, workers, script):
        return _supervised(_launch_command(launcher, workers), [sys.executable, script] + sys.argv[1:],
                           self.scaling_config, self.run_config)

    def _spawn(self, launcher):
        script = sys.argv[0] if sys.argv else ""
        if not script or not os.path.isfile(script):
            raise RuntimeError("trainrt: fit() from a plain python3 runs this script on every rank, but there is "
                               "no script file (python3 -c, an interactive session): launch it with mpiexec or srun")
        workers = self.scaling_config.num_workers or 1
        exchange = tempfile.mkdtemp(prefix="trainrt-fit-")
        try:
            with open(os.path.join(exchange, "config.pickle"), "wb") as file:
                pickle.dump(self.train_loop_config, file)
            with open(os.path.join(exchange, "earlier.json"), "w") as file:
                json.dump(_driver_runs, file)
            command = self._launch(launcher, workers, script)
            stops = _stop_signals(self.scaling_config, self.run_config)
            code, interrupted = _wait_through_signals(subprocess.Popen(command, env={**os.environ, _CHILD: exchange}),
                                                      stops)
            outcome = {}
            if os.path.exists(os.path.join(exchange, "result.json")):
                with open(os.path.join(exchange, "result.json")) as file:
                    outcome = json.load(file)
        finally:
            shutil.rmtree(exchange, ignore_errors=True)
        if interrupted and "exit_code" not in outcome:
            from ._trainrt import exit_codes
            raise SystemExit(exit_codes.interrupted)  # a second Ctrl-C ended the ranks at once
        result = _driver_result(outcome.get("exit_code", code), outcome.get("run_dir"))
        _driver_runs.append(result.path)
        return result


def _supervised(ranks, program, scaling, run):
    """`ranks` (LAUNCHER OPTIONS...) starting `program`, under `trainrt supervise` when
    RunConfig(failure_config=FailureConfig(max_failures)) allows failures: the supervisor relaunches
    the ranks after a failure by trainrt's one rule, and finds the run from the settings these
    objects give (passed as arguments unless the script's own arguments set them)."""
    failures = run.failure_config
    if failures is None or failures.max_failures == 0:
        return ranks + program
    from ._trainrt import binary
    given = {arg.split("=", 1)[0] for arg in sys.argv[1:]}
    objects = [f"--{key}={text}" for key, (text, _) in _object_settings(scaling, run).items()
               if f"--{key}" not in given]
    return [binary(), "supervise", f"--launcher={ranks[0]}", *ranks[1:], "--", *program, *objects]


def _earlier_result(exchange):
    """In a rank fit() started: the Result of one of the driver's earlier fit() calls (the script
    runs again from the top and meets them first), or None at the call the driver is in now."""
    global _child_calls
    with open(os.path.join(exchange, "earlier.json")) as file:
        earlier = json.load(file)
    if _child_calls >= len(earlier):
        return None
    _child_calls += 1
    return Result.from_path(earlier[_child_calls - 1])


def _stop_signals(scaling, run):
    """The signals that request a stop of this job ([stop] signals, resolved by trainrt from the
    script's arguments and these objects); none when the configuration is bad: the ranks then
    say what is wrong, once."""
    from ._trainrt import Error, stop_signals
    try:
        return [signal.Signals(number) for number in stop_signals(list(sys.argv), _object_settings(scaling, run))
                if number != signal.SIGINT]
    except Error:
        return []


def _wait_through_signals(process, stops):
    """(the launcher's exit code, whether a Ctrl-C came). A Ctrl-C reaches the launcher too (the
    terminal signals the whole process group): mpiexec hands it to the ranks, which stop at their
    next report, and a second one ends them; the driver waits for that instead of killing the
    launcher. A stop signal sent to the driver alone (`scancel --batch` to a batch script that
    execs python3, a preemption notice) is passed on to the ranks (_pass_on), and the driver
    outlives it and reports the stop as the ranks end."""
    seen = []
    previous = {signal.SIGINT: signal.signal(signal.SIGINT, lambda number, frame: seen.append(number))}
    for number in stops:
        previous[number] = signal.signal(number, lambda number, frame: _pass_on(number, process.pid))
    try:
        return process.wait(), bool(seen)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _pass_on(number, launcher_pid):
    """Sends signal `number` to the launcher's descendants that stop on it: srun (which hands it to
    its tasks on every node) and the ranks this machine runs (this interpreter's processes).
    mpiexec and `trainrt supervise` are left out: neither stops ranks on it (hydra may even end
    on a signal it does not handle), and a rank that gets a stop signal twice stops once."""
    from ._processes import descendants, program
    this = os.path.realpath(sys.executable)
    for pid in descendants(launcher_pid):
        name = program(pid) or ""
        if os.path.basename(name) == "srun" or (name and os.path.realpath(name) == this):
            with contextlib.suppress(OSError):
                os.kill(pid, number)


def _launch_command(launcher, workers):
    if shutil.which(launcher) is None:
        raise RuntimeError(f"trainrt: fit() starts {workers} ranks with {launcher}, which is not on PATH")
    from ._trainrt import step_command
    return step_command(launcher, workers)


def _driver_result(code, run_dir):
    from ._trainrt import exit_codes, layout
    if code == 0 and run_dir:
        return Result.from_path(run_dir)
    if code in (exit_codes.stopped, exit_codes.requeue_needed, exit_codes.interrupted):
        raise SystemExit(code)  # resumable: rerun (or requeue) the script and it resumes
    if code == exit_codes.config and not run_dir:
        raise SystemExit(code)  # bad input: the ranks said it in one line, before any run began
    raise TrainingFailedError(code or exit_codes.internal, run_dir, layout.outcome(run_dir) if run_dir else None)


def _write_json(path, value):
    partial = f"{path}.{os.getpid()}.tmp"
    with open(partial, "w") as file:
        json.dump(value, file)
    os.replace(partial, path)
