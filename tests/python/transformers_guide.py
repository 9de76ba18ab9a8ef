"""A Hugging Face Transformers script as Ray Train's guide "Get Started with Distributed Training
using Hugging Face Transformers" has its users write it: a transformers.Trainer inside the training
function with eval_strategy = save_strategy = "epoch", ray.train.huggingface.transformers'
RayTrainReportCallback and prepare_trainer, a TorchTrainer with ScalingConfig(num_workers=2), the
trained model loaded from the result's checkpoint with from_pretrained; resuming with
trainer.train(resume_from_checkpoint=...) from ray.train.get_checkpoint(). No hub downloads here:
a small BERT built from a BertConfig, token sequences made locally (label: whether token 7 occurs
in the first half), accuracy computed with numpy.
tests/python/test_python_transformers.sh runs it after `sed 's/ray\\.train/trainrt/g'`: from a plain
python3 (fit() starts the ranks), and its train_func as a trainrt workload under mpiexec.
TRANSFORMERS_* environment variables size the run for the test.
"""
import json
import os

import numpy as np
import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments, set_seed

import ray.train
import ray.train.huggingface.transformers
from ray.train.torch import TorchTrainer


class Sequences(torch.utils.data.Dataset):
    def __init__(self, count, seed, length=16, vocab=64):
        rng = np.random.default_rng(seed)
        self.ids = rng.integers(8, vocab, size=(count, length))
        self.labels = rng.integers(0, 2, size=count)
        for row, label in zip(self.ids, self.labels):
            if label:
                row[rng.integers(0, length // 2)] = 7

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": torch.tensor(self.ids[i]), "attention_mask": torch.ones(len(self.ids[i]), dtype=torch.long),
                "labels": torch.tensor(self.labels[i])}


def compute_metrics(eval_pred):
    logits, labels = eval_pred
    return {"accuracy": float((np.argmax(logits, axis=-1) == labels).mean())}


def make_model():
    return BertForSequenceClassification(BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2,
                                                    num_attention_heads=2, intermediate_size=64,
                                                    max_position_embeddings=32, num_labels=2))


def train_func(config):
    # Two lines the guide does not have, so that Ray's run and trainrt's can be compared number for
    # number: the model is seeded before it is built (Ray starts each worker's generator from a
    # random seed; the Trainer seeds only after the model exists), and use_cpu=True, as the workers
    # are CPU processes: without it, under Ray on a CPU-only machine the Trainer does not join
    # Ray's process group (each worker trains every sample), where under trainrt it does.
    set_seed(0)
    training_args = TrainingArguments(
        output_dir=config["output_dir"],
        eval_strategy="epoch",
        save_strategy="epoch",
        logging_strategy="epoch",
        num_train_epochs=config["epochs"],
        per_device_train_batch_size=16,
        learning_rate=config["lr"],
        report_to="none",
        use_cpu=True,
        disable_tqdm=True,
    )
    trainer = Trainer(
        model=make_model(),
        args=training_args,
        train_dataset=Sequences(config["samples"], seed=1),
        eval_dataset=Sequences(256, seed=2),
        compute_metrics=compute_metrics,
    )
    trainer.add_callback(ray.train.huggingface.transformers.RayTrainReportCallback())
    trainer = ray.train.huggingface.transformers.prepare_trainer(trainer)
    checkpoint = ray.train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as checkpoint_dir:
            trainer.train(resume_from_checkpoint=os.path.join(
                checkpoint_dir, ray.train.huggingface.transformers.RayTrainReportCallback.CHECKPOINT_NAME))
    else:
        trainer.train()


def main():
    config = {"epochs": int(os.environ.get("TRANSFORMERS_EPOCHS", "3")), "lr": 2e-3,
              "samples": int(os.environ.get("TRANSFORMERS_SAMPLES", "1024")),
              "output_dir": os.environ.get("TRANSFORMERS_OUT", "test_trainer")}
    ray_trainer = TorchTrainer(
        train_func,
        train_loop_config=config,
        scaling_config=ray.train.ScalingConfig(num_workers=2),
        run_config=ray.train.RunConfig(name=os.environ.get("TRANSFORMERS_NAME", "transformers_guide"),
                                       storage_path=os.environ.get("TRANSFORMERS_STORAGE", "/tmp/transformers_runs")),
    )
    result = ray_trainer.fit()

    with result.checkpoint.as_directory() as checkpoint_dir:
        checkpoint_path = os.path.join(checkpoint_dir,
                                       ray.train.huggingface.transformers.RayTrainReportCallback.CHECKPOINT_NAME)
        files = sorted(os.listdir(checkpoint_path))
        model = BertForSequenceClassification.from_pretrained(checkpoint_path)
    test = Sequences(256, seed=3)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor(test.ids)).logits
    accuracy = float((logits.argmax(-1).numpy() == test.labels).mean())
    frame = result.metrics_dataframe
    print("TRANSFORMERS_GUIDE " + json.dumps({"epochs": frame["epoch"].tolist(), "losses": frame["loss"].tolist(),
                                               "eval_accuracy": frame["eval_accuracy"].tolist(), "files": files,
                                               "step": int(result.metrics["step"]),
                                               "accuracy": accuracy}), flush=True)


if __name__ == "__main__":
    main()
