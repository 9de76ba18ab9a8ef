"""Ray Train's TensorFlow/Keras integration (`ray.train.tensorflow`) on trainrt
(docs/guides/tensorflow.md):

    def train_func(config):
        strategy = tf.distribute.MultiWorkerMirroredStrategy()   # finds the workers in TF_CONFIG
        with strategy.scope():
            model = build_and_compile()
        model.fit(dataset, callbacks=[trainrt.tensorflow.keras.ReportCheckpointCallback()])
    TensorflowTrainer(train_func, scaling_config=ScalingConfig(num_workers=2)).fit()

Before the function runs on every rank, TensorflowTrainer sets TF_CONFIG as Ray does: every rank
a worker of one cluster, its gRPC address a port the kernel picked on its host, the list shared
over trainrt's MPI (_network.py). It also sizes TensorFlow's thread pools to the rank's share of
the cores (trainrt's compute threads; TensorFlow's own default is every core of the node, for
each rank) and seeds TensorFlow and Keras from run.seed on every rank alike, as trainrt seeds
numpy, Python and torch; its random streams go into every checkpoint (_seeds.py). TensorFlow
moves the gradients itself (gRPC), not over trainrt's MPI.
"""
import contextlib
import json
import os
import shutil
import tempfile

import tensorflow as tf

from .. import _network, _state
from . import _seeds
from .._trainer import DataParallelTrainer
from ..checkpoint import Checkpoint

__all__ = ["TensorflowCheckpoint", "TensorflowConfig", "TensorflowTrainer", "prepare_dataset_shard"]


class TensorflowConfig:
    """Ray's backend configuration for TensorFlow. It has no settings: TF_CONFIG is always set."""


class TensorflowTrainer(DataParallelTrainer):
    """Ray's TensorflowTrainer: the function runs on every rank with TF_CONFIG naming the run's
    workers (see above)."""

    def __init__(self, train_loop_per_worker, *, train_loop_config=None, tensorflow_config=None, **kwargs):
        if tensorflow_config is not None and not isinstance(tensorflow_config, TensorflowConfig):
            raise TypeError(f"trainrt.tensorflow.TensorflowTrainer: tensorflow_config= is a "
                            f"{type(tensorflow_config).__name__}; pass a trainrt.tensorflow.TensorflowConfig()")
        super().__init__(train_loop_per_worker, train_loop_config=train_loop_config, **kwargs)

    def _worker_context(self):
        return _tensorflow_cluster()


@contextlib.contextmanager
def _tensorflow_cluster():
    """Collective: TF_CONFIG for this rank, TensorFlow's threads and seeds, for the function's span."""
    workers, _ = _network.rank_addresses()
    rank = _state.context().get_world_rank()
    before = os.environ.get("TF_CONFIG")
    os.environ["TF_CONFIG"] = json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": rank}})
    _size_thread_pools(int(os.environ.get("OMP_NUM_THREADS") or 0))
    if len(workers) > 1 and _keras_3():
        _state.log("warning", "trainrt.tensorflow: tf.keras is Keras 3 here, whose fit() fails under "
                   "MultiWorkerMirroredStrategy on more than one worker (keras-team/keras#20585, under Ray too): "
                   "for Keras models set TF_USE_LEGACY_KERAS=1 before TensorFlow is imported, with tf-keras "
                   "installed (docs/guides/tensorflow.md)", once=True)
    tf.random.set_seed(_state.settings().run.seed % 2**31)
    _seeds.install()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TF_CONFIG", None)
        else:
            os.environ["TF_CONFIG"] = before


def _size_thread_pools(threads):
    """TensorFlow's pools to the rank's share of the cores, unless the script sized them or TensorFlow
    already started (the pools are fixed then: a script that ran ops at import keeps TF's default)."""
    if threads <= 0 or tf.config.threading.get_intra_op_parallelism_threads():
        return
    try:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
    except RuntimeError:
        _state.log("warning", "trainrt.tensorflow: TensorFlow started before the training function (an op at "
                   "import?): its thread pools keep TensorFlow's default, every core of the node per rank", once=True)


def _keras_3():
    if os.environ.get("TF_USE_LEGACY_KERAS", "").lower() in ("1", "true", "yes"):
        return False
    try:
        import keras
    except ImportError:
        return False
    return keras.__version__.startswith("3.")


def prepare_dataset_shard(tf_dataset):
    """The dataset with TensorFlow's automatic sharding off (Ray's prepare_dataset_shard): for data
    each rank already holds its own part of."""
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    return tf_dataset.with_options(options)


_MODEL_SUFFIXES = (".keras", ".h5")


class TensorflowCheckpoint(Checkpoint):
    """A directory checkpoint holding a Keras model file (Ray's TensorflowCheckpoint).
    TensorflowCheckpoint.get_model(checkpoint) also reads a plain trainrt.Checkpoint."""

    MODEL_FILENAME = "model.keras"

    @classmethod
    def from_model(cls, model, *, filename=MODEL_FILENAME, preprocessor=None):
        """The model saved (model.save) as `filename` in a new temporary directory, as a checkpoint."""
        if preprocessor is not None:
            raise ValueError("trainrt.tensorflow.TensorflowCheckpoint.from_model: preprocessor= (Ray Data's "
                             "preprocessors) is not supported: save what it needs into the checkpoint's directory")
        folder = tempfile.mkdtemp(prefix="trainrt-tensorflow-")
        model.save(os.path.join(folder, filename))
        return cls.from_directory(folder)

    def get_model(self, filename=None):
        """The Keras model the checkpoint holds: `filename`, or its one .keras or .h5 file."""
        with self.as_directory() as folder:
            return tf.keras.models.load_model(os.path.join(folder, filename or _model_file(folder)))


def _model_file(folder):
    found = sorted(name for name in os.listdir(folder) if name.endswith(_MODEL_SUFFIXES))
    if len(found) != 1:
        raise ValueError(f"trainrt.tensorflow.TensorflowCheckpoint.get_model: the checkpoint holds "
                         f"{len(found)} model files ({', '.join(found) or 'no .keras or .h5 file'}); "
                         f"name one with get_model(filename=...)")
    return found[0]


def _report_model(model, metrics):
    """report(metrics) with the model as a directory checkpoint: saved on every rank (a save may
    read variables collectively), rank 0's directory reported, the others' removed."""
    folder = tempfile.mkdtemp(prefix="trainrt-tensorflow-")
    try:
        model.save(os.path.join(folder, TensorflowCheckpoint.MODEL_FILENAME))
        own = _state.context().get_world_rank() == 0
        _state.report(metrics, checkpoint=TensorflowCheckpoint.from_directory(folder) if own else None)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
