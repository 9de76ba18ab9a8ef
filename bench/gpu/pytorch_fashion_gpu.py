#!/usr/bin/env python3
# Ray Train's FashionMNIST recipe in plain PyTorch on one GPU: the baseline for trainrt's CUDA
# fashion_mlp (bench/gpu/README.md). Same model, init, loss, SGD, batch and sample order as
# bench/pytorch/pytorch_ddp.py (whose helpers it imports), on CUDA.
#
#   python3 bench/gpu/pytorch_fashion_gpu.py --mode resident|loader --epochs 3 \
#       --data DIR_WITH_IDX_GZ [--init tests/data/torch_init_seed0.h5]
#
# --mode resident: the whole data set is a float32 tensor on the GPU before the clock starts;
#   batches are slices (PyTorch at its fastest: no loader, no host copies).
# --mode loader:   Ray's recipe as a user writes it: torchvision's FashionMNIST with ToTensor()
#   and a DataLoader(batch_size=64) per epoch, each batch moved to the GPU (.to(device)).
# Either way the training loop never synchronises per step: the batch losses are summed on the
# device and read once per epoch (no loss.item() per step). Evaluation: the test set in batches
# of 1000, as trainrt's fashion_mlp evaluates. One JSON line per epoch:
#   {"impl":"pytorch","mode":..,"epoch":e,"loss":..,"test_accuracy":..,"train_time_s":..,
#    "eval_time_s":..,"epoch_time_s":..,"device":..,"torch":..}
import argparse
import gzip
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pytorch"))
import pytorch_ddp as recipe  # noqa: E402  (the CPU baseline: model, data, weights helpers)

BATCH = 64
EVAL_BATCH = 1000


def torchvision_root(data_dir, root):
    """torchvision's FashionMNIST reads ROOT/FashionMNIST/raw/<name> (uncompressed IDX)."""
    raw = os.path.join(root, "FashionMNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                 "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
        target = os.path.join(raw, name)
        if not os.path.exists(target):
            with gzip.open(os.path.join(data_dir, name + ".gz"), "rb") as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
    return root


def train_batches(mode, data, device):
    """Yields (x, y) batches on the device for one epoch."""
    if mode == "resident":
        x, y = data
        for first in range(0, len(y), BATCH):
            yield x[first:first + BATCH], y[first:first + BATCH]
    else:
        for x, y in data:
            yield x.to(device, non_blocking=False), y.to(device, non_blocking=False)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("resident", "loader"), required=True)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--data", default=recipe.DATA_DIR)
    parser.add_argument("--init", default=None)
    parser.add_argument("--root", default="/tmp/trainrt-torchvision")
    args = parser.parse_args()

    import torch
    device = torch.device("cuda")
    train_x, train_y, test_x, test_y = recipe.load_fashion_mnist(args.data)
    torch.manual_seed(0)
    model = recipe.make_model()
    if args.init:
        recipe.load_weights(model, args.init)
    model = model.to(device)
    loss_fn = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=recipe.LEARNING_RATE)
    test_x, test_y = test_x.to(device), test_y.to(device)
    if args.mode == "resident":
        train = (train_x.to(device), train_y.to(device))
    else:
        from torch.utils.data import DataLoader
        from torchvision import datasets
        from torchvision.transforms import ToTensor
        dataset = datasets.FashionMNIST(root=torchvision_root(args.data, args.root), train=True,
                                        download=False, transform=ToTensor())
        train = DataLoader(dataset, batch_size=BATCH, shuffle=False)
    batches = (len(train_y) + BATCH - 1) // BATCH

    for epoch in range(1, args.epochs + 1):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        model.train()
        loss_sum = torch.zeros((), dtype=torch.float64, device=device)
        for x, y in train_batches(args.mode, train, device):
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum += loss.detach()
        mean_loss = loss_sum.item() / batches
        t1 = time.perf_counter()
        model.eval()
        correct = torch.zeros((), dtype=torch.int64, device=device)
        with torch.no_grad():
            for first in range(0, len(test_y), EVAL_BATCH):
                pred = model(test_x[first:first + EVAL_BATCH])
                correct += (pred.argmax(1) == test_y[first:first + EVAL_BATCH]).sum()
        accuracy = correct.item() / len(test_y)
        t2 = time.perf_counter()
        print(json.dumps({"impl": "pytorch", "mode": args.mode, "epoch": epoch, "loss": mean_loss,
                          "test_accuracy": accuracy, "train_time_s": t1 - t0, "eval_time_s": t2 - t1,
                          "epoch_time_s": t2 - t0, "device": torch.cuda.get_device_name(),
                          "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
