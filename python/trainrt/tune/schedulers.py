"""Ray Tune's trial schedulers (`ray.tune.schedulers`) as trainrt's sweeps run them
(docs/guides/sweeps.md): each becomes `[tune] scheduler = ...` of the sweep `trainrt tune` runs.

    from trainrt.tune.schedulers import ASHAScheduler
    tune_config = trainrt.tune.TuneConfig(metric="loss", mode="min", scheduler=ASHAScheduler(max_t=20))
"""
import dataclasses

__all__ = ["FIFOScheduler", "ASHAScheduler", "AsyncHyperBandScheduler", "PopulationBasedTraining"]


@dataclasses.dataclass
class FIFOScheduler:
    pass


@dataclasses.dataclass
class ASHAScheduler:
    """Ray Tune's ASHAScheduler. time_attr: "training_iteration" (Ray's default: the reports) or
    "epoch" (a reported epoch; the trial's train.epochs is then max_t). A trial runs on through the
    rungs it is promoted at and ends at the one it is stopped at, as in Ray. A setting left None
    takes the default of its `[tune] asha.*` key (docs/reference/configuration.md)."""
    time_attr: str = "training_iteration"
    metric: str = None
    mode: str = None
    max_t: int = None
    grace_period: int = None
    reduction_factor: int = None


AsyncHyperBandScheduler = ASHAScheduler


@dataclasses.dataclass
class PopulationBasedTraining:
    """Ray Tune's PopulationBasedTraining; intervals are epochs up to config["epochs"] (a constant of
    param_space). The values explored are param_space's domains; hyperparam_mutations adds domains
    (a list is a choice) for keys param_space gives as constants. A setting left None takes the
    default of its `[tune] pbt.*` key (docs/reference/configuration.md)."""
    time_attr: str = None
    metric: str = None
    mode: str = None
    perturbation_interval: int = None
    quantile_fraction: float = None
    resample_probability: float = None
    hyperparam_mutations: dict = None
