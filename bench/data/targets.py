"""The data part's targets (bench/README.md, "Data"). Read by data/report.py."""
from reporting import Target

# the streaming read's throughput / a plain sequential read's, cold, median of the pairs
STREAM_NONE = Target("Data: streaming read, cold, shuffle none ≥ {goal} × a plain sequential read", ">=", "0.90")
STREAM_BLOCKS = Target("Data: streaming read, cold, shuffle blocks ≥ {goal} × a plain sequential read", ">=", "0.80")
# the worst epoch's data wait / its train time (2 % = 0.02)
DATA_WAIT = Target("Data: fashion_mlp data wait ≤ 2 % of train time (prefetch 2, 2 ranks)", "<=", "0.02")
# trainrt's samples/s / PyTorch DataLoader + h5py's, the smallest over shuffles and worker counts
LOADER = Target("Data: samples/s ≥ {goal} × PyTorch DataLoader + h5py", ">=", "2")
