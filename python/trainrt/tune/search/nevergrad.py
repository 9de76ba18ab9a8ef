"""Ray Tune's `ray.tune.search.nevergrad.NevergradSearch` on trainrt's sweeps (`[tune] search = nevergrad`)."""

__all__ = ["NevergradSearch"]


class NevergradSearch:
    """Ray Tune's NevergradSearch: a Nevergrad optimizer draws each trial's values when it starts,
    told every trial finished before it (`trainrt tune`'s search = nevergrad,
    src/tune/python_search.hpp). `optimizer` is one of Nevergrad's registered optimizers (a class or
    configured optimizer such as `ng.optimizers.OnePlusOne`, or its name); its domains are the
    Tuner's param_space (choice, uniform, loguniform, randint). Seeded by run.seed. Ray's arguments
    that trainrt would not honour are refused with one line."""

    def __init__(self, optimizer=None, optimizer_kwargs=None, space=None, metric=None, mode=None,
                 points_to_evaluate=None):
        refused = [("optimizer_kwargs=", bool(optimizer_kwargs), "the sweep builds the optimizer by its registered "
                                                                  "name alone; leave it out"),
                   ("space=", space is not None, "give the domains as the Tuner's param_space (tune.uniform, ...)"),
                   ("points_to_evaluate=", points_to_evaluate is not None, "leave it out")]
        for given, wrong, instead in refused:
            if wrong:
                raise NotImplementedError(f"trainrt.tune.search.nevergrad.NevergradSearch({given}...): {instead}")
        self.optimizer = _registered_name(optimizer)
        self.metric, self.mode = metric, mode

    def objectives(self):
        return None  # one metric

    def sweep_keys(self):
        """The `[tune]` keys of this searcher (tune/sweep_config.hpp's nevergrad section)."""
        return {"search": "nevergrad", "nevergrad.optimizer": self.optimizer}


def _registered_name(optimizer):
    """The name nevergrad.optimizers.registry gives `optimizer`; ValueError (as Ray's) without one,
    NotImplementedError for an optimizer instance or one outside the registry."""
    if optimizer is None:
        raise ValueError("trainrt.tune.search.nevergrad.NevergradSearch: give optimizer= (e.g. "
                         "ng.optimizers.OnePlusOne), as Ray's needs")
    if isinstance(optimizer, str):
        return optimizer
    import nevergrad as ng
    names = [name for name, registered in ng.optimizers.registry.items() if registered is optimizer]
    if not names:
        raise NotImplementedError(f"trainrt.tune.search.nevergrad.NevergradSearch(optimizer={optimizer!r}): trainrt "
                                  f"builds the optimizer in the sweep from its name in nevergrad.optimizers.registry; "
                                  f"give a registered one (e.g. ng.optimizers.OnePlusOne), not an instance")
    return names[0]
