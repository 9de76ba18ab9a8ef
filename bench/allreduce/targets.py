"""The allreduce part's target (bench/README.md, "Targets"): trainrt's communicator against plain
MPI_Allreduce. Read by allreduce/report.py."""
from reporting import Target

BUSBW_FROM_1MIB = 1 << 20  # the sizes the goal covers: every size from 1 MiB up
BUSBW = Target("allreduce busbw ≥ {goal} × plain MPI for every size ≥ 1 MiB", ">=", "0.95")
