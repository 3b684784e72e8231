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
from optsched.exact.rar_cpsat import solve_rar_cpsat  # noqa: E402
from optsched.exact.rar_interval import solve_rar_interval  # noqa: E402
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few instances, 10 s limits, nothing written")
    ap.add_argument("--time-limit", type=float, default=None, help="seconds per solve (default 60; quick 10)")
    ap.add_argument("--workers", type=int, default=1, help="CP-SAT workers (default 1)")
    ap.add_argument("--write", action="store_true", help="write docs/results/rar_interval.md")
    ap.add_argument("--medium", action="store_true", help="only the 24-32-job instances, nothing written")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="24-32 jobs: limit in process CPU seconds (time limit x workers; default) or wall seconds")
    args = ap.parse_args(argv)
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
