"""ray.air after the port: Ray AIR's integrations that Ray Train and Tune scripts import
(trainrt.air.integrations.mlflow)."""
