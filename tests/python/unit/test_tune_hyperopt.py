"""Ray's HyperOptSearch as a sweep's `[tune] search = hyperopt`: its keys in sweep.ini, Ray's
arguments trainrt would not honour refused with one line, a HyperOpt space= as searched() keys
whose values the trials get evaluated, and the searcher the sweep asks (trainrt/_hyperopt_search.py,
the real HyperOpt): seeded, random for n_initial_points, then TPE towards the finished trials'
best. Ray's hyperopt_conditional_search_space_example.py runs under trainrt in the conformance suite."""
import configparser
import json
import pickle

import pytest
from hyperopt import hp

from trainrt import _hyperopt_search, tune
from trainrt._entry import LoadError
from trainrt.tune import sample
from trainrt.tune.search.hyperopt import HyperOptSearch

CONDITIONAL = {"activation": hp.choice("activation", [{"activation": "relu", "mult": hp.uniform("mult", 1, 2)},
                                                      {"activation": "tanh"}]),
               "width": hp.uniform("width", 0, 20), "steps": 100}


def train_func(config):
    pass


def _sweep(tuner):
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read_string(tuner._sweep_text(1))
    return parser


def test_param_space_domains_are_searched_by_hyperopt_with_rays_defaults():
    tuner = tune.Tuner(train_func, param_space={"width": tune.uniform(0, 20)},
                       tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=4,
                                                   search_alg=HyperOptSearch(n_initial_points=3, gamma=0.3)))
    parser = _sweep(tuner)
    assert parser["tune"]["search"] == "hyperopt" and parser["tune"]["hyperopt.n_initial_points"] == "3"
    assert parser["tune"]["hyperopt.gamma"] == "0.3" and "hyperopt.space" not in parser["tune"]
    assert parser["space"]["train.width"] == "uniform(0, 20)"


def test_a_hyperopt_space_is_searched_keys_and_constants():
    tuner = tune.Tuner(train_func, tune_config=tune.TuneConfig(
        metric="loss", mode="min", num_samples=4, search_alg=HyperOptSearch(space=CONDITIONAL)))
    parser = _sweep(tuner)
    assert parser["tune"]["hyperopt.space"] == "hyperopt_space.pickle"
    assert dict(parser["space"]) == {"train.activation": "searched()", "train.width": "searched()"}
    domains, constants = tuner._space()
    assert constants["steps"] == 100 and isinstance(constants["activation"], sample.FromSearch)


def test_a_trials_config_is_the_space_evaluated_on_its_labels():
    searched = HyperOptSearch(space=CONDITIONAL).searched()[0]
    values = {"train.activation": json.dumps({"activation": 0, "mult": 1.25}), "train.width": json.dumps({"width": 3.5})}
    config = sample.trial_config({**searched, "steps": 100}, 0, values)
    assert config == {"activation": {"activation": "relu", "mult": 1.25}, "width": 3.5, "steps": 100}
    values["train.activation"] = json.dumps({"activation": 1})
    assert sample.trial_config(searched, 0, values)["activation"] == {"activation": "tanh"}


@pytest.mark.parametrize("arguments, error, says", [
    ({"points_to_evaluate": [{}]}, NotImplementedError, "points_to_evaluate"),
    ({"random_state_seed": 3}, NotImplementedError, "run.seed"),
    ({"space": [1]}, TypeError, "a dict of HyperOpt expressions"),
    ({"space": {"x": tune.uniform(0, 1)}}, NotImplementedError, "param_space"),
])
def test_what_hyperopt_search_would_not_honour_is_one_line(arguments, error, says):
    with pytest.raises(error) as raised:
        HyperOptSearch(**arguments)
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_a_space_beside_param_space_domains_is_refused():
    tuner = tune.Tuner(train_func, param_space={"lr": tune.uniform(0, 1)}, tune_config=tune.TuneConfig(
        metric="loss", mode="min", search_alg=HyperOptSearch(space=CONDITIONAL)))
    with pytest.raises(ValueError, match="keep one of them"):
        tuner._space()


SPACE = [{"key": "train.width", "kind": "uniform", "values": [], "low": 0.0, "high": 20.0, "q": 0},
         {"key": "train.act", "kind": "choice", "values": ["relu", "tanh"], "low": 0, "high": 0, "q": 0},
         {"key": "train.units", "kind": "randint", "values": [], "low": 8.0, "high": 64.0, "q": 0},
         {"key": "train.lr", "kind": "loguniform", "values": [], "low": 1e-4, "high": 1e-1, "q": 0}]


def _request(finished, seed=5, initial=20, space=SPACE, path=""):
    return json.dumps({"maximize": False, "seed": seed, "index": len(finished), "space": space, "finished": finished,
                       "settings": {"n_initial_points": initial, "gamma": 0.25, "space": path}})


def test_the_searcher_is_seeded_and_writes_config_text_in_the_domains():
    first = json.loads(_hyperopt_search.suggest(_request([])))
    assert first == json.loads(_hyperopt_search.suggest(_request([])))
    assert first != json.loads(_hyperopt_search.suggest(_request([], seed=6)))
    assert 0 <= float(first["train.width"]) <= 20 and first["train.act"] in ("relu", "tanh")
    assert 8 <= int(first["train.units"]) <= 63 and 1e-4 <= float(first["train.lr"]) <= 1e-1


def test_tpe_draws_near_the_best_finished_trials_once_past_the_initial_points():
    """The loss is |width - 15|: after 20 random trials, TPE's next draws are near 15 (within 2.5:
    a quarter of the interval, 25 % of random draws; with fewer trials TPE's good set is one point)."""
    space = SPACE[:1]
    finished = []
    for seed in range(20):
        width = float(json.loads(_hyperopt_search.suggest(_request([], seed=100 + seed, space=space)))["train.width"])
        finished.append({"values": {"train.width": repr(width)}, "metric": abs(width - 15)})
    near = 0
    for seed in range(20):
        width = float(json.loads(_hyperopt_search.suggest(_request(finished, seed=seed, initial=10, space=space)))[
            "train.width"])
        near += abs(width - 15) < 2.5
    assert near >= 16


def test_a_pickled_space_draws_the_labels_under_each_key(tmp_path):
    """Past its 4 initial points TPE is told trials where "mult" was inactive (tanh) beside active ones."""
    path = tmp_path / "space.pickle"
    path.write_bytes(pickle.dumps(CONDITIONAL))
    space = [{"key": "train.activation", "kind": "searched", "values": [], "low": 0, "high": 0, "q": 0},
             {"key": "train.width", "kind": "searched", "values": [], "low": 0, "high": 0, "q": 0}]
    seen = set()
    finished = []
    for seed in range(8):
        drawn = json.loads(_hyperopt_search.suggest(_request(finished, seed=seed, initial=4, space=space,
                                                             path=str(path))))
        labels = json.loads(drawn["train.activation"])
        assert set(labels) in ({"activation", "mult"}, {"activation"}) and ("mult" in labels) == (labels["activation"] == 0)
        assert list(json.loads(drawn["train.width"])) == ["width"]
        seen.add(labels["activation"])
        finished.append({"values": drawn, "metric": float(seed)})
    assert seen == {0, 1}


def test_a_missing_key_or_space_file_is_one_line(tmp_path):
    with pytest.raises(LoadError, match="cannot load the pickled HyperOpt space"):
        _hyperopt_search.check(json.dumps({"space": str(tmp_path / "none.pickle")}))
    path = tmp_path / "space.pickle"
    path.write_bytes(pickle.dumps(CONDITIONAL))
    space = [{"key": "train.depth", "kind": "searched", "values": [], "low": 0, "high": 0, "q": 0}]
    with pytest.raises(LoadError, match="has no key 'depth'"):
        _hyperopt_search.suggest(_request([], space=space, path=str(path)))


def test_a_trial_unpickles_its_own_evaluated_value(tmp_path, monkeypatch):
    """In a trial, the constants' FromSearch values become the space evaluated on that trial's labels
    (its entry in the sweep's record, found through C++'s layout)."""
    import types

    from trainrt import _state
    from trainrt._trainrt import layout
    labels = [{"train.activation": json.dumps({"activation": 1}), "train.width": json.dumps({"width": 2.0})},
              {"train.activation": json.dumps({"activation": 0, "mult": 1.5}), "train.width": json.dumps({"width": 9.0})}]
    record = {"format": "trainrt-sweep", "format_version": 1, "definition": {}, "metric": "", "mode": "max",
              "trials": [{"index": i, "name": f"trial_000{i}", "status": "RUNNING", "attempts": 1, "last_exit": 0,
                          "values": labels[i]} for i in range(2)]}
    with open(layout.sweep_record(str(tmp_path)), "w") as file:
        json.dump(record, file)
    stored = pickle.dumps({**HyperOptSearch(space=CONDITIONAL).searched()[0], "steps": 100})
    monkeypatch.setattr(_state, "_handle", types.SimpleNamespace(context=lambda: {"run_dir": str(tmp_path / "trial_0001")}))
    monkeypatch.setattr(sample, "_this_trial", {})
    assert pickle.loads(stored) == {"activation": {"activation": "relu", "mult": 1.5}, "width": 9.0, "steps": 100}
