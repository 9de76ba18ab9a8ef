"""The sweep part's targets (issue 29; bench/README.md, "Sweeps"). Read by tune/report.py."""
from reporting import Target

TRIAL_START = Target("Sweeps: trial start (decision → training) ≤ {goal} s, median", "<=", "1")
ALLOCATION_USE = Target("Sweeps: allocation use ≥ {goal} (rank-seconds in training / held, ASHA sweep)", ">=", "0.95")
# the rank-seconds ASHA needed to reach random search's best / random search's in all
ASHA_VS_RANDOM = Target("Sweeps: ASHA reaches random search's best (same budget) in ≤ {goal}× its rank-seconds",
                        "<=", "0.5")
