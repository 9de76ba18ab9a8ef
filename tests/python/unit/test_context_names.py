"""get_context()'s run names (Ray's TrainContext.get_trial_name / get_trial_id / get_trial_dir /
get_experiment_name), which the experiment-tracking guide keys a tracker's run on: stable for a
run directory, and the sweep's name for a trial of a sweep (its parent holds the sweep record)."""
import os

from trainrt._state import Context
from trainrt._trainrt import layout


def context_in(run_dir):
    values = {"world_rank": 0, "world_size": 1, "local_rank": 0, "local_world_size": 1, "node_rank": 0,
              "num_nodes": 1, "hostname": "h", "job_id": "", "restart_count": 0, "launcher": "single",
              "run_dir": run_dir}
    return Context(values, "cpu")


def test_a_run_is_its_own_experiment(tmp_path):
    context = context_in(str(tmp_path / "fashion"))
    assert context.get_trial_name() == context.get_trial_id() == "fashion"
    assert context.get_experiment_name() == "fashion"
    assert context.get_trial_dir() == str(tmp_path / "fashion")


def test_a_trial_belongs_to_its_sweep(tmp_path):
    sweep = tmp_path / "my_sweep"
    os.makedirs(sweep / "trial_0003")
    open(layout.sweep_record(str(sweep)), "w").write("{}")
    context = context_in(str(sweep / "trial_0003") + "/")
    assert context.get_trial_name() == "trial_0003"
    assert context.get_experiment_name() == "my_sweep"
