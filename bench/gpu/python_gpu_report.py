"""Renders the JSON lines of bench/gpu/python_gpu_bench.sh (PYBENCH_SIDE=trainrt or ray): per model and
data, the median epoch time (epochs after the first: the first pays cuDNN's and the allocator's
warm-up) in plain PyTorch and through each other side in the file (trainrt, the plain loop in
trainrt's interpreter, Ray Train), with its ratio to PyTorch; the checkpoint's stall against its pinned device-to-host copy."""
import collections
import json
import statistics
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
epochs = collections.defaultdict(list)
for row in rows:
    if "epoch_s" in row and row["epoch"] > 1:
        epochs[(row["model"], row["data"], row["who"])].append(row["epoch_s"])
def median(model, data, who):
    values = epochs.get((model, data, who))
    return statistics.median(values) if values else None


def ratio(a, b):
    return f"{a / b:.3f}x" if a and b else "-"


def seconds(value):
    return f"{value:.3f}" if value else "missing"


NAMES = {"trainrt": "trainrt", "pytorch-embedded": "plain loop in trainrt's interpreter", "ray": "Ray Train"}
others = [who for who in NAMES if any(key[2] == who for key in epochs)]
print("| model | data | PyTorch epoch (s) | " + " | ".join(f"{NAMES[who]} (s) | / PyTorch" for who in others) + " |")
print("|---|---|---|" + "---|---|" * len(others))
for model, data in sorted({(m, d) for m, d, _ in epochs}):
    theirs = median(model, data, "pytorch")
    cells = []
    for who in others:
        value = median(model, data, who)
        cells += [seconds(value), ratio(value, theirs)]
    print(f"| {model} | {data} | {seconds(theirs)} | " + " | ".join(cells) + " |")
for row in rows:
    if "stall_s" in row:
        print(f"\ncheckpoint of {row['model']} ({row['checkpoint_bytes'] / 2**20:.1f} MiB: weights and momentum), "
              f"checkpoint.async = true: report() stall {row['stall_s'] * 1e3:.2f} ms vs pinned device-to-host copy "
              f"{row['d2h_pinned_s'] * 1e3:.2f} ms: {row['stall_s'] / row['d2h_pinned_s']:.2f}x"
              + (f" ({row['note']})" if row.get("note") else ""))
