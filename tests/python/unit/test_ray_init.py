"""What `ray.init()` and `from ray import train` become after the port (docs/guides/coming-from-ray.md):
trainrt.init() keeps what means something here (num_cpus: the CPUs a Tuner's trials share) and
refuses the rest with one line; trainrt.train is trainrt itself, ray.train's names."""
import pytest

import trainrt
from trainrt import _init


@pytest.fixture(autouse=True)
def fresh():
    trainrt.shutdown()
    yield
    trainrt.shutdown()


def test_num_cpus_is_what_a_tuner_shares():
    trainrt.init(num_cpus=3)
    assert trainrt.is_initialized() and _init.cpus() == 3
    trainrt.shutdown()
    assert not trainrt.is_initialized() and _init.cpus() >= 1


def test_the_example_calls_are_accepted():
    trainrt.init(configure_logging=False)
    trainrt.init(ignore_reinit_error=True)
    trainrt.init("local", ignore_reinit_error=True)


@pytest.mark.parametrize("args, kwargs, says", [(("ray://head:10001",), {}, "no Ray cluster to join"),
                                                ((), {"configure_logging": True}, "never configures"),
                                                ((), {"object_store_memory": 10**9}, "object_store_memory"),
                                                ((), {"num_cpus": 0}, "positive integer")])
def test_what_has_no_meaning_here_is_refused(args, kwargs, says):
    with pytest.raises(ValueError) as refused:
        trainrt.init(*args, **kwargs)
    assert says in str(refused.value) and "\n" not in str(refused.value)
    assert not trainrt.is_initialized()


def test_a_second_init_is_refused_unless_told():
    trainrt.init()
    with pytest.raises(RuntimeError, match="ignore_reinit_error"):
        trainrt.init()


def test_train_is_trainrt():
    from trainrt import train
    assert train is trainrt and train.report is trainrt.report and train.Checkpoint is trainrt.Checkpoint


@pytest.mark.parametrize("resources, says", [({"cpu": 0.5}, "whole CPUs"), ({"gpu": 2}, "0 or 1"),
                                             ({"memory": 10**9}, "memory"), ([1], "is a dict")])
def test_with_resources_refusals(resources, says):
    with pytest.raises((ValueError, TypeError)) as refused:
        trainrt.tune.with_resources(lambda config: None, resources)
    assert says in str(refused.value) and "\n" not in str(refused.value)
