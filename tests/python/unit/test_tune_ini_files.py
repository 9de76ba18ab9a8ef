"""The sweep's files that tune.Tuner writes (SWEEP_DIR/tuner/sweep.ini and base.ini) come from the
C++ declarations of their keys (trainrt._trainrt.ini over config/settings.hpp and
tune/sweep_config.hpp): a Tuner's settings are all there, a None value is left out (the declared
default applies), and a key C++ does not declare (misspelt, or renamed in C++ since) is a
ValueError naming it, never a dead line `trainrt tune` would refuse or ignore."""
import configparser
import os
import re

import pytest

from trainrt import tune
from trainrt._trainrt import ini
from trainrt.tune.schedulers import ASHAScheduler, PopulationBasedTraining
from trainrt.tune.search.optuna import OptunaSearch


def train_func(config):
    pass


def _parsed(text):
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read_string(text)
    return {section: dict(parser[section]) for section in parser.sections()}


def test_a_tuners_sweep_file_has_its_keys():
    tuner = tune.Tuner(train_func, param_space={"lr": tune.grid_search([0.1, 0.01]), "wd": tune.uniform(0, 1)},
                       tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=3, max_concurrent_trials=2,
                                                   search_alg=OptunaSearch(n_startup_trials=4),
                                                   scheduler=ASHAScheduler(max_t=9, grace_period=1,
                                                                           reduction_factor=2)),
                       run_config=tune.RunConfig(failure_config=tune.FailureConfig(max_failures=1)))
    assert _parsed(tuner._sweep_text(2)) == {
        "tune": {"base": "base.ini", "metric": "loss", "mode": "min", "num_samples": "6", "ranks_per_trial": "2",
                 "max_concurrent_trials": "2", "max_failures_per_trial": "1", "search": "optuna",
                 "optuna.n_startup_trials": "4", "scheduler": "asha", "asha.time_attr": "training_iteration",
                 "asha.max_t": "9", "asha.grace_period": "1", "asha.reduction_factor": "2"},
        "space": {"train.lr": "grid(0.1, 0.01)", "train.wd": "uniform(0, 1)"}}


def test_pbt_keys_given_are_written_and_those_left_none_are_not():
    tuner = tune.Tuner(train_func, param_space={"lr": tune.loguniform(1e-4, 1e-1), "epochs": 6},
                       tune_config=tune.TuneConfig(metric="loss", scheduler=PopulationBasedTraining(
                           perturbation_interval=2, quantile_fraction=0.5)))
    keys = _parsed(tuner._sweep_text(1))["tune"]
    assert keys["scheduler"] == "pbt" and keys["pbt.perturbation_interval"] == "2"
    assert keys["pbt.quantile_fraction"] == "0.5"
    assert not {"mode", "pbt.time_attr", "pbt.resample_probability", "max_failures_per_trial"} & set(keys)


def test_a_tuners_base_file_has_the_job_and_its_constants():
    tuner = tune.Tuner(tune.with_resources(train_func, {"cpu": 1, "gpu": 1}),
                       param_space={"lr": tune.uniform(0, 1), "epochs": 3, "act": "relu", "flag": True,
                                    "tag": "a#b", "sizes": [1, 2]},
                       run_config=tune.RunConfig(stop={"loss": 0.5}))
    sections = _parsed(tuner._base_text(train_func, {"momentum": 0.9}, "/tmp/runs", "sweep"))
    assert sections["run"] == {"workload": f"python:{__file__}:train_func", "storage_path": "/tmp/runs",
                               "name": "sweep"}
    # Values an INI line cannot hold as themselves ("#" starts a comment; a list) are pickled instead.
    assert sections["train"] == {"momentum": "0.9", "epochs": "3", "act": "relu", "flag": "true"}
    assert sections["scaling"] == {"use_gpu": "true"}
    assert sections["stop"] == {"criteria": "loss>=0.5"}


def test_a_key_renamed_in_cpp_fails_in_python(monkeypatch):
    monkeypatch.setattr(tune, "_scheduler_keys", lambda scheduler: {"asha.grace_periods": 1})
    tuner = tune.Tuner(train_func, param_space={"lr": tune.uniform(0, 1)}, tune_config=tune.TuneConfig(metric="loss"))
    with pytest.raises(ValueError, match=r"unknown key 'asha.grace_periods' in \[tune\].*did you mean "
                                         r"'asha.grace_period'"):
        tuner._sweep_text(1)


@pytest.mark.parametrize("sections, key", [
    ({"tune": {"num_sampels": 4}}, "num_sampels"),
    ({"tune": {"asha.max_T": None}}, "asha.max_T"),  # a None value is left out, its key still checked
    ({"tune": {"pbt.interval": 2}}, "pbt.interval"),
])
def test_an_unknown_sweep_key_is_a_value_error_naming_it(sections, key):
    with pytest.raises(ValueError, match=f"unknown key '{key}' in \\[tune\\]"):
        ini.sweep(sections)


def test_an_unknown_job_key_or_section_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match=r"unknown key 'use_gpus' in \[scaling\].*did you mean 'use_gpu'"):
        ini.job({"scaling": {"use_gpus": True}})
    with pytest.raises(ValueError, match=r"unknown section \[tune\]"):
        ini.job({"tune": {"num_samples": 2}})
    with pytest.raises(ValueError, match=r"unknown section \[run\]"):
        ini.sweep({"run": {"name": "x"}})


def test_free_sections_take_any_key_and_values_are_checked_and_formatted():
    assert ini.job({"train": {"any_key": 1e-05, "n": 2, "b": False}, "scaling": {"use_gpu": None}}) == \
        "[train]\nany_key = 1e-05\nn = 2\nb = false\n"
    assert ini.sweep({"tune": {"asha.max_t": 10.0, "asha.reduction_factor": 3}, "space": {"data.shuffle": "x"}}) == \
        "[tune]\nasha.max_t = 10\nasha.reduction_factor = 3\n[space]\ndata.shuffle = x\n"
    with pytest.raises(ValueError, match=r"bad value 'mni' for tune.mode"):
        ini.sweep({"tune": {"mode": "mni"}})
    with pytest.raises(ValueError, match=r"bad value '0' for tune.ranks_per_trial"):
        ini.sweep({"tune": {"ranks_per_trial": 0}})
    with pytest.raises(ValueError, match=r"train.tag = 'a#b'"):
        ini.job({"train": {"tag": "a#b"}})
    with pytest.raises(TypeError, match=r"tune.metric = \['loss'\]"):
        ini.sweep({"tune": {"metric": ["loss"]}})


def define_by_run(trial):
    trial.suggest_float("width", 0, 20)
    return {"steps": 3}


def test_a_define_by_run_space_is_the_optuna_space_key_and_no_space_section():
    tuner = tune.Tuner(train_func, tune_config=tune.TuneConfig(
        metric="loss", mode="min", num_samples=5, search_alg=OptunaSearch(space=define_by_run)))
    written = _parsed(tuner._sweep_text(1))
    assert written["tune"]["optuna.space"] == f"{os.path.abspath(__file__)}:define_by_run"
    assert written["tune"]["search"] == "optuna" and written["tune"]["num_samples"] == "5"
    assert written.get("space", {}) == {}


@pytest.mark.parametrize("arguments, named", [
    ({"space": {"width": tune.uniform(0, 1)}}, "space={...}"), ({"seed": 3}, "seed="),
    ({"points_to_evaluate": [{"width": 1}]}, "points_to_evaluate="), ({"evaluated_rewards": [1.0]}, "evaluated_rewards=")])
def test_optuna_search_arguments_it_cannot_honour_are_refused(arguments, named):
    with pytest.raises(NotImplementedError, match=re.escape(named)):
        OptunaSearch(**arguments)


def test_a_define_by_run_space_must_be_a_named_function_in_a_file():
    with pytest.raises(TypeError, match="named function defined in a file"):
        OptunaSearch(space=lambda trial: None).space_function()


def test_a_multi_objective_search_writes_its_objectives_and_no_metric():
    tuner = tune.Tuner(train_func, param_space={"width": tune.uniform(0, 20)}, tune_config=tune.TuneConfig(
        num_samples=4, search_alg=OptunaSearch(metric=["loss", "gain"], mode=["min", "max"])))
    written = _parsed(tuner._sweep_text(1))["tune"]
    assert written["optuna.objectives"] == "loss:min, gain:max"
    assert "metric" not in written and "mode" not in written


@pytest.mark.parametrize("mode", ["min", ["min"], ["min", "lowest"]])
def test_a_list_of_metrics_takes_a_mode_for_each(mode):
    with pytest.raises(ValueError, match="one per metric"):
        OptunaSearch(metric=["loss", "gain"], mode=mode).objectives()
