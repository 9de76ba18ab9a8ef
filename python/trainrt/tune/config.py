"""Ray Tune's own RunConfig and CheckpointConfig (`ray.tune.RunConfig`, `ray.tune.CheckpointConfig`,
distinct from ray.train's in Ray too): trainrt.RunConfig / CheckpointConfig with what only a
Tuner reads. RunConfig(callbacks=[...]): trainrt.tune.Callback objects, called in the driver as
the sweep runs (callback.py). CheckpointConfig(checkpoint_frequency=N, checkpoint_at_end=True): a
class Trainable's checkpoints (trainable.py); a function reports its own, and the Tuner refuses
them for a function as Ray does."""
import dataclasses

from .._trainer import CheckpointConfig as _TrainCheckpointConfig
from .._trainer import RunConfig as _TrainRunConfig
from . import callback

__all__ = ["CheckpointConfig", "RunConfig"]


@dataclasses.dataclass
class CheckpointConfig(_TrainCheckpointConfig):
    checkpoint_frequency: int = 0      # a Trainable saves every N iterations (0: never)
    checkpoint_at_end: bool = None     # a Trainable saves at its last result (None: yes, as in Ray)

    def __post_init__(self):
        frequency = self.checkpoint_frequency
        if isinstance(frequency, bool) or not isinstance(frequency, int) or frequency < 0:
            raise ValueError(f"trainrt.tune.CheckpointConfig(checkpoint_frequency={frequency!r}): a whole number of "
                             f"iterations, 0 for none")


@dataclasses.dataclass
class RunConfig(_TrainRunConfig):
    callbacks: list = None  # trainrt.tune.Callback objects (callback.py)

    def __post_init__(self):
        super().__post_init__()
        self.callbacks = callback.checked(self.callbacks) or None
