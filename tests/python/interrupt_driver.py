"""A Ray-style driver for tests/python/no_poll_func.py: TorchTrainer(...).fit() from a plain
python3 (trainrt starts the 2 ranks). RUNS, RUN_NAME: the run directory; SLEEP_S: each epoch's
extra time, so that a Ctrl-C lands mid-run."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import trainrt  # noqa: E402
from no_poll_func import train  # noqa: E402
from trainrt.torch import TorchTrainer  # noqa: E402

trainer = TorchTrainer(train, train_loop_config={"epochs": 12, "sleep_s": float(os.environ.get("SLEEP_S", "0"))},
                       scaling_config=trainrt.ScalingConfig(num_workers=2),
                       run_config=trainrt.RunConfig(name=os.environ["RUN_NAME"], storage_path=os.environ["RUNS"]))
result = trainer.fit()
print(f"driver: finished at epoch {result.metrics['epoch']}, {len(result.best_checkpoints)} checkpoints", flush=True)
