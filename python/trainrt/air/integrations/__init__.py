"""ray.air.integrations after the port: trackers' integrations (trainrt.air.integrations.mlflow).
Each module imports its tracker's library when it is imported, as Ray's do: a job that does not
import one never loads the tracker."""
