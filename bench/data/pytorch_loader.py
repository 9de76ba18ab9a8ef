"""What a PyTorch user writes today to train from an HDF5 file: a map-style Dataset that reads one
sample at a time through h5py, under torch.utils.data.DataLoader (batch_size, shuffle, num_workers).
Iterates one epoch of the split and prints one JSON line: samples/s, seconds.

    /usr/bin/python3 bench/data/pytorch_loader.py FILE --batch 64 [--shuffle] [--workers N]
"""
import argparse, json, time

import h5py
import torch
from torch.utils.data import DataLoader, Dataset


class H5Split(Dataset):
    """Opens the file lazily, once per process (each DataLoader worker gets its own handle)."""

    def __init__(self, path, split, features, label):
        self.path, self.split, self.features, self.label = path, split, features, label
        self.file = None
        with h5py.File(path, "r") as f:
            self.size = len(f[f"{split}/{label}"])

    def __len__(self):
        return self.size

    def __getitem__(self, i):
        if self.file is None:
            self.file = h5py.File(self.path, "r")
        group = self.file[self.split]
        return torch.from_numpy(group[self.features][i]), int(group[self.label][i])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--split", default="train")
    parser.add_argument("--features", default="images")
    parser.add_argument("--label", default="labels")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--shuffle", action="store_true")
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    loader = DataLoader(H5Split(args.file, args.split, args.features, args.label), batch_size=args.batch,
                        shuffle=args.shuffle, num_workers=args.workers)
    start = time.perf_counter()
    samples = 0
    checksum = 0
    for images, labels in loader:
        samples += len(labels)
        checksum += int(labels.sum())
    seconds = time.perf_counter() - start
    print(json.dumps({"bench": "pytorch_loader", "shuffle": "global" if args.shuffle else "none",
                      "workers": args.workers, "batch": args.batch, "samples": samples, "seconds": seconds,
                      "samples_per_s": samples / seconds, "checksum": checksum}))


if __name__ == "__main__":
    main()
