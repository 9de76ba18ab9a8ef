"""BENCHMARKS.md's XGBoost section from xgboost_bench.jsonl (xgboost_bench.sh): trainrt's built-in
workload against plain_xgboost.py, per round and per checkpoint."""
from reporting import Part, fmt, median, pair_ratios, targets

GOALS = targets("xgboost")
INTRO = (
    "`run.workload = xgboost` (`bench/xgboost/xgboost_bench.sh`) against `bench/xgboost/plain_xgboost.py`: a tracker "
    "started by hand, one process per rank reading its rows with h5py, `xgboost.train` with the same parameters "
    "(binary:logistic, hist, depth 8, eta 0.1, logloss and error on train and test, 1 thread per rank) on the same "
    "HIGGS-shaped synthetic table (`bench/xgboost/make_table.py`, 28 float32 columns), the two alternated "
    "several times per rank count. Round: median seconds per round after the first (trainrt: report to report, "
    "its per-round report and a checkpoint every 4 rounds with `checkpoint.async = true` included); ratio: the "
    "median of the pairs' ratios. Save, what a checkpoint costs the training loop: trainrt's `model_checkpoint()` "
    "(the booster's UBJSON into a Checkpoint, as the callback does) plus report()'s stall (async: the commit of "
    "the checkpoint before — manifest, renames, fsyncs — and this one's write run on a thread), against "
    "`booster.save_model()` to a local file, alone and followed by an fsync; the synchronous save (atomic, "
    "fsynced, hashed, committed on return) is listed beside.")


def ranks_row(xgb, n, measured):
    """One rank count's row (None when a side is missing); fills measured["round"][n] and, on 1
    rank, measured["save"]."""
    side = lambda bench: xgb[(xgb["bench"] == bench) & (xgb["ranks"] == n)]
    t, p, s = side("xgboost_trainrt").sort_values("rep"), side("xgboost_plain").sort_values("rep"), side("xgboost_trainrt_sync")
    if t.empty or p.empty:
        return None
    pairs = pair_ratios(t["round_s"], p["round_s"])
    measured["round"][n] = float(median(pairs))
    save, plain_save = float(median(list(t["serialize_s"] + t["stall_s"]))), float(median(list(p["save_s"])))
    if n == 1:
        measured["save"] = save / plain_save
    return (f"| {n} | {int(t['train_rows'].iloc[0])} | {len(pairs)} ({', '.join(fmt(r) for r in pairs)}) | "
            f"{fmt(t['round_s'].median())} | {fmt(p['round_s'].median())} | {fmt(measured['round'][n])} | "
            f"{t['train_rows'].iloc[0] / t['round_s'].median():.0f} | "
            f"{fmt(float(median(list(t['serialize_s']))), '.4f')} + {fmt(float(median(list(t['stall_s']))), '.4f')} | "
            f"{fmt(s['save_s'].iloc[0], '.4f') if not s.empty else '–'} | {fmt(plain_save, '.4f')} | "
            f"{fmt(float(median(list(p['save_fsync_s']))), '.4f')} | {fmt(save / plain_save, '.2f')} |")


def target_rows(measured):
    two, save = measured["round"].get(2), measured["save"]
    return [GOALS.ROUND.row(fmt(two) + "×" if two is not None else "not run", GOALS.ROUND.met(two)),
            GOALS.SAVE.row(fmt(save, ".2f") + "×" if save is not None else "not run", GOALS.SAVE.met(save))]


def part(results):
    xgb = results.jsonl("xgboost_bench.jsonl")
    measured = {"round": {}, "save": None}
    lines = ["## XGBoost: the built-in workload vs a hand-written xgboost.train", ""]
    if "xgboost" in results.skipped or xgb.empty:
        reason = "" if "xgboost" in results.skipped else ": this build has no Python component or no python3-xgboost"
        return Part(lines + ["not run" + reason, ""], target_rows(measured))
    lines += [INTRO, "",
              "| ranks | train rows | pairs | trainrt round (s) | plain round (s) | ratio (median of pairs) | rows/s trainrt | "
              "trainrt save: serialize + stall (s) | sync save (s) | save_model (s) | + fsync (s) | ratio to save_model |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [row for n in results.RANKS if (row := ranks_row(xgb, n, measured)) is not None]
    return Part(lines + [""], target_rows(measured))
