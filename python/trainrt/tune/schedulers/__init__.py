"""Ray Tune's trial schedulers (`ray.tune.schedulers`) as trainrt's sweeps run them
(docs/guides/sweeps.md): each becomes `[tune] scheduler = ...` of the sweep `trainrt tune` runs.

    from trainrt.tune.schedulers import ASHAScheduler
    tune_config = trainrt.tune.TuneConfig(metric="loss", mode="min", scheduler=ASHAScheduler(max_t=20))
"""
import dataclasses

__all__ = ["FIFOScheduler", "ASHAScheduler", "AsyncHyperBandScheduler", "HyperBandScheduler", "PopulationBasedTraining"]


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
class HyperBandScheduler:
    """Ray Tune's HyperBandScheduler (synchronous HyperBand): trials fill brackets in their order,
    each trial of a bracket trains to the bracket's milestone and waits there (its processes end,
    its checkpoint kept) until the rest of the bracket has reached it; then the best go on from
    their checkpoints and the others stop, as in Ray. time_attr: "training_iteration" (Ray's
    default: the reports) or "epoch" (a reported epoch; each step trains to config["epochs"] = the
    milestone). A setting left None takes the default of its `[tune] hyperband.*` key
    (docs/reference/configuration.md)."""
    time_attr: str = "training_iteration"
    metric: str = None
    mode: str = None
    max_t: int = None
    reduction_factor: float = None
    stop_last_trials: bool = None


@dataclasses.dataclass
class PopulationBasedTraining:
    """Ray Tune's PopulationBasedTraining. time_attr: "training_iteration" (the reports, as Ray counts
    them; boundaries up to RunConfig(stop={"training_iteration": N})) or "epoch" (a reported epoch, up
    to config["epochs"], a constant of param_space; the default here, where Ray's is time_total_s).
    hyperparam_mutations (as in Ray: a domain, a list of values to move along, or a function of no
    argument that draws a value, called in the sweep with seeded generators) gives the domain a
    key is explored in: a key param_space gives as a constant starts there in every trial, one it
    does not give is drawn from the domain. A setting left None takes the default of its
    `[tune] pbt.*` key (docs/reference/configuration.md)."""
    time_attr: str = None
    metric: str = None
    mode: str = None
    perturbation_interval: int = None
    quantile_fraction: float = None
    resample_probability: float = None
    hyperparam_mutations: dict = None

    def _sweep_space(self, space, domain_type, choice):
        """The sweep's [space] domains of hyperparam_mutations over `space` (param_space, or its
        train_loop_config), and the keys whose constant in `space` every trial starts with
        (`pbt.start_from_base`). A mutation trainrt cannot explore is refused with one line."""
        mutations = dict(self.hyperparam_mutations or {})
        if isinstance(mutations.get("train_loop_config"), dict):  # a Trainer's, as Ray nests it
            mutations = mutations["train_loop_config"]
        domains, started = {}, []
        for key, mutation in mutations.items():
            if isinstance(mutation, (list, tuple)):
                mutation = choice(mutation)
            elif callable(mutation) and not isinstance(mutation, domain_type):
                from ..._pbt_mutation import pickled
                mutation = domain_type(f"function({pickled(mutation)})")
            if not isinstance(mutation, domain_type):
                raise NotImplementedError(
                    f"trainrt.tune.PopulationBasedTraining(hyperparam_mutations={{{key!r}: {type(mutation).__name__}}}): "
                    f"a mutation is a search domain (tune.uniform, tune.loguniform, tune.choice, ...), a list of "
                    f"values or a function that draws one; a nested dict is not explored")
            given = space.get(key)
            if isinstance(given, domain_type) and given.text != mutation.text:
                raise ValueError(f"trainrt.tune.PopulationBasedTraining: param_space[{key!r}] = {given.text} and "
                                 f"hyperparam_mutations[{key!r}] = {mutation.text}: trainrt draws and explores a key "
                                 f"in one domain; give it in one place")
            domains[key] = mutation
            if key in space and not isinstance(given, domain_type):
                started.append(key)
        return domains, started


# Ray's schedulers that trainrt does not provide, and what to use instead (one line on import).
NOT_PROVIDED = {
    "PB2": "PB2's Gaussian-process bandit is not implemented; use PopulationBasedTraining, whose "
           "hyperparam_mutations take Ray's domains and functions",
    "ResourceChangingScheduler": "a trial's ranks and cores are fixed when it starts in the Slurm allocation; "
                                 "give each trial its resources with tune.with_resources",
    "MedianStoppingRule": "use ASHAScheduler (early stopping at rungs of time_attr)",
    "HyperBandForBOHB": "BOHB is not implemented; use HyperBandScheduler, or ASHAScheduler with OptunaSearch",
}


def not_provided(name):
    return ImportError(f"trainrt.tune.schedulers.{name} is not provided: {NOT_PROVIDED[name]}")


def __getattr__(name):
    if name in NOT_PROVIDED:
        raise not_provided(name)
    raise AttributeError(f"module 'trainrt.tune.schedulers' has no attribute '{name}'")
