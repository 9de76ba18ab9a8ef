"""The frameworks part's goal (bench/frameworks/README.md). Read by frameworks/report.py."""
from reporting import Target

# trainrt's epoch time / the fastest other side's (Ray Train or Lightning's launcher), median of the repetitions
VS_FASTEST = Target("Frameworks: trainrt's epoch ≤ {goal}× the fastest other side", "<=", "1.0")
