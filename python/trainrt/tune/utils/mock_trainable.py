"""Ray Tune's example agent (`ray.tune.utils.mock_trainable.MyTrainableClass`), which Ray's
HyperBand and PBT examples train: a class Trainable whose reward follows a saturating curve,
height x tanh(step / width), so that schedulers have something to compare without a model."""
import json
import math
import os
import time

from ..trainable import Trainable


class MyTrainableClass(Trainable):
    """config: "width" (how slowly the reward rises, default 1), "height" (where it saturates,
    default 1), "sleep" (seconds each step waits, default 0). Its checkpoint is its step count."""

    def setup(self, config):
        self.timestep = 0
        self._sleep_s = config.get("sleep", 0)

    def step(self):
        if self._sleep_s > 0:
            time.sleep(self._sleep_s)
        self.timestep += 1
        reward = math.tanh(float(self.timestep) / self.config.get("width", 1)) * self.config.get("height", 1)
        return {"episode_reward_mean": reward}

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "checkpoint"), "w") as file:
            json.dump({"timestep": self.timestep}, file)

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "checkpoint")) as file:
            self.timestep = json.load(file)["timestep"]
