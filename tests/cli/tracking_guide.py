"""Ray Train's experiment-tracking guide (MLflow, file-based store) after the sed: rank 0 alone
logs to MLflow inside the training function, under the run's experiment and trial names
(get_context().get_experiment_name() / get_trial_name(), stable across requeues). A tiny torch
regression whose losses are also reported, so the test compares MLflow's points with
result.jsonl. The store's URI comes from the config (train.tracking_uri)."""
import mlflow
import torch

import trainrt
from trainrt.torch import prepare_model


def train_func(config):
    context = trainrt.get_context()
    if context.get_world_rank() == 0:
        mlflow.set_tracking_uri(config["tracking_uri"])
        mlflow.set_experiment(context.get_experiment_name())
        mlflow.start_run(run_name=context.get_trial_name())
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(64, 4, generator=generator)
    y = x.sum(dim=1, keepdim=True)
    torch.manual_seed(0)
    model = prepare_model(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(config.get("epochs", 3)):
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        metrics = {"loss": loss.item(), "epoch": epoch}
        if context.get_world_rank() == 0:
            mlflow.log_metrics(metrics, step=epoch + 1)
        trainrt.report(metrics)
    if context.get_world_rank() == 0:
        mlflow.end_run()
