"""Run the benchmark suites: ``python -m benchmarks [--quick] [--jobs N] [NAME ...]``.

Suites run side by side, ``--jobs`` at a time (default: the machine's cores), each in its own process with its
output kept in a log and printed when it ends; the suites that measure wall time (:data:`SOLO`) run afterwards,
one at a time, on an otherwise idle machine, so that no other suite skews their timings.
"""

from __future__ import annotations

import argparse
import os
import pkgutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

HERE = Path(__file__).resolve().parent
# suites whose numbers are timings: never run beside another suite
SOLO = ("sim_speed", "sweep_scaling", "bad_inputs", "gavel", "rl", "policy_speed")


def suites() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(HERE)]) if not m.name.startswith("_"))


def _run(name: str, quick: bool, logs: Path) -> tuple[str, int, float, str]:
    t0 = time.perf_counter()
    log = logs / f"{name}.log"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(HERE.parent / "src"),
                                                                     os.environ.get("PYTHONPATH", "")])))
    with open(log, "w", encoding="utf-8") as fh:
        rc = subprocess.call([sys.executable, "-m", f"benchmarks.{name}", *(["--quick"] if quick else [])],
                             cwd=HERE.parent, stdout=fh, stderr=subprocess.STDOUT, env=env)
    return name, rc, time.perf_counter() - t0, log.read_text(encoding="utf-8", errors="replace")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help=f"suites to run (default all: {', '.join(suites())})")
    ap.add_argument("--quick", action="store_true", help="reduced sizes, for a smoke run (outputs *_quick, untracked)")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                    else (os.cpu_count() or 1), help="suites at once (default: the cores)")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.names) - set(suites()))
    if unknown:
        ap.error(f"unknown suite(s) {unknown} (known: {', '.join(suites())})")
    names = args.names or suites()
    parallel = [n for n in names if n not in SOLO]
    solo = [n for n in names if n in SOLO]
    failed: list[str] = []
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="optsched-bench-") as d:
        logs = Path(d)

        def report(name: str, rc: int, wall: float, text: str) -> None:
            print(f"== benchmarks/{name}.py {'--quick ' if args.quick else ''}(exit {rc}, {wall:.1f} s)\n{text}",
                  flush=True)
            if rc:
                failed.append(name)

        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futs = [pool.submit(_run, n, args.quick, logs) for n in parallel]
            for f in as_completed(futs):
                report(*f.result())
        for n in solo:
            report(*_run(n, args.quick, logs))
    print(f"== {len(names)} suites in {time.perf_counter() - t_all:.1f} s"
          + (f"; failed: {', '.join(failed)}" if failed else ""), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
