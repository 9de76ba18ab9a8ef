"""The one report library of the benchmarks: what every topic's renderer (bench/<topic>/report.py)
uses to read results and write its part of BENCHMARKS.md, and how the renderer (render.py) finds
each topic's sections and targets.

Reading: records(path) (a JSON-lines file as dicts), jsonl(path) (the same as a pandas DataFrame),
read_meta(path) (a results directory's machine.txt), Results (a results directory of bench/run.sh
as the topics read it). Numbers: median(), fmt(), times(), human_bytes(), pair_ratios(),
couples_ratio() (checkpoint-bench rows), last_epoch() (a training run's frame). Verdicts:
verdict(), target_row(), Target (a goal declared in a topic's targets.py). Topics: topic(name, module) loads
bench/<name>/<module>.py; a topic's part(results) returns a Part (its lines, its Targets rows).

Standard library only at import; jsonl() imports pandas when called."""
import importlib.util
import json
import math
import operator
import statistics
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent  # bench/


# --- reading ---

def records(path):
    """The JSON objects of a JSON-lines file, one per line that starts with '{' (other lines, a
    command's stray output, are skipped); [] when the file does not exist."""
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]


def jsonl(path):
    """records(path) as a pandas DataFrame (empty when there are none)."""
    import pandas as pd
    return pd.DataFrame(records(path))


def read_meta(path):
    """A results directory's machine.txt (or any KEY=VALUE file) as a dict; other lines skipped."""
    return dict(line.split("=", 1) for line in Path(path).read_text().splitlines() if "=" in line)


# --- numbers ---

def missing(x):
    """None or NaN: a figure that was not measured."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def median(values):
    """The median of the values that are not missing, or None when none is."""
    values = [v for v in values if not missing(v)]
    return statistics.median(values) if values else None


def fmt(x, spec=".3f"):
    """x formatted with spec, '–' when missing."""
    return "–" if missing(x) else format(x, spec)


def times(x, spec=".2f"):
    """A ratio as '0.95×', '–' when missing."""
    return "–" if missing(x) else f"{x:{spec}}×"


def human_bytes(n):
    """A power-of-two size as '4 MiB', '512 KiB', '1 GiB' or '12 B' (whole units, rounded down)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n // scale} {unit}"
    return f"{n} B"


def pair_ratios(numerators, denominators):
    """a / b for each pair of two alternated series (the i-th of one with the i-th of the other),
    up to the shorter one's length: the ratio of runs that met the same machine state."""
    return [a / b for a, b in zip(numerators, denominators)]


def couples_ratio(frame, n, what, layout, base="plain"):
    """`base` time / `layout` time on `n` ranks for `what` (write, read, ...) in checkpoint-bench
    rows (ranks, what, layout, seconds, rep), by couples of consecutive repetitions (2k: base
    first, 2k+1: base last; whichever runs second pays for the first one's writeback on a disk, so
    a couple's summed times cancel the order): the median over complete couples; with no complete
    couple, the median of the repetitions' ratios; rows without repetitions: the ratio of the
    medians. None where either side is missing."""
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


def last_epoch(frame, key):
    """`key` of a training run's last epoch (its rows ordered by `epoch` where it has one), or None."""
    frame = frame.sort_values("epoch", kind="stable") if "epoch" in frame else frame
    return frame[key].iloc[-1] if key in frame else None


# --- verdicts ---

def verdict(ok):
    """'PASS' for True, 'MISS' for False, 'not run' for None."""
    return "not run" if ok is None else ("PASS" if ok else "MISS")


def target_row(text, measured, ok):
    """A Targets table row from a (target, measured, ok) triple, as data/ and tune/ list them;
    '–' where the row is reported with no goal (ok None)."""
    return f"| {text} | {measured} | {verdict(ok) if ok is not None else '–'} |"


class Target:
    """A goal of the Targets table, declared in bench/<topic>/targets.py.

    `text` is the row's first cell; '{goal}' in it is replaced by `goal` as written (so '0.90'
    shows as 0.90). `op` ('<=', '>=', '<') compares a measured value with float(goal)."""

    OPS = {"<=": operator.le, ">=": operator.ge, "<": operator.lt}

    def __init__(self, text, op, goal):
        self.text = text.replace("{goal}", goal)
        self.op, self.goal, self.shown = op, float(goal), goal

    def met(self, value):
        """Whether `value` meets the goal; None when it is missing."""
        return None if missing(value) else bool(self.OPS[self.op](value, self.goal))

    def met_all(self, values):
        """Whether every value meets the goal: None without values."""
        values = list(values)
        return all(self.met(v) for v in values) if values else None

    def row(self, measured, ok):
        """The Targets table row: `measured` (text) and the verdict of `ok`."""
        return f"| {self.text} | {measured} | {verdict(ok)} |"


# --- topics ---

def topic(name, module="report"):
    """bench/<name>/<module>.py as a module (imported once, under a name of its own, since every
    topic has a report.py and a targets.py)."""
    key = f"bench_{name}_{module}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, BENCH / name / f"{module}.py")
        sys.modules[key] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[key])
    return sys.modules[key]


def targets(name):
    """The Target objects bench/<name>/targets.py declares, by their names there."""
    return topic(name, "targets")


# --- a results directory and what each topic makes of it ---

class Part:
    """What a topic adds to BENCHMARKS.md: its section's lines, its rows of the Targets table, and
    `values` (figures other topics read, e.g. PyTorch's epoch medians)."""

    def __init__(self, lines=(), targets=(), **values):
        self.lines, self.targets, self.values = list(lines), list(targets), values


class Results:
    """A results directory of bench/run.sh: its files, machine.txt (`meta`) and the parts shown
    as not run (`skipped`: none when BENCH_REUSE supplied the skipped parts' results)."""

    RANKS = (1, 2)

    def __init__(self, out):
        self.out = Path(out)
        self.meta = read_meta(self.out / "machine.txt")
        self.listed_skipped = set(self.meta.get("skipped", "").split())
        self.reused = bool(self.listed_skipped and self.meta.get("reused_from"))
        self.skipped = set() if self.reused else self.listed_skipped
        self._parts = {}

    def file(self, name):
        return self.out / name

    def records(self, name):
        return records(self.out / name)

    def jsonl(self, name):
        return jsonl(self.out / name)

    def note(self, part):
        """The note bench/run.sh wrote for a part (where its figures come from), or ''."""
        path = self.out / f"{part}_note.txt"
        return path.read_text().strip() if path.exists() else ""

    def part(self, name, module="report"):
        """bench/<name>/<module>.py's part(self), computed once."""
        if (name, module) not in self._parts:
            self._parts[name, module] = topic(name, module).part(self)
        return self._parts[name, module]


def cluster_section(results, result, part, section, title, not_run):
    """A part run on the local cluster only on request: `section(path, note)`'s lines from `result`
    in the results directory (measured, or stored there by bench/run.sh with the part's note), or a
    "not run" section (`not_run`: what runs it) when there is none."""
    path = results.file(result)
    if not path.exists():
        return Part([f"## {title}", "", f"not run: {not_run}; no stored results.", ""])
    return Part("\n".join(section(path, results.note(part))).strip().splitlines() + [""])
