"""A PyTorch 2.x script in Ray Train's shape with FSDP2 and torch.distributed.checkpoint: the model
sharded by torch.distributed.fsdp.fully_shard (each Linear, then the whole) over the process group
the trainer set up, its parameters DTensors; each epoch every rank saves its shards with
torch.distributed.checkpoint.save (get_state_dict of model and optimizer) into its own directory,
reported with ray.train.report(metrics, checkpoint=Checkpoint.from_directory(dir)); on a restart
torch.distributed.checkpoint.load from ray.train.get_checkpoint() and set_state_dict. The data
sharded with a DistributedSampler and set_epoch, as a user writes it without prepare_data_loader.
Data: the local FashionMNIST files, an MLP on 2 CPU cores (FSDP1, torch's FullyShardedDataParallel,
refuses a CPU-only process; fully_shard does not).
tests/python/test_python_fsdp2.sh runs it after `sed 's/ray\\.train/trainrt/g'`: from a plain
python3 (fit() starts the ranks), and its train_func as a trainrt workload under mpiexec.
FSDP2_* environment variables size the run for the test.
"""
import json
import os
import tempfile

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.fsdp import fully_shard
from torch.utils.data import DataLoader, DistributedSampler

import fashion_idx  # tests/python: the data files as tensors (a user's own loading)
import ray.train
from ray.train.torch import TorchTrainer

DATA = os.environ.get("FSDP2_DATA", "/usr/share/datasets/fashion-mnist")


def fashion(kind, limit):
    return fashion_idx.fashion(DATA, kind, limit)


def make_model():
    return torch.nn.Sequential(torch.nn.Linear(28 * 28, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))


def train_func(config):
    torch.manual_seed(0)
    model = make_model()
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"])
    dataset = fashion("train", config["samples"])
    sampler = DistributedSampler(dataset, num_replicas=dist.get_world_size(), rank=dist.get_rank(), seed=0)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)

    start_epoch = 0
    checkpoint = ray.train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            model_state, optimizer_state = get_state_dict(model, optimizer)
            state = {"model": model_state, "optimizer": optimizer_state}
            dcp.load(state, checkpoint_id=checkpoint_dir)
            set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optimizer"])
            with open(os.path.join(checkpoint_dir, "epoch.json")) as f:
                start_epoch = json.load(f)["epoch"] + 1

    loss_fn = torch.nn.CrossEntropyLoss()
    for epoch in range(start_epoch, config["epochs"]):
        sampler.set_epoch(epoch)
        total, batches = 0.0, 0
        for x, y in loader:
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total, batches = total + loss.item(), batches + 1

        with tempfile.TemporaryDirectory() as checkpoint_dir:
            model_state, optimizer_state = get_state_dict(model, optimizer)
            dcp.save({"model": model_state, "optimizer": optimizer_state}, checkpoint_id=checkpoint_dir)
            if dist.get_rank() == 0:
                with open(os.path.join(checkpoint_dir, "epoch.json"), "w") as f:
                    json.dump({"epoch": epoch}, f)
            sharded = type(model[0].weight).__name__
            ray.train.report({"epoch": epoch, "loss": total / batches, "parameters": sharded},
                             checkpoint=ray.train.Checkpoint.from_directory(checkpoint_dir))


def main():
    config = {"epochs": int(os.environ.get("FSDP2_EPOCHS", "3")), "lr": 1e-3,
              "samples": int(os.environ.get("FSDP2_SAMPLES", "6000"))}
    trainer = TorchTrainer(
        train_func,
        train_loop_config=config,
        scaling_config=ray.train.ScalingConfig(num_workers=2),
        run_config=ray.train.RunConfig(name=os.environ.get("FSDP2_NAME", "fsdp2_guide"),
                                       storage_path=os.environ.get("FSDP2_STORAGE", "/tmp/fsdp2_runs")),
    )
    result = trainer.fit()

    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
    with result.checkpoint.as_directory() as checkpoint_dir:
        files = sorted(os.listdir(checkpoint_dir))
        with tempfile.TemporaryDirectory() as out:
            dcp_to_torch_save(checkpoint_dir, os.path.join(out, "full.pt"))  # no process group: one process
            state = torch.load(os.path.join(out, "full.pt"), weights_only=True)
    model = make_model()
    model.load_state_dict(state["model"])
    test = fashion("test", 2000)
    with torch.no_grad():
        accuracy = (model(test.tensors[0]).argmax(1) == test.tensors[1]).float().mean().item()
    frame = result.metrics_dataframe
    print("FSDP2_GUIDE " + json.dumps({"epochs": frame["epoch"].tolist(), "losses": frame["loss"].tolist(),
                                        "parameters": result.metrics["parameters"], "files": files,
                                        "accuracy": accuracy}), flush=True)


if __name__ == "__main__":
    main()
