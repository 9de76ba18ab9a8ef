"""BENCHMARKS.md's section on Ray's own examples under trainrt: the stored summary of
`make conformance` (tests/conformance/trainrt_summary.json), and the share's target."""
import json

from reporting import BENCH, Part, fmt, targets

GOALS = targets("ray")
SHOWN = "tests/conformance/trainrt_summary.json"  # as BENCHMARKS.md names it (from the repository root)
SUMMARY = BENCH.parent / SHOWN


def part(results):
    summary = json.loads(SUMMARY.read_text()) if SUMMARY.exists() else None
    lines = ["## Ray's examples: conformance (stored)", ""]
    if not summary:
        return Part(lines + [f"not run: `make conformance` writes {SHOWN}", ""],
                    [GOALS.CONFORMANCE.row("not run", None)])
    share = summary["run_as_under_ray"] / summary["run_under_ray"] if summary["run_under_ray"] else None
    lines += [f"Ray {summary['ray_version']}'s own Train and Tune examples ({summary['examples']} files in its "
              f"package), each run under Ray and, after the port, under trainrt by `make conformance` "
              f"({summary['date']}; `{SHOWN}`); what each one does is in "
              f"docs/reference/ray-conformance.md. Those that do not run under Ray on this CPU-only machine (a library "
              f"not installed, a download, more CPUs or a GPU) are not counted.", "",
              "| examples | run under Ray here | run under trainrt as under Ray | share |", "|---:|---:|---:|---:|",
              f"| {summary['examples']} | {summary['run_under_ray']} | {summary['run_as_under_ray']} | {fmt(share)} |", ""]
    shown = fmt(share) if share is not None else "not run"
    return Part(lines, [GOALS.CONFORMANCE.row(shown, GOALS.CONFORMANCE.met(share))])
