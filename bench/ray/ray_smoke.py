#!/usr/bin/env python3
"""Smallest real Ray Train run, for comparing with trainrt (bench/ray/README.md).

TorchTrainer, 2 CPU workers (gloo), nn.Linear wrapped by ray.train.torch.prepare_model, 2 "epochs"
on random tensors, ray.train.report every epoch and a Checkpoint on the last one. Prints one JSON
line with the timings: launch (script start) -> ray.init done -> first report -> fit() returned.

Run with the ray venv (bench/ray/make_venv.sh):
  /opt/trainrt-deps/ray-venv/bin/python bench/ray/ray_smoke.py
Environment: RAY_SMOKE_STORAGE (default /tmp/ray_results), RAY_SMOKE_WORKERS (default 2),
RAY_SMOKE_CPUS (default 2), RAY_SMOKE_OBJECT_STORE_MB (default: Ray's own, 30% of RAM).
"""
import json
import os
import sys
import tempfile
import time

T_LAUNCH = time.time()

import ray  # noqa: E402
import ray.train  # noqa: E402
import ray.train.torch  # noqa: E402
from ray.train import Checkpoint, RunConfig, ScalingConfig  # noqa: E402
from ray.train.torch import TorchTrainer  # noqa: E402


def train_func(config):
    t_start = time.time()
    import torch
    from torch import nn

    torch.set_num_threads(1)
    ctx = ray.train.get_context()
    rank = ctx.get_world_rank()
    torch.manual_seed(rank)
    model = ray.train.torch.prepare_model(nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x = torch.randn(256, 16)
    y = x.sum(dim=1, keepdim=True)
    t_first = None
    for epoch in range(config["epochs"]):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()  # DDP allreduce over gloo
        opt.step()
        now = time.time()
        t_first = t_first or now
        metrics = {"epoch": epoch, "loss": loss.item(), "rank": rank,
                   "t_first_report": t_first, "t_report": now,
                   "t_train_func_start": t_start}
        if epoch == config["epochs"] - 1:
            with tempfile.TemporaryDirectory() as d:
                if rank == 0:
                    torch.save(model.state_dict(), os.path.join(d, "model.pt"))
                ray.train.report(metrics, checkpoint=Checkpoint.from_directory(d))
        else:
            ray.train.report(metrics)


def main():
    storage = os.environ.get("RAY_SMOKE_STORAGE", "/tmp/ray_results")
    workers = int(os.environ.get("RAY_SMOKE_WORKERS", "2"))
    # address="local": always a fresh single-node Ray owned by this process, never one found through
    # RAY_ADDRESS or /tmp/ray/ray_current_cluster (another job's, on a shared Slurm node).
    init_kw = dict(address="local", num_cpus=int(os.environ.get("RAY_SMOKE_CPUS", "2")),
                   include_dashboard=False, log_to_driver=True)
    if os.environ.get("RAY_SMOKE_OBJECT_STORE_MB"):
        init_kw["object_store_memory"] = int(os.environ["RAY_SMOKE_OBJECT_STORE_MB"]) << 20
    ray.init(**init_kw)
    t_init = time.time()
    name = f"ray_smoke_{int(T_LAUNCH)}"
    trainer = TorchTrainer(
        train_func,
        train_loop_config={"epochs": 2},
        scaling_config=ScalingConfig(num_workers=workers, use_gpu=False),
        run_config=RunConfig(storage_path=storage, name=name),
    )
    t_fit0 = time.time()
    result = trainer.fit()
    t_end = time.time()
    m = result.metrics
    ckpt = result.checkpoint
    ok = (result.error is None and ckpt is not None and m.get("epoch") == 1
          and os.path.exists(os.path.join(ckpt.path, "model.pt")))
    out = {
        "ok": ok, "ray": ray.__version__, "workers": workers,
        "launch_to_init_s": round(t_init - T_LAUNCH, 2),
        "launch_to_first_report_s": round(m["t_first_report"] - T_LAUNCH, 2),
        "fit_to_train_func_s": round(m["t_train_func_start"] - t_fit0, 2),
        "fit_to_first_report_s": round(m["t_first_report"] - t_fit0, 2),
        "fit_s": round(t_end - t_fit0, 2),
        "launch_to_end_s": round(t_end - T_LAUNCH, 2),
        "final_loss": m["loss"], "checkpoint": ckpt.path if ckpt else None,
    }
    print("RAY_SMOKE " + json.dumps(out), flush=True)
    ray.shutdown()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
