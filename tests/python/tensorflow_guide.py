"""A TensorFlow/Keras script as Ray Train's guide "Get Started with Distributed Training using
TensorFlow/Keras" has its users write it: a MultiWorkerMirroredStrategy in the training function,
the model built and compiled in its scope, the global batch size (worker batch x world size),
ray.train.tensorflow.keras.ReportCheckpointCallback reporting every epoch with the model as a
checkpoint, a TensorflowTrainer with ScalingConfig(num_workers=2), and the guide's "Load
checkpoints" step: the model loaded from ray.train.get_checkpoint() inside the strategy's scope
(the epoch to start at from the optimizer's step count, as a Keras user would), one fit() per epoch
as the guide's loop has it. Keras 2 (tf-keras, TF_USE_LEGACY_KERAS=1): Keras 3's fit() fails under
MultiWorkerMirroredStrategy with two workers, under Ray as under trainrt (keras-team/keras#20585).
Data: the local FashionMNIST files (no downloads here); an MLP. tests/python/test_python_tensorflow.sh
runs it after `sed 's/ray\\.train/trainrt/g'`: from a plain python3 (fit() starts the ranks), and
its train_func as a trainrt workload under mpiexec. TENSORFLOW_* environment variables size the run.
"""
import json
import math
import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # before TensorFlow is imported: tf.keras is Keras 2
import tensorflow as tf  # noqa: E402

import fashion_idx  # noqa: E402 - tests/python: the data files as arrays (a user's own loading)
import ray.train  # noqa: E402
from ray.train import ScalingConfig, RunConfig  # noqa: E402
from ray.train.tensorflow import TensorflowTrainer  # noqa: E402
from ray.train.tensorflow.keras import ReportCheckpointCallback  # noqa: E402

DATA = os.environ.get("TENSORFLOW_DATA", "/usr/share/datasets/fashion-mnist")
WORKER_BATCH = 64


def build_model():
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(28 * 28,)),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.001),
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    return model


def train_func(config):
    # The guide does not seed; Ray leaves TensorFlow unseeded, so its numbers change from run to
    # run. Seeded here (as a user who compares runs would) so that Ray's and trainrt's runs of
    # tests/conformance/ray_guides.py can be compared number for number.
    tf.keras.utils.set_random_seed(0)
    images, labels = fashion_idx.fashion_arrays(DATA, "train", config["samples"])
    global_batch = WORKER_BATCH * ray.train.get_context().get_world_size()
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        checkpoint = ray.train.get_checkpoint()
        if checkpoint:
            with checkpoint.as_directory() as checkpoint_dir:
                model = tf.keras.models.load_model(os.path.join(checkpoint_dir, "model.keras"))
        else:
            model = build_model()
    start = int(model.optimizer.iterations.numpy()) // math.ceil(len(images) / global_batch)
    for _ in range(start, config["epochs"]):
        model.fit(images, labels, batch_size=global_batch, verbose=0,
                  callbacks=[ReportCheckpointCallback(metrics=["loss", "accuracy"])])


def main():
    config = {"epochs": int(os.environ.get("TENSORFLOW_EPOCHS", "3")),
              "samples": int(os.environ.get("TENSORFLOW_SAMPLES", "6000"))}
    trainer = TensorflowTrainer(
        train_func,
        train_loop_config=config,
        scaling_config=ScalingConfig(num_workers=2),
        run_config=RunConfig(name=os.environ.get("TENSORFLOW_NAME", "tensorflow_guide"),
                             storage_path=os.environ.get("TENSORFLOW_STORAGE", "/tmp/tensorflow_runs")),
    )
    result = trainer.fit()

    with result.checkpoint.as_directory() as checkpoint_dir:
        model = tf.keras.models.load_model(os.path.join(checkpoint_dir, "model.keras"))
    test_images, test_labels = fashion_idx.fashion_arrays(DATA, "test", 2000)
    _, accuracy = model.evaluate(test_images, test_labels, verbose=0)
    frame = result.metrics_dataframe
    print("TENSORFLOW_GUIDE " + json.dumps({"losses": frame["loss"].tolist(), "accuracies": frame["accuracy"].tolist(),
                                   "test_accuracy": float(accuracy), "path": result.path}), flush=True)


if __name__ == "__main__":
    main()
