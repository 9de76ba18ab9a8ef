"""tune.Trainable, Ray's class API, as a trial runs it (trainable.py's loop over a fake session):
setup, restore from the trial's checkpoint (the dict or the directory, and the iteration count),
step after step each reported, a checkpoint every checkpoint_frequency iterations, at the last
result with checkpoint_at_end (done, a stop criterion, a scheduler's rung) and at a stop; done
ends it and cleanup() runs however it ends. Calling the class as the session's workload runs the
trial; anywhere else it constructs. A function given a Trainable's CheckpointConfig is refused.
tests/python/unit/trainable_fifo.py runs one as a real FIFO sweep (the last test)."""
import contextlib
import json
import os
import subprocess
import sys
import types

import pytest

from trainrt import _state, tune
from trainrt.tune import trainable as module
from trainrt.tune.trainable import CheckpointOptions, run_trial


class Counter(tune.Trainable):
    def setup(self, config):
        self.lr, self.total, self.loaded, self.cleaned = config["lr"], 0.0, None, False
        Counter.last = self

    def step(self):
        self.total += self.lr
        return {"total": self.total, "done": self.total >= self.config.get("done_at", 1e9)}

    def save_checkpoint(self, checkpoint_dir):
        if self.config.get("as_dict"):
            return {"total": self.total}
        with open(os.path.join(checkpoint_dir, "state.json"), "w") as file:
            json.dump({"total": self.total}, file)

    def load_checkpoint(self, checkpoint):
        self.loaded = (checkpoint, self.iteration)
        self.total = checkpoint["total"] if isinstance(checkpoint, dict) else \
            json.load(open(os.path.join(checkpoint, "state.json")))["total"]

    def cleanup(self):
        self.cleaned = True


class FakeSession:
    """The trial's session: reports are kept (with the checkpoint's files); the report that
    `ends_at` says ends the trial as trainrt.report does; trainrt's rule of which reports may end
    it (a stop criterion, a scheduler's rung: Session::may_end_at, tested in C++) says yes at the
    report numbers in `may_end` (by default: `ends_at`)."""

    def __init__(self, tmp_path, ends_at=None, may_end=None, stop_at=None, restored=None, asked=()):
        self.tmp_path, self.ends_at, self.stop_at, self._restored = tmp_path, ends_at, stop_at, restored
        self.may_end = set(may_end if may_end is not None else [ends_at])
        self.asked = set(asked)  # the iterations a driver's callback asks to checkpoint
        self.reports = []

    def asked_to_checkpoint(self, result):
        return result["training_iteration"] in self.asked

    def restored(self):
        return self._restored

    def should_stop(self):
        return self.stop_at == len(self.reports) + 1

    def may_end_at(self, result):
        return len(self.reports) + 1 in self.may_end

    def report(self, metrics, trainable=None):
        files = None
        if trainable is not None:
            directory = self.tmp_path / f"checkpoint_{len(self.reports) + 1}"
            directory.mkdir()
            trainable._save_to(str(directory))
            files = sorted(os.listdir(directory))
        self.reports.append((metrics, files))
        if len(self.reports) in (self.ends_at, self.stop_at):
            raise _state.StopTraining()


def run(session, config, frequency=0, at_end=False):
    try:
        run_trial(Counter, config, {}, session, CheckpointOptions(frequency, at_end))
    except _state.StopTraining:
        pass
    return [i + 1 for i, (_, files) in enumerate(session.reports) if files is not None]


def test_checkpoints_every_frequency_and_at_the_end_of_a_stop_criterion(tmp_path):
    session = FakeSession(tmp_path, ends_at=5)
    assert run(session, {"lr": 1.0}, frequency=2, at_end=True) == [2, 4, 5]
    assert [m["total"] for m, _ in session.reports] == [1, 2, 3, 4, 5]
    assert session.reports[1][1] == ["state.json"] and Counter.last.cleaned


def test_no_end_checkpoint_unless_asked(tmp_path):
    assert run(FakeSession(tmp_path, ends_at=5), {"lr": 1.0}, frequency=2) == [2, 4]


def test_a_driver_callback_asking_for_a_checkpoint_gets_one_at_that_iteration(tmp_path):
    assert run(FakeSession(tmp_path, ends_at=5, asked={1, 3}), {"lr": 1.0}, frequency=4) == [1, 3, 4]


def test_a_result_waits_for_the_drivers_answer_and_an_answer_there_stands(tmp_path, monkeypatch):
    import threading
    from trainrt._trainrt import layout
    from trainrt.tune import trainable
    result = {"loss": 0.5, "training_iteration": 2}

    def answer():
        while not os.path.exists(layout.callback_result(str(tmp_path), 2)):
            pass
        with open(layout.callback_verdict(str(tmp_path), 2), "w") as file:
            file.write("checkpoint\n")
    driver = threading.Thread(target=answer)
    driver.start()
    assert trainable._callback_verdict(str(tmp_path), result) == 1
    driver.join()
    assert json.load(open(layout.callback_result(str(tmp_path), 2))) == result
    assert trainable._callback_verdict(str(tmp_path), result) == 1  # a rerun of iteration 2: the answer stands
    monkeypatch.setattr(trainable, "VERDICT_WAIT_S", 0.05)
    assert trainable._callback_verdict(str(tmp_path), {"training_iteration": 3}) == 0  # no driver: goes on


def test_a_metric_criterion_and_done_are_last_results(tmp_path):
    assert run(FakeSession(tmp_path, ends_at=3), {"lr": 1.0}, at_end=True) == [3]
    session = FakeSession(tmp_path / "done")
    (tmp_path / "done").mkdir()
    assert run(session, {"lr": 1.0, "done_at": 2}, at_end=True) == [2]
    assert len(session.reports) == 2 and session.reports[-1][0]["done"] is True  # done ended the loop


def test_at_end_saves_at_each_scheduler_rung(tmp_path):
    session = FakeSession(tmp_path, ends_at=6, may_end=[1, 4])
    assert run(session, {"lr": 1.0}, at_end=True) == [1, 4]


def test_a_stop_saves_its_checkpoint(tmp_path):
    assert run(FakeSession(tmp_path, stop_at=3), {"lr": 1.0}) == [3]


@contextlib.contextmanager
def _as_directory(path):
    yield path


@pytest.mark.parametrize("as_dict", [False, True])
def test_restores_the_checkpoint_and_its_iteration_count(tmp_path, as_dict):
    saved = tmp_path / "saved"
    saved.mkdir()
    writer = Counter({"lr": 1.0, "as_dict": as_dict})
    writer.total = 4.0
    writer._save_to(str(saved))
    stored = types.SimpleNamespace(_committed=True, iteration=4, as_directory=lambda: _as_directory(str(saved)))
    session = FakeSession(tmp_path, ends_at=2, restored=stored)
    run(session, {"lr": 1.0, "as_dict": as_dict})
    loaded, iteration = Counter.last.loaded
    assert iteration == 4 and (loaded == {"total": 4.0} if as_dict else loaded == str(saved))
    assert [m["total"] for m, _ in session.reports] == [5, 6] and Counter.last.iteration == 6


def test_cleanup_runs_when_a_step_raises(tmp_path):
    class Fails(Counter):
        def step(self):
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        run_trial(Fails, {"lr": 1.0}, {}, FakeSession(tmp_path), CheckpointOptions())
    assert Counter.last.cleaned


def test_a_step_that_returns_no_dict_is_refused(tmp_path):
    class NoDict(Counter):
        def step(self):
            return 1.0

    with pytest.raises(TypeError, match=r"NoDict.step\(\) returned float; return a dict"):
        run_trial(NoDict, {"lr": 1.0}, {}, FakeSession(tmp_path), CheckpointOptions())


def test_called_as_the_sessions_workload_the_class_runs_the_trial(tmp_path, monkeypatch):
    session = FakeSession(tmp_path, ends_at=2)
    handle = types.SimpleNamespace(settings=lambda: types.SimpleNamespace(
        run=types.SimpleNamespace(workload=f"python:{os.path.abspath(__file__)}:Counter")))
    monkeypatch.setattr(_state, "_handle", handle)
    monkeypatch.setattr(module, "_Session", lambda: session)
    monkeypatch.setattr(CheckpointOptions, "of_trial", classmethod(lambda cls: cls(1, False)))
    with pytest.raises(_state.StopTraining):
        Counter({"lr": 2.0})
    assert [m["total"] for m, _ in session.reports] == [2, 4] and Counter.last.cleaned
    handle.settings = lambda: types.SimpleNamespace(run=types.SimpleNamespace(workload="python:other.py:Counter"))
    assert isinstance(Counter({"lr": 2.0}), Counter)  # another workload's: constructed


def test_constructed_directly_it_is_rays_object(tmp_path):
    counter = Counter({"lr": 0.5})
    result = counter.train()
    assert result["total"] == 0.5 and result["training_iteration"] == 1 and result["done"] is False
    checkpoint = counter.save(str(tmp_path / "c"))
    other = Counter({"lr": 0.5})
    other.restore(checkpoint)
    assert other.total == 0.5 and other.loaded[0] == str(tmp_path / "c")


def train_func(config):
    pass


def test_a_functions_checkpoint_frequency_is_refused_as_in_ray():
    run_config = tune.RunConfig(checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=2))
    with pytest.raises(ValueError, match="is for a class Trainable"):
        module.checkpoint_options(train_func, run_config)
    assert module.checkpoint_options(train_func, tune.RunConfig()) is None
    at_end = tune.RunConfig(checkpoint_config=tune.CheckpointConfig(checkpoint_at_end=True), stop={"time_total_s": 5})
    with pytest.raises(NotImplementedError, match="time_total_s"):
        module.checkpoint_options(Counter, at_end)
    wrapped = tune.with_resources(Counter, {"cpu": 1})
    assert module.checkpoint_options(wrapped, tune.RunConfig(checkpoint_config=tune.CheckpointConfig(
        checkpoint_frequency=3, checkpoint_at_end=False))) == {"checkpoint_frequency": 3, "checkpoint_at_end": False}


def test_a_trainable_checkpoints_at_its_end_unless_told_not_to_as_in_ray():
    """Ray's Tuner sets checkpoint_at_end=True for a class Trainable that leaves it None (each of
    the 20 trials of Ray's hyperband_example.py ends with one checkpoint); a stop by time_total_s,
    which a trial cannot foresee, leaves it off instead of refusing the run."""
    assert module.checkpoint_options(Counter, tune.RunConfig()) == {"checkpoint_frequency": 0, "checkpoint_at_end": True}
    assert module.checkpoint_options(Counter, tune.RunConfig(stop={"time_total_s": 5}))["checkpoint_at_end"] is False
    assert module.checkpoint_options(Counter, tune.RunConfig(
        checkpoint_config=tune.CheckpointConfig(checkpoint_at_end=False)))["checkpoint_at_end"] is False


def test_a_fifo_sweep_of_a_trainable_checkpoints_and_resumes(tmp_path):
    """A real sweep (tests/python/unit/trainable_fifo.py): 2 trials of 5 iterations with
    checkpoint_frequency=2 and checkpoint_at_end; the first attempt of each fails at iteration 4
    and the retry resumes from the iteration-2 checkpoint (a dict checkpoint)."""
    script = os.path.join(os.path.dirname(__file__), "trainable_fifo.py")
    out = subprocess.run([sys.executable, script, str(tmp_path)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "FAIL_AT": "4"})
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    lines = sorted(line for line in out.stdout.splitlines() if line.startswith("driver:"))
    assert lines == ["driver: lr 1.0 total 5.0 loaded 2 iterations 5 checkpoints 2,4,5",
                     "driver: lr 2.0 total 10.0 loaded 2 iterations 5 checkpoints 2,4,5"]
