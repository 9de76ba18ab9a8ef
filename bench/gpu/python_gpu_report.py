#!/usr/bin/env python3
"""Renders the JSON lines of bench/gpu/python_gpu_bench.sh (PYBENCH_SIDE=trainrt or ray): per model and
data, the median epoch time (epochs after the first: the first pays cuDNN's and the allocator's
warm-up) in plain PyTorch and through each other side in the file (trainrt, the plain loop in
trainrt's interpreter, Ray Train), with its ratio to PyTorch; the checkpoint's stall against its pinned device-to-host copy.

    python_gpu_report.py RESULTS.jsonl       prints the table (and the stall lines)
"""
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: the reporting library
from reporting import median, records  # noqa: E402

NAMES = {"trainrt": "trainrt", "pytorch-embedded": "plain loop in trainrt's interpreter", "ray": "Ray Train"}


def ratio(a, b):
    return f"{a / b:.3f}x" if a and b else "-"


def seconds(value):
    return f"{value:.3f}" if value else "missing"


def epoch_times(rows):
    """(model, data, who) -> epoch times after the first."""
    epochs = collections.defaultdict(list)
    for row in rows:
        if "epoch_s" in row and row["epoch"] > 1:
            epochs[(row["model"], row["data"], row["who"])].append(row["epoch_s"])
    return epochs


def table_lines(path):
    """The table's lines, then for each checkpoint stall measured an empty line and its line."""
    rows = records(path)
    epochs = epoch_times(rows)
    others = [who for who in NAMES if any(key[2] == who for key in epochs)]
    lines = ["| model | data | PyTorch epoch (s) | " + " | ".join(f"{NAMES[who]} (s) | / PyTorch" for who in others) + " |",
             "|---|---|---|" + "---|---|" * len(others)]
    for model, data in sorted({(m, d) for m, d, _ in epochs}):
        theirs = median(epochs.get((model, data, "pytorch"), []))
        cells = []
        for who in others:
            value = median(epochs.get((model, data, who), []))
            cells += [seconds(value), ratio(value, theirs)]
        lines.append(f"| {model} | {data} | {seconds(theirs)} | " + " | ".join(cells) + " |")
    for row in rows:
        if "stall_s" in row:
            lines += ["", f"checkpoint of {row['model']} ({row['checkpoint_bytes'] / 2**20:.1f} MiB: weights and momentum), "
                          f"checkpoint.async = true: report() stall {row['stall_s'] * 1e3:.2f} ms vs pinned device-to-host "
                          f"copy {row['d2h_pinned_s'] * 1e3:.2f} ms: {row['stall_s'] / row['d2h_pinned_s']:.2f}x"
                          + (f" ({row['note']})" if row.get("note") else "")]
    return lines


if __name__ == "__main__":
    print("\n".join(table_lines(sys.argv[1])))
