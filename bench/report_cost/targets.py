"""The report() cost part's target (bench/README.md). Read by report_cost/report.py."""
from reporting import Target

# report()'s median time / one fashion_mlp training step's (1 % = 0.01)
REPORT_VS_STEP = Target("report() < 1 % of a fashion_mlp step (2 ranks)", "<", "0.01")
