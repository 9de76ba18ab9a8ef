"""The LibTorch part's targets (bench/README.md, "LibTorch"). Read by torch/report.py."""
from reporting import Target

# torch_fashion_mlp's median epoch / PyTorch DDP's on 2 ranks
VS_PYTORCH = Target("LibTorch: torch_fashion_mlp epoch ≤ {goal} × PyTorch DDP (gloo) on 2 ranks", "<=", "0.30")
# prepare_model's step / one flat allreduce after backward, median of the alternated pairs
OVERLAP = Target("LibTorch: prepare_model (overlap) step ≤ {goal} × one flat allreduce after backward (2 ranks)",
                 "<=", "0.95")
# torch_fashion_mlp's train time / the same loop in plain LibTorch, 1 rank
OVERHEAD = Target("LibTorch: 1 rank ≤ {goal} × the same loop in plain LibTorch", "<=", "1.02")
