"""The XGBoost part's targets (bench/README.md, "XGBoost"). Read by xgboost/report.py."""
from reporting import Target

# trainrt's round time / the hand-written loop's, median of the alternated pairs, 2 ranks
ROUND = Target("XGBoost: round time ≤ {goal} × a hand-written xgboost.train (2 ranks)", "<=", "1.05")
# (serialize + report stall) / booster.save_model(), 1 rank
SAVE = Target("XGBoost: checkpoint (serialize + report stall, async) ≤ {goal} × booster.save_model() to a local file "
              "(1 rank)", "<=", "1.2")
