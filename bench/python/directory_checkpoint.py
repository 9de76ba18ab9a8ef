"""Directory checkpoints (Ray's Checkpoint.from_directory) against copying the same directory:
a `python:` workload (bench/run.sh, part "python")."""
import json
import os
import shutil
import statistics
import time

import numpy as np

import trainrt


def _fill(source, mib):
    """A model.pt-sized file of random bytes and two small JSON files, as a user's directory."""
    os.makedirs(source)
    rng = np.random.default_rng(0)
    with open(os.path.join(source, "model.pt"), "wb") as file:
        for _ in range(mib):
            file.write(rng.bytes(1 << 20))
    for name in ("config.json", "tokenizer.json"):
        with open(os.path.join(source, name), "w") as file:
            json.dump({"name": name, "values": list(range(1000))}, file)


def _fsync(path, flags=os.O_RDONLY):
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _copy_and_sync(source, target):
    """What `cp -r source target && sync` costs for these files: copy, fsync each, fsync the dir."""
    os.makedirs(target)
    for name in os.listdir(source):
        shutil.copyfile(os.path.join(source, name), os.path.join(target, name))
        _fsync(os.path.join(target, name))
    _fsync(target, os.O_RDONLY | os.O_DIRECTORY)


def bench(config):
    """report(checkpoint=Checkpoint.from_directory(d)) of a config["mib"] MiB directory against
    _copy_and_sync of it onto the same filesystem (the run directory's), alternated, the median of
    config["repeats"] each after one unmeasured. Rank 0 prints one JSON line."""
    mib, repeats = int(config.get("mib", 100)), int(config.get("repeats", 5))
    run_dir = trainrt.get_context().run_dir
    source = os.path.join(run_dir, f"bench_source_{trainrt.get_context().world_rank}")
    _fill(source, mib)
    checkpoint_s, copy_s = [], []
    for i in range(repeats + 1):
        t0 = time.perf_counter()
        trainrt.report({"i": i}, checkpoint=trainrt.Checkpoint.from_directory(source))
        t1 = time.perf_counter()
        target = os.path.join(run_dir, f"bench_copy_{trainrt.get_context().world_rank}")
        _copy_and_sync(source, target)
        t2 = time.perf_counter()
        shutil.rmtree(target)
        if i > 0:
            checkpoint_s.append(t1 - t0)
            copy_s.append(t2 - t1)
    shutil.rmtree(source)
    if trainrt.get_context().world_rank == 0:
        print(json.dumps({"bench": "directory_checkpoint", "ranks": trainrt.get_context().world_size, "mib": mib,
                          "checkpoint_s": statistics.median(checkpoint_s), "copy_s": statistics.median(copy_s)}),
              flush=True)
