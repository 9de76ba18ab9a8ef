"""BayesOpt's Gaussian process as a sweep's searcher (tune.search = bayesopt), called by `trainrt
tune` through the Python component when a trial first starts (src/tune/python_search.hpp).

Stateless between calls, as the Optuna searcher: each draw builds a BayesianOptimization over the
domains' bounds with random_state = the seed trainrt derived from (run.seed, trial index), registers
the finished trials (their values and metric; negated for mode min, as BayesOpt maximises) once
`random_steps` of them are there, and suggests: with none registered, BayesOpt draws a random
point. The values come back as config text, which the sweep commits before the trial runs."""

import json

from trainrt._entry import LoadError


def _bayes_opt():
    try:
        import bayes_opt
    except ImportError as error:
        raise LoadError(f"tune: search = bayesopt needs BayesOpt, which this Python cannot import ({error}); install "
                        "bayesian-optimization<2 into the environment trainrt's Python runs in (make deps does) or "
                        "use search = optuna") from None
    if not hasattr(bayes_opt, "UtilityFunction"):
        raise LoadError("tune: search = bayesopt takes bayesian-optimization 1.x (the UtilityFunction API Ray's "
                        "BayesOptSearch uses), and this Python has a later one: install bayesian-optimization<2")
    return bayes_opt


def check(settings_text):
    """LoadError (one line, exit 2) when BayesOpt 1.x cannot be imported."""
    _bayes_opt()
    return ""


def suggest(request_text):
    """The next trial's values as JSON {key: config text} (request: src/tune/python_search.cpp)."""
    byo = _bayes_opt()
    request = json.loads(request_text)
    settings = request["settings"]
    bounds = {domain["key"]: (domain["low"], domain["high"]) for domain in request["space"]}
    optimizer = byo.BayesianOptimization(f=None, pbounds=bounds, random_state=request["seed"], verbose=0,
                                         allow_duplicate_points=True)
    finished = request["finished"]
    if len(finished) >= settings["random_steps"]:
        sign = 1.0 if request["maximize"] else -1.0
        for trial in finished:
            optimizer.register(params={key: float(trial["values"][key]) for key in bounds},
                               target=sign * float(trial["metric"]))
    point = optimizer.suggest(byo.UtilityFunction(**settings["utility"]))
    return json.dumps({key: repr(float(point[key])) for key in bounds})
