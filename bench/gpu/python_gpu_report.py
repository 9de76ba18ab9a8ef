"""Renders bench/gpu/python_gpu_bench.sh's JSON lines: per model and data, the median epoch time
(epochs after the first: the first pays cuDNN's and the allocator's warm-up) through trainrt and
in plain PyTorch, and their ratio; the checkpoint's stall against its pinned device-to-host copy."""
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


print("| model | data | trainrt epoch (s) | PyTorch epoch (s) | trainrt / PyTorch | plain loop in trainrt's "
      "interpreter (s) | that / PyTorch |")
print("|---|---|---|---|---|---|---|")
for model, data in sorted({(m, d) for m, d, _ in epochs}):
    ours, theirs, embedded = (median(model, data, who) for who in ("trainrt", "pytorch", "pytorch-embedded"))
    print(f"| {model} | {data} | {seconds(ours)} | {seconds(theirs)} | {ratio(ours, theirs)} | "
          f"{seconds(embedded)} | {ratio(embedded, theirs)} |")
for row in rows:
    if "stall_s" in row:
        print(f"\ncheckpoint of {row['model']} ({row['checkpoint_bytes'] / 2**20:.1f} MiB: weights and momentum), "
              f"checkpoint.async = true: report() stall {row['stall_s'] * 1e3:.2f} ms vs pinned device-to-host copy "
              f"{row['d2h_pinned_s'] * 1e3:.2f} ms: {row['stall_s'] / row['d2h_pinned_s']:.2f}x"
              + (f" ({row['note']})" if row.get("note") else ""))
