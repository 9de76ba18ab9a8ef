"""Ray Data's read_csv into a training loop, one approach per process (data_bench.sh step 5):

    python3 raydata_bench.py make CSV ROWS           # the CSV: ROWS x 16 float features + an int label
    python3 raydata_bench.py run APPROACH CSV WORK   # one JSON line
APPROACH: pandas (pd.read_csv, then numpy slices), pyarrow (pyarrow.csv, then numpy slices), trainrt
(trainrt.data.read_csv landed in a dataset file as a Trainer's datasets= does, then two epochs
through the streaming reader, as get_dataset_shard's iter_batches reads them on one rank) and ray
(ray.data.read_csv(...).iter_batches in the driver of Ray's local cluster: Ray streams the file
anew every epoch). Batches of 256 rows as dicts of numpy arrays, each batch's features summed.
ingest_s: reading the CSV before the first epoch where the approach does that (pandas, pyarrow:
the read; trainrt: the read and the write of the dataset file); epoch_s: the two epochs after it.
peak_rss_mb: the process's peak resident set (ru_maxrss)."""
import json
import os
import resource
import sys
import time

import numpy as np

BATCH = 256
FEATURES = 16


def make(path, rows):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(rows, FEATURES)).astype(np.float32)
    label = (x.sum(axis=1) > 0).astype(np.int64)
    header = ",".join([f"f{i}" for i in range(FEATURES)] + ["label"])
    with open(path + ".tmp", "w") as file:
        file.write(header + "\n")
        for start in range(0, rows, 100_000):
            chunk = np.column_stack([x[start:start + 100_000], label[start:start + 100_000]])
            np.savetxt(file, chunk, delimiter=",", fmt=["%.6f"] * FEATURES + ["%d"])
    os.replace(path + ".tmp", path)


def consume(batches):
    rows, total = 0, 0.0
    for batch in batches:
        rows += len(batch["label"])
        total += float(batch["f0"].sum())
    return rows, total


def sliced(columns):
    count = len(columns["label"])
    for start in range(0, count, BATCH):
        yield {name: array[start:start + BATCH] for name, array in columns.items()}


def in_memory(read):
    started = time.perf_counter()
    columns = read()
    ingest = time.perf_counter() - started
    return ingest, [lambda: sliced(columns)] * 2


def pandas_read(csv):
    import pandas as pd
    frame = pd.read_csv(csv)
    return {name: frame[name].to_numpy() for name in frame.columns}


def pyarrow_read(csv):
    from pyarrow import csv as pacsv
    table = pacsv.read_csv(csv)
    return {name: table.column(name).to_numpy() for name in table.column_names}


def trainrt_epochs(csv, work):
    import trainrt.data
    from trainrt._raydata import ingest
    from trainrt._trainrt import open_dataset
    path = os.path.join(work, "datasets.h5")
    started = time.perf_counter()
    ingest._write(path, {"train": trainrt.data.read_csv(csv)})
    seconds = time.perf_counter() - started
    reader = open_dataset(path, "train", 0, 1, 0)
    options = {"batch_size": BATCH, "drop_last": False, "pad": False, "prefetch_batches": 2, "shuffle": "none",
               "shuffle_buffer": 0, "columns": None}
    return seconds, [lambda epoch=epoch: reader.iter_batches(options, epoch, 0) for epoch in (0, 1)]


def ray_epochs(csv, work):
    import ray
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    dataset = ray.data.read_csv(csv)
    return 0.0, [lambda: dataset.iter_batches(batch_size=BATCH, batch_format="numpy")] * 2


def run(approach, csv, work):
    if approach == "pandas":
        ingest, epochs = in_memory(lambda: pandas_read(csv))
    elif approach == "pyarrow":
        ingest, epochs = in_memory(lambda: pyarrow_read(csv))
    elif approach == "trainrt":
        ingest, epochs = trainrt_epochs(csv, work)
    else:
        ingest, epochs = ray_epochs(csv, work)
    times, rows = [], 0
    for epoch in epochs:
        started = time.perf_counter()
        rows, _ = consume(epoch())
        times.append(time.perf_counter() - started)
    print(json.dumps({"part": "raydata", "approach": approach, "rows": rows, "csv_mb": os.path.getsize(csv) / 1e6,
                      "ingest_s": ingest, "epoch_s": times,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], int(sys.argv[3]))
    else:
        run(*sys.argv[2:5])
