"""trainrt.tune.Callback and logger.LoggerCallback as the Tuner's driver calls them while `trainrt
tune` runs: the follower reads the sweep's record and each trial's rows (as C++ writes them) and
calls, per trial, on_trial_start, on_trial_result once per row in order, then on_trial_complete
or on_trial_error; setup() before the sweep, on_experiment_end() after. What trainrt cannot do (a
callback forcing a checkpoint, hooks it never calls) is refused with one line; the trial name
and dirname creators name the trials the callbacks see and link their directories."""
import json
import os
import sys

import pytest

from trainrt import tune
from trainrt._trainrt import layout
from trainrt.tune import callback
from trainrt.tune.logger import LoggerCallback
from trainrt.tune.result import SHOULD_CHECKPOINT


class Recorder(tune.Callback):
    def __init__(self):
        self.calls = []

    def setup(self, stop=None, num_samples=None, total_num_samples=None, **info):
        self.calls.append(("setup", stop, num_samples, total_num_samples))

    def on_trial_start(self, iteration, trials, trial, **info):
        self.calls.append(("start", trial.trial_id))

    def on_trial_result(self, iteration, trials, trial, result, **info):
        self.calls.append(("result", trial.trial_id, result["training_iteration"], result["loss"],
                           trial.last_result.get("loss")))

    def on_trial_complete(self, iteration, trials, trial, **info):
        self.calls.append(("complete", trial.trial_id, trial.status))

    def on_trial_error(self, iteration, trials, trial, **info):
        self.calls.append(("error", trial.trial_id, trial.status))

    def on_experiment_end(self, trials, **info):
        self.calls.append(("end", [t.trial_id for t in trials]))


def write_sweep(sweep_dir, trials):
    """sweep.json as `trainrt tune` writes it: trials [(name, status, values)]."""
    record = {"format": "trainrt-sweep", "format_version": 1, "definition": {}, "metric": "loss", "mode": "min",
              "trials": [{"index": i, "name": name, "status": status, "attempts": 1, "last_exit": 0, "values": values}
                         for i, (name, status, values) in enumerate(trials)]}
    with open(layout.sweep_record(str(sweep_dir)), "w") as file:
        json.dump(record, file)


def append_rows(trial_dir, losses, first=1):
    os.makedirs(trial_dir, exist_ok=True)
    with open(layout.results(str(trial_dir)), "a") as file:
        file.writelines(json.dumps({"loss": loss, "_training_iteration": first + i}) + "\n"
                        for i, loss in enumerate(losses))


def following(sweep_dir, callbacks, constants=None, **creators):
    follower = callback.Follower(callbacks, "train_func", {}, **creators)
    follower.sweep_dir, follower.constants = str(sweep_dir), constants or {}
    return follower


def test_each_trial_starts_reports_each_row_once_in_order_and_ends(tmp_path):
    recorder = Recorder()
    follower = following(tmp_path, [recorder], constants={"epochs": 3})
    write_sweep(tmp_path, [("trial_0000", "RUNNING", {"train.lr": "0.1"}), ("trial_0001", "PENDING", {})])
    append_rows(tmp_path / "trial_0000", [3.0, 2.0])
    follower.step()
    follower.step()  # nothing new: nothing called again
    append_rows(tmp_path / "trial_0000", [1.0], first=3)
    write_sweep(tmp_path, [("trial_0000", "TERMINATED", {"train.lr": "0.1"}), ("trial_0001", "ERROR", {})])
    follower.step()
    assert recorder.calls == [("start", "trial_0000"), ("result", "trial_0000", 1, 3.0, None),
                              ("result", "trial_0000", 2, 2.0, 3.0), ("result", "trial_0000", 3, 1.0, 2.0),
                              ("complete", "trial_0000", "TERMINATED"), ("start", "trial_0001"),
                              ("error", "trial_0001", "ERROR")]
    assert follower.followed["trial_0000"].trial.config == {"epochs": 3, "lr": 0.1}


def test_rows_set_aside_by_a_resume_are_not_passed_again(tmp_path):
    recorder = Recorder()
    follower = following(tmp_path, [recorder])
    write_sweep(tmp_path, [("trial_0000", "RUNNING", {})])
    append_rows(tmp_path / "trial_0000", [3.0, 2.0])
    follower.step()
    os.remove(layout.results(str(tmp_path / "trial_0000")))  # resumed from iteration 1: row 2 again, then 3
    append_rows(tmp_path / "trial_0000", [3.0, 2.5, 1.5])
    follower.step()
    assert [c[2] for c in recorder.calls if c[0] == "result"] == [1, 2, 3]


def test_a_result_carries_the_trial_id_and_config(tmp_path):
    seen = []

    class Keep(tune.Callback):
        def on_trial_result(self, iteration, trials, trial, result, **info):
            seen.append((result["trial_id"], result["config"], [str(t) for t in trials]))

    write_sweep(tmp_path, [("trial_0000", "RUNNING", {"train.width": "3"})])
    append_rows(tmp_path / "trial_0000", [1.0])
    following(tmp_path, [Keep()], constants={"steps": 5}).step()
    assert seen == [("trial_0000", {"steps": 5, "width": 3}, ["train_func_trial_0000"])]


def test_the_sweep_runs_between_setup_and_experiment_end(tmp_path):
    recorder = Recorder()
    write_sweep(tmp_path, [("trial_0000", "TERMINATED", {})])
    os.rename(layout.sweep_record(str(tmp_path)), tmp_path / "ended.json")
    write_sweep(tmp_path, [("trial_0000", "RUNNING", {})])
    append_rows(tmp_path / "trial_0000", [1.0])
    # the sweep: its trial has its row, then the record says TERMINATED (as `trainrt tune` writes them)
    script = f"import os, time; time.sleep(0.6); os.replace({str(tmp_path / 'ended.json')!r}, " \
             f"{layout.sweep_record(str(tmp_path))!r})"
    follower = callback.Follower([recorder], "f", {"stop": {"training_iteration": 1}, "num_samples": 1,
                                                   "total_num_samples": 1})
    assert follower.run([sys.executable, "-c", script], dict(os.environ), str(tmp_path), {}) == 0
    assert recorder.calls == [("setup", {"training_iteration": 1}, 1, 1), ("start", "trial_0000"),
                              ("result", "trial_0000", 1, 1.0, None), ("complete", "trial_0000", "TERMINATED"),
                              ("end", ["trial_0000"])]


def test_no_experiment_end_when_the_sweep_fails(tmp_path):
    recorder = Recorder()
    follower = callback.Follower([recorder], "f", {})
    assert follower.run([sys.executable, "-c", "raise SystemExit(2)"], dict(os.environ), str(tmp_path), {}) == 2
    assert [c[0] for c in recorder.calls] == ["setup"]


def test_a_callback_forcing_a_function_trials_checkpoint_is_one_warning_and_the_sweep_goes_on(tmp_path, capfd):
    """Under Ray 2.60 the request does nothing for a function trainable (no checkpoint, no word);
    here it does nothing too, said in one warning line however many rows ask."""
    class Force(tune.Callback):
        def on_trial_result(self, iteration, trials, trial, result, **info):
            result[SHOULD_CHECKPOINT] = True

    write_sweep(tmp_path, [("trial_0000", "RUNNING", {})])
    append_rows(tmp_path / "trial_0000", [1.0, 2.0])
    follower = callback.Follower([Force()], "f", {})
    assert follower.run([sys.executable, "-c", "import time; time.sleep(1)"], dict(os.environ), str(tmp_path), {}) == 0
    warnings = [line for line in capfd.readouterr().err.splitlines() if "should_checkpoint" in line]
    assert len(warnings) == 1 and "trial_0000" in warnings[0] and "does nothing" in warnings[0]


@pytest.mark.parametrize("hook", ["on_step_begin", "on_trial_save", "on_checkpoint", "on_trial_recover", "get_state"])
def test_a_hook_trainrt_never_calls_is_refused(hook):
    defined = type("Mine", (tune.Callback,), {hook: lambda self, *args, **kwargs: None})
    with pytest.raises(NotImplementedError, match=f"Mine.{hook} is never called"):
        tune.RunConfig(callbacks=[defined()])


def test_a_logger_saving_hook_is_refused_and_its_others_are_accepted():
    class Saves(LoggerCallback):
        def log_trial_save(self, trial):
            pass

    with pytest.raises(NotImplementedError, match="log_trial_save is never called"):
        tune.RunConfig(callbacks=[Saves()])
    assert len(tune.RunConfig(callbacks=[LoggerCallback()]).callbacks) == 1


def test_something_other_than_a_callback_is_refused():
    with pytest.raises(TypeError, match="is not a trainrt.tune.Callback"):
        tune.RunConfig(callbacks=[object()])


def test_logger_callback_hooks_arrive_as_log_calls(tmp_path):
    calls = []

    class Log(LoggerCallback):
        def log_trial_start(self, trial):
            calls.append(("start", trial.trial_id))

        def log_trial_result(self, iteration, trial, result):
            calls.append(("result", result["loss"]))

        def log_trial_end(self, trial, failed=False):
            calls.append(("end", trial.trial_id, failed))

    write_sweep(tmp_path, [("trial_0000", "TERMINATED", {}), ("trial_0001", "ERROR", {})])
    append_rows(tmp_path / "trial_0000", [0.5])
    following(tmp_path, [Log()]).step()
    assert calls == [("start", "trial_0000"), ("result", 0.5), ("end", "trial_0000", False),
                     ("start", "trial_0001"), ("end", "trial_0001", True)]


def test_trial_name_and_dirname_creators(tmp_path, capsys):
    recorder = Recorder()

    def named(trial):
        return f"{trial.trainable_name}_{trial.trial_id}_123"

    write_sweep(tmp_path, [("trial_0000", "RUNNING", {})])
    follower = following(tmp_path, [recorder], name_creator=named, dirname_creator=named)
    follower.step()
    trial = follower.followed["trial_0000"].trial
    assert str(trial) == "train_func_trial_0000_123" and trial.custom_dirname == "train_func_trial_0000_123"
    assert os.readlink(tmp_path / "train_func_trial_0000_123") == "trial_0000"
    assert "trial_0000 is train_func_trial_0000_123" in capsys.readouterr().err
    following(tmp_path, [], dirname_creator=named).step()  # the same sweep followed again: the link stands


def test_a_dirname_taken_or_a_path_is_refused(tmp_path):
    write_sweep(tmp_path, [("trial_0000", "RUNNING", {}), ("trial_0001", "RUNNING", {})])
    with pytest.raises(ValueError, match="give each trial a name of its own"):
        following(tmp_path, [], dirname_creator=lambda trial: "same").step()
    with pytest.raises(ValueError, match="a directory name, not a path"):
        following(tmp_path, [], dirname_creator=lambda trial: "a/b").step()


def test_nothing_to_follow_runs_the_sweep_as_before():
    assert callback.follower(tune.RunConfig(), tune.TuneConfig(), "f", 1) is None
    assert callback.follower(tune.RunConfig(), tune.TuneConfig(trial_name_creator=str), "f", 1) is not None
    with pytest.raises(TypeError, match="trial_dirname_creator"):
        callback.follower(tune.RunConfig(), tune.TuneConfig(trial_dirname_creator="name"), "f", 1)
