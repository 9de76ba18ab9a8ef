"""A training function written as a Ray Train user writes one: it never calls should_stop(), never
seeds anything, and saves the model, the optimizer and `epoch` (not the loader); it calls
loader.sampler.set_epoch(epoch) as Ray's quickstart does (not with train.set_epoch = false). A
small torch MLP (random initialisation, dropout, Adam) on a fixed synthetic regression problem
through a shuffled, prepared DataLoader; one report with a state_dict checkpoint per epoch;
resumes through get_checkpoint() (not with train.resume = false: a function that ignores
checkpoints). With train.sleep_s each epoch takes that long, so a signal lands mid-run."""
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

import trainrt
from trainrt.torch import load_state, prepare_data_loader, prepare_model, state_dict_checkpoint


def train(config):
    data = np.random.default_rng(7)  # the problem, the same on every rank and in every run
    x = torch.from_numpy(data.standard_normal((256, 8)).astype(np.float32))
    y = x @ torch.from_numpy(data.standard_normal((8, 1)).astype(np.float32))
    loader = prepare_data_loader(DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True))
    network = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                                  torch.nn.Linear(32, 1))  # initialised from torch's global generator
    model = prepare_model(network)
    optimizer = torch.optim.Adam(network.parameters(), lr=0.01)
    start = 0
    if config.get("resume", True) and (checkpoint := trainrt.get_checkpoint()) is not None:
        start = load_state(checkpoint, model=model, optimizer=optimizer)["epoch"]
    for epoch in range(start, config.get("epochs", 12)):
        if config.get("set_epoch", True):
            loader.sampler.set_epoch(epoch)
        model.train()
        for xb, yb in loader:
            loss = torch.nn.functional.mse_loss(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        time.sleep(config.get("sleep_s", 0.0))
        trainrt.report({"epoch": epoch + 1, "loss": loss.item()},
                       checkpoint=state_dict_checkpoint(model=model, optimizer=optimizer, epoch=epoch + 1))
    if trainrt.get_context().world_rank == 0:
        print(f"weights_digest={trainrt.digest(network.state_dict().values())}", flush=True)
