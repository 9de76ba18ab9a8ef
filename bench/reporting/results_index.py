#!/usr/bin/env python3
"""The index of stored results, bench/results/index.json (bench/results/README.md).

    results_index.py origin PATH           prints "commit <hash>, <date>" for a stored file
    results_index.py record PATH...        each PATH (indexed) was just stored: its entry gets HEAD and today
    results_index.py add PATH WHAT         a new stored file, WHAT it holds; its entry gets HEAD and today
    results_index.py check                 every file under bench/results/ is indexed and every entry exists

PATH: relative to the repository root (bench/results/...) or to bench/results/. Standard library
only, so any python3 runs it."""
import datetime
import json
import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "results"
INDEX = RESULTS / "index.json"
NOT_RESULTS = {"README.md", "index.json"}  # the index itself and its description


def load():
    return json.loads(INDEX.read_text())


def key_of(path):
    """`path` as the index names it: relative to bench/results/."""
    resolved = Path(path).resolve()
    if resolved.is_relative_to(RESULTS):
        return resolved.relative_to(RESULTS).as_posix()
    return Path(path).as_posix()


def origin(path, index=None):
    """'commit <hash>, <date>' of the stored file at `path`; 'not indexed' when the index lacks it."""
    entry = (index or load())["files"].get(key_of(path))
    return f"commit {entry['commit']}, {entry['date']}" if entry else "not indexed"


def head_commit():
    return subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True,
                          check=True, cwd=RESULTS).stdout.strip()


def record(path, what=None):
    """Marks `path` as stored now, at HEAD (git describe), and rewrites index.json. `what`, what the
    file holds, is required for a file not yet indexed and replaces the old text otherwise."""
    index, key = load(), key_of(path)
    entry = index["files"].get(key)
    if entry is None and not what:
        raise SystemExit(f"results_index: {key} is not indexed: add it (results_index.py add PATH WHAT)")
    entry = dict(entry or {}, commit=head_commit(), date=datetime.date.today().isoformat())
    if what:
        entry["what"] = what
    index["files"][key] = entry
    index["files"] = dict(sorted(index["files"].items()))
    INDEX.write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n")


def problems(index=None):
    """What makes the index disagree with the files under bench/results/ (empty when it agrees)."""
    index = index or load()
    stored = {p.relative_to(RESULTS).as_posix() for p in RESULTS.rglob("*") if p.is_file()} - NOT_RESULTS
    listed = set(index["files"])
    found = [f"not indexed: bench/results/{p}" for p in sorted(stored - listed)]
    found += [f"indexed but missing: bench/results/{p}" for p in sorted(listed - stored)]
    found += [f"no topic for: bench/results/{p}" for p in sorted(listed) if p.split("/")[0] not in index["topics"]]
    return found


def main(argv):
    if argv[:1] == ["origin"] and len(argv) == 2:
        print(origin(argv[1]))
    elif argv[:1] == ["record"] and len(argv) >= 2:
        for path in argv[1:]:
            record(path)
    elif argv[:1] == ["add"] and len(argv) == 3:
        record(argv[1], argv[2])
    elif argv == ["check"]:
        found = problems()
        print("\n".join(found) or "bench/results/index.json lists every stored file")
        return 1 if found else 0
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
