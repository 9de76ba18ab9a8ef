#!/usr/bin/env python3
"""An 8-trial ASHA sweep written as a Ray 2.60 user writes it (Ray Tune's function trainable API:
ray.tune.report / get_checkpoint / Checkpoint, ASHAScheduler from ray.tune.schedulers), for
"trainrt vs Ray Train on this machine" (issue 58; bench/ray/README.md). bench/ray/ray_bench.sh
runs it as it is with Ray's venv and under trainrt after
`sed 's/ray\\.train/trainrt/g; s/ray\\.tune/trainrt.tune/g'` (see bench/ray/README.md for what that sed
leaves unresolved and the extra, mechanical seds the harness measures trainrt with).

Each trial trains Ray's FashionMNIST recipe MLP (784-512-512-10, SGD) on the first
RAY_BENCH_TRAIN_SAMPLES training images for up to RAY_BENCH_MAX_T epochs, reporting test accuracy
on RAY_BENCH_TEST_SAMPLES test images with a checkpoint every epoch and resuming from
get_checkpoint() (Ray's pattern, and what a paused ASHA trial continues from). "epoch" in the row is
the number of epochs done. One trial per CPU (Ray's default: 1 CPU per function trial).
The driver prints one `RAY_TUNE_BENCH {json}` line: Tuner.fit()'s start and end clocks, the trials'
statuses and epochs, the best trial's accuracy.
"""
import gzip
import json
import os
import tempfile
import time

import numpy as np
import torch
from torch import nn

import ray.tune
from ray.tune.schedulers import ASHAScheduler


def read_idx(root, name, offset):
    path = os.path.join(root, name)
    if not os.path.exists(path):
        path += ".gz"
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as file:
        return np.frombuffer(file.read(), np.uint8, offset=offset)


def fashion_mnist(root, kind, limit):
    prefix = "train" if kind == "train" else "t10k"
    images = read_idx(root, f"{prefix}-images-idx3-ubyte", 16).reshape(-1, 28, 28)[:limit]
    labels = read_idx(root, f"{prefix}-labels-idx1-ubyte", 8)[:limit]
    return torch.from_numpy(images.astype(np.float32) / 255.0), torch.from_numpy(labels.astype(np.int64))


def make_model():
    return nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10), nn.ReLU())


def train_fashion(config):
    X, y = fashion_mnist(config["data"], "train", config["train_samples"])
    X_test, y_test = fashion_mnist(config["data"], "test", config["test_samples"])
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"], momentum=config["momentum"])
    loss_fn = nn.CrossEntropyLoss()
    start = 0
    checkpoint = ray.tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            state = torch.load(os.path.join(checkpoint_dir, "state.pt"))
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["epoch"]
    batch_size = config["batch_size"]
    for epoch in range(start, config["epochs"]):
        model.train()
        order = torch.randperm(len(X))
        for i in range(0, len(X), batch_size):
            batch = order[i:i + batch_size]
            loss = loss_fn(model(X[batch]), y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            accuracy = (model(X_test).argmax(1) == y_test).float().mean().item()
        with tempfile.TemporaryDirectory() as checkpoint_dir:
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch + 1},
                       os.path.join(checkpoint_dir, "state.pt"))
            ray.tune.report({"epoch": epoch + 1, "accuracy": accuracy, "loss": loss.item(),
                             "threads": torch.get_num_threads()},
                            checkpoint=ray.tune.Checkpoint.from_directory(checkpoint_dir))


def main():
    t_main = time.time()
    env = os.environ
    max_t = int(env.get("RAY_BENCH_MAX_T", "4"))
    param_space = {
        "lr": ray.tune.loguniform(1e-3, 1e-1),
        "momentum": ray.tune.uniform(0.0, 0.9),
        "batch_size": ray.tune.choice([32, 64, 128]),
        "epochs": max_t,
        "data": env.get("RAY_BENCH_DATA", "/usr/share/datasets/fashion-mnist"),
        "train_samples": int(env.get("RAY_BENCH_TRAIN_SAMPLES", "12000")),
        "test_samples": int(env.get("RAY_BENCH_TEST_SAMPLES", "2000")),
    }
    tuner = ray.tune.Tuner(
        train_fashion,
        param_space=param_space,
        tune_config=ray.tune.TuneConfig(metric="accuracy", mode="max",
                                        num_samples=int(env.get("RAY_BENCH_TRIALS", "8")),
                                        scheduler=ASHAScheduler(max_t=max_t, grace_period=1, reduction_factor=2)),
        run_config=ray.tune.RunConfig(name=env.get("RAY_BENCH_NAME", f"ray_tune_bench_{int(t_main)}"),
                                      storage_path=env.get("RAY_BENCH_STORAGE", "/tmp/ray_bench_runs")),
    )
    t_fit = time.time()
    results = tuner.fit()
    t_end = time.time()
    best = results.get_best_result()
    trials = [{"epochs": int(r.metrics.get("epoch", 0)) if r.metrics else 0,
               "accuracy": r.metrics.get("accuracy") if r.metrics else None,
               "error": repr(r.error) if r.error else None} for r in results]
    print("RAY_TUNE_BENCH " + json.dumps({"t_main": t_main, "t_fit": t_fit, "t_end": t_end, "fit_s": t_end - t_fit,
                                          "trials": trials, "num_errors": results.num_errors,
                                          "epochs_total": sum(t["epochs"] for t in trials),
                                          "best_accuracy": best.metrics.get("accuracy")}), flush=True)


if __name__ == "__main__":
    main()
