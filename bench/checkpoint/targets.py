"""The checkpoint part's targets (bench/README.md, "Targets"). Ratios are plain time /
checkpoint time by couples of repetitions (reporting.couples_ratio). Read by checkpoint/report.py."""
from reporting import Target

WRITE = Target("checkpoint write bandwidth ≥ {goal} × plain write+fsync (both layouts, 1 and 2 ranks)", ">=", "0.90")
RESTORE = Target("checkpoint restore (verify + read) bandwidth ≥ {goal} × plain read (both layouts, 1 and 2 ranks)",
                 ">=", "0.90")
# report()'s own time with background snapshots / the sync save's time (1 % = 0.01)
ASYNC_STALL = Target("async checkpoint stall ≤ 1 % of the sync save time (report()'s own time, `snapshot = background`; "
                     "`copy` where round 7 did not run)", "<=", "0.01")
# a training step's excess with a save before it / the sync save's time
STEP_STALL = Target("the same with everything a save takes from the next training step (the background copy, the "
                    "writing beside the compute, the wait)", "<=", "0.01")
# shares' save time / rank 0 alone's
REPLICATED = Target("replicated state: a save in shares ≤ {goal} × rank 0 alone", "<=", "0.6")
