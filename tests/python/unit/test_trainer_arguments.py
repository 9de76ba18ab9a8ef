"""A Trainer's Ray arguments trainrt does not take are refused with one line saying what to do
instead, never dropped; RunConfig(stop=...) as [stop] criteria text."""
import pytest

import trainrt
from trainrt._trainer import stop_criteria


def train(config):
    pass


@pytest.mark.parametrize("argument, says", [("torch_config", "scaling.backend"), ("backend_config", "scaling.backend"),
                                            ("metadata", "Checkpoint attributes"),
                                            ("resume_from_checkpoint", "--checkpoint.resume_from")])
def test_refused_trainer_arguments_say_what_to_do(argument, says):
    with pytest.raises(NotImplementedError, match=argument) as refused:
        trainrt.DataParallelTrainer(train, **{argument: object()})
    assert says in str(refused.value) and "\n" not in str(refused.value)


def test_an_unknown_argument_is_a_type_error():
    with pytest.raises(TypeError):
        trainrt.DataParallelTrainer(train, scaling_configs=trainrt.ScalingConfig())


def test_stop_dict_as_criteria():
    assert stop_criteria({"acc": 0.9, "training_iteration": 5}) == "acc>=0.9,training_iteration>=5"
    with pytest.raises(NotImplementedError, match="RunConfig\\(stop=function\\)"):
        stop_criteria(lambda trial_id, result: False)
    with pytest.raises(ValueError, match="maps a reported metric's name to a number"):
        stop_criteria({"acc": "high"})
    # Ray's PBT example: a flag the function reports, reached as Ray compares result >= True
    assert stop_criteria({"done": True, "training_iteration": 10}) == "done>=1,training_iteration>=10"


def test_a_trainable_s_checkpoint_cadence_is_refused_for_a_trainer():
    from trainrt import tune
    from trainrt._trainer import _object_settings
    run = trainrt.RunConfig(checkpoint_config=tune.CheckpointConfig(checkpoint_frequency=5))
    with pytest.raises(ValueError, match="tune.Trainable") as refused:
        _object_settings(trainrt.ScalingConfig(), run)
    assert "\n" not in str(refused.value)
