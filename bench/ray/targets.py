"""The Ray comparison's goals (bench/ray/README.md): trainrt / Ray, the median of the pairs'
ratios; and the conformance share of Ray's own examples (BENCHMARKS.md's Targets table). Read by
ray/report.py and ray/conformance.py."""
from reporting import Target

LAUNCH = Target("launch → first report()", "<=", "0.5")
EPOCH = Target("epoch of the FashionMNIST recipe", "<=", "1")
CHECKPOINT = Target("report() with a 100 MiB Checkpoint.from_directory", "<=", "1")
RECOVERY = Target("worker SIGKILLed → first report after the restart", "<=", "0.5")
SWEEP = Target("8-trial ASHA sweep", "<=", "0.8")
# the examples that run under trainrt as under Ray / those that run under Ray here
CONFORMANCE = Target("Ray's examples that run under Ray here run under trainrt as under Ray: share ≥ {goal} (stored)",
                     ">=", "0.90")
