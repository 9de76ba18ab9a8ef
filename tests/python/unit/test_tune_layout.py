"""trainrt.tune is laid out as ray.tune is, so that a Ray Tune script runs after the one sed
(`s/ray\\.tune/trainrt.tune/g`): its modules, its function-trainable names, and the searchers it
may be given, each turned into the sweep's own settings (or refused by name, never ignored)."""
import importlib

import pytest

import trainrt
from trainrt import tune


@pytest.mark.parametrize("module, names", [
    ("trainrt.tune", ["Tuner", "TuneConfig", "ResultGrid", "RunConfig", "CheckpointConfig", "FailureConfig",
                      "report", "get_checkpoint", "get_context", "Checkpoint", "choice", "grid_search"]),
    ("trainrt.tune.schedulers", ["ASHAScheduler", "AsyncHyperBandScheduler", "FIFOScheduler",
                                 "PopulationBasedTraining"]),
    ("trainrt.tune.search", ["BasicVariantGenerator", "ConcurrencyLimiter"]),
    ("trainrt.tune.search.optuna", ["OptunaSearch"]),
])
def test_ray_tune_modules_and_names_exist(module, names):
    imported = importlib.import_module(module)
    for name in names:
        assert hasattr(imported, name), f"{module}.{name}"


def test_a_trial_reports_through_trainrts_own_session():
    assert tune.report is trainrt.report
    assert tune.get_checkpoint is trainrt.get_checkpoint
    assert tune.Checkpoint is trainrt.Checkpoint


def _sweep_lines(tune_config):
    return tune.Tuner(lambda config: None, tune_config=tune_config)._sweep_text(1).splitlines()


def test_concurrency_limiter_over_optuna_bounds_trials_at_once():
    from trainrt.tune.search import ConcurrencyLimiter
    from trainrt.tune.search.optuna import OptunaSearch
    lines = _sweep_lines(tune.TuneConfig(metric="loss", mode="min", max_concurrent_trials=4,
                                         search_alg=ConcurrencyLimiter(OptunaSearch(n_startup_trials=3), 2)))
    assert "search = optuna" in lines and "optuna.n_startup_trials = 3" in lines
    assert "max_concurrent_trials = 2" in lines


def test_basic_variant_generator_is_random_search():
    from trainrt.tune.search import BasicVariantGenerator
    lines = _sweep_lines(tune.TuneConfig(metric="loss", search_alg=BasicVariantGenerator(max_concurrent=3)))
    assert "search = random" in lines and "max_concurrent_trials = 3" in lines


def test_an_unsupported_searcher_is_refused_by_name():
    class HyperOptSearch:
        pass
    with pytest.raises(NotImplementedError, match="search_alg HyperOptSearch is not supported"):
        _sweep_lines(tune.TuneConfig(metric="loss", search_alg=HyperOptSearch()))


def test_basic_variant_generators_seed_arguments_are_refused():
    from trainrt.tune.search import BasicVariantGenerator
    with pytest.raises(NotImplementedError, match="random_state= is not supported"):
        BasicVariantGenerator(random_state=3)


def test_scheduler_settings_left_out_take_the_sweeps_declared_defaults():
    from trainrt.tune.schedulers import ASHAScheduler, PopulationBasedTraining
    lines = _sweep_lines(tune.TuneConfig(metric="loss", scheduler=ASHAScheduler(grace_period=2)))
    assert "scheduler = asha" in lines and "asha.grace_period = 2" in lines
    assert "asha.time_attr = training_iteration" in lines  # Ray's ASHAScheduler counts reports
    assert not [line for line in lines if line.startswith(("asha.max_t", "asha.reduction_factor", "mode"))]
    lines = _sweep_lines(tune.TuneConfig(metric="loss", mode="min", scheduler=PopulationBasedTraining()))
    assert "scheduler = pbt" in lines and "mode = min" in lines
    assert not [line for line in lines if line.startswith("pbt.")]
