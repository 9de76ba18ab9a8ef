"""The baseline of the XGBoost benchmark: what a user writes by hand without trainrt. A tracker
started by hand (xgboost.tracker.RabitTracker), RANKS worker processes, each reading its rows of
the train and test splits with h5py (rows r, r + RANKS, ...: the rows trainrt gives rank r) and
training with the same parameters and threads as the trainrt run. Rank 0 prints one JSON line:
the median seconds per round (rounds after the first), and the median seconds of
booster.save_model() to a local file (alone, and followed by an fsync).

    python3 bench/xgboost/plain_xgboost.py --ranks 2 --data higgs.h5 --rounds 20 --dir /tmp/x
"""
import argparse
import json
import multiprocessing
import os
import statistics
import time

import h5py
import numpy as np
import xgboost
from xgboost import collective
from xgboost.tracker import RabitTracker

PARAMS = {"objective": "binary:logistic", "eval_metric": ["logloss", "error"], "max_depth": 8, "eta": 0.1,
          "tree_method": "hist", "nthread": 1}


def shard(path, split, rank, ranks):
    with h5py.File(path, "r") as f:
        return xgboost.DMatrix(np.asarray(f[split]["features"])[rank::ranks],
                               label=np.asarray(f[split]["label"])[rank::ranks])


class RoundTimer(xgboost.callback.TrainingCallback):
    def __init__(self):
        super().__init__()
        self.times, self.last = [], None

    def before_iteration(self, model, epoch, evals_log):
        self.last = time.perf_counter()
        return False

    def after_iteration(self, model, epoch, evals_log):
        self.times.append(time.perf_counter() - self.last)
        return False


def save_times(booster, directory, repeats=5):
    plain, synced = [], []
    for i in range(repeats):
        path = os.path.join(directory, f"model_{i}.ubj")
        t0 = time.perf_counter()
        booster.save_model(path)
        t1 = time.perf_counter()
        fd = os.open(path, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        t2 = time.perf_counter()
        plain.append(t1 - t0)
        synced.append(t2 - t0)
        os.unlink(path)
    return statistics.median(plain), statistics.median(synced)


def worker(rank, ranks, envs, args):
    with collective.CommunicatorContext(**envs, dmlc_task_id=str(rank)):
        dtrain, dtest = shard(args.data, "train", rank, ranks), shard(args.data, "test", rank, ranks)
        timer = RoundTimer()
        booster = xgboost.train(PARAMS, dtrain, args.rounds, evals=[(dtrain, "train"), (dtest, "test")],
                                callbacks=[timer], verbose_eval=False)
        if rank == 0:
            save_s, save_fsync_s = save_times(booster, args.dir)
            print(json.dumps({"bench": "xgboost_plain", "ranks": ranks, "train_rows": args.train_rows,
                              "round_s": statistics.median(timer.times[1:]), "save_s": save_s,
                              "save_fsync_s": save_fsync_s, "model_bytes": len(booster.save_raw("ubj"))}),
                  flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--data", required=True)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--dir", required=True)
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    with h5py.File(args.data, "r") as f:
        args.train_rows = int(f["train"]["label"].shape[0])
    tracker = RabitTracker(host_ip="127.0.0.1", n_workers=args.ranks, port=0, sortby="task")
    tracker.start()
    envs = tracker.worker_args()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=worker, args=(r, args.ranks, envs, args)) for r in range(args.ranks)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    tracker.wait_for()
    raise SystemExit(max(w.exitcode for w in workers))
