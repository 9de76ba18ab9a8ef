"""Ray Train's FashionMNIST recipe (the model and loop of Ray's PyTorch parity benchmark) as a
trainrt Python training function: plain PyTorch, with trainrt setting up DDP and the data split,
checkpointing the model, optimizer, loader position and RNGs, and resuming exactly.

    mpiexec -n 2 trainrt --config examples/python/fashion_mnist.ini
    srun trainrt --config fashion_mnist.ini            (in an sbatch file: fashion_mnist.sbatch)
"""
import gzip
import os

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import trainrt
from trainrt.torch import get_device, load_state, prepare_data_loader, prepare_model, state_dict_checkpoint


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


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def fashion_mnist(data_dir, split):
    prefix = "train" if split == "train" else "t10k"
    images = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz")).reshape(-1, 28 * 28)
    labels = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"))
    x = torch.from_numpy(images.astype(np.float32) / np.float32(255.0))
    return TensorDataset(x, torch.from_numpy(labels.astype(np.int64)))


def load_init_weights(model, path):
    """trainrt's MLP weights file (hdf5_schemas/mlp_weights.md): float32 datasets by state_dict name."""
    import h5py
    with h5py.File(path, "r") as f:
        model.load_state_dict({name: torch.from_numpy(f[name][...]) for name in model.state_dict()})


def train_func(config):
    data_dir = config.get("data_dir", "/usr/share/datasets/fashion-mnist")
    batch = config.get("batch_size", 64) // trainrt.get_context().world_size
    train_loader = prepare_data_loader(DataLoader(fashion_mnist(data_dir, "train"), batch_size=batch))
    test_loader = prepare_data_loader(DataLoader(fashion_mnist(data_dir, "test"), batch_size=batch))

    torch.manual_seed(config.get("seed", 0))  # the same initial weights on every rank
    network = NeuralNetwork()
    if config.get("init_weights"):
        load_init_weights(network, config["init_weights"])
    model = prepare_model(network)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(network.parameters(), lr=config.get("lr", 1e-3))

    start, loss_sum, steps = 0, 0.0, 0
    if (checkpoint := trainrt.get_checkpoint()) is not None:  # resuming: maybe in the middle of an epoch
        saved = load_state(checkpoint, model=model, optimizer=optimizer, train_loader=train_loader,
                           test_loader=test_loader)
        start, loss_sum, steps = saved["epoch"], saved["loss_sum"], saved["steps"]

    def save(epoch, loss_sum, steps):
        return state_dict_checkpoint(model=model, optimizer=optimizer, train_loader=train_loader,
                                     test_loader=test_loader, epoch=epoch, steps=steps,
                                     per_rank={"loss_sum": loss_sum})  # each rank's own losses

    check_every = config.get("check_every", 200)  # steps between stop checks inside an epoch
    world = trainrt.get_context().world_size
    for epoch in range(start, config.get("epochs", 3)):
        model.train()
        for x, y in train_loader:
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum, steps = loss_sum + loss.item(), steps + 1
            if steps % check_every == 0 and trainrt.should_stop():  # preempted: save where we are
                trainrt.save_at_stop(save(epoch, loss_sum, steps))  # no row; the function ends here
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in test_loader:
                correct += int((model(x).argmax(1) == y).sum())
        totals = torch.tensor([loss_sum / steps, float(correct)], dtype=torch.float64, device=get_device())
        torch.distributed.all_reduce(totals)
        loss_sum, steps = 0.0, 0
        trainrt.report({"epoch": epoch + 1, "loss": totals[0].item() / world,
                        "test_accuracy": totals[1].item() / len(test_loader.loader.dataset)},
                       checkpoint=save(epoch + 1, loss_sum, steps))
        if trainrt.should_stop():
            return
    if trainrt.get_context().world_rank == 0:
        print(f"weights_digest={trainrt.digest(network.state_dict().values())}", flush=True)
