"""Ray Tune's `ray.tune.search.optuna.OptunaSearch` on trainrt's sweeps (`[tune] search = optuna`)."""
import dataclasses

__all__ = ["OptunaSearch"]


@dataclasses.dataclass
class OptunaSearch:
    """Ray Tune's OptunaSearch: Optuna's TPE sampler draws each trial's
    values when it starts, from the trials finished before it (`trainrt tune`'s search = optuna).
    Seeded by run.seed; n_startup_trials are drawn at random first (None: the default of `[tune]
    optuna.n_startup_trials`, Optuna's own)."""
    metric: str = None
    mode: str = None
    n_startup_trials: int = None
    sampler: object = None

    def __post_init__(self):
        if self.sampler is not None:
            raise NotImplementedError("trainrt.tune.OptunaSearch: the sampler is TPE, seeded by run.seed; "
                                      "give n_startup_trials= instead of sampler=")
