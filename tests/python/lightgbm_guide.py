"""Ray Train's LightGBM guide in the shape its trainer example has, after the port (`ray.train` ->
`trainrt`): a LightGBMTrainer over a training function that builds its lightgbm.Dataset, resumes
from the run's checkpoint (RayTrainReportCallback.get_model) and trains with the network
parameters get_network_params() gives. Data made here: a regression problem from a fixed
generator (10000 rows of 10 features), 8000 rows to train on (each rank its contiguous share:
pre_partition) and 2000 held out that every rank evaluates on.

    lightgbm_guide.py fit STORAGE NAME WORKERS ROUNDS [PACE_S]   LightGBMTrainer(...).fit() from python3
    lightgbm_guide.py reference ROUNDS                           single-process lightgbm.train on all rows
train_func is also run as run.workload = python:lightgbm_guide.py:train_func (config: rounds, pace_s).
Prints one JSON line: the final eval-rmse (and for fit, the Result's iterations and checkpoint's trees).
"""
import json
import sys
import time

import lightgbm
import numpy as np

import trainrt
from trainrt.lightgbm import LightGBMTrainer, RayTrainReportCallback

PARAMS = {"objective": "regression", "metric": "rmse", "learning_rate": 0.1, "num_leaves": 15, "min_data_in_leaf": 20,
          "verbose": -1, "deterministic": True, "force_row_wise": True, "num_threads": 1, "seed": 3}


def data():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(10000, 10))
    y = 3 * np.sin(x[:, 0]) + x[:, 1] ** 2 + 0.5 * x[:, 2] * x[:, 3] + rng.normal(scale=0.3, size=10000)
    return x[:8000], y[:8000], x[8000:], y[8000:]


def train_func(config):
    x, y, x_eval, y_eval = data()
    context = trainrt.get_context()
    rank, world = context.get_world_rank(), context.get_world_size()
    share = slice(rank * len(x) // world, (rank + 1) * len(x) // world)
    train_set = lightgbm.Dataset(x[share], label=y[share])
    eval_set = lightgbm.Dataset(x_eval, label=y_eval, reference=train_set)
    checkpoint = trainrt.get_checkpoint()
    booster = RayTrainReportCallback.get_model(checkpoint) if checkpoint else None
    done = booster.current_iteration() if booster else 0
    params = {**PARAMS, "tree_learner": "data_parallel", "pre_partition": True,
              **trainrt.lightgbm.get_network_params()}
    pace = float(config.get("pace_s", 0))
    callbacks = [RayTrainReportCallback(frequency=5)] + ([lambda env: time.sleep(pace)] if pace else [])
    lightgbm.train(params, train_set, num_boost_round=int(config["rounds"]) - done, init_model=booster,
                   valid_sets=[eval_set], valid_names=["eval"], callbacks=callbacks)


def reference(rounds):
    x, y, x_eval, y_eval = data()
    train_set = lightgbm.Dataset(x, label=y)
    evals = {}
    lightgbm.train(PARAMS, train_set, num_boost_round=rounds, valid_sets=[lightgbm.Dataset(x_eval, label=y_eval)],
                   valid_names=["eval"], callbacks=[lightgbm.record_evaluation(evals)])
    return {"eval-rmse": evals["eval"]["rmse"][-1]}


def fit(storage, name, workers, rounds, pace_s=0.0):
    trainer = LightGBMTrainer(train_func, train_loop_config={"rounds": rounds, "pace_s": pace_s},
                              scaling_config=trainrt.ScalingConfig(num_workers=workers),
                              run_config=trainrt.RunConfig(storage_path=storage, name=name))
    result = trainer.fit()
    booster = LightGBMTrainer.get_model(result.checkpoint)
    return {"eval-rmse": result.metrics["eval-rmse"], "iteration": result.metrics["iteration"],
            "trees": booster.current_iteration()}


if __name__ == "__main__":
    if sys.argv[1] == "reference":
        print(json.dumps(reference(int(sys.argv[2]))))
    else:
        pace = float(sys.argv[6]) if len(sys.argv) > 6 else 0.0
        print(json.dumps(fit(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), pace)))
