"""Ray Tune's driver-side callbacks (`ray.tune.Callback`, RunConfig(callbacks=[...])) on a sweep
that `trainrt tune` runs in processes of its own (docs/guides/sweeps.md, Callbacks).

While the sweep runs, the Tuner's driver follows it: it reads the sweep's record and each trial's
result rows (the paths come from C++'s `layout`) a few times a second and calls, in the driver
and in this order for each trial: on_trial_start once, on_trial_result once per row (in the
order of training_iteration, each row once), then on_trial_complete or on_trial_error once.
setup() comes before the sweep starts, on_experiment_end() after it ended (exit 0).

A class Trainable's trial shows each result to the driver before reporting it while a callback
defines on_trial_result (trainable.py, CALLBACK_VERDICTS_ENV): on_trial_result gets it then, and a
callback that sets result[SHOULD_CHECKPOINT] = True makes the trial checkpoint that iteration, as
in Ray. A function trainable reports by itself: there a callback only observes, and a
SHOULD_CHECKPOINT does nothing, as under Ray 2.60 (a function checkpoints when it reports one),
said in one warning line per sweep. Hooks trainrt never
calls (on_step_begin, on_trial_save, on_checkpoint, ...) are refused when a callback defines them.
"""
import contextlib
import json
import os
import signal
import subprocess
import sys
import time

__all__ = ["Callback"]

POLL_S = 0.25  # how often the driver reads the sweep's record and rows

# Hooks Ray calls and trainrt does not, with what to do instead (refused when a callback has one).
_UNCALLED = {
    "on_step_begin": "there is no tuning loop in the driver; use on_trial_result",
    "on_step_end": "there is no tuning loop in the driver; use on_trial_result",
    "on_trial_restore": "a trial restores from its own checkpoint inside its processes",
    "on_trial_save": "a trial's checkpoints are committed inside its processes (Result.best_checkpoints lists them)",
    "on_checkpoint": "a trial's checkpoints are committed inside its processes (Result.best_checkpoints lists them)",
    "on_trial_recover": "a failed attempt that is retried is not reported to the driver; on_trial_error comes "
                        "when its retries are spent",
    "get_state": "a restored sweep does not restore callbacks' state",
    "set_state": "a restored sweep does not restore callbacks' state",
    "log_trial_restore": "a trial restores from its own checkpoint inside its processes",
    "log_trial_save": "a trial's checkpoints are committed inside its processes (Result.best_checkpoints lists them)",
}


class Callback:
    """Ray's ray.tune.Callback: override the hooks below (same signatures as Ray's); each is a no-op."""

    def setup(self, stop=None, num_samples=None, total_num_samples=None, **info):
        pass

    def on_trial_start(self, iteration, trials, trial, **info):
        pass

    def on_trial_result(self, iteration, trials, trial, result, **info):
        pass

    def on_trial_complete(self, iteration, trials, trial, **info):
        pass

    def on_trial_error(self, iteration, trials, trial, **info):
        pass

    def on_experiment_end(self, trials, **info):
        pass


def checked(callbacks):
    """RunConfig(callbacks=...) as a list, each a trainrt.tune.Callback defining no hook trainrt
    never calls; TypeError or NotImplementedError (one line) otherwise."""
    if callbacks is None:
        return []
    if not isinstance(callbacks, (list, tuple)):
        raise TypeError(f"trainrt.tune.RunConfig(callbacks=...): a list of trainrt.tune.Callback (got "
                        f"{type(callbacks).__name__})")
    for callback in callbacks:
        if not isinstance(callback, Callback):
            raise TypeError(f"trainrt.tune.RunConfig(callbacks=...): {type(callback).__name__} is not a "
                            f"trainrt.tune.Callback (ray.tune.Callback after the port)")
        for hook, instead in _UNCALLED.items():
            owner = next((k for k in type(callback).__mro__ if hook in vars(k)), None)
            if owner is not None and owner.__module__.split(".")[0] != "trainrt":
                raise NotImplementedError(f"trainrt.tune: {type(callback).__name__}.{hook} is never called: {instead}")
    return list(callbacks)


class Trial:
    """What a callback is given for a trial (Ray's Trial, the parts a sweep's driver knows):
    trial_id (trainrt's trial name, trial_0003, as in Result.metrics), config, trainable_name,
    status (PENDING, RUNNING, TERMINATED, ERROR), last_result, path (its run directory),
    custom_trial_name / custom_dirname (TuneConfig's creators). str(trial) is the custom name,
    else TRAINABLE_TRIALID, as Ray's."""

    def __init__(self, trial_id, config, trainable_name, path):
        self.trial_id, self.config, self.trainable_name = trial_id, config, trainable_name
        self.path = self.local_path = path
        self.status = "PENDING"
        self.last_result = {}
        self.custom_trial_name = None
        self.custom_dirname = None

    def __str__(self):
        return self.custom_trial_name or f"{self.trainable_name}_{self.trial_id}".replace("/", "_")

    __repr__ = __str__


class _Followed:
    """A trial as the follower has seen it: its Trial, the rows passed, whether it started/ended."""

    def __init__(self, trial):
        self.trial = trial
        self.started = self.ended = False
        self.iteration = 0   # the training_iteration of the last row passed
        self.seen_size = -1  # the size of its rows file when last read


class Follower:
    """Follows one sweep for the Tuner's driver (module docstring): runs `trainrt tune` in a
    process group of its own, so that a refusal or a Ctrl-C in the driver stops it with a stop
    signal (_stop: its trials checkpoint and stay PENDING) and the driver waits for it."""

    def __init__(self, callbacks, trainable_name, setup_info, name_creator=None, dirname_creator=None):
        self.callbacks, self.trainable_name, self.setup_info = callbacks, trainable_name, setup_info
        self.name_creator, self.dirname_creator = name_creator, dirname_creator
        self.followed = {}  # trial name -> _Followed, in the record's order
        self.iteration = 0
        self.warned_forced_checkpoint = False

    def run(self, command, env, sweep_dir, constants):
        """Runs `command` (trainrt tune) to its end, following `sweep_dir`; its exit code.
        `constants`: the config values every trial shares (the Tuner's, sample_from's unresolved)."""
        self.sweep_dir, self.constants = sweep_dir, constants
        for callback in self.callbacks:
            callback.setup(**self.setup_info)
        if any(type(c).on_trial_result is not Callback.on_trial_result for c in self.callbacks):
            from .trainable import CALLBACK_VERDICTS_ENV
            env = {**env, CALLBACK_VERDICTS_ENV: "1"}
        process = subprocess.Popen(command, env=env, start_new_session=True)
        try:
            while process.poll() is None:
                self.step()
                time.sleep(POLL_S)
            self.step()
            if process.returncode == 0:
                for callback in self.callbacks:
                    callback.on_experiment_end(trials=self.trials())
        except BaseException:
            _stop(process)
            raise
        return process.returncode

    def trials(self):
        return [followed.trial for followed in self.followed.values()]

    def step(self):
        """One look at the sweep: every trial's new events, trial by trial in the record's order."""
        from .._trainrt import layout
        from . import sample
        if not os.path.exists(layout.sweep_record(self.sweep_dir)):
            return
        self.iteration += 1
        for index, entry in enumerate(layout.sweep(self.sweep_dir)["trials"]):
            followed = self.followed.get(entry["name"])
            if followed is None:
                config = sample.trial_config(self.constants, index, entry["values"])
                followed = self.followed[entry["name"]] = _Followed(self.new_trial(entry["name"], config))
            self.advance(followed, entry["status"])

    def new_trial(self, name, config):
        """A Trial first seen: TuneConfig's creators name it (the dirname as a link to its directory)."""
        trial = Trial(name, config, self.trainable_name, os.path.join(self.sweep_dir, name))
        if self.name_creator is not None:
            trial.custom_trial_name = str(self.name_creator(trial))
            print(f"trainrt.tune: {name} is {trial.custom_trial_name}", file=sys.stderr, flush=True)
        if self.dirname_creator is not None:
            trial.custom_dirname = _link_dirname(self.sweep_dir, name, self.dirname_creator(trial))
        return trial

    def advance(self, followed, status):
        """The hooks for what happened to one trial since the last look, in order."""
        trial = followed.trial
        rows = self.new_rows(followed)
        if not followed.started and (status != "PENDING" or rows):
            followed.started, trial.status = True, "RUNNING"
            self.call("on_trial_start", trial=trial)
        for row in rows:
            result = {**row, "trial_id": trial.trial_id, "config": trial.config}
            self.call("on_trial_result", trial=trial, result=result)
            self.warn_forced_checkpoint(result)
            trial.last_result = result
        for iteration, shown in self.shown_results(followed):
            result = {**shown, "trial_id": trial.trial_id, "config": trial.config}
            self.call("on_trial_result", trial=trial, result=result)
            self.answer(followed, iteration, result)
        if not followed.ended and status in ("TERMINATED", "ERROR"):
            followed.ended, trial.status = True, status
            self.call("on_trial_complete" if status == "TERMINATED" else "on_trial_error", trial=trial)

    def warn_forced_checkpoint(self, result):
        """A callback's result[SHOULD_CHECKPOINT] on a function trainable's row: the function has
        reported it already and checkpoints only when it reports a checkpoint, so it does nothing,
        as under Ray (which says nothing); one warning line per sweep says so."""
        from .. import _state
        from .result import SHOULD_CHECKPOINT
        if not result.get(SHOULD_CHECKPOINT) or self.warned_forced_checkpoint:
            return
        self.warned_forced_checkpoint = True
        names = ", ".join(type(c).__name__ for c in self.callbacks)
        _state.log("warning", f"trainrt.tune: a callback ({names}) set result[\"{SHOULD_CHECKPOINT}\"] for "
                              f"{result['trial_id']}, a function trainable's trial, which checkpoints only when it "
                              f"reports a checkpoint (tune.report(..., checkpoint=...)): the request does nothing, as "
                              f"under Ray (a class Trainable's trial checkpoints on it); said once per sweep")

    def new_rows(self, followed):
        """The trial's rows not passed yet (its rows file read again only when its size changed)."""
        from .._trainrt import layout
        path = layout.results(followed.trial.path)
        try:
            size = os.path.getsize(path)
        except OSError:
            return []
        if size == followed.seen_size:
            return []
        followed.seen_size = size
        rows = []
        for position, row in enumerate(json.loads(layout.rows(followed.trial.path)), 1):
            iteration = row.get("training_iteration", position)
            if iteration > followed.iteration:
                rows.append(row)
                followed.iteration = iteration
        return rows

    def shown_results(self, followed):
        """A class Trainable's results shown before their reports and not answered yet, in order."""
        from .._trainrt import layout
        shown = []
        iteration = followed.iteration + 1
        while os.path.exists(layout.callback_result(followed.trial.path, iteration)) and \
                not os.path.exists(layout.callback_verdict(followed.trial.path, iteration)):
            with open(layout.callback_result(followed.trial.path, iteration)) as file:
                shown.append((iteration, json.load(file)))
            iteration += 1
        return shown

    def answer(self, followed, iteration, result):
        """The callbacks' answer on a shown result (checkpoint or continue); its row, once the
        trial reports it, is not passed to them again."""
        from .._trainrt import layout
        from .result import SHOULD_CHECKPOINT
        path = layout.callback_verdict(followed.trial.path, iteration)
        with open(path + ".tmp", "w") as file:
            file.write("checkpoint\n" if result.get(SHOULD_CHECKPOINT) else "continue\n")
        os.replace(path + ".tmp", path)
        followed.iteration = iteration
        followed.trial.last_result = result

    def call(self, hook, **arguments):
        for callback in self.callbacks:
            getattr(callback, hook)(iteration=self.iteration, trials=self.trials(), **arguments)


def _link_dirname(sweep_dir, name, dirname):
    """TuneConfig(trial_dirname_creator): SWEEP_DIR/DIRNAME, a link to the trial's own directory
    SWEEP_DIR/trial_NNNN (Result.path); ValueError for a name that is a path or already taken."""
    dirname = str(dirname)
    if not dirname or "/" in dirname or dirname in (".", ".."):
        raise ValueError(f"trainrt.tune: trial_dirname_creator gave {dirname!r} for {name}: a directory name, not a "
                         f"path")
    link = os.path.join(sweep_dir, dirname)
    if os.path.islink(link) and os.readlink(link) == name:
        return dirname
    if os.path.lexists(link):
        raise ValueError(f"trainrt.tune: trial_dirname_creator gave {dirname!r} for {name}, and {link} exists "
                         f"already: give each trial a name of its own")
    os.symlink(name, link)
    return dirname


def _stop(process):
    """Stops the sweep as a stop signal does: SIGUSR2 (trainrt's stop signal) to `trainrt tune`
    (it starts no more trials) and to the ranks and srun steps of its trials (they checkpoint and
    stop, and stay PENDING for the next run), again each second for a trial started meanwhile; not
    to mpiexec, which ends at once on it and hides its ranks' exit. Waits for the sweep to end; a
    Ctrl-C meanwhile kills its process group."""
    from .._processes import descendants, program as program_of
    from .._trainrt import binary
    trainrt = os.path.realpath(binary())
    signalled = set()
    try:
        while process.poll() is None:
            for pid in descendants(process.pid) - signalled:
                program = program_of(pid) or ""
                if pid == process.pid or os.path.realpath(program) == trainrt or os.path.basename(program) == "srun":
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGUSR2)
                    signalled.add(pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=1)
    except KeyboardInterrupt:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        raise


def follower(run_config, tune_config, trainable_name, trials):
    """The Follower of a Tuner's sweep, or None when nothing needs the driver to follow it (no
    callbacks, no trial name or dirname creator)."""
    callbacks = checked(getattr(run_config, "callbacks", None))
    name_creator, dirname_creator = tune_config.trial_name_creator, tune_config.trial_dirname_creator
    for what, creator in (("trial_name_creator", name_creator), ("trial_dirname_creator", dirname_creator)):
        if creator is not None and not callable(creator):
            raise TypeError(f"trainrt.tune.TuneConfig({what}=...): a function of a trial that returns its name")
    if not callbacks and name_creator is None and dirname_creator is None:
        return None
    setup_info = {"stop": run_config.stop, "num_samples": tune_config.num_samples, "total_num_samples": trials}
    return Follower(callbacks, trainable_name, setup_info, name_creator, dirname_creator)
