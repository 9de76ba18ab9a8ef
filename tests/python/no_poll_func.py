"""A training function written as a Ray Train user writes one: it never calls should_stop() and
never seeds anything. A small torch MLP (random initialisation, dropout, Adam) on a fixed
synthetic regression problem; one report with a state_dict checkpoint per epoch; resumes through
get_checkpoint(). With train.sleep_s each epoch takes that long, so a signal lands mid-run."""
import time

import numpy as np
import torch

import trainrt
from trainrt.torch import load_state, prepare_model, state_dict_checkpoint


def train(config):
    context = trainrt.get_context()
    data = np.random.default_rng(7)  # the problem, the same on every rank and in every run
    x = torch.from_numpy(data.standard_normal((256, 8)).astype(np.float32))
    y = x @ torch.from_numpy(data.standard_normal((8, 1)).astype(np.float32))
    mine = slice(context.world_rank, None, context.world_size)
    x, y = x[mine], y[mine]
    network = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                                  torch.nn.Linear(32, 1))  # initialised from torch's global generator
    model = prepare_model(network)
    optimizer = torch.optim.Adam(network.parameters(), lr=0.01)
    start = 0
    if (checkpoint := trainrt.get_checkpoint()) is not None:
        start = load_state(checkpoint, model=model, optimizer=optimizer)["epoch"]
    for epoch in range(start, config.get("epochs", 12)):
        model.train()
        for step in range(4):
            batch = slice(step * 16, (step + 1) * 16)
            loss = torch.nn.functional.mse_loss(model(x[batch]), y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        time.sleep(config.get("sleep_s", 0.0))
        trainrt.report({"epoch": epoch + 1, "loss": loss.item()},
                       checkpoint=state_dict_checkpoint(model=model, optimizer=optimizer, epoch=epoch + 1))
    if context.world_rank == 0:
        print(f"weights_digest={trainrt.digest(network.state_dict().values())}", flush=True)
