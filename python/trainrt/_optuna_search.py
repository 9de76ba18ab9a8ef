"""Optuna's TPE sampler as a sweep's searcher (tune.search = optuna), called by `trainrt tune`
through the Python component when a trial first starts (src/tune/optuna_search.hpp).

Stateless between calls: each draw rebuilds an in-memory study from the finished trials the sweep
recorded and seeds the sampler with the seed trainrt derived from (run.seed, trial index); the
values come back as config text, which the sweep commits before the trial runs. Domains map as Ray
Tune's OptunaSearch maps them: choice -> categorical, uniform/quniform -> float (step q),
loguniform -> log float, randint -> int with the high bound excluded, qrandint -> int (step q)."""

import json

from trainrt._entry import LoadError


def _optuna():
    try:
        import optuna
    except ImportError as error:
        raise LoadError(f"tune: search = optuna needs Optuna, which this Python cannot import ({error}); install "
                        "optuna into the environment trainrt's Python runs in (make deps does) or use search = random") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


def check(space_function):
    """Optuna's version; LoadError (one line, exit 2) when it cannot be imported, or when the
    define-by-run function `space_function` (empty: none) does not load or draw."""
    optuna = _optuna()
    if space_function:
        function = _space_function(space_function)
        try:
            returned = function(optuna.create_study().ask())
        except Exception as error:
            raise LoadError(f"tune: the define-by-run function {space_function} fails on an Optuna trial: "
                            f"{type(error).__name__}: {error}") from None
        _constants(space_function, returned)
    return optuna.__version__


def _distribution(distributions, domain):
    kind, low, high, q = domain["kind"], domain["low"], domain["high"], domain["q"]
    if kind == "choice":
        return distributions.CategoricalDistribution(domain["values"])
    if kind == "uniform":
        return distributions.FloatDistribution(low, high)
    if kind == "quniform":
        return distributions.FloatDistribution(low, high, step=q)
    if kind == "loguniform":
        return distributions.FloatDistribution(low, high, log=True)
    if kind == "randint":
        return distributions.IntDistribution(int(low), int(high) - 1)
    if kind == "qrandint":
        return distributions.IntDistribution(int(low), int(high), step=int(q))
    raise LoadError(f"tune: [space] {domain['key']}: Optuna cannot sample a {kind}(...) domain")


def _value(text, distribution):
    """A recorded value (config text) as Optuna holds it."""
    name = type(distribution).__name__
    if name == "CategoricalDistribution":
        return text
    return int(text) if name == "IntDistribution" else float(text)


def _text(value):
    return value if isinstance(value, str) else repr(value)


def _floats(finished):
    """A finished trial's objective values as floats (Optuna's multi-objective TPE fails on ints)."""
    return [float(value) for value in finished["metrics"]]


def _finished_trial(optuna, distributions, finished):
    """A finished trial for the study, or None when its values are not in the space (PBT explored
    them beyond its bounds): those are no evidence about the space TPE models."""
    try:
        params = {key: _value(finished["values"][key], distribution) for key, distribution in distributions.items()}
        return optuna.trial.create_trial(params=params, distributions=distributions, values=_floats(finished))
    except (KeyError, ValueError):
        return None


def suggest(request_text):
    """The next trial's values as JSON {key: config text} (request: src/tune/optuna_search.cpp)."""
    optuna = _optuna()
    request = json.loads(request_text)
    if request.get("space_function"):
        return _suggest_by_run(optuna, request)
    distributions = {domain["key"]: _distribution(optuna.distributions, domain) for domain in request["space"]}
    study = _study(optuna, request, lambda finished: _finished_trial(optuna, distributions, finished))
    trial = study.ask(distributions)
    return json.dumps({key: _text(trial.params[key]) for key in distributions})


def _study(optuna, request, finished_trial):
    """An in-memory study of the request's directions (one per objective: several make a
    multi-objective study), seeded sampler and finished trials (each made by finished_trial, None:
    left out)."""
    sampler = optuna.samplers.TPESampler(seed=request["seed"], n_startup_trials=request["n_startup_trials"])
    directions = ["maximize" if mode == "max" else "minimize" for mode in request["modes"]]
    study = optuna.create_study(directions=directions, sampler=sampler)
    for finished in request["finished"]:
        trial = finished_trial(finished)
        if trial is not None:
            study.add_trial(trial)
    return study


# Define-by-run (tune.optuna.space = FILE.py:NAME): the function suggests a trial's values on an
# Optuna trial, conditionally if it likes, and may return constants (Ray's OptunaSearch(space=fn)).
# A finished trial's distributions are those the function asks for when replayed on its values.

_functions = {}


def _space_function(spec):
    if spec not in _functions:
        from trainrt import _entry
        target, _, name = spec.rpartition(":")
        if not target or not name:
            raise LoadError(f"tune: tune.optuna.space = {spec}: name the function: FILE.py:NAME or module:NAME")
        is_file = target.endswith(".py") or "/" in target
        module = _entry._load_file(target) if is_file else _entry._import_module(target)
        _functions[spec] = _entry._find_function(module, target, name)
    return _functions[spec]


def _parsed(text):
    """A value as the sweep recorded it (config text) back as the function suggested it."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _replayed(optuna, function, finished):
    """A finished trial for the study: its values, replayed through the function for their
    distributions; None when the function no longer asks for them."""
    values = {key: _parsed(text) for key, text in finished["values"].items()}
    fixed = optuna.trial.FixedTrial(values)
    try:
        function(fixed)
        return optuna.trial.create_trial(params=fixed.params, distributions=fixed.distributions,
                                         values=_floats(finished))
    except (KeyError, ValueError):
        return None


def _constants(spec, returned):
    if returned is None:
        return {}
    if not isinstance(returned, dict) or not all(isinstance(v, (bool, int, float, str)) for v in returned.values()):
        raise LoadError(f"tune: the define-by-run function {spec} returned {returned!r}: it returns None or a dict "
                        f"of constants (bool, int, float or str)")
    return returned


def _suggest_by_run(optuna, request):
    spec = request["space_function"]
    function = _space_function(spec)
    trial = _study(optuna, request, lambda finished: _replayed(optuna, function, finished)).ask()
    constants = _constants(spec, function(trial))
    return json.dumps({key: _text(value) for key, value in {**trial.params, **constants}.items()})
