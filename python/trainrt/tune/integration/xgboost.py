"""ray.tune.integration.xgboost after the port: Ray Tune's XGBoost callback on trainrt's
(trainrt.xgboost.RayTrainReportCallback: a report per round, the booster in its checkpoint every
`frequency` rounds and at the end; get_model() reads it back)."""
from ...xgboost import RayTrainReportCallback


class TuneReportCheckpointCallback(RayTrainReportCallback):
    """Ray's TuneReportCheckpointCallback(metrics, filename, frequency, checkpoint_at_end,
    results_postprocessing_fn): each round's metrics, named "<eval>-<metric>" as Ray's, passed
    through `results_postprocessing_fn` when given (xgb.cv's per-fold lists, averaged by it)."""

    def __init__(self, metrics=None, filename=None, frequency=0, checkpoint_at_end=True,
                 results_postprocessing_fn=None):
        super().__init__(metrics=metrics, filename=filename, frequency=frequency, checkpoint_at_end=checkpoint_at_end)
        self._postprocess = results_postprocessing_fn

    def _chosen(self, evals_log):
        chosen = super()._chosen(evals_log)
        return self._postprocess(chosen) if self._postprocess is not None else chosen


TuneReportCallback = TuneReportCheckpointCallback  # Ray's older name
