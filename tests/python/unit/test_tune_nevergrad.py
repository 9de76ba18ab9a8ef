"""Ray's NevergradSearch as a sweep's `[tune] search = nevergrad`: the optimizer by its registered
name in sweep.ini, Ray's arguments trainrt would not honour refused with one line, and the searcher
the sweep asks (trainrt/_nevergrad_search.py, the real Nevergrad): seeded, told the finished
trials. Ray's nevergrad_example.py runs under trainrt in the conformance suite."""
import configparser
import json

import nevergrad as ng
import pytest

from trainrt import _nevergrad_search, tune
from trainrt._entry import LoadError
from trainrt.tune.search.nevergrad import NevergradSearch


def train_func(config):
    pass


def test_the_optimizer_is_written_by_its_registered_name():
    tuner = tune.Tuner(train_func, param_space={"width": tune.uniform(0, 20)},
                       tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=4,
                                                   search_alg=NevergradSearch(optimizer=ng.optimizers.OnePlusOne)))
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(tuner._sweep_text(1))
    assert parser["tune"]["search"] == "nevergrad" and parser["tune"]["nevergrad.optimizer"] == "OnePlusOne"


@pytest.mark.parametrize("arguments, error, says", [
    ({}, ValueError, "give optimizer="),
    ({"optimizer": ng.optimizers.OnePlusOne, "optimizer_kwargs": {"budget": 5}}, NotImplementedError, "optimizer_kwargs"),
    ({"optimizer": ng.optimizers.OnePlusOne, "space": {}}, NotImplementedError, "param_space"),
    ({"optimizer": ng.optimizers.OnePlusOne, "points_to_evaluate": [{}]}, NotImplementedError, "points_to_evaluate"),
])
def test_what_nevergrad_search_would_not_honour_is_one_line(arguments, error, says):
    with pytest.raises(error) as raised:
        NevergradSearch(**arguments)
    assert says in str(raised.value) and "\n" not in str(raised.value)


SPACE = [{"key": "train.width", "kind": "uniform", "values": [], "low": 0.0, "high": 20.0, "q": 0},
         {"key": "train.act", "kind": "choice", "values": ["relu", "tanh"], "low": 0, "high": 0, "q": 0},
         {"key": "train.units", "kind": "randint", "values": [], "low": 8.0, "high": 64.0, "q": 0}]


def _request(finished, seed=5, optimizer="OnePlusOne", index=0):
    return json.dumps({"maximize": False, "seed": seed, "index": index, "settings": {"optimizer": optimizer},
                       "space": SPACE, "finished": finished})


def test_the_searcher_is_seeded_told_the_finished_trials_and_writes_config_text():
    first = json.loads(_nevergrad_search.suggest(_request([], optimizer="RandomSearch")))
    assert first == json.loads(_nevergrad_search.suggest(_request([], optimizer="RandomSearch")))
    assert first != json.loads(_nevergrad_search.suggest(_request([], seed=6, optimizer="RandomSearch")))
    assert 0 <= float(first["train.width"]) <= 20 and first["train.act"] in ("relu", "tanh")
    assert 8 <= int(first["train.units"]) <= 63
    # OnePlusOne's first ask is the middle of the space; a later trial's is a mutation of the best told
    middle = json.loads(_nevergrad_search.suggest(_request([])))
    assert middle["train.width"] == "10.0"
    told = [{"values": {"train.width": "3.0", "train.act": "tanh", "train.units": "9"}, "metric": 0.5}]
    after = json.loads(_nevergrad_search.suggest(_request(told, index=1)))
    assert after != middle and after != json.loads(_nevergrad_search.suggest(_request([], index=1)))


def test_an_unknown_optimizer_is_one_line():
    with pytest.raises(LoadError, match="did you mean OnePlusOne"):
        _nevergrad_search.check(json.dumps({"optimizer": "oneplusone"}))
