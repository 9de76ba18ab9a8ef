#!/usr/bin/env python3
# Ray Train's FashionMNIST recipe in plain PyTorch DDP: the baseline trainrt's fashion_mlp is
# measured against, and (imported by tools/torch_reference.py) the recipe that produces trainrt's
# reference numbers in tests/data/torch_reference.json. One implementation serves both, so the
# benchmark times exactly the computation the reference checks.
#
#   /opt/trainrt-deps/venv/bin/python3 bench/pytorch/pytorch_ddp.py --ranks 2 --epochs 3 [--init tests/data/torch_init_seed0.h5]
#   (the project environment's python3: PyTorch 2.x from PyPI, tools/deps.sh)
#
# Prints one JSON line per epoch:
#   {"ranks":N,"epoch":e,"loss":..,"test_accuracy":..,"train_time_s":..,"eval_time_s":..,"epoch_time_s":..}
#   (epoch 1 also "first_step_unix": rank 0's clock when its first training step ended, for start-up)
#
# The recipe (the contract trainrt's C++ implements):
#   Flatten -> Linear(784,512) -> ReLU -> Linear(512,512) -> ReLU -> Linear(512,10) -> ReLU,
#   CrossEntropyLoss (mean), SGD lr 1e-3 (no momentum), global batch 64 split evenly over the ranks,
#   pixels/255 as float32, PyTorch's default Linear init, DDP over gloo when ranks > 1 (as Ray's
#   prepare_model: one worker is not wrapped), DistributedSampler(shuffle=False) shards for train and
#   test, the last partial batch kept.
#   loss          = mean over the epoch's batches of the batch-mean train loss, averaged over ranks
#   test_accuracy = correct / 10000 over the whole test set (argmax, first max on ties)
#
# Timing: every rank runs 1 thread (torch.set_num_threads(1), OMP_NUM_THREADS=1) with the BLAS of
# PyPI's torch wheel (MKL on x86-64), as a user's torch has it.
# The data are decoded into memory before the clock starts; batches are slices of this rank's
# shard (what a DataLoader over a TensorDataset yields, without its per-sample collate cost, so
# PyTorch is measured at its fastest). train_time_s: the epoch's training loop, DDP allreduce
# included, measured on rank 0 after a barrier; eval_time_s: the test pass plus the allreduce of
# the correct counts; epoch_time_s: their sum.
import argparse
import gzip
import json
import os
import sys
import tempfile
import time

DATA_DIR = "/usr/share/datasets/fashion-mnist"
GLOBAL_BATCH = 64
LEARNING_RATE = 1e-3


def ensure_environment():
    """Re-executes this script with one OpenMP thread per process when not set (OMP_NUM_THREADS is
    read when torch's OpenMP runtime starts, so it cannot be changed after torch is imported)."""
    if os.environ.get("OMP_NUM_THREADS") == "1" or os.environ.get("TRAINRT_BENCH_REEXEC") == "1":
        return
    env = dict(os.environ, OMP_NUM_THREADS="1", TRAINRT_BENCH_REEXEC="1")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


def blas():
    """The BLAS this process loaded: "mkl" (PyPI's torch on x86-64), "openblas", or "other"."""
    import torch
    if torch.backends.mkl.is_available():
        return "mkl"
    with open("/proc/self/maps") as maps:
        return "openblas" if "openblas" in maps.read() else "other"


def read_idx(path):
    """Reads an IDX file (gzip); returns a uint8 numpy array of its shape."""
    import numpy as np
    with gzip.open(path, "rb") as f:
        raw = f.read()
    magic = int.from_bytes(raw[0:4], "big")
    if magic >> 8 != 0x08:  # 0x08 = unsigned byte
        raise ValueError(f"{path}: not an unsigned-byte IDX file (magic {magic:#x})")
    ndim = magic & 0xFF
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise ValueError(f"{path}: {data.size} values for shape {dims}")
    return data.reshape(dims)


def load_fashion_mnist(data_dir=DATA_DIR):
    """Returns (train_x, train_y, test_x, test_y) as torch tensors: x float32 [N,784] in [0,1]."""
    import numpy as np
    import torch

    def images(name):
        a = read_idx(os.path.join(data_dir, name)).reshape(-1, 28 * 28)
        return torch.from_numpy(a.astype(np.float32) / np.float32(255.0))

    def labels(name):
        return torch.from_numpy(read_idx(os.path.join(data_dir, name)).astype(np.int64))

    return (images("train-images-idx3-ubyte.gz"), labels("train-labels-idx1-ubyte.gz"),
            images("t10k-images-idx3-ubyte.gz"), labels("t10k-labels-idx1-ubyte.gz"))


def make_model():
    """Ray's NeuralNetwork. Its three Linear layers are built in the same order as Ray's
    nn.Sequential, so the same seed gives the same default init; named fc1..fc3 as in
    trainrt's weights files."""
    import torch.nn as nn

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.fc1 = nn.Linear(28 * 28, 512)
            self.fc2 = nn.Linear(512, 512)
            self.fc3 = nn.Linear(512, 10)
            self.relu = nn.ReLU()

        def forward(self, x):
            x = self.flatten(x)
            x = self.relu(self.fc1(x))
            x = self.relu(self.fc2(x))
            return self.relu(self.fc3(x))  # Ray's recipe ends in a ReLU

    return NeuralNetwork()


PARAM_NAMES = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"]


def save_weights(model, path, source):
    """Writes trainrt's init_weights format: float32 datasets in PyTorch's [out,in] layout."""
    import h5py
    import numpy as np
    state = model.state_dict()
    with h5py.File(path, "w") as f:
        for name in PARAM_NAMES:
            f.create_dataset(name, data=state[name].detach().numpy().astype(np.float32))
        f.attrs["format"] = "trainrt-mlp-weights"
        f.attrs["format_version"] = np.int64(1)
        f.attrs["source"] = source


def load_weights(model, path):
    import h5py
    import torch
    state = model.state_dict()
    with h5py.File(path, "r") as f:
        if f.attrs.get("format") != "trainrt-mlp-weights":
            raise ValueError(f"{path}: format attribute is not trainrt-mlp-weights")
        for name in PARAM_NAMES:
            value = torch.from_numpy(f[name][...])
            if value.shape != state[name].shape or value.dtype != torch.float32:
                raise ValueError(f"{path}: {name} is {value.dtype}{list(value.shape)}, "
                                 f"expected float32{list(state[name].shape)}")
            state[name].copy_(value)


def shard(x, y, rank, ranks):
    """This rank's DistributedSampler(shuffle=False) shard: indices rank, rank+n, rank+2n, ..."""
    import torch
    from torch.utils.data import DistributedSampler
    sampler = DistributedSampler(range(len(y)), num_replicas=ranks, rank=rank, shuffle=False)
    index = torch.tensor(list(iter(sampler)), dtype=torch.int64)
    return x[index].contiguous(), y[index].contiguous()


def worker(rank, ranks, epochs, init_path, port, out_path, first_steps):
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=ranks)
    records, step_losses = train_epochs(rank, ranks, epochs, init_path, first_steps)
    steps = torch.tensor(step_losses, dtype=torch.float64)
    if len(step_losses):
        dist.all_reduce(steps)
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump({"epochs": records, "first_batch_losses": (steps / ranks).tolist(),
                       "blas": blas()}, f)
    dist.destroy_process_group()


def train_epochs(rank, ranks, epochs, init_path, first_steps=0, on_epoch=None):
    """The recipe's body, once the default process group exists (set up by worker() here, or by
    trainrt for bench/python/recipe_in_trainrt.py: the same code timed both ways). Returns
    (per-epoch records, the first batch losses); on_epoch(record) after each epoch, untimed."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    train_x, train_y, test_x, test_y = load_fashion_mnist()
    if len(train_y) % ranks or len(test_y) % ranks or GLOBAL_BATCH % ranks:
        raise ValueError(f"{ranks} ranks do not divide the data sets and the batch evenly")
    train_x, train_y = shard(train_x, train_y, rank, ranks)
    test_x, test_y = shard(test_x, test_y, rank, ranks)
    batch = GLOBAL_BATCH // ranks

    torch.manual_seed(0)
    model = make_model()
    if init_path:
        load_weights(model, init_path)
    net = DDP(model) if ranks > 1 else model
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)

    train_batches = (len(train_y) + batch - 1) // batch
    records, step_losses = [], []
    for epoch in range(1, epochs + 1):
        dist.barrier()
        t0 = time.perf_counter()
        net.train()
        loss_sum = 0.0
        for b in range(train_batches):
            xb, yb = train_x[b * batch:(b + 1) * batch], train_y[b * batch:(b + 1) * batch]
            loss = loss_fn(net(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            value = loss.item()
            loss_sum += value
            if epoch == 1 and b == 0:
                first_step_unix = time.time()
            if epoch == 1 and b < first_steps:
                step_losses.append(value)
        t1 = time.perf_counter()

        net.eval()
        correct = 0
        with torch.no_grad():
            for b in range(0, len(test_y), batch):
                pred = net(test_x[b:b + batch])
                correct += int((pred.argmax(1) == test_y[b:b + batch]).sum())
        totals = torch.tensor([float(correct)], dtype=torch.float64)
        dist.all_reduce(totals)
        t2 = time.perf_counter()

        mean_loss = torch.tensor([loss_sum / train_batches], dtype=torch.float64)
        dist.all_reduce(mean_loss)
        records.append({
            "ranks": ranks, "epoch": epoch,
            "loss": mean_loss.item() / ranks,
            "test_accuracy": totals.item() / (len(test_y) * ranks),
            "train_time_s": t1 - t0, "eval_time_s": t2 - t1, "epoch_time_s": t2 - t0,
        })
        if epoch == 1:
            records[-1]["first_step_unix"] = first_step_unix  # start-up: launch -> first step done
        if on_epoch is not None:
            on_epoch(records[-1])
    return records, step_losses


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(ranks, epochs, init_path=None, first_steps=0):
    """Trains `epochs` epochs on `ranks` processes; returns rank 0's result dict:
    {"epochs": [per-epoch records], "first_batch_losses": [...], "blas": name}."""
    import torch.multiprocessing as mp
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "result.json")
        mp.spawn(worker, args=(ranks, epochs, init_path, free_port(), out_path, first_steps),
                 nprocs=ranks, join=True)
        with open(out_path) as f:
            return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--epochs", type=int, required=True)
    parser.add_argument("--init", default=None,
                        help="trainrt-mlp-weights HDF5 file (default: torch.manual_seed(0) init)")
    args = parser.parse_args()
    if args.ranks < 1 or GLOBAL_BATCH % args.ranks:
        parser.error(f"--ranks must divide the global batch {GLOBAL_BATCH}")
    ensure_environment()
    result = run(args.ranks, args.epochs, args.init)
    for record in result["epochs"]:
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
