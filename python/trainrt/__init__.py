"""trainrt from Python: the session of a training function that trainrt runs.

    import trainrt

    def train_func(config):                 # config: the [train] section, typed
        ctx = trainrt.get_context()         # world/local rank and size, node rank, run dir, device
        start = 0
        if (ckpt := trainrt.get_checkpoint()):
            start = ckpt["epoch"]
        for epoch in range(start, config["epochs"]):
            ...
            trainrt.report({"epoch": epoch + 1, "loss": loss},
                           checkpoint=trainrt.Checkpoint({"w": weights, "epoch": epoch + 1}))
            # a stop (Slurm time limit, preemption, a stop signal) ends the function inside
            # report(), after the checkpoint was committed; should_stop() asks between reports

Run it with `srun trainrt --config job.ini` ([run] workload = python:train.py:train_func), or end
the script with `raise SystemExit(trainrt.run(train_func))` and launch `python3 train.py` under
srun/mpiexec, or as Ray Train does: `result = trainrt.torch.TorchTrainer(train_func,
scaling_config=trainrt.ScalingConfig(num_workers=2)).fit()` from `python3 train.py` (trainrt starts
the ranks) or under srun/mpiexec. PyTorch helpers: trainrt.torch. docs/guides/python.md
and "Coming from Ray Train".
"""
import sys


def _check_interpreter():
    """ImportError of one line when this package's libraries were built for another CPython (the
    PYTHONPATH of `module load trainrt` seen from a user's environment of another Python version)."""
    try:
        from . import _build_info
    except ImportError:  # a package without build information (bench/gpu's builds): nothing to check
        return
    built = tuple(int(part) for part in _build_info.PYTHON.split(".")[:2])
    if sys.version_info[:2] != built:
        raise ImportError(f"trainrt: the trainrt package at {__path__[0]} was built for CPython {_build_info.PYTHON} "
                          f"and this is {sys.version.split()[0]} ({sys.executable}); build it for this environment: "
                          f"`pip install pybind11 && pip install --no-build-isolation "
                          f"$TRAINRT_ROOT/share/trainrt/python`")


_check_interpreter()

from . import _state  # noqa: E402
from ._state import Context, StopTraining  # noqa: E402
from .checkpoint import Checkpoint  # noqa: E402
from .data import get_dataset  # noqa: E402
from ._trainer import (CheckpointConfig, DataParallelTrainer, FailureConfig, Result, RunConfig, ScalingConfig,
                       TrainingFailedError)
from ._init import init, is_initialized, shutdown  # noqa: E402  (ray.init() after the port)

__all__ = ["allreduce", "Checkpoint", "CheckpointConfig", "Context", "DataConfig", "DataParallelTrainer", "digest", "Error",
           "exit_codes", "FailureConfig", "get_checkpoint", "get_config", "get_context", "get_dataset",
           "get_dataset_shard", "get_shard_arrays", "get_settings", "init", "is_initialized", "report", "Result", "run", "RunConfig", "ScalingConfig",
           "should_stop", "save_at_stop", "checkpoint_due", "shutdown", "StopTraining", "TrainingFailedError"]


def __getattr__(name):
    if name == "DataConfig":  # Ray's ray.train.DataConfig, loaded with Ray Data's module
        from ._raydata.ingest import DataConfig
        return DataConfig
    if name == "config":  # trainrt.config: the [train] section of the running job
        return _state.train_config()
    if name == "train":  # `from ray import train` after the port: ray.train's names are trainrt's own
        return sys.modules[__name__]
    if name in ("Error", "exit_codes"):  # the C++ error type and exit code table (docs/reference/exit-codes.md)
        from . import _trainrt
        return getattr(_trainrt, name)
    raise AttributeError(f"module 'trainrt' has no attribute '{name}'")


def report(metrics, checkpoint=None):
    """Collective (every rank, once per iteration): records `metrics` (numbers and strings) as one
    result row and, with `checkpoint` (a trainrt.Checkpoint), commits it on every rank. When the
    job is to stop (a stop signal, the Slurm time limit) it then raises trainrt.StopTraining, a
    BaseException that trainrt catches: the function needs no should_stop() to be stoppable."""
    _state.report(metrics, checkpoint)


def get_checkpoint():
    """The checkpoint to resume from (after a requeue, a stop or a failure), or None."""
    committed = _state.session().checkpoint()
    if committed is None:
        return None
    checkpoint = Checkpoint._from_committed(committed)
    _state.take_checkpoint(checkpoint)  # prepared loaders take their positions from it
    return checkpoint


def get_context():
    return _state.context()


def get_settings():
    """The job's built-in settings, typed by their declaration (docs/reference/configuration.md):
    get_settings().run.seed, get_settings().data.shuffle ("none", "global" or "blocks")."""
    return _state.settings()


def get_config():
    """The [train] section, typed: {"epochs": 3, "lr": 0.001, ...}."""
    return _state.train_config()


def get_dataset_shard(name="train"):
    """This rank's shard of the Trainer's datasets={name: ...} (Ray Data; docs/guides/ray-data.md),
    a DataIterator: iter_batches, iter_torch_batches, to_tf, iter_rows, materialize."""
    from ._raydata import ingest
    return ingest.shard(name)


def get_shard_arrays(split="train", epoch=0):
    """This rank's part of `split` of data.path for `epoch` (DistributedSampler's order; with
    data.shuffle a new permutation per epoch): {"features": uint8 [n, ...], "labels": uint8 [n],
    "indices": uint64 [n], "padded": trailing samples that repeat earlier ones, "global_count"}."""
    return _state.session().dataset_shard(split, epoch)



def allreduce(array, op="mean"):
    """Collective, in place over trainrt's MPI communicator: a C-contiguous float32, float64 or int64
    numpy array reduced across ranks (op: mean, sum, max, min). Returns the array. For code
    without torch.distributed (numpy); with torch, use torch.distributed or prepare_model."""
    _state.session().allreduce(array, op)
    return array


def digest(arrays):
    """16 hex digits of SHA-256 over the arrays' bytes (numpy arrays or torch tensors, in order):
    a check that two runs ended with bitwise the same weights."""
    import hashlib
    import numpy as np
    h = hashlib.sha256()
    for array in arrays:
        if hasattr(array, "detach"):
            array = array.detach().cpu().numpy()
        h.update(np.ascontiguousarray(array).tobytes())
    return h.hexdigest()[:16]


def should_stop():
    """Collective, at a step boundary: True when the job should save and return: a stop signal
    reached a rank, or the Slurm time limit is near. Optional: report() stops the function by
    itself; this asks between reports (then save_at_stop(checkpoint), mid-epoch)."""
    return _state.session().should_stop()


def save_at_stop(checkpoint):
    """Collective, when should_stop() returned True between two reports (mid-epoch): commits
    `checkpoint` as the stop's checkpoint without a result row, and ends the function. Ray counts
    reports: the stopped and resumed run then reports the same iterations, with the same values, as
    an uninterrupted one. A report at the stop's boundary (an epoch's end) stays a report."""
    _state.save_at_stop(checkpoint)


def checkpoint_due():
    """The latest step boundary's verdict (should_stop() or report(); no communication): True
    when [checkpoint] interval says a checkpoint is due (seconds since the last one, or auto:
    Young/Daly's interval from the measured checkpoint cost and [failure] mtbf). Ask it after
    should_stop(); when True, report with a Checkpoint at this step."""
    return _state.session().checkpoint_due()


def run(train_func, argv=None, name=None):
    """Runs train_func under trainrt from a plain `python3 script.py` (launched by srun or
    mpiexec): the command line is trainrt's (--config FILE, --section.key=value). Returns the
    process exit code (docs/reference/exit-codes.md)."""
    from . import _entry, _trainrt
    _entry.activate_virtual_env()
    return _trainrt.run(list(argv if argv is not None else sys.argv), train_func,
                        name or getattr(train_func, "__name__", "python"))
