"""``exact-interval`` (no slot index) against the time-indexed ``exact`` on the default RAR-DDLS generator: OUR
solvers' numbers, not the paper's.

Run: ``.venv/bin/python benchmarks/rar_interval.py [--quick] [--medium] [--time-limit S] [--workers W]
[--write]``.

* 4-8 jobs, 2-4 servers, seeds 0-4 of ``optsched.generate("rar", jobs, servers, seed)``: how many
  ``exact-interval`` proves, its median and largest CPU seconds (process time, so that other programs on the
  machine count less), and on a subset (4 and 5 jobs, seeds 0-1) the time-indexed model's CPU seconds side by
  side;
* 24 and 32 jobs (servers = jobs / 4), seeds 0-1, ``--time-limit`` (default 60 s): proven or the certified gap,
  and which step found the best schedule (``--medium``: only these, e.g. with a longer limit). With ``--clock cpu``
  (the default) the limit is CPU time: ``--time-limit`` x ``--workers`` process CPU seconds (what the solve would
  use in that many seconds on as many free cores; ``solve_rar_interval(cpu_limit=...)``), so that the work done
  does not depend on the machine's load; ``--clock wall`` gives a wall-clock limit (our 60-s wall runs got 19-20 CPU
  s at a load of 13-20). Both CPU and wall seconds are reported.

The report goes to standard output; ``--write`` (never with ``--quick``) also writes
``docs/results/rar_interval.md`` atomically.

``--probe JOBS,SERVERS,SEED --model r|r1|time-indexed --horizon H`` runs one model alone on the default generator's
instance, for long offline runs that ask which side of an open gap is weak (nothing written): ``r``, the relaxation
R over [0, H] (proven infeasible: the optimum is above H); ``time-indexed``, the exact time-indexed model over
[0, H) (a solution: a schedule with makespan at most H, scored by the evaluator; infeasible: the optimum is above
H); ``r1``, the restriction R1 minimised over [0, H] with the makespan at least ``--min-makespan``, from the
complete solution of the library's best schedule (R1's proven optimum is the best makespan of schedules with at
most two split jobs per server at a time; a solution is a schedule, scored by the evaluator).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

import optsched  # noqa: E402
from optsched.demo import table  # noqa: E402
from optsched.exact import _cpsat  # noqa: E402
from optsched.exact.rar_cpsat import build_model, read_schedule, solve_rar_cpsat  # noqa: E402
from optsched.exact.rar_interval import build_interval_model, solve_rar_interval  # noqa: E402
from optsched.exact.rar_lns import hint_r1_solution  # noqa: E402
from optsched.io import atomic_open  # noqa: E402

OUT_MD = ROOT / "docs" / "results" / "rar_interval.md"


def timed(func, *args, **kw):
    c0 = time.process_time()
    res = func(*args, **kw)
    return res, time.process_time() - c0


def small(quick: bool, workers: int, time_limit: float) -> tuple[str, list[list[object]]]:
    grid = [(n, s, k) for n in ((4, 6) if quick else (4, 5, 6, 7, 8)) for s in ((2,) if quick else (2, 3, 4))
            for k in (range(1) if quick else range(5))]
    rows, cpu, proven, side = [], [], 0, []
    for n, s, k in grid:
        inst = optsched.generate("rar", jobs=n, servers=s, seed=k)
        res, c = timed(solve_rar_interval, inst, num_workers=workers, time_limit=time_limit)
        cpu.append(c)
        proven += res.status.value == "optimal"
        if n <= 5 and k <= 1:
            ref, c_ref = timed(solve_rar_cpsat, inst, num_workers=workers, time_limit=time_limit)
            side.append([inst.name, res.objective, ref.objective, ref.status.value, round(c, 3), round(c_ref, 2)])
            if ref.status.value == "optimal" and res.status.value == "optimal" and ref.objective != res.objective:
                raise SystemExit(f"{inst.name}: exact-interval {res.objective} != exact {ref.objective}")
    rows.append([len(grid), proven, round(statistics.median(cpu), 3), round(max(cpu), 3)])
    text = ("4-8 jobs, 2-4 servers, seeds 0-4 (default generator):\n\n"
            + table(["instances", "proven optimal", "median CPU s", "largest CPU s"], rows)
            + "\n\nSide by side with the time-indexed model (4-5 jobs, seeds 0-1):\n\n"
            + table(["instance", "exact-interval", "exact", "exact status", "interval CPU s", "exact CPU s"], side))
    return text, rows


def medium(quick: bool, workers: int, time_limit: float, clock: str = "cpu") -> str:
    rows = []
    for n in ((24,) if quick else (24, 32)):
        for k in (range(1) if quick else range(2)):
            inst = optsched.generate("rar", jobs=n, servers=n // 4, seed=k)
            w0 = time.perf_counter()
            limit = {"cpu_limit": time_limit * workers} if clock == "cpu" else {"time_limit": time_limit}
            res, c = timed(solve_rar_interval, inst, num_workers=workers, close_gap=False, **limit)
            gap = res.objective / res.lower_bound - 1
            rows.append([inst.name, res.objective, res.lower_bound, f"{gap:.1%}", res.status.value, round(c, 1),
                         round(time.perf_counter() - w0, 1), res.info.get("incumbent", {}).get("algorithm"),
                         res.info.get("best_by")])
    what = (f"CPU limit {time_limit * workers:g} s ({time_limit:g} s x {workers} workers, process CPU time)"
            if clock == "cpu" else f"wall-clock limit {time_limit:g} s")
    return (f"24-32 jobs, {what}, {workers} CP-SAT worker(s):\n\n"
            + table(["instance", "best", "lower bound", "gap", "status", "CPU s", "wall s", "first incumbent",
                     "best found by"],
                    rows))


def probe(spec: str, model: str, horizon: int, min_makespan: int, workers: int, time_limit: float) -> str:
    """One model alone on ``optsched.generate("rar", jobs, servers, seed)`` (module docstring, ``--probe``)."""
    jobs, servers, seed = (int(x) for x in spec.split(","))
    inst = optsched.generate("rar", jobs=jobs, servers=servers, seed=seed)
    load0 = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    c0, w0 = time.process_time(), time.perf_counter()
    if model == "time-indexed":
        m = build_model(inst, horizon)
    else:
        m = build_interval_model(inst, horizon, restriction=model == "r1", min_makespan=min_makespan,
                                 symmetry=model != "r1")
        if model == "r1":  # the library's best schedule as a complete solution of R1 (if R1 holds it)
            best = optsched.load_schedule(ROOT / "src" / "optsched" / "instances" / "best" / f"{inst.name}.json")
            hint_r1_solution(inst, best, m, _cpsat.Params(time_limit=min(60.0, time_limit), num_workers=1))
    run = _cpsat.solve(m.model, _cpsat.Params(time_limit=time_limit, num_workers=workers, seed=0))
    out = (f"{inst.name} {model} horizon {horizon}: {run.status.value} (CP-SAT {run.cpsat_status}), objective "
           f"{run.objective}, bound {run.bound}; {time.process_time() - c0:.1f} CPU s, "
           f"{time.perf_counter() - w0:.1f} wall s, {workers} worker(s), load {load0}")
    if run.found:
        sched = read_schedule(m, run, inst, algorithm="probe")
        try:
            out += f"; evaluator: {optsched.evaluate(inst, sched).makespan}"
        except optsched.ScheduleError as exc:  # R's schedules may be infeasible (contention)
            out += f"; evaluator rejects it: {exc}"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few instances, 10 s limits, nothing written")
    ap.add_argument("--time-limit", type=float, default=None, help="seconds per solve (default 60; quick 10)")
    ap.add_argument("--workers", type=int, default=1, help="CP-SAT workers (default 1)")
    ap.add_argument("--write", action="store_true", help="write docs/results/rar_interval.md")
    ap.add_argument("--medium", action="store_true", help="only the 24-32-job instances, nothing written")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="24-32 jobs: limit in process CPU seconds (time limit x workers; default) or wall seconds")
    ap.add_argument("--probe", metavar="JOBS,SERVERS,SEED", default=None,
                    help="run one model (--model, --horizon) alone on that instance; nothing written")
    ap.add_argument("--model", choices=("r", "r1", "time-indexed"), default="r", help="with --probe")
    ap.add_argument("--horizon", type=int, default=None, help="with --probe: the model's horizon")
    ap.add_argument("--min-makespan", type=int, default=0, help="with --probe --model r1: the makespan's floor")
    args = ap.parse_args(argv)
    if args.probe:
        if args.horizon is None:
            ap.error("--probe needs --horizon")
        print(probe(args.probe, args.model, args.horizon, args.min_makespan, args.workers,
                    args.time_limit or 600.0))
        return 0
    tl = args.time_limit or (10.0 if args.quick else 60.0)
    if args.medium:
        print(medium(args.quick, args.workers, tl, args.clock))
        return 0
    text, _ = small(args.quick, args.workers, tl)
    report = ("# exact-interval vs the time-indexed model (RAR-DDLS)\n\nOUR solvers' numbers on a shared, loaded "
              "2-core machine (CPU seconds are process time). Reproduce: `.venv/bin/python "
              f"benchmarks/rar_interval.py --time-limit {tl:g} --workers {args.workers} --clock {args.clock} "
              "--write`.\n\n"
              + text + "\n\n" + medium(args.quick, args.workers, tl, args.clock) + "\n")
    print(report)
    if args.write and not args.quick:
        with atomic_open(OUT_MD) as fh:
            fh.write(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
