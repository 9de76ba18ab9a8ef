"""BENCHMARKS.md's data section from data_bench.sh's JSON lines: prints a JSON object with the
markdown `section` and the `targets` rows (target, measured, True/False/None)."""
import json, statistics, sys
from pathlib import Path


def rows(path):
    p = Path(path)
    return [json.loads(l) for l in p.read_text().splitlines() if l.startswith("{")] if p.exists() else []


def median(values):
    return statistics.median(values) if values else None


def main():
    data = rows(sys.argv[1])
    if not data:
        print(json.dumps({"section": "## Data\n\nNot run.\n", "targets": []}))
        return
    plain = {r["pair"]: r["mb_per_s"] for r in data if r["part"] == "cold_plain"}
    lines = ["## Data: the streaming reader", "",
             "One rank streams a 512 MiB split (f32 [131072, 1024] + i64 labels, uncompressed, chunks of 1 MiB) "
             "in 1 MiB batches with `prefetch_batches = 2`, every byte touched, against a plain sequential "
             "`read()` of the same file; both cold (the file's pages dropped with `posix_fadvise(DONTNEED)` "
             "before each run). Ratios pair by pair (stream / plain throughput), median over the pairs. "
             "Peak RSS growth: the process's VmHWM minus its RSS before the stream opened. On this machine "
             "the disk is virtual and its host may cache the file whatever the guest drops, so cold figures move a "
             "lot between runs (each pair's ratio is listed); the plain read is one thread reading 1 MiB at a "
             "time, while the stream's reader thread overlaps reading with the consumer.", "",
             "| shuffle | stream MB/s (median) | plain MB/s (median) | ratio (median) | ratios per pair | peak RSS growth (MB) |",
             "|---|---:|---:|---:|---|---:|"]
    ratios = {}
    for shuffle in ("none", "blocks", "global"):
        runs = [r for r in data if r["part"] == "cold_stream" and r["shuffle"] == shuffle]
        pair_ratios = [r["mb_per_s"] / plain[r["pair"]] for r in runs if r["pair"] in plain]
        ratios[shuffle] = median(pair_ratios)
        growth = max(r["peak_rss_mb"] - r["rss_start_mb"] for r in runs)
        lines.append(f"| {shuffle} | {median([r['mb_per_s'] for r in runs]):.0f} | {median(list(plain.values())):.0f} | "
                     f"{ratios[shuffle]:.2f}× | {', '.join(f'{x:.2f}' for x in pair_ratios)} | {growth:.0f} |")
    wait = [r for r in data if r["part"] == "fashion_wait"]
    fractions = [r["data_wait_s"] / r["train_time_s"] for r in wait]
    lines += ["", "fashion_mlp, 2 ranks, batch 64 (938 steps an epoch), `prefetch_batches = 2`: the time the training "
              "thread was blocked waiting for a batch (the largest of the ranks), per epoch:", "",
              "| epoch | train time (s) | data wait (s) | wait / train time |", "|---:|---:|---:|---:|"]
    lines += [f"| {r['epoch']} | {r['train_time_s']:.3f} | {r['data_wait_s']:.6f} | {f * 100:.3f} % |"
              for r, f in zip(wait, fractions)]
    lines += ["", "Samples/s over FashionMNIST's test split (10000 samples, HDF5 file of `trainrt data import`), batch 64, "
              "one process: trainrt's stream against a PyTorch `DataLoader` over a map-style `Dataset` reading each "
              "sample through h5py (what a PyTorch user writes today), median of 3 alternated runs:", "",
              "| shuffle | trainrt (samples/s) | PyTorch num_workers=0 | ratio | PyTorch num_workers=1 | ratio |",
              "|---|---:|---:|---:|---:|---:|"]
    loader_ratio = {}
    for shuffle in ("none", "global"):
        ours = median([r["samples_per_s"] for r in data if r["part"] == "loader_trainrt" and r["shuffle"] == shuffle])
        cells = []
        for workers in (0, 1):
            theirs = median([r["samples_per_s"] for r in data if r["part"] == "loader_pytorch"
                             and r["shuffle"] == shuffle and r["workers"] == workers])
            loader_ratio[(shuffle, workers)] = ours / theirs
            cells += [f"{theirs:.0f}", f"{ours / theirs:.0f}×"]
        lines.append(f"| {shuffle} | {ours:.0f} | " + " | ".join(cells) + " |")
    lines.append("")
    targets = [
        ["Data: streaming read, cold, shuffle none ≥ 0.90 × a plain sequential read", f"{ratios['none']:.2f}×", ratios["none"] >= 0.90],
        ["Data: streaming read, cold, shuffle blocks ≥ 0.80 × a plain sequential read", f"{ratios['blocks']:.2f}×", ratios["blocks"] >= 0.80],
        ["Data: streaming read, cold, shuffle global (reported)", f"{ratios['global']:.2f}×", None],
        ["Data: fashion_mlp data wait ≤ 2 % of train time (prefetch 2, 2 ranks)", f"{max(fractions) * 100:.3f} % (worst epoch)", max(fractions) <= 0.02],
        ["Data: samples/s ≥ 2 × PyTorch DataLoader + h5py (shuffle none/global, num_workers 0/1)",
         f"{min(loader_ratio.values()):.0f}× (smallest)", min(loader_ratio.values()) >= 2],
    ]
    print(json.dumps({"section": "\n".join(lines), "targets": targets}))


if __name__ == "__main__":
    main()
