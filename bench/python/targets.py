"""The Python part's targets (bench/README.md, "Python"): epoch time ratios to plain PyTorch DDP
over gloo on 2 ranks (the median of the alternated pairs' ratios), and directory checkpoints.
Read by python/report.py."""
from reporting import Target

WORKLOAD_GLOO = Target("Python (gloo): epoch time ≤ {goal} × plain PyTorch DDP (gloo), same script body and threads",
                       "<=", "1.02")
FIT_GLOO = Target("`TorchTrainer.fit()` from a plain python3 (gloo): epoch time ≤ {goal} × plain PyTorch DDP (gloo)",
                  "<=", "1.02")
WORKLOAD_TRAINRT = Target("Python (backend trainrt): epoch time ≤ {goal} × plain PyTorch DDP (gloo) on 2 ranks",
                          "<=", "0.40")
FIT_TRAINRT = Target("`TorchTrainer.fit()` with scaling.backend = trainrt: epoch time ≤ {goal} × plain PyTorch DDP "
                     "(gloo) on 2 ranks", "<=", "0.5")
# the copy's time / Checkpoint.from_directory's: its speed relative to the copy
DIRECTORY = Target("Python: Checkpoint.from_directory of 100 MiB ≥ {goal} × the speed of copying it + fsync", ">=", "0.8")
