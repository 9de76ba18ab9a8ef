"""BENCHMARKS.md's data section from data_bench.sh's JSON lines: prints a JSON object with the
markdown `section` and the `targets` rows (target, measured, True/False/None); goals in targets.py.

    /usr/bin/python3 bench/data/report.py DATA_BENCH.jsonl
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: the reporting library
from reporting import Part, median, records, target_row, targets, times  # noqa: E402

GOALS = targets("data")

SHUFFLES = ("none", "blocks", "global")


def num(x, spec=".0f"):
    return "–" if x is None else format(x, spec)


def big_times(x):
    return "–" if x is None else (f"{x:.0f}×" if x >= 10 else f"{x:.1f}×")


def cold_section(data, lines, targets):
    plain = {(r["pair"], r["against"]): r for r in data if r["part"] == "cold_plain"}
    streams = [r for r in data if r["part"] == "cold_stream"]
    if not streams or not plain:
        lines += ["Streaming read vs plain read: not run.", ""]
        targets += [[GOALS.STREAM_NONE.text, "not run", None], [GOALS.STREAM_BLOCKS.text, "not run", None]]
        return
    methods = sorted({r.get("cold", "fadvise") for r in data if r["part"] in ("cold_plain", "cold_stream", "rss_ranks")})
    how = {"drop_caches": "the whole page cache dropped (`sync; echo 3 > /proc/sys/vm/drop_caches`)",
           "fadvise": "only the file's pages dropped (`fdatasync` + `posix_fadvise(DONTNEED)`: "
                      "/proc/sys/vm/drop_caches was not writable)"}
    cold = " / ".join(how.get(m, m) for m in methods)
    if len(methods) > 1:
        cold += " (which one per run: the `cold` field of the raw lines)"
    sample = next(r for r in streams if r["shuffle"] == "none") if any(r["shuffle"] == "none" for r in streams) else streams[0]
    row_bytes = sample["bytes"] / sample["samples"]
    file_mib = sample.get("file_bytes", sample["bytes"]) / 2**20
    pairs = sorted({r["pair"] for r in streams})
    lines += ["## Data: the streaming reader", "",
              f"One rank streams a {file_mib:.0f} MiB split (f32 [{sample['samples']}, 1024] + i64 labels, "
              f"uncompressed, written by `trainrt data import npy`) in batches of 256 rows "
              f"({256 * row_bytes / 2**20:.1f} MiB) with `prefetch_batches = 2`, every byte touched, against one thread "
              "`read()`ing the same file sequentially in 1 MiB pieces, every byte touched as well. Before every run "
              f"(plain or stream): {cold}. Each pair is one plain read and one stream of the same shuffle; odd pairs "
              "read plain first, even pairs stream first. Ratio: stream / plain throughput within the pair; the median "
              "is over the pairs. Peak RSS growth: the process's VmHWM minus its RSS before the stream opened. The "
              "disk is virtual: its host may still cache the file whatever the guest drops, which this run cannot "
              "see (both sides of a pair are exposed to it alike).", "",
              "| shuffle | pairs | stream MB/s (median) | plain MB/s (median) | stream / plain (median) | "
              "plain first (median) | stream first (median) | peak RSS growth (MB, max) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    ratios, per_pair = {}, {}
    for shuffle in SHUFFLES:
        runs = [r for r in streams if r["shuffle"] == shuffle]
        matched = [(r, plain[r["pair"], shuffle]) for r in runs if (r["pair"], shuffle) in plain]
        per_pair[shuffle] = {r["pair"]: (r, p, r["mb_per_s"] / p["mb_per_s"]) for r, p in matched}
        ratios[shuffle] = median([x for _, _, x in per_pair[shuffle].values()])
        by_first = {first: median([x for r, _, x in per_pair[shuffle].values() if r.get("first") == first])
                    for first in ("plain", "stream")}
        growth = max((r["peak_rss_mb"] - r["rss_start_mb"] for r in runs), default=None)
        lines.append(f"| {shuffle} | {len(matched)} | {num(median([r['mb_per_s'] for r, _ in matched]))} | "
                     f"{num(median([p['mb_per_s'] for _, p in matched]))} | {times(ratios[shuffle])} | "
                     f"{times(by_first['plain'])} | {times(by_first['stream'])} | {num(growth)} |")
    lines += ["", "Every pair (MB/s, stream / plain):", "",
              "| pair | first | " + " | ".join(f"{s}: plain | {s}: stream | {s}: ratio" for s in SHUFFLES) + " |",
              "|---:|---|" + "---:|---:|---:|" * len(SHUFFLES)]
    for pair in pairs:
        cells, first = [], "–"
        for shuffle in SHUFFLES:
            if pair in per_pair[shuffle]:
                r, p, x = per_pair[shuffle][pair]
                first = r.get("first", first)
                cells += [num(p["mb_per_s"]), num(r["mb_per_s"]), f"{x:.2f}"]
            else:
                cells += ["–", "–", "–"]
        lines.append(f"| {pair} | {first} | " + " | ".join(cells) + " |")
    lines.append("")

    for shuffle, goal in (("none", GOALS.STREAM_NONE), ("blocks", GOALS.STREAM_BLOCKS), ("global", None)):
        x = ratios[shuffle]
        detail = ", ".join(f"{v[2]:.2f}" for _, v in sorted(per_pair[shuffle].items()))
        measured = f"{times(x)} (median of {len(per_pair[shuffle])} pairs: {detail})"
        if goal is None:  # reported, no goal
            targets.append([f"Data: streaming read, cold, shuffle {shuffle} vs a plain sequential read (reported)", measured, None])
        else:
            targets.append([goal.text, measured, goal.met(x)])


def rss_section(data, lines, targets):
    runs = [r for r in data if r["part"] == "rss_ranks"]
    if not runs:
        lines += ["Peak RSS per rank: not run.", ""]
        targets.append(["Data: peak RSS per rank, dataset ≥ 4 × the prefetch window (reported)", "not run", None])
        return
    ranks = runs[0]["ranks"]
    row_bytes = sum(r["bytes"] for r in runs) / sum(r["samples"] for r in runs)
    per_rank_batch = -(-runs[0]["batch"] // ranks)
    window = runs[0]["prefetch"] * per_rank_batch * row_bytes
    split_bytes = max(sum(r["bytes"] for r in runs if r["shuffle"] == s) for s in {r["shuffle"] for r in runs})
    part_bytes = min(r["bytes"] for r in runs)
    lines += [f"Peak RSS per rank: {ranks} ranks stream the same split at the same time (two `stream_read_bench` "
              f"processes, `--ranks {ranks} --rank R`), cold as above, global batch {runs[0]['batch']} "
              f"({per_rank_batch} rows per rank), `prefetch_batches = {runs[0]['prefetch']}`: a rank's prefetch window "
              f"is {runs[0]['prefetch']} × {per_rank_batch} × {row_bytes:.0f} B = {window / 2**20:.2f} MiB; the split "
              f"({split_bytes / 2**20:.0f} MiB) is {split_bytes / window:.0f}× that window, each rank's part "
              f"({part_bytes / 2**20:.0f} MiB) {part_bytes / window:.0f}×. VmHWM is the process's peak resident set "
              "(the libraries trainrt links included: the RSS before the stream opened is beside it).", "",
              "| shuffle | rank | RSS before opening (MB) | peak RSS, VmHWM (MB) | growth (MB) | MB read by the rank | MB/s |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for r in sorted(runs, key=lambda r: (SHUFFLES.index(r["shuffle"]) if r["shuffle"] in SHUFFLES else 9, r["rank"])):
        lines.append(f"| {r['shuffle']} | {r['rank']} | {r['rss_start_mb']:.1f} | {r['peak_rss_mb']:.1f} | "
                     f"{r['peak_rss_mb'] - r['rss_start_mb']:.1f} | {r['bytes'] / 1e6:.0f} | {r['mb_per_s']:.0f} |")
    lines.append("")
    peak = max(r["peak_rss_mb"] for r in runs)
    growth = max(r["peak_rss_mb"] - r["rss_start_mb"] for r in runs)
    targets.append([f"Data: peak RSS per rank, {ranks} ranks, split {split_bytes / window:.0f}× the prefetch window (reported)",
                    f"{peak:.0f} MB VmHWM at most, +{growth:.0f} MB over the RSS before opening", None])


def wait_section(data, lines, targets):
    wait = [r for r in data if r["part"] == "fashion_wait"]
    if not wait:
        lines += ["fashion_mlp's data wait: not run.", ""]
        targets.append([GOALS.DATA_WAIT.text, "not run", None])
        return
    fractions = [r["data_wait_s"] / r["train_time_s"] for r in wait]
    lines += ["fashion_mlp, 2 ranks, batch 64 (938 steps an epoch), `prefetch_batches = 2`: the time the training "
              "thread was blocked waiting for a batch (the largest of the ranks), per epoch:", "",
              "| epoch | train time (s) | data wait (s) | wait / train time |", "|---:|---:|---:|---:|"]
    lines += [f"| {r['epoch']} | {r['train_time_s']:.3f} | {r['data_wait_s']:.6f} | {f * 100:.3f} % |"
              for r, f in zip(wait, fractions)]
    lines.append("")
    targets.append([GOALS.DATA_WAIT.text, f"{max(fractions) * 100:.3f} % (worst epoch)", GOALS.DATA_WAIT.met(max(fractions))])


LOADERS = [("loader_trainrt_python", None, "trainrt from Python: `get_dataset().iter_batches()`"),
           ("loader_trainrt", None, "trainrt from C++: `stream_read_bench`"),
           ("loader_pytorch", 0, "PyTorch `DataLoader` + h5py, num_workers=0"),
           ("loader_pytorch", 1, "PyTorch `DataLoader` + h5py, num_workers=1")]


def loader_section(data, lines, targets):
    def runs_of(part, workers, shuffle):
        return [r for r in data if r["part"] == part and r["shuffle"] == shuffle
                and (workers is None or r.get("workers") == workers)]
    every = [r for r in data if r["part"].startswith("loader_")]
    if not every:
        lines += ["Samples/s against PyTorch's DataLoader: not run.", ""]
        targets.append([GOALS.LOADER.text, "not run", None])
        return
    counts = sorted({r["samples"] for r in every})
    runs_each = max(len(runs_of(p, w, s)) for p, w, _ in LOADERS for s in ("none", "global"))
    lines += [f"Samples/s over FashionMNIST's {every[0].get('split', 'train')} split ({', '.join(map(str, counts))} "
              "samples, the HDF5 file of `trainrt data import`, page cache warm), batch 64, one process, one epoch "
              "timed from the iterator's creation (C++: from opening the file) to its last batch: trainrt's stream from Python (what a Python user "
              "of trainrt gets: `trainrt.get_dataset(\"train\").iter_batches(batch_size=64, shuffle=...)` inside a "
              "`python:` workload, `bench/data/trainrt_python_loader.py`; dicts of numpy arrays) and from C++ "
              "(`stream_read_bench`, every byte touched), against a PyTorch `DataLoader` over a map-style `Dataset` "
              "reading each sample through h5py (what a PyTorch user writes today, `bench/data/pytorch_loader.py`). "
              f"Median of {runs_each} runs each; the loaders run in turn, in reverse order every other run.", "",
              "| shuffle | loader | samples/s (median) | runs (samples/s) | vs PyTorch num_workers=0 | vs PyTorch num_workers=1 |",
              "|---|---|---:|---|---:|---:|"]
    ratio = {}
    for shuffle in ("none", "global"):
        theirs = {w: median([r["samples_per_s"] for r in runs_of("loader_pytorch", w, shuffle)]) for w in (0, 1)}
        for part, workers, label in LOADERS:
            runs = runs_of(part, workers, shuffle)
            if not runs:
                lines.append(f"| {shuffle} | {label} | not run | | | |")
                continue
            ours = median([r["samples_per_s"] for r in runs])
            cells = ["–", "–"]
            if part != "loader_pytorch":
                for w in (0, 1):
                    if theirs[w]:
                        ratio[part, shuffle, w] = ours / theirs[w]
                cells = [big_times(ratio.get((part, shuffle, w))) for w in (0, 1)]
            lines.append(f"| {shuffle} | {label} | {ours:.0f} | {', '.join(format(r['samples_per_s'], '.0f') for r in runs)} | "
                         + " | ".join(cells) + " |")
    if len(counts) > 1:
        lines += ["", f"Warning: the loaders did not all see the same number of samples ({counts})."]
    lines.append("")
    for part, label in (("loader_trainrt_python", "trainrt from Python (iter_batches)"),
                        ("loader_trainrt", "trainrt from C++ (stream)")):
        mine = {k: v for k, v in ratio.items() if k[0] == part}
        smallest = min(mine.values()) if mine else None
        where = min(mine, key=mine.get) if mine else None
        measured = "not run" if smallest is None else \
            f"{big_times(smallest)} (smallest: shuffle {where[1]}, num_workers {where[2]})"
        targets.append([f"{GOALS.LOADER.text}, {label}, FashionMNIST train split (shuffle none/global, num_workers 0/1)",
                        measured, GOALS.LOADER.met(smallest)])


APPROACHES = (("trainrt", "trainrt: `trainrt.data.read_csv` landed in a dataset file, then the streaming reader"),
              ("pandas", "pandas: `pd.read_csv`, numpy slices of the columns in memory"),
              ("pyarrow", "pyarrow: `pyarrow.csv.read_csv`, numpy slices in memory"),
              ("ray", "Ray Data: `ray.data.read_csv(...).iter_batches()` (streams the file every epoch)"))


def raydata_section(data, lines):
    runs = [r for r in data if r["part"] == "raydata"]
    if not runs:
        return
    rows, size = runs[0]["rows"], runs[0]["csv_mb"]
    lines += ["", f"Ray Data's `read_csv` into a training loop (`bench/data/raydata_bench.py`): a {size:.0f} MB CSV "
              f"({rows} rows, 16 float features and an integer label), two epochs of batches of 256 rows as dicts of "
              f"numpy arrays, each batch touched, one process per approach; ingest: reading the CSV before the first "
              f"epoch (trainrt: the read and the dataset file's write, what a Trainer's rank 0 does at the start); "
              f"median of {len({r['run'] for r in runs})} runs, the order reversed every other run. Peak RSS: the "
              f"process's (trainrt's holds the CSV's columns while it writes the file; the ranks then read with a "
              f"bounded window, as above).", "",
              "| approach | ingest (s) | epoch 1 (s) | epoch 2 (s) | epoch 2 rows/s | ingest + 2 epochs vs Ray Data | peak RSS (MB) |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    totals = {}
    for name, _ in APPROACHES:
        mine = [r for r in runs if r["approach"] == name]
        if mine:
            totals[name] = median([r["ingest_s"] + sum(r["epoch_s"]) for r in mine])
    for name, label in APPROACHES:
        mine = [r for r in runs if r["approach"] == name]
        if not mine:
            continue
        second = median([r["epoch_s"][1] for r in mine])
        ratio = f"{totals[name] / totals['ray']:.2f}×" if "ray" in totals else "–"
        lines.append(f"| {label} | {median([r['ingest_s'] for r in mine]):.2f} | "
                     f"{median([r['epoch_s'][0] for r in mine]):.3f} | {second:.3f} | {rows / second:.0f} | {ratio} | "
                     f"{max(r['peak_rss_mb'] for r in mine):.0f} |")


def section(path):
    """{"section": the markdown, "targets": [[target, measured, True/False/None], ...]}."""
    data = records(path)
    if not data:
        return {"section": "## Data: the streaming reader\n\nNot run.\n", "targets": []}
    lines, targets = [], []
    cold_section(data, lines, targets)
    if not lines or lines[0] != "## Data: the streaming reader":
        lines[:0] = ["## Data: the streaming reader", ""]
    rss_section(data, lines, targets)
    wait_section(data, lines, targets)
    loader_section(data, lines, targets)
    raydata_section(data, lines)
    return {"section": "\n".join(lines), "targets": targets}


def part(results):
    data = section(results.file("data_bench.jsonl"))
    rows = [target_row(*row) for row in data["targets"]]
    if "data" in results.skipped:
        rows = ["| Data: the streaming reader's targets | not run | not run |"]
    return Part([data["section"], ""], rows)


if __name__ == "__main__":
    print(json.dumps(section(sys.argv[1])))
