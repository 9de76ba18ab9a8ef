"""A script as Ray Train's "Data Loading and Preprocessing" guide has its users write it: Ray
Datasets made in the driver (ray.data.from_items, a map_batches preprocessing step, a global
random_shuffle, a validation CSV read with ray.data.read_csv), passed to a TorchTrainer as
datasets= with DataConfig(datasets_to_split=["train"]), and read in the function with
ray.train.get_dataset_shard(name).iter_torch_batches(...), one report per epoch with a directory
checkpoint, resuming from ray.train.get_checkpoint(). The determinism section's preserve_order is
set, as a user comparing runs would.

The training is order-independent on purpose: each epoch sums the gradient over every batch of
every rank (one optimizer step per epoch), so Ray's and trainrt's runs report the same numbers
although Ray hands rows to its workers dynamically and shuffles each epoch at random. The one
order-dependent number, the first batch's sum of y on rank 0, shows that the shuffle changes
from epoch to epoch (and, under trainrt, that a resumed run reads the same order).
tests/python/test_python_raydata.sh runs it after the port; RAYDATA_* variables place and pace the run.
"""
import json
import os
import tempfile
import time

import torch
import torch.distributed as dist

import ray
import ray.train
from ray.train import Checkpoint, DataConfig, RunConfig, ScalingConfig
from ray.train.torch import TorchTrainer

STORAGE = os.environ.get("RAYDATA_STORAGE", os.path.abspath("runs"))
NAME = os.environ.get("RAYDATA_NAME", "raydata_guide")
EPOCHS = int(os.environ.get("RAYDATA_EPOCHS", "4"))
PAUSE_S = float(os.environ.get("RAYDATA_PAUSE_S", "0"))  # the test's pace: time to signal a rank mid-run
ROWS = 200


def validation_csv(path):
    """The validation rows as the user's CSV file: y = 3x + 0.5."""
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        partial = f"{path}.{os.getpid()}"
        with open(partial, "w") as file:
            file.write("x,y\n" + "".join(f"{i / 64},{3 * i / 64 + 0.5}\n" for i in range(64)))
        os.replace(partial, path)
    return path


def increment(batch):
    batch["y"] = batch["y"] + 1
    return batch


def train_func(config):
    torch.manual_seed(0)
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    start = 0
    checkpoint = ray.train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as directory:
            state = torch.load(os.path.join(directory, "model.pt"))
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["epoch"] + 1
    train_shard = ray.train.get_dataset_shard("train")
    validation_shard = ray.train.get_dataset_shard("validation")
    for epoch in range(start, config["epochs"]):
        optimizer.zero_grad()
        totals = torch.zeros(3, dtype=torch.float64)  # rows, sum of y, sum of squared errors
        first_batch_y = None
        for batch in train_shard.iter_torch_batches(batch_size=16, dtypes=torch.float32):
            x, y = batch["x"], batch["y"]
            loss = ((model(x) - y) ** 2).sum() / ROWS
            loss.backward()
            totals += torch.tensor([len(x), y.sum().item(), loss.item() * ROWS], dtype=torch.float64)
            first_batch_y = y.sum().item() if first_batch_y is None else first_batch_y
        for parameter in model.parameters():
            dist.all_reduce(parameter.grad)
        dist.all_reduce(totals)
        optimizer.step()
        validation = torch.zeros(2, dtype=torch.float64)
        with torch.no_grad():
            for batch in validation_shard.iter_torch_batches(batch_size=32, dtypes=torch.float32):
                x, y = batch["x"].reshape(-1, 1), batch["y"].reshape(-1, 1)  # the CSV's columns are scalars
                validation += torch.tensor([len(x), ((model(x) - y) ** 2).sum().item()], dtype=torch.float64)
        metrics = {"epoch": epoch, "rows": totals[0].item(), "y_sum": totals[1].item(),
                   "train_mse": totals[2].item() / ROWS, "validation_rows": validation[0].item(),
                   "validation_mse": validation[1].item() / validation[0].item(),
                   "weight": model.weight.item(), "bias": model.bias.item(), "first_batch_y": first_batch_y}
        with tempfile.TemporaryDirectory() as directory:
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
                       os.path.join(directory, "model.pt"))
            ray.train.report(metrics, checkpoint=Checkpoint.from_directory(directory))
        time.sleep(PAUSE_S)


def main():
    # Ray's two training workers take a CPU each; Ray Data's tasks need CPUs of their own, which a
    # 2-CPU machine does not have left (Ray waits for them forever): the guide's run is given 4.
    ray.init(num_cpus=4)
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    train_dataset = ray.data.from_items([{"x": [i / ROWS], "y": [2 * i / ROWS]} for i in range(ROWS)])
    train_dataset = train_dataset.map_batches(increment).random_shuffle()
    validation_dataset = ray.data.read_csv(validation_csv(os.path.join(STORAGE, "validation.csv")))
    trainer = TorchTrainer(
        train_func,
        train_loop_config={"epochs": EPOCHS},
        datasets={"train": train_dataset, "validation": validation_dataset},
        dataset_config=DataConfig(datasets_to_split=["train"]),
        scaling_config=ScalingConfig(num_workers=2),
        run_config=RunConfig(name=NAME, storage_path=STORAGE),
    )
    result = trainer.fit()
    rows = result.metrics_dataframe.to_dict("records")
    keys = ("epoch", "rows", "y_sum", "train_mse", "validation_rows", "validation_mse", "weight", "bias",
            "first_batch_y")
    summary = {key: [row[key] for row in rows] for key in keys}
    summary["first_batch_y_varies"] = len(set(summary["first_batch_y"])) > 1
    print("RAYDATA_GUIDE " + json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
