#!/usr/bin/env python3
"""Renders "Frameworks: trainrt vs Ray Train and the framework's own launcher" (Markdown) from
bench/frameworks/run.sh's JSON lines, one table per framework: per side the median epoch time over every run's epochs after
the first (its warm-up), trainrt's ratio to each other side (median of the per-repetition
ratios), the goal (≤ 1.0× the fastest other side) and whether each epoch's logged loss agrees
across the sides (every side trains the same seeded model on the same data).

    python3 bench/frameworks/report.py bench/results/frameworks/latest.jsonl
"""
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: the reporting library
from reporting import Part, records, targets  # noqa: E402

GOALS = targets("frameworks")
SIDES = [("ray", "Ray Train (its trainer, as written)"), ("trainrt", "trainrt (after the one sed)"), ("native", None)]
NATIVE = {"lightning": "Lightning's own DDP launcher (`strategy=\"ddp\", devices=2`)",
          "deepspeed": "DeepSpeed's launcher (`deepspeed --num_accelerators 2`)",
          "accelerate": "Accelerate's launcher (`accelerate launch --multi_gpu --num_processes 2`, its script's `Accelerator(cpu=True)`)",
          "transformers": "`torchrun --nproc_per_node 2` (the Trainer's own distributed setup)",
          "tensorflow": "plain TensorFlow (two processes, a hand-written `TF_CONFIG`)",
          "lightgbm": "plain LightGBM (two processes, a hand-written machines list and ports)"}
WHAT = {"lightning": "PyTorch Lightning {lightning}: a LightningModule of the FashionMNIST recipe's MLP",
        "deepspeed": "DeepSpeed {deepspeed}: `deepspeed.initialize` (ZeRO-2) on the recipe's MLP and SGD",
        "accelerate": "Accelerate {accelerate}: `Accelerator().prepare` on the recipe's MLP, SGD and loader",
        "transformers": "Transformers {transformers}: `transformers.Trainer` on the recipe's MLP as a PreTrainedModel",
        "tensorflow": "TensorFlow {tensorflow} (Keras 2): `model.fit` under MultiWorkerMirroredStrategy on the recipe's MLP, SGD "
                      "(every side reduces over TensorFlow's own gRPC collectives; trainrt gives each rank's thread pools "
                      "its one core, where TensorFlow's default gives each process both)",
        "lightgbm": "LightGBM {lightgbm}: `lightgbm.train` (data_parallel, 200000 rows of 20 features, 63 leaves, one "
                    "thread per rank), the time of a boosting round where the other tables have an epoch's"}


def seconds(value):
    """2 decimals, 3 below 0.1 s (a LightGBM round)."""
    return f"{value:.2f}" if value >= 0.1 else f"{value:.3f}"


def epoch_time(run):
    times = [e["seconds"] for e in run["epochs"][1:]] or [e["seconds"] for e in run["epochs"]]
    return statistics.median(times) if times else None


def framework_table(framework, runs, machine):
    """One framework's lines: its sides' epoch times, trainrt's ratios, the goal, the losses."""
    sides = [(side, label or NATIVE[framework]) for side, label in SIDES]
    by_side = {side: [r for r in runs if r["side"] == side and r["rc"] == 0] for side, _ in sides}
    try:
        out = [f"\n### {WHAT[framework].format(**machine)}\n"]
    except KeyError:  # a results file from before the framework's version was recorded
        out = [f"\n### {framework}\n"]
    own = {(r.get("samples"), r.get("date", "")[:10]) for r in runs if r.get("samples")}
    if own and {str(s) for s, _ in own} != {str(machine["samples"])}:  # run apart from the file's first line
        samples, date = sorted(own)[0]
        unit = "rows, a round" if framework == "lightgbm" else "images per epoch"
        out.append(f"{samples} {unit}, run {date} (`BENCH_FW_LIST={framework}`).\n")
    out.append("| side | epoch (median) | trainrt / side (median of repetitions) | runs |")
    out.append("|---|---|---|---|")
    ours = {r["rep"]: epoch_time(r) for r in by_side["trainrt"]}
    fastest = None
    for side, label in sides:
        times = [epoch_time(r) for r in by_side[side]]
        median = statistics.median(times) if times else None
        ratios = [ours[r["rep"]] / epoch_time(r) for r in by_side[side] if r["rep"] in ours]
        ratio = statistics.median(ratios) if ratios and side != "trainrt" else None
        if side != "trainrt" and median is not None and (fastest is None or median < fastest[1]):
            fastest = (side, median, ratio)
        out.append(f"| {label} | {seconds(median)} s | {f'{ratio:.2f}×' if ratio else '–'} | {len(times)} |" if median
                   else f"| {label} | failed | – | 0 |")
    if fastest and fastest[2]:
        met = "met" if GOALS.VS_FASTEST.met(fastest[2]) else "**not met**"
        out.append(f"\nGoal: trainrt ≤ {GOALS.VS_FASTEST.shown}× the fastest other side ({fastest[0]}): {fastest[2]:.2f}×, {met}.")
    losses = {side: [round(e["loss"], 6) for e in by_side[side][0]["epochs"]] for side, _ in sides if by_side[side]}
    out.append("\nLoss of each epoch (rank 0, first repetition): " +
               "; ".join(f"{side} {values}" for side, values in losses.items()) +
               (" (equal)." if len({tuple(v) for v in losses.values()}) == 1 else " (they differ)."))
    worlds = {side: sorted({e["world"] for e in by_side[side][0]["epochs"] if "world" in e}) for side, _ in sides
              if by_side[side]}
    if any(worlds.values()):  # the processes the framework itself saw: 1 where it missed the others
        out.append("\nProcesses the framework trained on: " + "; ".join(f"{side} {v}" for side, v in worlds.items()) + ".")
    for run in runs:
        if run["rc"] != 0:
            out.append(f"\n- {run['side']} rep {run['rep']} failed, exit {run['rc']}: `{' '.join(run.get('error', []))}`")
    return out


def section(path):
    """The section's lines (a line may hold several, as printed)."""
    lines = records(path)
    machine = next(line for line in lines if line["type"] == "machine")
    runs = [line for line in lines if line["type"] == "run"]
    frameworks = list(dict.fromkeys(r.get("framework", "lightning") for r in runs))
    out = ["## Frameworks: trainrt vs Ray Train and the framework's own launcher\n"]
    out.append(f"torch {machine['torch']}, Ray {machine['ray']}, trainrt {machine['trainrt']}, 2 ranks on "
               f"{machine['nproc']} cores, {machine['date']}; `bash bench/frameworks/run.sh`, the three sides in turn "
               f"per repetition. {machine['epochs']} epochs of the FashionMNIST recipe's MLP on {machine['samples']} "
               f"images (batch 32 per rank), seeded alike; the epoch time is rank 0's, the report included under Ray "
               f"and trainrt (Lightning's with its checkpoint, the others' metrics only), median over the epochs "
               f"after the first. trainrt's ranks reduce gradients over its MPI process group (`scaling.backend = "
               f"auto` on CPU ranks), Ray's and the launchers' over gloo: most of the difference is that "
               f"(the Python section shows trainrt over gloo at about 1.0× plain DDP).")
    for framework in frameworks:
        out += framework_table(framework, [r for r in runs if r.get("framework", "lightning") == framework], machine)
    return out


def part(results):
    """Appended after the raw lines (bench/reporting/render.py), measured here or stored."""
    return Part(section(results.file("frameworks.jsonl")))


if __name__ == "__main__":
    print("\n".join(section(sys.argv[1] if len(sys.argv) > 1 else "bench/results/frameworks/latest.jsonl")))
