"""Ray Tune's `ray.tune.search.hyperopt.HyperOptSearch` on trainrt's sweeps (`[tune] search = hyperopt`)."""
import os
import pickle

__all__ = ["HyperOptSearch"]

SPACE_FILE = "hyperopt_space.pickle"  # beside the sweep's sweep.ini (SWEEP_DIR/tuner/): tune.hyperopt.space


class HyperOptSearch:
    """Ray Tune's HyperOptSearch: HyperOpt's TPE draws each trial's values when it starts, from the
    trials finished before it (`trainrt tune`'s search = hyperopt, src/tune/python_search.hpp), the
    first `n_initial_points` at random; `gamma` TPE's share of good trials. Its space is the Tuner's
    param_space (Tune's domains, converted as Ray converts them) or `space=`, a dict of HyperOpt
    expressions (hp.choice, hp.uniform, ...; hp.choice between dicts gives a trial a nested
    config, as Ray's), with constants beside them. Seeded by run.seed. Ray's arguments that trainrt
    would not honour are refused with one line."""

    def __init__(self, space=None, metric=None, mode=None, points_to_evaluate=None, n_initial_points=20,
                 random_state_seed=None, gamma=0.25):
        refused = [("points_to_evaluate=", points_to_evaluate is not None, "the first trials are drawn at random; "
                                                                            "leave it out"),
                   ("random_state_seed=", random_state_seed is not None, "HyperOpt is seeded by run.seed; set "
                                                                          "RunConfig / [run] seed instead")]
        for given, wrong, instead in refused:
            if wrong:
                raise NotImplementedError(f"trainrt.tune.search.hyperopt.HyperOptSearch({given}...): {instead}")
        from .. import _Domain
        if space is not None and (not isinstance(space, dict) or not space):
            raise TypeError(f"trainrt.tune.search.hyperopt.HyperOptSearch(space=...): a dict of HyperOpt expressions "
                            f"(got {type(space).__name__})")
        if space is not None and any(isinstance(value, _Domain) for value in space.values()):
            raise NotImplementedError("trainrt.tune.search.hyperopt.HyperOptSearch(space=...): Tune's domains "
                                      "(tune.uniform, ...) go in the Tuner's param_space; space= takes HyperOpt's "
                                      "(hp.uniform, hp.choice, ...)")
        self.space, self.metric, self.mode = space, metric, mode
        self.n_initial_points, self.gamma = n_initial_points, gamma

    def objectives(self):
        return None  # one metric

    def sweep_keys(self):
        """The `[tune]` keys of this searcher (tune/sweep_config.hpp's hyperopt section)."""
        return {"search": "hyperopt", "hyperopt.n_initial_points": self.n_initial_points,
                "hyperopt.gamma": self.gamma, "hyperopt.space": SPACE_FILE if self.space is not None else None}

    def searched(self):
        """With space=: ({top-level key with HyperOpt expressions: sample.FromSearch}, {constant key:
        value}); ({}, {}) without."""
        if self.space is None:
            return {}, {}
        from ... import _hyperopt_search
        from ..sample import FromSearch
        drawn = [key for key, value in self.space.items() if _hyperopt_search.labels_under(value)]
        return {key: FromSearch(key, self.space) for key in drawn}, \
            {key: value for key, value in self.space.items() if key not in drawn}

    def write_space(self, files):
        """Pickles space= beside the sweep's sweep.ini, where `trainrt tune` asks HyperOpt over it."""
        if self.space is not None:
            from .. import _pickled
            _pickled(os.path.join(files, SPACE_FILE), self.space)


def stored_searched(files):
    """The FromSearch values of a stored sweep whose HyperOptSearch had space= (its pickle in
    `files`, SWEEP_DIR/tuner), for a restored Tuner's ResultGrid; {} without one."""
    path = os.path.join(files, SPACE_FILE)
    if not os.path.exists(path):
        return {}
    with open(path, "rb") as file:
        return HyperOptSearch(space=pickle.load(file)).searched()[0]
