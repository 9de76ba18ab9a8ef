"""LightGBM's callback arguments: it writes the file it is given (Ray's model.txt by default),
and get_network_params() outside a run says where it belongs."""
import pytest

from trainrt import lightgbm as trainrt_lightgbm


def test_lightgbm_names_rays_file_and_needs_a_run_for_its_network():
    assert trainrt_lightgbm.RayTrainReportCallback.CHECKPOINT_NAME == "model.txt"
    assert trainrt_lightgbm.RayTrainReportCallback(filename="booster.txt")._filename == "booster.txt"
    with pytest.raises(ValueError, match="inside a training function that trainrt runs"):
        trainrt_lightgbm.get_network_params()
