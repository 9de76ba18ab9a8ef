"""Ray Tune's trial schedulers (`ray.tune.schedulers`) as trainrt's sweeps run them
(docs/guides/sweeps.md): each becomes `[tune] scheduler = ...` of the sweep `trainrt tune` runs.

    from trainrt.tune.schedulers import ASHAScheduler
    tune_config = trainrt.tune.TuneConfig(metric="loss", mode="min", scheduler=ASHAScheduler(max_t=20))
"""
import dataclasses

__all__ = ["FIFOScheduler", "ASHAScheduler", "AsyncHyperBandScheduler", "HyperBandScheduler", "HyperBandForBOHB",
           "PopulationBasedTraining", "PB2", "MedianStoppingRule"]


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
class HyperBandForBOHB(HyperBandScheduler):
    """Ray Tune's HyperBandForBOHB, the scheduler of TuneBOHB (`[tune] scheduler = hyperband` with
    search = bohb). What it changes in Ray's HyperBandScheduler is what trainrt's already does: a
    trial waiting at a milestone has ended its step (its CPUs go to other trials, BOHB's new ones
    among them), and the largest bracket fills first. The sweep tells BOHB every trial's result at
    every milestone it reaches, as Ray's tells it at each pause."""


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


class PB2(PopulationBasedTraining):
    """Ray Tune's PB2 (population based bandits): PopulationBasedTraining whose explore step picks a
    copying trial's new values with a Gaussian-process bandit (`[tune] scheduler = pb2`, decided in
    C++: src/tune/pb2.hpp). hyperparam_bounds: {key: [low, high]} (or nested under
    "train_loop_config", as a Trainer's); each key is explored within its bounds, uniformly (an
    integer constant of param_space with integer bounds: as an integer). A key param_space gives as a
    constant starts there in every trial, one it does not give is drawn within the bounds, as in
    Ray. time_attr: "training_iteration" or "epoch", as PopulationBasedTraining's. Ray's options that
    would change nothing here, or that trainrt does not have, are refused with one line."""

    def __init__(self, time_attr=None, metric=None, mode=None, perturbation_interval=None, hyperparam_bounds=None,
                 quantile_fraction=None, log_config=False, require_attrs=True, synch=False, custom_explore_fn=None):
        _refuse_pb2_options(log_config, require_attrs, synch, custom_explore_fn)
        super().__init__(time_attr=time_attr, metric=metric, mode=mode, perturbation_interval=perturbation_interval,
                         quantile_fraction=quantile_fraction)
        self.hyperparam_bounds = _checked_bounds(hyperparam_bounds)

    def _sweep_space(self, space, domain_type, choice):
        """Each bound as a [space] domain (uniform, or randint for an integer constant with integer
        bounds), and the keys whose constant in `space` every trial starts with."""
        others = [key for key, value in space.items() if isinstance(value, domain_type) and key not in self.hyperparam_bounds]
        if others:
            raise NotImplementedError(
                f"trainrt.tune.schedulers.PB2: param_space[{others[0]!r}] is a search domain that hyperparam_bounds "
                f"does not name; trainrt's PB2 explores every tuned key within its bounds: give it bounds there, or a "
                f"constant")
        domains, started = {}, []
        for key, (low, high) in self.hyperparam_bounds.items():
            given = space.get(key)
            whole = isinstance(given, int) and not isinstance(given, bool) and all(isinstance(b, int) for b in (low, high))
            domains[key] = domain_type(f"randint({low}, {high + 1})" if whole else f"uniform({float(low)!r}, {float(high)!r})")
            if isinstance(given, domain_type):
                raise ValueError(f"trainrt.tune.schedulers.PB2: param_space[{key!r}] = {given.text} and "
                                 f"hyperparam_bounds[{key!r}] = [{low}, {high}]: trainrt draws and explores a key "
                                 f"within one domain; give a constant in param_space (or none: drawn within the bounds)")
            if key in space:
                started.append(key)
        return domains, started


def _checked_bounds(bounds):
    """hyperparam_bounds as {key: (low, high)}, a Trainer's "train_loop_config" level unnested;
    ValueError (as Ray's) for a bound that is not [low, high]; a deeper nesting is refused."""
    if not bounds:
        raise ValueError("trainrt.tune.schedulers.PB2: hyperparam_bounds must be given, {key: [low, high]} "
                         "(as in Ray)")
    if isinstance(bounds.get("train_loop_config"), dict) and len(bounds) == 1:
        bounds = bounds["train_loop_config"]
    checked = {}
    for key, bound in bounds.items():
        if isinstance(bound, dict):
            raise NotImplementedError(f"trainrt.tune.schedulers.PB2: hyperparam_bounds[{key!r}] is nested; trainrt "
                                      f"explores the function's own config keys: give them at the top level")
        if not isinstance(bound, (list, tuple)) or len(bound) != 2 or bound[0] > bound[1]:
            raise ValueError(f"trainrt.tune.schedulers.PB2: hyperparam_bounds[{key!r}] = {bound!r}: give [low, high] "
                             f"with low <= high")
        checked[key] = tuple(bound)
    return checked


def _refuse_pb2_options(log_config, require_attrs, synch, custom_explore_fn):
    """Ray's PB2 options trainrt would accept and not honour: one line each."""
    if log_config:  # Ray's default: a script may well say it
        from ... import _state
        _state.log("warning", "trainrt.tune.schedulers.PB2(log_config=True): trainrt records every decision (donor, "
                              "values) in the sweep's record and log lines, not in pb2_global.txt or pb2_policy_*.txt", once=True)
    if not require_attrs:
        raise NotImplementedError("trainrt.tune.schedulers.PB2(require_attrs=False): a trial reaching a boundary "
                                  "without the metric ends there (TERMINATED or ERROR); leave require_attrs out")
    if synch:
        raise NotImplementedError("trainrt.tune.schedulers.PB2(synch=True): trainrt decides each trial at its own "
                                  "boundaries (Ray's synch=False); leave synch out")
    if custom_explore_fn is not None:
        raise NotImplementedError("trainrt.tune.schedulers.PB2(custom_explore_fn=...): the bandit's values are picked "
                                  "in the sweep (C++), which does not call Python there; leave it out")


@dataclasses.dataclass
class MedianStoppingRule:
    """Ray Tune's MedianStoppingRule (`[tune] scheduler = median_stopping`, decided in C++:
    src/tune/median_stopping.hpp): at each report from grace_period on, a trial whose best metric
    is worse than the median of the other trials' running means stops, once min_samples_required
    of them have reached that time. time_attr: "training_iteration" (the reports; the default here,
    where Ray's is time_total_s, seconds) or "epoch"; grace_period counts in it (Ray's default 60).
    Each trial's end is needed (RunConfig(stop={"training_iteration": N}), or config["epochs"]).
    Ray's hard_stop=False, min_time_slice and time_attr in seconds are refused with one line."""
    time_attr: str = "training_iteration"
    metric: str = None
    mode: str = None
    grace_period: float = 60.0
    min_samples_required: int = 3
    min_time_slice: int = 0
    hard_stop: bool = True

    def __post_init__(self):
        refused = [("time_attr", self.time_attr not in ("training_iteration", "epoch"),
                    f"{self.time_attr!r}: trainrt decides at reports; give 'training_iteration' (or 'epoch') and "
                    f"grace_period in it"),
                   ("hard_stop", not self.hard_stop, "False: a trial here is stopped, never paused; leave it out"),
                   ("min_time_slice", bool(self.min_time_slice), "a trial here keeps its slot while samples are "
                                                                 "too few; leave it out")]
        for name, wrong, why in refused:
            if wrong:
                raise NotImplementedError(f"trainrt.tune.schedulers.MedianStoppingRule({name}=...): {why}")


# Ray's schedulers that trainrt does not provide, and what to use instead (one line on import).
NOT_PROVIDED = {
    "ResourceChangingScheduler": "a trial's ranks and cores are fixed when it starts in the Slurm allocation; "
                                 "give each trial its resources with tune.with_resources",
}


def not_provided(name):
    return ImportError(f"trainrt.tune.schedulers.{name} is not provided: {NOT_PROVIDED[name]}")


def __getattr__(name):
    if name in NOT_PROVIDED:
        raise not_provided(name)
    raise AttributeError(f"module 'trainrt.tune.schedulers' has no attribute '{name}'")
