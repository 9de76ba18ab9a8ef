"""Ray Tune's search algorithms (`ray.tune.search`) on trainrt's sweeps (docs/guides/sweeps.md):

    BasicVariantGenerator()            random search over param_space, grid_search expanded (the default)
    optuna.OptunaSearch(...)           Optuna's TPE sampler ([tune] search = optuna)
    bayesopt.BayesOptSearch(...)       BayesOpt's Gaussian process ([tune] search = bayesopt)
    nevergrad.NevergradSearch(...)     a Nevergrad optimizer ([tune] search = nevergrad)
    hyperopt.HyperOptSearch(...)       HyperOpt's TPE, over param_space or a HyperOpt space ([tune] search = hyperopt)
    bohb.TuneBOHB(...)                 BOHB's model, with schedulers.HyperBandForBOHB ([tune] search = bohb)
    ConcurrencyLimiter(searcher, max_concurrent=N)   at most N trials at once
    Repeater(searcher, repeat=N, set_index=True)     each drawn configuration N times, the mean told

Other Ray searchers (Ax, HEBO, ZOOpt) are not here: Tuner refuses them by name.
"""
import dataclasses

__all__ = ["BasicVariantGenerator", "ConcurrencyLimiter", "Repeater"]


class BasicVariantGenerator:
    """Ray's default searcher: random values, grid_search points expanded. The draws are seeded by
    run.seed, so Ray's random_state / points_to_evaluate arguments are refused rather than ignored."""

    def __init__(self, max_concurrent=0, **unsupported):
        if unsupported:
            raise NotImplementedError(f"trainrt.tune.search.BasicVariantGenerator: {sorted(unsupported)[0]}= is not "
                                      f"supported (the draws are seeded by run.seed); give max_concurrent= only")
        self.max_concurrent = max_concurrent


@dataclasses.dataclass
class ConcurrencyLimiter:
    """Ray's ConcurrencyLimiter: `searcher`'s trials, at most `max_concurrent` at once."""
    searcher: object
    max_concurrent: int
    batch: bool = False

    def __post_init__(self):
        if self.batch:
            raise NotImplementedError("trainrt.tune.search.ConcurrencyLimiter: batch=True is not supported")
        if self.max_concurrent < 1:
            raise ValueError("trainrt.tune.search.ConcurrencyLimiter: max_concurrent is at least 1")


class Repeater:
    """Ray's Repeater: each configuration `searcher` (Optuna, BayesOpt, Nevergrad or HyperOpt) draws runs as
    `repeat` trials in a row, and the searcher is told their mean (`[tune] repeat`); with set_index,
    each trial's config holds "__trial_index__", its place in its group (`repeat_set_index`).
    Tuner's num_samples counts trials, as Ray's: a multiple of `repeat`."""

    def __init__(self, searcher, repeat=1, set_index=True):
        if isinstance(searcher, (BasicVariantGenerator, ConcurrencyLimiter, Repeater)) or searcher is None:
            raise NotImplementedError(f"trainrt.tune.search.Repeater({type(searcher).__name__}): it repeats a "
                                      f"searcher's draws (OptunaSearch, BayesOptSearch, NevergradSearch, HyperOptSearch; a "
                                      f"ConcurrencyLimiter goes around the Repeater); for random search raise "
                                      f"num_samples instead")
        if not isinstance(repeat, int) or repeat < 1:
            raise ValueError(f"trainrt.tune.search.Repeater(repeat={repeat!r}): a positive integer")
        self.searcher, self.repeat, self.set_index = searcher, repeat, bool(set_index)


# Ray's searchers that trainrt does not ask, by their module under ray.tune.search, with what to
# use instead (one ImportError line on import).
NOT_PROVIDED = {
    "ax": ("AxSearch", "use OptunaSearch or BayesOptSearch"),
    "hebo": ("HEBOSearch", "use OptunaSearch or BayesOptSearch"),
    "zoopt": ("ZOOptSearch", "use NevergradSearch or OptunaSearch"),
}


def not_provided(module):
    name, instead = NOT_PROVIDED[module]
    return ImportError(f"trainrt.tune.search.{module}.{name} is not provided: {instead}")
