"""The session of the running training function, and what trainrt's public functions do with it.

trainrt/_entry.py begins and ends the session around the user's function; every public function
(trainrt.report, get_checkpoint, ...) refuses to run outside it with one clear line.
"""
import numbers
import os

_handle = None
_local = {}  # this session's Python-side state (trainrt.torch's prepared loaders), reset at begin/end

# A sweep's tune.with_parameters(...) objects, pickled by the driver's Tuner.fit(): their path, in
# the environment `trainrt tune` and its launcher give every trial (read by _entry._call).
TUNE_PARAMETERS_ENV = "TRAINRT_TUNE_PARAMETERS"
# A Tuner's constants that an INI value cannot hold (lists, dicts), pickled once for every trial.
TUNE_CONSTANTS_ENV = "TRAINRT_TUNE_CONSTANTS"


class Context:
    """Who this worker is (Ray's train.get_context()): attributes and Ray-style getters."""

    def __init__(self, values, device):
        self.world_rank = values["world_rank"]
        self.world_size = values["world_size"]
        self.local_rank = values["local_rank"]
        self.local_world_size = values["local_world_size"]
        self.node_rank = values["node_rank"]
        self.num_nodes = values["num_nodes"]
        self.hostname = values["hostname"]
        self.job_id = values["job_id"]
        self.restart_count = values["restart_count"]
        self.launcher = values["launcher"]
        self.run_dir = values["run_dir"]
        self.device = device

    def get_world_rank(self):
        return self.world_rank

    def get_world_size(self):
        return self.world_size

    def get_local_rank(self):
        return self.local_rank

    def get_local_world_size(self):
        return self.local_world_size

    def get_node_rank(self):
        return self.node_rank

    def get_trial_name(self):
        """The run's name (its directory's): stable across stops and requeues, so a tracker's run
        id taken from it (wandb.init(id=...), Ray's guide) continues the same tracker run."""
        return os.path.basename(os.path.normpath(self.run_dir))

    get_trial_id = get_trial_name

    def get_dataset_shard(self, name):
        """This rank's shard of the Trainer's datasets={name: ...} (trainrt.get_dataset_shard; the
        Trainer's start leaves the function that makes it in the session)."""
        make = session_local("ray_datasets", dict).get("shard")
        if make is None:
            raise KeyError(f"get_dataset_shard({name!r}): the Trainer was given no datasets= (Ray Data)")
        return make(name)

    def get_trial_dir(self):
        return self.run_dir

    def get_experiment_name(self):
        """The sweep's name for a trial of `trainrt tune` / Tuner, else the run's name."""
        parent = os.path.dirname(os.path.normpath(self.run_dir))
        return os.path.basename(parent) if self._in_sweep() else self.get_trial_name()

    def _in_sweep(self):
        """Whether this run is a trial of a sweep (its parent directory holds the sweep's record)."""
        from ._trainrt import layout
        return os.path.exists(layout.sweep_record(os.path.dirname(os.path.normpath(self.run_dir))))

    def __repr__(self):
        return (f"Context(world_rank={self.world_rank}, world_size={self.world_size}, "
                f"local_rank={self.local_rank}, node_rank={self.node_rank}, device={self.device!r})")


# The file trainrt is loading as a python: workload, while its module level runs (_entry.py).
loading_file = None


def begin(handle):
    global _handle
    _handle = handle
    _local.clear()
    from . import _rng  # every checkpoint carries each rank's generators (_rng.py)
    add_checkpoint_hooks(_rng.save, _restore_rng)


def end():
    global _handle
    if _handle is not None:
        if _local.get("snapshot_sources") is not None:  # a background snapshot may still read them
            _handle.await_snapshot()
        _handle.end()
    _handle = None
    _local.clear()


def session_local(name, make):
    """This session's value `name` (made by make() at its first use)."""
    if name not in _local:
        _local[name] = make()
    return _local[name]


def log(level, text, once=False):
    """One line through trainrt's logger ("[trainrt R] warning: ..."); once: rank 0 alone."""
    from . import _trainrt
    _trainrt.log(level, text, once)


def add_checkpoint_hooks(save, restore):
    """save(checkpoint) adds to every checkpoint passed to report(); restore(checkpoint) runs when
    the function takes its checkpoint (get_checkpoint()). Once per session per pair."""
    hooks = session_local("checkpoint_hooks", list)
    if (save, restore) not in hooks:
        hooks.append((save, restore))


def _restore_rng(checkpoint):
    from . import _rng
    _rng.restore(checkpoint, session().context()["world_rank"])


def taken_checkpoint():
    """The checkpoint the function took with get_checkpoint(), or None."""
    return _local.get("taken")


def take_checkpoint(checkpoint):
    _local["taken"] = checkpoint
    for _, restore in session_local("checkpoint_hooks", list):
        restore(checkpoint)
_local = {}  # this session's Python-side state (trainrt.torch's prepared loaders), reset at begin/end


def session():
    if _handle is None:
        raise RuntimeError("trainrt: no training function is running: call this from inside the function "
                           "trainrt runs (run.workload = python:FILE.py:FUNC, or trainrt.run(func))")
    return _handle


def settings():
    """The built-in settings, typed by their C++ declaration: settings().scaling.use_gpu."""
    return session().settings()


def train_config():
    """The [train] section, typed, without its prefix (Ray's train_loop_config)."""
    return session().train_config()


def device():
    """"cuda:N" for the device trainrt bound for this rank (scaling.use_gpu; the rule is
    comm/device_select.hpp's: one visible device per task is device 0 whatever the local rank),
    else "cpu"."""
    index = session().context()["gpu_device"]
    return f"cuda:{index}" if index >= 0 else "cpu"


def context():
    return Context(session().context(), device())


def metric_value(name, value):
    if isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "item"):  # numpy and torch scalars, one-element tensors
        value = value.item()
        if isinstance(value, (bool, int, float)):
            return value
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"trainrt.report(): metric '{name}' is a {type(value).__name__}; give a number or a string")


class StopTraining(BaseException):
    """Raised by report() once every rank agreed to stop (a stop signal, the Slurm time limit):
    the report's row and checkpoint are committed, then the function unwinds to trainrt, which
    stops or requeues the job. A BaseException, so a user's `except Exception` does not swallow
    it (as KeyboardInterrupt)."""


def report(metrics, checkpoint=None):
    """Collective. A stop agreed at this report ends the function here (StopTraining) after the
    row and the checkpoint were committed, whether or not the function polls should_stop()."""
    values = {str(name): metric_value(name, value) for name, value in metrics.items()}
    handle = session()
    any_directory = _agree_on_checkpoints(handle, checkpoint)
    if checkpoint is None and not any_directory:
        handle.report(values)
    else:
        _save(handle, checkpoint, any_directory, lambda *parts: handle.report(values, *parts))
    if handle.should_stop():  # no collective: the verdict rode in the report's own
        raise StopTraining()


def save_at_stop(checkpoint):
    """Collective, after should_stop() returned True between two reports: commits `checkpoint` as
    the stop's checkpoint, without a result row (so the resumed run reports what an uninterrupted
    one does), and ends the function (StopTraining)."""
    handle = session()
    any_directory = _agree_on_checkpoints(handle, checkpoint)
    if checkpoint is None and not any_directory:
        raise ValueError("trainrt.save_at_stop(): pass the Checkpoint to resume from (None on every rank)")
    _save(handle, checkpoint, any_directory, handle.save_at_stop)
    raise StopTraining()


def _save(handle, checkpoint, any_directory, commit):
    """A checkpoint's parts handed to commit(tensors, attributes, private names) (a report's or a
    stop's save); None on a rank while another saves a directory: this one adds no files."""
    if checkpoint is None:
        from .checkpoint import Checkpoint
        checkpoint = Checkpoint()
    for save, _ in session_local("checkpoint_hooks", list):
        save(checkpoint)
    allreduce = (lambda array, op: handle.allreduce(array, op)) if any_directory else None
    tensors, attributes = checkpoint._parts(handle.context(), allreduce)
    deferred = commit(tensors, attributes, checkpoint._private_names())
    # Kept until the next checkpoint's save (which awaits this snapshot) or the end.
    _local["snapshot_sources"] = tensors if deferred else None


def _agree_on_checkpoints(handle, checkpoint):
    """Collective: whether any rank reports a directory. Ray lets ranks pass a checkpoint or None;
    trainrt's save is collective, so a rank with None joins a directory save with no files, and a
    checkpoint of tensors or values passed by some ranks only is refused on every rank alike."""
    import numpy as np
    mine = np.array([checkpoint is not None and checkpoint._directory is not None,
                     checkpoint is not None and checkpoint.has_values(), checkpoint is None], dtype=np.int64)
    handle.allreduce(mine, "max")
    any_directory, any_values, any_none = (bool(x) for x in mine)
    if any_values and any_none:
        raise ValueError("trainrt.report(): some ranks passed a checkpoint of tensors or values and others None: "
                         "pass it on every rank (a Checkpoint.from_directory may come from some ranks only)")
    return any_directory


def seed_everything(seed):
    """Python's random, numpy's and torch's global generators (when torch was imported) seeded
    alike on every rank, as Ray's enable_reproducibility: the same model initialisation everywhere
    and from run to run."""
    import random
    random.seed(seed)
    try:
        import numpy
        numpy.random.seed(seed % 2**32)
    except ImportError:
        pass
    import sys
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)
