"""BENCHMARKS.md's checkpoint section from checkpoint_nN.jsonl (checkpoint_bench.cpp): write and
restore bandwidth against plain I/O, the node-local level, many small tensors, the async stall,
what a save costs a training step, replicated state."""
import pandas as pd

from reporting import Part, couples_ratio, fmt, targets

GOALS = targets("checkpoint")
LAYOUTS = ("file_per_rank", "shared")

INTRO = (
    "State: {gib:.2f} GiB of float32 in 4 sharded tensors, split evenly over the ranks. {reps} interleaved repetitions "
    "after a warm-up round that is not counted (plain, file_per_rank, shared in even repetitions, the reverse in odd "
    "ones); each time is the slowest rank's; GB/s from the median times, ratios the median over couples of repetitions "
    "(one with plain first, one with it last) of their summed times' ratio: on this disk whichever runs second pays "
    "for the first one's writeback. Every timed write and read starts right after twice the rank's share of memory was "
    "touched and freed (this VM's host takes freed pages back within seconds: bench/README.md). Plain = each rank "
    "write()s its bytes to its own file and fsyncs it (reads after POSIX_FADV_DONTNEED). A checkpoint write is the "
    "whole commit (write, fsync, XXH3 of every file, manifest, rename); a checkpoint read is restore (the ranks verify "
    "the files' checksums, a share each: *verify*) plus reading this rank's blocks.")
LOCAL = (
    "The node-local level (`checkpoint.levels = local,pfs`, `local_dir` = /dev/shm, memory): a save (each rank's file "
    "written, agreed, renamed; no copy to the run directory in this round) and a restore from it (every file verified, "
    "this rank's blocks read) against a plain write+fsync and read of the same bytes in /dev/shm, alternated.")
MANY = (
    "Many small tensors (round 8): 2000 tensors of 16 KiB per rank (`file_per_rank`): a save against a plain "
    "write+fsync of the same bytes into one file per rank, and a restore with every block read back against a plain "
    "read of them (the page cache dropped before each read), alternated; and the stall of an async save (`snapshot = "
    "background`) as training sees it, settling the save before (saves 2-4 of four, 0.5 s apart, median). What a "
    "checkpoint's per-tensor work (its manifest, HDF5's metadata, one write and one read per tensor) costs: reported, "
    "no target.")
STEP = (
    "What an async save costs a training step (`bench/checkpoint/checkpoint_bench.cpp`, round 7): a step is about 0.5 s "
    "of compute that does not touch the state (forward and backward) and then an update of every element (the "
    "optimizer); a step with a save reported before it (report, compute, `await_snapshot()`, update) against the mean "
    "of the steps just before and after it without one, three times per repetition, the median excess. `copy`: "
    "report() copies the state; `background` (`checkpoint.snapshot = background`): the large tensors are copied on the "
    "save's thread beside the compute. In both the save's writing (page cache, checksum, fsync) also runs beside the "
    "compute, and what it takes from it counts.")
REPLICATED = (
    "Replicated state of the same size (a DDP model: every rank holds all of it), file_per_rank, alternated: written "
    "by rank 0 alone (`spread_replicated = false`) and in shares by every rank (the default); median times, and the "
    "median over couples of repetitions (one with each order) of their summed times' ratio.")
REPLICATED_READ = (
    "The spread checkpoint restored and every replicated tensor read back whole on every rank, the page cache dropped "
    "before each, alternated: every rank reading every rank's file for them (`checkpoint.replicated_reads = files`), "
    "against each rank's parts sent to the others at restore, from the bytes it verified (MPI broadcasts; `exchange`, "
    "what `auto` does across nodes). Reported, no target: on one machine the files and the broadcasts share the same "
    "memory and disk; on a cluster the exchange reads the replicated state from the parallel filesystem once instead "
    "of once per rank.")


class Rounds:
    """One results directory's checkpoint_bench rows: `rows` (all) and `med` (median seconds by
    ranks, what, layout)."""

    def __init__(self, results):
        self.ranks = results.RANKS
        self.rows = pd.concat([results.jsonl(f"checkpoint_n{n}.jsonl") for n in self.ranks], ignore_index=True)
        self.med = self.rows.groupby(["ranks", "what", "layout"])["seconds"].median() if not self.rows.empty else None

    def get(self, n, what, layout):
        return self.med.get((n, what, layout))

    def has(self, what, layout):
        return any((n, what, layout) in self.med for n in self.ranks)

    def gbps(self, n, what, layout):
        return self.rows["bytes"].iloc[0] / self.med[n, what, layout] / 1e9 if (n, what, layout) in self.med else None

    def ratio(self, n, what, layout, base="plain"):
        return couples_ratio(self.rows, n, what, layout, base)


def bandwidth_section(ck):
    """The main table; returns its lines and the ratios (ratio, ranks, layout) per write / read."""
    reps = int(ck.rows["rep"].max()) + 1 if "rep" in ck.rows and not ck.rows["rep"].isna().all() else 3
    lines = [INTRO.format(gib=ck.rows["bytes"].iloc[0] / (1 << 30), reps=reps), "",
             "| ranks | what | plain (GB/s) | file_per_rank (GB/s) | shared (GB/s) | file_per_rank / plain | shared / plain "
             "| verify, file_per_rank (s) | verify, shared (s) |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    ratios = {"write": [], "read": []}
    for n in ck.ranks:
        for what in ("write", "read"):
            rf, rs = (ck.ratio(n, what, layout) for layout in LAYOUTS)
            ratios[what] += [(rf, n, "file_per_rank"), (rs, n, "shared")]
            verify = [fmt(ck.get(n, "restore", layout)) if what == "read" else "" for layout in LAYOUTS]
            lines.append(f"| {n} | {what} | {fmt(ck.gbps(n, what, 'plain'))} | {fmt(ck.gbps(n, what, 'file_per_rank'))} | "
                         f"{fmt(ck.gbps(n, what, 'shared'))} | {fmt(rf)} | {fmt(rs)} | {verify[0]} | {verify[1]} |")
    return lines, ratios


def local_section(ck):
    if not ck.has("write", "local"):
        return []
    lines = ["", LOCAL, "",
             "| ranks | plain write (GB/s) | local save (GB/s) | local / plain | plain read (GB/s) | local restore (GB/s) "
             "| local / plain |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for n in ck.ranks:
        cells = []
        for what in ("write", "read"):
            cells += [fmt(ck.gbps(n, what, "plain_local")), fmt(ck.gbps(n, what, "local")),
                      fmt(ck.ratio(n, what, "local", base="plain_local"))]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    return lines


def many_section(ck):
    many = ck.rows[ck.rows["what"] == "many_read"]
    if many.empty:
        return []
    lines = ["", MANY, "",
             "| ranks | bytes (MiB) | plain write (s) | save (s) | plain / checkpoint | plain read (s) | restore + reads (s) "
             "| plain / checkpoint | async stall (s) | async stall / save |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for n in ck.ranks:
        rows = many[many["ranks"] == n]
        if rows.empty:
            continue
        cells = []
        for what in ("many_write", "many_read"):
            cells += [fmt(ck.get(n, what, "plain")), fmt(ck.get(n, what, "file_per_rank")),
                      fmt(ck.ratio(n, what, "file_per_rank"))]
        save, stall = ck.get(n, "many_write", "file_per_rank"), ck.get(n, "many_async_stall", "file_per_rank")
        cells += [fmt(stall), fmt(stall / save if save and stall is not None else None)]
        lines.append(f"| {n} | {rows['bytes'].iloc[0] / 2**20:.0f} | " + " | ".join(cells) + " |")
    return lines


def stall_section(ck):
    """The async stall table; returns its lines and stall / sync save per rank count."""
    lines = ["", "| ranks | sync save (s) | async stall, first save (s) | async stall, later saves (s) | stall / sync save |",
             "|---:|---:|---:|---:|---:|"]
    stall_ratio = {}
    for n in ck.ranks:
        sync, first, stall = (ck.get(n, w, "file_per_rank") for w in ("write", "async_first_stall", "async_stall"))
        stall_ratio[n] = stall / sync if sync and stall is not None else None
        lines.append(f"| {n} | {fmt(sync)} | {fmt(first)} | {fmt(stall)} | {fmt(stall_ratio[n])} |")
    return lines + [""], stall_ratio


def step_section(ck):
    """What a save costs a training step (round 7); returns its lines and step stall / sync save."""
    if not ck.has("step_stall", "background"):
        return [], {}
    lines = [STEP, "",
             "| ranks | sync save (s) | report(), copy (s) | report(), background (s) | step stall, copy (s) "
             "| step stall, background (s) | background step stall / sync save |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    step_ratio = {}
    for n in ck.ranks:
        sync = ck.get(n, "write", "file_per_rank")
        cells = [ck.get(n, w, m) for w, m in (("report_stall", "copy"), ("report_stall", "background"),
                                              ("step_stall", "copy"), ("step_stall", "background"))]
        step_ratio[n] = cells[3] / sync if sync and cells[3] is not None else None
        lines.append(f"| {n} | {fmt(sync)} | " + " | ".join(fmt(c, ".4f") for c in cells) + f" | {fmt(step_ratio[n])} |")
    return lines + [""], step_ratio


def replicated_section(ck):
    """Replicated state written by rank 0 alone vs in shares, and read back; returns its lines and
    the shares / alone ratios (None when the round did not run)."""
    rep = {n: (ck.get(n, "replicated_write", "rank0"), ck.get(n, "replicated_write", "spread"))
           for n in ck.ranks if (n, "replicated_write", "spread") in ck.med}
    if not rep:
        return [], None
    lines = [REPLICATED, "", "| ranks | rank 0 alone (s) | every rank a share (s) | shares / rank 0 alone |",
             "|---:|---:|---:|---:|"]
    ratios = {}
    for n, (alone, shares) in rep.items():
        ratios[n] = ck.ratio(n, "replicated_write", "rank0", base="spread")  # shares' time / rank 0 alone's
        lines.append(f"| {n} | {fmt(alone)} | {fmt(shares)} | {fmt(ratios[n])} |")
    lines.append("")
    read_rep = {n: (ck.get(n, "replicated_read", "files"), ck.get(n, "replicated_read", "exchange"))
                for n in ck.ranks if (n, "replicated_read", "exchange") in ck.med}
    if read_rep:
        lines += [REPLICATED_READ, "", "| ranks | every rank reads every file (s) | parts exchanged (s) | exchanged / files |",
                  "|---:|---:|---:|---:|"]
        for n, (files, exchanged) in read_rep.items():
            lines.append(f"| {n} | {fmt(files)} | {fmt(exchanged)} | "
                         f"{fmt(ck.ratio(n, 'replicated_read', 'files', base='exchange'))} |")
        lines.append("")
    return lines, {n: r for n, r in ratios.items() if r is not None}


def ratio_rows(goal, known):
    """The bandwidth targets' row: every known (ratio, ranks, layout) meets the goal."""
    detail = ", ".join(f"{layout} {n}r: {fmt(r)}" for r, n, layout in known) or "–"
    return goal.row(detail, bool(known) and all(goal.met(r) for r, _, _ in known))


def per_ranks(ratios, spec=".3f"):
    return ", ".join(f"{n} rank{'s' if n > 1 else ''}: {fmt(r, spec)}" for n, r in ratios.items())


def target_rows(ck, ratios, stall_ratio, step_ratio, replicated):
    # the async stall: report()'s own time with background snapshots (the copy left beside the
    # next step), or with snapshot = copy where round 7 did not run
    for n in ck.ranks:
        background_report, sync = ck.get(n, "report_stall", "background"), ck.get(n, "write", "file_per_rank")
        if background_report is not None and sync:
            stall_ratio[n] = background_report / sync
    stalls = {n: r for n, r in stall_ratio.items() if r is not None}
    steps = {n: r for n, r in step_ratio.items() if r is not None}
    rows = [ratio_rows(GOALS.WRITE, [w for w in ratios["write"] if w[0] is not None]),
            ratio_rows(GOALS.RESTORE, [w for w in ratios["read"] if w[0] is not None]),
            GOALS.ASYNC_STALL.row(per_ranks(stalls, ".5f") or "–",
                                  bool(stalls) and all(GOALS.ASYNC_STALL.met(r) for r in stalls.values())),
            GOALS.STEP_STALL.row(per_ranks(steps) or "not run", GOALS.STEP_STALL.met_all(steps.values()))]
    if replicated is None:
        return rows + [GOALS.REPLICATED.row("–", None)]
    detail = ", ".join(f"{n} ranks: {fmt(r)}" for n, r in replicated.items()) or "–"
    return rows + [GOALS.REPLICATED.row(detail, bool(replicated) and all(GOALS.REPLICATED.met(r)
                                                                          for r in replicated.values()))]


NOT_RUN_ROWS = [GOALS.WRITE.row("–", None), GOALS.RESTORE.row("–", None), GOALS.ASYNC_STALL.row("–", None),
                GOALS.STEP_STALL.row("not run", None), GOALS.REPLICATED.row("–", None)]


def part(results):
    ck = Rounds(results)
    lines = ["## Checkpoints: write and read bandwidth, async stall", ""]
    if ck.med is None:
        return Part(lines + ["not run", ""], NOT_RUN_ROWS)
    table, ratios = bandwidth_section(ck)
    stall_lines, stall_ratio = stall_section(ck)
    step_lines, step_ratio = step_section(ck)
    replicated_lines, replicated = replicated_section(ck)
    lines += table + local_section(ck) + many_section(ck) + stall_lines + step_lines + replicated_lines
    return Part(lines, target_rows(ck, ratios, stall_ratio, step_ratio, replicated))
