"""A PyTorch Lightning script as Ray Train's guide "Get Started with Distributed Training using
PyTorch Lightning" has its users write it (ray.train.lightning's RayDDPStrategy,
RayLightningEnvironment, RayTrainReportCallback and prepare_trainer; a TorchTrainer with
ScalingConfig(num_workers=2); the result's checkpoint loaded with load_from_checkpoint), resuming
from ray.train.get_checkpoint() as the guide's checkpointing section shows. Data: the local
FashionMNIST files (no downloads here), an MLP instead of the guide's ResNet-18 (2 CPU cores).
tests/python/test_python_lightning.sh runs it after `sed 's/ray\\.train/trainrt/g'`: from a plain
python3 (fit() starts the ranks), and its train_func as a trainrt workload under mpiexec.
LIGHTNING_* environment variables size the run for the test.
"""
import json
import os

import torch
from torch.utils.data import DataLoader
import lightning.pytorch as pl

import fashion_idx  # tests/python: the data files as tensors (a user's own loading)
import ray.train
import ray.train.lightning
from ray.train.torch import TorchTrainer

DATA = os.environ.get("LIGHTNING_DATA", "/usr/share/datasets/fashion-mnist")


def fashion(kind, limit):
    return fashion_idx.fashion(DATA, kind, limit, lambda pixels: (pixels - 0.5) / 0.5)


class ImageClassifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.model = torch.nn.Sequential(torch.nn.Linear(28 * 28, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
        self.criterion = torch.nn.CrossEntropyLoss()

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = self.criterion(self.forward(x), y)
        self.log("loss", loss, on_step=True, prog_bar=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.model.parameters(), lr=0.001)


def train_func(config):
    # The guide does not seed. Ray starts each worker's torch generator from a random seed, so its
    # losses change from run to run; seeded here (as a user who compares runs would) so that the
    # Ray and trainrt runs of tests/conformance/ray_guides.py can be compared number for number.
    pl.seed_everything(0)
    train_dataloader = DataLoader(fashion("train", config["samples"]), batch_size=64, shuffle=True)
    model = ImageClassifier()
    trainer = pl.Trainer(
        max_epochs=config["epochs"],
        devices="auto",
        accelerator="auto",
        strategy=ray.train.lightning.RayDDPStrategy(),
        plugins=[ray.train.lightning.RayLightningEnvironment()],
        callbacks=[ray.train.lightning.RayTrainReportCallback()],
        enable_checkpointing=False,
        enable_progress_bar=False,
        logger=False,
    )
    trainer = ray.train.lightning.prepare_trainer(trainer)
    checkpoint = ray.train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as ckpt_dir:
            ckpt_path = os.path.join(ckpt_dir, ray.train.lightning.RayTrainReportCallback.CHECKPOINT_NAME)
            trainer.fit(model, train_dataloaders=train_dataloader, ckpt_path=ckpt_path)
    else:
        trainer.fit(model, train_dataloaders=train_dataloader)


def main():
    config = {"epochs": int(os.environ.get("LIGHTNING_EPOCHS", "3")),
              "samples": int(os.environ.get("LIGHTNING_SAMPLES", "6000"))}
    trainer = TorchTrainer(
        train_func,
        train_loop_config=config,
        scaling_config=ray.train.ScalingConfig(num_workers=2),
        run_config=ray.train.RunConfig(name=os.environ.get("LIGHTNING_NAME", "lightning_guide"),
                                       storage_path=os.environ.get("LIGHTNING_STORAGE", "/tmp/lightning_runs")),
    )
    result = trainer.fit()

    with result.checkpoint.as_directory() as checkpoint_dir:
        model = ImageClassifier.load_from_checkpoint(
            os.path.join(checkpoint_dir, ray.train.lightning.RayTrainReportCallback.CHECKPOINT_NAME))
    test = fashion("test", 2000)
    model.eval()
    with torch.no_grad():
        accuracy = (model(test.tensors[0]).argmax(1) == test.tensors[1]).float().mean().item()
    losses = result.metrics_dataframe["loss"].tolist()
    epochs = result.metrics_dataframe["epoch"].tolist()
    print("LIGHTNING_GUIDE " + json.dumps({"epochs": epochs, "losses": losses, "accuracy": accuracy,
                                           "step": result.metrics["step"], "path": result.path}), flush=True)


if __name__ == "__main__":
    main()
