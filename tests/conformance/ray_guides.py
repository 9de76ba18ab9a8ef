"""Ray Train's framework guides under Ray and under trainrt (issue 61; docs/reference/ray-conformance.md).

tests/python/<guide>_guide.py are the scripts of Ray Train's guides for Lightning, Transformers,
Accelerate, DeepSpeed and FSDP2 (written here after each guide, small model, local data), with
Ray's names. Each prints one summary line, `<NAME>_GUIDE {json}`: its reported epochs and losses,
and what else the guide's run shows (learning rates, world size, checkpoint files, accuracy).

    python3 ray_guides.py ray --python RAY_VENV_PYTHON --data IDX_DIR --out tests/conformance/ray_guides.json
        # every guide as written, under Ray (make conformance): the summary lines stored
    python3 ray_guides.py ray ... --only GUIDE
        # one guide rerun under Ray, the others' stored runs kept
    python3 ray_guides.py compare --reference tests/conformance/ray_guides.json GUIDE LINE
        # one trainrt run's summary line (the framework test's, after the port) against Ray's

The comparison: the same keys; equal epochs, world sizes, counts and checkpoint file names; every
float within RELATIVE_TOLERANCE of Ray's (where the run lies, NOT_COMPARED, aside). Both sides run the script with the same environment
(`environment` below): the data, a fresh storage directory, nothing else.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

GUIDES = ("lightning", "transformers", "accelerate", "deepspeed", "fsdp2", "tensorflow", "raydata", "raydata_transformers",
          "median", "repeater", "callback_checkpoint", "hyperopt_search")
# The two ranks' gradients are averaged alike under Ray (gloo) and trainrt (its MPI backend): a sum
# of two values does not depend on their order, so a difference beyond rounding is a real one.
RELATIVE_TOLERANCE = 1e-5
TIMEOUT_S = 900
# Keys that name where a run lies on this machine, not what it reported.
NOT_COMPARED = {"path"}
# Keys whose values differ from Ray's for a reason stated here (docs/reference/ray-conformance.md):
# shown by the comparison, not failing it. Every other key must agree: the guides' scripts seed
# before building their models and ask for CPU workers (use_cpu / cpu=True).
KNOWN = {"raydata": ({"first_batch_y"}, "an unseeded random_shuffle: Ray's order is random at every run, "
                     "trainrt's comes from run.seed and the epoch"),
         "raydata_transformers": ({"eval_loss"}, "Ray hands a split dataset's rows to its workers as they "
                                  "ask, trainrt in DistributedSampler's pattern: each rank trains on other rows")}


def environment(guide, data, work):
    """The variables a guide script reads (its prefix: LIGHTNING_DATA, ..._STORAGE, ..._NAME)."""
    prefix = guide.upper()
    env = {f"{prefix}_DATA": data, f"{prefix}_STORAGE": os.path.join(work, "runs"), f"{prefix}_NAME": "guide"}
    if guide == "transformers":
        env["TRANSFORMERS_OUT"] = os.path.join(work, "out")
    return env


def summary_line(guide, output):
    marker = guide.upper() + "_GUIDE "
    lines = [line[len(marker):] for line in output.splitlines() if line.startswith(marker)]
    return json.loads(lines[-1]) if lines else None


def run_under_ray(args):
    here = os.path.dirname(os.path.abspath(__file__))
    scripts = os.path.join(os.path.dirname(here), "python")
    version = subprocess.run([args.python, "-c", "import ray; print(ray.__version__)"], capture_output=True,
                             text=True, check=True).stdout.strip()
    stored = {"ray_version": version, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "guides": {}}
    if args.only:  # one guide rerun: the others' stored runs are kept, under the same Ray only
        with open(args.out) as file:
            kept = json.load(file)
        if kept["ray_version"] != version:
            sys.exit(f"ray_guides: {args.out} holds Ray {kept['ray_version']}'s runs, this is Ray {version}: "
                     "rerun every guide (without --only)")
        stored["guides"] = kept["guides"]
    for guide in [args.only] if args.only else GUIDES:
        work = tempfile.mkdtemp(prefix=f"ray-guide-{guide}-")
        env = dict(os.environ, **environment(guide, os.path.abspath(args.data), work), HOME=work,
                   RAY_ADDRESS="local", PYTHONPATH=scripts)
        started = time.monotonic()
        done = subprocess.run([args.python, os.path.join(scripts, f"{guide}_guide.py")], cwd=work, env=env,
                              capture_output=True, text=True, timeout=TIMEOUT_S)
        line = summary_line(guide, done.stdout)
        if done.returncode != 0 or line is None:
            sys.exit(f"ray_guides: {guide}_guide.py under Ray exits {done.returncode} without its summary line:\n"
                     + (done.stdout + done.stderr)[-3000:])
        stored["guides"][guide] = {"seconds": round(time.monotonic() - started, 1), "summary": line}
        print(f"{guide}: {json.dumps(line)[:200]}", flush=True)
    with open(args.out, "w") as file:
        json.dump(stored, file, indent=1)
        file.write("\n")


def differences(ray, ours, path=""):
    """What differs between Ray's summary and trainrt's, as lines; empty when they agree."""
    if isinstance(ray, dict) and isinstance(ours, dict):
        ray, ours = ({k: v for k, v in d.items() if k not in NOT_COMPARED} for d in (ray, ours))
        if ray.keys() != ours.keys():
            return [f"{path or 'summary'}: keys {sorted(ours)} where Ray has {sorted(ray)}"]
        return [line for key in ray for line in differences(ray[key], ours[key], f"{path}.{key}")]
    if isinstance(ray, list) and isinstance(ours, list):
        if len(ray) != len(ours):
            return [f"{path}: {len(ours)} entries where Ray has {len(ray)}"]
        return [line for i, (a, b) in enumerate(zip(ray, ours)) for line in differences(a, b, f"{path}[{i}]")]
    if isinstance(ray, float) or isinstance(ours, float):
        if isinstance(ours, (int, float)) and math.isclose(ray, ours, rel_tol=RELATIVE_TOLERANCE):
            return []
        return [f"{path}: {ours!r} where Ray has {ray!r} (tolerance {RELATIVE_TOLERANCE:g} relative)"]
    return [] if ray == ours else [f"{path}: {ours!r} where Ray has {ray!r}"]


def largest_relative_gap(ray, ours):
    if isinstance(ray, dict):
        return max((largest_relative_gap(ray[k], ours[k]) for k in ray if k not in NOT_COMPARED), default=0.0)
    if isinstance(ray, list):
        return max((largest_relative_gap(a, b) for a, b in zip(ray, ours)), default=0.0)
    if isinstance(ray, float) and ray != 0:
        return abs(ours - ray) / abs(ray)
    return 0.0


def compare(args):
    with open(args.reference) as file:
        stored = json.load(file)
    if args.guide not in stored["guides"]:
        sys.exit(f"ray_guides: {args.reference} has no Ray run of {args.guide}: run `make conformance`")
    ray = stored["guides"][args.guide]["summary"]
    ours = json.loads(args.line)
    known, why = KNOWN.get(args.guide, (set(), ""))
    found = differences({k: v for k, v in ray.items() if k not in known}, {k: v for k, v in ours.items() if k not in known})
    for line in found:
        print(f"differs from Ray {stored['ray_version']}: {line}")
    if found:
        sys.exit(1)
    shown = differences({k: v for k, v in ray.items() if k in known}, {k: v for k, v in ours.items() if k in known})
    if shown:
        print(f"as under Ray {stored['ray_version']} but for {', '.join(sorted(known))} ({why}): "
              + "; ".join(shown)[:400])
        return
    print(f"as under Ray {stored['ray_version']}: every key, count and name equal, floats within "
          f"{largest_relative_gap(ray, ours):.1e} relative (tolerance {RELATIVE_TOLERANCE:g})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="side", required=True)
    ray = sub.add_parser("ray")
    ray.add_argument("--python", required=True)
    ray.add_argument("--data", required=True)
    ray.add_argument("--out", required=True)
    ray.add_argument("--only", choices=GUIDES, help="rerun this guide only, keeping the others' stored runs")
    check = sub.add_parser("compare")
    check.add_argument("--reference", required=True)
    check.add_argument("guide", choices=GUIDES)
    check.add_argument("line")
    args = parser.parse_args()
    run_under_ray(args) if args.side == "ray" else compare(args)


if __name__ == "__main__":
    main()
