"""A function that checkpoints only when it stops: each step asks should_stop(), then reports, with
a Checkpoint only when the answer was yes (as the XGBoost callback does). With train.signal_step
= N, rank 1 sends itself USR2 at step N after that answer and before the report: the window where a
stop agreed by the report itself would end the run at a report without its checkpoint."""
import os
import signal

import trainrt


def train(config):
    signal_step = int(config.get("signal_step", 0))
    for step in range(1, int(config.get("steps", 10)) + 1):
        stop = trainrt.should_stop()
        if step == signal_step and trainrt.get_context().world_rank == 1:
            os.kill(os.getpid(), signal.SIGUSR2)
        trainrt.report({"step": step}, checkpoint=trainrt.Checkpoint({"step": step}) if stop else None)
        if stop:
            return
