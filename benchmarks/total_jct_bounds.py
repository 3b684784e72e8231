"""Total JCT at the papers' size: best schedule and certified lower bound per instance (issue 23). OUR solvers.

Run: ``.venv/bin/python benchmarks/total_jct_bounds.py [--sizes 20,40,100] [--seeds 2 | --seed-list 1] [--bnb-units U]
[--lns-rounds R] [--descent-evaluations E] [--descent-units U] [--slots N]
[--start-slots N] [--lag-iterations K] [--spread-slots N] [--spread-iterations K] [--cg-rounds K]
[--cg-nodes N] [--split-rounds K] [--split-weights first|even|gpus] [--write] [--library]``.

Instances: ``optsched generate total-jct --jobs N --seed S``. Per instance, one step after the other:

1. the branch and bound (``total-jct-bnb``, one worker: the search alone) for ``--bnb-units`` deterministic
   units (10,000 nodes each): a schedule and its root bound;
2. large-neighbourhood search with CP-SAT (``optsched.exact.total_jct_lns``, windows of 8 jobs, 0.3
   deterministic units per round) from that schedule for ``--lns-rounds`` rounds (upper side);
3. the server-assignment descent (``optsched.exact.total_jct_assign``: moves of one job and swaps of two
   between servers, each server re-solved alone by the branch and bound for ``--descent-units`` units) from the
   better of the two, for at most ``--descent-evaluations`` moves (upper side);
4. the time-slot LP bound and the start-slot LP bound (``optsched.exact.total_jct_lp``, both dual-certified;
   lower side);
5. the Lagrangian bound (``optsched.exact.total_jct_lp.LagrangianBound``: the time-slot LP's duals, then
   ``--lag-iterations`` subgradient steps towards the best schedule's cost; lower side);
6. the spread bounds (``optsched.exact.total_jct_assign.spread_bounds``: per job with a multi-server mode, the
   Lagrangian bound on ``--spread-slots`` slots with ``--spread-iterations`` steps of the instance in which that job
   keeps only its multi-server modes). The jobs whose bound reaches the best schedule cannot improve on it by
   running over several servers; when that holds for every job, the optimum is the best schedule or the best
   single-server schedule, which the server decomposition reduces to the best partition.
7. with ``--cg-rounds`` K > 0 (off by default: at 20 jobs it takes tens of CPU minutes), the column-generation
   bound on single-server schedules (``optsched.exact.total_jct_cg.cg_lower_bound``: K rounds, ``--cg-nodes``
   nodes per pricing search, seeded with the descent's partition, first priced at each job's least priced run under
   the Lagrangian bound's slot prices); then min(that bound, every spread bound) is a
   bound too (formulation, "Spread jobs"), and counts towards the best bound.
8. with ``--split-rounds`` K >= 0 (off by default), the combined bound of the jobs whose spread bound stays below
   min(best schedule, the best bound so far or the CG bound) (``optsched.exact.total_jct_cg.spread_split_bound``): per
   multi-server shape of such a job, the Lagrangian bound (twice ``--spread-slots`` slots) of the instance in which it
   keeps only that shape and, while that is below, K rounds of the column-generation bound of its split instance
   (``--split-weights``: the part weights; ``even`` puts the job's weight on every part); per pair of such jobs, the
   Lagrangian bound of both spread (formulation, "Spread jobs, split"). It counts towards the best bound.

Reports per instance the best schedule (re-scored by the evaluator), each bound, the best bound, the gap
(best schedule / best bound - 1) and the CPU seconds of this process (its threads included). Every step has a
deterministic limit, so the numbers do not depend on the machine's load (only the CPU seconds do). Prints the table;
``--write`` writes this run's section of ``docs/results/total_jct_bounds.md`` (its sizes and seeds; the other sections
are kept); ``--library`` offers each best schedule and bound to the bundled library record. Without them no tracked
file changes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from optsched.demo import table  # noqa: E402
from optsched.evaluators.total_jct import check_schedule  # noqa: E402
from optsched.exact.total_jct_assign import assignment_descent, spread_bounds  # noqa: E402
from optsched.exact.total_jct_bnb import solve_total_jct_bnb  # noqa: E402
from optsched.exact.total_jct_cg import SPLIT_WEIGHTS, cg_lower_bound, spread_split_bound  # noqa: E402
from optsched.exact.total_jct_lns import choice_of_schedule, lns_total_jct  # noqa: E402
from optsched.exact.total_jct_lp import LagrangianBound, start_lp_lower_bound  # noqa: E402
from optsched.generators.total_jct import random_total_jct_instance  # noqa: E402
from optsched.io import atomic_open  # noqa: E402


def run_one(n: int, seed: int, bnb_units: float, lns_rounds: int, slots: int, start_slots: int,
            lag_iterations: int, descent_evaluations: int = 400, descent_units: float = 1.0,
            spread_slots: int = 1000, spread_iterations: int = 300, cg_rounds: int = 0,
            cg_nodes: int = 400_000, split_rounds: int = -1, split_weights: str = "even") -> dict:
    c0 = time.process_time()
    inst = random_total_jct_instance(n, seed)
    bb = solve_total_jct_bnb(inst, time_limit=None, deterministic_limit=bnb_units, num_workers=1, seed=0)
    c1 = time.process_time()
    if bb.status.value == "optimal":
        lns_obj, lp, slp, lag, c2, c3, c4, c5 = bb.objective, None, None, None, c1, c1, c1, c1
        spread = split = None
        best = desc_obj = bb.objective
        best_schedule = bb.schedule
        cd = c1
        cg = None
    else:
        lns = lns_total_jct(inst, choice_of_schedule(inst, bb.schedule), rounds=lns_rounds, window=8,
                            round_limit=0.3, seed=seed)
        c2 = time.process_time()
        lns_obj = check_schedule(inst, lns.schedule)
        start = lns.schedule if lns_obj < bb.objective else bb.schedule
        desc = assignment_descent(inst, choice_of_schedule(inst, start), units=descent_units,
                                  evaluations=descent_evaluations)
        desc_obj = check_schedule(inst, desc.schedule)
        best, best_schedule = min((bb.objective, 0, bb.schedule), (lns_obj, 1, lns.schedule),
                                  (desc_obj, 2, desc.schedule), key=lambda x: x[:2])[::2]
        cd = time.process_time()
        slp = start_lp_lower_bound(inst, slots=start_slots) if start_slots else None
        c3 = time.process_time()
        lb = LagrangianBound(inst, slots=slots, iterations=lag_iterations, target=best)
        lp, lag = lb.lp, lb.bound()  # the time-slot LP is solved once, for both
        c4 = time.process_time()
        spread = spread_bounds(inst, slots=spread_slots, iterations=spread_iterations, target=best) \
            if spread_slots else None
        c5 = time.process_time()
        cg = split = None
        if cg_rounds:
            ids = {j.id: i for i, j in enumerate(inst.jobs)}
            part = [[ids[x] for x in p] for p in desc.info.get("partition", [])]
            # first prices: each job's least priced run under the Lagrangian bound's slot prices (step 5)
            cg = cg_lower_bound(inst, partitions=[part] if part else [], iterations=cg_rounds, node_limit=cg_nodes,
                                start_prices=[lb.rest(i, 0) for i in range(n)])
    c6 = time.process_time()
    bound = max(x for x in (bb.lower_bound, lp, slp, lag) if x is not None)
    if cg is not None and cg["bound"] is not None and spread is not None:
        # every schedule is single-server or spreads a job, and spread_bounds covers every job that can spread
        bound = max(bound, min([cg["bound"]] + list(spread.values())))
    if split_rounds >= 0 and spread is not None:
        # the jobs whose spread bound stays below the best schedule: per shape and per pair (formulation, "Spread
        # jobs, split"); any bound on the optimum bounds the single-server schedules too
        single = max(bound, cg["bound"]) if cg is not None and cg["bound"] is not None else bound
        split = spread_split_bound(inst, best, single, spread, slots=spread_slots * 2, iterations=spread_iterations,
                                   pair_slots=spread_slots, pair_iterations=spread_iterations, cg_rounds=split_rounds,
                                   cg_nodes=cg_nodes, weights=split_weights)
        bound = max(bound, split["bound"])
    c7 = time.process_time()
    return {"n": n, "seed": seed, "bnb": bb.objective, "bnb_bound": bb.lower_bound, "bnb_status": bb.status.value,
            "lns": lns_obj, "descent": desc_obj, "lp": lp, "start_lp": slp, "lag": lag, "best": best, "bound": bound,
            "gap": best / bound - 1, "cpu_bnb": c1 - c0, "cpu_lns": c2 - c1, "cpu_desc": cd - c2,
            "cpu_slp": c3 - cd, "cpu_lag": c4 - c3, "cpu_spread": c5 - c4,
            "spread": None if spread is None else (sum(v >= best for v in spread.values()), len(spread),
                                                   min(spread.values(), default=None),
                                                   sorted(k for k, v in spread.items() if v < best)),
            "cg": None if cg is None else cg["bound"], "cpu_cg": c6 - c5, "cpu": c7 - c0, "schedule": best_schedule,
            "split": None if split is None else split["bound"], "cpu_split": c7 - c6,
            "split_terms": None if split is None else split_terms(split)}


def split_terms(split: dict) -> str:
    """The terms of the combined bound below the best schedule, e.g. ``j1 (3, 1) 125577/126002``."""
    out = [f"{j} {shape}: {lag}" + ("" if cg is None else f"/{cg}")
           for (j, shape), (lag, cg) in split["shapes"].items()]
    out += [f"{a}+{b}: {v}" for (a, b), v in split["pairs"].items()]
    return "; ".join(out)


def fold_into_library(rows: list[dict], label: str) -> list[str]:
    """Offer each row's best schedule and best bound to its bundled library record (``total-jct-n{N}-seed{S}``,
    when the bundled instance is the generator's), through ``benchmarks/library.py``'s update path: a record
    changes only where it improves (a smaller re-scored schedule, a larger bound), and a bound above a recorded
    schedule stops the run. Returns the changes."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from benchmarks import library as lib
    from optsched.api import load

    index = lib.read_index()
    by_path = {e["path"]: e for e in index["instances"]}
    changes = []
    for r in rows:
        stem = f"total-jct-n{r['n']}-seed{r['seed']}"
        entry = by_path.get(f"instances/total-jct/{stem}.json")
        if entry is None or load(lib.PKG / entry["path"]) != random_total_jct_instance(r["n"], r["seed"]):
            continue
        lib.check_record(entry)
        value = lib.score_schedule("total-jct", load(lib.PKG / entry["path"]), r["schedule"])
        found = lib.Found(label, value, r["schedule"], r["bound"])
        changes += [f"{stem}: {c}" for c in lib.improve(entry, None, [(found, True)], lib.BEST / f"{stem}.json",
                                                         True)]
    if changes:
        lib.write_index_and_page(index)
    return changes


PAGE = ROOT / "docs" / "results" / "total_jct_bounds.md"
HEAD = ("# Total JCT at the papers' size: best schedules and certified bounds\n\n"
        "OUR solvers on instances we generate (`optsched generate total-jct --jobs N --seed S`: paper 001's catalogue "
        "jobs, 2 servers x 4 GPUs, 10 ms units), never a paper's numbers; a shared 2-core machine. One section per "
        "run of `benchmarks/total_jct_bounds.py --write` (a run replaces the section of its own sizes and seeds and "
        "keeps the others).\n")


def write_section(label: str, text: str) -> None:
    """Write ``text`` (starting with ``## label``) into the results page, replacing the section of that label
    and keeping the others (ordered by their first job count, then label)."""
    keep = []
    if PAGE.exists():
        for sec in PAGE.read_text(encoding="utf-8").split("\n## ")[1:]:
            if sec.split("\n", 1)[0].strip() != label:
                keep.append("## " + sec.strip("\n") + "\n")
    keep.append(text.strip("\n") + "\n")

    def order(sec: str) -> tuple[int, str]:
        first = sec[3:].split(" ", 1)[0].split(",")[0]
        return (int(first) if first.isdigit() else 0, sec.split("\n", 1)[0])

    with atomic_open(PAGE, encoding="utf-8") as fh:
        fh.write(HEAD + "\n" + "\n".join(sorted(keep, key=order)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="benchmarks/total_jct_bounds.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="20,40,100", help="job counts, comma separated (default 20,40,100)")
    ap.add_argument("--seeds", type=int, default=2, help="instances per size, seeds 0..K-1 (default 2)")
    ap.add_argument("--seed-list", default=None, help="seeds, comma separated (instead of --seeds)")
    ap.add_argument("--bnb-units", type=float, default=20.0, help="branch and bound units (default 20)")
    ap.add_argument("--lns-rounds", type=int, default=400, help="LNS rounds (default 400)")
    ap.add_argument("--descent-evaluations", type=int, default=400,
                    help="moves of the server-assignment descent at most (default 400; 0 leaves it out)")
    ap.add_argument("--descent-units", type=float, default=1.0,
                    help="branch and bound units per server solve of the descent (default 1)")
    ap.add_argument("--slots", type=int, default=4000, help="LP capacity slots (default 4000)")
    ap.add_argument("--start-slots", type=int, default=3000,
                    help="start-slot LP slots (default 3000; 0 leaves it out)")
    ap.add_argument("--lag-iterations", type=int, default=1000,
                    help="subgradient steps of the Lagrangian bound (default 1000)")
    ap.add_argument("--spread-slots", type=int, default=1000,
                    help="slots of each spread bound (default 1000; 0 leaves them out)")
    ap.add_argument("--spread-iterations", type=int, default=300,
                    help="subgradient steps of each spread bound (default 300)")
    ap.add_argument("--cg-rounds", type=int, default=0,
                    help="rounds of the column-generation bound (default 0: left out)")
    ap.add_argument("--cg-nodes", type=int, default=400_000,
                    help="nodes per pricing search of the column-generation bound (default 400000)")
    ap.add_argument("--split-rounds", type=int, default=-1,
                    help="the combined bound of the jobs whose spread bound stays below the best schedule: per shape "
                         "the Lagrangian bound (twice --spread-slots) and, below the best schedule, this many rounds "
                         "of the column-generation bound of the split instance; per pair the Lagrangian bound "
                         "(default -1: left out; 0: without the split instances' CG)")
    ap.add_argument("--split-weights", default="even", choices=SPLIT_WEIGHTS,
                    help="the split parts' weights (default even: the job's weight on every part)")
    ap.add_argument("--write", action="store_true", help="write docs/results/total_jct_bounds.md")
    ap.add_argument("--library", action="store_true",
                    help="offer each best schedule and bound to its bundled library record (kept only where it "
                         "improves; rewrites the index, the schedule files and docs/results/library.md)")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")]
    seeds = [int(x) for x in args.seed_list.split(",")] if args.seed_list else list(range(args.seeds))
    cmd = (f".venv/bin/python benchmarks/total_jct_bounds.py --sizes {args.sizes} "
           + (f"--seed-list {args.seed_list} " if args.seed_list else f"--seeds {args.seeds} ") +
           f"--bnb-units {args.bnb_units:g} --lns-rounds {args.lns_rounds} "
           f"--descent-evaluations {args.descent_evaluations} --descent-units {args.descent_units:g} "
           f"--slots {args.slots} "
           f"--start-slots {args.start_slots} --lag-iterations {args.lag_iterations} "
           f"--spread-slots {args.spread_slots} --spread-iterations {args.spread_iterations}"
           + (f" --cg-rounds {args.cg_rounds} --cg-nodes {args.cg_nodes}" if args.cg_rounds else "")
           + (f" --split-rounds {args.split_rounds} --split-weights {args.split_weights}" if args.split_rounds >= 0
              else ""))
    rows = []

    def spread_cell(r: dict) -> str:
        if r["spread"] is None:
            return ""
        k, m, low, rest = r["spread"]
        return f"{k}/{m}" + (f" (least {low}: {', '.join(rest)})" if rest else "")

    for n in sizes:
        for s in seeds:
            r = run_one(n, s, args.bnb_units, args.lns_rounds, args.slots, args.start_slots, args.lag_iterations,
                        args.descent_evaluations, args.descent_units, args.spread_slots, args.spread_iterations,
                        args.cg_rounds, args.cg_nodes, args.split_rounds, args.split_weights)
            rows.append(r)
            print(f"n={n} seed={s}: B&B {r['bnb']} ({r['bnb_status']}, bound {r['bnb_bound']}), LNS {r['lns']}, "
                  f"descent {r['descent']}, "
                  f"LP {r['lp']}, start LP {r['start_lp']}, Lagrangian {r['lag']}, gap {100 * r['gap']:.2f}%, "
                  f"spread {spread_cell(r)}, CG {r['cg']}, split {r['split']} ({r['split_terms']}), "
                  f"{r['cpu']:.0f} CPU s",
                  file=sys.stderr, flush=True)

    def opt(x: int | None) -> int | str:
        return "" if x is None else x

    use_cg = bool(args.cg_rounds)
    use_split = args.split_rounds >= 0
    tab = table(["jobs", "seed", "B&B schedule", "B&B bound", "LNS schedule", "descent schedule", "LP bound",
                 "start LP bound", "Lagrangian bound"] + (["CG bound (single-server)"] if use_cg else [])
                + (["split bound", "split terms (Lagrangian/CG)"] if use_split else [])
                + ["best schedule", "best bound", "gap", "spread bounds >= best schedule",
                   "CPU s (B&B / LNS / descent / start LP / LP + Lagrangian / spread" + (" / CG" if use_cg else "")
                   + (" / split)" if use_split else ")")],
                [[r["n"], r["seed"], r["bnb"], r["bnb_bound"], r["lns"], r["descent"], opt(r["lp"]),
                  opt(r["start_lp"]), opt(r["lag"])] + ([opt(r["cg"])] if use_cg else [])
                 + ([opt(r["split"]), r["split_terms"] or ""] if use_split else [])
                 + [r["best"], r["bound"], f"{100 * r['gap']:.2f}%", spread_cell(r),
                    f"{r['cpu']:.0f} ({r['cpu_bnb']:.0f} / {r['cpu_lns']:.0f} / {r['cpu_desc']:.0f} / "
                    f"{r['cpu_slp']:.1f} / {r['cpu_lag']:.1f} / {r['cpu_spread']:.1f}"
                    + (f" / {r['cpu_cg']:.0f}" if use_cg else "") + (f" / {r['cpu_split']:.0f})" if use_split else ")")]
                 for r in rows])
    print(tab)
    if args.write:
        label = f"{args.sizes} jobs, " + (f"seeds {args.seed_list}" if args.seed_list else
                                           f"seeds 0-{args.seeds - 1}" if args.seeds > 1 else "seed 0")
        md = [f"## {label}", "", f"Reproduce: `{cmd} --write`.", "",
              "Per instance: the branch and bound alone (`total-jct-bnb`, one worker, "
              f"{args.bnb_units:g} deterministic units), then large-neighbourhood search with CP-SAT from its "
              f"schedule (`optsched.exact.total_jct_lns`, {args.lns_rounds} rounds of 8 jobs and 0.3 units), then "
              "the server-assignment descent from the better of the two (`optsched.exact.total_jct_assign`: moves "
              "of one job and swaps of two between servers, each server re-solved alone by the branch and bound "
              f"for {args.descent_units:g} units; at most {args.descent_evaluations} moves"
              + (": none, so only each server of the start's partition is re-solved alone"
                 if args.descent_evaluations == 0 else "") + "), then "
              f"the start-slot LP bound (`optsched.exact.total_jct_lp`, {args.start_slots} slots, certified by its "
              f"dual), then the time-slot LP bound ({args.slots} slots, certified by its dual) and the Lagrangian "
              f"bound from its duals ({args.lag_iterations} subgradient steps towards the best schedule's cost), "
              "then the spread bounds (`spread_bounds`: per job with a multi-server mode, the Lagrangian bound on "
              f"{args.spread_slots} slots with {args.spread_iterations} steps of the instance in which that job "
              "keeps only its multi-server modes; the column gives how many reach the best schedule, and the least "
              "bound and the jobs below it otherwise; when all do, some optimal schedule is the best schedule or "
              "runs every job on one server)"
              + (f", then the column-generation bound on single-server schedules (`optsched.exact.total_jct_cg`, "
                 f"{args.cg_rounds} rounds, {args.cg_nodes} nodes per pricing search; with the spread bounds, "
                 "min(it, every spread bound) is a bound)" if use_cg else "")
              + (", then the combined bound of the jobs whose spread bound stays below the best schedule "
                 f"(`spread_split_bound`: per multi-server shape the Lagrangian bound on {2 * args.spread_slots} "
                 f"slots of the instance in which the job keeps only that shape and, below the best schedule, "
                 f"{args.split_rounds} rounds of the column-generation bound of its split instance with "
                 f"{args.split_weights} part weights; per pair of them the Lagrangian bound of both spread; "
                 "formulation \"Spread jobs, split\")" if use_split else "") + ". Gap = best schedule / "
              "best bound - 1. CPU seconds are this process's (threads included). The bounds are proved in "
              "`docs/formulations/total-jct.md`.", "", tab, ""]
        write_section(label, "\n".join(md))
    if args.library:
        for line in fold_into_library(rows, cmd[len('.venv/bin/python '):])\
                or ["library: no record improved"]:
            print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
