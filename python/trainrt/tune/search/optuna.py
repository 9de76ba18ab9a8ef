"""Ray Tune's `ray.tune.search.optuna.OptunaSearch` on trainrt's sweeps (`[tune] search = optuna`)."""
import dataclasses
import inspect
import os

__all__ = ["OptunaSearch"]


@dataclasses.dataclass
class OptunaSearch:
    """Ray Tune's OptunaSearch: Optuna's TPE sampler draws each trial's
    values when it starts, from the trials finished before it (`trainrt tune`'s search = optuna).
    Seeded by run.seed; n_startup_trials are drawn at random first (None: the default of `[tune]
    optuna.n_startup_trials`, Optuna's own). `metric` and `mode` may be lists: a multi-objective
    study (`[tune] optuna.objectives`). `space` is None (the Tuner's param_space domains) or
    a define-by-run function, as Ray's: it suggests the values on an Optuna trial and returns None
    or a dict of constants (`[tune] optuna.space`)."""
    space: object = None
    metric: str = None
    mode: str = None
    points_to_evaluate: list = None
    sampler: object = None
    seed: int = None
    evaluated_rewards: list = None
    n_startup_trials: int = None

    def __post_init__(self):
        refused = {"sampler=": ("the sampler is TPE, seeded by run.seed", "give n_startup_trials= instead"),
                   "seed=": ("the sampler is seeded by run.seed", "set RunConfig / [run] seed instead"),
                   "points_to_evaluate=": ("the first trials are drawn at random", "leave it out"),
                   "evaluated_rewards=": ("earlier results are not taken in", "leave it out")}
        for given, (why, instead) in refused.items():
            if getattr(self, given[:-1]) is not None:
                raise NotImplementedError(f"trainrt.tune.OptunaSearch({given}...): {why}; {instead}")
        if self.space is not None and not callable(self.space):
            raise NotImplementedError("trainrt.tune.OptunaSearch(space={...}): give the domains as the Tuner's "
                                      "param_space (tune.uniform, tune.choice, ...), or space= a define-by-run function")

    def objectives(self):
        """`[tune] optuna.objectives` ("loss:min, gain:max") for a multi-objective search (lists of
        metrics and modes, as Ray's), else None."""
        if not isinstance(self.metric, (list, tuple)):
            return None
        modes = self.mode if isinstance(self.mode, (list, tuple)) else []
        if len(modes) != len(self.metric) or any(mode not in ("min", "max") for mode in modes):
            raise ValueError(f"trainrt.tune.OptunaSearch(metric={self.metric!r}, mode={self.mode!r}): a list of "
                             f"metrics takes a list of modes, 'min' or 'max', one per metric")
        return ", ".join(f"{metric}:{mode}" for metric, mode in zip(self.metric, modes))

    def sweep_keys(self):
        """The `[tune]` keys of this searcher (tune/sweep_config.hpp's optuna section)."""
        return {"search": "optuna", "optuna.n_startup_trials": self.n_startup_trials,
                "optuna.space": self.space_function(), "optuna.objectives": self.objectives()}

    def space_function(self):
        """`[tune] optuna.space` for a define-by-run space (FILE.py:NAME), else None."""
        if self.space is None:
            return None
        source = inspect.getsourcefile(self.space)
        name = getattr(self.space, "__name__", "")
        if source is None or not name.isidentifier():
            raise TypeError("trainrt.tune.OptunaSearch(space=...): the define-by-run function must be a named "
                            "function defined in a file (the sweep imports it from there)")
        return f"{os.path.abspath(source)}:{name}"
