"""BOHB's model as a sweep's searcher (tune.search = bohb, beside scheduler = hyperband), called by
`trainrt tune` through the Python component when a trial first starts (src/tune/python_search.hpp).

Stateless between calls, as the other searchers: each draw builds hpbandster's BOHB config
generator over a ConfigSpace made from the domains as Ray's TuneBOHB converts them (choice ->
Categorical, uniform -> UniformFloat, loguniform -> UniformFloat(log=True), randint ->
UniformInteger with its high bound excluded), with the tune.bohb.* settings; tells it every
trial's metric at every HyperBand milestone it reached (the milestone its budget; negated for mode
max, as BOHB minimises), budgets in rising order as HyperBand reaches them; and asks it once
(Ray's get_config(None)), with NumPy's global generator (which BOHB draws from) and the space's
seeded from the seed trainrt derived from (run.seed, trial index). The values come back as config
text, which the sweep commits before the trial runs."""

import json
import logging

from trainrt._entry import LoadError


def _libraries():
    try:
        import ConfigSpace
        from hpbandster.optimizers.config_generators.bohb import BOHB
    except ImportError as error:
        raise LoadError(f"tune: search = bohb needs hpbandster and ConfigSpace, which this Python cannot import "
                        f"({error}); install them into the environment trainrt's Python runs in (make deps does) or "
                        f"use search = optuna") from None
    return ConfigSpace, BOHB


def check(settings_text):
    """LoadError (one line, exit 2) when hpbandster or ConfigSpace cannot be imported."""
    _libraries()
    return ""


def _hyperparameter(ConfigSpace, domain):
    key, kind, low, high = domain["key"], domain["kind"], domain["low"], domain["high"]
    if kind == "choice":
        return ConfigSpace.CategoricalHyperparameter(key, choices=domain["values"])
    if kind in ("uniform", "loguniform"):
        return ConfigSpace.UniformFloatHyperparameter(key, lower=low, upper=high, log=kind == "loguniform")
    if kind == "randint":
        return ConfigSpace.UniformIntegerHyperparameter(key, lower=int(low), upper=int(high) - 1)
    raise LoadError(f"tune: [space] {key}: BOHB cannot search a {kind}(...) domain")


def _held(text, domain):
    """A recorded value (config text) as the ConfigSpace holds it."""
    if domain["kind"] == "choice":
        return text
    return int(text) if domain["kind"] == "randint" else float(text)


def _text(value, domain):
    if domain["kind"] == "choice":
        return str(value)
    return str(int(value)) if domain["kind"] == "randint" else repr(float(value))


class _Result:
    """What BOHB.new_result reads of an hpbandster job (Ray's _BOHBJobWrapper)."""

    def __init__(self, loss, budget, config):
        self.result, self.kwargs, self.exception = {"loss": loss}, {"budget": budget, "config": config}, None


def suggest(request_text):
    """The next trial's values as JSON {key: config text} (request: src/tune/python_search.cpp)."""
    import numpy
    ConfigSpace, BOHB = _libraries()
    request = json.loads(request_text)
    settings = dict(request["settings"])
    settings["min_points_in_model"] = settings["min_points_in_model"] or None  # 0: BOHB's default
    domains = {domain["key"]: domain for domain in request["space"]}
    space = ConfigSpace.ConfigurationSpace(seed=request["seed"] % (2**31 - 1))
    for domain in domains.values():
        space.add(_hyperparameter(ConfigSpace, domain))
    logging.getLogger("hpbandster").setLevel(logging.WARNING)
    generator = BOHB(space, **settings)
    sign = -1.0 if request["maximize"] else 1.0
    observed = sorted(request["finished"], key=lambda result: result["budget"])  # a stable sort: trial order kept
    for result in observed:
        config = {key: _held(result["values"][key], domain) for key, domain in domains.items()}
        generator.new_result(_Result(sign * float(result["metric"]), result["budget"], config))
    state = numpy.random.get_state()
    numpy.random.seed(request["seed"] % (2**32 - 1))
    try:
        config, _ = generator.get_config(None)
    finally:
        numpy.random.set_state(state)
    return json.dumps({key: _text(config[key], domain) for key, domain in domains.items()})
