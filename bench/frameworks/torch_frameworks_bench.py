"""One training per PyTorch framework, three ways, for "Frameworks: an epoch through trainrt vs Ray
and the framework's own launcher" (bench/frameworks/README.md). BENCH_FW is the framework:

  deepspeed     deepspeed.initialize (ZeRO stage 2) on the model and an SGD optimizer
  accelerate    Accelerator().prepare on the model, the optimizer and the loader
  transformers  transformers.Trainer on a classifier head over the images (a PreTrainedModel)

and BENCH_FW_SIDE the way it runs:

  ray     a TorchTrainer(train_func, ScalingConfig(num_workers=2)) as Ray Train's guide for the
          framework has it, with Ray's venv; run.sh makes trainrt's copy with
          `sed 's/ray\\.train/trainrt/g'`
  native  the framework's own launcher starts this file on 2 processes (`deepspeed
          --num_accelerators 2`, `accelerate launch --multi_gpu
          --num_processes 2` (`--cpu` would start one process), `torchrun
          --nproc_per_node 2`), which calls train_func directly

The same model (the FashionMNIST recipe's MLP 784-512-512-10), data (the first BENCH_FW_SAMPLES
training images, decoded before the clock starts, batch 32 per rank, shuffled by a distributed
sampler) and seed on every side. Rank 0 writes one JSON line per epoch to BENCH_FW_OUT: the
epoch's wall time and its mean loss. Under Ray and trainrt each epoch ends with report() of its
metrics (no checkpoint), inside the time.
"""
import gzip
import json
import os
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

FRAMEWORK = os.environ.get("BENCH_FW", "deepspeed")
SIDE = os.environ.get("BENCH_FW_SIDE", "ray")
DATA = os.environ.get("BENCH_FW_DATA", "/usr/share/datasets/fashion-mnist")
EPOCHS = int(os.environ.get("BENCH_FW_EPOCHS", "3"))
SAMPLES = int(os.environ.get("BENCH_FW_SAMPLES", "60000"))


def read_idx(name, offset):
    path = os.path.join(DATA, name)
    if not os.path.exists(path):
        path += ".gz"
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as file:
        return np.frombuffer(file.read(), np.uint8, offset=offset)


def fashion():
    images = read_idx("train-images-idx3-ubyte", 16).reshape(-1, 28 * 28)[:SAMPLES]
    labels = read_idx("train-labels-idx1-ubyte", 8)[:SAMPLES]
    return TensorDataset(torch.from_numpy(images.astype(np.float32) / 255.0), torch.from_numpy(labels.astype(np.int64)))


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                               torch.nn.ReLU(), torch.nn.Linear(512, 10))


def rank():
    return torch.distributed.get_rank() if torch.distributed.is_initialized() else int(os.environ.get("RANK", "0"))


def epoch_done(epoch, seconds, loss, world):
    """Report (Ray and trainrt) and rank 0's line; the report is inside the caller's clock. world: the
    number of processes the framework itself trains on (1 where it does not see the others)."""
    if SIDE == "ray":
        import ray.train
        ray.train.report({"epoch": epoch, "loss": loss})
    if rank() == 0 and os.environ.get("BENCH_FW_OUT"):
        with open(os.environ["BENCH_FW_OUT"], "a") as out:
            out.write(json.dumps({"epoch": epoch, "seconds": time.perf_counter() - seconds, "loss": loss, "world": world,
                                  "threads": torch.get_num_threads()}) + "\n")


def train_deepspeed():
    import deepspeed
    model = mlp()
    engine, _, loader, _ = deepspeed.initialize(
        model=model, optimizer=torch.optim.SGD(model.parameters(), lr=1e-3), training_data=fashion(),
        config={"train_micro_batch_size_per_gpu": 32, "zero_optimization": {"stage": 2},
                "zero_allow_untested_optimizer": True})
    criterion = torch.nn.CrossEntropyLoss()
    for epoch in range(EPOCHS):
        start, total, batches = time.perf_counter(), 0.0, 0
        loader.data_sampler.set_epoch(epoch)
        for x, y in loader:
            loss = criterion(engine(x), y)
            engine.backward(loss)
            engine.step()
            total, batches = total + loss.item(), batches + 1
        epoch_done(epoch, start, total / batches, engine.world_size)


def train_accelerate():
    from accelerate import Accelerator
    accelerator = Accelerator(cpu=True)
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    loader = DataLoader(fashion(), batch_size=32, shuffle=True, generator=torch.Generator().manual_seed(0))
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    criterion = torch.nn.CrossEntropyLoss()
    for epoch in range(EPOCHS):
        start, total, batches = time.perf_counter(), 0.0, 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            accelerator.backward(loss)
            optimizer.step()
            total, batches = total + loss.item(), batches + 1
        epoch_done(epoch, start, total / batches, accelerator.num_processes)


def train_transformers():
    import transformers

    class Classifier(transformers.PreTrainedModel):
        config_class = transformers.PretrainedConfig

        def __init__(self, config):
            super().__init__(config)
            self.body = mlp()

        def forward(self, pixels, labels=None):
            logits = self.body(pixels)
            return {"loss": torch.nn.functional.cross_entropy(logits, labels), "logits": logits}

    class EpochClock(transformers.TrainerCallback):
        def on_epoch_begin(self, args, state, control, **kwargs):
            self.start, self.first_step = time.perf_counter(), state.global_step

        def on_log(self, args, state, control, logs=None, **kwargs):
            # logging_strategy="epoch" logs the epoch's mean loss right after on_epoch_end
            if logs and "loss" in logs:
                epoch_done(int(round(state.epoch)) - 1, self.start, logs["loss"], args.world_size)

    images = fashion()
    dataset = [{"pixels": x, "labels": y} for x, y in zip(images.tensors[0], images.tensors[1])]
    arguments = transformers.TrainingArguments(
        output_dir=os.environ.get("BENCH_FW_TMP", "/tmp/fw_bench_out"), per_device_train_batch_size=32,
        num_train_epochs=EPOCHS, learning_rate=1e-3, optim="sgd", lr_scheduler_type="constant", logging_strategy="epoch",
        save_strategy="no", report_to=[], use_cpu=True, seed=0, dataloader_num_workers=0, disable_tqdm=True)
    trainer = transformers.Trainer(model=Classifier(transformers.PretrainedConfig()), args=arguments,
                                   train_dataset=dataset, callbacks=[EpochClock()])
    trainer.train()


TRAIN = {"deepspeed": train_deepspeed, "accelerate": train_accelerate, "transformers": train_transformers}


def train_func(config):
    TRAIN[FRAMEWORK]()


def main():
    if SIDE == "native":
        torch.set_num_threads(1)  # one core per rank, as trainrt's and Ray's ranks have on 2 cores
        return train_func({})
    import ray.train
    from ray.train.torch import TorchTrainer
    TorchTrainer(train_func, scaling_config=ray.train.ScalingConfig(num_workers=2),
                 run_config=ray.train.RunConfig(name=os.environ.get("BENCH_FW_NAME", f"{FRAMEWORK}_bench"),
                                                storage_path=os.environ.get("BENCH_FW_STORAGE", "/tmp/fw_bench"))).fit()


if __name__ == "__main__":
    main()
