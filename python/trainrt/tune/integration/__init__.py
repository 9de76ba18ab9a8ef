"""ray.tune.integration after the port: Ray Tune's framework callbacks (trainrt.tune.integration.xgboost,
trainrt.tune.integration.lightgbm)."""
