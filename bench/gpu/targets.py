"""The GPU part's target (bench/README.md, "GPU"). Read by gpu/report.py."""
from reporting import Target

# trainrt's median epoch / PyTorch's on the same GPU, for resident vs resident and stream vs loader
EPOCH_VS_PYTORCH = Target("GPU: trainrt epoch time ≤ {goal} × PyTorch's on the same GPU (data resident; data loading "
                          "included)", "<=", "0.5")
