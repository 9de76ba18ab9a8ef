"""Ray Tune's driver API on trainrt's sweeps (docs/guides/sweeps.md):

    from trainrt import tune
    tuner = tune.Tuner(train_func,                                   # or a TorchTrainer / DataParallelTrainer
                       param_space={"lr": tune.loguniform(1e-4, 1e-1), "batch_size": tune.choice([32, 64])},
                       tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=8,
                                                   scheduler=tune.ASHAScheduler(max_t=20, grace_period=1)),
                       run_config=trainrt.RunConfig(name="sweep", storage_path="runs"))
    results = tuner.fit()                                            # a ResultGrid
    best = results.get_best_result()                                 # .config, .metrics, .checkpoint, .path

fit() writes the sweep as trainrt's own files (SWEEP_DIR/tuner/sweep.ini and base.ini: the
function as run.workload = python:FILE:FUNC, param_space as [space] over train.* keys) and runs
`trainrt tune` on them: the trials are trainrt runs (srun steps inside an allocation, mpiexec
outside), requeue-safe as any sweep; run again, fit() resumes the unfinished trials. The trial
function gets its values in its config (and trainrt.get_config()). The domains are text that
trainrt's C++ parser reads and checks (one rule, in one place).
"""
import dataclasses
import inspect
import os
import subprocess

from .. import Checkpoint, _init, get_checkpoint, get_context, report
from .._trainer import CheckpointConfig, DataParallelTrainer, FailureConfig, Result, RunConfig, stop_criteria
from .schedulers import ASHAScheduler, AsyncHyperBandScheduler, FIFOScheduler, HyperBandScheduler, PopulationBasedTraining
from .search import BasicVariantGenerator, ConcurrencyLimiter, Repeater
from .search.optuna import OptunaSearch
# ray.tune's own Callback, RunConfig/CheckpointConfig (a Tuner's callbacks; a Trainable's checkpoints),
# sample_from and the class API (callback.py, config.py, sample.py, trainable.py).
from . import callback as _callback, sample as _sample, trainable as _trainable
from .callback import Callback
from .config import CheckpointConfig, RunConfig
from .sample import sample_from
from .trainable import Trainable

# A Ray Tune function trainable calls ray.tune.report / get_checkpoint / get_context and builds
# ray.tune.Checkpoint: after the sed they are trainrt's own (one session for Train and Tune).
__all__ = ["ASHAScheduler", "AsyncHyperBandScheduler", "Callback", "Checkpoint", "CheckpointConfig", "choice",
           "FailureConfig", "FIFOScheduler", "get_checkpoint", "get_context", "grid_search", "loguniform",
           "OptunaSearch", "PopulationBasedTraining", "qrandint", "quniform", "randint", "randn", "report", "Result", "ResultGrid",
           "RunConfig", "sample_from", "Trainable", "TuneConfig", "TuneError", "Tuner", "uniform", "with_parameters",
           "with_resources"]


class _Domain:
    def __init__(self, text, points=None):
        self.text = text
        self.points = points  # grid_search: its values, each tried (num_samples times, as Ray)

    def __repr__(self):
        return self.text


def _ini_value(value):
    """A value a [train] key of the INI file holds as itself (else the trials get it pickled): C++'s rule."""
    from .._trainrt import ini
    return ini.storable(value)


def _literal(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise TypeError(f"trainrt.tune: {value!r} cannot be a search value (numbers, strings, booleans)")


class _WithParameters:
    """tune.with_parameters(trainable, **objects): Ray's way to hand a function trainable large
    objects besides its config. Called directly it is trainable(config, **objects); a Tuner pickles
    the objects into the sweep's directory once and every trial loads them from there."""

    def __init__(self, trainable, objects):
        if not callable(trainable) or isinstance(trainable, DataParallelTrainer):
            raise TypeError("trainrt.tune.with_parameters: the trainable is a training function")
        self.trainable, self.objects = trainable, objects

    def __call__(self, config):
        return self.trainable(config, **self.objects)


def with_parameters(trainable, **objects):
    return _WithParameters(trainable, objects)


class _WithResources:
    """tune.with_resources(trainable, {"cpu": C, "gpu": G}): each trial of a function trainable is
    one rank that takes C of the CPUs trials share (so C fewer run at once) and, with G = 1, a GPU
    (scaling.use_gpu). Placement groups, callables, fractions and other resources are refused."""

    def __init__(self, trainable, resources):
        if not isinstance(resources, dict):
            raise TypeError(f"trainrt.tune.with_resources: resources is a dict such as {{\"cpu\": 2, \"gpu\": 0}} "
                            f"(got {type(resources).__name__}); a trial of several ranks is "
                            f"TorchTrainer(scaling_config=ScalingConfig(num_workers=N))")
        if isinstance(trainable, DataParallelTrainer) or not callable(trainable):
            raise TypeError("trainrt.tune.with_resources: the trainable is a training function (a Trainer's "
                            "resources are its ScalingConfig)")
        unknown = sorted(set(resources) - {"cpu", "gpu"})
        if unknown:
            raise ValueError(f"trainrt.tune.with_resources: {', '.join(unknown)} is not a resource trainrt places "
                             f"(\"cpu\" and \"gpu\" are; Slurm's allocation decides the rest)")
        cpu, gpu = resources.get("cpu", 1), resources.get("gpu", 0)
        if isinstance(cpu, bool) or cpu != int(cpu) or cpu < 1:
            raise ValueError(f"trainrt.tune.with_resources: \"cpu\": {cpu!r}; whole CPUs, at least 1")
        if isinstance(gpu, bool) or gpu not in (0, 1):
            raise ValueError(f"trainrt.tune.with_resources: \"gpu\": {gpu!r}; 0 or 1 (a trial is one rank; more "
                             f"GPUs are more ranks: TorchTrainer(scaling_config=ScalingConfig(num_workers=N, "
                             f"use_gpu=True)))")
        self.trainable, self.cpus, self.use_gpu = trainable, int(cpu), gpu == 1

    def __call__(self, config):
        return self.trainable(config)


def with_resources(trainable, resources):
    return _WithResources(trainable, resources)


def _pickled(path, objects):
    import pickle
    with open(path + ".tmp", "wb") as file:
        pickle.dump(objects, file)
    os.replace(path + ".tmp", path)
    return path


def _unwrapped(trainable, kind):
    """The `kind` wrapper (with_parameters, with_resources) in `trainable`, either around the other
    or alone; None without one."""
    while trainable is not None:
        if isinstance(trainable, kind):
            return trainable
        trainable = getattr(trainable, "trainable", None) if isinstance(trainable, (_WithParameters, _WithResources)) \
            else None
    return None


def choice(categories):
    return _Domain(f"choice({', '.join(_literal(c) for c in categories)})")


def grid_search(values):
    values = list(values)
    return _Domain(f"grid({', '.join(_literal(v) for v in values)})", points=len(values))


def uniform(lower, upper):
    return _Domain(f"uniform({lower}, {upper})")


def quniform(lower, upper, q):
    return _Domain(f"quniform({lower}, {upper}, {q})")


def loguniform(lower, upper):
    return _Domain(f"loguniform({lower}, {upper})")


def randint(lower, upper):
    return _Domain(f"randint({lower}, {upper})")


def qrandint(lower, upper, q=1):
    return _Domain(f"qrandint({lower}, {upper}, {q})")


def randn(mean=0.0, sd=1.0):
    return _Domain(f"randn({mean}, {sd})")


@dataclasses.dataclass
class TuneConfig:
    """Ray's TuneConfig. Its other fields are refused with one line each, when set to what trainrt
    cannot do: each trial is a step of its own processes, named trial_NNNN, in its own run directory."""
    metric: str = None
    mode: str = None
    num_samples: int = 1
    scheduler: object = None
    search_alg: object = None
    max_concurrent_trials: int = None
    time_budget_s: object = None
    reuse_actors: bool = None
    trial_name_creator: object = None
    trial_dirname_creator: object = None
    chdir_to_trial_dir: bool = None

    def __post_init__(self):
        refused = {
            "time_budget_s": (self.time_budget_s is not None,
                              "stop the sweep with the job's time limit (sbatch --time): its trials checkpoint and "
                              "the same script, run again, goes on with them"),
            "chdir_to_trial_dir=True": (bool(self.chdir_to_trial_dir),
                                        "trials run in the driver's working directory; a trial's directory is "
                                        "SWEEP_DIR/trial_NNNN (its Result.path)"),
        }
        for name, (given, instead) in refused.items():
            if given:
                raise NotImplementedError(f"trainrt.tune.TuneConfig({name}) is not supported: {instead}")
        if self.reuse_actors:  # Ray's hint ("when possible"): said once, not refused
            import sys
            print("trainrt.tune: TuneConfig(reuse_actors=True): each trial runs in processes of its own (a step); "
                  "there are no actors to reuse", file=sys.stderr, flush=True)


class TuneError(RuntimeError):
    """`trainrt tune` ended with a code other than 0 (its line says why); exit_code is trainrt's."""

    def __init__(self, exit_code, path):
        super().__init__(f"trainrt tune exited with code {exit_code} (sweep directory {path}; "
                         f"`trainrt results {path}` shows the trials)")
        self.exit_code = exit_code
        self.path = path


class ResultGrid:
    """The trials of a sweep (Ray's ResultGrid): each a Result with its .config."""

    def __init__(self, path, constants=None):
        from .._trainrt import layout
        self.path = path
        self._record = layout.sweep(path)
        self._results = []
        for index, trial in enumerate(self._record["trials"]):
            trial_dir = os.path.join(path, trial["name"])
            result = Result.from_path(trial_dir) if os.path.isdir(trial_dir) else \
                Result(metrics={}, checkpoint=None, best_checkpoints=[], path=trial_dir)
            result.config = _sample.trial_config(constants or {}, index, trial["values"])
            result.status = trial["status"]
            _name_trial(result, trial["name"])
            if trial["status"] == "ERROR":
                result.error = TuneError(1, trial_dir)
            self._results.append(result)

    def __len__(self):
        return len(self._results)

    def __getitem__(self, index):
        return self._results[index]

    def __iter__(self):
        return iter(self._results)

    @property
    def errors(self):
        return [r.error for r in self._results if r.error is not None]

    @property
    def num_errors(self):
        return len(self.errors)

    def get_best_result(self, metric=None, mode=None, scope="last"):
        """The trial whose `metric` is best under `scope` (Ray's: "last" reported value, "avg",
        "last-5-avg", "last-10-avg" or "all": the best ever), by the rule `trainrt results` uses."""
        from .._trainrt import Error, exit_codes, layout
        metric = metric or self._record["metric"]
        mode = mode or self._record["mode"]
        if not metric:
            raise ValueError("trainrt.tune: get_best_result() needs metric= and mode= when TuneConfig named no metric")
        try:
            name = layout.best_trial(self.path, metric, mode, scope)
        except Error as error:
            if error.exit_code != exit_codes.config:
                raise
            raise ValueError(f"trainrt.tune: get_best_result(): {error}") from None
        if name is None:
            raise RuntimeError(f"trainrt.tune: no trial reported '{metric}'")
        return self._results[[trial["name"] for trial in self._record["trials"]].index(name)]

    def get_dataframe(self):
        """One row per trial: its last reported metrics, "config/<key>" values, path and status."""
        import pandas
        rows = []
        for result in self._results:
            row = dict(result.metrics)
            row.update({f"config/{key}": value for key, value in result.config.items()})
            row.update(trial_path=result.path, status=result.status)
            rows.append(row)
        return pandas.DataFrame(rows)


class Tuner:
    def __init__(self, trainable, *, param_space=None, tune_config=None, run_config=None):
        self.trainable = trainable
        self.param_space = dict(param_space or {})
        self.tune_config = tune_config or TuneConfig()
        self.run_config = run_config or RunConfig()
        self._restored = None  # (sweep directory, extra `trainrt tune` arguments) after restore()

    @classmethod
    def can_restore(cls, path):
        """Whether `path` is a sweep's directory that restore() can go on with (Ray's can_restore)."""
        from .._trainrt import layout
        path = os.path.abspath(os.path.expanduser(os.fspath(path)))
        return os.path.exists(layout.sweep_record(path)) and os.path.exists(os.path.join(path, "tuner", "sweep.ini"))

    @classmethod
    def restore(cls, path, trainable, *, resume_unfinished=True, resume_errored=False, restart_errored=False,
                param_space=None, **unsupported):
        """The sweep stored in `path` (its fit() wrote tuner/sweep.ini and base.ini there), to go on with:
        fit() runs its unfinished trials on from their checkpoints, and with resume_errored=True its
        ERROR trials too (Ray's Tuner.restore). The stored sweep defines the trials; `trainable` must
        be the function it runs."""
        refused = {"resume_unfinished=False": not resume_unfinished, "restart_errored=True": restart_errored,
                   "param_space=": param_space is not None, **{f"{key}=": True for key in unsupported}}
        for what, given in refused.items():
            if given:
                raise NotImplementedError(f"trainrt.tune.Tuner.restore({what}) is not supported: a restored sweep "
                                          f"goes on with its stored trials and space; resume_errored=True resumes its "
                                          f"ERROR trials from their checkpoints")
        path = os.path.abspath(os.path.expanduser(os.fspath(path)))
        if not cls.can_restore(path):
            raise ValueError(f"trainrt.tune.Tuner.restore: {path} holds no sweep that Tuner.fit() wrote (no "
                             f"tuner/sweep.ini and sweep record)")
        tuner = cls(trainable)
        _check_restored_function(path, tuner._function()[0])
        tuner._restored = (path, ["--resume-errored"] if resume_errored else [])
        return tuner

    def fit(self):
        """Runs the sweep (`trainrt tune`) and returns its ResultGrid."""
        from .. import _state
        if _state.loading_file is not None:
            raise RuntimeError(f"trainrt: {_state.loading_file} calls Tuner.fit() while trainrt loads it as a trial's "
                               f"workload: put the driver code under `if __name__ == \"__main__\":`")
        if self._restored is not None:
            return self._fit_restored(*self._restored)
        self._check_param_space()
        function, constants, ranks = self._function()
        resources = _unwrapped(self.trainable, _WithResources)
        cpus_per_trial = ranks * (resources.cpus if resources is not None else 1)
        from .._trainrt import layout
        given = self.run_config.storage_path
        storage = os.path.abspath(os.path.expanduser(os.fspath(layout.storage_path(given and os.fspath(given)))))
        name = self.run_config.name or function.__name__ + "_tune"
        sweep_dir = layout.run_dir(storage, name)
        files = os.path.join(sweep_dir, "tuner")
        os.makedirs(files, exist_ok=True)
        base, sweep = os.path.join(files, "base.ini"), os.path.join(files, "sweep.ini")
        _write(base, self._base_text(function, constants, storage, name))
        _write(sweep, self._sweep_text(ranks))
        _write_searcher_files(self.tune_config.search_alg, files)
        _sample.resolve({**constants, **self._space()[1]}, self._space()[0], self.tune_config, files)
        follower = _callback.follower(self.run_config, self.tune_config, function.__name__,
                                      _sample.trial_count(self.tune_config, self._space()[0]))
        limit = _concurrency(self.tune_config.max_concurrent_trials, _searcher(self.tune_config.search_alg)[1])
        total = ranks * max(1, limit or _init.cpus() // cpus_per_trial)
        return _run_sweep(sweep_dir, ["--ranks", str(total)], {**constants, **self._space()[1]},
                          self._parameters_env(files), follower)

    def _parameters_env(self, files):
        """tune.with_parameters' objects and the constants an INI value cannot hold (Ray's
        "eval_metric": ["logloss", "error"]), pickled once into the sweep's tuner/ folder, and the
        environment of `trainrt tune` that names them to every trial ({} without them)."""
        from .. import _state
        environment = {}
        objects = _unwrapped(self.trainable, _WithParameters)
        if objects is not None:
            environment[_state.TUNE_PARAMETERS_ENV] = _pickled(os.path.join(files, "parameters.pickle"), objects.objects)
        others = {key: value for key, value in {**self._function()[1], **self._space()[1]}.items()
                  if not _ini_value(value)}
        stored = os.path.join(files, "constants.pickle")
        if others:
            environment[_state.TUNE_CONSTANTS_ENV] = _pickled(stored, others)
        elif os.path.exists(stored):  # a restored sweep's, from its first fit()
            environment[_state.TUNE_CONSTANTS_ENV] = stored
        environment.update(_trainable.options_file(files, self))  # a class Trainable's CheckpointConfig
        return environment

    def _fit_restored(self, sweep_dir, extra):
        """fit() of a restored Tuner: `trainrt tune` on the stored sweep files, with the ranks it ran
        with (the stored sweep's --ranks)."""
        try:
            with open(os.path.join(sweep_dir, "tuner", "ranks")) as file:
                ranks = file.read().strip()
        except FileNotFoundError:  # a sweep fit() made before it kept its --ranks
            ranks = str(_init.cpus())
        from .search.hyperopt import stored_searched
        files = os.path.join(sweep_dir, "tuner")
        return _run_sweep(sweep_dir, ["--ranks", ranks] + extra,
                          {**_stored_constants(sweep_dir), **_sample.stored(files), **stored_searched(files)},
                          self._parameters_env(os.path.join(sweep_dir, "tuner")))

    def _check_param_space(self):
        """Ray tunes any Trainer argument through param_space; trainrt tunes train_loop_config (or a
        function trainable's config) alone, and says so rather than dropping the others."""
        if "train_loop_config" not in self.param_space:
            return
        others = sorted(key for key in self.param_space if key != "train_loop_config")
        if others:
            raise ValueError(f"trainrt.tune.Tuner: param_space[{others[0]!r}] cannot be tuned yet: trainrt tunes "
                             f"train_loop_config only; set {others[0]} on the trainer itself, or tune a value of "
                             f"train_loop_config that the function reads")

    def _function(self):
        """(function, constant config, ranks per trial)."""
        if isinstance(self.trainable, DataParallelTrainer):
            trainer = self.trainable
            if trainer.datasets:
                raise NotImplementedError("trainrt.tune.Tuner: a trainer with datasets= (Ray Data) cannot be tuned "
                                          "yet: read the data in the function (trainrt.data's readers there), or "
                                          "fit() the trainer without a Tuner")
            return trainer.train_loop_per_worker, dict(trainer.train_loop_config), \
                trainer.scaling_config.num_workers or 1
        if isinstance(self.trainable, (_WithParameters, _WithResources)):
            inner = self.trainable
            while isinstance(inner, (_WithParameters, _WithResources)):
                inner = inner.trainable
            return inner, {}, 1
        if callable(self.trainable):
            return self.trainable, {}, 1
        raise TypeError("trainrt.tune.Tuner: the trainable is a function or a TorchTrainer/DataParallelTrainer")

    def _space(self):
        """({config key: domain}, {config key: constant}): param_space's, PBT's mutations and a
        HyperOptSearch(space=...)'s (its keys searched() domains, their values evaluated per trial)."""
        space = dict(self.param_space.get("train_loop_config", self.param_space))
        domains = {**{key: value for key, value in space.items() if isinstance(value, _Domain)}, **self._pbt_space()[0]}
        constants = {key: value for key, value in space.items() if not isinstance(value, _Domain)}
        searched, fixed = _searched_space(self.tune_config.search_alg)
        if searched and domains:
            raise ValueError(f"trainrt.tune.Tuner: HyperOptSearch(space=...) draws the trials' values, and "
                             f"param_space has domains too ({next(iter(domains))!r}): keep one of them")
        return {**domains, **{key: _Domain("searched()") for key in searched}}, {**constants, **fixed, **searched}

    def _pbt_space(self):
        """PopulationBasedTraining's hyperparam_mutations as [space] domains, and the keys param_space
        gives as constants, where every trial starts (schedulers.py); ({}, []) without PBT."""
        scheduler = self.tune_config.scheduler
        if not isinstance(scheduler, PopulationBasedTraining):
            return {}, []
        return scheduler._sweep_space(dict(self.param_space.get("train_loop_config", self.param_space)), _Domain, choice)

    def _base_text(self, function, constants, storage, name):
        """base.ini: the job every trial runs, as trainrt._trainrt.ini writes it from the settings'
        declarations (config/settings.hpp; a key they lack is a ValueError, a None value left out)."""
        from .._trainrt import ini
        _, fixed = self._space()
        resources = _unwrapped(self.trainable, _WithResources)
        stop = self.run_config.stop  # each trial ends when it meets them, as Ray's trials
        return ini.job({
            "run": {"workload": _workload(function), "storage_path": storage,
                    "name": name},
            "train": {key: value for key, value in {**constants, **fixed}.items() if _ini_value(value)},
            "scaling": {"use_gpu": True if resources is not None and resources.use_gpu else None},
            "stop": {"criteria": stop_criteria(stop) if stop is not None else None}})

    def _sweep_text(self, ranks):
        """sweep.ini: [tune] and [space] as trainrt._trainrt.ini writes them from the sweep's
        declarations (tune/sweep_config.hpp; a key they lack is a ValueError, a None value left out,
        so that `trainrt tune` applies its declared default)."""
        from .._trainrt import ini
        config, domains = self.tune_config, self._space()[0]
        search, limit = _searcher(config.search_alg)
        scheduler = config.scheduler or FIFOScheduler()
        objectives = search.objectives() if search else None  # a multi-objective search's metrics
        metric = config.metric or getattr(scheduler, "metric", None) or (None if objectives else getattr(search, "metric", None))
        mode = config.mode or getattr(scheduler, "mode", None) or (None if objectives else getattr(search, "mode", None))
        if not metric and ((search is not None and not objectives) or not isinstance(scheduler, FIFOScheduler)):
            raise ValueError(f"trainrt.tune: {type(search or scheduler).__name__} compares trials by a reported "
                             f"metric: name it in TuneConfig(metric=..., mode=...)")
        points = 1  # Ray runs num_samples trials per grid point; trainrt's num_samples counts them all
        for domain in domains.values():
            points *= domain.points or 1
        failure = self.run_config.failure_config  # Ray retries a failed trial max_failures times (-1: without end)
        retries = None if failure is None else failure.max_failures if failure.max_failures >= 0 else 2**31 - 1
        keys = {"base": "base.ini", "metric": metric, "mode": mode, "num_samples": config.num_samples * points,
                "ranks_per_trial": ranks, "max_concurrent_trials": _concurrency(config.max_concurrent_trials, limit),
                "max_failures_per_trial": retries, "search": "random"}
        keys.update(search.sweep_keys() if search else {})
        keys.update(_repeat_keys(config.search_alg))
        keys.update(_scheduler_keys(scheduler))
        keys["pbt.start_from_base"] = ", ".join(f"train.{key}" for key in self._pbt_space()[1]) or None
        return ini.sweep({"tune": keys, "space": {f"train.{key}": domain.text for key, domain in domains.items()}})


def _scheduler_keys(scheduler):
    """The [tune] keys of a Ray scheduler (FIFO: none, the declared default)."""
    from .schedulers import PB2, MedianStoppingRule
    if isinstance(scheduler, MedianStoppingRule):
        return {"scheduler": "median_stopping", "median.time_attr": scheduler.time_attr,
                "median.grace_period": scheduler.grace_period,
                "median.min_samples_required": scheduler.min_samples_required}
    if isinstance(scheduler, PB2):  # PBT's keys but resample_probability, which PB2 has not
        return {"scheduler": "pb2", "pbt.time_attr": scheduler.time_attr,
                "pbt.perturbation_interval": scheduler.perturbation_interval,
                "pbt.quantile_fraction": scheduler.quantile_fraction}
    if isinstance(scheduler, ASHAScheduler):
        return {"scheduler": "asha", "asha.time_attr": scheduler.time_attr, "asha.max_t": scheduler.max_t,
                "asha.grace_period": scheduler.grace_period, "asha.reduction_factor": scheduler.reduction_factor}
    if isinstance(scheduler, HyperBandScheduler):
        stop_last = scheduler.stop_last_trials
        return {"scheduler": "hyperband", "hyperband.time_attr": scheduler.time_attr, "hyperband.max_t": scheduler.max_t,
                "hyperband.reduction_factor": scheduler.reduction_factor,
                "hyperband.stop_last_trials": None if stop_last is None else str(bool(stop_last)).lower()}
    if isinstance(scheduler, PopulationBasedTraining):
        return {"scheduler": "pbt", "pbt.time_attr": scheduler.time_attr,
                "pbt.perturbation_interval": scheduler.perturbation_interval,
                "pbt.quantile_fraction": scheduler.quantile_fraction,
                "pbt.resample_probability": scheduler.resample_probability}
    return {}


def _run_sweep(sweep_dir, arguments, constants, env, follower=None):
    """`trainrt tune` on SWEEP_DIR/tuner/sweep.ini with `env` added to this environment; its
    ResultGrid, or TuneError for a code other than 0. A follower (callback.py) runs it and calls
    the callbacks as it goes."""
    from .. import _state
    from .._trainrt import binary
    with open(os.path.join(sweep_dir, "tuner", "ranks"), "w") as file:
        file.write(arguments[arguments.index("--ranks") + 1] + "\n")
    environment = {key: value for key, value in os.environ.items()
                   if key not in (_state.TUNE_PARAMETERS_ENV, _state.TUNE_CONSTANTS_ENV, _trainable.OPTIONS_ENV)}
    command = [binary(), "tune", "--config", os.path.join(sweep_dir, "tuner", "sweep.ini")] + arguments
    code = follower.run(command, {**environment, **env}, sweep_dir, constants) if follower is not None else \
        subprocess.call(command, env={**environment, **env})
    if code != 0:
        raise TuneError(code, sweep_dir)
    return ResultGrid(sweep_dir, constants)


def _stored_base(sweep_dir):
    """The base.ini a sweep's fit() wrote (SWEEP_DIR/tuner/base.ini), parsed, keys as written."""
    import configparser
    parser = configparser.ConfigParser()
    parser.optionxform = str
    parser.read(os.path.join(sweep_dir, "tuner", "base.ini"))
    return parser


def _stored_constants(sweep_dir):
    """The constants of a stored sweep's config: its base.ini's [train] values."""
    parser = _stored_base(sweep_dir)
    return {key: _parsed(value) for key, value in parser["train"].items()} if parser.has_section("train") else {}


def _workload(function):
    """run.workload for the trainable `function` (or class): one of trainrt's own modules by its
    module name (a module of a package may import relatively), any other by its file, which each
    trial loads as trainrt loads a script."""
    if function.__name__ == "<lambda>":
        raise TypeError("trainrt.tune.Tuner: the function must be a named function defined in a file")
    if function.__module__.split(".")[0] == __name__.split(".")[0]:
        return f"python:{function.__module__}:{function.__name__}"
    source = inspect.getsourcefile(function)
    if source is None:
        raise TypeError("trainrt.tune.Tuner: the function must be a named function defined in a file")
    return f"python:{os.path.abspath(source)}:{function.__name__}"


def _check_restored_function(sweep_dir, function):
    """The trainable given to restore() is the function the stored sweep runs (its base.ini's
    run.workload = python:FILE:FUNC)."""
    stored = _stored_base(sweep_dir).get("run", "workload", fallback="")
    if not stored.endswith(f":{function.__name__}"):
        raise ValueError(f"trainrt.tune.Tuner.restore: {sweep_dir} runs {stored}, not {function.__name__}: pass "
                         f"the function the sweep was made with")


def _name_trial(result, name):
    """Ray's trial_id in a trial's metrics and its rows: trainrt's trial name (trial_0003)."""
    if result.metrics:
        result.metrics["trial_id"] = name
    if result.metrics_dataframe is not None and len(result.metrics_dataframe):
        result.metrics_dataframe["trial_id"] = name


def _searcher(search_alg):
    """(OptunaSearch, BayesOptSearch, NevergradSearch, HyperOptSearch, TuneBOHB or None for random/grid search, the concurrency a ConcurrencyLimiter or
    BasicVariantGenerator sets or 0)."""
    limit = 0
    if isinstance(search_alg, ConcurrencyLimiter):
        search_alg, limit = search_alg.searcher, search_alg.max_concurrent
    if isinstance(search_alg, Repeater):
        search_alg = search_alg.searcher
    if isinstance(search_alg, BasicVariantGenerator):
        return None, limit or search_alg.max_concurrent
    from .search.bohb import TuneBOHB
    if isinstance(search_alg, TuneBOHB):
        return search_alg, limit or (search_alg.max_concurrent if search_alg.max_concurrent > 0 else 0)
    from .search.bayesopt import BayesOptSearch
    from .search.hyperopt import HyperOptSearch
    from .search.nevergrad import NevergradSearch
    if search_alg is None or isinstance(search_alg, (OptunaSearch, BayesOptSearch, NevergradSearch, HyperOptSearch)):
        return search_alg, limit
    raise NotImplementedError(f"trainrt.tune: search_alg {type(search_alg).__name__} is not supported; trainrt's "
                              f"searchers are BasicVariantGenerator (random search and grid_search, the default), "
                              f"OptunaSearch, BayesOptSearch, NevergradSearch, HyperOptSearch and TuneBOHB, optionally in a "
                              f"ConcurrencyLimiter or Repeater")


def _searched_space(search_alg):
    """A HyperOptSearch(space=...)'s ({key: sample.FromSearch}, {key: constant}); ({}, {}) for any other searcher."""
    from .search.hyperopt import HyperOptSearch
    search = _searcher(search_alg)[0]
    return search.searched() if isinstance(search, HyperOptSearch) else ({}, {})


def _write_searcher_files(search_alg, files):
    """What the searcher reads beside sweep.ini (a HyperOptSearch(space=...)'s pickled space)."""
    from .search.hyperopt import HyperOptSearch
    search = _searcher(search_alg)[0]
    if isinstance(search, HyperOptSearch):
        search.write_space(files)


def _repeat_keys(search_alg):
    """[tune] repeat and repeat_set_index of a Repeater (inside a ConcurrencyLimiter or not); none without."""
    if isinstance(search_alg, ConcurrencyLimiter):
        search_alg = search_alg.searcher
    if not isinstance(search_alg, Repeater):
        return {}
    return {"repeat": search_alg.repeat, "repeat_set_index": str(search_alg.set_index).lower()}


def _concurrency(configured, limit):
    """Trials at once: the smaller of TuneConfig(max_concurrent_trials) and the searcher's limit (0: no limit)."""
    given = [n for n in (configured, limit) if n]
    return min(given) if given else 0


def _config_key(key):
    """A trial value's key as the function's config names it ("train.lr" -> "lr")."""
    return key[len("train."):] if key.startswith("train.") else key


def _parsed(text):
    for kind in (int, float):
        try:
            return kind(text)
        except (TypeError, ValueError):
            pass
    return text


def _write(path, text):
    partial = f"{path}.tmp.{os.getpid()}"
    with open(partial, "w") as file:
        file.write(text)
    os.replace(partial, path)
