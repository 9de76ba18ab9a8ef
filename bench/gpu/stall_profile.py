"""Where a GPU model's checkpoint stall goes (bench/gpu/README.md): ResNet-18 on the GPU, SGD with
momentum, checkpoint.async = true, snapshot = background. Per round: 20 steps, then
state_dict_checkpoint(model, optimizer) (the staging: device-to-host copies into pinned memory)
timed apart from report() (trainrt's C++ side), against the pinned device-to-host copy alone.
Three variants, alternated: `per_tensor` (trainrt.torch's staging: one pinned block per tensor),
`arena` (the copies sliced out of pinned blocks of 64 MiB), and `per_tensor_idle1s` (the GPU idle
for 1 s before the checkpoint, so that the previous background save has ended). Then cProfile of
one round of each staging.

    trainrt --run.workload=python:bench/gpu/stall_profile.py:profile_func --scaling.use_gpu=true \\
            --checkpoint.async=true --checkpoint.snapshot=background --train.data_dir=IDX
"""
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_gpu_bench as bench  # noqa: E402

ARENA_BLOCK = 64 << 20


def arena_staging(base):
    class Arena(base):
        """The copies sliced out of 64 MiB pinned blocks (larger tensors: a block of their own)."""

        def __init__(self):
            super().__init__()
            self.block, self.used = None, ARENA_BLOCK

        def __call__(self, leaf):
            if not (isinstance(leaf, torch.Tensor) and leaf.is_cuda and leaf.dtype in bench_stored()):
                return super().__call__(leaf)
            tensor = leaf.detach()
            size = (tensor.numel() * tensor.element_size() + 63) // 64 * 64
            if size > ARENA_BLOCK:
                host = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
            else:
                if self.used + size > ARENA_BLOCK:
                    self.block, self.used = torch.empty(ARENA_BLOCK, dtype=torch.uint8, pin_memory=True), 0
                start = self.used
                self.used += size
                raw = self.block[start:start + tensor.numel() * tensor.element_size()]
                host = raw.view(tensor.dtype).view(tensor.shape)
            host.copy_(tensor, non_blocking=True)
            self.pending = True
            self.private.append(host.numpy())
            return self.private[-1]
    return Arena


def bench_stored():
    import trainrt.torch as tt
    return tt._STORED_AS_IS


def line(**values):
    print(json.dumps(values), flush=True)


def one_round(trainrt, tt, model, optimizer, batches, loss_fn, device, idle=0.0):
    bench.run_epoch(model, batches, optimizer, loss_fn, device, steps=20)
    time.sleep(idle)
    start = time.perf_counter()
    checkpoint = tt.state_dict_checkpoint(model=model, optimizer=optimizer)
    built = time.perf_counter()
    trainrt.report({"epoch": 99}, checkpoint=checkpoint)
    done = time.perf_counter()
    return built - start, done - built


def profile_func(config):
    import trainrt
    import trainrt.torch as tt
    device = tt.get_device()
    model = tt.prepare_model(bench.build_model(config.get("model", "resnet18")))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    batches = bench.resident_batches(bench.Images(config["data_dir"]), device, 256)
    bench.run_epoch(model, batches, optimizer, loss_fn, device, steps=40)
    stagings = {"per_tensor": tt._HostStaging, "arena": arena_staging(tt._HostStaging)}
    # (staging, seconds idle before the checkpoint): 1 s lets the previous save end first
    variants = {"per_tensor": ("per_tensor", 0.0), "arena": ("arena", 0.0), "per_tensor_idle1s": ("per_tensor", 1.0)}
    tensors = len(model.state_dict()) + sum(len(s) for s in optimizer.state.values())
    times = {name: {"build": [], "report": [], "copy": []} for name in variants}
    for round_ in range(int(config.get("rounds", 8))):
        for name in (list(variants) if round_ % 2 == 0 else list(reversed(variants))):
            staging, idle = variants[name]
            tt._HostStaging = stagings[staging]
            build, report = one_round(trainrt, tt, model, optimizer, batches, loss_fn, device, idle)
            copy, state_bytes = bench.pinned_copy_seconds(model, optimizer, device) if device.type == "cuda" else (0.0, 0)
            if round_ > 0:  # the first round pays the pinned blocks' first allocation
                times[name]["build"].append(build)
                times[name]["report"].append(report)
                times[name]["copy"].append(copy)
    for name, t in times.items():
        line(variant=name, tensors=tensors, state_bytes=state_bytes,
             **{f"{k}_ms": round(statistics.median(v) * 1e3, 3) for k, v in t.items()},
             builds_ms=[round(v * 1e3, 2) for v in t["build"]], reports_ms=[round(v * 1e3, 2) for v in t["report"]])
    for name, staging in stagings.items():
        tt._HostStaging = staging
        profiler = cProfile.Profile()
        profiler.enable()
        one_round(trainrt, tt, model, optimizer, [], loss_fn, device)
        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(18)
        print(f"== cProfile, staging {name}, by own time\n{text.getvalue()}", flush=True)
