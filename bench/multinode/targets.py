"""The multi-node parts' goals (issue 31's recovery, the goodput run; bench/README.md). Read by
multinode/report.py and multinode/goodput_report.py."""
from reporting import Target

# seconds from the fault to the first training step on the nodes left, median over the runs
KILL_AGAIN = Target("kill → training again ≤ {goal} s", "<=", "10")
# a frozen node is noticed after the peer timeout: the goal is the time beyond it
FREEZE_AGAIN_BEYOND_TIMEOUT = Target("freeze → training again ≤ peer_timeout + {goal} s", "<=", "10")

# the share of allocated rank-seconds spent training, over a run long and rough enough to mean it
GOODPUT = Target("goodput (trained / allocated rank-seconds) ≥ {goal}", ">=", "0.9")
GOODPUT_MIN_TRAINED_S = 20 * 60
GOODPUT_MIN_REQUEUES = 4
