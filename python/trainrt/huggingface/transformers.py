"""Ray Train's Hugging Face Transformers integration (`ray.train.huggingface.transformers`) on
trainrt (docs/guides/transformers.md):

    from trainrt.huggingface.transformers import RayTrainReportCallback, prepare_trainer

    def train_func(config):
        trainer = transformers.Trainer(model=model, args=TrainingArguments(..., save_strategy="epoch"),
                                       train_dataset=..., eval_dataset=...)
        trainer.add_callback(RayTrainReportCallback())
        trainer = prepare_trainer(trainer)
        checkpoint = trainrt.get_checkpoint()
        if checkpoint:
            with checkpoint.as_directory() as d:
                trainer.train(resume_from_checkpoint=os.path.join(d, RayTrainReportCallback.CHECKPOINT_NAME))
        else:
            trainer.train()

TrainingArguments find trainrt's process group and ranks (RANK, WORLD_SIZE, LOCAL_RANK and the
rest, set before the function runs); the Trainer's checkpoints become trainrt's directory
checkpoints through the callback.
"""
import os
import shutil
import tempfile

import torch
import transformers.trainer
from transformers.trainer_callback import TrainerCallback

import trainrt

__all__ = ["prepare_trainer", "RayTrainReportCallback"]


class RayTrainReportCallback(TrainerCallback):
    """After each checkpoint the Trainer saves (its save_strategy), trainrt.report() on every rank:
    the metrics of TrainerState.log_history merged (later entries win, as Ray merges them), and
    the Trainer's checkpoint-<global_step> folder as CHECKPOINT_NAME in a directory checkpoint.
    Each rank reports the files it wrote: the world's process 0 the folder (model, optimizer,
    scheduler, trainer state, its random states), every other rank its own rng_state_<rank>.pth,
    so the union holds every rank's random states without a rank copying a file another rank may
    still be writing or that lives on another node."""

    CHECKPOINT_NAME = "checkpoint"

    def on_save(self, args, state, control, **kwargs):
        metrics = {}
        for entry in state.log_history:
            metrics.update(entry)
        source = os.path.join(args.output_dir, f"{transformers.trainer.PREFIX_CHECKPOINT_DIR}-{state.global_step}")
        rank = trainrt.get_context().get_world_rank()
        own_states = os.path.join(source, f"rng_state_{rank}.pth")
        if not os.path.exists(source if rank == 0 else own_states):  # nothing this rank wrote
            trainrt.report(metrics, checkpoint=None)
            return
        with tempfile.TemporaryDirectory(prefix="trainrt-transformers-") as folder:
            target = os.path.join(folder, self.CHECKPOINT_NAME)
            if rank == 0:
                shutil.copytree(source, target, ignore=_other_ranks_random_states)
            else:
                os.makedirs(target)
                shutil.copy2(own_states, target)
            trainrt.report(metrics, checkpoint=trainrt.Checkpoint.from_directory(folder))


def _other_ranks_random_states(folder, names):
    return [name for name in names if name.startswith("rng_state_") and name != "rng_state_0.pth"]


def prepare_trainer(trainer):
    """Ray's prepare_trainer: a Trainer whose train or eval dataset is a shard's batch iterable
    (trainrt.get_dataset_shard(name).iter_torch_batches(...), Ray Data) gets data loaders that pass
    those batches on as they come (each pass over the loader is the shard's next epoch; the
    TrainingArguments need max_steps, as Ray's guide says); a Trainer over torch or `datasets`
    datasets is returned as it is."""
    if not isinstance(trainer, transformers.trainer.Trainer):
        raise TypeError(f"trainrt.huggingface.transformers.prepare_trainer: expected a transformers.Trainer, "
                        f"got {type(trainer).__name__}")
    from .._raydata.iterator import BatchIterable
    for which, method in (("train_dataset", "get_train_dataloader"), ("eval_dataset", "get_eval_dataloader")):
        dataset = getattr(trainer, which, None)
        if isinstance(dataset, BatchIterable):
            setattr(trainer, which, _ShardBatches(dataset))
            setattr(trainer, method, _batch_loader(getattr(trainer, which)))
    return trainer


class _ShardBatches(torch.utils.data.IterableDataset):
    """A shard's batches as a torch IterableDataset (what Transformers' Trainer takes)."""

    def __init__(self, batches):
        super().__init__()
        self.batches = batches

    def __iter__(self):
        return iter(self.batches)


def _batch_loader(dataset):
    """get_train_dataloader / get_eval_dataloader: the batches as they are (one batch per item)."""
    def loader(*args, **kwargs):
        return torch.utils.data.DataLoader(dataset, batch_size=None)
    return loader
