"""trainrt.tune.Tuner's param_space: train_loop_config is tuned; any other Trainer argument Ray
would tune is refused with one message naming it, before anything runs (never dropped silently)."""
import pytest

from trainrt import ScalingConfig, tune


def train_func(config):
    pass


def test_train_loop_config_alone_is_accepted():
    tuner = tune.Tuner(train_func, param_space={"train_loop_config": {"lr": tune.uniform(0.1, 1.0)}})
    tuner._check_param_space()
    assert set(tuner._space()[0]) == {"lr"}


def test_a_function_trainables_config_is_accepted():
    tune.Tuner(train_func, param_space={"lr": tune.choice([1, 2])})._check_param_space()


def test_other_trainer_arguments_are_refused_by_name():
    tuner = tune.Tuner(train_func, param_space={"train_loop_config": {"lr": 0.1},
                                                "scaling_config": ScalingConfig(num_workers=tune.grid_search([1, 2]))})
    with pytest.raises(ValueError, match=r"param_space\['scaling_config'\] cannot be tuned yet"):
        tuner._check_param_space()
