#!/usr/bin/env python3
"""Writes BENCHMARKS.md from a results directory of bench/run.sh (its machine.txt and *.jsonl):

    report_benchmarks.py RESULTS_DIR REPORT

bench/run.sh calls it after its runs; bench/gpu/run_on_gpu.sh's ckpt stage leaves a results
directory of the same form (the checkpoint part only, machine.txt naming the GPU machine), so the
same tables render another machine's checkpoint figures. Parts named in machine.txt's skipped= show
as "not run"."""
import json, os, sys
from pathlib import Path
import numpy as np
import pandas as pd

out, report = Path(sys.argv[1]), Path(sys.argv[2])
meta = dict(line.split("=", 1) for line in (out / "machine.txt").read_text().splitlines() if "=" in line)
skipped = set(meta.get("skipped", "").split())
RANKS = [1, 2]

def jsonl(path):
    rows = [json.loads(l) for l in path.read_text().splitlines() if l.startswith("{")] if path.exists() else []
    return pd.DataFrame(rows)

def fmt(x, spec=".3f"):
    return "–" if x is None or pd.isna(x) else format(x, spec)

def verdict(ok):
    return "not run" if ok is None else ("PASS" if ok else "MISS")

lines = ["# trainrt benchmarks", "",
         "Written by `bench/run.sh` (see `bench/README.md`); do not edit by hand.", "",
         f"- Machine: {meta['cpu']}, {meta['nproc']} cores (nproc), Linux {meta['kernel']}",
         f"- Date: {meta['date']}; load average (1/5/15 min): {meta['load']}",
         f"- trainrt {meta['trainrt']} ({meta['build_type']}, {meta['compiler']}); MPICH {meta['mpich']}; "
         f"PyTorch {meta['torch']}; OpenBLAS {meta['openblas']}",
         f"- Epochs per training run: {meta['epochs']}; 1 compute thread per rank for both trainrt and PyTorch",
         f"- Raw results and logs: `{os.path.relpath(out)}`"]
if meta.get("filesystem"):
    lines += [f"- Filesystem the checkpoint part wrote: `{meta['filesystem']}`"]
lines += [""]
if skipped and meta.get("reused_from"):
    lines += [f"Not run this time (BENCH_SKIP): {', '.join(sorted(skipped))}. Their sections show the stored "
              f"results of {meta['reused_date']} (BENCH_REUSE=`{os.path.relpath(meta['reused_from'])}`, "
              "copied into the raw results below).", ""]
    skipped = set()  # their stored results are shown as results, not as "not run"
elif skipped:
    lines += [f"Skipped (BENCH_SKIP): {', '.join(sorted(skipped))}.", ""]

# --- training: trainrt vs PyTorch ---
train = {}
for impl in ("trainrt", "pytorch"):
    for n in RANKS:
        df = jsonl(out / f"{impl}_n{n}.jsonl")
        if not df.empty and "epoch_time_s" in df:
            train[impl, n] = df[df["epoch_time_s"].notna()]

lines += ["## FashionMNIST MLP training (Ray Train's recipe): trainrt vs PyTorch DDP", "",
          "Medians over the epochs of one run; loss and accuracy are the last epoch's. Both start from "
          "the same weights, `tests/data/torch_init_seed0.h5`, so their losses should agree closely. "
          "PyTorch: DDP over gloo (no DDP wrapper on 1 rank, as Ray), 1 thread per rank, OpenBLAS.", "",
          "| ranks | implementation | epoch time (s) | train (s) | eval (s) | last loss | last test accuracy |",
          "|---:|---|---:|---:|---:|---:|---:|"]
med = {}
for n in RANKS:
    for impl, label in (("trainrt", "trainrt"), ("pytorch", "PyTorch DDP")):
        df = train.get((impl, n))
        if df is None:
            lines.append(f"| {n} | {label} | not run | | | | |")
            continue
        med[impl, n] = df["epoch_time_s"].median()
        last = (df.sort_values("epoch", kind="stable") if "epoch" in df else df).iloc[-1]
        col = lambda k: df[k].median() if k in df else None
        val = lambda k: last[k] if k in last else None
        lines.append(f"| {n} | {label} | {fmt(med[impl, n])} | {fmt(col('train_time_s'))} | "
                     f"{fmt(col('eval_time_s'))} | {fmt(val('loss'), '.4f')} | "
                     f"{fmt(val('test_accuracy'), '.4f')} |")
lines += ["", "| ranks | trainrt / PyTorch epoch time | trainrt − PyTorch last loss | trainrt − PyTorch last accuracy |",
          "|---:|---:|---:|---:|"]
ratio = {}
def last_of(df, key):
    df = df.sort_values("epoch", kind="stable") if "epoch" in df else df
    return df[key].iloc[-1] if key in df else None
for n in RANKS:
    dl = da = None
    if ("trainrt", n) in med and ("pytorch", n) in med:
        ratio[n] = med["trainrt", n] / med["pytorch", n]
        t, p = train["trainrt", n], train["pytorch", n]
        if last_of(t, "loss") is not None:
            dl = last_of(t, "loss") - last_of(p, "loss")
        if last_of(t, "test_accuracy") is not None:
            da = last_of(t, "test_accuracy") - last_of(p, "test_accuracy")
    lines.append(f"| {n} | {fmt(ratio.get(n))} | {fmt(dl, '+.2e')} | {fmt(da, '+.4f')} |")
lines.append("")

# --- allreduce ---
ar = jsonl(out / "allreduce.jsonl")
sizes = ar[ar["bench"] == "allreduce"] if not ar.empty else ar
reducer = ar[ar["bench"] == "gradient_reducer"] if not ar.empty else ar

def human(b):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            return f"{b // scale} {unit}"
    return f"{b} B"

lines += ["## Allreduce: trainrt's MPI communicator vs plain MPI_Allreduce (2 ranks, float32 sum)", ""]
if sizes.empty:
    lines += ["not run", ""]
else:
    lines += ["Interleaved in one run; each time is the median of the repetitions (slowest rank per loop). "
              "busbw = algbw × 2(n−1)/n, GB/s = 1e9 B/s.", "",
              "| size | trainrt time (µs) | trainrt busbw (GB/s) | MPI time (µs) | MPI busbw (GB/s) | trainrt / MPI busbw |",
              "|---:|---:|---:|---:|---:|---:|"]
    for _, r in sizes.sort_values("bytes").iterrows():
        lines.append(f"| {human(int(r['bytes']))} | {fmt(r['trainrt_time_us'], '.1f')} | {fmt(r['trainrt_busbw_GBps'])} | "
                     f"{fmt(r['mpi_time_us'], '.1f')} | {fmt(r['mpi_busbw_GBps'])} | {fmt(r['busbw_ratio'])} |")
    lines.append("")
lines += ["## Gradient exchange of one fashion_mlp step (2 ranks)", ""]
if reducer.empty:
    lines += ["not run", ""]
else:
    r = reducer.iloc[0]
    lines += ["trainrt's GradientReducer over the model's 6 gradients (backward order, no compute between them) "
              "vs one MPI_Allreduce of the flat buffer plus the division by n.", "",
              "| gradient floats | bucket | buckets | GradientReducer step (µs) | flat MPI_Allreduce step (µs) | reducer / flat time |",
              "|---:|---:|---:|---:|---:|---:|",
              f"| {int(r['floats'])} | {human(int(r['bucket_bytes']))} | {int(r['buckets'])} | "
              f"{fmt(r['reducer_step_us'], '.1f')} | {fmt(r['mpi_flat_step_us'], '.1f')} | {fmt(r['time_ratio'])} |", ""]

# --- checkpoints ---
ck = pd.concat([jsonl(out / f"checkpoint_n{n}.jsonl") for n in RANKS], ignore_index=True)
ck_med = ck.groupby(["ranks", "what", "layout"])["seconds"].median() if not ck.empty else None
lines += ["## Checkpoints: write and read bandwidth, async stall", ""]
t4 = t4r = t5 = t5b = t_rep = None
detail4 = detail4r = detail5 = detail_rep = "–"
detail5b = "not run"

def paired_ratio(n, what, layout, base="plain", frame=None):
    """`base` time / layout time, by couples of consecutive repetitions (2k: base first, 2k+1:
    base last; whichever runs second pays for the first one's writeback on this disk, so a couple's
    summed times cancel the order): the median over complete couples; with no complete couple,
    the median of the repetitions' ratios; older result files without repetitions: the ratio of
    the medians. `frame`: checkpoint_bench lines of another results directory (default: this run's)."""
    frame = ck if frame is None else frame
    rows = frame[(frame["ranks"] == n) & (frame["what"] == what)]
    if "rep" not in rows or rows["rep"].isna().all():
        medians = rows.groupby("layout")["seconds"].median()
        p, x = medians.get(base), medians.get(layout)
        return p / x if p and x else None
    wide = rows.pivot_table(index="rep", columns="layout", values="seconds")
    if base not in wide or layout not in wide:
        return None
    pair = wide[[base, layout]].dropna()
    couples = pair.groupby(pair.index // 2).filter(lambda c: len(c) == 2)
    if couples.empty:
        return float((pair[base] / pair[layout]).median())
    summed = couples.groupby(couples.index // 2).sum()
    return float((summed[base] / summed[layout]).median())

if ck_med is None:
    lines += ["not run", ""]
else:
    gib = ck["bytes"].iloc[0] / (1 << 30)
    reps = int(ck["rep"].max()) + 1 if "rep" in ck and not ck["rep"].isna().all() else 3
    lines += [f"State: {gib:.2f} GiB of float32 in 4 sharded tensors, split evenly over the ranks. "
              f"{reps} interleaved repetitions after a warm-up round that is not counted (plain, file_per_rank, "
              "shared in even repetitions, the reverse in odd ones); each time is the slowest rank's; GB/s from the median times, "
              "ratios the median over couples of repetitions (one with plain first, one with it last) of their summed "
              "times' ratio: on this disk whichever runs second pays for the first one's writeback. Every timed write "
              "and read starts right after twice the rank's share of memory was touched and freed (this VM's host "
              "takes freed pages back within seconds: bench/README.md). Plain = each rank "
              "write()s its bytes to its own file and fsyncs it (reads after POSIX_FADV_DONTNEED). A "
              "checkpoint write is the whole commit (write, fsync, XXH3 of every file, manifest, rename); "
              "a checkpoint read is restore (the ranks verify the files' checksums, a share each: *verify*) "
              "plus reading this rank's blocks.", "",
              "| ranks | what | plain (GB/s) | file_per_rank (GB/s) | shared (GB/s) | file_per_rank / plain | shared / plain | verify, file_per_rank (s) | verify, shared (s) |",
              "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    gbps = lambda n, what, layout: (ck["bytes"].iloc[0] / ck_med[n, what, layout] / 1e9) if (n, what, layout) in ck_med else None
    worst = {"write": [], "read": []}
    for n in RANKS:
        for what in ("write", "read"):
            p, f, s_ = gbps(n, what, "plain"), gbps(n, what, "file_per_rank"), gbps(n, what, "shared")
            rf, rs = paired_ratio(n, what, "file_per_rank"), paired_ratio(n, what, "shared")
            worst[what] += [(rf, n, "file_per_rank"), (rs, n, "shared")]
            verify = [fmt(ck_med.get((n, "restore", layout))) if what == "read" else "" for layout in ("file_per_rank", "shared")]
            lines.append(f"| {n} | {what} | {fmt(p)} | {fmt(f)} | {fmt(s_)} | {fmt(rf)} | {fmt(rs)} | {verify[0]} | {verify[1]} |")
    if (1, "write", "local") in ck_med or (2, "write", "local") in ck_med:
        lines += ["", "The node-local level (`checkpoint.levels = local,pfs`, `local_dir` = /dev/shm, memory): a save "
                  "(each rank's file written, agreed, renamed; no copy to the run directory in this round) and a "
                  "restore from it (every file verified, this rank's blocks read) against a plain write+fsync and "
                  "read of the same bytes in /dev/shm, alternated.", "",
                  "| ranks | plain write (GB/s) | local save (GB/s) | local / plain | plain read (GB/s) | local restore (GB/s) | local / plain |",
                  "|---:|---:|---:|---:|---:|---:|---:|"]
        for n in RANKS:
            cells = []
            for what in ("write", "read"):
                cells += [fmt(gbps(n, what, "plain_local")), fmt(gbps(n, what, "local")),
                          fmt(paired_ratio(n, what, "local", base="plain_local"))]
            lines.append(f"| {n} | " + " | ".join(cells) + " |")
    many = ck[ck["what"] == "many_read"]
    if not many.empty:
        lines += ["", "Many small tensors (round 8): 2000 tensors of 16 KiB per rank (`file_per_rank`): a save against a "
                  "plain write+fsync of the same bytes into one file per rank, and a restore with every block read back "
                  "against a plain read of them (the page cache dropped before each read), alternated; and the stall of an "
                  "async save (`snapshot = background`) as training sees it, settling the save before (saves 2-4 of four, "
                  "0.5 s apart, median). What a "
                  "checkpoint's per-tensor work (its manifest, HDF5's metadata, one write and one read per tensor) "
                  "costs: reported, no target.", "",
                  "| ranks | bytes (MiB) | plain write (s) | save (s) | plain / checkpoint | plain read (s) | restore + reads (s) | plain / checkpoint | async stall (s) | async stall / save |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for n in RANKS:
            rows = many[many["ranks"] == n]
            if rows.empty:
                continue
            cells = []
            for what in ("many_write", "many_read"):
                cells += [fmt(ck_med.get((n, what, 'plain'))), fmt(ck_med.get((n, what, 'file_per_rank'))),
                          fmt(paired_ratio(n, what, 'file_per_rank'))]
            save, stall = ck_med.get((n, "many_write", "file_per_rank")), ck_med.get((n, "many_async_stall", "file_per_rank"))
            cells += [fmt(stall), fmt(stall / save if save and stall is not None else None)]
            lines.append(f"| {n} | {rows['bytes'].iloc[0] / 2**20:.0f} | " + " | ".join(cells) + " |")
    lines += ["", "| ranks | sync save (s) | async stall, first save (s) | async stall, later saves (s) | stall / sync save |",
              "|---:|---:|---:|---:|---:|"]
    stall_ratio, step_ratio = {}, {}
    for n in RANKS:
        sync, first, stall = (ck_med.get((n, w, "file_per_rank")) for w in ("write", "async_first_stall", "async_stall"))
        stall_ratio[n] = stall / sync if sync and stall is not None else None
        lines.append(f"| {n} | {fmt(sync)} | {fmt(first)} | {fmt(stall)} | {fmt(stall_ratio[n])} |")
    lines.append("")
    if (1, "step_stall", "background") in ck_med or (2, "step_stall", "background") in ck_med:
        lines += ["What an async save costs a training step (`bench/checkpoint/checkpoint_bench.cpp`, round 7): a step is about "
                  "0.5 s of compute that does not touch the state (forward and backward) and then an update of every "
                  "element (the optimizer); a step with a save reported before it (report, compute, "
                  "`await_snapshot()`, update) against the mean of the steps just before and after it without one, "
                  "three times per repetition, the median excess. `copy`: report() copies the state; `background` "
                  "(`checkpoint.snapshot = background`): the large tensors are copied on the save's thread beside the "
                  "compute. In both the save's writing (page cache, checksum, fsync) also runs beside the compute, and "
                  "what it takes from it counts.", "",
                  "| ranks | sync save (s) | report(), copy (s) | report(), background (s) | step stall, copy (s) | step stall, background (s) | background step stall / sync save |",
                  "|---:|---:|---:|---:|---:|---:|---:|"]
        for n in RANKS:
            sync = ck_med.get((n, "write", "file_per_rank"))
            cells = [ck_med.get((n, w, m)) for w, m in (("report_stall", "copy"), ("report_stall", "background"),
                                                        ("step_stall", "copy"), ("step_stall", "background"))]
            step_ratio[n] = cells[3] / sync if sync and cells[3] is not None else None
            lines.append(f"| {n} | {fmt(sync)} | " + " | ".join(fmt(c, ".4f") for c in cells) + f" | {fmt(step_ratio[n])} |")
        lines.append("")
    known = [w for w in worst["write"] if w[0] is not None]
    t4 = bool(known) and all(w[0] >= 0.90 for w in known)
    detail4 = ", ".join(f"{layout} {n}r: {fmt(r)}" for r, n, layout in known) or "–"
    known_r = [w for w in worst["read"] if w[0] is not None]
    t4r = bool(known_r) and all(w[0] >= 0.90 for w in known_r)
    detail4r = ", ".join(f"{layout} {n}r: {fmt(r)}" for r, n, layout in known_r) or "–"
    known5 = {n: r for n, r in stall_ratio.items() if r is not None}
    t5 = bool(known5) and all(r <= 0.01 for r in known5.values())
    detail5 = ", ".join(f"{n} rank{'s' if n > 1 else ''}: {fmt(r)}" for n, r in known5.items()) or "–"
    # The async stall: report()'s own time with background snapshots (the copy left beside the
    # next step), or with snapshot = copy where round 7 did not run.
    for n in RANKS:
        background_report = ck_med.get((n, "report_stall", "background"))
        sync = ck_med.get((n, "write", "file_per_rank"))
        if background_report is not None and sync:
            stall_ratio[n] = background_report / sync
    known5 = {n: r for n, r in stall_ratio.items() if r is not None}
    t5 = bool(known5) and all(r <= 0.01 for r in known5.values())
    detail5 = ", ".join(f"{n} rank{'s' if n > 1 else ''}: {fmt(r, '.5f')}" for n, r in known5.items()) or "–"
    known5b = {n: r for n, r in step_ratio.items() if r is not None}
    t5b = bool(known5b) and all(r <= 0.01 for r in known5b.values()) if known5b else None
    detail5b = ", ".join(f"{n} rank{'s' if n > 1 else ''}: {fmt(r)}" for n, r in known5b.items()) or "not run"
    # Replicated state (a DDP model, every rank holds all of it): rank 0 alone vs a share per rank.
    rep = {n: (ck_med.get((n, "replicated_write", "rank0")), ck_med.get((n, "replicated_write", "spread")))
           for n in RANKS if (n, "replicated_write", "spread") in ck_med}
    if rep:
        lines += ["Replicated state of the same size (a DDP model: every rank holds all of it), file_per_rank, "
                  "alternated: written by rank 0 alone (`spread_replicated = false`) and in shares by every rank "
                  "(the default); median times, and the median over couples of repetitions (one with each order) of their summed times' ratio.", "",
                  "| ranks | rank 0 alone (s) | every rank a share (s) | shares / rank 0 alone |", "|---:|---:|---:|---:|"]
        ratios = {}
        for n, (alone, shares) in rep.items():
            # shares' time / rank 0 alone's, pair by pair (paired_ratio: base time / layout time)
            ratios[n] = paired_ratio(n, "replicated_write", "rank0", base="spread")
            lines.append(f"| {n} | {fmt(alone)} | {fmt(shares)} | {fmt(ratios[n])} |")
        lines.append("")
        read_rep = {n: (ck_med.get((n, "replicated_read", "files")), ck_med.get((n, "replicated_read", "exchange")))
                    for n in RANKS if (n, "replicated_read", "exchange") in ck_med}
        if read_rep:
            lines += ["The spread checkpoint restored and every replicated tensor read back whole on every rank, the "
                      "page cache dropped before each, alternated: every rank reading every rank's file for them "
                      "(`checkpoint.replicated_reads = files`), against each rank's parts sent to the others at restore, "
                      "from the bytes it verified (MPI broadcasts; `exchange`, what `auto` does across nodes). Reported, no target: on one machine "
                      "the files and the broadcasts share the same memory and disk; on a cluster the exchange reads "
                      "the replicated state from the parallel filesystem once instead of once per rank.", "",
                      "| ranks | every rank reads every file (s) | parts exchanged (s) | exchanged / files |", "|---:|---:|---:|---:|"]
            for n, (files, exchanged) in read_rep.items():
                lines.append(f"| {n} | {fmt(files)} | {fmt(exchanged)} | {fmt(paired_ratio(n, 'replicated_read', 'files', base='exchange'))} |")
            lines.append("")
        ratios = {n: r for n, r in ratios.items() if r is not None}
        t_rep = bool(ratios) and all(r <= 0.6 for r in ratios.values())
        detail_rep = ", ".join(f"{n} ranks: {fmt(r)}" for n, r in ratios.items()) or "–"

# --- restart ---
rs = pd.concat([jsonl(out / f"restart_n{n}.jsonl") for n in (2, 4)], ignore_index=True)
lines += ["## Stop and restart (fashion_mlp under mpiexec, 2.7 MB checkpoint)", ""]
t6 = None
detail6 = "–"
if rs.empty:
    lines += ["not run", ""]
else:
    lines += ["Medians of 3 repetitions. Stop: USR2 to the last rank; *signal → exit* is measured from outside "
              "(kill to mpiexec's exit: stop agreed at the next step, checkpoint committed, stop recorded, MPI "
              "finalized); *request → commit* is the stop event's own figure. Restart latency: process start "
              "(from /proc) to the first resumed training step, less the time spent verifying and reading the "
              "checkpoint; the baseline is the same job's fresh start (no checkpoint) to its first step.", "",
              "| ranks | signal → exit (s) | request → commit (s) | first resumed step (s) | checkpoint verify+read (s) | restart latency (s) | fresh start → first step (s) | restart latency / fresh start |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    med_rs = rs.groupby("ranks").median(numeric_only=True)
    for n, r in med_rs.iterrows():
        lines.append(f"| {n} | {fmt(r['stop_to_exit_s'])} | {fmt(r['request_to_commit_s'])} | {fmt(r['first_resumed_step_s'])} | "
                     f"{fmt(r['checkpoint_read_s'])} | {fmt(r['restart_latency_s'])} | {fmt(r['fresh_first_step_s'])} | "
                     f"{fmt(r['restart_latency_s'] / r['fresh_first_step_s'])} |")
    lines.append("")
    t6 = bool((med_rs["restart_latency_s"] <= 2.0).all())
    detail6 = ", ".join(f"{n} ranks: {fmt(r['restart_latency_s'])} s" for n, r in med_rs.iterrows())

# --- report() ---
rp = jsonl(out / "report_n2.jsonl")
lines += ["## report() cost (2 ranks under mpiexec)", ""]
t7 = None
detail7 = "–"
if rp.empty:
    lines += ["not run", ""]
else:
    med_rp = rp.groupby("what")["seconds"].median()
    rep_s, step_s = med_rp.get("report"), med_rp.get("fashion_step")
    ratio7 = rep_s / step_s if rep_s and step_s else None
    lines += ["Medians of 3 interleaved repetitions. *report()*: the `reporter` test workload reports 3000 times "
              "with nothing in between (6 metrics, one a string tag); each iteration is one whole report(): the row, "
              "the cross-rank summaries and the stop agreement (one allgather), and rank 0 appending to "
              "result.jsonl, progress.csv and metrics.h5 (SWMR, flushed); the median of rank 0's `_time_this_iter_s`. "
              "*fashion_mlp step*: one epoch at global batch 64, train_time_s over its steps per rank. fashion_mlp "
              "itself reports once per epoch (938 steps on 2 ranks), so its real overhead is this ratio / 938.", "",
              "| ranks | report() (µs) | report() p90 (µs) | fashion_mlp step (ms) | report() / step |",
              "|---:|---:|---:|---:|---:|",
              f"| 2 | {fmt(rep_s * 1e6, '.1f')} | {fmt(rp[rp['what'] == 'report']['p90'].median() * 1e6, '.1f')} | "
              f"{fmt(step_s * 1e3, '.2f')} | {fmt(ratio7, '.4f')} |", ""]
    t7 = ratio7 is not None and ratio7 < 0.01
    detail7 = f"{fmt(rep_s * 1e6, '.1f')} µs vs a {fmt(step_s * 1e3, '.2f')} ms step: {fmt(ratio7 * 100 if ratio7 else None, '.2f')} %"

# --- LibTorch ---
lines += ["## LibTorch: torch_fashion_mlp vs PyTorch DDP, overlap, runtime overhead, start-up", ""]
tq = {}
torch_runs = {n: jsonl(out / f"torch_n{n}.jsonl") for n in RANKS}
torch_runs = {n: df[df["epoch_time_s"].notna()] for n, df in torch_runs.items() if not df.empty and "epoch_time_s" in df}
ddp, plain, start = jsonl(out / "torch_ddp.jsonl"), jsonl(out / "torch_plain.jsonl"), jsonl(out / "torch_startup.jsonl")
detail_t = {k: "–" for k in ("pytorch", "overlap", "plain", "startup")}
if "torch" in skipped or not torch_runs:
    lines += ["not run" + ("" if "torch" in skipped else ": this build has no LibTorch component"), ""]
else:
    lines += ["`torch_fashion_mlp` is the same recipe as the two above, written with LibTorch modules, DDP by "
              "`prepare_model` (on 2 ranks; on 1 rank it does not wrap, as Ray), checkpoints by `StateDict`; it runs "
              "right after PyTorch on the same ranks, from the same init weights. Medians over the epochs.", "",
              "| ranks | torch_fashion_mlp epoch (s) | train (s) | PyTorch DDP epoch (s) | torch_fashion_mlp / PyTorch | last loss (LibTorch / PyTorch) |",
              "|---:|---:|---:|---:|---:|---:|"]
    for n, df in torch_runs.items():
        t_med = df["epoch_time_s"].median()
        p_med = med.get(("pytorch", n))
        tq["pytorch", n] = t_med / p_med if p_med else None
        p_loss = last_of(train["pytorch", n], "loss") if ("pytorch", n) in train else None
        lines.append(f"| {n} | {fmt(t_med)} | {fmt(df['train_time_s'].median())} | {fmt(p_med)} | {fmt(tq['pytorch', n])} | "
                     f"{fmt(last_of(df, 'loss'), '.6f')} / {fmt(p_loss, '.6f')} |")
    lines.append("")
    if not ddp.empty:
        pairs = ddp.assign(rep=ddp.groupby("mode").cumcount()).pivot(index="rep", columns="mode", values="step_ms")
        pairs["ratio"] = pairs["overlap"] / pairs["flat"]
        tq["overlap"] = pairs["ratio"].median()
        lines += ["**Overlap.** The same LibTorch MLP on 2 ranks (local batch 32, 400 timed steps after 30), gradients "
                  "averaged by `prepare_model` (buckets allreduced on the communication thread while backward runs) "
                  "or by one blocking allreduce of all gradients, flattened, after backward (bench/torch/ddp_modes.cpp). "
                  "Alternated three times; each figure is the slower rank's median step. `none`: the same steps with "
                  "no averaging at all (each rank keeps its own gradients), the compute floor: the columns after it "
                  "are what each way of averaging adds to it.", "",
                  "| pair | none step (ms) | overlap step (ms) | flat step (ms) | overlap / flat | overlap − none (ms) | flat − none (ms) |",
                  "|---:|---:|---:|---:|---:|---:|---:|"]
        for rep_, r in pairs.iterrows():
            floor = r.get("none")
            lines.append(f"| {rep_ + 1} | {fmt(floor)} | {fmt(r['overlap'])} | {fmt(r['flat'])} | {fmt(r['ratio'])} | "
                         f"{fmt(None if floor is None else r['overlap'] - floor)} | {fmt(None if floor is None else r['flat'] - floor)} |")
        lines.append("")
    if not plain.empty and 1 in torch_runs:
        tq["plain"] = torch_runs[1]["train_time_s"].median() / plain["train_time_s"].median()
        lines += ["**Runtime overhead, 1 rank.** `torch_fashion_mlp`'s training loop time against the same loop in a "
                  "plain LibTorch program with no trainrt (bench/torch/plain_loop.cpp: data in memory, same model, "
                  "batch, optimizer and thread), medians over the epochs.", "",
                  "| torch_fashion_mlp train (s) | plain LibTorch train (s) | trainrt / plain |", "|---:|---:|---:|",
                  f"| {fmt(torch_runs[1]['train_time_s'].median())} | {fmt(plain['train_time_s'].median())} | {fmt(tq['plain'])} |", ""]
    if not start.empty:
        sm = start.groupby("workload").median(numeric_only=True)
        lines += ["**Start-up and memory, 2 ranks.** Process start to the first training step (rank 0's own "
                  "figure) and the larger of the two ranks' max RSS (`/usr/bin/time`), one epoch, medians of 3 "
                  "alternated runs. `fashion_mlp` never loads LibTorch; `torch_fashion_mlp` loads libtrainrt_torch "
                  "and LibTorch because the job names it.", "",
                  "| workload | first step after start (s) | max RSS per rank (MB) |", "|---|---:|---:|"]
        for w, r in sm.iterrows():
            lines.append(f"| {w} | {fmt(r['first_step_s'])} | {fmt(r['max_rss_kb'] / 1024, '.0f')} |")
        lines.append("")
        if {"fashion_mlp", "torch_fashion_mlp"} <= set(sm.index):
            a, b = sm.loc["fashion_mlp"], sm.loc["torch_fashion_mlp"]
            tq["startup"] = (f"+{fmt(b['first_step_s'] - a['first_step_s'])} s to the first step, "
                             f"+{fmt((b['max_rss_kb'] - a['max_rss_kb']) / 1024, '.0f')} MB per rank with LibTorch")
    detail_t = {"pytorch": f"2 ranks: {fmt(tq.get(('pytorch', 2)))} (1 rank: {fmt(tq.get(('pytorch', 1)))})",
                "overlap": f"median of 3 pairs: {fmt(tq.get('overlap'))}", "plain": fmt(tq.get("plain")),
                "startup": tq.get("startup", "–")}
t_pt = None if tq.get(("pytorch", 2)) is None else tq[("pytorch", 2)] <= 0.30
t_ov = None if tq.get("overlap") is None else tq["overlap"] <= 0.95
t_pl = None if tq.get("plain") is None else tq["plain"] <= 1.02

# --- GPU ---
import subprocess
gpu_jsonl, gpu_note = out / "gpu_bench.jsonl", out / "gpu_note.txt"
gpu_note = gpu_note.read_text().strip() if gpu_note.exists() else ""
gpu_report = lambda *args: subprocess.run([sys.executable, "bench/gpu/report.py", str(gpu_jsonl), *args],
                                          check=True, capture_output=True, text=True).stdout.strip()
if gpu_jsonl.exists():
    lines += gpu_report("--markdown", gpu_note).splitlines() + [""]
    detail8, t8_text = gpu_report("--target").split("|")
    t8 = {"PASS": True, "MISS": False}.get(t8_text)
else:
    lines += ["## GPU", "", "not run: no GPU here and no stored GPU results.", ""]
    detail8, t8 = "–", None

# Python training functions on a GPU: measured only on a lent GPU machine (run_on_gpu.sh's pybench
# stage: its Python and CUDA PyTorch are not this machine's); the stored results are shown.
py_gpu = Path("bench/results/gpu/h200-python-latest.jsonl")
if py_gpu.exists():
    table = subprocess.run([sys.executable, "bench/gpu/python_gpu_report.py", str(py_gpu)], check=True,
                           capture_output=True, text=True).stdout.strip()
    lines += ["## GPU: Python training functions, trainrt vs plain PyTorch", "",
              Path("bench/results/gpu/h200-python-latest.md").read_text().strip(), "", *table.splitlines(), ""]
# The same on today's stack, with Ray Train beside it (run_on_gpu.sh's pybench and raybench stages).
h100_python = [Path(f"bench/results/gpu/h100-{side}-latest.jsonl") for side in ("python", "ray")]
if all(path.exists() for path in h100_python):
    lines += ["## GPU: Python training functions, trainrt and Ray Train vs plain PyTorch (H100)", "",
              Path("bench/results/gpu/h100-python-latest.md").read_text().strip(), ""]
    for path in h100_python:
        table = subprocess.run([sys.executable, "bench/gpu/python_gpu_report.py", str(path)], check=True,
                               capture_output=True, text=True).stdout.strip()
        lines += [*table.splitlines(), ""]

# --- checkpoints on a network filesystem: the stored results of `make bench-glusterfs` ---
gl_dir = Path("bench/results/glusterfs/checkpoint")
gl = pd.concat([jsonl(gl_dir / f"checkpoint_n{n}.jsonl") for n in RANKS], ignore_index=True)
if not gl.empty and out.resolve() != gl_dir.resolve():  # not inside the report of those results
    gl_meta = dict(line.split("=", 1) for line in (gl_dir / "machine.txt").read_text().splitlines() if "=" in line)
    lines += ["## Checkpoints on a network filesystem (GlusterFS, stored results)", "",
              f"Not measured by `make bench`: the stored results of `make bench-glusterfs` ({gl_dir}, "
              f"{gl_meta.get('date', '?')}, trainrt {gl_meta.get('trainrt', '?')}; full report {gl_dir}.md). "
              f"{gl_meta.get('filesystem', '')}. The same checkpoint bench, both sides of each ratio through the "
              "volume, the same pairing of repetitions; FUSE's own costs on this machine, not a cluster's network.", "",
              "| ranks | what | file_per_rank / plain | shared / plain |", "|---:|---|---:|---:|"]
    for n in RANKS:
        for what in ("write", "read"):
            lines.append(f"| {n} | {what} | {fmt(paired_ratio(n, what, 'file_per_rank', frame=gl))} | "
                         f"{fmt(paired_ratio(n, what, 'shared', frame=gl))} |")
    lines.append("")

# --- parts measured on the local cluster, or their stored results ---
def cluster_section(result, part, renderer, title, not_run):
    """The section `renderer` draws from `result` (in this run's directory) with the part's note, or "not run"."""
    path = out / result
    if not path.exists():
        return [f"## {title}", "", f"not run: {not_run}; no stored results.", ""]
    note = out / f"{part}_note.txt"
    return subprocess.run([sys.executable, renderer, str(path), note.read_text().strip() if note.exists() else ""],
                          check=True, capture_output=True, text=True).stdout.strip().splitlines() + [""]


lines += cluster_section("node_failure.jsonl", "nodes", "bench/multinode/report.py", "Node failure",
                         "BENCH_NODES=1 runs it (root, the local cluster)")
lines += cluster_section("goodput.json", "goodput", "bench/multinode/goodput_report.py", "Goodput",
                         "BENCH_GOODPUT=1 or `make bench-goodput` runs it (root, the local cluster)")
lines += cluster_section("array_sweep.json", "array", "bench/tune/array_report.py", "Sweeps vs a job array",
                         "BENCH_TUNE_ARRAY=1 or `make bench-tune-array` runs it (root, the local cluster)")

# --- targets ---
t1 = None if len(ratio) < len(RANKS) else all(v <= 0.5 for v in ratio.values())
t2 = None if ("trainrt", 1) not in med or ("trainrt", 2) not in med else med["trainrt", 2] < med["trainrt", 1]
big = sizes[sizes["bytes"] >= (1 << 20)] if not sizes.empty else sizes
t3 = None if big.empty else bool((big["busbw_ratio"] >= 0.95).all())
detail1 = ", ".join(f"{n} rank{'s' if n > 1 else ''}: {fmt(v)}" for n, v in ratio.items()) or "–"
detail2 = (f"1 rank {fmt(med['trainrt', 1])} s, 2 ranks {fmt(med['trainrt', 2])} s" if t2 is not None else "–")
if big.empty:
    detail3 = "–"
else:
    worst = big.loc[big["busbw_ratio"].idxmin()]
    misses = [human(int(b)) for b in big.loc[big["busbw_ratio"] < 0.95, "bytes"]]
    detail3 = f"lowest {fmt(worst['busbw_ratio'])} at {human(int(worst['bytes']))}" + \
              (f"; below 0.95 at {', '.join(misses)}" if misses else "")
# --- Python: the recipe as a trainrt Python function (gloo and trainrt backends) vs the plain script ---
py_rows, py_ratio, py_trainrt_ratio, py_fit_ratio, py_fit_trainrt_ratio = [], {}, {}, {}, {}
py_pairs = {}  # (kind, n) -> the ratio of each alternation (rep 1: the main runs; _rI: the repeats)
for n in RANKS:
    gloo, mpi = jsonl(out / f"python_n{n}.jsonl"), jsonl(out / f"python_trainrt_n{n}.jsonl")
    fit, fit_mpi = jsonl(out / f"python_fit_n{n}.jsonl"), jsonl(out / f"python_fit_trainrt_n{n}.jsonl")
    if ("pytorch", n) not in med or (gloo.empty and mpi.empty):
        continue
    base = med["pytorch", n]
    cells = []
    for kind, df, ratios in (("python", gloo, py_ratio), ("python_fit", fit, py_fit_ratio), ("python_trainrt", mpi, py_trainrt_ratio),
                             ("python_fit_trainrt", fit_mpi, py_fit_trainrt_ratio)):
        if df.empty or "epoch_time_s" not in df:
            cells += ["–", "–"]
            continue
        pairs = [df["epoch_time_s"].median() / base]
        for rep in sorted(out.glob(f"pytorch_n{n}_r*.jsonl")):
            suffix = rep.stem[len(f"pytorch_n{n}"):]
            plain_rep, kind_rep = jsonl(rep), jsonl(out / f"{kind}_n{n}{suffix}.jsonl")
            if not plain_rep.empty and not kind_rep.empty and "epoch_time_s" in kind_rep:
                pairs.append(kind_rep["epoch_time_s"].median() / plain_rep["epoch_time_s"].median())
        ratios[n] = float(np.median(pairs))
        py_pairs[kind, n] = pairs
        cells += [fmt(df["epoch_time_s"].median()),
                  fmt(ratios[n]) + (f" ({', '.join(fmt(r) for r in pairs)})" if len(pairs) > 1 else "")]
    last = next((df.sort_values("epoch").iloc[-1]["loss"] for df in (mpi, gloo) if not df.empty and "loss" in df), None)
    py_rows.append(f"| {n} | {fmt(base)} | {' | '.join(cells)} | {fmt(last, '.6f') if last is not None else '–'} |")
if py_rows:
    lines += ["## Python: the recipe as a trainrt training function vs plain PyTorch DDP", "",
              "`bench/python/recipe_in_trainrt.py` runs `bench/pytorch/pytorch_ddp.py`'s epoch body (`train_epochs`) as a "
              "`python:` workload: trainrt embeds CPython, sets up torch.distributed from its own world over "
              "`scaling.backend` = gloo, or = trainrt (trainrt's MPI process group registered as a torch.distributed "
              "backend), and reports each epoch (outside the timed part). `TorchTrainer.fit()`: the same function "
              "given to `trainrt.torch.TorchTrainer(...).fit()` in a plain `python3 bench/python/recipe_fit.py`, "
              "which starts the ranks itself (mpiexec, gloo), as a Ray user's script does. Same OpenBLAS, 1 thread "
              "per rank. Medians over the epochs of each run; on 2 ranks the four runs are alternated "
              "BENCH_PY_REPS times and the ratio is the median of the pairs' ratios (each pair's in brackets).", "",
              "| ranks | plain PyTorch DDP, gloo (s) | trainrt, gloo (s) | ratio | TorchTrainer.fit(), gloo (s) | ratio "
              "| trainrt, backend trainrt (s) | ratio | TorchTrainer.fit(), backend trainrt (s) | ratio | last loss |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"] + py_rows + [""]
def startup_s(name):
    """Launch (the .start file run() wrote) to the end of the first training step (epoch 1's
    first_step_unix), or None."""
    df, start = jsonl(out / f"{name}.jsonl"), out / f"{name}.start"
    if df.empty or "first_step_unix" not in df or not start.exists():
        return None
    return float(df["first_step_unix"].dropna().iloc[0]) - float(start.read_text())
start_rows = []
for n in RANKS:
    cells = [startup_s(f"{kind}_n{n}") for kind in ("pytorch", "python", "python_trainrt")]
    if any(c is not None for c in cells):
        start_rows.append(f"| {n} | " + " | ".join(fmt(c) if c is not None else "–" for c in cells) + " |")
if start_rows:
    lines += ["Start-up: seconds from the launch command (`python3 bench/pytorch/pytorch_ddp.py`, `mpiexec trainrt`) to "
              "the end of rank 0's first training step; the data are decoded in between (the same code in all three).", "",
              "| ranks | plain PyTorch DDP (s) | trainrt, gloo (s) | trainrt, backend trainrt (s) |",
              "|---:|---:|---:|---:|"] + start_rows + [""]
report_cost = jsonl(out / "python_report.jsonl")
if not report_cost.empty and "report_checkpoint_ms" in report_cost:
    r = report_cost.iloc[0]
    lines += [f"`report()` from Python on {int(r['ranks'])} ranks (`report_cost` in the same file, median of 30 calls): "
              f"{fmt(r['report_ms'], '.3f')} ms without a checkpoint, {fmt(r['report_checkpoint_ms'], '.1f')} ms with "
              f"`state_dict_checkpoint(model=..., optimizer=..., epoch=...)` of the recipe's model and SGD momentum "
              f"({fmt(r['model_mib'], '.2f')} MiB of parameters, the same again of momentum), written and synced "
              "inside the call (`checkpoint.async = false`, the default).", ""]
directory = jsonl(out / "python_directory.jsonl")
dir_ratio = None
if not directory.empty and "checkpoint_s" in directory:
    d = directory.iloc[0]
    dir_ratio = d["copy_s"] / d["checkpoint_s"]
    lines += [f"Directory checkpoints (`bench/python/directory_checkpoint.py`, {int(d['ranks'])} rank, median of 5): "
              f"`report(checkpoint=Checkpoint.from_directory(d))` of a {int(d['mib'])} MiB directory (a `model.pt` of "
              f"random bytes and two JSON files) takes {fmt(d['checkpoint_s'], '.3f')} s, copying the same files onto "
              f"the same filesystem and fsyncing each and the directory {fmt(d['copy_s'], '.3f')} s: "
              f"{fmt(dir_ratio)}× the copy's speed (target ≥ 0.8×). The checkpoint retention removes (one kept) "
              "is removed in the background, during the copy that follows it.", ""]
interp = jsonl(out / "python_interpreter.jsonl")
if not interp.empty and "who" in interp:
    medians = {who: interp[interp["who"] == who]["median_s"].reset_index(drop=True) for who in ("python3", "trainrt.run", "embedded")}
    pair = lambda who: (medians[who] / medians["python3"]).median()
    lines += [f"Interpreter (`bench/python/interpreter_loop.py`, a pure-Python loop of 2M iterations, median of 5 loops "
              f"per run, {len(medians['python3'])} alternated rounds): {fmt(medians['python3'].median(), '.3f')} s in "
              f"Debian's `python3` (libpython linked into the executable), {fmt(medians['trainrt.run'].median(), '.3f')} s "
              f"run by `trainrt.run()` in that `python3` ({fmt(pair('trainrt.run'), '.3f')}×), "
              f"{fmt(medians['embedded'].median(), '.3f')} s as a `python:` workload, where trainrt embeds the shared "
              f"`libpython3.11.so` ({fmt(pair('embedded'), '.3f')}×; ratios: median of the rounds' ratios). A Python-bound "
              "loop (a GPU step of small kernels is one) runs at `python3`'s speed when the script is started with "
              "`python3` (`trainrt.run()`, `TorchTrainer.fit()`).", ""]
xgb = jsonl(out / "xgboost_bench.jsonl")
xgb_round, xgb_save = {}, None
lines += ["## XGBoost: the built-in workload vs a hand-written xgboost.train", ""]
if "xgboost" in skipped or xgb.empty:
    lines += ["not run" + ("" if "xgboost" in skipped else ": this build has no Python component or no python3-xgboost"), ""]
else:
    lines += ["`run.workload = xgboost` (`bench/xgboost/xgboost_bench.sh`) against `bench/xgboost/plain_xgboost.py`: a tracker "
              "started by hand, one process per rank reading its rows with h5py, `xgboost.train` with the same parameters "
              "(binary:logistic, hist, depth 8, eta 0.1, logloss and error on train and test, 1 thread per rank) on the same "
              "HIGGS-shaped synthetic table (`bench/xgboost/make_table.py`, 28 float32 columns), the two alternated "
              "several times per rank count. Round: median seconds per round after the first (trainrt: report to report, "
              "its per-round report and a checkpoint every 4 rounds with `checkpoint.async = true` included); ratio: the "
              "median of the pairs' ratios. Save, what a checkpoint costs the training loop: trainrt's `model_checkpoint()` "
              "(the booster's UBJSON into a Checkpoint, as the callback does) plus report()'s stall (async: the commit of "
              "the checkpoint before — manifest, renames, fsyncs — and this one's write run on a thread), against "
              "`booster.save_model()` to a local file, alone and followed by an fsync; the synchronous save (atomic, "
              "fsynced, hashed, committed on return) is listed beside.", "",
              "| ranks | train rows | pairs | trainrt round (s) | plain round (s) | ratio (median of pairs) | rows/s trainrt | "
              "trainrt save: serialize + stall (s) | sync save (s) | save_model (s) | + fsync (s) | ratio to save_model |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n in RANKS:
        t = xgb[(xgb["bench"] == "xgboost_trainrt") & (xgb["ranks"] == n)].sort_values("rep")
        p = xgb[(xgb["bench"] == "xgboost_plain") & (xgb["ranks"] == n)].sort_values("rep")
        s = xgb[(xgb["bench"] == "xgboost_trainrt_sync") & (xgb["ranks"] == n)]
        if t.empty or p.empty:
            continue
        pairs = [a / b for a, b in zip(t["round_s"], p["round_s"])]
        xgb_round[n] = float(np.median(pairs))
        save = float(np.median(t["serialize_s"] + t["stall_s"]))
        plain_save = float(np.median(p["save_s"]))
        if n == 1:
            xgb_save = save / plain_save
        lines.append(f"| {n} | {int(t['train_rows'].iloc[0])} | {len(pairs)} ({', '.join(fmt(r) for r in pairs)}) | "
                     f"{fmt(t['round_s'].median())} | {fmt(p['round_s'].median())} | {fmt(xgb_round[n])} | "
                     f"{t['train_rows'].iloc[0] / t['round_s'].median():.0f} | "
                     f"{fmt(float(np.median(t['serialize_s'])), '.4f')} + {fmt(float(np.median(t['stall_s'])), '.4f')} | "
                     f"{fmt(s['save_s'].iloc[0], '.4f') if not s.empty else '–'} | {fmt(plain_save, '.4f')} | "
                     f"{fmt(float(np.median(p['save_fsync_s'])), '.4f')} | {fmt(save / plain_save, '.2f')} |")
    lines.append("")
t_py = (py_ratio[2] <= 1.02) if 2 in py_ratio else None
detail_py = f"{fmt(py_ratio[2])}× on 2 ranks" if 2 in py_ratio else "not run"
t_fit = (py_fit_ratio[2] <= 1.02) if 2 in py_fit_ratio else None
detail_fit = f"{fmt(py_fit_ratio[2])}× on 2 ranks" if 2 in py_fit_ratio else "not run"
t_pym = (py_trainrt_ratio[2] <= 0.40) if 2 in py_trainrt_ratio else None
t_fitm = (py_fit_trainrt_ratio[2] <= 0.5) if 2 in py_fit_trainrt_ratio else None
detail_fitm = f"{fmt(py_fit_trainrt_ratio[2])}× on 2 ranks" if 2 in py_fit_trainrt_ratio else "not run"
detail_pym = f"{fmt(py_trainrt_ratio[2])}× on 2 ranks" if 2 in py_trainrt_ratio else "not run"

import subprocess
data_part = json.loads(subprocess.run([sys.executable, "bench/data/report.py", str(out / "data_bench.jsonl")],
                                      check=True, capture_output=True, text=True).stdout)
lines += [data_part["section"], ""]
tune_part = json.loads(subprocess.run([sys.executable, "bench/tune/report.py", "section", str(out / "tune_bench.json")],
                                      check=True, capture_output=True, text=True).stdout)
lines += [tune_part["section"], ""]
tune_targets = [f"| {t} | {m} | {verdict(ok) if ok is not None else '–'} |" for t, m, ok in tune_part["targets"]]
data_targets = [f"| {t} | {m} | {verdict(ok) if ok is not None else '–'} |" for t, m, ok in data_part["targets"]]
if "data" in skipped:
    data_targets = ["| Data: the streaming reader's targets | not run | not run |"]

# Ray's own examples under Ray and under trainrt: stored by `make conformance` (it runs Ray's half too).
conformance_path = Path("tests/conformance/trainrt_summary.json")
conformance = json.loads(conformance_path.read_text()) if conformance_path.exists() else None
conformance_share = (conformance["run_as_under_ray"] / conformance["run_under_ray"]
                     if conformance and conformance["run_under_ray"] else None)
lines += ["## Ray's examples: conformance (stored)", ""]
if conformance:
    lines += [f"Ray {conformance['ray_version']}'s own Train and Tune examples ({conformance['examples']} files in its "
              f"package), each run under Ray and, after the port, under trainrt by `make conformance` "
              f"({conformance['date']}; `{conformance_path}`); what each one does is in "
              f"docs/reference/ray-conformance.md. Those that do not run under Ray on this CPU-only machine (a library "
              f"not installed, a download, more CPUs or a GPU) are not counted.", "",
              "| examples | run under Ray here | run under trainrt as under Ray | share |", "|---:|---:|---:|---:|",
              f"| {conformance['examples']} | {conformance['run_under_ray']} | {conformance['run_as_under_ray']} | "
              f"{fmt(conformance_share)} |", ""]
else:
    lines += [f"not run: `make conformance` writes {conformance_path}", ""]

lines += ["## Targets", "",
          "| target | measured | result |", "|---|---|---|",
          f"| trainrt epoch time ≤ 0.5 × PyTorch's on the same ranks (1 and 2) | {detail1} | {verdict(t1)} |",
          f"| trainrt on 2 ranks faster than on 1 (median epoch time) | {detail2} | {verdict(t2)} |",
          f"| allreduce busbw ≥ 0.95 × plain MPI for every size ≥ 1 MiB | {detail3} | {verdict(t3)} |",
          f"| checkpoint write bandwidth ≥ 0.90 × plain write+fsync (both layouts, 1 and 2 ranks) | {detail4} | {verdict(t4)} |",
          f"| checkpoint restore (verify + read) bandwidth ≥ 0.90 × plain read (both layouts, 1 and 2 ranks) | {detail4r} | {verdict(t4r)} |",
          f"| async checkpoint stall ≤ 1 % of the sync save time (report()'s own time, `snapshot = background`; `copy` where round 7 did not run) | {detail5} | {verdict(t5)} |",
          f"| the same with everything a save takes from the next training step (the background copy, the writing beside the compute, the wait) | {detail5b} | {verdict(t5b) if t5b is not None else 'not run'} |",
          f"| replicated state: a save in shares ≤ 0.6 × rank 0 alone | {detail_rep} | {verdict(t_rep)} |",
          f"| restart latency (process start → first resumed step, excluding the checkpoint read) ≤ 2 s on 2 and 4 ranks | {detail6} | {verdict(t6)} |",
          f"| report() < 1 % of a fashion_mlp step (2 ranks) | {detail7} | {verdict(t7)} |",
          f"| GPU: trainrt epoch time ≤ 0.5 × PyTorch's on the same GPU (data resident; data loading included) | {detail8} | {verdict(t8)} |",
          f"| LibTorch: torch_fashion_mlp epoch ≤ 0.30 × PyTorch DDP (gloo) on 2 ranks | {detail_t['pytorch']} | {verdict(t_pt)} |",
          f"| LibTorch: prepare_model (overlap) step ≤ 0.95 × one flat allreduce after backward (2 ranks) | {detail_t['overlap']} | {verdict(t_ov)} |",
          f"| LibTorch: 1 rank ≤ 1.02 × the same loop in plain LibTorch | {detail_t['plain']} | {verdict(t_pl)} |",
          f"| LibTorch: start-up and RSS with vs without the component (reported, no target) | {detail_t['startup']} | – |",
          f"| Python (gloo): epoch time ≤ 1.02 × plain PyTorch DDP (gloo), same script body and threads | {detail_py} | {verdict(t_py)} |",
          f"| `TorchTrainer.fit()` from a plain python3 (gloo): epoch time ≤ 1.02 × plain PyTorch DDP (gloo) | {detail_fit} | {verdict(t_fit)} |",
          f"| Python (backend trainrt): epoch time ≤ 0.40 × plain PyTorch DDP (gloo) on 2 ranks | {detail_pym} | {verdict(t_pym)} |",
          f"| `TorchTrainer.fit()` with scaling.backend = trainrt: epoch time ≤ 0.5 × plain PyTorch DDP (gloo) on 2 ranks | {detail_fitm} | {verdict(t_fitm)} |",
          f"| Python: Checkpoint.from_directory of 100 MiB ≥ 0.8 × the speed of copying it + fsync | "
          f"{fmt(dir_ratio) + '×' if dir_ratio is not None else 'not run'} | {verdict(dir_ratio >= 0.8 if dir_ratio is not None else None)} |",
          f"| XGBoost: round time ≤ 1.05 × a hand-written xgboost.train (2 ranks) | "
          f"{fmt(xgb_round[2]) + '×' if 2 in xgb_round else 'not run'} | {verdict(xgb_round[2] <= 1.05 if 2 in xgb_round else None)} |",
          f"| XGBoost: checkpoint (serialize + report stall, async) ≤ 1.2 × booster.save_model() to a local file (1 rank) | "
          f"{fmt(xgb_save, '.2f') + '×' if xgb_save is not None else 'not run'} | {verdict(xgb_save <= 1.2 if xgb_save is not None else None)} |",
          f"| Ray's examples that run under Ray here run under trainrt as under Ray: share ≥ 0.90 (stored) | "
          f"{fmt(conformance_share) if conformance_share is not None else 'not run'} | "
          f"{verdict(conformance_share >= 0.9 if conformance_share is not None else None)} |"] + data_targets + tune_targets + ["",
          "The machine is shared and small: one measurement can be off by tens of percent when something else "
          "runs (the load average is recorded above and in each log). Run again before drawing conclusions from a MISS.", ""]

lines += ["<details><summary>Raw JSON lines</summary>", "", "```"]
for name in sorted(p.name for p in out.glob("*.jsonl")):
    lines.append(f"# {name}")
    lines += [l for l in (out / name).read_text().splitlines() if l.startswith("{")]
lines += ["```", "", "</details>", ""]
report.write_text("\n".join(lines))
