"""tune.sample_from(func): a config value Ray computes per trial, func(config) once for each trial
as its config is resolved (docs/guides/sweeps.md, sample_from).

trainrt draws the other values in C++ (`trainrt tune`'s search), so a sample_from is resolved in
the driver, before the sweep starts: Tuner.fit() calls func once per trial, for trial 0, 1, ...
in order, each call given the config known then: the param_space constants and the sample_from
values resolved before it for that trial. A value trainrt's search draws (a domain) is not known
in the driver: reading one is refused with one line. The values travel with the constants every
trial loads (SWEEP_DIR/tuner/constants.pickle), where each unpickles to its own trial's value;
ResultGrid and the callbacks' trials show them in each trial's config.
"""
import inspect
import os
import pickle

__all__ = ["sample_from"]


class SampleFrom:
    """A value of param_space that func gives per trial (values: one per trial, once resolved)."""

    def __init__(self, func):
        if not callable(func):
            raise TypeError(f"trainrt.tune.sample_from: give a function (got {type(func).__name__})")
        try:
            inspect.signature(func).bind(None)
            self.takes_config = True
        except TypeError:
            self.takes_config = False
        except ValueError:  # a builtin without a signature: called with the config, as Ray does
            self.takes_config = True
        self.func, self.values = func, None

    def __repr__(self):
        return f"sample_from({getattr(self.func, '__name__', 'func')})"

    def __reduce__(self):  # pickled for the trials: each unpickles to its own trial's value
        if self.values is None:
            raise TypeError("trainrt.tune.sample_from: a value to resolve per trial, which only Tuner.fit() does "
                            "(put it in the Tuner's param_space)")
        return _trial_value, (self.values,)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def sample_from(func):
    return SampleFrom(func)


class _Spec(dict):
    """The config a sample_from function is given: the values known in the driver; reading one
    that trainrt's search draws is refused. Ray's spec.config.KEY form reads the same values."""

    def __init__(self, known, drawn):
        super().__init__(known)
        self.drawn = drawn

    def __missing__(self, key):
        if key in self.drawn:
            raise ValueError(f"trainrt.tune.sample_from: the function reads config[{key!r}], which trainrt's search "
                             f"draws per trial inside `trainrt tune`; a sample_from function sees the param_space "
                             f"constants and the sample_from values before it (make {key!r} a constant, or draw both "
                             f"in the function)")
        raise KeyError(key)

    def __getattr__(self, name):
        if name == "config" and "config" not in self:
            return self
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _call(entry, spec):
    return entry.func(spec) if entry.takes_config else entry.func()


def trial_count(tune_config, domains):
    """The trials a Tuner's sweep runs: num_samples per grid point (Ray's), as its sweep.ini says."""
    points = 1
    for domain in domains.values():
        points *= getattr(domain, "points", None) or 1
    return tune_config.num_samples * points


def resolve(values, domains, tune_config, files):
    """Calls every sample_from of `values` (the Tuner's constants, in param_space order) once per
    trial, trial by trial; their per-trial values are kept in them, for the pickle and ResultGrid,
    and in `files` (SWEEP_DIR/tuner), so that the same sweep run again keeps each trial's values
    (a trial resolved before is not resolved again). domains: the keys trainrt's search draws."""
    entries = {key: value for key, value in values.items() if isinstance(value, SampleFrom)}
    if not entries:
        return
    from .schedulers import PopulationBasedTraining
    if isinstance(tune_config.scheduler, PopulationBasedTraining):
        raise NotImplementedError(f"trainrt.tune.sample_from ({', '.join(entries)}) with "
                                  f"{type(tune_config.scheduler).__name__}: "
                                  f"PBT copies a donor's values into a trial, and trainrt's copies the searched "
                                  f"domains only; make {next(iter(entries))!r} a domain (tune.uniform, tune.choice)")
    known = {key: value for key, value in values.items() if not isinstance(value, SampleFrom)}
    stored = _stored_values(files)
    per_trial = {key: [] for key in entries}
    for index in range(trial_count(tune_config, domains)):
        spec = _Spec(known, set(domains))
        for key, entry in entries.items():
            earlier = stored.get(key, [])
            spec[key] = earlier[index] if index < len(earlier) else _call(entry, spec)
            per_trial[key].append(spec[key])
    for key, entry in entries.items():
        entry.values = per_trial[key]
    _store_values(files, {**stored, **per_trial})


STORE = "sample_from.pickle"  # in SWEEP_DIR/tuner: {key: [trial 0's value, trial 1's, ...]}


def _stored_values(files):
    try:
        with open(os.path.join(files, STORE), "rb") as file:
            return pickle.load(file)
    except FileNotFoundError:
        return {}


def _store_values(files, values):
    path = os.path.join(files, STORE)
    with open(path + ".tmp", "wb") as file:
        pickle.dump(values, file)
    os.replace(path + ".tmp", path)


def stored(files):
    """The resolved sample_from values a sweep's fit() stored (for a restored Tuner's ResultGrid):
    {key: a resolved SampleFrom}."""
    found = {}
    for key, values in _stored_values(files).items():
        entry = SampleFrom(lambda: None)
        entry.values = values
        found[key] = entry
    return found


def for_trial(constants, index):
    """`constants` with each resolved sample_from replaced by trial `index`'s value."""
    return {key: value.values[index] if isinstance(value, SampleFrom) and value.values is not None
            and index < len(value.values) else value for key, value in constants.items()}


_this_trial = {}  # this process's trial: {"index": position in its sweep's record, "values": its drawn values}


def _trial_record():
    """This process's trial in its sweep's record (found once per process through C++'s layout):
    {"index": its position, "values": its drawn values as config text}."""
    from .. import _state
    from .._trainrt import layout
    if "index" not in _this_trial:
        run_dir = _state.session().context()["run_dir"]
        trials = layout.sweep(os.path.dirname(run_dir))["trials"]
        names = [trial["name"] for trial in trials]
        if os.path.basename(run_dir) not in names:
            raise RuntimeError(f"trainrt.tune: {run_dir} is not a trial of a sweep")
        _this_trial["index"] = names.index(os.path.basename(run_dir))
        _this_trial["values"] = trials[_this_trial["index"]]["values"]
    return _this_trial


def _trial_value(values):
    """Unpickling a resolved sample_from in a trial: this trial's value (its position in its
    sweep's record)."""
    index = _trial_record()["index"]
    if index >= len(values):
        raise RuntimeError(f"trainrt.tune.sample_from: trial {index} of a sweep resolved for {len(values)} trials "
                           f"(the sweep's num_samples changed: run it under a new RunConfig(name))")
    return values[index]


class FromSearch:
    """A top-level config value that the searcher's own space gives each trial
    (HyperOptSearch(space={...}), where hp.choice may pick between dicts): the trial's drawn value of
    `key` is the JSON of its HyperOpt labels (trainrt/_hyperopt_search.py), and the config holds the
    space evaluated on them. In the trials' constants it unpickles to the trial's own value."""

    def __init__(self, key, space):
        self.key, self.space = key, space

    def __repr__(self):
        return f"hyperopt space[{self.key!r}]"

    def evaluate(self, values):
        """The value for a trial whose drawn values (config text by [space] key) are `values`."""
        from .. import _hyperopt_search
        return _hyperopt_search.config_value(self.space, self.key, values["train." + self.key])

    def __reduce__(self):
        return _from_search_value, (self.key, self.space)


def _from_search_value(key, space):
    """Unpickling a FromSearch in a trial: the space evaluated on this trial's drawn labels."""
    return FromSearch(key, space).evaluate(_trial_record()["values"])


def trial_config(constants, index, values):
    """A trial's config as Ray shows it (ResultGrid, callbacks' Trial.config): the constants (each
    sample_from resolved for trial `index`), its drawn `values` (config text by [space] key) over
    them, and a FromSearch key's value evaluated from them."""
    from . import _config_key, _parsed
    config = {**for_trial(constants, index), **{_config_key(key): _parsed(text) for key, text in values.items()}}
    config.update({key: value.evaluate(values) for key, value in constants.items() if isinstance(value, FromSearch)})
    return config
