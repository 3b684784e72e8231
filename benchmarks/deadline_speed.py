"""Issue 29 for the deadline family: CPU time of every deadline policy beside LAS and SRTF on one 16-GPU
deadline workload of ``--jobs`` jobs (paper 003's generator, ``deadline_workload``: 4 x 4 GPUs, ring model,
``--lam`` jobs/hour, window = jobs / lam hours, seed 0), each run in a fresh process of this script (its
``simulate()`` call's CPU seconds, ``time.process_time``), policies run one after another.

Commands (from the repository root):

* ``.venv/bin/python benchmarks/deadline_speed.py [--jobs 100000] [--lam 2] [--policies las,srtf,themis,...]
  [--base-src DIR] [--out FILE]``: prints a markdown table (``--out``: also writes it, atomically); with
  ``--base-src`` (the ``src`` folder of another checkout, e.g. ``git archive BASE src | tar -x -C DIR``) every
  policy runs on both sides, base first, and the table gives both and their ratio.
* ``--quick``: 5,000 jobs.

Every number is OUR simulator's on a shared machine (timings are noisy: compare ratios measured in one run);
none is a paper's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ("las", "srtf", "edf", "deadline-fifo", "themis", "drs", "norm", "elasticflow", "elasticflow-noadmit",
            "edf-elastic", "edf-admission", "gandiva-ts", "elasticflow-fixed")


def child(jobs: int, lam: float, policy: str) -> None:
    import time

    import optsched
    from optsched.generators.deadline import deadline_workload
    from optsched.sim import simulate

    wl = deadline_workload(lam, jobs / lam, seed=0)
    t = time.process_time()
    r = simulate(wl, scheduler=policy)
    dt = time.process_time() - t
    print(json.dumps({"policy": policy, "jobs": len(wl), "cpu_s": dt, "r_trace": r.summary["r_trace"],
                      "src": str(Path(optsched.__file__).parent.parent)}))


def run(src: Path, jobs: int, lam: float, policy: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, __file__, "--child", str(jobs), str(lam), policy], env=env,
                         capture_output=True, text=True, check=True)
    row = json.loads(out.stdout.strip().splitlines()[-1])
    if Path(row["src"]).resolve() != src.resolve():
        raise SystemExit(f"the child imported optsched from {row['src']}, not {src}")
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=100_000)
    ap.add_argument("--lam", type=float, default=2.0, help="arrivals per hour (default 2)")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--base-src", default=None, help="the src folder of a base checkout to run beside this one")
    ap.add_argument("--quick", action="store_true", help="5,000 jobs")
    ap.add_argument("--out", default=None, help="also write the table to this file")
    args = ap.parse_args(argv)
    jobs = 5000 if args.quick else args.jobs
    sides = ([("base", Path(args.base_src))] if args.base_src else []) + [("this", ROOT / "src")]
    rows: dict[str, dict[str, dict]] = {}
    for p in args.policies.split(","):
        for name, src in sides:
            rows.setdefault(p, {})[name] = r = run(src, jobs, args.lam, p)
            print(f"{p} {name}: {r['cpu_s']:.2f} CPU-s", file=sys.stderr, flush=True)
    ref = {name: rows["srtf"][name]["cpu_s"] for name, _ in sides} if "srtf" in rows else None
    head = "| policy | jobs | " + " | ".join(f"{n} CPU s" for n, _ in sides)
    head += (" | this / base" if args.base_src else "") + (" | " + " | ".join(f"{n} x SRTF" for n, _ in sides)
                                                          if ref else "") + " | deadline ratio |"
    cmd = (f".venv/bin/python benchmarks/deadline_speed.py --jobs {jobs} --lam {args.lam:g} --policies "
           f"{args.policies}" + (" --base-src BASE/src" if args.base_src else ""))
    lines = [f"Deadline family on 16 GPUs (4 x 4), `deadline_workload(lam={args.lam:g}, window={jobs}/lam h, "
             f"seed 0)`; OUR simulator's CPU seconds of `simulate()`, one fresh process per run. Produced by "
             f"`{cmd}`.", "", head,
             "|" + "---|" * (head.count("|") - 1)]
    for p, by in rows.items():
        cells = [p, str(next(iter(by.values()))["jobs"]), *(f"{by[n]['cpu_s']:.2f}" for n, _ in sides)]
        if args.base_src:
            cells.append(f"{by['this']['cpu_s'] / by['base']['cpu_s']:.2f}")
        if ref:
            cells += [f"{by[n]['cpu_s'] / ref[n]:.1f}" for n, _ in sides]
        cells.append(f"{by['this']['r_trace']:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        sys.path.insert(0, str(ROOT / "src"))
        from optsched.io import atomic_open

        with atomic_open(Path(args.out), encoding="utf-8") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), float(sys.argv[3]), sys.argv[4])
        raise SystemExit(0)
    raise SystemExit(main())
