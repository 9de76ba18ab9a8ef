"""bench/pytorch/pytorch_ddp.py's recipe body through Ray's driver API, as a Ray user runs it: a plain
`python3 recipe_fit.py` whose TorchTrainer.fit() starts the ranks itself (mpiexec) and returns the
Result; the timed epoch is the same code as the plain PyTorch DDP script's.

    python3 bench/python/recipe_fit.py --ranks 2 --scaling.backend=gloo --train.epochs=3 \\
        --train.init=tests/data/torch_init_seed0.h5 --run.storage_path=/tmp/runs --run.name=fit
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recipe_in_trainrt import train  # noqa: E402  the same function the python: workload runs

from trainrt import RunConfig, ScalingConfig  # noqa: E402
from trainrt.torch import TorchTrainer  # noqa: E402


def _ranks(argv):
    """--ranks N (this script's own; removed so that trainrt sees only its keys)."""
    if "--ranks" in argv:
        at = argv.index("--ranks")
        count = int(argv[at + 1])
        del argv[at:at + 2]
        return count
    return 2


if __name__ == "__main__":
    workers = _ranks(sys.argv)
    result = TorchTrainer(train, scaling_config=ScalingConfig(num_workers=workers), run_config=RunConfig()).fit()
    print(f"fit: {result.path}: {len(result.metrics_dataframe)} epochs", flush=True)
