"""Ray's TuneBOHB with HyperBandForBOHB as a sweep's `[tune] search = bohb` beside `scheduler =
hyperband`: its keys in sweep.ini, Ray's arguments trainrt would not honour refused with one line,
and the searcher the sweep asks (trainrt/_bohb_search.py, the real hpbandster and ConfigSpace):
seeded, random until a budget has enough results, then drawn towards the best at the largest
budget modelled. Ray's bohb_example.py runs under trainrt in the conformance suite."""
import configparser
import json

import pytest

from trainrt import _bohb_search, tune
from trainrt.tune.schedulers.hb_bohb import HyperBandForBOHB
from trainrt.tune.search.bohb import TuneBOHB


def train_func(config):
    pass


def test_bohb_is_written_beside_hyperband_with_its_config():
    tuner = tune.Tuner(train_func, param_space={"width": tune.uniform(0, 20)}, tune_config=tune.TuneConfig(
        metric="loss", mode="min", num_samples=8, scheduler=HyperBandForBOHB(max_t=9, reduction_factor=3),
        search_alg=TuneBOHB(bohb_config={"top_n_percent": 20}, max_concurrent=2)))
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(tuner._sweep_text(1))
    assert parser["tune"]["search"] == "bohb" and parser["tune"]["bohb.top_n_percent"] == "20"
    assert parser["tune"]["scheduler"] == "hyperband" and parser["tune"]["hyperband.max_t"] == "9"
    assert parser["tune"]["max_concurrent_trials"] == "2"


@pytest.mark.parametrize("arguments, error, says", [
    ({"space": {}}, NotImplementedError, "param_space"),
    ({"seed": 3}, NotImplementedError, "run.seed"),
    ({"points_to_evaluate": [{}]}, NotImplementedError, "points_to_evaluate"),
    ({"bohb_config": {"eta": 3}}, ValueError, "'eta' is not one of BOHB's arguments"),
])
def test_what_tune_bohb_would_not_honour_is_one_line(arguments, error, says):
    with pytest.raises(error) as raised:
        TuneBOHB(**arguments)
    assert says in str(raised.value) and "\n" not in str(raised.value)


SPACE = [{"key": "train.width", "kind": "uniform", "values": [], "low": 0.0, "high": 20.0, "q": 0},
         {"key": "train.act", "kind": "choice", "values": ["relu", "tanh"], "low": 0, "high": 0, "q": 0},
         {"key": "train.units", "kind": "randint", "values": [], "low": 8.0, "high": 64.0, "q": 0}]
SETTINGS = {"min_points_in_model": 0, "top_n_percent": 15, "num_samples": 64, "random_fraction": 0.0,
            "bandwidth_factor": 3.0, "min_bandwidth": 0.001}


def _request(finished, seed=5, space=SPACE):
    return json.dumps({"maximize": False, "seed": seed, "index": 0, "space": space, "finished": finished,
                       "settings": SETTINGS})


def test_the_searcher_is_seeded_and_writes_config_text_in_the_domains():
    first = json.loads(_bohb_search.suggest(_request([])))
    assert first == json.loads(_bohb_search.suggest(_request([])))
    assert first != json.loads(_bohb_search.suggest(_request([], seed=6)))
    assert 0 <= float(first["train.width"]) <= 20 and first["train.act"] in ("relu", "tanh")
    assert 8 <= int(first["train.units"]) <= 63


def test_the_model_of_the_largest_budget_draws_near_its_best_results():
    """At budget 1 the best widths are near 3, at budget 3 near 15: BOHB models the largest budget
    with enough results (here both have 12) and its draws (random_fraction 0) are near 15."""
    space = SPACE[:1]
    results = []
    for budget, best in ((1, 3.0), (3, 15.0)):
        for i in range(12):
            width = i * 20 / 11
            results.append({"values": {"train.width": repr(width)}, "metric": abs(width - best), "budget": budget})
    drawn = [float(json.loads(_bohb_search.suggest(_request(results, seed=seed, space=space)))["train.width"])
             for seed in range(10)]
    assert sum(abs(width - 15) < 4 for width in drawn) >= 8, drawn
