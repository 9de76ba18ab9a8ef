"""Sends a trainrt run to an experiment tracker. trainrt's C++ (cli/tracking_export.cpp, for
`trainrt results --export` and [tracking]) decides what is sent and remembers what was: it calls
export() with one JSON document (kind, where, experiment, run_name, run_id, status, tags, params,
points: [{step, timestamp, metrics}]) and this module only speaks to the tracker's library:
MLflow's client, or tensorboardX's event writer for TensorBoard."""
import json
import logging
import os

from trainrt._entry import LoadError


def export(document_text):
    """JSON text {"run_id": ...}: MLflow's run id, or the TensorBoard directory written."""
    document = json.loads(document_text)
    send = {"mlflow": _to_mlflow, "tensorboard": _to_tensorboard}[document["kind"]]
    return json.dumps({"run_id": send(document)})


def _import(module, package):
    try:
        return __import__(module, fromlist=["_"])
    except ImportError as error:
        raise LoadError(f"tracking: {package} is not importable in trainrt's Python ({error}); install {package} "
                        f"(pip install {package}) where trainrt's Python finds it") from None


# MLflow's limits per log_batch call: 1000 metrics, 100 parameters.
_METRICS_PER_BATCH = 1000
_PARAMS_PER_BATCH = 100


def _mlflow_run(client, document):
    """The run to continue: the id the run directory remembers, else the experiment's run tagged
    with this run directory (an export killed before the run directory recorded the id), else a
    new one."""
    if document["run_id"]:
        return document["run_id"], False
    experiment = client.get_experiment_by_name(document["experiment"])
    experiment_id = experiment.experiment_id if experiment else client.create_experiment(document["experiment"])
    run_dir = document["tags"]["trainrt.run_dir"].replace("'", "\\'")
    found = client.search_runs([experiment_id], filter_string=f"tags.`trainrt.run_dir` = '{run_dir}'", max_results=1)
    if found:
        return found[0].info.run_id, False
    return client.create_run(experiment_id, run_name=document["run_name"], tags=document["tags"]).info.run_id, True


def _last_step(client, run_id, points):
    """The highest step the run has of the points' first metric: points at or before it were sent
    by an export that ended before the run directory recorded it."""
    if not points or not points[0]["metrics"]:
        return 0
    key = next(iter(points[0]["metrics"]))
    return max((m.step for m in client.get_metric_history(run_id, key)), default=0)


def _to_mlflow(document):
    # MLflow's and its database's notes (creating tables, migrations) are not trainrt's output.
    for name in ("mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)
    tracking = _import("mlflow.tracking", "mlflow")
    entities = _import("mlflow.entities", "mlflow")
    client = tracking.MlflowClient(tracking_uri=document["where"])
    run_id, new = _mlflow_run(client, document)
    client.update_run(run_id, status="RUNNING")
    if new:
        params = [entities.Param(key, str(value)) for key, value in document["params"].items()]
        for start in range(0, len(params), _PARAMS_PER_BATCH):
            client.log_batch(run_id, params=params[start:start + _PARAMS_PER_BATCH])
    after = _last_step(client, run_id, document["points"])
    metrics = [entities.Metric(key, value, int(point["timestamp"] * 1000), point["step"])
               for point in document["points"] if point["step"] > after
               for key, value in point["metrics"].items()]
    for start in range(0, len(metrics), _METRICS_PER_BATCH):
        client.log_batch(run_id, metrics=metrics[start:start + _METRICS_PER_BATCH])
    for key, value in document["tags"].items():
        client.set_tag(run_id, key, value)
    if document["status"] == "RUNNING":
        return run_id
    client.set_terminated(run_id, status=document["status"])
    return run_id


def _to_tensorboard(document):
    writer_module = _import("tensorboardX", "tensorboardX")
    logdir = document["where"]
    os.makedirs(logdir, exist_ok=True)
    writer = writer_module.SummaryWriter(logdir=logdir)
    try:
        if document["params"]:
            rows = "\n".join(f"| {key} | {value} |" for key, value in sorted(document["params"].items()))
            writer.add_text("trainrt/config", "| key | value |\n|---|---|\n" + rows, global_step=0)
        for point in document["points"]:
            for key, value in point["metrics"].items():
                writer.add_scalar(key, value, global_step=point["step"], walltime=point["timestamp"])
    finally:
        writer.close()
    return logdir
