"""trainrt.init(), .shutdown(), .is_initialized(): what `ray.init()` becomes after the port
(docs/guides/coming-from-ray.md). There is no cluster to start or join: the Slurm allocation (or
this machine) is where the ranks run. What Ray's call can say that means something here is kept;
the rest is refused with one line rather than accepted and ignored."""

_cpus = None        # init(num_cpus=): the CPUs a Tuner's trials may use at once on this node
_initialized = False


def init(address=None, *, num_cpus=None, num_gpus=None, configure_logging=False, ignore_reinit_error=False,
         **other):
    """Ray's `ray.init(...)`. `num_cpus` caps the CPUs a Tuner runs trials on at once (each rank
    takes one, as each Ray trial takes {"cpu": 1} by default); `num_gpus` is not used (one warning
    line: Slurm's allocation decides); `address` (a Ray cluster to join)
    and any other option of Ray's are refused with one line."""
    global _cpus, _initialized
    if address is not None and address != "local":
        raise ValueError(f"trainrt.init(address={address!r}): there is no Ray cluster to join; trainrt runs in the "
                         f"Slurm allocation it is started in (srun, sbatch) or on this machine: drop the address")
    if configure_logging:
        raise ValueError("trainrt.init(configure_logging=True): trainrt never configures Python's logging; drop the "
                         "argument (or pass False) and configure logging in the script")
    if other:
        raise ValueError(f"trainrt.init(): {', '.join(sorted(other))} is Ray cluster configuration that trainrt has "
                         f"no use for (Slurm's allocation decides resources): drop it")
    if num_gpus:
        from . import _state
        _state.log("warning", f"trainrt.init(num_gpus={num_gpus}) is not used: the Slurm allocation decides the GPUs "
                   f"(sbatch --gpus-per-task) and ScalingConfig(use_gpu=True) asks for them", once=True)
    if num_cpus is not None and (not isinstance(num_cpus, int) or isinstance(num_cpus, bool) or num_cpus < 1):
        raise ValueError(f"trainrt.init(num_cpus={num_cpus!r}): a positive integer")
    if _initialized and not ignore_reinit_error:
        raise RuntimeError("trainrt.init() called twice; pass ignore_reinit_error=True or call trainrt.shutdown() "
                           "first")
    _cpus, _initialized = num_cpus, True


def shutdown():
    """Ray's `ray.shutdown()`: forgets init()'s settings."""
    global _cpus, _initialized
    _cpus, _initialized = None, False


def is_initialized():
    return _initialized


def cpus():
    """The CPUs a Tuner may run trials on at once here: init(num_cpus=), or those this process may
    run on (its affinity: a Slurm step's CPUs), by the rule the ranks' threads use."""
    from ._trainrt import usable_cpus
    return _cpus or usable_cpus()
