"""An XGBoost user's training function, written as for Ray Train (tests/python/test_xgboost_train.sh):
XGBoostTrainer(train_func).fit() from a plain python3 starts 2 ranks and returns the Result."""
import os

import xgboost

import trainrt
from trainrt import RunConfig, ScalingConfig
from trainrt.xgboost import RayTrainReportCallback, XGBoostTrainer


def train_func(config):
    dtrain = trainrt.get_dataset("train").to_dmatrix()
    dtest = trainrt.get_dataset("test").to_dmatrix()
    checkpoint = trainrt.get_checkpoint()
    booster = RayTrainReportCallback.get_model(checkpoint) if checkpoint else None
    done = booster.num_boosted_rounds() if booster else 0
    xgboost.train(config["params"], dtrain, num_boost_round=config["rounds"] - done, xgb_model=booster,
                  evals=[(dtrain, "train"), (dtest, "test")], verbose_eval=False,
                  callbacks=[RayTrainReportCallback(frequency=10)])


if __name__ == "__main__":
    params = {"objective": "binary:logistic", "eval_metric": ["logloss", "error"], "max_depth": 4, "eta": 0.3,
              "tree_method": "hist", "nthread": 1}
    result = XGBoostTrainer(train_func, train_loop_config={"params": params, "rounds": 30},
                            scaling_config=ScalingConfig(num_workers=2),
                            run_config=RunConfig(name="fit", storage_path=os.environ["XGB_RUNS"])).fit()
    booster = RayTrainReportCallback.get_model(result.checkpoint)
    print(f"driver: rounds {booster.num_boosted_rounds()}, reported round {result.metrics['round']}, "
          f"test-error {result.metrics['test-error']:.6f}, checkpoints {len(result.best_checkpoints)}", flush=True)
