"""Which side of the total-JCT gap is weak (issue 23)? OUR solvers' numbers on instances we generate.

Run: ``.venv/bin/python benchmarks/total_jct_ground_truth.py calibrate --sizes 14 --seed-list 0,1,2,3
[--units U] [--write | --out FILE]`` or ``... neighbourhood --seed-list 0,1 [--radius R] [--units U]
[--write | --out FILE]`` or ``... probe --seed-list 0,1 [--units U] [--write | --out FILE]``.

Instances: ``optsched generate total-jct --jobs N --seed S`` (paper 001's catalogue jobs, 2 servers x 4 GPUs,
10 ms units).

* ``calibrate``: on sizes the branch and bound still proves, the upper-side pipeline from the greedy schedule
  alone (large-neighbourhood search, 200 rounds of 8 jobs at 0.3 deterministic units each, then the
  server-assignment descent, 2 units per server, at most 400 moves) and the Lagrangian bound (2,000 slots, 1,000
  steps), each against the optimum the branch and bound proves (one worker, ``--units`` deterministic units,
  Lagrangian node bound on 2,000 slots). Tells how far each side of the 20-job gap is from the truth where the
  truth is known.
* ``neighbourhood``: at 20 jobs, from the library's best schedule (``src/optsched/instances/best``),
  ``partition_neighbourhood`` with ``--radius`` (every partition within that many moved jobs, each server solved
  alone by the branch and bound for ``--units`` units; formulation, "Partition neighbourhood").
* ``probe``: at 20 jobs, on the library best schedule's partition (each server solved alone, ``--units`` units),
  how much two cheap candidate lower bounds for a search over partitions give up there (formulation, "Two cheap
  partition bounds, measured"): the superadditive bound V(prefix on each server) + V(suffix on each server) of
  the jobs split at depth k of the impact order (g_j d_j decreasing), an upper estimate of what a
  Russian-doll bound could reach along the best partition; and the pairwise bound per server (GPU fluid, wide jobs
  on one machine, release plus duration, each with a share of the weight), the best over a grid of shares.

CPU seconds are this process's (``time.process_time``). ``--write`` replaces this mode's section of its sizes and
seeds in ``docs/results/total_jct_ground_truth.md`` (other sections kept); without it (or with ``--out``) no
tracked file is written.
"""

from __future__ import annotations

import argparse
import itertools
import math
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from optsched.algorithms.total_jct import greedy_total_jct  # noqa: E402
from optsched.exact.total_jct_assign import (  # noqa: E402
    ServerOptima,
    assignment_descent,
    partition_neighbourhood,
    partition_of,
)
from optsched.exact.total_jct_bnb import _fluid, solve_total_jct_bnb  # noqa: E402
from optsched.exact.total_jct_lns import choice_of_schedule, lns_total_jct  # noqa: E402
from optsched.exact.total_jct_lp import lagrangian_lower_bound  # noqa: E402
from optsched.generators.total_jct import random_total_jct_instance  # noqa: E402
from optsched.io import atomic_open, load_schedule  # noqa: E402
from optsched.problems.total_jct import TotalJctInstance, choice_cost  # noqa: E402
from optsched.result import SolveStatus  # noqa: E402

OUT = ROOT / "docs" / "results" / "total_jct_ground_truth.md"
HEAD = ("# Total JCT: which side of the gap is weak\n\nOUR solvers on instances we generate (`optsched generate "
        "total-jct --jobs N --seed S`: paper 001's catalogue jobs, 2 servers x 4 GPUs, 10 ms units), never a "
        "paper's numbers; a shared 2-core machine; CPU seconds of the run's process. Written by "
        "`benchmarks/total_jct_ground_truth.py` (its docstring says what each mode runs); one section per run "
        "(a run replaces the section of its own mode, sizes and seeds).\n")


def calibrate(n: int, seed: int, units: float) -> list[str]:
    inst = random_total_jct_instance(n, seed)
    t = time.process_time()
    g = greedy_total_jct(inst)
    lns = lns_total_jct(inst, g, rounds=200, window=8, round_limit=0.3, seed=0)
    assert lns.schedule is not None
    de = assignment_descent(inst, choice_of_schedule(inst, lns.schedule), units=2, evaluations=400)
    t_up = time.process_time() - t
    t = time.process_time()
    lag = lagrangian_lower_bound(inst, slots=2000, iterations=1000, target=de.objective)
    t_lag = time.process_time() - t
    t = time.process_time()
    bb = solve_total_jct_bnb(inst, time_limit=None, deterministic_limit=units, num_workers=1, seed=0,
                             lagrangian_slots=2000)
    t_bb = time.process_time() - t
    proven = bb.status == SolveStatus.OPTIMAL
    opt = bb.objective if proven else None

    def gap(x: float | None) -> str:
        return "" if opt is None or x is None else f"{100 * (x / opt - 1):+.2f}%"

    return [str(n), str(seed), str(choice_cost(inst, g)), str(lns.objective), str(de.objective), f"{t_up:.0f}",
            str(lag), f"{t_lag:.0f}", str(bb.objective), str(bb.lower_bound), "proven" if proven else "open",
            f"{t_bb:.0f}", gap(de.objective), gap(lag)]


CAL_COLS = ["jobs", "seed", "greedy", "LNS", "LNS + descent", "upper CPU s", "Lagrangian bound", "bound CPU s",
            "B&B schedule", "B&B bound", "B&B", "B&B CPU s", "upper vs optimum", "bound vs optimum"]


def neighbourhood(seed: int, radius: int, units: float) -> list[str]:
    inst = random_total_jct_instance(20, seed)
    sched = load_schedule(ROOT / "src" / "optsched" / "instances" / "best" / f"total-jct-n20-seed{seed}.json")
    t = time.process_time()
    res = partition_neighbourhood(inst, choice_of_schedule(inst, sched), radius=radius, units=units)
    i = res.info
    return ["20", str(seed), str(i["start_cost"]), str(radius), str(i["partitions"]), str(i["solves"]),
            str(i["unproven"]), str(res.objective), str(i["best_radius"]), f"{time.process_time() - t:.0f}"]


NB_COLS = ["jobs", "seed", "start (library best)", "radius", "partitions", "per-server solves", "unproven",
           "best", "moves of the best", "CPU s"]


def pairwise_server_bound(inst: TotalJctInstance, S: set[int], cap: int, share: dict[int, tuple[float, float]]
                          ) -> float:
    """A lower bound on the optimum of one server of ``cap`` GPUs alone with the jobs ``S`` (formulation, "Two
    cheap partition bounds, measured"): job j's weight split as a w_j (GPU fluid) + b w_j (wide jobs, 2 g_j > cap,
    on one machine, Smith's order) + (1 - a - b) w_j (release plus duration), (a, b) = ``share[g_j]``."""
    J = inst.jobs
    d = {j: min(m.duration for m in J[j].modes if len(m.shape) == 1 and m.shape[0] <= cap) for j in S}
    a = {j: J[j].weight * share[J[j].gpus][0] for j in S}
    b = {j: J[j].weight * share[J[j].gpus][1] if 2 * J[j].gpus > cap else 0.0 for j in S}
    total = sum((J[j].weight - a[j] - b[j]) * (J[j].release + d[j]) for j in S)
    fl = [j for j in S if d[j] > 0]  # zero-length jobs: out of the fluid and the machine (shares a, b count 0)
    work = {j: J[j].gpus * d[j] for j in fl}
    order = sorted(fl, key=lambda j: (-a[j] / work[j], j))
    total += _fluid(order, work, a, d, 0, [], cap)  # type: ignore[arg-type]
    t = 0
    for j in sorted((j for j in fl if b[j] > 0), key=lambda j: (-b[j] / d[j], j)):
        t += d[j]
        total += b[j] * t
    return total


SHARES = [x / 4 for x in range(5)]


def probe(seed: int, units: float, radius: int) -> list[list[str]]:
    inst = random_total_jct_instance(20, seed)
    sched = load_schedule(ROOT / "src" / "optsched" / "instances" / "best" / f"total-jct-n20-seed{seed}.json")
    t = time.process_time()
    so = ServerOptima(inst, units=units)
    part = partition_of(inst, choice_of_schedule(inst, sched), so.fits)
    caps = [s.gpus for s in inst.cluster.servers]
    V = [so.value(m, frozenset(part[m])) for m in range(len(caps))]
    d1 = [min(m.duration for m in j.modes if len(m.shape) == 1) for j in inst.jobs]
    order = sorted(range(inst.n_jobs), key=lambda i: (-d1[i] * inst.jobs[i].gpus, i))
    sup = []
    for k in range(4, inst.n_jobs, 4):
        pre = set(order[:k])
        sup.append(f"{k}: " + str(sum(so.value(m, frozenset(part[m] & pre)) + so.value(m, frozenset(part[m] - pre))
                                      for m in range(len(caps)))))
    best, arg = -1.0, None
    for a1, a3, b3, a4, b4 in itertools.product(SHARES, repeat=5):
        if a3 + b3 > 1 or a4 + b4 > 1:
            continue
        share = {1: (a1, 0.0), 3: (a3, b3), 4: (a4, b4)}
        v = sum(pairwise_server_bound(inst, part[m], caps[m], share) for m in range(len(caps)))
        if v > best:
            best, arg = v, share
    assert arg is not None
    per = [pairwise_server_bound(inst, part[m], caps[m], arg) for m in range(len(caps))]
    # the landscape: every partition within `radius` moved jobs (to a server where the job fits alone)
    where = {i: m for m in range(len(caps)) for i in part[m]}
    vals = []
    for r in range(radius + 1):
        for X in itertools.combinations(range(inst.n_jobs), r):
            for dest in itertools.product(*[[m for m in so.fits[i] if m != where[i]] for i in X]):
                p2 = [set(x) for x in part]
                for i, m in zip(X, dest):
                    p2[where[i]].discard(i)
                    p2[m].add(i)
                vals.append(sum(so.value(m, frozenset(p2[m])) for m in range(len(caps))))
    best_v = min(vals)
    within = "; ".join(f"{x:g} %: {sum(v <= best_v * (1 + x / 100) for v in vals)}" for x in (0.2, 0.5, 1, 2, 5))
    return [["20", str(seed), f"{sum(V)} ({' + '.join(map(str, V))})", str(so.unproven), "; ".join(sup),
             f"{math.ceil(best)} ({' + '.join(str(math.ceil(x)) for x in per)})",
             ", ".join(f"g={g}: {x[0]:g}/{x[1]:g}" for g, x in arg.items()), str(len(vals)), str(best_v), within,
             str(so.unproven), f"{time.process_time() - t:.0f}"]]


PROBE_COLS = ["jobs", "seed", "best partition (per server)", "unproven", "superadditive at depth k",
              "pairwise bound (per server)", "best shares (fluid/machine)", "partitions within radius",
              "their least value", "how many within x % of it", "unproven (all)", "CPU s"]


def md_table(cols: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="benchmarks/total_jct_ground_truth.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("calibrate", "neighbourhood", "probe"))
    ap.add_argument("--sizes", default="14", help="calibrate: job counts, comma separated (default 14)")
    ap.add_argument("--seed-list", default="0,1", help="seeds, comma separated (default 0,1)")
    ap.add_argument("--units", type=float, default=None,
                    help="deterministic units: of the proof (calibrate, default 60) or per server (neighbourhood, "
                         "default 5)")
    ap.add_argument("--radius", type=int, default=2, help="neighbourhood, probe: moved jobs at most (default 2)")
    ap.add_argument("--write", action="store_true", help=f"replace this run's section of {OUT.relative_to(ROOT)}")
    ap.add_argument("--out", type=Path, default=None, help="write the page here instead (never a tracked file)")
    args = ap.parse_args(argv)
    seeds = [int(x) for x in args.seed_list.split(",")]
    cmd = ".venv/bin/python benchmarks/total_jct_ground_truth.py " + " ".join(sys.argv[1:] if argv is None else argv)
    cmd = re.sub(r" --out \S+", "", cmd.replace(" --write", ""))
    if args.mode == "calibrate":
        units = 60.0 if args.units is None else args.units
        sizes = [int(x) for x in args.sizes.split(",")]
        rows = []
        for n in sizes:
            for s in seeds:
                rows.append(calibrate(n, s, units))
                print(" | ".join(rows[-1]), flush=True)
        title = f"## calibrate: {','.join(map(str, sizes))} jobs, seeds {args.seed_list}"
        body = md_table(CAL_COLS, rows)
        note = ("Upper side: greedy, then LNS, then the descent (no exact solve). `upper vs optimum`, `bound vs "
                "optimum`: relative to the proven optimum (blank when the branch and bound did not prove it).\n")
    elif args.mode == "probe":
        units = 20.0 if args.units is None else args.units
        rows = [r for s in seeds for r in probe(s, units, args.radius)]
        for r in rows:
            print(" | ".join(r), flush=True)
        title = f"## probe: 20 jobs, seeds {args.seed_list}, radius {args.radius}"
        body = md_table(PROBE_COLS, rows)
        note = ("On the library best schedule's partition (`unproven` 0: every server value is its proven optimum "
                "V). `superadditive at depth k`: V(first k jobs of the impact order on each server) + V(the rest on "
                "each server), at least what a Russian-doll bound of a search over partitions gives at that depth "
                "on this path. `pairwise bound`: the best over shares in {0, 1/4, ..., 1} per GPU count (formulation, "
                "\"Two cheap partition bounds, measured\"). Both are below the partition's value by the margin a "
                "search over partitions would have to close with exact solves. `how many within x %`: of the "
                "partitions within `radius` moved jobs, how many cost at most (1 + x %) times the least of them: a "
                "search over partitions whose bound is x % below a partition's value solves at least those "
                "exactly.\n")
    else:
        units = 5.0 if args.units is None else args.units
        rows = []
        for s in seeds:
            rows.append(neighbourhood(s, args.radius, units))
            print(" | ".join(rows[-1]), flush=True)
        title = f"## neighbourhood: 20 jobs, seeds {args.seed_list}, radius {args.radius}"
        body = md_table(NB_COLS, rows)
        note = ("With `unproven` 0, no single-server schedule whose partition moves at most `radius` jobs of the "
                "start's costs less than `best` (formulation, \"Partition neighbourhood\"); a neighbourhood, not "
                "the optimum.\n")
    section = f"{title}\n\nReproduce: `{cmd}`.\n\n{note}\n{body}"
    if args.write:
        path = OUT
    else:
        path = args.out or Path(tempfile.mkdtemp(prefix="total_jct_ground_truth_")) / "total_jct_ground_truth.md"
    old = path.read_text(encoding="utf-8") if path.exists() else HEAD
    parts = re.split(r"(?m)^(?=## )", old)
    head, secs = parts[0], [p for p in parts[1:] if not p.startswith(title + "\n")]
    text = head.rstrip("\n") + "\n\n" + "\n".join(p.rstrip("\n") + "\n" for p in sorted(secs + [section]))
    with atomic_open(path) as f:
        f.write(text)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
