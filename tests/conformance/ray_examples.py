"""Ray's own examples as trainrt's conformance suite (issue 60; docs/reference/ray-conformance.md).

Each example is taken at run time from the Ray package installed for the benchmarks (nothing of
Ray's is copied into this repository), in a fresh directory that is also its HOME, and run on the
CPU with its own smoke-test flag where it has one:

    python3 ray_examples.py ray --out tests/conformance/ray_reference.json
        # every example as Ray runs it (make conformance-ray; the Ray venv's interpreter runs them);
        # --only EXAMPLE... reruns those, keeping the others' stored runs
    python3 ray_examples.py trainrt --reference tests/conformance/ray_reference.json [--table FILE]
        # every example after the port (PORT below), under trainrt, compared with the stored Ray runs

What a run reports is summarised the same way on both sides: its exit status, and per trial (a
Tune trial, or a Trainer's run) the number of reported iterations, the metric names it reported
and its checkpoints. The trainrt half fails (exit 1) when an example that ran under Ray and is
expected to conform (CONFORMS) does not run or differs; the table lists every example.
"""
import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# The documented port (docs/guides/coming-from-ray.md): ray.train's names are trainrt's, ray.tune's
# trainrt.tune's, and any other `ray` word (`import ray`, `from ray import tune`, `ray.init`) trainrt.
PORT = ["sed", "-i", "-e", r"s/\bray\.train\b/trainrt/g", "-e", r"s/\bray\.tune\b/trainrt.tune/g",
        "-e", r"s/\bray\b/trainrt/g"]

# The example folders of Ray's package that hold Train and Tune examples.
FOLDERS = ["train/examples/pytorch", "train/examples/tf", "train/examples/horovod",
           "train/examples/pytorch_geometric", "tune/examples"]

# Examples that are not run on either side, with the reason (a run under Ray would only wait for
# what this machine does not have, until the timeout).
NOT_RUN = {
    "train/examples/pytorch/torch_fashion_mnist_example.py": "its main asks for 4 GPU workers (use_gpu=True)",
    "train/examples/pytorch/torch_quick_start.py": "4 workers of 1 CPU each: on this 2-CPU machine Ray waits for CPUs "
                                                   "it does not have until its worker group times out",
    "tune/examples/pbt_ppo_example.py": "RLlib (reinforcement learning), not part of Train/Tune's stack",
    "tune/examples/pb2_ppo_example.py": "RLlib (reinforcement learning), not part of Train/Tune's stack",
    "tune/examples/utils.py": "a helper module, not an example",
}

# Examples that run under Ray here and must run under trainrt after the port with the same
# summary (the fields named): the suite fails when one of them does not.
CONFORMS = {
    "tune/examples/tune_basic_example.py": ["trials", "iterations", "metrics"],
    "tune/examples/custom_func_checkpointing.py": ["trials", "iterations", "metrics", "checkpoints"],
    "tune/examples/async_hyperband_example.py": ["trials", "iterations", "metrics"],
    "train/examples/pytorch/torch_linear_example.py": ["trials", "iterations", "metrics"],
    "tune/examples/logging_example.py": ["trials", "iterations", "metrics", "checkpoints"],
    # one trial of one epoch (ASHA's max_t=1): nothing left to chance
    "tune/examples/cifar10_pytorch.py": ["trials", "iterations", "metrics", "checkpoints"],
    # ASHA's asynchronous decisions make the iterations vary from run to run on both sides
    "tune/examples/optuna_example.py": ["trials", "metrics"],
    "tune/examples/optuna_define_by_run_example.py": ["trials", "metrics"],
    # 10 trials of 100 reports each, two objectives, no scheduler
    "tune/examples/optuna_multiobjective_example.py": ["trials", "iterations", "metrics"],
    "tune/examples/xgboost_example.py": ["trials", "metrics"],
    # BayesOpt's and Nevergrad's picks in a ConcurrencyLimiter, under ASHA: which trials stop at a rung varies
    "tune/examples/bayesopt_example.py": ["trials", "metrics"],
    "tune/examples/nevergrad_example.py": ["trials", "metrics"],
    # HyperOpt's TPE over a conditional space (hp.choice between dicts; each trial's config nested,
    # as Ray's), in a ConcurrencyLimiter, under ASHA: which trials stop at a rung varies
    "tune/examples/hyperopt_conditional_search_space_example.py": ["trials", "metrics"],
    # BOHB's draws (unseeded under Ray) under HyperBandForBOHB: which trials a bracket keeps, and so
    # how far each trains and how many checkpoints its pauses leave, varies from run to run
    "tune/examples/bohb_example.py": ["trials", "metrics"],
    # a driver callback's SHOULD_CHECKPOINT on a class Trainable (its smoke test: one report, one
    # checkpoint; tests/python/callback_checkpoint_guide.py checks the checkpoints' iterations)
    "tune/examples/custom_checkpointing_with_callback.py": ["trials", "iterations", "metrics", "checkpoints"],
    # ASHA over unseeded learning rates drawn from 1e-8..1e-1: which trials stop at a rung (and so
    # reach lgb.train's end and its checkpoint) varies from run to run on both sides
    "tune/examples/lightgbm_example.py": ["trials", "metrics"],
    # PBT by training_iteration: 8 trials of 10 reports each whatever PBT decides; which trials
    # exploit varies, and a Ray trial that exploited ends with one checkpoint in its own folder
    # (its report-10 checkpoint written as checkpoint_000000, where its report-5 one was), where
    # trainrt's holds the donor's copy and its own
    "tune/examples/pbt_function.py": ["trials", "iterations", "metrics"],
    # the same for the class API's: its smoke test's 10 steps never reach `done` (accuracy > 200)
    "tune/examples/pbt_example.py": ["trials", "iterations", "metrics"],
    # HyperBand with the smoke test's stop below every bracket's first milestone: 20 trials of 1
    # (class Trainable) and of 10 reports (function, a checkpoint every 3)
    "tune/examples/hyperband_example.py": ["trials", "iterations", "metrics", "checkpoints"],
    "tune/examples/hyperband_function_example.py": ["trials", "iterations", "metrics", "checkpoints"],
    # PB2 over pbt_function (imported beside it, ported): 8 trials, 30 reports each; which trials
    # copy which varies from run to run on both sides, and a Ray trial that copied a donor ahead of
    # it reports past the stop (35, 40: Ray's PB2 hands it the donor's iteration count)
    "tune/examples/pb2_example.py": ["trials", "metrics"],
    # Ray Data: read_csv (LOCAL_FILES), map_batches over pandas, repartition, train_test_split,
    # datasets= with DataConfig, get_dataset_shard(...).iter_torch_batches / to_tf
    "train/examples/pytorch/torch_regression_example.py": ["trials", "iterations", "metrics", "checkpoints"],
    "train/examples/tf/tensorflow_regression_example.py": ["trials", "iterations", "metrics", "checkpoints"],
}

# Files the examples read from Ray's public buckets, which nothing here reaches: made locally (the
# same on both sides) and the example's URI replaced by the local path before it runs, as a user
# without network would copy the file to the cluster. regression.csv: 1000 rows of x000..x099
# (normal) and y, a fixed linear function of them plus noise, seeded.
LOCAL_FILES = {"s3://anonymous@air-example-data/regression.csv": "regression.csv"}


def make_regression_csv(path):
    import numpy as np
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1000, 100))
    y = x @ rng.normal(size=100) / 10 + rng.normal(scale=0.1, size=1000)
    header = ",".join([f"x{i:03d}" for i in range(100)] + ["y"])
    np.savetxt(path, np.column_stack([x, y]), delimiter=",", header=header, comments="", fmt="%.6f")


def localise(script, home):
    """The example's URIs of LOCAL_FILES replaced by local copies in its directory."""
    with open(script) as file:
        text = file.read()
    for uri, name in LOCAL_FILES.items():
        if uri in text:
            make_regression_csv(os.path.join(home, name))
            text = text.replace(uri, os.path.join(home, name))
    with open(script, "w") as file:
        file.write(text)


# Names every Ray result row carries besides the function's own metrics.
RAY_AUTO = {"timestamp", "checkpoint_dir_name", "done", "training_iteration", "trial_id", "date", "time_this_iter_s",
            "time_total_s", "pid", "hostname", "node_ip", "config", "time_since_restore", "iterations_since_restore",
            "experiment_tag", "should_checkpoint", "episodes_total", "timesteps_total"}
TIMEOUT_S = 240  # an example slower than this on 2 cores is listed as such, on either side
FASHION_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                 "t10k-labels-idx1-ubyte")


def ray_package(ray_python):
    """The installed Ray package's folder, as Ray's interpreter finds it."""
    out = subprocess.run([ray_python, "-c", "import os, ray; print(os.path.dirname(ray.__file__))"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def examples(package):
    """Every example file (relative to the package), in a stable order."""
    found = []
    for folder in FOLDERS:
        path = os.path.join(package, folder)
        if os.path.isdir(path):
            found += [f"{folder}/{name}" for name in sorted(os.listdir(path))
                      if name.endswith(".py") and name != "__init__.py"]
    return found


def fashion_mnist(idx_dir, roots):
    """torchvision's FashionMNIST files (ROOT/FashionMNIST/raw, uncompressed) under each root, from
    the project's 6k-image IDX set: the examples' download=True then finds them and never downloads."""
    for root in roots:
        raw = os.path.join(os.path.expanduser(root), "FashionMNIST", "raw")
        os.makedirs(raw, exist_ok=True)
        for name in FASHION_FILES:
            target = os.path.join(raw, name)
            if not os.path.exists(target):
                with gzip.open(os.path.join(idx_dir, name + ".gz"), "rb") as src, open(target + ".tmp", "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.replace(target + ".tmp", target)


# An example that imports another of Ray's examples (pb2_example.py: `from ray.tune.examples.pbt_function
# import pbt_function`) gets that file beside it, ported alike, and imports it by its own name: the
# step trainrt.tune.examples' ImportError describes. Ray's examples are not part of trainrt.
IMPORTED_EXAMPLE = re.compile(r"\btrainrt\.tune\.examples\.(\w+)\b")


def port_imported_examples(package, script, home):
    with open(script) as file:
        text = file.read()
    for name in sorted(set(IMPORTED_EXAMPLE.findall(text))):
        copy = os.path.join(home, f"{name}.py")
        shutil.copy(os.path.join(package, "tune", "examples", f"{name}.py"), copy)
        subprocess.run(PORT + [copy], check=True)
    with open(script, "w") as file:
        file.write(IMPORTED_EXAMPLE.sub(r"\1", text))


def arguments(source_text):
    return ["--smoke-test"] if "--smoke-test" in source_text else []


def run_example(package, example, python, side, env, keep):
    """Runs one example in a fresh HOME/working directory; returns (summary, directory)."""
    home = tempfile.mkdtemp(prefix=f"conformance-{side}-", dir=keep)
    script = os.path.join(home, os.path.basename(example))
    shutil.copy(os.path.join(package, example), script)
    localise(script, home)
    if side == "trainrt":
        subprocess.run(PORT + [script], check=True)
        port_imported_examples(package, script, home)
    with open(script) as file:
        args = arguments(file.read())
    fashion_mnist(env["CONFORMANCE_FASHION_IDX"], [os.path.join(home, "data"), "/tmp/data"])
    started = time.monotonic()
    run_env = dict(env, HOME=home, PYTHONDONTWRITEBYTECODE="1")
    with open(os.path.join(home, "output.txt"), "w") as output:
        try:
            code = subprocess.run([python, script] + args, cwd=home, env=run_env, stdout=output,
                                  stderr=subprocess.STDOUT, timeout=TIMEOUT_S).returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
    summary = {"exit": code, "seconds": round(time.monotonic() - started, 1), "args": args,
               "trials": summarise(home, side)}
    if code != 0:
        summary["error"] = last_error(os.path.join(home, "output.txt"))
    errored = trial_errors(home) if side == "ray" else []
    if errored:
        summary["trial_errors"] = errored
    return summary, home


def trial_errors(home):
    """What each errored Ray trial raised (its error.txt's last line): Tune's fit() returns, and the
    script exits 0, when every trial failed, so the exit status alone does not say the example ran."""
    found = []
    for folder, _, files in os.walk(home):
        if "error.txt" in files:
            with open(os.path.join(folder, "error.txt"), errors="replace") as file:
                lines = [line.strip() for line in file if line.strip()]
            found.append(cleaned(lines[-1] if lines else "error.txt is empty"))
    return sorted(found)


def last_error(path):
    """The output's line that says what failed, for the table: trainrt's own one-line error where
    there is one, else the last line naming an error (else the last line); without terminal
    colours and this run's own paths."""
    with open(path, errors="replace") as file:
        lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip() for line in file]
    lines = [line for line in lines if line]
    said = [line for line in lines if line.startswith("[trainrt") and "error:" in line]
    named = [line for line in lines if "Error" in line or "error:" in line or "Exception" in line]
    return cleaned((said or named or lines or [""])[-1])


def cleaned(line):
    """`line` without terminal colours and this run's own paths, for the table."""
    line = re.sub(r"\x1b\[[0-9;]*m|\[[0-9;]+m", "", line).strip()
    line = re.sub(r"\s*\(/[^)]*\)", "", line)  # (/tmp/conformance-.../x.py) and the like
    return re.sub(r"/tmp/conformance-[^\s;:)]*", "RUN_DIR", line)[:300]


def rows(path):
    with open(path) as file:
        return [json.loads(line) for line in file if line.strip()]


def summarise(home, side):
    """Per trial (sorted): iterations reported, metric names, checkpoints. A Ray Tune trial is a
    folder with result.json; a trainrt trial or run a folder with result.jsonl."""
    trials = []
    marker = "result.json" if side == "ray" else "result.jsonl"
    for folder, subfolders, files in os.walk(home):
        if marker not in files:
            continue
        reported = [row for row in rows(os.path.join(folder, marker)) if row]
        names = set()
        for row in reported:
            names |= {key for key in row if key not in RAY_AUTO and not key.startswith("_")
                      and key not in TRAINRT_AUTO}
        checkpoints = checkpoint_count(folder, side)
        trials.append({"iterations": len(reported), "metrics": sorted(names), "checkpoints": checkpoints})
        subfolders[:] = []
    trials += train_v2_runs(home) if side == "ray" and not trials else []
    return sorted(trials, key=lambda t: (t["iterations"], t["checkpoints"], t["metrics"]))


# Names trainrt's rows carry besides the function's metrics and its own "_" names (docs/concepts.md).
TRAINRT_AUTO = {"world_size", "restart_count"}


def checkpoint_count(folder, side):
    where = folder if side == "ray" else os.path.join(folder, "checkpoints")
    if not os.path.isdir(where):
        return 0
    return sum(1 for name in os.listdir(where) if name.startswith("checkpoint_"))


def train_v2_runs(home):
    """Ray Train V2 keeps no result rows on disk: a run is its folder of checkpoint_* folders, and
    its iterations are what the driver printed (not compared)."""
    runs = []
    for folder, subfolders, _ in os.walk(home):
        count = sum(1 for name in subfolders if name.startswith("checkpoint_"))
        if count:
            runs.append({"iterations": None, "metrics": [], "checkpoints": count})
            subfolders[:] = []
    return runs


def differences(reference, ours, fields):
    """What differs between Ray's summary and trainrt's, in the fields compared."""
    found = []
    if ours["exit"] != 0:
        return [f"exit {ours['exit']}: {ours.get('error', '')}"]
    if "trials" in fields and len(reference["trials"]) != len(ours["trials"]):
        found.append(f"trials {len(ours['trials'])} (Ray {len(reference['trials'])})")
        return found
    pairs = list(zip(reference["trials"], ours["trials"]))
    if "iterations" in fields:
        want = [t["iterations"] for t in reference["trials"] if t["iterations"] is not None]
        got = [t["iterations"] for t in ours["trials"]][:len(want)] if want else []
        if want and sorted(want) != sorted(got):
            found.append(f"iterations {sorted(got)} (Ray {sorted(want)})")
    if "metrics" in fields:
        missing = sorted({m for r, _ in pairs for m in r["metrics"]} - {m for _, o in pairs for m in o["metrics"]})
        if missing:
            found.append(f"metrics missing: {', '.join(missing)}")
    if "checkpoints" in fields:
        want, got = sorted(t["checkpoints"] for t in reference["trials"]), sorted(t["checkpoints"] for t in ours["trials"])
        if want != got:
            found.append(f"checkpoints {got} (Ray {want})")
    return found


def environment(args):
    # MLflow 3 refuses its file store (mlflow_example.py's `/tmp/mlruns`) unless allowed; tf.keras is
    # Keras 2 (tf-keras), as Ray's TensorFlow examples need on today's TensorFlow: Keras 3's fit()
    # fails under MultiWorkerMirroredStrategy on 2 workers (docs/guides/tensorflow.md)
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", TQDM_DISABLE="1", MLFLOW_ALLOW_FILE_STORE="true",
               TF_USE_LEGACY_KERAS="1")
    env["CONFORMANCE_FASHION_IDX"] = os.path.abspath(args.fashion_idx)
    return env


def ray_half(args):
    package = ray_package(args.python)
    reference = {"ray_package": package, "examples": {}}
    version = subprocess.run([args.python, "-c", "import ray; print(ray.__version__)"], capture_output=True,
                             text=True, check=True).stdout.strip()
    if args.only:  # these examples rerun, the others' stored runs kept (under the same Ray only)
        with open(args.out) as file:
            reference = json.load(file)
        if reference["ray_version"] != version:
            sys.exit(f"ray_examples: {args.out} holds Ray {reference['ray_version']}'s runs, this is Ray {version}: "
                     "rerun every example (without --only)")
    reference["ray_version"] = version
    env = environment(args)
    keep = tempfile.mkdtemp(prefix="conformance-ray-")
    for example in args.only or examples(package):
        if example in NOT_RUN:
            reference["examples"][example] = {"not_run": NOT_RUN[example]}
            continue
        summary, _ = run_example(package, example, args.python, "ray", env, keep)
        print(f"ray: {example}: exit {summary['exit']} in {summary['seconds']} s, {len(summary['trials'])} trial(s)"
              + (f": {summary.get('error', '')}" if summary["exit"] != 0 else "")
              + (f"; errored trials: {summary['trial_errors'][0]}" if summary.get("trial_errors") else ""), flush=True)
        reference["examples"][example] = summary
    with open(args.out + ".tmp", "w") as file:
        json.dump(reference, file, indent=1, sort_keys=True)
        file.write("\n")
    os.replace(args.out + ".tmp", args.out)
    shutil.rmtree(keep, ignore_errors=True)


def trainrt_half(args):
    with open(args.reference) as file:
        reference = json.load(file)
    package = ray_package(args.ray_python)
    env = environment(args)
    keep = tempfile.mkdtemp(prefix="conformance-trainrt-")
    table, failed, ran_under_ray, runs = [], [], 0, 0
    chosen = args.only or [e for e in reference["examples"] if not args.conforming_only or e in CONFORMS]
    for example in chosen:
        ray_run = reference["examples"][example]
        if "not_run" in ray_run:
            table.append((example, "not run", "not run", ray_run["not_run"]))
            continue
        if ray_run["exit"] != 0 or ray_run.get("trial_errors"):
            said = ray_run.get("error") if ray_run["exit"] != 0 else f"a trial errors: {ray_run['trial_errors'][0]}"
            table.append((example, f"fails: {cleaned(said or '')}", "not compared",
                          "does not run under Ray on this machine"))
            continue
        ran_under_ray += 1
        ours, home = run_example(package, example, args.python, "trainrt", env, keep)
        found = differences(ray_run, ours, CONFORMS.get(example, ["trials", "iterations", "metrics", "checkpoints"]))
        print(f"trainrt: {example}: exit {ours['exit']} in {ours['seconds']} s"
              + (f"; differs: {'; '.join(found)} ({home})" if found else ", as Ray"), flush=True)
        runs += not found
        if found and example in CONFORMS:
            failed.append(example)
        table.append((example, "runs", "runs, as Ray" if not found else "differs", "; ".join(found)))
    if args.table:
        write_table(args.table, table, reference, runs, ran_under_ray)
    if args.summary:  # make bench shows it (BENCHMARKS.md)
        with open(args.summary, "w") as file:
            json.dump({"ray_version": reference["ray_version"], "examples": len(reference["examples"]),
                       "run_under_ray": ran_under_ray, "run_as_under_ray": runs,
                       "conforming": sorted(e for e, _, ours, _ in table if ours == "runs, as Ray"),
                       "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}, file, indent=1)
            file.write("\n")
    print(f"conformance: {runs} of {ran_under_ray} examples that run under Ray {reference['ray_version']} here run "
          f"under trainrt as under Ray" + (f"; expected to conform and did not: {', '.join(failed)}" if failed else ""))
    if not failed:
        shutil.rmtree(keep, ignore_errors=True)
    return 1 if failed else 0


TABLE_BEGIN, TABLE_END = "<!-- conformance-table:begin -->", "<!-- conformance-table:end -->"


def write_table(path, table, reference, runs, ran_under_ray):
    """The table between the page's markers (the rest of the page is written by hand)."""
    lines = [f"Ray {reference['ray_version']}'s examples, each run under Ray (stored: "
             f"`tests/conformance/ray_reference.json`) and under trainrt after the port; "
             f"**{runs} of {ran_under_ray}** that run under Ray on this CPU-only machine run under trainrt as under Ray.",
             "", "| example | under Ray | under trainrt | what differs, or why not run |", "|---|---|---|---|"]
    for example, ray, ours, why in table:
        cell = why.replace("|", "\\|")
        lines.append(f"| `{example}` | {ray.replace('|', '/')[:120]} | {ours} | {cell[:300]} |")
    with open(path) as file:
        page = file.read()
    head, rest = page.split(TABLE_BEGIN, 1)
    tail = rest.split(TABLE_END, 1)[1]
    with open(path + ".tmp", "w") as file:
        file.write(head + TABLE_BEGIN + "\n" + "\n".join(lines) + "\n" + TABLE_END + tail)
    os.replace(path + ".tmp", path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("side", choices=["ray", "trainrt"])
    parser.add_argument("--python", required=True, help="the interpreter that runs the examples")
    parser.add_argument("--ray-python", help="trainrt side: the Ray venv's interpreter (where Ray's examples are)")
    parser.add_argument("--fashion-idx", required=True, help="the project's FashionMNIST IDX folder")
    parser.add_argument("--out", help="ray side: the reference file to write")
    parser.add_argument("--reference", help="trainrt side: the stored Ray runs")
    parser.add_argument("--table", help="trainrt side: write the Markdown table here")
    parser.add_argument("--summary", help="trainrt side: write the counts here (JSON)")
    parser.add_argument("--only", nargs="*", help="these examples alone (ray side: the others' stored runs kept)")
    parser.add_argument("--conforming-only", action="store_true", help="trainrt side: the examples in CONFORMS alone")
    args = parser.parse_args()
    if args.side == "ray":
        ray_half(args)
        return 0
    return trainrt_half(args)


if __name__ == "__main__":
    sys.exit(main())
