#!/usr/bin/env python3
"""Renders bench/gpu/bench_gpu.sh's JSON lines.

    report.py RESULTS.jsonl --summary           plain lines (the end of a GPU run)
    report.py RESULTS.jsonl --markdown NOTE     BENCHMARKS.md's GPU section (NOTE: where it ran)
    report.py RESULTS.jsonl --target            one line "measured|PASS" for the targets table

In BENCHMARKS.md (part(results)): the GPU section from gpu_bench.jsonl, measured here or stored
(bench/results/gpu/), then the stored sections of Python training functions on a GPU.
"""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: the reporting library
from reporting import BENCH, Part, human_bytes, records, targets, topic  # noqa: E402

GOALS = targets("gpu")
STORED = BENCH / "results" / "gpu"


def load(path):
    rows = records(path)
    runs = {}
    for row in rows:
        if "epoch_time_s" in row:
            runs.setdefault((row["impl"], row["mode"]), []).append(row)
    device = next((r["name"] for r in rows if r.get("what") == "device"), "unknown GPU")
    return rows, runs, device


def median_epoch(runs, key):
    return statistics.median(r["epoch_time_s"] for r in runs[key]) if key in runs else None


def ratios(runs):
    """(trainrt mode, PyTorch mode, ratio) for the two comparisons the issue asks for."""
    out = []
    for ours, theirs in (("resident", "resident"), ("stream", "loader")):
        a, b = median_epoch(runs, ("trainrt", ours)), median_epoch(runs, ("pytorch", theirs))
        if a is not None and b is not None:
            out.append((ours, theirs, a / b))
    return out


def summary(rows, runs):
    for (impl, mode), rs in runs.items():
        print(f"{impl:8} {mode:9} median epoch {median_epoch(runs, (impl, mode)):.4f} s  "
              f"last loss {rs[-1]['loss']:.6f} accuracy {rs[-1]['test_accuracy']:.4f}")
    for ours, theirs, ratio in ratios(runs):
        print(f"trainrt {ours} / PyTorch {theirs}: {ratio:.3f}")
    for r in rows:
        if r.get("bench") == "nccl_allreduce":
            print(f"nccl allreduce {r['bytes']:>11} B: trainrt {r['trainrt_us']:.2f} us, plain {r['nccl_us']:.2f} us")
        elif str(r.get("bench", "")).startswith("gpu_"):
            print(json.dumps(r))


def training_table(runs):
    lines = ["| implementation | data | median epoch (s) | median train (s) | last loss | last accuracy |",
             "|---|---|---:|---:|---:|---:|"]
    for (impl, mode), rs in runs.items():
        lines.append(f"| {impl} | {mode} | {median_epoch(runs, (impl, mode)):.4f} | "
                     f"{statistics.median(r['train_time_s'] for r in rs):.4f} | {rs[-1]['loss']:.6f} | "
                     f"{rs[-1]['test_accuracy']:.4f} |")
    lines += ["", "| comparison | trainrt / PyTorch epoch time |", "|---|---:|"]
    lines += [f"| trainrt `{o}` vs PyTorch `{t}` | {r:.3f} |" for o, t, r in ratios(runs)]
    return lines


def step_lines(rows):
    step = {r["mode"]: r for r in rows if r.get("bench") == "gpu_step"}
    gemm = next((r for r in rows if r.get("bench") == "gpu_gemm"), None)
    floor = next((r for r in rows if r.get("bench") == "gpu_node_floor"), None)
    if "resident" not in step or gemm is None or floor is None:
        return ["(gpu_step_bench not run)"]
    total = step["resident"]["step_us"]
    return [f"One step (batch 64, `bench/gpu/gpu_step_bench`): {total:.1f} µs with the data resident, "
            f"{step['stream']['step_us']:.1f} µs streamed from pinned host memory. The step's 8 cuBLAS SGEMMs "
            f"alone, replayed as one graph: {gemm['us_per_step']:.1f} µs (**{100 * gemm['us_per_step'] / total:.0f} %** "
            f"of the step). A graph of 21 four-byte memsets — as many nodes as the step graph — costs "
            f"{floor['us_per_step']:.1f} µs ({100 * floor['us_per_step'] / total:.0f} %): the floor of replaying "
            f"that many nodes. The two overlap (the GEMM graph pays its own nodes' floor), so the 10 small "
            f"kernels, the 3 NCCL calls and the batch's staging take at most the remaining "
            f"{total - gemm['us_per_step']:.1f} µs, most of it node floor. At batch 64 each GEMM is "
            f"latency-bound (a few CTAs on a 132-SM GPU); FP32 is kept (no TF32), as PyTorch's default.", ""]


def nccl_table(rows):
    lines = ["| size | trainrt (µs) | plain ncclAllReduce (µs) | trainrt / plain |", "|---:|---:|---:|---:|"]
    for r in rows:
        if r.get("bench") == "nccl_allreduce":
            lines.append(f"| {human_bytes(int(r['bytes']))} | {r['trainrt_us']:.2f} | {r['nccl_us']:.2f} | {r['time_ratio']:.2f} |")
    return lines


def markdown(rows, runs, device, note):
    out = ["## GPU: fashion_mlp on CUDA vs PyTorch, NCCL allreduce", "",
           f"Device: **{device}**, 1 rank. {note}", "",
           "Ray's FashionMNIST recipe, batch 64, the same initial weights for both; PyTorch eager, its "
           "batch losses summed on the device (no per-step `.item()`). `resident`: the data on the GPU "
           "before the clock starts, for both. `stream` (trainrt: each batch scaled on the host and "
           "copied from pinned memory) vs `loader` (PyTorch: torchvision's FashionMNIST with ToTensor and "
           "a DataLoader, as Ray's example): data loading included. Both evaluate the test set in batches "
           "of 1000.", ""]
    out += training_table(runs) + [""] + step_lines(rows) + [""]
    out += ["NCCL allreduce on one rank, blocking (trainrt's `allreduce` on a device buffer vs "
            "`ncclAllReduce` + `cudaStreamSynchronize`), median time per call. One rank moves no bytes "
            "between GPUs, so this is the fixed cost per call: trainrt's adds the watchdog scope and the "
            "poll of NCCL's asynchronous error (what turns a dead peer into an error instead of a hang).", ""]
    out += nccl_table(rows) + [""]
    return out


def target(runs):
    """(measured, met) of GOALS.EPOCH_VS_PYTORCH; met None when nothing was measured."""
    rs = ratios(runs)
    if not rs:
        return "not measured", None
    return ", ".join(f"{o} vs {t}: {r:.3f}" for o, t, r in rs), GOALS.EPOCH_VS_PYTORCH.met_all(r for _, _, r in rs)


def python_sections():
    """The stored sections of Python training functions on a GPU (run_on_gpu.sh's pybench and
    raybench stages on a lent machine: its Python and CUDA PyTorch are not this machine's)."""
    lines = []
    table = lambda path: "\n".join(topic("gpu", "python_gpu_report").table_lines(path)).strip().splitlines()
    if (STORED / "h200-python-latest.jsonl").exists():
        lines += ["## GPU: Python training functions, trainrt vs plain PyTorch", "",
                  (STORED / "h200-python-latest.md").read_text().strip(), "",
                  *table(STORED / "h200-python-latest.jsonl"), ""]
    h100 = [STORED / f"h100-{side}-latest.jsonl" for side in ("python", "ray")]  # the same with Ray Train beside it
    if all(path.exists() for path in h100):
        lines += ["## GPU: Python training functions, trainrt and Ray Train vs plain PyTorch (H100)", "",
                  (STORED / "h100-python-latest.md").read_text().strip(), ""]
        for path in h100:
            lines += [*table(path), ""]
    return lines


def part(results):
    """The GPU section (measured here, or stored by bench/run.sh into gpu_bench.jsonl with its note)."""
    path = results.file("gpu_bench.jsonl")
    if not path.exists():
        lines = ["## GPU", "", "not run: no GPU here and no stored GPU results.", ""]
        return Part(lines + python_sections(), [GOALS.EPOCH_VS_PYTORCH.row("–", None)])
    rows, runs, device = load(path)
    lines = "\n".join(markdown(rows, runs, device, results.note("gpu"))).strip().splitlines() + [""]
    return Part(lines + python_sections(), [GOALS.EPOCH_VS_PYTORCH.row(*target(runs))])


def main():
    rows, runs, device = load(sys.argv[1])
    mode = sys.argv[2] if len(sys.argv) > 2 else "--summary"
    if mode == "--summary":
        summary(rows, runs)
    elif mode == "--markdown":
        print("\n".join(markdown(rows, runs, device, sys.argv[3] if len(sys.argv) > 3 else "")))
    elif mode == "--target":
        measured, met = target(runs)
        print(f"{measured}|{'–' if met is None else ('PASS' if met else 'MISS')}")
    else:
        sys.exit(f"report.py: unknown mode {mode}")


if __name__ == "__main__":
    main()
