"""What the interpreter costs a Python-bound loop (pure Python: no numpy, no torch), in three
ways of running it (bench/run.sh, part python):
  python3      Debian's /usr/bin/python3, libpython linked into the executable
  trainrt.run  the same python3, the loop run by trainrt.run() (a Ray user's `python3 train.py`)
  embedded     trainrt's `python:` workload: trainrt embeds the shared libpython3.*.so
One JSON line each: the median and the fastest of `reps` timed loops. A GPU training loop whose
steps are short is Python-bound the same way (BENCHMARKS.md, GPU: Python training functions).

    python3 bench/python/interpreter_loop.py [REPS]
    python3 bench/python/interpreter_loop.py --trainrt-run [REPS] [trainrt arguments...]
    trainrt --run.workload=python:bench/python/interpreter_loop.py:embedded --train.reps=REPS
"""
import json
import statistics
import sys
import time

ITERATIONS = 2_000_000


def loop_seconds():
    start = time.perf_counter()
    total = 0
    for i in range(ITERATIONS):
        total += i * 2 % 7
    return time.perf_counter() - start


def measure(who, reps):
    times = [loop_seconds() for _ in range(reps)]
    print(json.dumps({"bench": "interpreter", "who": who, "median_s": statistics.median(times),
                      "min_s": min(times), "reps": reps}), flush=True)


def embedded(config):
    measure("embedded", int(config.get("reps", 7)))


def in_trainrt_run(config):
    measure("trainrt.run", int(config.get("reps", 7)))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--trainrt-run"]:
        import trainrt
        sys.exit(trainrt.run(in_trainrt_run, argv=[sys.argv[0]] + sys.argv[2:]))
    measure("python3", int(sys.argv[1]) if len(sys.argv) > 1 else 7)
