"""What the agent's action space itself costs, on the small instances with proven optima: OUR solver and simulator.

Run: ``.venv/bin/python benchmarks/rl_space.py [--quick] [--stops] [--jobs 4,5,6,7,8] [--seeds S,...]
[--node-limit 15000] [--optima docs/results/rl_optimum.csv] [--reuse CSV] [--out DIR]``.

For each instance of ``--optima`` (the rows of ``benchmarks/rl_optimum.py`` proven optimal, with the round
model's optimum and the shipped learned scheduler's gap, column ``rl-planner``), the least average JCT any
sequence of the agent's work-conserving actions reaches
([`space_optimum`][optsched.rl.planner.space_optimum]: a branch and bound over the environment's actions, at most
``--node-limit`` expanded states, given the planner's value as the value to beat and the optimum as a bound that
ends the search when reached). The round model chooses any configuration in every round (any queued job, running
jobs moved); the agent places the first queued job of a demand, beside the jobs already running. So a gap of the
space's optimum above 0 is what no policy of this action space can close, learned or not. Per instance: the
space's optimum when proven (else the best found, an upper bound on it), and whether the planner reaches it.

``--stops``: the wider space of the agent's actions *and* the round model's moves (at every round's start any set
of running jobs may be stopped, then placed again: ``space_optimum(..., stops=True)``), searched only below the
agent space's best found (``--space``, default ``docs/results/rl_space.csv``); writes ``rl_space_stops.md/.csv``.
It says how much of the agent space's distance from the optimum is the rule that a running job stays where it is.

Writes ``docs/results/rl_space.md`` and ``rl_space.csv`` (``--quick``: 4-5-job instances of two seeds, node limit
2,000, into ``tmp/rl_space_quick/``; ``--out DIR``: into DIR).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT / "src", ROOT):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from benchmarks.rl import ci95  # noqa: E402  (one 95 % interval for the RL tables)
from optsched.generators.contention import random_contention_instance  # noqa: E402
from optsched.io import atomic_open  # noqa: E402

PLANNER = "rl-planner"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--stops", action="store_true", help="the agent's actions and stops of running jobs")
    ap.add_argument("--space", default=str(ROOT / "docs/results/rl_space.csv"),
                    help="with --stops: the agent space's best found per instance (an rl_space.csv)")
    ap.add_argument("--jobs", default="4,5,6,7,8")
    ap.add_argument("--seeds", default=None, help="only these seeds (comma-separated), for example the open ones")
    ap.add_argument("--node-limit", type=int, default=15_000)
    ap.add_argument("--optima", default=str(ROOT / "docs/results/rl_optimum.csv"))
    ap.add_argument("--reuse", default=None, help="an earlier rl_space.csv: its rows (same node limit) are kept")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    from optsched.rl.planner import space_optimum  # needs gymnasium (the [rl] extra)

    jobs = [int(x) for x in args.jobs.split(",")]
    optima = pd.read_csv(args.optima)
    optima = optima[(optima["status"] == "optimal") & optima["jobs"].isin(jobs)]
    if args.seeds:
        optima = optima[optima["seed"].isin([int(x) for x in args.seeds.split(",")])]
    if args.quick:
        optima = optima.groupby("jobs").head(2)
        args.node_limit = min(args.node_limit, 2_000)
    out = Path(args.out) if args.out else ROOT / ("tmp/rl_space_quick" if args.quick else "docs/results")
    name = "rl_space_stops" if args.stops else "rl_space"
    for flag, path in (("--reuse", args.reuse), ("--space", args.space if args.stops else None)):
        if path and not Path(path).is_file():
            ap.error(f"{flag}: no such file: {path}")
    agent_space = {}
    if args.stops:
        sp = pd.read_csv(args.space)
        agent_space = {(int(r["jobs"]), int(r["seed"])): float(r["space_gap"]) for _, r in sp.iterrows()}
    known = {}
    if args.reuse:
        old = pd.read_csv(args.reuse)
        known = {(int(r["jobs"]), int(r["seed"])): r.to_dict() for _, r in old.iterrows()
                 if int(r["node_limit"]) == args.node_limit}
    t0 = time.perf_counter()
    rows = []
    reused = 0
    for k, (_, r) in enumerate(optima.iterrows(), 1):
        n, seed, opt = int(r["jobs"]), int(r["seed"]), float(r["opt_avg_jct_h"])
        if (n, seed) in known:
            rows.append(dict(known[(n, seed)]))
            if args.stops:  # the shipped planner's gap of the optima file (it may have changed since the search)
                rows[-1]["planner_gap"] = float(r[PLANNER])
            reused += 1
            continue
        inst = random_contention_instance(jobs=n, mix="normal", seed=seed, hours=0.25)
        gap = min(float(r[PLANNER]), agent_space.get((n, seed), np.inf))  # a value known to be reached
        c0 = time.process_time()
        best = space_optimum(inst, stops=args.stops, upper=(1 + gap) * opt, lower=opt, node_limit=args.node_limit)
        rows.append({"jobs": n, "seed": seed, "opt_avg_jct_h": opt, "planner_gap": float(r[PLANNER]),
                     "space_gap": best["avg_jct_h"] / opt - 1, "proven": best["proven"], "nodes": best["nodes"],
                     "cpu_s": time.process_time() - c0, "node_limit": args.node_limit})
        if args.stops:
            rows[-1]["agent_space_gap"] = agent_space.get((n, seed), np.nan)
        print(f"  [{k}/{len(optima)}] n={n} seed={seed}: space {rows[-1]['space_gap']:.1%} "
              f"({'proven' if best['proven'] else 'open'}, {best['nodes']} states), planner {r[PLANNER]:.1%}",
              flush=True)
    wall = time.perf_counter() - t0
    df = pd.DataFrame(rows)
    df["proven"] = df["proven"].astype(bool)
    if args.stops:  # the planner's stops (of at most SHIPPED_PLANNER["stops"] jobs) are moves of this space
        assert not (df["proven"] & (df["planner_gap"] < df["space_gap"] - 1e-9)).any(), "a planner below the optimum"
        df["space_gap"] = df["space_gap"].where(df["proven"], np.minimum(df["space_gap"], df["planner_gap"]))
    space = ("the agent's work-conserving actions and, at every round's start, stops of any running jobs "
             "(`space_optimum(..., stops=True)`; searched below the agent space's best found, `agent_space_gap` in "
             "the CSV)" if args.stops else "the agent's work-conserving actions (`optsched.rl.planner.space_optimum`)")
    lines = [f"# The limit of the agent's action space{' with stops' if args.stops else ''} on small instances (our "
             "exact solvers and our simulator)", "",
             f"{len(df)} instances of {args.jobs} jobs proven optimal in `{Path(args.optima).name}` (Normal mix, "
             "0.25 isolated hours per job, all at t = 0, 4 nodes x 8 GPUs, 300 s rounds). Space optimum: the least "
             f"average JCT of any sequence of {space}, at most {args.node_limit:,} expanded states per instance; "
             "open: the best found" + (" by the search or by the planner, whose trajectory (its stops included) "
                                       "is one of this space's" if args.stops else "")
             + f", an upper bound. Planner: `{PLANNER}`, the shipped learned scheduler (its gap "
             "read from the same file). Gaps are to the round model's optimum, which may choose any queued job and "
             "move running ones.", "",
             f"Command: `{shlex.join(['.venv/bin/python', 'benchmarks/rl_space.py', *sys.argv[1:]])}` "
             f"({wall / 60:.1f} min" + (f"; {reused} of {len(df)} rows reused from `--reuse`, each with the CPU "
                                         "seconds of the run that made it" if reused else "") + ").", "",
             "| jobs | instances | space optimum proven | planner's mean gap | space optimum's mean gap: proven "
             "instances (planner there) | all, lower end (open: 0) - upper end (open: best found) | planner "
             "reaches the space optimum | median / max CPU s |",
             "|---|---|---|---|---|---|---|---|"]
    groups = [*df.groupby("jobs")]
    rest = df[df["jobs"] >= 6]  # the job counts above the headline 4-5 of rl_optimum.md
    if len(rest) and rest["jobs"].nunique() > 1:
        groups.append((f"{rest['jobs'].min()}-{rest['jobs'].max()}", rest))
    for n, g in [*groups, ("all", df)]:
        p = g[g["proven"]]
        low = g["space_gap"].where(g["proven"], 0.0).mean()
        hit = int((p["planner_gap"] - p["space_gap"] < 1e-9).sum())
        lines.append(f"| {n} | {len(g)} | {len(p)} | {g['planner_gap'].mean():.1%} | "
                     + (f"{p['space_gap'].mean():.1%} ({p['planner_gap'].mean():.1%})" if len(p) else "-")
                     + f" | {low:.1%} - {g['space_gap'].mean():.1%} | {hit} of {len(p)} proven | "
                     f"{g['cpu_s'].median():.0f} / {g['cpu_s'].max():.0f} |")
    if len(df) > 1:
        m, h = ci95(df["planner_gap"] - df["space_gap"])
        lines += ["", f"Planner minus the space's best found, over all {len(df)} instances: {m:.1%} ± {h:.1%} "
                  "(95 % t-interval; where the search is open this is a lower bound on the planner's distance from "
                  "the space's optimum)."]
    agent_col = "agent_space_gap" in df
    lines += ["", "Per instance:", "", "| jobs | seed | optimum (h) | planner gap | "
              + ("agent space's best found | " if agent_col else "") + "space gap | proven | states |",
              "|---|---|---|---|---|---|---|" + ("---|" if agent_col else "")]
    for _, r in df.iterrows():
        lines.append(f"| {int(r['jobs'])} | {int(r['seed'])} | {r['opt_avg_jct_h']:.4f} | {r['planner_gap']:.1%} | "
                     + (f"{r['agent_space_gap']:.1%} | " if agent_col else "")
                     + f"{r['space_gap']:.1%} | {'yes' if r['proven'] else 'open'} | {int(r['nodes'])} |")
    out.mkdir(parents=True, exist_ok=True)
    with atomic_open(out / f"{name}.md") as fh:
        fh.write("\n".join(lines) + "\n")
    with atomic_open(out / f"{name}.csv", newline="") as fh:
        df.to_csv(fh, index=False)
    print(f"wrote {out / f'{name}.md'} ({wall / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
