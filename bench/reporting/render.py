#!/usr/bin/env python3
"""Writes BENCHMARKS.md from a results directory of bench/run.sh (its machine.txt, *.jsonl, the
stored parts' notes):

    render.py RESULTS_DIR REPORT

bench/run.sh calls it last. Each section is a topic's (bench/<topic>/report.py: part(results)),
in DOCUMENT's order; the Targets table gathers their rows in TARGETS' order, each goal declared in
bench/<topic>/targets.py; the raw JSON lines follow, then the APPENDIX topics' sections. Other
results directories of the same form render too: bench/gpu/run_on_gpu.sh's ckpt stage and
make bench-glusterfs leave the checkpoint part alone, machine.txt naming where it ran; parts
named in machine.txt's skipped= show as "not run"."""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # bench/: the reporting library
from reporting import Results  # noqa: E402

# (topic, module) whose part(results) makes each section, in the order BENCHMARKS.md shows them
DOCUMENT = [("pytorch", "report"), ("allreduce", "report"), ("checkpoint", "report"), ("restart", "report"),
            ("report_cost", "report"), ("torch", "report"), ("gpu", "report"), ("glusterfs", "report"),
            ("multinode", "report"), ("multinode", "goodput_report"), ("tune", "array_report"),
            ("python", "report"), ("xgboost", "report"), ("data", "report"), ("tune", "report"),
            ("ray", "conformance")]
# the order of the Targets table's rows
TARGETS = [("pytorch", "report"), ("allreduce", "report"), ("checkpoint", "report"), ("restart", "report"),
           ("report_cost", "report"), ("gpu", "report"), ("torch", "report"), ("python", "report"),
           ("xgboost", "report"), ("ray", "conformance"), ("data", "report"), ("tune", "report")]
# topics whose section follows the raw JSON lines, with the note bench/run.sh wrote for it, when
# the results directory holds their <topic>.jsonl
APPENDIX = ["ray", "frameworks"]
CLOSING = ("The machine is shared and small: one measurement can be off by tens of percent when something else "
           "runs (the load average is recorded above and in each log). Run again before drawing conclusions from a MISS.")


def header(results):
    meta = results.meta
    lines = ["# trainrt benchmarks", "",
             "Written by `bench/run.sh` (see `bench/README.md`); do not edit by hand.", "",
             f"- Machine: {meta['cpu']}, {meta['nproc']} cores (nproc), Linux {meta['kernel']}",
             f"- Date: {meta['date']}; load average (1/5/15 min): {meta['load']}",
             f"- trainrt {meta['trainrt']} ({meta['build_type']}, {meta['compiler']}); MPICH {meta['mpich']}; "
             f"PyTorch {meta['torch']}; OpenBLAS {meta['openblas']}",
             f"- Epochs per training run: {meta['epochs']}; 1 compute thread per rank for both trainrt and PyTorch",
             f"- Raw results and logs: `{os.path.relpath(results.out)}`"]
    if meta.get("filesystem"):
        lines += [f"- Filesystem the checkpoint part wrote: `{meta['filesystem']}`"]
    lines += [""]
    skipped = ", ".join(sorted(results.listed_skipped))
    if results.reused:
        lines += [f"Not run this time (BENCH_SKIP): {skipped}. Their sections show the stored results of "
                  f"{meta['reused_date']} (BENCH_REUSE=`{os.path.relpath(meta['reused_from'])}`, "
                  "copied into the raw results below).", ""]
    elif skipped:
        lines += [f"Skipped (BENCH_SKIP): {skipped}.", ""]
    return lines


def raw_lines(results):
    lines = ["<details><summary>Raw JSON lines</summary>", "", "```"]
    for name in sorted(p.name for p in results.out.glob("*.jsonl")):
        lines.append(f"# {name}")
        lines += [line for line in results.file(name).read_text().splitlines() if line.startswith("{")]
    return lines + ["```", "", "</details>", ""]


def appendix(results, name):
    """A topic's section after the raw lines, then its note as bench/run.sh wrote it ('' without one)."""
    path, note = results.file(f"{name}.jsonl"), results.file(f"{name}_note.txt")
    if not path.exists() or path.stat().st_size == 0:
        return ""
    section = "\n".join(results.part(name).lines)
    return "\n" + section + "\n\n" + (note.read_text() if note.exists() else "")


def render(results):
    lines = header(results)
    for name, module in DOCUMENT:
        lines += results.part(name, module).lines
    lines += ["## Targets", "", "| target | measured | result |", "|---|---|---|"]
    for name, module in TARGETS:
        lines += results.part(name, module).targets
    lines += ["", CLOSING, ""] + raw_lines(results)
    return "\n".join(lines) + "".join(appendix(results, name) for name in APPENDIX)


if __name__ == "__main__":
    Path(sys.argv[2]).write_text(render(Results(sys.argv[1])))
