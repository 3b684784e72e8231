"""Proving total-JCT optima: CP-SAT against the branch and bound (issue 16's 12-job target). OUR solvers' numbers.

Run: ``.venv/bin/python benchmarks/total_jct_exact.py [--quick] [--sizes 10,12,14] [--seeds K] [--time-limit S]``.

Instances: ``optsched generate total-jct --jobs N --seed S`` (:func:`optsched.generators.total_jct
.random_total_jct_instance`: paper 001's catalogue jobs on 2 servers x 4 GPUs, 10 ms units). Per instance, one
after the other (never two solvers at once, so that neither shares the cores): CP-SAT alone
(``total-jct-cpsat``, 2 workers) and the branch and bound with CP-SAT beside it (``total-jct-bnb``, its default
2 workers: the search in one thread, CP-SAT with one worker in another), each with the same wall-clock limit.

Per size: how many instances each proves within the limit, the median and largest wall time to the proof (the
limit when unproven), and how far the bounds are below the optimum (trivial bound, the search's root bound,
CP-SAT's bound at the limit). Writes ``docs/results/total_jct_exact.md``; ``--quick`` (sizes 8 and 10, 2 seeds,
20 s) writes to a temporary folder and prints the path, never a tracked file.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from optsched.demo import table  # noqa: E402
from optsched.exact.total_jct import solve_total_jct  # noqa: E402
from optsched.exact.total_jct_bnb import root_lower_bound, solve_total_jct_bnb  # noqa: E402
from optsched.generators.total_jct import random_total_jct_instance  # noqa: E402
from optsched.io import atomic_open  # noqa: E402
from optsched.result import SolveStatus  # noqa: E402


def run_one(n: int, seed: int, time_limit: float) -> dict:
    inst = random_total_jct_instance(n, seed)
    cp = solve_total_jct(inst, time_limit=time_limit, num_workers=2)
    bb = solve_total_jct_bnb(inst, time_limit=time_limit, num_workers=2, seed=0)
    proven = [r.objective for r in (cp, bb) if r.status == SolveStatus.OPTIMAL]
    if len(set(proven)) > 1:
        raise SystemExit(f"n={n} seed={seed}: the two methods prove different optima {proven}")
    return {"n": n, "seed": seed, "opt": proven[0] if proven else None,
            "best": min(r.objective for r in (cp, bb) if r.objective is not None),
            "trivial": inst.trivial_lower_bound(), "root": root_lower_bound(inst),
            "cp_ok": cp.status == SolveStatus.OPTIMAL, "cp_s": cp.runtime_s, "cp_bound": cp.lower_bound,
            "bb_ok": bb.status == SolveStatus.OPTIMAL, "bb_s": bb.runtime_s, "bb_bound": bb.lower_bound,
            "nodes": bb.info["nodes"], "proved_by": bb.info["proved_by"], "found_by": bb.info["found_by"]}


def _gap(bound, best) -> str:
    return "" if bound is None or not best else f"{100 * (1 - bound / best):.1f}%"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="benchmarks/total_jct_exact.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="sizes 8,10, 2 seeds, 20 s; writes to a temporary folder")
    ap.add_argument("--sizes", default="10,12,14", help="job counts, comma separated (default 10,12,14)")
    ap.add_argument("--seeds", type=int, default=4, help="instances per size, seeds 0..K-1 (default 4)")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per solver and instance (default 60)")
    args = ap.parse_args(argv)
    sizes = [8, 10] if args.quick else [int(x) for x in args.sizes.split(",")]
    seeds = 2 if args.quick else args.seeds
    tl = 20.0 if args.quick else args.time_limit
    t0 = time.perf_counter()
    rows = []
    total = len(sizes) * seeds
    for n in sizes:
        for s in range(seeds):
            r = run_one(n, s, tl)
            rows.append(r)
            print(f"[{len(rows)}/{total}] n={n} seed={s}: CP-SAT {'proved' if r['cp_ok'] else 'open'} "
                  f"{r['cp_s']:.1f} s, B&B {'proved' if r['bb_ok'] else 'open'} {r['bb_s']:.1f} s "
                  f"({r['nodes']} nodes, proved by {r['proved_by']})", file=sys.stderr, flush=True)
    wall = time.perf_counter() - t0
    summary = []
    for n in sizes:
        rs = [r for r in rows if r["n"] == n]
        summary.append([n, len(rs), sum(r["cp_ok"] for r in rs), f"{statistics.median(r['cp_s'] for r in rs):.1f}",
                        f"{max(r['cp_s'] for r in rs):.1f}", sum(r["bb_ok"] for r in rs),
                        f"{statistics.median(r['bb_s'] for r in rs):.1f}", f"{max(r['bb_s'] for r in rs):.1f}",
                        f"{statistics.median(100 * (1 - r['trivial'] / r['best']) for r in rs):.1f}%",
                        f"{statistics.median(100 * (1 - r['root'] / r['best']) for r in rs):.1f}%"])
    md = ["# Proving total-JCT optima: CP-SAT alone vs branch and bound with CP-SAT beside it", "",
          "OUR solvers on instances we generate (`optsched generate total-jct --jobs N --seed S`: paper 001's "
          "catalogue jobs, 2 servers x 4 GPUs, 10 ms units), never a paper's numbers. Both with 2 threads and a "
          f"{tl:g} s wall-clock limit per instance, run one after the other on a shared 2-core machine. "
          f"Reproduce: `.venv/bin/python benchmarks/total_jct_exact.py --sizes {','.join(map(str, sizes))} "
          f"--seeds {seeds} --time-limit {tl:g}` (this run: {wall:.0f} s wall).", "",
          "`proven`: optimal within the limit; times are wall seconds to the proof (the limit when unproven); "
          "`gap` columns: 1 - bound / best schedule found (median over the instances). The method is in "
          "`docs/formulations/total-jct.md`, \"Branch and bound\".", "",
          table(["jobs", "instances", "CP-SAT proven", "CP-SAT median s", "CP-SAT max s", "B&B proven",
                "B&B median s", "B&B max s", "gap trivial bound", "gap root bound"], summary), "",
          "## Per instance", "",
          table(["jobs", "seed", "optimum", "CP-SAT", "CP-SAT s", "CP-SAT bound gap", "B&B", "B&B s", "nodes",
                 "proved by", "best found by"],
                [[r["n"], r["seed"], r["opt"] if r["opt"] is not None else f"<= {r['best']}",
                  "proven" if r["cp_ok"] else "open", f"{r['cp_s']:.1f}", _gap(r["cp_bound"], r["best"]),
                  "proven" if r["bb_ok"] else "open", f"{r['bb_s']:.1f}", r["nodes"], r["proved_by"] or "",
                  r["found_by"]] for r in rows]), ""]
    out = (Path(tempfile.mkdtemp(prefix="total_jct_exact_")) if args.quick else ROOT / "docs" / "results") \
        / "total_jct_exact.md"
    with atomic_open(out, encoding="utf-8") as fh:
        fh.write("\n".join(md))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
