"""BENCHMARKS.md's report() cost section from report_n2.jsonl (report_bench.sh): one report()
against one fashion_mlp training step on the same ranks."""
from reporting import Part, fmt, targets

GOALS = targets("report_cost")


def part(results):
    rp = results.jsonl("report_n2.jsonl")
    lines = ["## report() cost (2 ranks under mpiexec)", ""]
    if rp.empty:
        return Part(lines + ["not run", ""], [GOALS.REPORT_VS_STEP.row("–", None)])
    med = rp.groupby("what")["seconds"].median()
    rep_s, step_s = med.get("report"), med.get("fashion_step")
    ratio = rep_s / step_s if rep_s and step_s else None
    lines += ["Medians of 3 interleaved repetitions. *report()*: the `reporter` test workload reports 3000 times "
              "with nothing in between (6 metrics, one a string tag); each iteration is one whole report(): the row, "
              "the cross-rank summaries and the stop agreement (one allgather), and rank 0 appending to "
              "result.jsonl, progress.csv and metrics.h5 (SWMR, flushed); the median of rank 0's `_time_this_iter_s`. "
              "*fashion_mlp step*: one epoch at global batch 64, train_time_s over its steps per rank. fashion_mlp "
              "itself reports once per epoch (938 steps on 2 ranks), so its real overhead is this ratio / 938.", "",
              "| ranks | report() (µs) | report() p90 (µs) | fashion_mlp step (ms) | report() / step |",
              "|---:|---:|---:|---:|---:|",
              f"| 2 | {fmt(rep_s * 1e6, '.1f')} | {fmt(rp[rp['what'] == 'report']['p90'].median() * 1e6, '.1f')} | "
              f"{fmt(step_s * 1e3, '.2f')} | {fmt(ratio, '.4f')} |", ""]
    detail = (f"{fmt(rep_s * 1e6, '.1f')} µs vs a {fmt(step_s * 1e3, '.2f')} ms step: "
              f"{fmt(ratio * 100 if ratio else None, '.2f')} %")
    return Part(lines, [GOALS.REPORT_VS_STEP.row(detail, bool(GOALS.REPORT_VS_STEP.met(ratio)))])
