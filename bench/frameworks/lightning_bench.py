"""One Lightning training three ways, for "Frameworks: an epoch through trainrt vs Ray and the
framework's own launcher" (bench/frameworks/README.md):

  BENCH_LT_SIDE=ray      as Ray Train's Lightning guide has it (TorchTrainer, RayDDPStrategy,
                         RayLightningEnvironment, RayTrainReportCallback, prepare_trainer), with
                         Ray's venv; run.sh makes trainrt's copy with `sed 's/ray\\.train/trainrt/g'`
  BENCH_LT_SIDE=native   Lightning's own DDP launcher: Trainer(strategy="ddp", devices=2,
                         accelerator="cpu") started as `python3 lightning_bench.py`

The same LightningModule (the FashionMNIST recipe's MLP 784-512-512-10, SGD lr 1e-3, batch 32 per
rank), the same data (the first BENCH_LT_SAMPLES training images, decoded before the clock
starts), seeded with pl.seed_everything(0) so that every side trains the same model. Rank 0 writes
one JSON line per epoch to BENCH_LT_OUT: the epoch's wall time (on_train_epoch_start to
on_train_epoch_end, the report included where there is one) and the loss logged at its last step.
"""
import gzip
import json
import os
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset
import lightning.pytorch as pl

SIDE = os.environ.get("BENCH_LT_SIDE", "ray")
DATA = os.environ.get("BENCH_LT_DATA", "/usr/share/datasets/fashion-mnist")
EPOCHS = int(os.environ.get("BENCH_LT_EPOCHS", "3"))
SAMPLES = int(os.environ.get("BENCH_LT_SAMPLES", "60000"))


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


class Recipe(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = torch.nn.Sequential(torch.nn.Linear(784, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                         torch.nn.ReLU(), torch.nn.Linear(512, 10), torch.nn.ReLU())
        self.criterion = torch.nn.CrossEntropyLoss()

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.criterion(self.model(x), y)
        self.log("loss", loss, on_step=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.model.parameters(), lr=1e-3)


class EpochTimer(pl.callbacks.Callback):
    """Rank 0's epoch wall times; registered after the report callback, so a report is inside."""

    def on_train_epoch_start(self, trainer, pl_module):
        self.start = time.perf_counter()

    def on_train_epoch_end(self, trainer, pl_module):
        seconds = time.perf_counter() - self.start
        if trainer.global_rank == 0 and os.environ.get("BENCH_LT_OUT"):
            with open(os.environ["BENCH_LT_OUT"], "a") as out:
                out.write(json.dumps({"epoch": trainer.current_epoch, "seconds": seconds,
                                      "loss": trainer.callback_metrics["loss"].item(),
                                      "threads": torch.get_num_threads()}) + "\n")


def trainer_kwargs():
    return dict(max_epochs=EPOCHS, enable_checkpointing=False, enable_progress_bar=False, logger=False,
                enable_model_summary=False)


def train_func(config):
    import ray.train.lightning
    pl.seed_everything(0)
    loader = DataLoader(fashion(), batch_size=32, shuffle=True)
    trainer = pl.Trainer(devices="auto", accelerator="auto", strategy=ray.train.lightning.RayDDPStrategy(),
                         plugins=[ray.train.lightning.RayLightningEnvironment()],
                         callbacks=[ray.train.lightning.RayTrainReportCallback(), EpochTimer()], **trainer_kwargs())
    trainer = ray.train.lightning.prepare_trainer(trainer)
    trainer.fit(Recipe(), train_dataloaders=loader)


def native():
    pl.seed_everything(0)
    loader = DataLoader(fashion(), batch_size=32, shuffle=True)
    trainer = pl.Trainer(devices=2, accelerator="cpu", strategy="ddp", callbacks=[EpochTimer()], **trainer_kwargs())
    trainer.fit(Recipe(), train_dataloaders=loader)


def main():
    if SIDE == "native":
        torch.set_num_threads(1)  # one core per rank, as trainrt's and Ray's ranks have on 2 cores
        return native()
    import ray.train
    from ray.train.torch import TorchTrainer
    TorchTrainer(train_func, scaling_config=ray.train.ScalingConfig(num_workers=2),
                 run_config=ray.train.RunConfig(name=os.environ.get("BENCH_LT_NAME", "lightning_bench"),
                                                storage_path=os.environ.get("BENCH_LT_STORAGE", "/tmp/lt_bench"))).fit()


if __name__ == "__main__":
    main()
