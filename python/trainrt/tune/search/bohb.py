"""Ray Tune's `ray.tune.search.bohb.TuneBOHB` on trainrt's sweeps (`[tune] search = bohb`)."""

__all__ = ["TuneBOHB"]

# hpbandster's BOHB arguments (Ray's bohb_config), each a `[tune] bohb.*` key
BOHB_CONFIG = ("min_points_in_model", "top_n_percent", "num_samples", "random_fraction", "bandwidth_factor",
               "min_bandwidth")


class TuneBOHB:
    """Ray Tune's TuneBOHB: BOHB's kernel density model (hpbandster's config generator) draws each
    trial's values when it starts, told every trial's result at every HyperBand milestone reached
    so far (`trainrt tune`'s search = bohb, src/tune/python_search.hpp); with HyperBandForBOHB (or
    HyperBandScheduler) as the scheduler, which it needs. `bohb_config` takes BOHB's arguments
    (min_points_in_model, top_n_percent, num_samples, random_fraction, bandwidth_factor,
    min_bandwidth); `max_concurrent` limits the trials at once, as a ConcurrencyLimiter does. Its
    domains are the Tuner's param_space (choice, uniform, loguniform, randint). Seeded by run.seed.
    Ray's arguments that trainrt would not honour are refused with one line."""

    def __init__(self, space=None, bohb_config=None, metric=None, mode=None, points_to_evaluate=None, seed=None,
                 max_concurrent=0):
        refused = [("space=", space is not None, "give the domains as the Tuner's param_space (tune.uniform, ...)"),
                   ("points_to_evaluate=", points_to_evaluate is not None, "leave it out"),
                   ("seed=", seed is not None, "BOHB is seeded by run.seed; set RunConfig / [run] seed instead")]
        for given, wrong, instead in refused:
            if wrong:
                raise NotImplementedError(f"trainrt.tune.search.bohb.TuneBOHB({given}...): {instead}")
        unknown = sorted(set(bohb_config or {}) - set(BOHB_CONFIG))
        if unknown:
            raise ValueError(f"trainrt.tune.search.bohb.TuneBOHB(bohb_config=...): {unknown[0]!r} is not one of "
                             f"BOHB's arguments ({', '.join(BOHB_CONFIG)})")
        self.bohb_config = dict(bohb_config or {})
        self.metric, self.mode, self.max_concurrent = metric, mode, max_concurrent

    def objectives(self):
        return None  # one metric

    def sweep_keys(self):
        """The `[tune]` keys of this searcher (tune/sweep_config.hpp's bohb section)."""
        config = dict(self.bohb_config)
        if config.get("min_points_in_model") is None:
            config.pop("min_points_in_model", None)  # BOHB's default: the declared 0
        return {"search": "bohb", **{f"bohb.{key}": value for key, value in config.items()}}
