"""Ray's BayesOptSearch as a sweep's `[tune] search = bayesopt`: its keys in sweep.ini, Ray's
arguments trainrt would not honour refused with one line, and the searcher the sweep asks
(trainrt/_bayesopt_search.py, the real BayesOpt): seeded, random for the first trials, then the
Gaussian process's pick from the finished ones. Ray's bayesopt_example.py runs under trainrt in the
conformance suite."""
import configparser
import json

import pytest

from trainrt import _bayesopt_search, tune
from trainrt.tune.search import ConcurrencyLimiter
from trainrt.tune.search.bayesopt import BayesOptSearch


def train_func(config):
    pass


def _tune_keys(search_alg):
    tuner = tune.Tuner(train_func, param_space={"width": tune.uniform(0, 20), "steps": 100},
                       tune_config=tune.TuneConfig(metric="mean_loss", mode="min", num_samples=10,
                                                   search_alg=search_alg))
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read_string(tuner._sweep_text(1))
    return dict(parser["tune"])


def test_bayesopts_keys_are_written():
    keys = _tune_keys(ConcurrencyLimiter(BayesOptSearch(utility_kwargs={"kind": "ucb", "kappa": 2.5, "xi": 0.0}),
                                         max_concurrent=4))
    assert keys["search"] == "bayesopt" and keys["max_concurrent_trials"] == "4"
    assert (keys["bayesopt.utility"], keys["bayesopt.kappa"], keys["bayesopt.xi"]) == ("ucb", "2.5", "0.0")
    assert keys["bayesopt.random_search_steps"] == "10"


@pytest.mark.parametrize("arguments, says", [
    ({"space": {"width": (0, 20)}}, "param_space"),
    ({"points_to_evaluate": [{"width": 1}]}, "points_to_evaluate"),
    ({"random_state": 7}, "run.seed"),
    ({"patience": 2}, "patience"),
    ({"skip_duplicate": False}, "skip_duplicate"),
])
def test_what_bayesopt_search_would_not_honour_is_one_line(arguments, says):
    with pytest.raises(NotImplementedError) as raised:
        BayesOptSearch(**arguments)
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_an_unknown_utility_argument_is_refused():
    with pytest.raises(ValueError, match="'beta' is not one of"):
        BayesOptSearch(utility_kwargs={"beta": 1})


def _request(finished, seed=5, random_steps=2, maximize=False):
    return json.dumps({"maximize": maximize, "seed": seed,
                       "settings": {"random_steps": random_steps, "utility": {"kind": "ucb", "kappa": 0.1, "xi": 0.0}},
                       "space": [{"key": "train.x", "kind": "uniform", "values": [], "low": 0.0, "high": 10.0, "q": 0}],
                       "finished": finished})


def test_the_searcher_draws_at_random_then_from_the_finished_trials():
    first = json.loads(_bayesopt_search.suggest(_request([])))
    assert first == json.loads(_bayesopt_search.suggest(_request([])))  # seeded
    assert 0 <= float(first["train.x"]) <= 10
    assert first != json.loads(_bayesopt_search.suggest(_request([], seed=6)))
    # loss (x - 7)^2 over eight finished trials; little exploration (kappa 0.1): the pick is near 7
    finished = [{"values": {"train.x": str(x)}, "metric": (x - 7.0) ** 2} for x in (0, 1.5, 3, 4.5, 6, 8, 9, 10)]
    picked = float(json.loads(_bayesopt_search.suggest(_request(finished)))["train.x"])
    assert 6 < picked < 8
    # below random_steps finished trials, nothing is registered: the seeded random draw
    assert json.loads(_bayesopt_search.suggest(_request(finished[:1], random_steps=2))) == first


def test_a_repeater_writes_repeat_and_set_index_inside_a_concurrency_limiter():
    from trainrt.tune.search import Repeater
    keys = _tune_keys(ConcurrencyLimiter(Repeater(BayesOptSearch(), repeat=2, set_index=False), max_concurrent=2))
    assert keys["search"] == "bayesopt" and keys["repeat"] == "2" and keys["repeat_set_index"] == "false"
    assert "repeat" not in _tune_keys(BayesOptSearch())


@pytest.mark.parametrize("arguments, error", [
    ({"searcher": None}, NotImplementedError),
    ({"searcher": tune.search.BasicVariantGenerator()}, NotImplementedError),
    ({"searcher": BayesOptSearch(), "repeat": 0}, ValueError),
])
def test_a_repeater_refuses_what_it_cannot_repeat(arguments, error):
    from trainrt.tune.search import Repeater
    with pytest.raises(error) as raised:
        Repeater(**arguments)
    assert "\n" not in str(raised.value)
