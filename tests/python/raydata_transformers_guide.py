"""The Hugging Face Transformers tab of Ray Train's "Data Loading and Preprocessing" guide: Ray
Datasets made in the driver (ray.data.from_items of token sequences), passed to a TorchTrainer as
datasets=, and in the function each shard's iter_torch_batches given to transformers.Trainer as its
train and eval datasets, TrainingArguments with max_steps ("required for iterable datasets"),
ray.train.huggingface.transformers.prepare_trainer adapting the Trainer to them, and the
RayTrainReportCallback reporting at each save. A small BERT from a BertConfig (no hub downloads).
Ray hands rows to its workers as they ask, so the losses are Ray's own; the steps, the reports and
the checkpoint's files are compared (tests/conformance/ray_guides.py).
tests/python/test_python_raydata.sh runs it after the port; RAYDATA_TRANSFORMERS_* variables place the run.
"""
import json
import os

import numpy as np
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments, set_seed

import ray
import ray.train
import ray.train.huggingface.transformers
from ray.train import RunConfig, ScalingConfig
from ray.train.torch import TorchTrainer

STORAGE = os.environ.get("RAYDATA_TRANSFORMERS_STORAGE", os.path.abspath("runs"))
NAME = os.environ.get("RAYDATA_TRANSFORMERS_NAME", "raydata_transformers")


def sequences(count, seed, length=16, vocab=64):
    """Rows {input_ids, attention_mask, labels}: label 1 when token 7 is in the first half."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(8, vocab, size=(count, length))
    labels = rng.integers(0, 2, size=count)
    for row, label in zip(ids, labels):
        if label:
            row[rng.integers(0, length // 2)] = 7
    return [{"input_ids": row.tolist(), "attention_mask": [1] * length, "labels": int(label)}
            for row, label in zip(ids, labels)]


def train_func(config):
    set_seed(0)
    train_ds = ray.train.get_dataset_shard("train")
    eval_ds = ray.train.get_dataset_shard("evaluation")
    train_iterable_ds = train_ds.iter_torch_batches(batch_size=16)
    eval_iterable_ds = eval_ds.iter_torch_batches(batch_size=16)
    args = TrainingArguments(output_dir=config["output_dir"], max_steps=config["max_steps"], eval_strategy="steps",
                             eval_steps=4, save_strategy="steps", save_steps=4, logging_steps=4, learning_rate=2e-3,
                             report_to="none", use_cpu=True, disable_tqdm=True)
    model = BertForSequenceClassification(BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2,
                                                     num_attention_heads=2, intermediate_size=64,
                                                     max_position_embeddings=32, num_labels=2))
    trainer = Trainer(model=model, args=args, train_dataset=train_iterable_ds, eval_dataset=eval_iterable_ds)
    trainer.add_callback(ray.train.huggingface.transformers.RayTrainReportCallback())
    trainer = ray.train.huggingface.transformers.prepare_trainer(trainer)
    trainer.train()


def main():
    ray.init(num_cpus=4)  # Ray Data's tasks need CPUs beside the two workers' (see raydata_guide.py)
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    ray_train_ds = ray.data.from_items(sequences(256, seed=1))
    ray_eval_ds = ray.data.from_items(sequences(64, seed=2))
    trainer = TorchTrainer(
        train_func,
        train_loop_config={"max_steps": 12, "output_dir": os.path.join(STORAGE, "hf_out")},
        datasets={"train": ray_train_ds, "evaluation": ray_eval_ds},
        scaling_config=ScalingConfig(num_workers=2),
        run_config=RunConfig(name=NAME, storage_path=STORAGE),
    )
    result = trainer.fit()
    frame = result.metrics_dataframe
    with result.checkpoint.as_directory() as checkpoint_dir:
        files = sorted(os.listdir(os.path.join(
            checkpoint_dir, ray.train.huggingface.transformers.RayTrainReportCallback.CHECKPOINT_NAME)))
    print("RAYDATA_TRANSFORMERS_GUIDE " + json.dumps({
        "steps": [int(step) for step in frame["step"]], "reports": len(frame), "files": files,
        "eval_loss": [float(x) for x in frame["eval_loss"]]}), flush=True)


if __name__ == "__main__":
    main()
