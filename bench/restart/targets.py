"""The stop-and-restart part's target (issue 4; bench/README.md). Read by restart/report.py."""
from reporting import Target

# seconds, the median over the repetitions on each rank count (2 and 4)
RESTART_LATENCY = Target("restart latency (process start → first resumed step, excluding the checkpoint read) "
                         "≤ {goal} s on 2 and 4 ranks", "<=", "2")
