#!/usr/bin/env python3
"""Renders the Markdown section "trainrt vs Ray Train on this machine" from bench/ray/ray_bench.sh's
JSON lines (stdout).

    python3 bench/ray/report.py [bench/results/ray/latest.jsonl]

One row per measurement: Ray's median, trainrt's median, the median of the per-pair ratios
trainrt/Ray (a pair: the Ray run and the trainrt run of the same repetition, both successful), the
goal and whether the ratio meets it, and the number of pairs. Failed runs are listed under the
table with their error line.
"""
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: the reporting library
from reporting import Part, records, targets  # noqa: E402

GOALS = targets("ray")

# A run's measurement in a row: its value_s, or for the sweep's second row value_s per epoch the
# sweep trained (ASHA's asynchronous decisions depend on which trials reach a rung first, so the two
# sides of a pair train different numbers of epochs).
def whole(run):
    return run["value_s"]


def per_epoch(run):
    epochs = run.get("detail", {}).get("epochs_total")
    return run["value_s"] / epochs if epochs else None


# (part, trainrt variant, label, goal (ray/targets.py; None: none set), measurement): the rows, in order.
ROWS = [
    ("launch", "main", "launch → first `report()` returned (rank 0)", GOALS.LAUNCH, whole),
    ("epoch", "main", "epoch of the FashionMNIST recipe (rank 0, train + test)", GOALS.EPOCH, whole),
    ("checkpoint", "main", "`report()` with a 100 MiB `Checkpoint.from_directory` (rank 0, median of the reports)",
     GOALS.CHECKPOINT, whole),
    ("recovery", "supervise", "worker SIGKILLed → first report after the restart (trainrt: `trainrt supervise`)",
     GOALS.RECOVERY, whole),
    ("recovery", "rerun", "the same, trainrt: the script's `fit()` fails, the same command rerun at once",
     GOALS.RECOVERY, whole),
    ("sweep", "main", "8-trial ASHA sweep, `Tuner.fit()` (the one sed)", GOALS.SWEEP, whole),
    ("sweep", "main", "the same sweep, its makespan per epoch it trained", None, per_epoch),
]


def fmt_s(value):
    if value is None:
        return "–"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def section(path):
    """The section's lines."""
    machine, runs = {}, []
    for record in records(path):
        if record.get("type") == "machine":
            machine = record
        elif record.get("type") == "run":
            runs.append(record)

    def find(part, side, variant):
        return {r["rep"]: r for r in runs if r["part"] == part and r["side"] == side and r["variant"] == variant}

    out = ["## trainrt vs Ray Train on this machine", ""]
    out.append(f"Ray {machine.get('ray', '?')} (torch {machine.get('ray_torch', '?')}) against trainrt "
               f"{machine.get('trainrt', '?')} (torch {machine.get('trainrt_torch', '?')}, Python "
               f"{machine.get('python', '?')}), 2 workers on {machine.get('cpu', '?')} ({machine.get('nproc', '?')} "
               f"cores, {machine.get('memory_gb', '?')} GB), {machine.get('date', '?')}; "
               f"`bash bench/ray/ray_bench.sh` with {machine.get('reps', '?')} repetition(s), Ray and trainrt "
               f"alternated, the same script for both (trainrt's copy made by `sed 's/ray\\.train/trainrt/g; "
               f"s/ray\\.tune/trainrt.tune/g'`). Load average at the start: {machine.get('load1_start', '?')}.")
    if machine.get("settings"):
        out.append(f"Settings: epochs={machine.get('epochs', '?')} {machine['settings']}.")
    out += ["", "| measurement | Ray (median) | trainrt (median) | trainrt/Ray (median of pairs) | goal | met | pairs |",
            "|---|---|---|---|---|---|---|"]
    failures = []
    for part, variant, label, goal, measure in ROWS:
        ray_runs, trainrt_runs = find(part, "ray", "main"), find(part, "trainrt", variant)
        if not trainrt_runs and not ray_runs:
            continue
        ray_ok = [measure(r) for r in ray_runs.values() if r["ok"] and measure(r) is not None]
        trainrt_ok = [measure(r) for r in trainrt_runs.values() if r["ok"] and measure(r) is not None]
        ratios = [measure(trainrt_runs[rep]) / measure(ray_runs[rep]) for rep in sorted(trainrt_runs)
                  if rep in ray_runs and trainrt_runs[rep]["ok"] and ray_runs[rep]["ok"] and measure(ray_runs[rep])
                  and measure(trainrt_runs[rep]) is not None]
        ratio = statistics.median(ratios) if ratios else None
        met = "–" if ratio is None or goal is None else ("yes" if goal.met(ratio) else "**no**")
        failed = [r for r in trainrt_runs.values() if not r["ok"]]
        out.append(f"| {label} | {fmt_s(statistics.median(ray_ok)) if ray_ok else '–'} | "
                   f"{fmt_s(statistics.median(trainrt_ok)) if trainrt_ok else ('failed' if failed else '–')} | "
                   f"{f'{ratio:.2f}×' if ratio is not None else '–'} | {f'≤ {goal.shown}×' if goal else '–'} | {met} | "
                   f"{len(ratios)} |")
        for r in list(ray_runs.values()) + list(trainrt_runs.values()):
            if not r["ok"] and r not in failures:
                failures.append(r)
    if failures:
        out += ["", "Failed runs:", ""]
        for r in failures:
            out.append(f"- {r['part']}, {r['side']} ({r['variant']}), rep {r['rep']}: exit {r['rc']}: "
                       f"`{r.get('error') or 'no measurement'}`")
    details = []
    for r in runs:
        if r["part"] == "recovery" and r["ok"]:
            d = r["detail"]
            details.append(f"{r['side']} ({r['variant']}) rep {r['rep']}: killed after step {d.get('kill_step')}'s report, "
                           f"function restarted {fmt_s(d.get('func_start_after_kill_s'))} later, first report after it: step "
                           f"{d.get('resumed_at_step')}")
    if details:
        out += ["", "Recovery details: " + "; ".join(details) + "."]
    sweeps = [f"{r['side']} rep {r['rep']}: {r['detail'].get('epochs_total')} epochs, best accuracy "
              f"{r['detail'].get('best_accuracy', 0):.3f}" for r in runs if r["part"] == "sweep" and r["ok"]]
    if sweeps:
        out += ["", "Sweep details (epochs all trials trained, the best trial's accuracy): " + "; ".join(sweeps) + "."]
    loads = [r["load1"] for r in runs]
    if loads:
        out += ["", f"Load average (1 min) after each run: {min(loads):.1f}–{max(loads):.1f} on "
                    f"{machine.get('nproc', '?')} cores."]
    return out


def part(results):
    """Appended after the raw lines (bench/reporting/render.py), measured here or stored."""
    return Part(section(results.file("ray.jsonl")))


if __name__ == "__main__":
    print("\n".join(section(sys.argv[1] if len(sys.argv) > 1 else "bench/results/ray/latest.jsonl")))
