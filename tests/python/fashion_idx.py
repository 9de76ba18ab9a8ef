"""The FashionMNIST IDX files (gzipped or not) as torch tensors or numpy arrays, for the framework
guides' scripts (tests/python/*_guide.py), which stand in for a user's own data loading."""
import gzip
import os

import numpy as np


def read_idx(folder, name, offset):
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        path += ".gz"
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as file:
        return np.frombuffer(file.read(), np.uint8, offset=offset)


def fashion_arrays(folder, kind, limit):
    """The first `limit` images of `kind` ("train" or "test"), flattened, float32 pixels / 255, and
    their int64 labels."""
    prefix = "train" if kind == "train" else "t10k"
    images = read_idx(folder, f"{prefix}-images-idx3-ubyte", 16).reshape(-1, 28 * 28)[:limit]
    labels = read_idx(folder, f"{prefix}-labels-idx1-ubyte", 8)[:limit]
    return images.astype(np.float32) / 255.0, labels.astype(np.int64)


def fashion(folder, kind, limit, normalize=lambda pixels: pixels):
    """fashion_arrays as a torch TensorDataset, the pixels through `normalize`."""
    import torch
    from torch.utils.data import TensorDataset
    pixels, labels = fashion_arrays(folder, kind, limit)
    return TensorDataset(normalize(torch.from_numpy(pixels)), torch.from_numpy(labels))
