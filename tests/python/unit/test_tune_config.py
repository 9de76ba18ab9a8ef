"""trainrt.tune.TuneConfig takes Ray's fields: what trainrt cannot do is refused with one line
naming what to do instead; what it does anyway (reuse_actors=False, chdir_to_trial_dir=False) is
accepted, and reuse_actors=True (Ray's hint) is one line saying there is nothing to reuse.
trial_name_creator and trial_dirname_creator are honoured by the driver (test_tune_callbacks.py)."""
import pytest

from trainrt import tune


@pytest.mark.parametrize("field, value, says", [("time_budget_s", 600, "sbatch --time"),
                                                ("chdir_to_trial_dir", True, "working directory")])
def test_refused_fields_say_what_to_do(field, value, says):
    with pytest.raises(NotImplementedError, match=field) as refused:
        tune.TuneConfig(metric="loss", mode="min", **{field: value})
    assert says in str(refused.value) and "\n" not in str(refused.value)


def test_reuse_actors_is_a_hint_said_once(capsys):
    tune.TuneConfig(metric="loss", mode="min", reuse_actors=True)
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and "no actors to reuse" in said[0]


def test_what_trainrt_does_anyway_is_accepted():
    config = tune.TuneConfig(metric="loss", mode="min", reuse_actors=False, chdir_to_trial_dir=False)
    assert config.metric == "loss" and config.reuse_actors is False
