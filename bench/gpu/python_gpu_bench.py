"""Python training functions on the GPU: one file, run through trainrt and in plain PyTorch, with
the same model, data, loop and clock; only the set-up differs (bench/gpu/README.md).

    trainrt --run.workload=python:bench/gpu/python_gpu_bench.py:trainrt_func --scaling.use_gpu=true \\
            --train.model=resnet18 --train.data=loader --train.data_dir=DIR
    python3 bench/gpu/python_gpu_bench.py --model resnet18 --data loader --data-dir DIR   (plain)

trainrt: trainrt.torch.prepare_model / prepare_data_loader (pinned batches moved to the rank's
device) and one report() per epoch. Plain: DataLoader(pin_memory=True) and .to(device,
non_blocking=True), as Ray's example does by hand, and one print per epoch.
  model   mlp (Ray's FashionMNIST recipe, batch 64) | resnet18 (torchvision's, 1 input channel,
          batch 256)
  data    loader (a map-style dataset turning each uint8 image into a float tensor, as ToTensor;
          2 workers; shuffled) | resident (the whole set on the GPU once, batches sliced)
One JSON line per epoch: who, model, data, epoch, epoch_s (the loop, a device sync and the
report or print), loss (summed on the device: no sync per step).
checkpoints = N (trainrt only, after the epochs): N rounds of 20 steps then the state's
device-to-host copy into preallocated pinned memory (plain PyTorch, the floor), 20 steps then
report() with state_dict_checkpoint(model, optimizer) (checkpoint.async = true, snapshot =
background: its stall); one JSON line with both medians.
plain_func: the plain loop run by trainrt's embedded interpreter with no trainrt call in it
(who = pytorch-embedded): what the interpreter costs, apart from trainrt's functions.
"""
import argparse
import gzip
import json
import os
import statistics
import sys
import time

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

BATCH = {"mlp": 64, "resnet18": 256}


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(raw[3])]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * len(dims)).reshape(dims).copy()


class Images(Dataset):
    """FashionMNIST's training images, each turned into a 1x28x28 float tensor when fetched."""

    def __init__(self, data_dir):
        self.images = read_idx(os.path.join(data_dir, "train-images-idx3-ubyte.gz"))
        self.labels = read_idx(os.path.join(data_dir, "train-labels-idx1-ubyte.gz")).astype(np.int64)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return torch.from_numpy(self.images[i]).float().div_(255.0).unsqueeze_(0), int(self.labels[i])


def build_model(name):
    if name == "mlp":  # Ray's recipe (examples/python/fashion_mnist.py)
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                             nn.Linear(512, 10), nn.ReLU())
    import torchvision
    model = torchvision.models.resnet18(num_classes=10)
    model.conv1 = nn.Conv2d(1, 64, kernel_size=7, stride=2, padding=3, bias=False)
    return model


def resident_batches(dataset, device, batch):
    x = torch.from_numpy(dataset.images).to(device).float().div_(255.0).unsqueeze_(1)
    y = torch.from_numpy(dataset.labels).to(device)
    return [(x[i:i + batch], y[i:i + batch]) for i in range(0, len(y), batch)]


def run_epoch(model, batches, optimizer, loss_fn, device, steps=None):
    """(seconds, summed loss) of one pass (or `steps` steps), synchronized at the end."""
    model.train()
    total = torch.zeros((), device=device)
    start = time.perf_counter()
    for step, (x, y) in enumerate(batches):
        if steps is not None and step == steps:
            break
        loss = loss_fn(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        total += loss.detach()
    torch.cuda.synchronize(device)
    return time.perf_counter() - start, total


def pinned_copy_seconds(model, optimizer, device):
    """The floor of a checkpoint's stall: the model's and optimizer's tensors copied into pinned
    host memory allocated beforehand, one sync."""
    tensors = list(model.state_dict().values())
    for state in optimizer.state.values():
        tensors += [v for v in state.values() if torch.is_tensor(v) and v.is_cuda]
    hosts = [torch.empty(t.shape, dtype=t.dtype, pin_memory=True) for t in tensors]
    torch.cuda.synchronize(device)
    start = time.perf_counter()
    for host, tensor in zip(hosts, tensors):
        host.copy_(tensor, non_blocking=True)
    torch.cuda.synchronize(device)
    return time.perf_counter() - start, sum(t.numel() * t.element_size() for t in tensors)


def line(path=None, **values):
    """One JSON line on stdout, or appended to `path` (a Ray worker's stdout reaches the driver
    prefixed)."""
    values.update(cpus=len(os.sched_getaffinity(0)), threads=torch.get_num_threads())
    if path is None:
        print(json.dumps(values), flush=True)
        return
    with open(path, "a") as file:
        file.write(json.dumps(values) + "\n")


def epochs_through(config, train, train_torch, who):
    """The loop through a framework's API (trainrt's or, the same names, Ray Train's): returns what
    the checkpoint rounds need. Rank 0 writes one line per epoch."""
    device = train_torch.get_device()
    name, data = config["model"], config["data"]
    dataset = Images(config["data_dir"])
    model = train_torch.prepare_model(build_model(name))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    if data == "loader":
        batches = train_torch.prepare_data_loader(DataLoader(dataset, batch_size=BATCH[name], shuffle=True,
                                                             num_workers=2, persistent_workers=True))
    else:
        batches = resident_batches(dataset, device, BATCH[name])
    for epoch in range(1, config.get("epochs", 3) + 1):
        seconds, total = run_epoch(model, batches, optimizer, loss_fn, device)
        start = time.perf_counter()
        train.report({"epoch": epoch, "loss": total.item()})
        seconds += time.perf_counter() - start
        if train.get_context().get_world_rank() == 0:
            line(config.get("out"), who=who, model=name, data=data, epoch=epoch, epoch_s=seconds, loss=total.item())
    return model, batches, optimizer, loss_fn, device


def ray_func(config):
    """The same loop under Ray Train (TorchTrainer, ScalingConfig(use_gpu=True)): `--under ray`."""
    import ray.train
    import ray.train.torch
    epochs_through(config, ray.train, ray.train.torch, "ray")


def trainrt_func(config):
    import trainrt
    import trainrt.torch
    from trainrt.torch import state_dict_checkpoint
    model, batches, optimizer, loss_fn, device = epochs_through(config, trainrt, trainrt.torch, "trainrt")
    name = config["model"]
    rounds = config.get("checkpoints", 0)
    copies, stalls, state_bytes = [], [], 0
    for _ in range(rounds):
        run_epoch(model, batches, optimizer, loss_fn, device, steps=20)
        seconds, state_bytes = pinned_copy_seconds(model, optimizer, device)
        copies.append(seconds)
        run_epoch(model, batches, optimizer, loss_fn, device, steps=20)
        start = time.perf_counter()
        trainrt.report({"epoch": 99}, checkpoint=state_dict_checkpoint(model=model, optimizer=optimizer))
        stalls.append(time.perf_counter() - start)
    if rounds and trainrt.get_context().world_rank == 0:
        # The first save's stall includes pinned memory's first allocation: the later ones count.
        line(who="trainrt", model=name, checkpoint_bytes=state_bytes, d2h_pinned_s=statistics.median(copies[1:]),
             stall_s=statistics.median(stalls[1:]), stalls=stalls, copies=copies)


def plain_func(config):
    plain(argparse.Namespace(model=config["model"], data=config["data"], data_dir=config["data_dir"],
                             epochs=config.get("epochs", 3)), who="pytorch-embedded")


def plain(args, who="pytorch"):
    device = torch.device("cuda:0")
    torch.cuda.set_device(device)
    torch.manual_seed(0)
    dataset = Images(args.data_dir)
    model = build_model(args.model).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    if args.data == "loader":
        loader = DataLoader(dataset, batch_size=BATCH[args.model], shuffle=True, num_workers=2,
                            persistent_workers=True, pin_memory=True)
        batches = _Moved(loader, device)
    else:
        batches = resident_batches(dataset, device, BATCH[args.model])
    for epoch in range(1, args.epochs + 1):
        seconds, total = run_epoch(model, batches, optimizer, loss_fn, device)
        start = time.perf_counter()
        loss = total.item()
        seconds += time.perf_counter() - start
        line(who=who, model=args.model, data=args.data, epoch=epoch, epoch_s=seconds, loss=loss)


class _Moved:
    """What Ray's example does by hand: each batch .to(device) from pinned memory."""

    def __init__(self, loader, device):
        self.loader, self.device = loader, device

    def __iter__(self):
        for x, y in self.loader:
            yield x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)


def under_ray(args):
    """Ray Train as its users run it: TorchTrainer(ray_func, ScalingConfig(num_workers=1,
    use_gpu=True)).fit() from this driver; the worker appends its lines to args.out."""
    import tempfile
    from ray.train import RunConfig, ScalingConfig
    from ray.train.torch import TorchTrainer
    config = {"model": args.model, "data": args.data, "data_dir": os.path.abspath(args.data_dir),
              "epochs": args.epochs, "out": os.path.abspath(args.out)}
    TorchTrainer(ray_func, train_loop_config=config, scaling_config=ScalingConfig(num_workers=1, use_gpu=True),
                 run_config=RunConfig(storage_path=tempfile.mkdtemp(prefix="ray-gpu-bench-"))).fit()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--under", choices=("pytorch", "ray"), default="pytorch")
    parser.add_argument("--out", help="with --under ray: the file the worker appends its lines to")
    parser.add_argument("--model", choices=sorted(BATCH), default="mlp")
    parser.add_argument("--data", choices=("loader", "resident"), default="loader")
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--epochs", type=int, default=3)
    arguments = parser.parse_args()
    under_ray(arguments) if arguments.under == "ray" else plain(arguments)
    sys.exit(0)
