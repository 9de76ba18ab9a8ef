#!/usr/bin/env python3
"""Ray Train, written as a Ray 2.60 user writes it, for "trainrt vs Ray Train on this machine"
(issue 58; bench/ray/README.md). bench/ray/ray_bench.sh runs it as it is with Ray's venv, and
under trainrt after `sed 's/ray\\.train/trainrt/g; s/ray\\.tune/trainrt.tune/g'` (made at run time).

Only `ray.train` names are used (no `import ray`, no `ray.init()`: TorchTrainer.fit() starts a local
Ray itself), so the one sed is all trainrt needs. The driver code is under `__main__` as usual.

RAY_BENCH_MODE picks the measurement; every value comes from the environment into
train_loop_config (what a user's script would take from argparse):
  launch      a tiny DDP model, 3 reports: launch (RAY_BENCH_T0, the harness's clock just before
              it started this process) -> the first report() returned on rank 0
  epoch       Ray's FashionMNIST recipe (MLP 784-512-512-10, batch 64 global, SGD lr 1e-3, DataLoader
              + prepare_data_loader + prepare_model), RAY_BENCH_EPOCHS epochs; rank 0 times each
              epoch (training loop + test pass) and reports it
  checkpoint  RAY_BENCH_REPORTS reports, each with a Checkpoint.from_directory of a RAY_BENCH_CKPT_MB
              MiB torch.save'd tensor from rank 0 (rank 1 reports None, as Ray's docs show);
              rank 0 times the report() call alone
  recovery    RunConfig(failure_config=FailureConfig(max_failures=1)); a step of the recipe's MLP and
              a report with a small checkpoint per step; at step RAY_BENCH_KILL_AT of an attempt that
              did not restore a checkpoint, rank 1 SIGKILLs itself right after its report returned.
              The next attempt restores get_checkpoint() and goes on; rank 0 logs its first report.
Rank 0 (and rank 1 for its kill) append JSON lines to RAY_BENCH_OUT/events.jsonl; the driver
prints one `RAY_BENCH {json}` line after fit() (its start and end clocks).
"""
import gzip
import json
import os
import signal
import tempfile
import time

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import ray.train
import ray.train.torch
from ray.train import Checkpoint, CheckpointConfig, FailureConfig, RunConfig, ScalingConfig
from ray.train.torch import TorchTrainer


def log_event(config, **fields):
    """One JSON line in RAY_BENCH_OUT/events.jsonl (O_APPEND: whole lines from several processes)."""
    fields.setdefault("t", time.time())
    fields["pid"] = os.getpid()
    with open(os.path.join(config["out"], "events.jsonl"), "a") as file:
        file.write(json.dumps(fields) + "\n")


def read_idx(root, name, offset):
    path = os.path.join(root, name)
    if not os.path.exists(path):
        path += ".gz"
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as file:
        return np.frombuffer(file.read(), np.uint8, offset=offset)


def fashion_mnist(root, kind, limit=0):
    prefix = "train" if kind == "train" else "t10k"
    images = read_idx(root, f"{prefix}-images-idx3-ubyte", 16).reshape(-1, 28, 28)
    labels = read_idx(root, f"{prefix}-labels-idx1-ubyte", 8).astype(np.int64)
    if limit:
        images, labels = images[:limit], labels[:limit]
    return TensorDataset(torch.from_numpy(images.astype(np.float32) / 255.0), torch.from_numpy(labels))


class NeuralNetwork(nn.Module):
    """Ray's FashionMNIST recipe model."""

    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 512), nn.ReLU(),
            nn.Linear(512, 512), nn.ReLU(),
            nn.Linear(512, 10), nn.ReLU(),
        )

    def forward(self, x):
        return self.linear_relu_stack(self.flatten(x))


# --- the training functions (one per measurement) ---

def train_launch(config):
    rank = ray.train.get_context().get_world_rank()
    if rank == 0:
        log_event(config, event="func_start", threads=torch.get_num_threads())
    model = ray.train.torch.prepare_model(nn.Linear(16, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(256, 16)
    y = x.sum(dim=1, keepdim=True)
    for step in range(3):
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ray.train.report({"step": step, "loss": loss.item()})
        if rank == 0:
            log_event(config, event="report", step=step)


def train_epoch(config):
    rank = ray.train.get_context().get_world_rank()
    world = ray.train.get_context().get_world_size()
    batch_size = config["global_batch_size"] // world
    train_loader = DataLoader(fashion_mnist(config["data"], "train", config["train_samples"]),
                              batch_size=batch_size, shuffle=True)
    test_loader = DataLoader(fashion_mnist(config["data"], "test", config["test_samples"]), batch_size=batch_size)
    train_loader = ray.train.torch.prepare_data_loader(train_loader)
    test_loader = ray.train.torch.prepare_data_loader(test_loader)
    model = ray.train.torch.prepare_model(NeuralNetwork())
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
    if rank == 0:
        log_event(config, event="func_start", threads=torch.get_num_threads(), batches=len(train_loader))
    for epoch in range(config["epochs"]):
        t_epoch = time.perf_counter()
        if world > 1:
            train_loader.sampler.set_epoch(epoch)
        model.train()
        for X, y in train_loader:
            loss = loss_fn(model(X), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        t_train = time.perf_counter() - t_epoch
        model.eval()
        test_loss, correct, seen = 0.0, 0, 0
        with torch.no_grad():
            for X, y in test_loader:
                pred = model(X)
                test_loss += loss_fn(pred, y).item() * len(y)
                correct += (pred.argmax(1) == y).sum().item()
                seen += len(y)
        epoch_s = time.perf_counter() - t_epoch
        metrics = {"epoch": epoch, "loss": test_loss / seen, "accuracy": correct / seen,
                   "epoch_s": epoch_s, "train_s": t_train}
        ray.train.report(metrics)
        if rank == 0:
            log_event(config, event="epoch", **metrics)


def train_checkpoint(config):
    rank = ray.train.get_context().get_world_rank()
    weights = torch.randn(config["checkpoint_mb"] * (1 << 20) // 4) if rank == 0 else None
    for i in range(config["reports"]):
        with tempfile.TemporaryDirectory() as temp_checkpoint_dir:
            checkpoint = None
            if rank == 0:
                torch.save({"weights": weights, "i": i}, os.path.join(temp_checkpoint_dir, "model.pt"))
                checkpoint = Checkpoint.from_directory(temp_checkpoint_dir)
            t = time.perf_counter()
            ray.train.report({"i": i}, checkpoint=checkpoint)
            took = time.perf_counter() - t
        if rank == 0:
            log_event(config, event="checkpoint_report", i=i, report_s=took, bytes=weights.numel() * 4)


def train_recovery(config):
    ctx = ray.train.get_context()
    rank = ctx.get_world_rank()
    model = NeuralNetwork()
    start = 0
    restored = ray.train.get_checkpoint()
    if restored:
        with restored.as_directory() as checkpoint_dir:
            state = torch.load(os.path.join(checkpoint_dir, "model.pt"))
            model.load_state_dict(state["model"])
            start = state["step"] + 1
    if rank == 0:
        log_event(config, event="func_start", restored=bool(restored), start=start)
    model = ray.train.torch.prepare_model(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
    loss_fn = nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(rank)
    for step in range(start, config["steps"]):
        for _ in range(10):
            X = torch.rand(config["global_batch_size"] // ctx.get_world_size(), 28, 28, generator=generator)
            y = torch.randint(0, 10, (len(X),), generator=generator)
            loss = loss_fn(model(X), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with tempfile.TemporaryDirectory() as temp_checkpoint_dir:
            checkpoint = None
            if rank == 0:
                torch.save({"model": model.module.state_dict(), "step": step},
                           os.path.join(temp_checkpoint_dir, "model.pt"))
                checkpoint = Checkpoint.from_directory(temp_checkpoint_dir)
            ray.train.report({"step": step, "loss": loss.item()}, checkpoint=checkpoint)
        if rank == 0:
            log_event(config, event="report", step=step, restored=bool(restored))
        if rank == 1 and step == config["kill_at"] and not restored:
            log_event(config, event="kill", step=step, rank=rank)
            os.kill(os.getpid(), signal.SIGKILL)


FUNCTIONS = {"launch": train_launch, "epoch": train_epoch, "checkpoint": train_checkpoint,
             "recovery": train_recovery}


def main():
    t_main = time.time()
    env = os.environ
    mode = env.get("RAY_BENCH_MODE", "launch")
    config = {
        "out": env.get("RAY_BENCH_OUT", "/tmp/ray_bench_out"),
        "data": env.get("RAY_BENCH_DATA", "/usr/share/datasets/fashion-mnist"),
        "epochs": int(env.get("RAY_BENCH_EPOCHS", "1")),
        "train_samples": int(env.get("RAY_BENCH_TRAIN_SAMPLES", "0")),  # 0: all 60000
        "test_samples": int(env.get("RAY_BENCH_TEST_SAMPLES", "0")),    # 0: all 10000
        "global_batch_size": 64, "lr": 1e-3,
        "checkpoint_mb": int(env.get("RAY_BENCH_CKPT_MB", "100")),
        "reports": int(env.get("RAY_BENCH_REPORTS", "5")),
        "steps": int(env.get("RAY_BENCH_STEPS", "6")),
        "kill_at": int(env.get("RAY_BENCH_KILL_AT", "2")),
    }
    os.makedirs(config["out"], exist_ok=True)
    run_config = RunConfig(
        name=env.get("RAY_BENCH_NAME", f"ray_bench_{mode}_{int(t_main)}"),
        storage_path=env.get("RAY_BENCH_STORAGE", "/tmp/ray_bench_runs"),
        checkpoint_config=CheckpointConfig(num_to_keep=2),
        failure_config=FailureConfig(max_failures=1) if mode == "recovery" else None,
    )
    trainer = TorchTrainer(FUNCTIONS[mode], train_loop_config=config,
                           scaling_config=ScalingConfig(num_workers=int(env.get("RAY_BENCH_WORKERS", "2")),
                                                        use_gpu=False),
                           run_config=run_config)
    t_fit = time.time()
    result = trainer.fit()
    t_end = time.time()
    print("RAY_BENCH " + json.dumps({"mode": mode, "t_main": t_main, "t_fit": t_fit, "t_end": t_end,
                                     "fit_s": t_end - t_fit, "metrics": result.metrics,
                                     "checkpoint": bool(result.checkpoint), "path": str(result.path)}, default=str), flush=True)


if __name__ == "__main__":
    main()
