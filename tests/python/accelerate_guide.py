"""A Hugging Face Accelerate script as Ray Train's guide "Get Started with Distributed Training
using Hugging Face Accelerate" has its users write it: an Accelerator() inside the training
function (its loader's sampler seedable, as Accelerate's reproducibility notes advise),
accelerator.prepare(model, optimizer, train_dataloader, lr_scheduler), no Ray Train prepare_* utilities; each epoch accelerator.save_state(dir) reported with
ray.train.report(metrics, checkpoint=Checkpoint.from_directory(dir)) and, on a restart,
accelerator.load_state() from ray.train.get_checkpoint(). Data: the local FashionMNIST files (no
downloads here), the recipe's MLP on 2 CPU cores.
tests/python/test_python_accelerate.sh runs it after `sed 's/ray\\.train/trainrt/g'`: from a plain
python3 (fit() starts the ranks), and its train_func as a trainrt workload under mpiexec.
ACCELERATE_* environment variables size the run for the test.
"""
import json
import os
import tempfile

import torch
from torch.utils.data import DataLoader
from accelerate import Accelerator, DeepSpeedPlugin
from accelerate.utils import DataLoaderConfiguration, set_seed

import fashion_idx  # tests/python: the data files as tensors (a user's own loading)
import ray.train
from ray.train.torch import TorchTrainer

DATA = os.environ.get("ACCELERATE_DATA", "/usr/share/datasets/fashion-mnist")


def fashion(kind, limit):
    return fashion_idx.fashion(DATA, kind, limit)


def make_model():
    return torch.nn.Sequential(torch.nn.Linear(28 * 28, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))


def train_func(config):
    # A seedable sampler: each epoch's order from (seed, epoch), so a resumed epoch is shuffled as the
    # uninterrupted run's was (Accelerate does not save its default loader's generator)
    # The guide's DeepSpeed tab when config["zero_stage"] is given: a DeepSpeedPlugin from a DeepSpeed
    # config dict (on CPU ranks the job sets ACCELERATE_USE_DEEPSPEED=true, docs/guides/accelerate.md)
    deepspeed_plugin = None
    if "zero_stage" in config:
        deepspeed_plugin = DeepSpeedPlugin(hf_ds_config={
            "train_micro_batch_size_per_gpu": 64, "gradient_accumulation_steps": 1,
            "zero_optimization": {"stage": config["zero_stage"]}})
    # Two lines the guide does not have, so that Ray's run and trainrt's can be compared number for
    # number: the model seeded before it is built (Ray starts each worker's generator from a random
    # seed), and cpu=True for the CPU workers: without it, under Ray on a CPU-only machine the
    # Accelerator sees one process (each worker trains every sample), where under trainrt it sees
    # the ranks. (The DeepSpeed tab keeps Accelerate's own choice: DeepSpeed is its own backend.)
    set_seed(0)
    accelerator = Accelerator(dataloader_config=DataLoaderConfiguration(use_seedable_sampler=True),
                              deepspeed_plugin=deepspeed_plugin, cpu=deepspeed_plugin is None)
    model = make_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"])
    train_dataloader = DataLoader(fashion("train", config["samples"]), batch_size=64, shuffle=True)
    lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, lr_scheduler)

    start_epoch = 0
    checkpoint = ray.train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            accelerator.load_state(checkpoint_dir)
            with open(os.path.join(checkpoint_dir, "epoch.json")) as f:
                start_epoch = json.load(f)["epoch"] + 1

    loss_fn = torch.nn.CrossEntropyLoss()
    for epoch in range(start_epoch, config["epochs"]):
        train_dataloader.set_epoch(epoch)
        model.train()
        total, batches = 0.0, 0
        for x, y in train_dataloader:
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            accelerator.backward(loss)
            optimizer.step()
            total, batches = total + loss.item(), batches + 1
        lr_scheduler.step()

        with tempfile.TemporaryDirectory() as checkpoint_dir:
            accelerator.save_state(checkpoint_dir)
            if accelerator.is_main_process:
                with open(os.path.join(checkpoint_dir, "epoch.json"), "w") as f:
                    json.dump({"epoch": epoch}, f)
            ray.train.report({"epoch": epoch, "loss": total / batches, "lr": lr_scheduler.get_last_lr()[0],
                              "processes": accelerator.num_processes, "device": str(accelerator.device),
                              "distributed": accelerator.distributed_type.value},
                             checkpoint=ray.train.Checkpoint.from_directory(checkpoint_dir))


def main():
    config = {"epochs": int(os.environ.get("ACCELERATE_EPOCHS", "3")), "lr": 1e-3,
              "samples": int(os.environ.get("ACCELERATE_SAMPLES", "6000"))}
    trainer = TorchTrainer(
        train_func,
        train_loop_config=config,
        scaling_config=ray.train.ScalingConfig(num_workers=2),
        run_config=ray.train.RunConfig(name=os.environ.get("ACCELERATE_NAME", "accelerate_guide"),
                                       storage_path=os.environ.get("ACCELERATE_STORAGE", "/tmp/accelerate_runs")),
    )
    result = trainer.fit()

    with result.checkpoint.as_directory() as checkpoint_dir:
        files = sorted(os.listdir(checkpoint_dir))
        from safetensors.torch import load_file
        model = make_model()
        model.load_state_dict(load_file(os.path.join(checkpoint_dir, "model.safetensors")))
    test = fashion("test", 2000)
    with torch.no_grad():
        accuracy = (model(test.tensors[0]).argmax(1) == test.tensors[1]).float().mean().item()
    frame = result.metrics_dataframe
    print("ACCELERATE_GUIDE " + json.dumps({"epochs": frame["epoch"].tolist(), "losses": frame["loss"].tolist(),
                                             "lrs": frame["lr"].tolist(), "processes": result.metrics["processes"],
                                             "files": files, "accuracy": accuracy}), flush=True)


if __name__ == "__main__":
    main()
