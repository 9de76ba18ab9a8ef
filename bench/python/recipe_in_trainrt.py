"""bench/pytorch_ddp.py's recipe body run as a trainrt Python training function: trainrt sets up
torch.distributed (gloo), the threads and the process; the timed epoch is the same code as the
plain PyTorch DDP script's. Each epoch's record goes to trainrt.report (outside the timed part).

    mpiexec -n 2 build/trainrt --run.workload=python:bench/python/recipe_in_trainrt.py:train --scaling.backend=gloo \\
        --train.epochs=3 --train.init=tests/data/torch_init_seed0.h5
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pytorch_ddp as recipe  # noqa: E402

import trainrt  # noqa: E402


def train(config):
    context = trainrt.get_context()
    recipe.train_epochs(context.world_rank, context.world_size, config["epochs"], config.get("init") or None,
                        on_epoch=lambda record: trainrt.report(record))
