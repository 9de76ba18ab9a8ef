"""A HIGGS-shaped synthetic table (downloads are not possible here): ROWS rows of 28 float32
features (21 "low-level" standard normals and 7 "high-level" nonlinear functions of them) and a
0/1 label drawn from a logistic model with interactions, so that trees have something to find.

    python3 bench/xgboost/make_table.py --rows 1000000 --out DIR   # DIR/features.npy, DIR/label.npy
"""
import argparse
import os

import numpy as np


def make(rows, seed=0):
    rng = np.random.default_rng(seed)
    low = rng.standard_normal((rows, 21), dtype=np.float32)
    high = np.stack([low[:, 0] * low[:, 1], np.abs(low[:, 2]) + low[:, 3], np.sin(low[:, 4]) * low[:, 5],
                     low[:, 6] ** 2 - low[:, 7], np.maximum(low[:, 8], low[:, 9]), low[:, 10] * low[:, 11] * low[:, 12],
                     np.tanh(low[:, 13] + low[:, 14])], axis=1).astype(np.float32)
    weights = rng.standard_normal(28).astype(np.float32)
    features = np.hstack([low, high])
    logit = features @ weights * 0.5 + 1.5 * high[:, 0] - high[:, 3] * 0.7
    label = (rng.random(rows, dtype=np.float32) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    return features, label


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    features, label = make(args.rows)
    np.save(os.path.join(args.out, "features.npy"), features)
    np.save(os.path.join(args.out, "label.npy"), label)
