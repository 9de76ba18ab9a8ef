"""A Nevergrad optimizer as a sweep's searcher (tune.search = nevergrad), called by `trainrt tune`
through the Python component when a trial first starts (src/tune/python_search.hpp).

Stateless between calls, as the Optuna searcher: each draw builds the optimizer that
tune.nevergrad.optimizer names (nevergrad.optimizers.registry) over the domains as Ray's
NevergradSearch converts them (choice -> Choice, uniform -> Scalar, loguniform -> Log, randint ->
an integer Scalar with its high bound excluded), its generator seeded with the seed trainrt derived
from (run.seed, trial index), asks it once for each trial before this one (an optimizer's first
asks differ from its later ones: OnePlusOne's first is the middle of the space), tells it every
finished trial (its metric, negated for mode max, as Nevergrad minimises) and asks it once more. The values come back as config text, which the sweep
commits before the trial runs."""

import json

from trainrt._entry import LoadError


def _nevergrad():
    try:
        import nevergrad
    except ImportError as error:
        raise LoadError(f"tune: search = nevergrad needs Nevergrad, which this Python cannot import ({error}); install "
                        "nevergrad into the environment trainrt's Python runs in (make deps does) or use search = "
                        "optuna") from None
    return nevergrad


def _optimizer_class(ng, name):
    if name not in ng.optimizers.registry:
        close = sorted(key for key in ng.optimizers.registry if key.lower() == name.lower())
        raise LoadError(f"tune: tune.nevergrad.optimizer = {name} is not one of Nevergrad's optimizers "
                        f"(nevergrad.optimizers.registry){': did you mean ' + close[0] + '?' if close else ''}")
    return ng.optimizers.registry[name]


def check(settings_text):
    """LoadError (one line, exit 2) when Nevergrad cannot be imported or does not know the optimizer."""
    _optimizer_class(_nevergrad(), json.loads(settings_text)["optimizer"])
    return ""


def _parameter(ng, domain):
    kind, low, high = domain["kind"], domain["low"], domain["high"]
    if kind == "choice":
        return ng.p.Choice(domain["values"])
    if kind == "uniform":
        return ng.p.Scalar(lower=low, upper=high)
    if kind == "loguniform":
        return ng.p.Log(lower=low, upper=high)
    if kind == "randint":
        return ng.p.Scalar(lower=int(low), upper=int(high) - 1).set_integer_casting()
    raise LoadError(f"tune: [space] {domain['key']}: Nevergrad cannot search a {kind}(...) domain")


def _held(text, domain):
    """A recorded value (config text) as the parameter holds it."""
    if domain["kind"] == "choice":
        return text
    return int(text) if domain["kind"] == "randint" else float(text)


def suggest(request_text):
    """The next trial's values as JSON {key: config text} (request: src/tune/python_search.cpp)."""
    import numpy
    ng = _nevergrad()
    request = json.loads(request_text)
    domains = {domain["key"]: domain for domain in request["space"]}
    parametrization = ng.p.Dict(**{key: _parameter(ng, domain) for key, domain in domains.items()})
    parametrization.random_state = numpy.random.RandomState(request["seed"])
    optimizer = _optimizer_class(ng, request["settings"]["optimizer"])(parametrization=parametrization)
    for _ in range(request["index"]):  # the draws before this trial's: the optimizer's asks counted as in one sweep
        optimizer.ask()
    sign = -1.0 if request["maximize"] else 1.0
    for trial in request["finished"]:
        value = {key: _held(trial["values"][key], domain) for key, domain in domains.items()}
        optimizer.tell(optimizer.parametrization.spawn_child(new_value=value), sign * float(trial["metric"]))
    drawn = optimizer.ask().value
    return json.dumps({key: drawn[key] if domain["kind"] == "choice" else repr(drawn[key])
                       for key, domain in domains.items()})
