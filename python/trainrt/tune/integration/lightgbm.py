"""ray.tune.integration.lightgbm after the port: Ray Tune's LightGBM callback on trainrt's
(trainrt.lightgbm.RayTrainReportCallback: a report per iteration, the booster in its checkpoint
every `frequency` iterations and at the end; get_model() reads it back). Loading this module
imports LightGBM, as Ray's does."""
from ...lightgbm import RayTrainReportCallback


class TuneReportCheckpointCallback(RayTrainReportCallback):
    """Ray's TuneReportCheckpointCallback(metrics, filename, frequency, checkpoint_at_end,
    results_postprocessing_fn), the same arguments and defaults as Ray Train's LightGBM callback."""


TuneReportCallback = TuneReportCheckpointCallback  # Ray's older name
