"""One simulation grid on three executors, side by side: serial (this process), a local process pool of 2 workers
(forkserver) and a Dask LocalCluster of 2 worker processes, in the same run, alternating, ``--repeats`` times.

Grid (200 simulations): synthetic workload (300 jobs, Poisson arrivals, the default GPU mix without 16-GPU jobs)
on 4 servers x 4 GPUs, schedulers FIFO, LAS, SRTF, Tiresias x loads 1..5 jobs/hour x 10 seeds, event-driven.
Every executor must return the same rows as the serial run (checked; the run fails otherwise). The pool and Dask
get the sweep's guided chunks (large first, single simulations last); the table reports, per executor, how many
simulations each worker ran and the workers' time outside the simulations (``SweepResult.stats``).

Run: ``.venv/bin/python benchmarks/sweep_scaling.py [--quick] [--repeats 3] [--workers 2]``. Writes
``docs/results/sweep_scaling.md`` (``_quick`` with ``--quick``: 2 schedulers x 2 loads x 5 seeds, 1 repeat). All
numbers are our machine's wall times (medians over the repeats) and ratios of them.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from optsched.experiments import SerialExecutor, available_cores, executor, sweep  # noqa: E402
from optsched.io import atomic_open  # noqa: E402

RESULTS = ROOT / "docs" / "results"
KEY = ["scheduler", "load", "seed", "avg_jct_s", "avg_responsiveness_s", "finished_tracked", "preemptions", "events"]


def burn(n: int) -> float:
    """A pure-Python CPU loop; returns its own wall time (the calibration of the machine's free cores)."""
    t0 = time.perf_counter()
    s = 0
    for i in range(n):
        s += i * i
    return time.perf_counter() - t0


def warm(seconds: float) -> None:
    """Occupy a pool worker for ``seconds`` (so that the next submission starts another one)."""
    time.sleep(seconds)


def capacity(workers: int, n: int = 20_000_000) -> float:
    """How much faster ``workers`` processes finish ``workers`` equal CPU loops than this process alone, now:
    the best ratio any executor of that many workers can reach at this moment on this (shared) machine."""
    t0 = time.perf_counter()
    for _ in range(workers):
        burn(n)
    alone = time.perf_counter() - t0
    with executor(None, workers) as ex:
        # every worker started and this module imported in it before the clock (unpickling `burn` imports it, and
        # optsched with it: seconds): a process pool starts a worker per submission that finds none idle, so
        # `workers` overlapping submissions warm them all; one short task warmed one and timed the other's start
        for f in [ex.submit(warm, 0.5) for _ in range(workers)]:
            f.result()
        t0 = time.perf_counter()
        for f in [ex.submit(burn, n) for _ in range(workers)]:
            f.result()
        together = time.perf_counter() - t0
    return alone / together


def grid(quick: bool) -> tuple[dict, list[int]]:
    g = {"workload": "synthetic", "n_jobs": 300, "servers": 4, "gpus_per_server": 4, "event": True,
         "scheduler": ["fifo", "las"] if quick else ["fifo", "las", "srtf", "tiresias"],
         "load": [1.0, 3.0] if quick else [1.0, 2.0, 3.0, 4.0, 5.0]}
    return g, list(range(5 if quick else 10))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20 simulations, one repeat; *_quick output")
    ap.add_argument("--repeats", type=int, default=None, help="alternating repeats (default 2; quick 1)")
    ap.add_argument("--workers", type=int, default=2, help="workers of the pool and of the LocalCluster (2)")
    args = ap.parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 2)
    load_before = os.getloadavg()
    g, seeds = grid(args.quick)
    n = len(g["scheduler"]) * len(g["load"]) * len(seeds)
    walls: dict[str, list[float]] = {"serial": [], "pool": [], "dask": [], "dask_start": [], "capacity": []}
    reference = None
    stats: dict[str, str] = {}
    for r in range(repeats):
        walls["capacity"].append(capacity(args.workers))
        t0 = time.perf_counter()
        res = sweep(g, seeds=seeds, executor=SerialExecutor(), progress=False)
        walls["serial"].append(time.perf_counter() - t0)
        reference = res.runs[KEY] if reference is None else reference
        assert res.runs[KEY].equals(reference), "serial runs differ between repeats"

        t0 = time.perf_counter()
        with executor(None, args.workers) as ex:
            res = sweep(g, seeds=seeds, executor=ex, progress=False)
        walls["pool"].append(time.perf_counter() - t0)
        assert res.runs[KEY].equals(reference), "the process pool's rows differ from the serial run's"
        stats["pool"] = res.stats.text() if res.stats is not None else "-"

        t0 = time.perf_counter()
        with executor("local", args.workers) as ex:
            t1 = time.perf_counter()
            res = sweep(g, seeds=seeds, executor=ex, progress=False)
            t2 = time.perf_counter()
        walls["dask"].append(t2 - t1)
        walls["dask_start"].append(time.perf_counter() - t0 - (t2 - t1))
        assert res.runs[KEY].equals(reference), "the Dask rows differ from the serial run's"
        stats["dask"] = res.stats.text() if res.stats is not None else "-"
        print(f"repeat {r + 1}/{repeats}: {args.workers} workers could reach {walls['capacity'][-1]:.2f}x; "
              f"serial {walls['serial'][-1]:.1f} s, pool {walls['pool'][-1]:.1f} s, "
              f"dask {walls['dask'][-1]:.1f} s (+{walls['dask_start'][-1]:.1f} s cluster start/stop)", flush=True)
    med = {k: statistics.median(v) for k, v in walls.items()}
    load_after = os.getloadavg()
    sfx = "_quick" if args.quick else ""
    given = list(sys.argv[1:] if argv is None else argv)
    cmd = "`.venv/bin/python benchmarks/sweep_scaling.py" + "".join(" " + a for a in given) + "`"
    lines = [
        f"# A {n}-simulation grid: serial vs {args.workers} workers (our machine, our simulator)", "",
        f"Command: {cmd}. Machine: {available_cores()} cores ({platform.machine()}), Python "
        f"{platform.python_version()}. Grid: synthetic workload of 300 jobs on 4 x 4 GPUs, schedulers "
        f"{', '.join(g['scheduler'])} x loads {', '.join(f'{x:g}' for x in g['load'])} jobs/h x seeds "
        f"{seeds[0]}-{seeds[-1]} = {n} simulations (event-driven). Each repeat runs the three executors one after "
        "the other "
        f"(same grid, same process); medians over {repeats} repeat(s). Every executor returned exactly the "
        "serial run's rows (checked on every repeat).", "",
        "| executor | wall (s), median | wall per simulation (s) | ratio serial / this |",
        "|---|---|---|---|",
        f"| serial (SerialExecutor, this process) | {med['serial']:.1f} | {med['serial'] / n:.3f} | 1.00 |",
        f"| local process pool, {args.workers} workers (forkserver; start included) | {med['pool']:.1f} | "
        f"{med['pool'] / n:.3f} | {med['serial'] / med['pool']:.2f} |",
        f"| Dask LocalCluster, {args.workers} worker processes (sweep only) | {med['dask']:.1f} | "
        f"{med['dask'] / n:.3f} | {med['serial'] / med['dask']:.2f} |",
        f"| Dask LocalCluster incl. its start and stop ({med['dask_start']:.1f} s) | "
        f"{med['dask'] + med['dask_start']:.1f} | - | {med['serial'] / (med['dask'] + med['dask_start']):.2f} |",
        f"| calibration: {args.workers} CPU loops in {args.workers} processes vs one after the other here | - | - | "
        f"{med['capacity']:.2f} (the best ratio the machine allowed) |",
        "", f"Tasks of the last repeat: pool: {stats['pool']}; Dask: {stats['dask']}.",
        "", "Every repeat (s): " + "; ".join(
            f"calibration {e:.2f}x, serial {a:.1f}, pool {b:.1f}, dask {c:.1f} (+{d:.1f})"
            for a, b, c, d, e in zip(walls["serial"], walls["pool"], walls["dask"], walls["dask_start"],
                                     walls["capacity"])) + ".", "",
        f"Load average of the machine (1, 5, 15 min) before: {', '.join(f'{x:.1f}' for x in load_before)}; after: "
        f"{', '.join(f'{x:.1f}' for x in load_after)}. The machine's 2 cores are shared with other work: a load "
        "above 2 means the workers compete for the cores with other processes, and the ratio falls short of the "
        "ideal 2; the calibration row says how far two processes could get at the time (a pure-Python loop, "
        "no I/O). Each worker is a spawned process that imports optsched and its libraries once (about 2 s).",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"sweep_scaling{sfx}.md"
    with atomic_open(out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
