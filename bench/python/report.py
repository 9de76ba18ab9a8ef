"""BENCHMARKS.md's Python section (with the Python component only): pytorch_ddp.py's recipe as a
trainrt `python:` workload and through TorchTrainer.fit(), over gloo and over trainrt's backend,
against the plain script (the pytorch topic's runs); start-up; report() from Python; directory
checkpoints; the interpreter."""
from reporting import Part, fmt, median, targets

GOALS = targets("python")
# (result file prefix, the goal its 2-rank ratio answers), in the table's and the targets' order
KINDS = (("python", GOALS.WORKLOAD_GLOO), ("python_fit", GOALS.FIT_GLOO),
         ("python_trainrt", GOALS.WORKLOAD_TRAINRT), ("python_fit_trainrt", GOALS.FIT_TRAINRT))


def pair_ratios(results, kind, n, df, base):
    """The run's median epoch / plain PyTorch's, then the same for each alternation (_rI files)."""
    pairs = [df["epoch_time_s"].median() / base]
    for rep in sorted(results.out.glob(f"pytorch_n{n}_r*.jsonl")):
        suffix = rep.stem[len(f"pytorch_n{n}"):]
        plain, again = results.jsonl(rep.name), results.jsonl(f"{kind}_n{n}{suffix}.jsonl")
        if not plain.empty and not again.empty and "epoch_time_s" in again:
            pairs.append(again["epoch_time_s"].median() / plain["epoch_time_s"].median())
    return pairs


def epoch_rows(results, ratios):
    """The table's rows; fills ratios[kind][n] (the median of the pairs' ratios)."""
    rows, pytorch = [], results.part("pytorch").values["median"]
    for n in results.RANKS:
        runs = {kind: results.jsonl(f"{kind}_n{n}.jsonl") for kind, _ in KINDS}
        if ("pytorch", n) not in pytorch or (runs["python"].empty and runs["python_trainrt"].empty):
            continue
        base, cells = pytorch["pytorch", n], []
        for kind, _ in KINDS:
            df = runs[kind]
            if df.empty or "epoch_time_s" not in df:
                cells += ["–", "–"]
                continue
            pairs = pair_ratios(results, kind, n, df, base)
            ratios[kind][n] = float(median(pairs))
            cells += [fmt(df["epoch_time_s"].median()),
                      fmt(ratios[kind][n]) + (f" ({', '.join(fmt(r) for r in pairs)})" if len(pairs) > 1 else "")]
        last = next((df.sort_values("epoch").iloc[-1]["loss"] for df in (runs["python_trainrt"], runs["python"])
                     if not df.empty and "loss" in df), None)
        rows.append(f"| {n} | {fmt(base)} | {' | '.join(cells)} | {fmt(last, '.6f') if last is not None else '–'} |")
    return rows


def epoch_section(rows):
    if not rows:
        return []
    return ["## Python: the recipe as a trainrt training function vs plain PyTorch DDP", "",
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
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"] + rows + [""]


def startup_s(results, name):
    """Launch (the .start file bench/run.sh wrote) to the end of the first training step (epoch 1's
    first_step_unix), or None."""
    df, start = results.jsonl(f"{name}.jsonl"), results.file(f"{name}.start")
    if df.empty or "first_step_unix" not in df or not start.exists():
        return None
    return float(df["first_step_unix"].dropna().iloc[0]) - float(start.read_text())


def startup_section(results):
    rows = []
    for n in results.RANKS:
        cells = [startup_s(results, f"{kind}_n{n}") for kind in ("pytorch", "python", "python_trainrt")]
        if any(c is not None for c in cells):
            rows.append(f"| {n} | " + " | ".join(fmt(c) if c is not None else "–" for c in cells) + " |")
    if not rows:
        return []
    return ["Start-up: seconds from the launch command (`python3 bench/pytorch/pytorch_ddp.py`, `mpiexec trainrt`) to "
            "the end of rank 0's first training step; the data are decoded in between (the same code in all three).", "",
            "| ranks | plain PyTorch DDP (s) | trainrt, gloo (s) | trainrt, backend trainrt (s) |",
            "|---:|---:|---:|---:|"] + rows + [""]


def report_cost_section(results):
    cost = results.jsonl("python_report.jsonl")
    if cost.empty or "report_checkpoint_ms" not in cost:
        return []
    r = cost.iloc[0]
    return [f"`report()` from Python on {int(r['ranks'])} ranks (`report_cost` in the same file, median of 30 calls): "
            f"{fmt(r['report_ms'], '.3f')} ms without a checkpoint, {fmt(r['report_checkpoint_ms'], '.1f')} ms with "
            f"`state_dict_checkpoint(model=..., optimizer=..., epoch=...)` of the recipe's model and SGD momentum "
            f"({fmt(r['model_mib'], '.2f')} MiB of parameters, the same again of momentum), written and synced "
            "inside the call (`checkpoint.async = false`, the default).", ""]


def directory_section(results):
    """Its lines and the copy's time / the checkpoint's (None when not run)."""
    directory = results.jsonl("python_directory.jsonl")
    if directory.empty or "checkpoint_s" not in directory:
        return [], None
    d = directory.iloc[0]
    ratio = d["copy_s"] / d["checkpoint_s"]
    return [f"Directory checkpoints (`bench/python/directory_checkpoint.py`, {int(d['ranks'])} rank, median of 5): "
            f"`report(checkpoint=Checkpoint.from_directory(d))` of a {int(d['mib'])} MiB directory (a `model.pt` of "
            f"random bytes and two JSON files) takes {fmt(d['checkpoint_s'], '.3f')} s, copying the same files onto "
            f"the same filesystem and fsyncing each and the directory {fmt(d['copy_s'], '.3f')} s: "
            f"{fmt(ratio)}× the copy's speed (target ≥ {GOALS.DIRECTORY.shown}×). "
            "The checkpoint retention removes (one kept) is removed in the background, during the copy that follows it.",
            ""], ratio


def interpreter_section(results):
    interp = results.jsonl("python_interpreter.jsonl")
    if interp.empty or "who" not in interp:
        return []
    medians = {who: interp[interp["who"] == who]["median_s"].reset_index(drop=True)
               for who in ("python3", "trainrt.run", "embedded")}
    pair = lambda who: (medians[who] / medians["python3"]).median()
    return [f"Interpreter (`bench/python/interpreter_loop.py`, a pure-Python loop of 2M iterations, median of 5 loops "
            f"per run, {len(medians['python3'])} alternated rounds): {fmt(medians['python3'].median(), '.3f')} s in "
            f"Debian's `python3` (libpython linked into the executable), {fmt(medians['trainrt.run'].median(), '.3f')} s "
            f"run by `trainrt.run()` in that `python3` ({fmt(pair('trainrt.run'), '.3f')}×), "
            f"{fmt(medians['embedded'].median(), '.3f')} s as a `python:` workload, where trainrt embeds the shared "
            f"`libpython3.11.so` ({fmt(pair('embedded'), '.3f')}×; ratios: median of the rounds' ratios). A Python-bound "
            "loop (a GPU step of small kernels is one) runs at `python3`'s speed when the script is started with "
            "`python3` (`trainrt.run()`, `TorchTrainer.fit()`).", ""]


def target_rows(ratios, directory_ratio):
    rows = []
    for kind, goal in KINDS:
        two = ratios[kind].get(2)
        rows.append(goal.row(f"{fmt(two)}× on 2 ranks" if two is not None else "not run", goal.met(two)))
    shown = fmt(directory_ratio) + "×" if directory_ratio is not None else "not run"
    return rows + [GOALS.DIRECTORY.row(shown, GOALS.DIRECTORY.met(directory_ratio))]


def part(results):
    ratios = {kind: {} for kind, _ in KINDS}
    directory_lines, directory_ratio = directory_section(results)
    lines = (epoch_section(epoch_rows(results, ratios)) + startup_section(results) + report_cost_section(results)
             + directory_lines + interpreter_section(results))
    return Part(lines, target_rows(ratios, directory_ratio))
