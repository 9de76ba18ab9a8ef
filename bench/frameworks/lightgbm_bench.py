"""LightGBM, three ways, for "Frameworks: trainrt vs Ray Train and the framework's own launcher"
(bench/frameworks/README.md). BENCH_LGB_SIDE is the way it runs:

  ray     a LightGBMTrainer over a training function (Ray 2.x's form) with the network parameters
          ray.train.lightgbm.get_network_params() gives, Ray's RayTrainReportCallback with its defaults
          (every round's metrics reported, the model saved at the end), with Ray's venv; run.sh makes trainrt's copy with `sed 's/ray\\.train/trainrt/g'`
  native  LightGBM has no launcher: run.sh starts this file twice, each with the machines list and
          port a user writes by hand (BENCH_LGB_RANK), and it calls train_func directly

The same data (BENCH_LGB_ROWS rows of 20 features from a fixed generator, each rank its contiguous
half, pre_partition; 20000 held-out rows every rank evaluates on), parameters (data_parallel,
deterministic, one thread per rank) and BENCH_LGB_ROUNDS rounds on every side. Rank 0 writes one
JSON line per round to BENCH_LGB_OUT: the round's wall time (from the previous round's callback to
this one's, the report inside the time) and its eval rmse, under the keys the report reads
(epoch, seconds, loss).
"""
import json
import os
import time

import lightgbm
import numpy as np

SIDE = os.environ.get("BENCH_LGB_SIDE", "ray")
ROWS = int(os.environ.get("BENCH_LGB_ROWS", "200000"))
ROUNDS = int(os.environ.get("BENCH_LGB_ROUNDS", "30"))
PARAMS = {"objective": "regression", "metric": "rmse", "learning_rate": 0.1, "num_leaves": 63, "verbose": -1,
          "deterministic": True, "force_row_wise": True, "num_threads": 1, "seed": 3, "tree_learner": "data_parallel",
          "pre_partition": True}
PORTS = (29551, 29552)


def data():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(ROWS + 20000, 20))
    y = 3 * np.sin(x[:, 0]) + x[:, 1] ** 2 + 0.5 * x[:, 2] * x[:, 3] + rng.normal(scale=0.3, size=len(x))
    return x[:ROWS], y[:ROWS], x[ROWS:], y[ROWS:]


class RoundClock:
    """A LightGBM callback: each round's wall time and eval rmse, written by rank 0."""

    def __init__(self, rank):
        self.rank, self.last = rank, time.perf_counter()

    def __call__(self, env):
        now = time.perf_counter()
        if self.rank == 0 and os.environ.get("BENCH_LGB_OUT"):
            rmse = [value for _, name, value, _ in env.evaluation_result_list if name == "rmse"][0]
            with open(os.environ["BENCH_LGB_OUT"], "a") as out:
                out.write(json.dumps({"epoch": env.iteration, "seconds": now - self.last, "loss": rmse}) + "\n")
        self.last = now


def train_func(config):
    x, y, x_eval, y_eval = data()
    if SIDE == "native":
        rank, world = int(os.environ["BENCH_LGB_RANK"]), 2
        network = {"machines": ",".join(f"127.0.0.1:{port}" for port in PORTS), "local_listen_port": PORTS[rank],
                   "num_machines": world}
        callbacks = []
    else:
        import ray.train
        import ray.train.lightgbm
        context = ray.train.get_context()
        rank, world = context.get_world_rank(), context.get_world_size()
        network = ray.train.lightgbm.get_network_params()
        callbacks = [ray.train.lightgbm.RayTrainReportCallback()]  # Ray's default: every round's metrics
    share = slice(rank * ROWS // world, (rank + 1) * ROWS // world)
    train_set = lightgbm.Dataset(x[share], label=y[share])
    eval_set = lightgbm.Dataset(x_eval, label=y_eval, reference=train_set)
    lightgbm.train({**PARAMS, **network}, train_set, num_boost_round=ROUNDS, valid_sets=[eval_set],
                   valid_names=["eval"], callbacks=callbacks + [RoundClock(rank)])


def main():
    if SIDE == "native":
        return train_func({})
    import ray.train
    from ray.train.lightgbm import LightGBMTrainer
    LightGBMTrainer(train_func, scaling_config=ray.train.ScalingConfig(num_workers=2),
                    run_config=ray.train.RunConfig(name=os.environ.get("BENCH_LGB_NAME", "lightgbm_bench"),
                                                   storage_path=os.environ.get("BENCH_LGB_STORAGE", "/tmp/lgb_bench"))).fit()


if __name__ == "__main__":
    main()
