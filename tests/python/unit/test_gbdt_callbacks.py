"""The gradient-boosting callbacks' arguments: trainrt.xgboost keeps the booster in the
checkpoint's tensors, so a `filename` other than Ray's default would be accepted and ignored: it is
refused with one line naming what to do (RayTrainReportCallback, get_model, Tune's callback);
trainrt.lightgbm writes the file it is given, and get_network_params() outside a run says where
it belongs."""
import pytest

from trainrt import lightgbm as trainrt_lightgbm
from trainrt import xgboost as trainrt_xgboost
from trainrt.tune.integration.xgboost import TuneReportCheckpointCallback


def test_xgboost_takes_rays_file_name_and_refuses_another():
    trainrt_xgboost.RayTrainReportCallback()
    trainrt_xgboost.RayTrainReportCallback(filename="model.ubj")
    for make in (lambda: trainrt_xgboost.RayTrainReportCallback(filename="booster.json"),
                 lambda: TuneReportCheckpointCallback(filename="booster.json"),
                 lambda: trainrt_xgboost.RayTrainReportCallback.get_model(None, filename="booster.json")):
        with pytest.raises(ValueError, match=r"filename='booster.json'.*get_model\(checkpoint\)"):
            make()


def test_lightgbm_names_rays_file_and_needs_a_run_for_its_network():
    assert trainrt_lightgbm.RayTrainReportCallback.CHECKPOINT_NAME == "model.txt"
    assert trainrt_lightgbm.RayTrainReportCallback(filename="booster.txt")._filename == "booster.txt"
    with pytest.raises(ValueError, match="inside a training function that trainrt runs"):
        trainrt_lightgbm.get_network_params()
