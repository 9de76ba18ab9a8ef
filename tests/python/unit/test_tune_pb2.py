"""Ray's PB2 as a sweep's `[tune] scheduler = pb2` (the bandit itself is C++'s: tests/tune/unit_pb2.cpp;
Ray's pb2_example.py runs under trainrt in the conformance suite): its bounds become the [space]
domains it explores, param_space's constants the values every trial starts with, and Ray's options
trainrt would not honour are refused with one line."""
import configparser

import pytest

from trainrt import tune
from trainrt.tune.schedulers import PB2


def train_func(config):
    pass


def _sweep(param_space, scheduler):
    tuner = tune.Tuner(train_func, param_space=param_space,
                       tune_config=tune.TuneConfig(metric="mean_accuracy", mode="max", num_samples=4, scheduler=scheduler),
                       run_config=tune.RunConfig(stop={"training_iteration": 30}))
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read_string(tuner._sweep_text(1))
    return {section: dict(parser[section]) for section in parser.sections()}


def test_pb2s_bounds_are_the_domains_it_explores_and_constants_where_trials_start():
    pb2 = PB2(time_attr="training_iteration", perturbation_interval=5,
              hyperparam_bounds={"lr": [0.0001, 0.02], "width": [8, 64]})
    sweep = _sweep({"lr": 0.0001, "width": 16, "checkpoint_interval": 5}, pb2)
    assert sweep["space"] == {"train.lr": "uniform(0.0001, 0.02)", "train.width": "randint(8, 65)"}
    tune_keys = sweep["tune"]
    assert tune_keys["scheduler"] == "pb2" and tune_keys["pbt.time_attr"] == "training_iteration"
    assert tune_keys["pbt.perturbation_interval"] == "5"
    assert tune_keys["pbt.start_from_base"] == "train.lr, train.width"
    assert "pbt.resample_probability" not in tune_keys


def test_a_bound_param_space_does_not_give_is_drawn_within_it():
    sweep = _sweep({}, PB2(hyperparam_bounds={"train_loop_config": {"lr": (0.1, 0.5)}}))
    assert sweep["space"] == {"train.lr": "uniform(0.1, 0.5)"} and "pbt.start_from_base" not in sweep["tune"]


@pytest.mark.parametrize("arguments, error, says", [
    ({}, ValueError, "hyperparam_bounds must be given"),
    ({"hyperparam_bounds": {"lr": [0.5, 0.1]}}, ValueError, "low <= high"),
    ({"hyperparam_bounds": {"lr": [0.1]}}, ValueError, "[low, high]"),
    ({"hyperparam_bounds": {"opt": {"lr": [0.1, 0.5]}}}, NotImplementedError, "nested"),
    ({"hyperparam_bounds": {"lr": [0.1, 0.5]}, "synch": True}, NotImplementedError, "synch"),
    ({"hyperparam_bounds": {"lr": [0.1, 0.5]}, "require_attrs": False}, NotImplementedError, "require_attrs"),
    ({"hyperparam_bounds": {"lr": [0.1, 0.5]}, "custom_explore_fn": lambda c: c}, NotImplementedError,
     "custom_explore_fn"),
    ({"hyperparam_bounds": {"lr": [0.1, 0.5]}, "resample_probability": 0.5}, TypeError, "resample_probability"),
])
def test_what_pb2_would_not_honour_is_one_line(arguments, error, says):
    with pytest.raises(error) as raised:
        PB2(**arguments)
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_a_tuned_key_outside_the_bounds_is_refused():
    with pytest.raises(NotImplementedError, match="param_space\\['momentum'\\] is a search domain"):
        _sweep({"momentum": tune.uniform(0.1, 0.9)}, PB2(hyperparam_bounds={"lr": [0.1, 0.5]}))
    with pytest.raises(ValueError, match="within one domain"):
        _sweep({"lr": tune.uniform(0.1, 0.9)}, PB2(hyperparam_bounds={"lr": [0.1, 0.5]}))


def test_median_stopping_rules_keys_and_what_it_refuses():
    from trainrt.tune.schedulers import MedianStoppingRule
    keys = _sweep({"lr": tune.uniform(0.1, 0.5)}, MedianStoppingRule(grace_period=5, min_samples_required=2))["tune"]
    assert keys["scheduler"] == "median_stopping" and keys["median.time_attr"] == "training_iteration"
    assert keys["median.grace_period"] == "5" and keys["median.min_samples_required"] == "2"
    for arguments, says in (({"time_attr": "time_total_s"}, "give 'training_iteration'"),
                            ({"hard_stop": False}, "never paused"), ({"min_time_slice": 10}, "keeps its slot")):
        with pytest.raises(NotImplementedError, match=says):
            MedianStoppingRule(**arguments)
