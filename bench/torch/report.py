"""BENCHMARKS.md's LibTorch section (with the LibTorch component only): torch_fashion_mlp against
PyTorch DDP (the pytorch topic's runs), prepare_model's overlap (ddp_modes.cpp), the runtime's
overhead against plain LibTorch (plain_loop.cpp), start-up and memory."""
from reporting import Part, fmt, last_epoch, targets

GOALS = targets("torch")
STARTUP_ROW = "| LibTorch: start-up and RSS with vs without the component (reported, no target) | {} | – |"


def epoch_runs(results):
    runs = {n: results.jsonl(f"torch_n{n}.jsonl") for n in results.RANKS}
    return {n: df[df["epoch_time_s"].notna()] for n, df in runs.items() if not df.empty and "epoch_time_s" in df}


def vs_pytorch(runs, pytorch, ratio):
    lines = ["`torch_fashion_mlp` is the same recipe as the two above, written with LibTorch modules, DDP by "
             "`prepare_model` (on 2 ranks; on 1 rank it does not wrap, as Ray), checkpoints by `StateDict`; it runs "
             "right after PyTorch on the same ranks, from the same init weights. Medians over the epochs.", "",
             "| ranks | torch_fashion_mlp epoch (s) | train (s) | PyTorch DDP epoch (s) | torch_fashion_mlp / PyTorch "
             "| last loss (LibTorch / PyTorch) |",
             "|---:|---:|---:|---:|---:|---:|"]
    for n, df in runs.items():
        t_med, p_med = df["epoch_time_s"].median(), pytorch.values["median"].get(("pytorch", n))
        ratio["pytorch", n] = t_med / p_med if p_med else None
        p_runs = pytorch.values["runs"]
        p_loss = last_epoch(p_runs["pytorch", n], "loss") if ("pytorch", n) in p_runs else None
        lines.append(f"| {n} | {fmt(t_med)} | {fmt(df['train_time_s'].median())} | {fmt(p_med)} | "
                     f"{fmt(ratio['pytorch', n])} | {fmt(last_epoch(df, 'loss'), '.6f')} / {fmt(p_loss, '.6f')} |")
    return lines + [""]


def overlap(ddp, ratio):
    if ddp.empty:
        return []
    pairs = ddp.assign(rep=ddp.groupby("mode").cumcount()).pivot(index="rep", columns="mode", values="step_ms")
    pairs["ratio"] = pairs["overlap"] / pairs["flat"]
    ratio["overlap"] = pairs["ratio"].median()
    lines = ["**Overlap.** The same LibTorch MLP on 2 ranks (local batch 32, 400 timed steps after 30), gradients "
             "averaged by `prepare_model` (buckets allreduced on the communication thread while backward runs) "
             "or by one blocking allreduce of all gradients, flattened, after backward (bench/torch/ddp_modes.cpp). "
             "Alternated three times; each figure is the slower rank's median step. `none`: the same steps with "
             "no averaging at all (each rank keeps its own gradients), the compute floor: the columns after it "
             "are what each way of averaging adds to it.", "",
             "| pair | none step (ms) | overlap step (ms) | flat step (ms) | overlap / flat | overlap − none (ms) "
             "| flat − none (ms) |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for rep, r in pairs.iterrows():
        floor = r.get("none")
        lines.append(f"| {rep + 1} | {fmt(floor)} | {fmt(r['overlap'])} | {fmt(r['flat'])} | {fmt(r['ratio'])} | "
                     f"{fmt(None if floor is None else r['overlap'] - floor)} | "
                     f"{fmt(None if floor is None else r['flat'] - floor)} |")
    return lines + [""]


def overhead(runs, plain, ratio):
    if plain.empty or 1 not in runs:
        return []
    ratio["plain"] = runs[1]["train_time_s"].median() / plain["train_time_s"].median()
    return ["**Runtime overhead, 1 rank.** `torch_fashion_mlp`'s training loop time against the same loop in a "
            "plain LibTorch program with no trainrt (bench/torch/plain_loop.cpp: data in memory, same model, "
            "batch, optimizer and thread), medians over the epochs.", "",
            "| torch_fashion_mlp train (s) | plain LibTorch train (s) | trainrt / plain |", "|---:|---:|---:|",
            f"| {fmt(runs[1]['train_time_s'].median())} | {fmt(plain['train_time_s'].median())} | {fmt(ratio['plain'])} |", ""]


def startup(start, ratio):
    if start.empty:
        return []
    sm = start.groupby("workload").median(numeric_only=True)
    lines = ["**Start-up and memory, 2 ranks.** Process start to the first training step (rank 0's own "
             "figure) and the larger of the two ranks' max RSS (`/usr/bin/time`), one epoch, medians of 3 "
             "alternated runs. `fashion_mlp` never loads LibTorch; `torch_fashion_mlp` loads libtrainrt_torch "
             "and LibTorch because the job names it.", "",
             "| workload | first step after start (s) | max RSS per rank (MB) |", "|---|---:|---:|"]
    for w, r in sm.iterrows():
        lines.append(f"| {w} | {fmt(r['first_step_s'])} | {fmt(r['max_rss_kb'] / 1024, '.0f')} |")
    if {"fashion_mlp", "torch_fashion_mlp"} <= set(sm.index):
        a, b = sm.loc["fashion_mlp"], sm.loc["torch_fashion_mlp"]
        ratio["startup"] = (f"+{fmt(b['first_step_s'] - a['first_step_s'])} s to the first step, "
                            f"+{fmt((b['max_rss_kb'] - a['max_rss_kb']) / 1024, '.0f')} MB per rank with LibTorch")
    return lines + [""]


def target_rows(ratio, ran):
    detail = {k: "–" for k in ("pytorch", "overlap", "plain", "startup")}
    if ran:
        detail = {"pytorch": f"2 ranks: {fmt(ratio.get(('pytorch', 2)))} (1 rank: {fmt(ratio.get(('pytorch', 1)))})",
                  "overlap": f"median of 3 pairs: {fmt(ratio.get('overlap'))}", "plain": fmt(ratio.get("plain")),
                  "startup": ratio.get("startup", "–")}
    return [GOALS.VS_PYTORCH.row(detail["pytorch"], GOALS.VS_PYTORCH.met(ratio.get(("pytorch", 2)))),
            GOALS.OVERLAP.row(detail["overlap"], GOALS.OVERLAP.met(ratio.get("overlap"))),
            GOALS.OVERHEAD.row(detail["plain"], GOALS.OVERHEAD.met(ratio.get("plain"))),
            STARTUP_ROW.format(detail["startup"])]


def part(results):
    lines = ["## LibTorch: torch_fashion_mlp vs PyTorch DDP, overlap, runtime overhead, start-up", ""]
    runs = epoch_runs(results)
    if "torch" in results.skipped or not runs:
        reason = "" if "torch" in results.skipped else ": this build has no LibTorch component"
        return Part(lines + ["not run" + reason, ""], target_rows({}, False))
    ratio = {}  # ("pytorch", n), "overlap", "plain": ratios; "startup": the start-up and RSS difference
    lines += vs_pytorch(runs, results.part("pytorch"), ratio)
    lines += overlap(results.jsonl("torch_ddp.jsonl"), ratio)
    lines += overhead(runs, results.jsonl("torch_plain.jsonl"), ratio)
    lines += startup(results.jsonl("torch_startup.jsonl"), ratio)
    return Part(lines, target_rows(ratio, True))
