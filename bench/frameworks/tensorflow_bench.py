"""TensorFlow/Keras, three ways, for "Frameworks: an epoch through trainrt vs Ray and the
framework's own launcher" (bench/frameworks/README.md). BENCH_TF_SIDE is the way it runs:

  ray     a TensorflowTrainer(train_func, ScalingConfig(num_workers=2)) as Ray Train's TensorFlow
          guide has it, with Ray's venv; run.sh makes trainrt's copy with `sed 's/ray\\.train/trainrt/g'`
  native  TensorFlow has no launcher: run.sh starts this file twice, each with the TF_CONFIG a
          user writes by hand, and it calls train_func directly

The same model (the FashionMNIST recipe's MLP 784-512-512-10 under MultiWorkerMirroredStrategy,
Keras 2: TF_USE_LEGACY_KERAS=1), data (the first BENCH_TF_SAMPLES training images, decoded before
the clock starts, batch 32 per rank, a global batch of 64), seed and SGD on every side; one thread
per rank on every side (OMP_NUM_THREADS=1 for Ray and native, trainrt's compute threads). Rank 0
writes one JSON line per epoch to BENCH_TF_OUT: the epoch's wall time (Keras's on_epoch_begin to
on_epoch_end, after the report callback: the report is inside the time) and its loss.
"""
import gzip
import json
import os
import time

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

SIDE = os.environ.get("BENCH_TF_SIDE", "ray")
DATA = os.environ.get("BENCH_TF_DATA", "/usr/share/datasets/fashion-mnist")
EPOCHS = int(os.environ.get("BENCH_TF_EPOCHS", "3"))
SAMPLES = int(os.environ.get("BENCH_TF_SAMPLES", "60000"))


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
    return images.astype(np.float32) / 255.0, labels.astype(np.int64)


class EpochClock(tf.keras.callbacks.Callback):
    def __init__(self, rank, world):
        super().__init__()
        self.rank, self.world = rank, world

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        if self.rank == 0 and os.environ.get("BENCH_TF_OUT"):
            with open(os.environ["BENCH_TF_OUT"], "a") as out:
                out.write(json.dumps({"epoch": epoch, "seconds": time.perf_counter() - self.start,
                                      "loss": float(logs["loss"]), "world": self.world}) + "\n")


def train_func(config):
    tf.keras.utils.set_random_seed(0)
    images, labels = fashion()
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    world = strategy.num_replicas_in_sync
    rank = json.loads(os.environ["TF_CONFIG"])["task"]["index"] if "TF_CONFIG" in os.environ else 0
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input(shape=(784,)), tf.keras.layers.Dense(512, activation="relu"),
                                     tf.keras.layers.Dense(512, activation="relu"), tf.keras.layers.Dense(10)])
        model.compile(optimizer=tf.keras.optimizers.SGD(1e-3),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    callbacks = [EpochClock(rank, world)]
    if SIDE == "ray":
        from ray.train.tensorflow.keras import ReportCheckpointCallback
        callbacks.insert(0, ReportCheckpointCallback(checkpoint_on=[], report_metrics_on="epoch_end"))
    model.fit(images, labels, batch_size=32 * world, epochs=EPOCHS, verbose=0, callbacks=callbacks)


def main():
    if SIDE == "native":
        return train_func({})
    import ray.train
    from ray.train.tensorflow import TensorflowTrainer
    TensorflowTrainer(train_func, scaling_config=ray.train.ScalingConfig(num_workers=2),
                      run_config=ray.train.RunConfig(name=os.environ.get("BENCH_TF_NAME", "tensorflow_bench"),
                                                     storage_path=os.environ.get("BENCH_TF_STORAGE", "/tmp/tf_bench"))).fit()


if __name__ == "__main__":
    main()
