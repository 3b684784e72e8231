"""How far the agent and every baseline are from the optimum, on small instances: OUR solver and simulator.

Run: ``.venv/bin/python benchmarks/rl_optimum.py [--quick] [--seeds 15] [--jobs 4,5,6,7,8] [--hours 0.25]
[--mix normal] [--time-limit 60] [--solver bb|dp] [--policy NPZ] [--agent [LABEL=]NPZ ...] [--planner]
[--optima CSV] [--summary-jobs 4,5]``.

Instances: ``--jobs`` x ``--seeds`` DeepShare job sets
(:func:`optsched.generators.contention.random_contention_instance`, seeds 2,000,000 + i: never trained on),
``--hours`` isolated hours per job (0.25: 3 rounds at the mean split speed), all at t = 0, 4 nodes x 8 GPUs. The
optimum of the round model (:mod:`optsched.exact.contention`: ``--solver bb``, the branch and bound
``solve_contention_bb`` with the best simulated plan of contention-greedy and the two lookaheads as its first upper
bound, ``--time-limit`` CPU seconds per instance; ``dp``, the DP ``solve_contention_dp``, wall seconds; an instance
counts only if proven optimal) against each policy simulated with the repository's round semantics
(``optsched.simulate(instance, scheduler=...)``): LAS, SRTF, widest-split first fit, random actions,
contention-greedy, the lookahead and its small-demand-first variant, rl-base (argmax and sampled) and rl-hybrid
with the shipped paper agent (or ``--policy``), and issue 24's agent as rl-agent, argmax and sampled (``--agent``,
default the shipped ``normal-wc.npz`` when present); ``--planner``: also each such agent as the base of the planner
([`optsched.rl.planner`][]: one-step rollout, every valid action tried and the agent followed to the end; a
planner, not the network alone; needs the ``[rl]`` extra's gymnasium), and the planner over three bases (the
agent and both lookaheads, each tried action scored by the best of them). ``--optima``: read the optima (status,
seconds, states, solver) of the same instances from an earlier run's CSV instead of solving them again. The gap of
a policy is its total (= average) JCT over the optimum's, minus 1; per policy: mean with a 95 % t-interval over the
instances, median, max, and how many instances it solves optimally.

Writes ``docs/results/rl_optimum.md``, ``rl_optimum.csv``, ``rl_optimum.png`` (``--quick``: ``tmp/rl_quick/``).
"""

from __future__ import annotations

import argparse
import math
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT / "src", ROOT):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import pandas as pd  # noqa: E402

from benchmarks.rl import ci95  # noqa: E402  (one 95 % interval for the RL tables)
from optsched.exact.contention import evaluate_plan, solve_contention_bb, solve_contention_dp  # noqa: E402
from optsched.generators.contention import random_contention_instance  # noqa: E402
from optsched.io import atomic_open, save_figure  # noqa: E402
from optsched.plot import plot_gaps  # noqa: E402
from optsched.sim import simulate  # noqa: E402
from optsched.sim.contention.agent import load_policy, shipped_path  # noqa: E402
from optsched.sim.contention.lookahead import SHIPPED_WC  # noqa: E402

SEED_BASE = 2_000_000
# the planner with more bases (a parallel rollout: each tried action followed by the agent and by each lookahead,
# scored by the best): never worse than any of its bases from the start
MULTI_BASES = ("lookahead", "lookahead-small")
MULTI = "planner 3 bases"
# the shipped learned scheduler: the agent plus the search of SHIPPED_PLANNER (the one configuration of both
# issue-24 targets; on these small sets its endgame and two-step rules apply from the first decision)
SHIPPED_LABEL = "rl-planner"


def policies(agent, wc_agents=None) -> dict:
    """Label -> scheduler spec; ``wc_agents``: label -> issue-24 agent (each argmax and sampled)."""
    out = {"LAS": "contention-las", "SRTF": "contention-srtf",
           "LAS (repo keys)": {"name": "contention-las", "repo_keys": True},
           "SRTF (repo keys)": {"name": "contention-srtf", "repo_keys": True},
           "widest-first-fit": "widest-first-fit", "random": "contention-random",
           "contention-greedy": "contention-greedy", "lookahead": "contention-lookahead",
           "lookahead-small": "contention-lookahead-small", "rl-base": {"name": "rl-base", "policy": agent},
           "rl-base sampled": {"name": "rl-base", "policy": agent, "deterministic": False},
           "rl-hybrid": {"name": "rl-hybrid", "policy": agent}}
    for label, wc in (wc_agents or {}).items():
        tag = f" [{label}]" if label else ""
        out[f"rl-agent{tag}"] = {"name": "rl-agent", "policy": wc}
        out[f"rl-agent sampled{tag}"] = {"name": "rl-agent", "policy": wc, "deterministic": False}
    return out


def summary(ok: pd.DataFrame, labels) -> list[str]:
    """The table rows of mean gap (95 % CI), median, max and instances solved optimally, per policy."""
    lines = []
    for label in labels:
        m, h = ci95(ok[label])
        c = "" if math.isnan(h) else f" ± {h:.1%}"
        lines.append(f"| {label} | {m:.1%}{c} | {float(ok[label].median()):.1%} | {float(ok[label].max()):.1%} | "
                     f"{int((ok[label] < 1e-9).sum())} / {len(ok)} |")
    return lines


def gap_rows(ok: pd.DataFrame, labels) -> pd.DataFrame:
    """Long format for [`optsched.plot.plot_gaps`][]: one row per (proven instance, policy) with its gap."""
    return pd.DataFrame([{"instance": f"{r['jobs']}-{r['seed']}", "algorithm": label, "gap": r[label],
                          "reference_kind": "optimum"} for _, r in ok.iterrows() for label in labels])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=15)
    ap.add_argument("--jobs", default="4,5,6,7,8")
    ap.add_argument("--hours", type=float, default=0.25)
    ap.add_argument("--mix", default="normal")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--solver", choices=("bb", "dp"), default="bb")
    ap.add_argument("--policy", default=None, help="a paper-space .npz agent for rl-base/rl-hybrid (default: the "
                                                   "shipped one)")
    ap.add_argument("--agent", nargs="*", default=None,
                    help="issue-24 .npz agents for rl-agent ([LABEL=]PATH), one row each, labelled by the stem's "
                         f"last part (default: the shipped {SHIPPED_WC}.npz when present)")
    ap.add_argument("--planner", action="store_true", help="also the planner over each issue-24 agent")
    ap.add_argument("--optima", default=None, help="an earlier rl_optimum.csv whose optima are reused (no DP)")
    ap.add_argument("--summary-jobs", default="4,5",
                    help="job counts of the headline table (the other proven instances are in the per-count table)")
    args = ap.parse_args(argv)
    if args.quick:
        args.seeds, args.jobs, args.time_limit = 2, "3,4", 20.0
    out = ROOT / ("tmp/rl_quick" if args.quick else "docs/results")
    agent = load_policy(args.policy)
    if args.agent:
        wc_agents = {}
        for a in args.agent:  # LABEL=PATH, or PATH labelled by the last part of its stem (s0 of ...-s0.npz)
            label, _, path = a.rpartition("=")
            wc_agents[label or Path(path).stem.rsplit("-", 1)[-1]] = load_policy(path)
    else:
        wc_agents = {"": load_policy(SHIPPED_WC)} if shipped_path(SHIPPED_WC).exists() else {}
    wc_agent = next(iter(wc_agents.values()), None)
    labels = list(policies(agent, wc_agents))
    planners: dict[str, tuple[Any, dict[str, Any]]] = {}
    if args.planner:
        from optsched.rl.planner import SHIPPED_PLANNER, plan_episode

        for a, wc in wc_agents.items():
            tag = f" [{a}]" if a else ""
            planners[f"planner{tag}"] = (wc, {"also": ()})
            planners[f"{MULTI}{tag}"] = (wc, {"also": MULTI_BASES})
            planners[f"{SHIPPED_LABEL}{tag}"] = (wc, dict(SHIPPED_PLANNER))
        labels += list(planners)
    cost: dict[str, list[float]] = {}  # label -> [CPU s, decisions] of the planners and the lookahead
    known: dict[tuple[int, int | None], Any] = {}
    if args.optima:
        known = {(int(r["jobs"]), int(r["seed"])): r for _, r in pd.read_csv(args.optima).iterrows()}
    t0 = time.perf_counter()
    rows = []
    for n in [int(x) for x in args.jobs.split(",")]:
        for i in range(args.seeds):
            inst = random_contention_instance(jobs=n, mix=args.mix, seed=SEED_BASE + i, hours=args.hours)
            runs = {label: simulate(inst, scheduler=pol) for label, pol in policies(agent, wc_agents).items()}
            if (n, inst.seed) in known:
                k = known[(n, inst.seed)]
                row = {c: k[c] for c in ("jobs", "seed", "status", "dp_s", "opt_avg_jct_h", "dp_states")}
                row["solver"] = k["solver"] if "solver" in k and isinstance(k["solver"], str) else "dp"
                objective = float(k["opt_avg_jct_h"]) * n * 3600
            else:
                if args.solver == "bb":
                    firsts = [[cfg for _, cfg in runs[h].custom["contention_rounds"]["plan"]]
                              for h in ("contention-greedy", "lookahead", "lookahead-small")]
                    first = min(firsts, key=lambda p: evaluate_plan(inst, p, strict=False).total_jct_s)
                    c0 = time.process_time()
                    opt = solve_contention_bb(inst, time_limit=args.time_limit, incumbent=first)
                    seconds = time.process_time() - c0
                else:
                    opt = solve_contention_dp(inst, time_limit=args.time_limit)
                    seconds = opt.runtime_s
                assert opt.objective is not None, f"no schedule for {inst.seed}"
                objective = float(opt.objective)
                row = {"jobs": n, "seed": inst.seed, "status": opt.status.value, "dp_s": seconds,
                       "opt_avg_jct_h": objective / n / 3600, "dp_states": opt.info["states"],
                       "solver": args.solver}
            for label, run in runs.items():
                row[label] = float(run.jobs["round_jct_s"].sum()) / objective - 1
            for label, (wc, kw) in planners.items():
                r = plan_episode(inst, wc, **kw)
                row[label] = r["avg_jct_h"] * n * 3600 / objective - 1
                c = cost.setdefault(label, [0.0, 0])
                c[0], c[1] = c[0] + r["cpu_s"], c[1] + r["decisions"]
            if planners:
                r = plan_episode(inst, "lookahead", plan=False)
                c = cost.setdefault("lookahead", [0.0, 0])
                c[0], c[1] = c[0] + r["cpu_s"], c[1] + r["decisions"]
            rows.append(row)
            print(f"  n={n} seed={inst.seed}: {row['status']} in {float(row['dp_s']):.1f} s", flush=True)
    df = pd.DataFrame(rows)
    proven = df[df["status"] == "optimal"]
    head_jobs = [int(x) for x in args.summary_jobs.split(",")]
    ok = proven[proven["jobs"].isin(head_jobs)]
    rest = proven[~proven["jobs"].isin(head_jobs)]
    pooled = {}
    groups: dict[str, list[str]] = {}  # recipe (the label without its seed, s0 of "small s0") -> labels
    for a in wc_agents:
        groups.setdefault(re.sub(r"s\d+$", "", a), []).append(a)
    for g, members in groups.items():
        if len(members) < 2:
            continue
        for kind in ("rl-agent", "rl-agent sampled", *(["planner", MULTI, SHIPPED_LABEL] if planners else [])):
            v = pd.concat([ok[f"{kind} [{a}]"] for a in members])  # every agent seed x instance pair of the recipe
            m, h = ci95(v)
            pooled[f"{kind} [{g}all {len(members)} seeds]"] = (m, h, len(v), int((v < 1e-9).sum()))
    wall = time.perf_counter() - t0
    lines = ["# Gap to the optimum on small instances (our exact solvers and our simulator; not the paper's)", "",
             f"{len(df)} instances: {args.jobs} jobs x {args.seeds} seeds (2,000,000 + i), mix {args.mix}, "
             f"{args.hours} isolated hours per job ({args.hours * 12:g} rounds at the mean split speed), all at "
             "t = 0, 4 nodes x 8 GPUs, 300 s rounds, DeepShare's measured table (floor 0.35). Optimum: "
             + "; ".join(f"{'/'.join(str(j) for j in sorted(g['jobs'].unique()))} jobs by "
                         + ("`solve_contention_bb` (branch and bound; first upper bound: the best simulated plan "
                            "of contention-greedy and the lookaheads; seconds are CPU seconds)" if sv == "bb"
                            else "`solve_contention_dp` (DP; seconds are wall seconds)")
                         for sv, g in df.groupby("solver"))
             + f" of `optsched.exact.contention`; proven optimal: {len(proven)} of {len(df)} ("
             + ", ".join(f"{j} jobs: {int((g['status'] == 'optimal').sum())} of {len(g)}"
                         for j, g in df.groupby("jobs"))
             + "; " + (f"optima of the instances it holds read from `{Path(args.optima).name}` of an earlier run, "
                       f"not solved again; limit for the others {args.time_limit:g} s" if args.optima
                       else f"limit {args.time_limit:g} s per instance") + "; only proven instances count). "
             "Policies simulated with the repository's round semantics (threshold 0.6, sticky ratios); agent: "
             f"`{agent.meta.get('name', 'shipped')}` (trained on 256-job, one-hour Normal sets: these small sets "
             "are out of its training distribution)"
             + ("" if wc_agent is None else "; rl-agent: " + ", ".join(
                 f"`{a.meta.get('name', 'custom')}`" for a in wc_agents.values())
                + f" (issue 24, trained on {wc_agent.meta.get('jobs', '?')}-job one-hour Normal windows)")
             + ("" if not planners else "; planner: the planner over each rl-agent (`optsched.rl.planner`, one-step "
                "rollout to the end over every valid action: it simulates at every decision, a planner rather "
                f"than the network alone); {MULTI}: the same with every tried action followed by the rl-agent, "
                "the lookahead and lookahead-small, scored by the best (a parallel rollout: never worse than any "
                "of the three from the start); "
                f"{SHIPPED_LABEL}: the shipped learned scheduler, the rl-agent with the search of `SHIPPED_PLANNER` "
                f"({', '.join(f'{k} {v}' for k, v in SHIPPED_PLANNER.items())}; on these sets its endgame rule, "
                "exact rollout with the three bases, applies from the first decision, and its first round is "
                "searched two decisions deep)")
             + ". Gap = policy's total JCT / optimum - 1, over the proven instances.", "",
             f"Command: `{shlex.join(['.venv/bin/python', 'benchmarks/rl_optimum.py', *sys.argv[1:]])}` "
             f"({wall / 60:.1f} min).", "",
             *([] if not cost else [
                 "CPU ms per decision (every instance, through the same environment): " + ", ".join(
                     f"{k} {1000 * c / max(d, 1):.1f}" for k, (c, d) in cost.items()) + ".", ""]),
             f"Headline: the {len(ok)} proven instances of {args.summary_jobs} jobs.", "",
             "| policy | mean gap (95 % CI) | median | max | optimal on |", "|---|---|---|---|---|"]
    lines += summary(ok, labels)
    for kind, (m, h, n, n_opt) in pooled.items():
        lines.append(f"| {kind} (seed x instance pairs) | {m:.1%} ± {h:.1%} | | | {n_opt} / {n} |")
    if len(rest):
        lines += ["", f"The {len(rest)} proven instances of the other job counts "
                  f"({', '.join(str(j) for j in sorted(rest['jobs'].unique()))} jobs):", "",
                  "| policy | mean gap (95 % CI) | median | max | optimal on |", "|---|---|---|---|---|"]
        lines += summary(rest, labels)
        lines += ["", f"All {len(proven)} proven instances:", "",
                  "| policy | mean gap (95 % CI) | median | max | optimal on |", "|---|---|---|---|---|"]
        lines += summary(proven, labels)
    lines += ["", "Per job count (mean gap; proven instances, n of tried):", "",
              "| jobs | proven | optimum avg JCT (h) | solver | median s | max s | " + " | ".join(labels) + " |",
              "|---|---|---|---|---|---|" + "---|" * len(labels)]
    for n, g in df.groupby("jobs"):
        g = g[g["status"] == "optimal"]
        if not len(g):
            lines.append(f"| {n} | 0 / {(df['jobs'] == n).sum()} | | | | | " + " | " * (len(labels) - 1) + " |")
            continue
        lines.append(f"| {n} | {len(g)} / {(df['jobs'] == n).sum()} | {g['opt_avg_jct_h'].mean():.3f} | "
                     f"{'/'.join(sorted(set(g['solver'])))} | {g['dp_s'].median():.2f} | {g['dp_s'].max():.1f} | "
                     + " | ".join(f"{g[p].mean():.1%}" for p in labels) + " |")
    out.mkdir(parents=True, exist_ok=True)
    with atomic_open(out / "rl_optimum.md") as fh:
        fh.write("\n".join(lines) + "\n")
    with atomic_open(out / "rl_optimum.csv", newline="") as fh:
        df.to_csv(fh, index=False)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(12, 4.5))
    plot_gaps(gap_rows(ok, labels), ax, title=f"{args.mix}, {args.jobs} jobs x {args.hours} h, t = 0, {len(ok)} "
                                              "proven instances (our DP and simulator)")
    ax.tick_params(axis="x", labelrotation=35, labelsize=8)
    for t in ax.get_xticklabels():
        t.set_horizontalalignment("right")
    save_figure(fig, out / "rl_optimum.png", bbox_inches="tight")
    print(f"wrote {out / 'rl_optimum.md'} ({wall / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
