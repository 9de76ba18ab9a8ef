"""BENCHMARKS.md's allreduce sections from allreduce.jsonl (allreduce_bench): bus bandwidth per
size against plain MPI_Allreduce, and fashion_mlp's gradient exchange through GradientReducer."""
from reporting import Part, fmt, human_bytes, targets

GOALS = targets("allreduce")


def sizes_section(sizes):
    if sizes.empty:
        return ["not run", ""]
    lines = ["Interleaved in one run; each time is the median of the repetitions (slowest rank per loop). "
             "busbw = algbw × 2(n−1)/n, GB/s = 1e9 B/s.", "",
             "| size | trainrt time (µs) | trainrt busbw (GB/s) | MPI time (µs) | MPI busbw (GB/s) | trainrt / MPI busbw |",
             "|---:|---:|---:|---:|---:|---:|"]
    for _, r in sizes.sort_values("bytes").iterrows():
        lines.append(f"| {human_bytes(int(r['bytes']))} | {fmt(r['trainrt_time_us'], '.1f')} | {fmt(r['trainrt_busbw_GBps'])} | "
                     f"{fmt(r['mpi_time_us'], '.1f')} | {fmt(r['mpi_busbw_GBps'])} | {fmt(r['busbw_ratio'])} |")
    return lines + [""]


def reducer_section(reducer):
    if reducer.empty:
        return ["not run", ""]
    r = reducer.iloc[0]
    return ["trainrt's GradientReducer over the model's 6 gradients (backward order, no compute between them) "
            "vs one MPI_Allreduce of the flat buffer plus the division by n.", "",
            "| gradient floats | bucket | buckets | GradientReducer step (µs) | flat MPI_Allreduce step (µs) | reducer / flat time |",
            "|---:|---:|---:|---:|---:|---:|",
            f"| {int(r['floats'])} | {human_bytes(int(r['bucket_bytes']))} | {int(r['buckets'])} | "
            f"{fmt(r['reducer_step_us'], '.1f')} | {fmt(r['mpi_flat_step_us'], '.1f')} | {fmt(r['time_ratio'])} |", ""]


def target_row(sizes):
    goal = GOALS.BUSBW
    big = sizes[sizes["bytes"] >= GOALS.BUSBW_FROM_1MIB] if not sizes.empty else sizes
    if big.empty:
        return goal.row("–", None)
    worst = big.loc[big["busbw_ratio"].idxmin()]
    misses = [human_bytes(int(b)) for b in big.loc[big["busbw_ratio"].map(lambda r: goal.met(r) is False), "bytes"]]
    detail = f"lowest {fmt(worst['busbw_ratio'])} at {human_bytes(int(worst['bytes']))}" + \
             (f"; below {goal.shown} at {', '.join(misses)}" if misses else "")
    return goal.row(detail, goal.met_all(big["busbw_ratio"]))


def part(results):
    ar = results.jsonl("allreduce.jsonl")
    sizes = ar[ar["bench"] == "allreduce"] if not ar.empty else ar
    reducer = ar[ar["bench"] == "gradient_reducer"] if not ar.empty else ar
    lines = ["## Allreduce: trainrt's MPI communicator vs plain MPI_Allreduce (2 ranks, float32 sum)", ""]
    lines += sizes_section(sizes)
    lines += ["## Gradient exchange of one fashion_mlp step (2 ranks)", ""] + reducer_section(reducer)
    return Part(lines, [target_row(sizes)])
