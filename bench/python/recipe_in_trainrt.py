"""bench/pytorch/pytorch_ddp.py's recipe body run as a trainrt Python training function: trainrt sets up
torch.distributed (gloo), the threads and the process; the timed epoch is the same code as the
plain PyTorch DDP script's. Each epoch's record goes to trainrt.report (outside the timed part).

    mpiexec -n 2 build/trainrt --run.workload=python:bench/python/recipe_in_trainrt.py:train --scaling.backend=gloo \\
        --train.epochs=3 --train.init=tests/data/torch_init_seed0.h5
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pytorch"))
import pytorch_ddp as recipe  # noqa: E402

import trainrt  # noqa: E402


def train(config):
    context = trainrt.get_context()
    recipe.train_epochs(context.world_rank, context.world_size, config["epochs"], config.get("init") or None,
                        on_epoch=lambda record: trainrt.report(record))


def report_cost(config):
    """The cost of trainrt.report with a state_dict checkpoint of the recipe's model and optimizer
    (what a user reports each epoch), against report without one: the median of config["reports"]
    calls each, after 3 unmeasured. Rank 0 prints one JSON line."""
    import json
    import statistics
    import time

    import torch
    from trainrt.torch import prepare_model, state_dict_checkpoint

    torch.manual_seed(0)
    model = prepare_model(recipe.make_model())
    optimizer = torch.optim.SGD(model.parameters(), lr=recipe.LEARNING_RATE, momentum=0.9)
    count = int(config.get("reports", 30))
    loss = torch.nn.functional.cross_entropy(model(torch.randn(8, 784)), torch.randint(0, 10, (8,)))
    loss.backward()
    optimizer.step()  # the momentum buffers exist from here on, as in a real checkpoint

    def median_ms(with_checkpoint):
        times = []
        for i in range(count + 3):
            t0 = time.perf_counter()
            checkpoint = state_dict_checkpoint(model=model, optimizer=optimizer, epoch=i) if with_checkpoint else None
            trainrt.report({"i": i}, checkpoint=checkpoint)
            times.append(time.perf_counter() - t0)
        return statistics.median(times[3:]) * 1e3

    plain, with_checkpoint = median_ms(False), median_ms(True)
    if trainrt.get_context().world_rank == 0:
        parameters = sum(p.numel() * p.element_size() for p in model.parameters())
        print(json.dumps({"bench": "python_report", "ranks": trainrt.get_context().world_size,
                          "report_ms": plain, "report_checkpoint_ms": with_checkpoint,
                          "model_mib": parameters / 2**20}), flush=True)
