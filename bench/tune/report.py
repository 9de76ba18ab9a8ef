"""The sweep benchmark's figures (bench/tune/tune_bench.sh) and its BENCHMARKS.md section.

    report.py measure ASHA_DIR RANDOM_DIR START ASHA_END RANDOM_END > tune_bench.json
    report.py section tune_bench.json      # prints {"section": markdown, "targets": [[target, measured, ok]]}

Trial start: for every attempt of every trial, the sweep's start of its step (sweep.json
`started_unix`, taken when the scheduler decided) to the start of its first training iteration
after it (that row's `_timestamp` less its `_time_this_iter_s`). Allocation use: rank-seconds
inside training iterations (each row's `_time_this_iter_s` × world_size) over the rank-seconds the
sweep held (its slots × ranks per trial × its wall time). ASHA against random search with the same
budget (the epochs ASHA trained, as full-length trials): each one's best metric, and the
rank-seconds of training ASHA needed to first reach random search's best (rows in time order).
"""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: the reporting library
from reporting import Part, target_row, targets  # noqa: E402

GOALS = targets("tune")


def trial_rows(sweep_dir):
    state = json.loads((Path(sweep_dir) / "sweep.json").read_text())
    for trial in state["trials"]:
        path = Path(sweep_dir) / trial["name"] / "result.jsonl"
        rows = [json.loads(l) for l in path.read_text().splitlines() if l.strip()] if path.exists() else []
        yield trial, rows


def start_latencies(sweep_dir):
    latencies = []
    for trial, rows in trial_rows(sweep_dir):
        for started in trial.get("started_unix", []):
            after = [r["_timestamp"] - r["_time_this_iter_s"] for r in rows
                     if r["_timestamp"] - r["_time_this_iter_s"] >= started]
            if after:
                latencies.append(min(after) - started)
    return latencies


def training_rank_seconds(sweep_dir):
    return sum(r["_time_this_iter_s"] * r.get("world_size", 1) for _, rows in trial_rows(sweep_dir) for r in rows)


def best(sweep_dir, metric="test_accuracy"):
    return max((r[metric] for _, rows in trial_rows(sweep_dir) for r in rows if metric in r), default=None)


def rank_seconds_to_reach(sweep_dir, target, metric="test_accuracy"):
    rows = sorted((r for _, rows in trial_rows(sweep_dir) for r in rows), key=lambda r: r["_timestamp"])
    spent = 0.0
    for row in rows:
        spent += row["_time_this_iter_s"] * row.get("world_size", 1)
        if row.get(metric, float("-inf")) >= target:
            return spent
    return None


def measure(asha, random, start, asha_end, random_end):
    slots_ranks = 2  # tune_bench.sh: 2 trials at once, 1 rank each
    latencies = start_latencies(asha) + start_latencies(random)
    asha_best, random_best = best(asha), best(random)
    return {"trials_asha": sum(1 for _ in trial_rows(asha)), "trials_random": sum(1 for _ in trial_rows(random)),
            "epochs_asha": sum(len(rows) for _, rows in trial_rows(asha)),
            "epochs_random": sum(len(rows) for _, rows in trial_rows(random)),
            "attempts": len(latencies), "start_median_s": statistics.median(latencies),
            "start_max_s": max(latencies), "wall_asha_s": asha_end - start,
            "use_asha": training_rank_seconds(asha) / (slots_ranks * (asha_end - start)),
            "best_asha": asha_best, "best_random": random_best,
            "rank_s_random": training_rank_seconds(random),
            "rank_s_asha_to_random_best": rank_seconds_to_reach(asha, random_best)}


def section(path):
    m = json.loads(Path(path).read_text()) if Path(path).exists() else None
    if not m:
        return {"section": "## Sweeps: trainrt tune\n\nnot run", "targets": [
            ["Sweeps: trial start ≤ {}; allocation use ≥ {}; ASHA reaches random search's best in ≤ {}× its "
             "rank-seconds".format(f"{GOALS.TRIAL_START.shown} s", GOALS.ALLOCATION_USE.shown, GOALS.ASHA_VS_RANDOM.shown),
             "not run", None]]}
    reach = m["rank_s_asha_to_random_best"]
    reach_ratio = reach / m["rank_s_random"] if reach is not None else None
    text = [
        "## Sweeps: trainrt tune", "",
        "`bench/tune/tune_bench.sh`, under mpiexec on this machine: an ASHA sweep of fashion_mlp on FashionMNIST "
        "(60 k training images; `jobs/fashion_mlp_sweep.ini`: learning rate and batch size; 1 rank per trial, 2 at once; rungs at "
        "epochs 1, 3, 9), then random search (FIFO) with the same budget: as many 9-epoch trials as ASHA trained "
        "epochs, same seed and space. " + (__doc__.split("\n\n")[2].replace("\n", " ")), "",
        "| figure | value |", "|---|---:|",
        f"| ASHA trials / epochs trained | {m['trials_asha']} / {m['epochs_asha']} |",
        f"| random search trials / epochs trained (the same budget) | {m['trials_random']} / {m['epochs_random']} |",
        f"| trial start, decision → training (median / max over {m['attempts']} attempts) | "
        f"{m['start_median_s']:.3f} s / {m['start_max_s']:.3f} s |",
        f"| ASHA sweep wall time | {m['wall_asha_s']:.1f} s |",
        f"| allocation use (ASHA sweep) | {m['use_asha']:.3f} |",
        f"| best test_accuracy: ASHA / random search | {m['best_asha']:.4f} / {m['best_random']:.4f} |",
        f"| rank-seconds: random search in all / ASHA to reach random's best | {m['rank_s_random']:.1f} / "
        + (f"{reach:.1f} ({reach_ratio:.2f}×)" if reach is not None else "never reached") + " |", ""]
    targets = [
        [GOALS.TRIAL_START.text, f"{m['start_median_s']:.3f} s (max {m['start_max_s']:.3f} s)",
         GOALS.TRIAL_START.met(m["start_median_s"])],
        [GOALS.ALLOCATION_USE.text, f"{m['use_asha']:.3f}", GOALS.ALLOCATION_USE.met(m["use_asha"])],
        [GOALS.ASHA_VS_RANDOM.text, f"{reach_ratio:.2f}×" if reach_ratio is not None else "never reached",
         bool(GOALS.ASHA_VS_RANDOM.met(reach_ratio))],
        ["Sweeps: 16 trials as a Slurm job array vs one `trainrt tune` allocation (wall time)", "not measured yet", None]]
    return {"section": "\n".join(text), "targets": targets}


def part(results):
    """The sweep section and its targets' rows (the job-array comparison has its own section)."""
    tune = section(results.file("tune_bench.json"))
    rows = [target_row(*row) for row in tune["targets"]]
    return Part([tune["section"], ""], rows)


if __name__ == "__main__":
    if sys.argv[1] == "measure":
        print(json.dumps(measure(sys.argv[2], sys.argv[3], *map(float, sys.argv[4:7]))))
    else:
        print(json.dumps(section(sys.argv[2])))
