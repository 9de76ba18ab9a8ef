"""BENCHMARKS.md's FashionMNIST section: trainrt (trainrt_nN.jsonl) vs PyTorch DDP (pytorch_ddp.py,
pytorch_nN.jsonl) on 1 and 2 ranks. Its values, `runs` ((implementation, ranks) -> per-epoch
frame) and `median` (-> median epoch time), serve the LibTorch and Python topics."""
from reporting import Part, fmt, last_epoch, targets

GOALS = targets("pytorch")
LABELS = (("trainrt", "trainrt"), ("pytorch", "PyTorch DDP"))


def epoch_runs(results):
    """(implementation, ranks) -> the run's rows with an epoch time, for the runs present."""
    runs = {}
    for impl, _ in LABELS:
        for n in results.RANKS:
            df = results.jsonl(f"{impl}_n{n}.jsonl")
            if not df.empty and "epoch_time_s" in df:
                runs[impl, n] = df[df["epoch_time_s"].notna()]
    return runs


def run_row(n, label, df):
    """A run's row: median epoch, train and eval times, the last epoch's loss and accuracy."""
    col = lambda k: df[k].median() if k in df else None
    last = (df.sort_values("epoch", kind="stable") if "epoch" in df else df).iloc[-1]
    val = lambda k: last[k] if k in last else None
    return (f"| {n} | {label} | {fmt(df['epoch_time_s'].median())} | {fmt(col('train_time_s'))} | "
            f"{fmt(col('eval_time_s'))} | {fmt(val('loss'), '.4f')} | {fmt(val('test_accuracy'), '.4f')} |")


def comparison_row(n, runs, ratio):
    """trainrt / PyTorch epoch time and the differences of their last loss and accuracy."""
    dl = da = None
    if n in ratio:
        t, p = runs["trainrt", n], runs["pytorch", n]
        if last_epoch(t, "loss") is not None:
            dl = last_epoch(t, "loss") - last_epoch(p, "loss")
        if last_epoch(t, "test_accuracy") is not None:
            da = last_epoch(t, "test_accuracy") - last_epoch(p, "test_accuracy")
    return f"| {n} | {fmt(ratio.get(n))} | {fmt(dl, '+.2e')} | {fmt(da, '+.4f')} |"


def target_rows(results, median, ratio):
    t1 = None if len(ratio) < len(results.RANKS) else GOALS.EPOCH_VS_PYTORCH.met_all(ratio.values())
    both = ("trainrt", 1) in median and ("trainrt", 2) in median
    t2 = GOALS.TWO_RANKS_FASTER.met(median["trainrt", 2] / median["trainrt", 1]) if both else None
    detail1 = ", ".join(f"{n} rank{'s' if n > 1 else ''}: {fmt(v)}" for n, v in ratio.items()) or "–"
    detail2 = f"1 rank {fmt(median['trainrt', 1])} s, 2 ranks {fmt(median['trainrt', 2])} s" if both else "–"
    return [GOALS.EPOCH_VS_PYTORCH.row(detail1, t1), GOALS.TWO_RANKS_FASTER.row(detail2, t2)]


def part(results):
    runs = epoch_runs(results)
    lines = ["## FashionMNIST MLP training (Ray Train's recipe): trainrt vs PyTorch DDP", "",
             "Medians over the epochs of one run; loss and accuracy are the last epoch's. Both start from "
             "the same weights, `tests/data/torch_init_seed0.h5`, so their losses should agree closely. "
             "PyTorch: DDP over gloo (no DDP wrapper on 1 rank, as Ray), 1 thread per rank, OpenBLAS.", "",
             "| ranks | implementation | epoch time (s) | train (s) | eval (s) | last loss | last test accuracy |",
             "|---:|---|---:|---:|---:|---:|---:|"]
    median = {key: df["epoch_time_s"].median() for key, df in runs.items()}
    for n in results.RANKS:
        for impl, label in LABELS:
            df = runs.get((impl, n))
            lines.append(f"| {n} | {label} | not run | | | | |" if df is None else run_row(n, label, df))
    ratio = {n: median["trainrt", n] / median["pytorch", n] for n in results.RANKS
             if ("trainrt", n) in median and ("pytorch", n) in median}
    lines += ["", "| ranks | trainrt / PyTorch epoch time | trainrt − PyTorch last loss | trainrt − PyTorch last accuracy |",
              "|---:|---:|---:|---:|"] + [comparison_row(n, runs, ratio) for n in results.RANKS] + [""]
    return Part(lines, target_rows(results, median, ratio), runs=runs, median=median)
