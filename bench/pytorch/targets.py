"""The FashionMNIST training comparison's targets (bench/README.md, "Targets"): trainrt's
fashion_mlp against pytorch_ddp.py on the same ranks. Read by pytorch/report.py."""
from reporting import Target

EPOCH_VS_PYTORCH = Target("trainrt epoch time ≤ {goal} × PyTorch's on the same ranks (1 and 2)", "<=", "0.5")
# trainrt's 2-rank median epoch time / its 1-rank one
TWO_RANKS_FASTER = Target("trainrt on 2 ranks faster than on 1 (median epoch time)", "<", "1")
