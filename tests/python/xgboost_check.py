"""Checks for the XGBoost tests (tests/python/test_xgboost_*.sh), outside any run:
  reference FILE ROUNDS KEY=VALUE...   single-process xgboost.train on FILE's train split with the
                                       same params, evaluated on every other split: one JSON line
                                       of the last round's metrics ("test-error", ...)
  model RUN_DIR                        the newest checkpoint's booster: "<sha256 of its UBJSON
                                       bytes, 16 hex> <rounds>"
"""
import hashlib
import json
import sys

import h5py
import numpy as np
import xgboost

import trainrt
from trainrt.xgboost import load_model


def _split(path, split):
    with h5py.File(path, "r") as f:
        label = f.attrs.get("label_column", "label")
        label = label.decode() if isinstance(label, bytes) else label
        group = f[split]
        features = [name for name in sorted(group) if name != label]
        matrix = np.hstack([np.asarray(group[name], dtype=np.float32).reshape(group[name].shape[0], -1)
                            for name in features])
        return matrix, np.asarray(group[label])


def _params(pairs):
    params = {}
    for pair in pairs:
        key, value = pair.split("=", 1)
        for kind in (int, float):
            try:
                value = kind(value)
                break
            except ValueError:
                pass
        params[key] = value.split(",") if key == "eval_metric" else value
    return params


def reference(path, rounds, *pairs):
    x, y = _split(path, "train")
    dtrain = xgboost.DMatrix(x, label=y)
    with h5py.File(path, "r") as f:
        splits = sorted(name for name in f if isinstance(f[name], h5py.Group) and name != "train")
    evals = [(dtrain, "train")] + [(xgboost.DMatrix(*_split(path, s)[:1], label=_split(path, s)[1]), s) for s in splits]
    log = {}
    xgboost.train(_params(pairs), dtrain, int(rounds), evals=evals, evals_result=log, verbose_eval=False)
    print(json.dumps({f"{d}-{m}": v[-1] for d, ms in log.items() for m, v in ms.items()}))


def model(run_dir):
    booster = load_model(trainrt.Checkpoint.open(run_dir))
    raw = bytes(booster.save_raw("ubj"))
    print(hashlib.sha256(raw).hexdigest()[:16], booster.num_boosted_rounds())


if __name__ == "__main__":
    {"reference": reference, "model": model}[sys.argv[1]](*sys.argv[2:])
