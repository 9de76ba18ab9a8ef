"""Ray Train's checkpoint pattern, with `trainrt` where Ray's code says `ray.train`: torch.save the
model and the optimizer into a temporary directory, report it with Checkpoint.from_directory,
resume with get_checkpoint() -> as_directory() -> torch.load. Every rank saves model.pt (as Ray's
quickstart); rank 1 also saves a file of its own (merged into the checkpoint, as Ray merges the
workers' directories). Nothing seeds, nothing polls should_stop(). train.sleep_s slows epochs."""
import json
import os
import tempfile
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

import trainrt
from trainrt import Checkpoint
from trainrt.torch import prepare_data_loader, prepare_model


def make_model():
    return torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                               torch.nn.Linear(32, 1))


def train(config):
    data = np.random.default_rng(7)
    x = torch.from_numpy(data.standard_normal((256, 8)).astype(np.float32))
    y = x @ torch.from_numpy(data.standard_normal((8, 1)).astype(np.float32))
    loader = prepare_data_loader(DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True))
    model = prepare_model(make_model())
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    start = 0
    checkpoint = trainrt.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            model.module.load_state_dict(torch.load(os.path.join(checkpoint_dir, "model.pt")))
            optimizer.load_state_dict(torch.load(os.path.join(checkpoint_dir, "optimizer.pt")))
            start = json.load(open(os.path.join(checkpoint_dir, "extra.json")))["epoch"]
    rank = trainrt.get_context().get_world_rank()
    for epoch in range(start, config.get("epochs", 8)):
        loader.sampler.set_epoch(epoch)
        for xb, yb in loader:
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        time.sleep(config.get("sleep_s", 0.0))
        metrics = {"loss": loss.item(), "epoch": epoch}
        with tempfile.TemporaryDirectory() as temp_checkpoint_dir:
            torch.save(model.module.state_dict(), os.path.join(temp_checkpoint_dir, "model.pt"))
            torch.save(optimizer.state_dict(), os.path.join(temp_checkpoint_dir, "optimizer.pt"))
            with open(os.path.join(temp_checkpoint_dir, "extra.json"), "w") as f:
                json.dump({"epoch": epoch + 1}, f)
            if rank == 1:
                os.makedirs(os.path.join(temp_checkpoint_dir, "rank1"))
                with open(os.path.join(temp_checkpoint_dir, "rank1", "note.txt"), "w") as f:
                    f.write(f"rank 1 after epoch {epoch}\n")
            trainrt.report(metrics, checkpoint=Checkpoint.from_directory(temp_checkpoint_dir))
    if rank == 0:
        print(f"weights_digest={trainrt.digest(model.module.state_dict().values())}", flush=True)
