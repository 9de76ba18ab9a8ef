"""A DeepSpeed script as Ray Train's guide "Get Started with DeepSpeed" has its users write it:
deepspeed.initialize(model=, model_parameters=, training_data=, config=) inside the training
function on the process group the trainer set up, ZeRO stage 3 (the guide's example; the stage is
a config key here), batches moved to get_accelerator().device_name(model.local_rank), and each
epoch every rank's model.save_checkpoint(dir) (its own shard) reported with
ray.train.report(metrics, checkpoint=Checkpoint.from_directory(dir)); on a restart
model.load_checkpoint() from ray.train.get_checkpoint(). The driver consolidates the ZeRO shards of
the last checkpoint with DeepSpeed's own zero_to_fp32 and classifies the test images.
Data: the local FashionMNIST files (the guide fine-tunes BERT from the Hugging Face hub, which
cannot be reached here), an MLP on 2 CPU cores, fp32 (DeepSpeed's fp16 needs a GPU).
tests/python/test_python_deepspeed.sh runs it after `sed 's/ray\\.train/trainrt/g'`: from a plain
python3 (fit() starts the ranks), and its train_func as a trainrt workload under mpiexec.
DEEPSPEED_* environment variables size the run for the test.
"""
import json
import os
import tempfile

import deepspeed
import torch
from deepspeed.accelerator import get_accelerator

import fashion_idx  # tests/python: the data files as tensors (a user's own loading)
import ray.train
from ray.train.torch import TorchTrainer

DATA = os.environ.get("DEEPSPEED_DATA", "/usr/share/datasets/fashion-mnist")


def fashion(kind, limit):
    return fashion_idx.fashion(DATA, kind, limit)


def make_model():
    return torch.nn.Sequential(torch.nn.Linear(28 * 28, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))


def deepspeed_config(config):
    return {
        # torch_adam: PyTorch's AdamW; DeepSpeed's fused Adam is a CUDA kernel
        "optimizer": {"type": "AdamW", "params": {"lr": config["lr"], "torch_adam": True}},
        "scheduler": {"type": "WarmupLR", "params": {"warmup_min_lr": 0, "warmup_max_lr": config["lr"],
                                                     "warmup_num_steps": 100}},
        "zero_optimization": {"stage": config.get("zero_stage", 3)},
        "gradient_clipping": 1.0,
        "train_micro_batch_size_per_gpu": 64,
        "steps_per_print": 1000000,
    }


def train_func(config):
    torch.manual_seed(0)  # every rank builds the same initial model, as the guide's set_seed does
    model = make_model()
    model, optimizer, train_dataloader, lr_scheduler = deepspeed.initialize(
        model=model,
        model_parameters=model.parameters(),
        training_data=fashion("train", config["samples"]),
        config=deepspeed_config(config),
    )
    device = get_accelerator().device_name(model.local_rank)

    start_epoch = 0
    checkpoint = ray.train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            _, client_state = model.load_checkpoint(checkpoint_dir)
            start_epoch = client_state["epoch"] + 1

    loss_fn = torch.nn.CrossEntropyLoss()
    for epoch in range(start_epoch, config["epochs"]):
        model.train()
        total, batches = 0.0, 0
        for x, y in train_dataloader:
            loss = loss_fn(model(x.to(device)), y.to(device))
            model.backward(loss)
            model.step()
            total, batches = total + loss.item(), batches + 1

        with tempfile.TemporaryDirectory() as checkpoint_dir:
            model.save_checkpoint(checkpoint_dir, client_state={"epoch": epoch})
            ray.train.report({"epoch": epoch, "loss": total / batches, "lr": lr_scheduler.get_last_lr()[0],
                              "zero_stage": model.zero_optimization_stage(), "world": model.world_size,
                              "device": str(device)},
                             checkpoint=ray.train.Checkpoint.from_directory(checkpoint_dir))


def main():
    config = {"epochs": int(os.environ.get("DEEPSPEED_EPOCHS", "3")), "lr": 1e-3,
              "samples": int(os.environ.get("DEEPSPEED_SAMPLES", "6000")), "zero_stage": 3}
    trainer = TorchTrainer(
        train_func,
        train_loop_config=config,
        scaling_config=ray.train.ScalingConfig(num_workers=2),
        run_config=ray.train.RunConfig(name=os.environ.get("DEEPSPEED_NAME", "deepspeed_guide"),
                                       storage_path=os.environ.get("DEEPSPEED_STORAGE", "/tmp/deepspeed_runs")),
    )
    result = trainer.fit()

    from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint
    with result.checkpoint.as_directory() as checkpoint_dir:
        files = sorted(os.path.relpath(os.path.join(root, name), checkpoint_dir)
                       for root, _, names in os.walk(checkpoint_dir) for name in names)
        model = make_model()
        model.load_state_dict(get_fp32_state_dict_from_zero_checkpoint(checkpoint_dir))
    test = fashion("test", 2000)
    with torch.no_grad():
        accuracy = (model(test.tensors[0]).argmax(1) == test.tensors[1]).float().mean().item()
    frame = result.metrics_dataframe
    print("DEEPSPEED_GUIDE " + json.dumps({"epochs": frame["epoch"].tolist(), "losses": frame["loss"].tolist(),
                                            "lrs": frame["lr"].tolist(), "zero_stage": result.metrics["zero_stage"],
                                            "world": result.metrics["world"], "files": files,
                                            "accuracy": accuracy}), flush=True)


if __name__ == "__main__":
    main()
