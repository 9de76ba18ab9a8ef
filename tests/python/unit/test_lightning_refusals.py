"""trainrt.lightning refuses what it would otherwise ignore: arguments that configure a process
group trainrt has already set up, and Ray Train v2's callback arguments."""
import pytest

lightning = pytest.importorskip("lightning", reason="the project stack installs lightning (make deps)")
import trainrt.lightning  # noqa: E402


@pytest.mark.parametrize("strategy", [trainrt.lightning.RayDDPStrategy, trainrt.lightning.RayFSDPStrategy])
@pytest.mark.parametrize("argument", ["process_group_backend", "timeout", "start_method"])
def test_process_group_arguments_are_refused(strategy, argument):
    with pytest.raises(ValueError, match=f"{argument}= is not used"):
        strategy(**{argument: None})


def test_strategies_are_lightnings_own_underneath():
    assert isinstance(trainrt.lightning.RayDDPStrategy(), lightning.pytorch.strategies.DDPStrategy)


@pytest.mark.parametrize("argument", [{"checkpoint_upload_mode": "sync"}, {"validation": True}])
def test_ray_train_v2_callback_arguments_are_refused(argument):
    with pytest.raises(ValueError, match="not supported"):
        trainrt.lightning.RayTrainReportCallback(**argument)
