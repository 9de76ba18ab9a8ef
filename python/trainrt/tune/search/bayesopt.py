"""Ray Tune's `ray.tune.search.bayesopt.BayesOptSearch` on trainrt's sweeps (`[tune] search = bayesopt`)."""

__all__ = ["BayesOptSearch"]

_UTILITY = {"kind": "ucb", "kappa": 2.576, "xi": 0.0}  # Ray's default utility_kwargs


class BayesOptSearch:
    """Ray Tune's BayesOptSearch: BayesOpt's Gaussian process draws each trial's values when it starts,
    from the trials finished before it (`trainrt tune`'s search = bayesopt, src/tune/bayesopt_search.hpp),
    the first `random_search_steps` at random; `utility_kwargs` (kind ucb, ei or poi; kappa; xi) the
    acquisition. Its domains are the Tuner's param_space bounds (tune.uniform; loguniform and
    quniform searched between their bounds, as Ray's). Seeded by run.seed. Ray's arguments that
    trainrt would not honour are refused with one line."""

    def __init__(self, space=None, metric=None, mode=None, points_to_evaluate=None, utility_kwargs=None,
                 random_state=42, random_search_steps=10, verbose=0, patience=5, skip_duplicate=True, analysis=None):
        _refuse(space, points_to_evaluate, random_state, patience, skip_duplicate, analysis)
        if verbose:
            from ... import _state
            _state.log("warning", f"trainrt.tune.search.bayesopt.BayesOptSearch(verbose={verbose}): BayesOpt runs "
                                  f"inside the sweep, which logs each trial's values instead", once=True)
        unknown = sorted(set(utility_kwargs or {}) - set(_UTILITY))
        if unknown:
            raise ValueError(f"trainrt.tune.search.bayesopt.BayesOptSearch(utility_kwargs={utility_kwargs!r}): "
                             f"{unknown[0]!r} is not one of {sorted(_UTILITY)}")
        self.metric, self.mode = metric, mode
        self.utility = {**_UTILITY, **(utility_kwargs or {})}
        self.random_search_steps = random_search_steps

    def objectives(self):
        return None  # one metric

    def sweep_keys(self):
        """The `[tune]` keys of this searcher (tune/sweep_config.hpp's bayesopt section)."""
        return {"search": "bayesopt", "bayesopt.random_search_steps": self.random_search_steps,
                "bayesopt.utility": self.utility["kind"], "bayesopt.kappa": self.utility["kappa"],
                "bayesopt.xi": self.utility["xi"]}


def _refuse(space, points_to_evaluate, random_state, patience, skip_duplicate, analysis):
    refused = [("space=", space is not None, "give the bounds as the Tuner's param_space (tune.uniform(low, high))"),
               ("points_to_evaluate=", points_to_evaluate is not None, "the first trials are drawn at random; leave it out"),
               ("random_state=", random_state != 42, "BayesOpt is seeded by run.seed; set RunConfig / [run] seed instead"),
               ("patience=", patience != 5, "trainrt does not end a search on duplicate suggestions; leave it out"),
               ("skip_duplicate=", skip_duplicate is not True, "leave it out"),
               ("analysis=", analysis is not None, "earlier results are not taken in; leave it out")]
    for given, wrong, instead in refused:
        if wrong:
            raise NotImplementedError(f"trainrt.tune.search.bayesopt.BayesOptSearch({given}...): {instead}")
