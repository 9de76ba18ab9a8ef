"""HyperOpt's TPE as a sweep's searcher (tune.search = hyperopt), called by `trainrt tune` through
the Python component when a trial first starts (src/tune/python_search.hpp).

Stateless between calls, as the Optuna searcher: each draw builds HyperOpt's Trials from the
finished trials (their labels' values and metric, negated for mode max, as HyperOpt minimises),
asks tpe.suggest once with the seed trainrt derived from (run.seed, trial index) and
n_startup_jobs = tune.hyperopt.n_initial_points, and returns the values as config text, which the
sweep commits before the trial runs.

Two spaces:
- the [space] domains, as Ray's HyperOptSearch converts Tune's (choice -> hp.choice, uniform ->
  hp.uniform, loguniform -> hp.loguniform of the logs, quniform -> hp.quniform, randint ->
  hp.uniformint with its high bound excluded, qrandint -> int(hp.quniform), randn -> hp.normal),
  labelled by their keys; each value is its config text;
- a HyperOpt space pickled in tune.hyperopt.space (Ray's HyperOptSearch(space=...)): a dict whose
  top-level keys are the [space] keys' (searched()), nested hp.choice between dicts allowed. A
  key's value is the JSON of the labels under it that this draw set ({"activation": 0, "mult":
  1.4}): what HyperOpt is told again later; trainrt.tune evaluates the space on a trial's labels
  to give the function its config (trainrt/tune/search/hyperopt.py)."""

import json
import math
import pickle

from trainrt._entry import LoadError


def _hyperopt():
    try:
        import hyperopt
    except ImportError as error:
        raise LoadError(f"tune: search = hyperopt needs HyperOpt, which this Python cannot import ({error}); install "
                        "hyperopt into the environment trainrt's Python runs in (make deps does) or use search = "
                        "optuna") from None
    return hyperopt


def load_space(path):
    """The HyperOpt space pickled at `path` (a dict of top-level keys); LoadError of one line else."""
    _hyperopt()
    try:
        with open(path, "rb") as file:
            space = pickle.load(file)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError) as error:
        raise LoadError(f"tune: tune.hyperopt.space = {path}: cannot load the pickled HyperOpt space ({error}); "
                        f"HyperOptSearch(space=...) writes it, or pickle.dump a dict of hp expressions there") from None
    if not isinstance(space, dict) or not space:
        raise LoadError(f"tune: tune.hyperopt.space = {path} holds a {type(space).__name__}, not a dict of top-level "
                        f"keys (e.g. {{\"width\": hp.uniform(\"width\", 0, 20)}})")
    return space


def labels_under(value):
    """The HyperOpt labels (hyperopt_param nodes) inside one top-level value of a space, in order."""
    from hyperopt.pyll.base import as_apply, dfs
    labels = []
    for node in dfs(as_apply(value)):
        if node.name == "hyperopt_param" and node.arg["label"].obj not in labels:
            labels.append(node.arg["label"].obj)
    return labels


def check(settings_text):
    """LoadError (one line, exit 2) when HyperOpt cannot be imported or the pickled space not loaded."""
    settings = json.loads(settings_text)
    _hyperopt()
    if settings["space"]:
        load_space(settings["space"])
    return ""


def _node(hp, domain):
    """A [space] domain as Ray's HyperOptSearch.convert_search_space makes it, labelled by its key."""
    from hyperopt.pyll import scope
    key, kind, low, high, q = domain["key"], domain["kind"], domain["low"], domain["high"], domain["q"]
    nodes = {"choice": lambda: hp.choice(key, list(range(len(domain["values"])))),
             "uniform": lambda: hp.uniform(key, low, high),
             "quniform": lambda: hp.quniform(key, low, high, q),
             "loguniform": lambda: hp.loguniform(key, math.log(low), math.log(high)),
             "randint": lambda: hp.uniformint(key, low, high - 1),
             "qrandint": lambda: scope.int(hp.quniform(key, low, high, q)),
             "randn": lambda: hp.normal(key, low, high)}
    if kind not in nodes:
        raise LoadError(f"tune: [space] {key}: HyperOpt cannot search a {kind}(...) domain")
    return nodes[kind]()


class _DomainSpace:
    """The [space] domains as a HyperOpt space: a trial's labels are its keys."""

    def __init__(self, hp, domains):
        self.domains = {domain["key"]: domain for domain in domains}
        self.space = {key: _node(hp, domain) for key, domain in self.domains.items()}

    def labels(self, values):
        """A trial's config text as HyperOpt's label values (a choice's: its index)."""
        return {key: domain["values"].index(values[key]) if domain["kind"] == "choice" else float(values[key])
                for key, domain in self.domains.items()}

    def values(self, labels):
        """HyperOpt's label values as config text."""
        def text(domain, value):
            if domain["kind"] == "choice":
                return domain["values"][int(value)]
            return str(int(round(value))) if domain["kind"] in ("randint", "qrandint") else repr(float(value))
        return {key: text(domain, labels[key]) for key, domain in self.domains.items()}


class _PickledSpace:
    """A HyperOpt space of top-level keys ([space] train.KEY = searched()): a key's value is the JSON
    of the labels under it."""

    def __init__(self, path, domains):
        space = load_space(path)
        self.keys = {domain["key"]: domain["key"].split(".", 1)[-1] for domain in domains}
        missing = [name for name in self.keys.values() if name not in space]
        if missing:
            raise LoadError(f"tune: [space] train.{missing[0]} = searched(), and the HyperOpt space in {path} has no "
                            f"key {missing[0]!r} (it has {', '.join(map(repr, space))})")
        self.space = {name: space[name] for name in self.keys.values()}
        self.under = {key: labels_under(space[name]) for key, name in self.keys.items()}

    def labels(self, values):
        merged = {}
        for key in self.keys:
            merged.update(json.loads(values[key]))
        return merged

    def values(self, labels):
        return {key: json.dumps({label: _plain(labels[label]) for label in self.under[key] if label in labels})
                for key in self.keys}


def _plain(value):
    """A label's value as JSON holds it: a choice's index an int, a number a float."""
    import numpy
    return int(value) if isinstance(value, (int, numpy.integer)) else float(value)


def _told(hyperopt, domain, finished, loss):
    """HyperOpt's Trials holding the finished trials as done: each one's labels (every label of the
    space listed, an inactive one empty, as fmin's own documents have them) and its loss."""
    trials = hyperopt.Trials()
    labels = list(domain.params)
    for tid, (point, metric) in enumerate(finished):
        misc = {"tid": tid, "cmd": ("domain_attachment", "FMinIter_Domain"), "workdir": None,
                "idxs": {label: [tid] if label in point else [] for label in labels},
                "vals": {label: [point[label]] if label in point else [] for label in labels}}
        result = {"loss": loss(metric), "status": hyperopt.STATUS_OK}
        [document] = trials.new_trial_docs([tid], [None], [result], [misc])
        document["state"] = hyperopt.JOB_STATE_DONE
        trials.insert_trial_docs([document])
    trials.refresh()
    return trials


def suggest(request_text):
    """The next trial's values as JSON {key: config text} (request: src/tune/python_search.cpp)."""
    hyperopt = _hyperopt()
    request = json.loads(request_text)
    settings = request["settings"]
    space = _PickledSpace(settings["space"], request["space"]) if settings["space"] else \
        _DomainSpace(hyperopt.hp, request["space"])
    sign = -1.0 if request["maximize"] else 1.0
    domain = hyperopt.base.Domain(lambda config: 0.0, space.space)
    trials = _told(hyperopt, domain, [(space.labels(trial["values"]), trial["metric"]) for trial in request["finished"]],
                   lambda metric: sign * float(metric))
    drawn = hyperopt.tpe.suggest(trials.new_trial_ids(1), domain, trials, request["seed"] % (2**31 - 1),
                                 n_startup_jobs=settings["n_initial_points"], gamma=settings["gamma"])
    labels = {label: values[0] for label, values in drawn[0]["misc"]["vals"].items() if values}
    return json.dumps(space.values(labels))

def config_value(space, key, text):
    """The config value of `key`, a top-level key of the HyperOpt `space`, for a trial whose value of
    it is `text` (the JSON of its labels): the space evaluated on them (hyperopt.space_eval)."""
    hyperopt = _hyperopt()
    return hyperopt.space_eval({key: space[key]}, json.loads(text))[key]
