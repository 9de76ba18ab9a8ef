"""Ray Tune's search algorithms (`ray.tune.search`) on trainrt's sweeps (docs/guides/sweeps.md):

    BasicVariantGenerator()            random search over param_space, grid_search expanded (the default)
    optuna.OptunaSearch(...)           Optuna's TPE sampler ([tune] search = optuna)
    bayesopt.BayesOptSearch(...)       BayesOpt's Gaussian process ([tune] search = bayesopt)
    nevergrad.NevergradSearch(...)     a Nevergrad optimizer ([tune] search = nevergrad)
    ConcurrencyLimiter(searcher, max_concurrent=N)   at most N trials at once

Other Ray searchers (HyperOpt, Ax, BOHB, ...) are not here: Tuner refuses them by name.
"""
import dataclasses

__all__ = ["BasicVariantGenerator", "ConcurrencyLimiter"]


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
