"""What a Python user of trainrt writes to read an HDF5 split: trainrt.get_dataset() and
iter_batches() (the streaming reader behind Ray Data's names) inside a training function that
trainrt runs. Times one epoch of the split (the iterator's creation to its last batch, the labels
summed as pytorch_loader.py does) and writes one JSON line to train.out:

    build/trainrt --run.workload=python:bench/data/trainrt_python_loader.py:epoch --data.path=FILE \\
        --train.batch=64 --train.shuffle=none|global|blocks --train.out=OUT.json \\
        --run.storage_path=DIR --run.name=NAME --metrics.progress=off
"""
import json
import time

import trainrt


def epoch(config):
    batch, shuffle = int(config.get("batch", 64)), str(config.get("shuffle", "none"))
    dataset = trainrt.get_dataset(str(config.get("split", "train")))  # opens the file, as the Dataset's __init__ there
    start = time.perf_counter()
    batches = dataset.iter_batches(batch_size=batch, shuffle=shuffle, epoch=0)
    samples = checksum = 0
    label = dataset.label_column
    for columns in batches:
        labels = columns[label]
        samples += len(labels)
        checksum += int(labels.sum())
    seconds = time.perf_counter() - start
    context = trainrt.get_context()
    record = {"bench": "trainrt_python_loader", "shuffle": shuffle, "batch": batch, "ranks": context.world_size,
              "rank": context.world_rank, "samples": samples, "seconds": seconds, "samples_per_s": samples / seconds,
              "data_wait_s": batches.wait_seconds, "checksum": checksum}
    if context.world_rank == 0:
        with open(str(config["out"]), "w") as out:
            out.write(json.dumps(record) + "\n")
