"""Engine speed of the simulator (issue 5): events per second, and the wall time of 100,000 Philly-derived jobs on
2,000 GPUs with FIFO (target: under 60 s on this machine).

Run: ``.venv/bin/python benchmarks/sim_speed.py [--quick] [--repeats K] [--jobs N]``.
Writes ``docs/results/sim_speed.md`` (``sim_speed_quick.md`` with ``--quick``), atomically.

Cases (all numbers are OUR simulator's; Blox reports no simulator run time, digest 002 section 4):

* ``philly-128``: Blox's Philly-Trace (Blox filter, jobs 3000-4000 tracked, run until they finish) at 8 jobs/hour on
  128 GPUs (32 x 4), FIFO + consolidated, round-based (300 s) and event-driven;
* ``philly-100k``: ``replicate_philly(100_000, 130 jobs/hour)`` (whole trace, cycled; every job tracked, run to
  the last completion) on 2,000 GPUs (500 x 4), FIFO + consolidated, round-based and event-driven.

Reported: median over ``--repeats`` runs (default 3; 1 for the 100k event-driven case unless asked) of the engine's
wall time (``SimResult.summary['wall_s']``: the event loop plus building the per-job records), the end-to-end time
including the workload build, events processed and events per second (events = arrivals + completions + decisions).
The machine is shared (other processes run beside the benchmark): the load average is recorded with the table.

Before/after: ``benchmarks/sim_speed.py --compare OTHER_SRC [--repeats K] [--out FILE]`` times the 100k-job case
(FIFO round and event mode, LAS, Tiresias and SRTF round mode, consolidated placement) with this tree and with the
``src`` folder of another checkout (e.g. the code before a change), each run in a fresh process, alternating the
two trees run by run (who goes first alternates too), and prints the medians and their ratio (after / before) as
a Markdown table; it also checks that both trees produce the same trajectory (events, decisions, average JCT,
preemptions). Nothing is written unless ``--out`` is given.

The physical limit (issue 29): ``benchmarks/sim_speed.py --limit [--jobs N] [--repeats K]`` runs a minimal round
loop (a heap of completions, FIFO over per-server free counts with the consolidated rule, nothing else: no job
objects, no records, no policy objects) on the same ``replicate_philly`` workload, checks that it gives our
simulator's average JCT exactly, and prints both CPU times (medians, each in a fresh process, alternating), their
ratio and a profile of ``simulate()`` by module (where the rest goes). It writes nothing. The minimal loop holds
only for what it models: FIFO without preemption, which is what ours does on this workload when no waiting job
reaches Blox's starvation bump (checked: the run must report 0 preemptions).

A million jobs (issue 29): ``benchmarks/sim_speed.py --million [--jobs N] [--policies fifo,las,...] [--repeats K]
[--before OTHER_SRC] [--table] [--out FILE]`` runs each policy (default: FIFO, LAS, Tiresias and SRTF; Gavel, about
270 CPU s at a million jobs, and Optimus, about 120, when named) on ``replicate_philly(N, 130 jobs/h)`` (default N =
1,000,000) on 2,000 GPUs, round mode, consolidated placement, each run a fresh process, and reports the whole
process's CPU seconds (user + system, workload build and interpreter start-up included) and its peak resident memory
(``ru_maxrss`` of that child, from ``os.wait4``), with the build and simulate CPU seconds the child measures itself.
The child leaves with ``os._exit`` after writing its line (a finished benchmark process need not free a million
objects one by one; a program that keeps working after a run pays that when it drops the result). With ``--before``
the same runs of another checkout's ``src`` alternate with this tree's and the results must agree (events,
decisions, average JCT, preemptions). A run reads its result's summary; a finished run's per-job table is built at
its first read, so ``--table`` makes each run read that table too (the peak of a caller that wants the table).
``--quick``: 20,000 jobs, FIFO and LAS.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from optsched.data import data_root  # noqa: E402
from optsched.generators.workload import load_philly, philly_workload, replicate_philly  # noqa: E402
from optsched.io import atomic_open  # noqa: E402
from optsched.sim import simulate  # noqa: E402

RESULTS = ROOT / "docs" / "results"


def measure(build, servers: int, mode: str, repeats: int, tracked_stop: bool) -> dict:
    walls, totals, events, evs = [], [], [], []
    summary = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        wl = build()
        t_build = time.perf_counter() - t0
        r = simulate(wl, servers=servers, gpus_per_server=4, scheduler="fifo", placement="consolidated",
                     mode=mode, stop_when_tracked_done=tracked_stop)
        totals.append(time.perf_counter() - t0)
        walls.append(r.summary["wall_s"])
        events.append(r.summary["events"])
        evs.append(r.summary["events"] / r.summary["wall_s"])
        summary = r.summary
        summary["build_s"] = t_build
    return {"wall_s": statistics.median(walls), "total_s": statistics.median(totals), "events": events[-1],
            "events_per_s": statistics.median(evs), "repeats": repeats, "jobs": summary["jobs"],
            "decisions": summary["decisions"], "build_s": summary["build_s"],
            "util": summary["mean_utilisation"], "avg_jct_h": (summary["avg_jct_s"] or float("nan")) / 3600,
            "walls": walls}


# one 100k-job run in a fresh process; only names both the old and the new simulator have
ONE_RUN = """
import json, sys
from optsched.sim import simulate
from optsched.generators.workload import load_philly, replicate_philly
sched, mode, n, load, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
wl = replicate_philly(n, load, seed, frame=load_philly())
s = simulate(wl, servers=500, gpus_per_server=4, scheduler=sched, placement="consolidated", mode=mode).summary
print(json.dumps({k: s[k] for k in ("wall_s", "events", "decisions", "avg_jct_s", "preemptions_total")}))
"""
COMPARE_CASES = (("fifo", "round"), ("fifo", "event"), ("las", "round"), ("tiresias", "round"), ("srtf", "round"))


def one_run(src: Path, sched: str, mode: str, n: int, load: float, seed: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "OPTSCHED_DATA": str(data_root())}
    out = subprocess.run([sys.executable, "-c", ONE_RUN, sched, mode, str(n), str(load), str(seed)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare(before: Path, repeats: int, n: int, load: float, seed: int) -> str:
    """Markdown table of the engine wall time, this tree ("after") against ``before``, alternating runs."""
    after = ROOT / "src"
    rows = []
    for sched, mode in COMPARE_CASES:
        walls: dict[str, list[float]] = {"before": [], "after": []}
        seen: dict[str, dict] = {}
        for k in range(repeats):
            order = [("before", before), ("after", after)]
            for label, src in (order if k % 2 == 0 else order[::-1]):
                r = one_run(src, sched, mode, n, load, seed)
                walls[label].append(r.pop("wall_s"))
                if seen.setdefault(label, r) != r:
                    raise RuntimeError(f"{label}: two runs of {sched}/{mode} differ: {seen[label]} vs {r}")
                print(f"  {sched} {mode} {label}: {walls[label][-1]:.2f} s", file=sys.stderr, flush=True)
        same = "yes" if seen["before"] == seen["after"] else f"NO: {seen['before']} vs {seen['after']}"
        b, a = statistics.median(walls["before"]), statistics.median(walls["after"])
        rows.append(f"| {sched} + consolidated | {mode} | {seen['after']['events']:,} | "
                    f"{', '.join(f'{w:.2f}' for w in walls['before'])} | {b:.2f} | "
                    f"{', '.join(f'{w:.2f}' for w in walls['after'])} | {a:.2f} | {a / b:.3f} | {same} |")
    load_avg = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    head = [f"Engine wall time (s), {n:,} Philly-derived jobs (replicate_philly, {load:g} jobs/h, seed {seed}) on "
            f"2,000 GPUs (500 x 4); before = `{before}`, after = `{after}`; {repeats} runs each, alternating, each "
            f"in a fresh process; load average after: {load_avg[0]:.2f} / {load_avg[1]:.2f} / {load_avg[2]:.2f}.",
            "", "| policy | mode | events | before runs | before median | after runs | after median | after / before "
            "| same trajectory |", "|---|---|---|---|---|---|---|---|---|"]
    return "\n".join(head + rows) + "\n"


def minimal_fifo(arrivals: list[float], gpus: list[int], iterations: list[float], iteration_s: list[float],
                 servers: int, per_server: int,
                 round_s: float = 300.0, cross_server: float = 1.25) -> list[float]:
    """The completion times (in the order given, which must be by arrival) of FIFO in rounds of ``round_s`` on
    ``servers`` x ``per_server`` GPUs, computed with nothing but a heap of completions and the servers' free
    counts (servers bucketed by free count, a heap of indices per bucket): at each round, completions up to it
    free their GPUs,
    arrivals up to it join the queue, and the queue's head starts while it fits (a job of at most one server's
    GPUs on the server with the fewest free GPUs that hold it, ties to the lowest index; a larger job on the first
    wholly free servers in index order; a job on more than one server runs ``cross_server`` times slower). Rounds
    are the engine's: the first multiple of ``round_s`` at or after the event that makes one due."""
    import heapq
    import math
    from collections import deque

    n = len(arrivals)
    free = [per_server] * servers
    # servers by free count, each a heap of server indices (lazy: an entry is valid while free[s] equals its count)
    by_free: list[list[int]] = [[] for _ in range(per_server + 1)]
    by_free[per_server] = list(range(servers))

    def take(f: int) -> int:
        """The lowest-index server with exactly ``f`` free GPUs, removed from its heap (-1 if none)."""
        h = by_free[f]
        while h:
            sv = heapq.heappop(h)
            if free[sv] == f:
                return sv
        return -1

    def put(sv: int) -> None:
        heapq.heappush(by_free[free[sv]], sv)

    heap: list = []
    queue: deque = deque()
    ai, last_k = 0, -1
    end_s = [math.nan] * n
    t = 0.0
    while ai < n or queue:
        # the next round: after the next event that can change something (an arrival, or a completion while the
        # head waits), never at or before the last round
        nxt = arrivals[ai] if not queue else min(heap[0][0] if heap else math.inf,
                                                 arrivals[ai] if ai < n else math.inf)
        k = max(last_k + 1, math.ceil(nxt / round_s - 1e-9))
        if k * round_s < nxt:
            k += 1
        t, last_k = k * round_s, k
        while heap and heap[0][0] <= t:
            _, _, held = heapq.heappop(heap)
            for sv, c in held:
                free[sv] += c
                put(sv)
        while ai < n and arrivals[ai] <= t:
            queue.append(ai)
            ai += 1
        while queue:
            j = queue[0]
            g = gpus[j]
            if g <= per_server:  # best fit: the fewest free GPUs >= g, then the lowest index
                sv = -1
                for f in range(g, per_server + 1):
                    sv = take(f)
                    if sv >= 0:
                        break
                if sv < 0:
                    break
                held: tuple = ((sv, g),)
            else:  # the first wholly free servers in index order
                need = -(-g // per_server)
                whole: list[int] = []
                while len(whole) < need:
                    sv = take(per_server)
                    if sv < 0:
                        break
                    if sv not in whole:  # a server may sit twice in a heap (pushed again at the same count)
                        whole.append(sv)
                if len(whole) < need:
                    for sv in whole:
                        put(sv)
                    break
                held = tuple((sv, per_server) for sv in whole[:-1]) + ((whole[-1], g - (need - 1) * per_server),)
            queue.popleft()
            for sv, c in held:
                free[sv] -= c
                put(sv)
            # the engine's arithmetic: a rate of 1 / (iteration time x factor), the end at start + work / rate
            rate = 1.0 / (iteration_s[j] * cross_server if len(held) > 1 else iteration_s[j])
            end = t + iterations[j] / rate
            heapq.heappush(heap, (end, j, held))
            end_s[j] = end
    return end_s


LIMIT_RUN = """
import hashlib, json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[4])
from optsched.generators.workload import load_philly, replicate_philly
which, n, load = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
wl = replicate_philly(n, load, 0, frame=load_philly())
order = sorted(range(n), key=lambda i: wl.jobs[i].arrival_s)  # stable: ties keep the workload's order, as the engine's
jobs = [wl.jobs[i] for i in order]
t0 = time.process_time()
if which == "minimal":
    from sim_speed import minimal_fifo
    ends = minimal_fifo([j.arrival_s for j in jobs], [j.gpus for j in jobs], [j.iterations for j in jobs],
                        [j.iteration_time_s for j in jobs], 500, 4)
    cpu = time.process_time() - t0
    done = np.empty(n)
    done[order] = ends
    out = {"preemptions": 0}
else:
    from optsched.sim import simulate
    r = simulate(wl, servers=500, gpus_per_server=4, scheduler="fifo", placement="consolidated", mode="round")
    cpu = time.process_time() - t0
    done = r.jobs["completion_s"].to_numpy(dtype=float)
    out = {"preemptions": int(r.summary["preemptions"])}
jct = done - np.array([j.arrival_s for j in wl.jobs])
out.update(cpu_s=cpu, avg_jct_s=float(jct.mean()), completions=hashlib.sha256(done.tobytes()).hexdigest())
print(json.dumps(out))
"""


def limit(n: int, load: float, repeats: int) -> str:
    """The minimal loop against ``simulate()``, side by side in fresh processes; then ``simulate()``'s profile."""
    import cProfile
    import pstats

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cpu: dict[str, list[float]] = {"minimal": [], "simulate": []}
    res: dict[str, dict] = {}
    for r in range(repeats):
        for which in (("minimal", "simulate") if r % 2 == 0 else ("simulate", "minimal")):
            out = subprocess.run([sys.executable, "-c", LIMIT_RUN, which, str(n), str(load), str(ROOT / "benchmarks")],
                                 env=env, capture_output=True, text=True, check=True)
            res[which] = json.loads(out.stdout.strip().splitlines()[-1])
            cpu[which].append(res[which]["cpu_s"])
    same = res["minimal"]["completions"] == res["simulate"]["completions"] and res["simulate"]["preemptions"] == 0
    med = {k: statistics.median(v) for k, v in cpu.items()}
    wl = replicate_philly(n, load, 0, frame=load_philly())
    prof = cProfile.Profile()
    prof.enable()
    simulate(wl, servers=500, gpus_per_server=4, scheduler="fifo", placement="consolidated", mode="round")
    prof.disable()
    by_file: dict[str, float] = {}
    for (file, _, _), (_, _, tt, _, _) in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]
        key = file.split("/src/optsched/")[-1] if "/src/optsched/" in file else (
            "numpy/pandas" if ("numpy" in file or "pandas" in file) else "Python built-ins and the rest")
        by_file[key] = by_file.get(key, 0.0) + tt
    whole = sum(by_file.values())
    lines = [f"Minimal FIFO loop vs simulate(): replicate_philly({n:,}, {load:g} jobs/h, seed 0) on 500 x 4 GPUs, "
             f"round mode (300 s), CPU seconds, medians of {repeats} fresh processes each, alternating.", "",
             "| loop | CPU s (median) | runs | average JCT (s) |", "|---|---|---|---|",
             f"| minimal (heap + free counts) | {med['minimal']:.2f} | "
             f"{', '.join(f'{x:.2f}' for x in cpu['minimal'])} | {res['minimal']['avg_jct_s']!r} |",
             f"| optsched simulate(), FIFO + consolidated | {med['simulate']:.2f} | "
             f"{', '.join(f'{x:.2f}' for x in cpu['simulate'])} | {res['simulate']['avg_jct_s']!r} |", "",
             f"Ratio simulate / minimal: {med['simulate'] / med['minimal']:.1f}x. Every job's completion the same (bit "
             f"for bit) and no preemption: {'yes' if same else 'NO'}.", "",
             "Where simulate()'s time goes (cProfile, own time by file, share of the profiled total):", ""]
    lines += [f"* {k}: {v / whole:.0%}" for k, v in sorted(by_file.items(), key=lambda kv: -kv[1])[:10]]
    if not same:
        raise SystemExit("\n".join(lines) + "\nthe minimal loop does not reproduce our completions")
    return "\n".join(lines)


MILLION_RUN = """
import json, os, sys, time
t0 = time.process_time()
from optsched.sim import simulate
from optsched.generators.workload import load_philly, replicate_philly
sched, n = sys.argv[1], int(sys.argv[2])
t1 = time.process_time()
wl = replicate_philly(n, 130.0, 0, frame=load_philly())
t2 = time.process_time()
res = simulate(wl, servers=500, gpus_per_server=4, scheduler=sched, placement="consolidated", mode="round")
s = res.summary
if len(sys.argv) > 3 and sys.argv[3] == "table":
    res.jobs  # the per-job table too (a finished run's is built at its first read)
t3 = time.process_time()
out = {k: s[k] for k in ("events", "decisions", "avg_jct_s", "preemptions_total")}
out.update(import_s=t1 - t0, build_s=t2 - t1, simulate_s=t3 - t2)
print(json.dumps(out), flush=True)
os._exit(0)
"""
MILLION_POLICIES = ("fifo", "las", "tiresias", "srtf")


def million(n: int, policies: list[str], repeats: int, before: Path | None, table: bool = False) -> str:
    """CPU seconds and peak memory per policy at ``n`` jobs, each run a fresh process (both trees alternating);
    ``table``: each child also reads the result's per-job table."""
    trees = [("after", ROOT / "src")] + ([("before", before)] if before is not None else [])
    runs: dict[tuple[str, str], list[dict]] = {}
    for sched in policies:
        for k in range(repeats):
            for who, src in (trees if k % 2 == 0 else trees[::-1]):
                r = child_wait(src, ["-c", MILLION_RUN, sched, str(n)] + (["table"] if table else []))
                runs.setdefault((sched, who), []).append(r)
                print(f"  {sched} [{who}]: cpu {r['cpu_s']:.2f} s, peak {r['rss_mb']:.0f} MiB (build "
                      f"{r['build_s']:.2f} s, simulate {r['simulate_s']:.2f} s)", file=sys.stderr, flush=True)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    lines = [f"Whole-process CPU seconds and peak resident memory of one fresh process that builds "
             f"`replicate_philly({n:,}, 130 jobs/h, seed 0)` and simulates it on 2,000 GPUs (500 x 4), round mode, "
             f"consolidated placement (our simulator); medians of {repeats} run(s)"
             + (", both trees alternating" if before is not None else "")
             + ("; each run also reads the per-job table (`result.jobs`)" if table else "; each run reads the "
                "summary only (since issue 29's memory pass a finished run's per-job table is built at its first "
                "read: `--table` reads it too)")
             + f"; load average after: {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}.", "",
             "| policy | tree | CPU s (runs) | CPU s | build s | simulate s | peak MiB | same result |",
             "|---|---|---|---|---|---|---|---|"]
    for sched in policies:
        keys = {who: {k: v for k, v in runs[sched, who][-1].items()
                      if k in ("events", "decisions", "avg_jct_s", "preemptions_total")} for who, _ in trees}
        same = "" if before is None else ("yes" if keys["after"] == keys["before"] else "NO")
        for who, _ in trees:
            rs = runs[sched, who]
            med = {k: statistics.median(r[k] for r in rs) for k in ("cpu_s", "build_s", "simulate_s", "rss_mb")}
            cpus = ", ".join(f"{r['cpu_s']:.2f}" for r in rs)
            lines.append(f"| {sched} | {who} | {cpus} | {med['cpu_s']:.2f} | {med['build_s']:.2f} | "
                         f"{med['simulate_s']:.2f} | {med['rss_mb']:.0f} | {same} |")
    return "\n".join(lines) + "\n"


def child_wait(src: Path, args: list[str]) -> dict:
    """``python ARGS`` with ``PYTHONPATH=src`` in a fresh process: its last output line (JSON), plus its CPU
    seconds (user + system) and peak resident memory (MiB) of that very child (``os.wait4``)."""
    import tempfile

    env = {**os.environ, "PYTHONPATH": str(src), "OPTSCHED_DATA": str(data_root())}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, *args], env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{args[:3]}: exit {proc.returncode}: {err.read()[-500:]}")
        res = json.loads(out.read().strip().splitlines()[-1])
    res.update(cpu_s=usage.ru_utime + usage.ru_stime, rss_mb=usage.ru_maxrss / 1024)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20,000 jobs, one repeat; writes sim_speed_quick.md")
    ap.add_argument("--repeats", type=int, default=None, help="repeats per case (default 3; quick 1)")
    ap.add_argument("--jobs", type=int, default=None, help="jobs of the large case (default 100,000)")
    ap.add_argument("--load", type=float, default=130.0, help="jobs/hour of the large case (default 130)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compare", metavar="OTHER_SRC", default=None,
                    help="time the 100k case with this tree and with OTHER_SRC (another checkout's src folder)")
    ap.add_argument("--out", default=None, help="with --compare: also write the table to this file")
    ap.add_argument("--limit", action="store_true",
                    help="the minimal FIFO loop against simulate() on the large case (prints; writes nothing)")
    ap.add_argument("--million", action="store_true",
                    help="CPU s and peak memory per policy at --jobs (default 1,000,000) jobs, fresh processes")
    ap.add_argument("--policies", default=",".join(MILLION_POLICIES), help="with --million: comma-separated")
    ap.add_argument("--before", default=None, help="with --million: another checkout's src folder to compare")
    ap.add_argument("--table", action="store_true", help="with --million: each run also reads the per-job table")
    args = ap.parse_args(argv)
    if args.million:
        pols = ["fifo", "las"] if args.quick else [p for p in args.policies.split(",") if p]
        table = million(args.jobs or (20_000 if args.quick else 1_000_000), pols, args.repeats or 1,
                        Path(args.before).resolve() if args.before else None, args.table)
        print(table)
        if args.out:
            with atomic_open(args.out, "w", encoding="utf-8") as fh:
                fh.write(table)
        return 0
    if args.limit:
        print(limit(args.jobs or 100_000, args.load, args.repeats or 3))
        return 0
    if args.compare is not None:
        table = compare(Path(args.compare).resolve(), args.repeats or 3, args.jobs or 100_000, args.load, args.seed)
        print(table)
        if args.out:
            with atomic_open(args.out, "w", encoding="utf-8") as fh:
                fh.write(table)
        return 0
    reps = args.repeats or (1 if args.quick else 3)
    n_big = args.jobs or (20_000 if args.quick else 100_000)
    frame = load_philly()
    rows = []
    cases = [
        ("philly-128 (8 jobs/h, window 3000-4000)", 32, "round", reps, True,
         lambda: philly_workload(8.0, args.seed, frame=frame)),
        ("philly-128 (8 jobs/h, window 3000-4000)", 32, "event", reps, True,
         lambda: philly_workload(8.0, args.seed, frame=frame)),
        (f"philly-{n_big // 1000}k ({args.load:g} jobs/h, all tracked)", 500, "round", reps, False,
         lambda: replicate_philly(n_big, args.load, args.seed, frame=frame)),
        (f"philly-{n_big // 1000}k ({args.load:g} jobs/h, all tracked)", 500, "event", 1, False,
         lambda: replicate_philly(n_big, args.load, args.seed, frame=frame)),
    ]
    for name, servers, mode, r, stop, build in cases:
        print(f"{name} on {servers * 4} GPUs, {mode} ...", flush=True)
        m = measure(build, servers, mode, r, stop)
        print(f"  engine {m['wall_s']:.2f} s (runs {', '.join(f'{w:.2f}' for w in m['walls'])}), "
              f"{m['events']} events, {m['events_per_s']:,.0f} events/s, total {m['total_s']:.2f} s", flush=True)
        rows.append((name, servers * 4, mode, m))
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    lines = [
        "# Simulator speed (our simulator)" + (" (quick)" if args.quick else ""),
        "",
        f"Command: `.venv/bin/python benchmarks/sim_speed.py{' --quick' if args.quick else ''}`"
        f" (seed {args.seed}). Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}; load average after the run {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}"
        " (the machine is shared with other processes, so these are upper bounds on our engine's time).",
        "",
        "FIFO + consolidated placement, profiled constant iteration time (cross-server factor 1.25). Engine wall = "
        "the event loop plus building the per-job records (median of the repeats); total = workload build + "
        "simulate. Events = arrivals + completions + scheduling decisions.",
        "",
        "| case | GPUs | mode | jobs | repeats | engine wall (s) | total (s) | events | decisions | events/s |"
        " mean util. | avg JCT (h) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, gpus, mode, m in rows:
        lines.append(f"| {name} | {gpus} | {mode} | {m['jobs']:,} | {m['repeats']} | {m['wall_s']:.2f} | "
                     f"{m['total_s']:.2f} | {m['events']:,} | {m['decisions']:,} | {m['events_per_s']:,.0f} | "
                     f"{m['util']:.3f} | {m['avg_jct_h']:.2f} |")
    big = [m for name, g, mode, m in rows if g == 2000 and mode == "round"]
    if big and not args.quick:
        ok = "meets" if big[0]["total_s"] < 60 else "misses"
        lines += ["", f"Target (issue 5): 100,000 Philly jobs on 2,000 GPUs with FIFO in under 60 s: our simulator "
                      f"{ok} it in round-based mode ({big[0]['total_s']:.1f} s end to end, median of "
                      f"{big[0]['repeats']})."]
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / ("sim_speed_quick.md" if args.quick else "sim_speed.md")
    with atomic_open(out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
