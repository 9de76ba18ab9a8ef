# Ray Train's PyTorch quickstart as a Ray user writes it (a small CNN instead of ResNet-18, and
# FashionMNIST read from its IDX files instead of torchvision, for time); the test runs it after
# `sed s/ray.train/trainrt/g` and nothing else. QUICKSTART_DATA: the IDX directory;
# QUICKSTART_RUNS: where runs go.
import gzip
import os
import tempfile

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import ray.train
import ray.train.torch


def load_split(kind):
    root = os.environ["QUICKSTART_DATA"]
    def read(name, offset):
        path = os.path.join(root, name)
        if not os.path.exists(path):
            path += ".gz"
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as file:
            return np.frombuffer(file.read(), np.uint8, offset=offset)
    prefix = "train" if kind == "train" else "t10k"
    images = read(f"{prefix}-images-idx3-ubyte", 16).reshape(-1, 1, 28, 28).astype(np.float32) / 255.0
    labels = read(f"{prefix}-labels-idx1-ubyte", 8).astype(np.int64)
    return TensorDataset(torch.from_numpy((images - 0.286) / 0.353), torch.from_numpy(labels))


def make_model():
    return nn.Sequential(nn.Conv2d(1, 8, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(8 * 12 * 12, 64), nn.ReLU(), nn.Linear(64, 10))


def accuracy(model, data):
    model.eval()
    with torch.no_grad():
        logits = model(data.tensors[0])
    return float((logits.argmax(1) == data.tensors[1]).float().mean())


def train_func(config):
    model = ray.train.torch.prepare_model(make_model())
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"])
    train_loader = DataLoader(load_split("train"), batch_size=128, shuffle=True)
    train_loader = ray.train.torch.prepare_data_loader(train_loader)
    test_data = load_split("test")
    for epoch in range(config["epochs"]):
        if ray.train.get_context().get_world_size() > 1:
            train_loader.sampler.set_epoch(epoch)
        model.train()
        for images, labels in train_loader:
            loss = criterion(model(images), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        metrics = {"loss": loss.item(), "epoch": epoch, "test_accuracy": accuracy(model.module, test_data)}
        with tempfile.TemporaryDirectory() as temp_checkpoint_dir:
            torch.save(model.module.state_dict(), os.path.join(temp_checkpoint_dir, "model.pt"))
            ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(temp_checkpoint_dir))
        if ray.train.get_context().get_world_rank() == 0:
            print(metrics)


scaling_config = ray.train.ScalingConfig(num_workers=2, use_gpu=False)
run_config = ray.train.RunConfig(name="quickstart", storage_path=os.environ["QUICKSTART_RUNS"])
trainer = ray.train.torch.TorchTrainer(train_func, train_loop_config={"lr": 1e-3, "epochs": 2},
                                       scaling_config=scaling_config, run_config=run_config)
result = trainer.fit()

with result.checkpoint.as_directory() as checkpoint_dir:
    model_state_dict = torch.load(os.path.join(checkpoint_dir, "model.pt"))
    model = make_model()
    model.load_state_dict(model_state_dict)
print(f"driver: path {result.path}, {len(result.best_checkpoints)} checkpoints, epoch {result.metrics['epoch']}, "
      f"reported accuracy {result.metrics['test_accuracy']}, loaded model's {accuracy(model, load_split('test'))}")
