"""A training function that uses every kind of state trainrt.torch checkpoints: Adam (per-parameter
moments and step), dropout and torch.rand (torch RNG), numpy and Python RNGs, batch norm buffers,
a shuffled prepared loader, and extra values of dtypes trainrt widens. It saves every step and
stops when asked; tests/python/test_python_state.sh checks the resume is bitwise."""
import random

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import trainrt
from trainrt.torch import load_state, prepare_data_loader, prepare_model, state_dict_checkpoint


def extras():
    return {"flags": np.array([True, False, True]), "half": np.array([1.5, -2.25], dtype=np.float16),
            "u32": np.array([4000000000, 7], dtype=np.uint32), "i16": np.array([[-3, 4]], dtype=np.int16),
            "nested": {1: [1, 2.5, (3, "x")], "none": None}, "ints": list(range(100)),
            "scalar": torch.tensor(3.5), "empty": torch.zeros(0, 3), "u64": np.array([2**63 + 5], dtype=np.uint64)}


def same(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def train(config):
    rank = trainrt.get_context().world_rank
    random.seed(100 + rank)  # per-rank streams: each rank's own state must come back
    np.random.seed(200 + rank)
    torch.manual_seed(1)
    data = TensorDataset(torch.randn(512, 16), torch.randint(0, 4, (512,)))
    loader = prepare_data_loader(DataLoader(data, batch_size=16, shuffle=True))
    network = nn.Sequential(nn.Linear(16, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.3), nn.Linear(32, 4))
    model = prepare_model(network)
    optimizer = torch.optim.Adam(network.parameters(), lr=1e-2)
    step = 0
    if (checkpoint := trainrt.get_checkpoint()) is not None:
        saved = load_state(checkpoint, model=model, optimizer=optimizer, loader=loader, extras=None)
        assert same(saved["extras"], extras()), f"extras came back as {saved['extras']}"
        step = saved["step"]
        print(f"extras round trip ok on rank {trainrt.get_context().world_rank}", flush=True)
    for _ in range(loader.epoch, config["epochs"]):
        for x, y in loader:
            noise = torch.rand(1).item() * 1e-3 + np.random.rand() * 1e-3 + random.random() * 1e-3
            loss = nn.functional.cross_entropy(model(x), y) * (1 + noise)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            trainrt.report({"step": step, "loss": loss.item()},
                           checkpoint=state_dict_checkpoint(model=model, optimizer=optimizer, loader=loader,
                                                            extras=extras(), step=step))
            if trainrt.should_stop():
                return
    if trainrt.get_context().world_rank == 0:
        print(f"weights_digest={trainrt.digest(network.state_dict().values())}", flush=True)
