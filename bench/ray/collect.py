#!/usr/bin/env python3
"""One result line of bench/ray/ray_bench.sh: reads a run's RAY_BENCH_OUT/events.jsonl and driver
log and prints one JSON object (the measurement in seconds as "value_s", or "ok": false with the
error line).

    collect.py PART SIDE VARIANT REP T0 T_END RC OUT_DIR LOG [LOG2]

PART: launch | epoch | checkpoint | recovery | sweep. T0: the harness's clock just before it started
the run; T_END: when the run's last process exited. LOG2: the log of a second process of the same
run (trainrt's rerun after a failed fit()).
"""
import json
import os
import re
import statistics
import sys


def events(out_dir):
    path = os.path.join(out_dir, "events.jsonl")
    if not os.path.exists(path):
        return []
    rows = []
    with open(path) as lines:
        for line in lines:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                pass  # a line cut by a kill
    return rows


def driver_line(log, marker):
    """The driver's `MARKER {json}` line (Ray prefixes worker lines, never the driver's)."""
    if not os.path.exists(log):
        return None
    with open(log, errors="replace") as lines:
        for line in lines:
            if line.startswith(marker + " "):
                return json.loads(line[len(marker) + 1:])
    return None


# What a failed run says: the last line that names an error (tracebacks end with the exception).
ERROR = re.compile(r"(Error|Exception|error:|failed|Killed|Traceback)")


# trainrt's own line naming the cause ("[trainrt 0] error: python: Error: ..."), preferred.
TRAINRT_CAUSE = re.compile(r"^\[trainrt[^\]]*\] error: (?!failure: giving up|the Python training function raised)")


def error_line(*logs):
    """The cause of a failed run: trainrt's first `[trainrt N] error:` line naming it (also in the
    failed trials' outputs, LOG.files/), else the last line that names an error."""
    found = cause = None
    paths = []
    for log in logs:
        if log:
            paths.append(log)
            files = log[:-len(".log")] + ".files" if log.endswith(".log") else None
            for folder, _, names in os.walk(files) if files and os.path.isdir(files) else []:
                paths += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".out")]
    for path in paths:
        if not os.path.exists(path):
            continue
        with open(path, errors="replace") as lines:
            for line in lines:
                line = line.strip()
                if cause is None and TRAINRT_CAUSE.search(line):
                    cause = line
                if ERROR.search(line) and "State API" not in line and "PreemptionWatcher" not in line:
                    found = line
    found = cause or found
    return found[:400] if found else None


def main(argv):
    part, side, variant, rep, t0, t_end, rc, out_dir, log = argv[1:10]
    log2 = argv[10] if len(argv) > 10 else None
    t0, t_end, rc = float(t0), float(t_end), int(rc)
    rows = events(out_dir)
    record = {"type": "run", "part": part, "side": side, "variant": variant, "rep": int(rep), "rc": rc,
              "wall_s": round(t_end - t0, 3), "load1": os.getloadavg()[0]}
    value, detail = None, {}
    try:
        if part == "launch":
            reports = [r for r in rows if r["event"] == "report"]
            start = [r for r in rows if r["event"] == "func_start"]
            if reports:
                value = reports[0]["t"] - t0
                detail = {"func_start_s": start[0]["t"] - t0 if start else None,
                          "threads": start[0].get("threads") if start else None}
        elif part == "epoch":
            epochs = [r for r in rows if r["event"] == "epoch"]
            if epochs:
                value = statistics.median(r["epoch_s"] for r in epochs)
                start = [r for r in rows if r["event"] == "func_start"]
                detail = {"epochs_s": [round(r["epoch_s"], 3) for r in epochs],
                          "train_s": [round(r["train_s"], 3) for r in epochs],
                          "accuracy": epochs[-1]["accuracy"],
                          "threads": start[0].get("threads") if start else None,
                          "batches": start[0].get("batches") if start else None}
        elif part == "checkpoint":
            reports = [r for r in rows if r["event"] == "checkpoint_report"]
            if reports:
                value = statistics.median(r["report_s"] for r in reports)
                detail = {"reports_s": [round(r["report_s"], 4) for r in reports], "bytes": reports[0]["bytes"]}
        elif part == "recovery":
            kills = [r for r in rows if r["event"] == "kill"]
            after = [r for r in rows if r["event"] == "report" and r.get("restored")]
            restarts = [r for r in rows if r["event"] == "func_start" and r.get("restored")]
            if kills and after:
                value = after[0]["t"] - kills[0]["t"]
                detail = {"kill_step": kills[0]["step"], "resumed_at_step": after[0]["step"],
                          "func_start_after_kill_s": restarts[0]["t"] - kills[0]["t"] if restarts else None,
                          "last_report_before_kill": max((r["step"] for r in rows if r["event"] == "report"
                                                          and not r.get("restored")), default=None)}
            elif kills:
                detail = {"kill_step": kills[0]["step"], "no_report_after_kill": True}
        elif part == "sweep":
            line = driver_line(log2 or log, "RAY_TUNE_BENCH")
            if line:
                value = line["fit_s"]
                detail = {"num_errors": line["num_errors"], "epochs_total": line["epochs_total"],
                          "trials": len(line["trials"]), "best_accuracy": line["best_accuracy"],
                          "main_to_fit_s": round(line["t_fit"] - t0, 3)}
        fit = driver_line(log2 or log, "RAY_BENCH")
        if fit:
            detail["fit_s"] = round(fit["fit_s"], 3)
    except (KeyError, IndexError, TypeError, ValueError) as error:
        detail["collect_error"] = repr(error)
    ok = value is not None and (rc == 0 or part == "recovery")
    if part == "sweep" and detail.get("num_errors"):
        ok = False
    record.update(ok=ok, value_s=round(value, 4) if value is not None else None, detail=detail)
    if not ok or rc != 0:
        record["error"] = error_line(log, log2)
    print(json.dumps(record))


if __name__ == "__main__":
    main(sys.argv)
