"""A Python function that checkpoints when trainrt says one is due ([checkpoint] interval): a
step every train.step_s seconds, should_stop() then checkpoint_due() at each step boundary, a
report with a Checkpoint when due, and a last report without one."""
import time

import trainrt


def train(config):
    steps = int(config.get("steps", 40))
    for step in range(1, steps + 1):
        time.sleep(float(config.get("step_s", 0.02)))
        stop = trainrt.should_stop()
        if stop or trainrt.checkpoint_due():
            trainrt.report({"step": step}, checkpoint=trainrt.Checkpoint({"step": step}))
        if stop:
            return
    trainrt.report({"step": steps, "done": 1})
