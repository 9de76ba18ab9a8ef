"""Ray Train's PyTorch Lightning integration (`ray.train.lightning`) on trainrt (docs/guides/lightning.md):

    import lightning.pytorch as pl
    import trainrt.lightning

    def train_func():
        trainer = pl.Trainer(max_epochs=10, devices="auto", accelerator="auto",
                             strategy=trainrt.lightning.RayDDPStrategy(),
                             plugins=[trainrt.lightning.RayLightningEnvironment()],
                             callbacks=[trainrt.lightning.RayTrainReportCallback()],
                             enable_checkpointing=False)
        trainer = trainrt.lightning.prepare_trainer(trainer)
        trainer.fit(model, train_dataloaders=loader)   # resume: ckpt_path from trainrt.get_checkpoint()

trainrt owns the process group (set up before the function runs), the ranks (Lightning asks
RayLightningEnvironment, never its SLURMEnvironment) and the job's signals: prepare_trainer keeps
Lightning from installing its SIGTERM / SIGUSR1 handlers, so a stop signal or Slurm's time limit
reaches trainrt, which ends the function at the next report (the epoch's end) after its
checkpoint committed and stops or requeues the job; Lightning's own SLURM auto-requeue is off.
`lightning` 2.x (`lightning.pytorch`) is used when installed, else `pytorch_lightning`.
"""
import os
import shutil
import tempfile
import warnings

try:
    import lightning.pytorch as pl
    from lightning.pytorch.plugins.environments import LightningEnvironment
    from lightning.pytorch.strategies import DDPStrategy, FSDPStrategy
except ImportError:  # the standalone package
    import pytorch_lightning as pl
    from pytorch_lightning.plugins.environments import LightningEnvironment
    from pytorch_lightning.strategies import DDPStrategy, FSDPStrategy

import trainrt

# Lightning tells a process that sees `srun` on PATH outside a Slurm step to "prepend srun": under
# trainrt the ranks are trainrt's (fit() from a plain python3 starts them), so the hint misleads.
warnings.filterwarnings("ignore", message=r"The `srun` command is available on your system but is not used")

__all__ = ["prepare_trainer", "RayDDPStrategy", "RayDeepSpeedStrategy", "RayFSDPStrategy", "RayLightningEnvironment",
           "RayTrainReportCallback"]


class RayLightningEnvironment(LightningEnvironment):
    """The cluster as trainrt started it: ranks and world from trainrt's context, the rendezvous
    (MASTER_ADDR/MASTER_PORT) trainrt's process group used; the processes are trainrt's, so
    Lightning launches none and kills none."""

    @property
    def creates_processes_externally(self):
        return True

    def world_size(self):
        return trainrt.get_context().get_world_size()

    def global_rank(self):
        return trainrt.get_context().get_world_rank()

    def local_rank(self):
        return trainrt.get_context().get_local_rank()

    def node_rank(self):
        return trainrt.get_context().get_node_rank()

    def set_world_size(self, size):
        pass  # trainrt's world, not Lightning's devices x num_nodes

    def set_global_rank(self, rank):
        pass

    def teardown(self):
        pass  # the environment variables are trainrt's process group's


def _device():
    from . import torch as trainrt_torch
    return trainrt_torch.get_device()


def _refuse_process_group_arguments(strategy, kwargs):
    """The process group exists before the function runs (scaling.backend, failure.peer_timeout):
    arguments that would configure it are refused, not ignored."""
    for name in ("process_group_backend", "timeout", "start_method"):
        if name in kwargs:
            raise ValueError(f"trainrt.lightning.{strategy}: {name}= is not used: trainrt sets up the process group "
                             f"before the function runs; choose its backend with ScalingConfig / scaling.backend")


class _OnTrainrt:
    """What Ray's strategies change in Lightning's: the device trainrt bound for this rank, and the
    distributed sampler over trainrt's world (not Lightning's devices x num_nodes); arguments that
    would configure the process group are refused."""

    def __init__(self, *args, **kwargs):
        _refuse_process_group_arguments(type(self).__name__, kwargs)
        super().__init__(*args, **kwargs)

    @property
    def root_device(self):
        return _device()

    @property
    def distributed_sampler_kwargs(self):
        return dict(num_replicas=self.world_size, rank=self.global_rank)


class RayDDPStrategy(_OnTrainrt, DDPStrategy):
    """DDPStrategy (same arguments) on trainrt's process group and device."""


class RayFSDPStrategy(_OnTrainrt, FSDPStrategy):
    """FSDPStrategy (same arguments) on trainrt's process group and device."""


def __getattr__(name):
    if name == "RayDeepSpeedStrategy":  # Lightning's DeepSpeedStrategy imports deepspeed: only when asked for
        return _deepspeed_strategy()
    raise AttributeError(f"module 'trainrt.lightning' has no attribute {name!r}")


def _deepspeed_strategy():
    try:
        import deepspeed  # noqa: F401
    except ImportError as error:
        raise ImportError(f"trainrt.lightning.RayDeepSpeedStrategy needs DeepSpeed, which this Python cannot import "
                          f"({error}); install deepspeed into this environment") from None

    class RayDeepSpeedStrategy(_OnTrainrt, pl.strategies.DeepSpeedStrategy):
        """DeepSpeedStrategy (same arguments) on trainrt's process group and device."""

    return RayDeepSpeedStrategy


class RayTrainReportCallback(pl.callbacks.Callback):
    """At every training epoch's end: Lightning's logged metrics (callback_metrics, plus "epoch"
    and "step" as Ray reports them) and the Trainer's checkpoint, saved as CHECKPOINT_NAME in a
    directory, go to trainrt.report() on every rank."""

    CHECKPOINT_NAME = "checkpoint.ckpt"

    def __init__(self, checkpoint_upload_mode=None, validation=False):
        super().__init__()
        if checkpoint_upload_mode is not None or validation:  # Ray Train v2's upload modes and validation
            raise ValueError("trainrt.lightning.RayTrainReportCallback: checkpoint_upload_mode= and validation= are "
                             "not supported; the checkpoint is written when report() returns ([checkpoint] async "
                             "sets trainrt's own asynchronous writes)")

    def on_train_epoch_end(self, trainer, pl_module):
        metrics = {key: (value.item() if hasattr(value, "item") else value)
                   for key, value in trainer.callback_metrics.items()}
        metrics["epoch"] = trainer.current_epoch
        metrics["step"] = trainer.global_step
        folder = tempfile.mkdtemp(prefix="trainrt-lightning-")
        try:
            trainer.save_checkpoint(os.path.join(folder, self.CHECKPOINT_NAME), weights_only=False)
            trainrt.report(metrics, checkpoint=trainrt.Checkpoint.from_directory(folder))
        finally:
            shutil.rmtree(folder, ignore_errors=True)


_STRATEGIES = (RayDDPStrategy, RayFSDPStrategy)


def prepare_trainer(trainer):
    """Checks that the Trainer runs on trainrt's strategy and environment (RuntimeError naming what
    to pass otherwise, as Ray's) and hands the job's signals to trainrt. Returns the trainer."""
    strategy = trainer.strategy
    if not isinstance(strategy, _STRATEGIES) and type(strategy).__name__ != "RayDeepSpeedStrategy":
        raise RuntimeError(f"trainrt.lightning.prepare_trainer: the Trainer's strategy is {type(strategy).__name__}; "
                         f"pass strategy=trainrt.lightning.RayDDPStrategy() (or RayFSDPStrategy, RayDeepSpeedStrategy)")
    if not isinstance(strategy.cluster_environment, RayLightningEnvironment):
        raise RuntimeError(f"trainrt.lightning.prepare_trainer: the Trainer's cluster environment is "
                         f"{type(strategy.cluster_environment).__name__}; pass "
                         f"plugins=[trainrt.lightning.RayLightningEnvironment()]")
    trainer._signal_connector.register_signal_handlers = lambda: None
    return trainer
