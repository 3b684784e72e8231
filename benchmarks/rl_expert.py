"""Issue 24, expert iteration: distil the planner ([`optsched.rl.planner`][]) into the network, in OUR simulator
(never the paper's numbers).

Run: ``.venv/bin/python benchmarks/rl_expert.py --start PATH_WITH_{seed} [--seeds 0,1,2,3,4] [--iterations 2]
[--large 12] [--large-jobs 64] [--horizon 6] [--top 2] [--small 40] [--small-repeat 3] [--lr 1e-3] [--epochs 10]
[--no-rebase] [--agents DIR] [--from-labels] [--min-gain G] [--observation rich|plan]``; evaluation: ``--evaluate
--start PATTERN --new PATTERN [--seeds ...] [--sets 5] [--optima CSV] [--quick] [--page STEM]`` ->
``docs/results/rl_expert.md`` (or ``STEM.md``) and ``.csv``.

``--min-gain``: the refit keeps a planner label only where it beats the network's own action by at least ``G``
job-hours over the window ([`optsched.rl.imitation.margin_labels`][]); ``--observation plan``: the new network
reads the plan observation, started from the rich agent widened with zero weights
([`optsched.rl.export.widen_inputs`][]), the planner of the first iteration over the rich agent.

Per seed: the starting agent (``--start``, ``{seed}`` replaced, for example the small-demand-first agents of
``benchmarks/rl_learned.py --teachers lookahead-small``) is loaded into a MaskablePPO model of the imitation
recipe, then [`optsched.rl.imitation.planner_dagger`][] runs ``--iterations`` iterations: the network acts on
``--large`` windows of ``--large-jobs`` Normal jobs (the planner over the network labels each state with a choice:
its ``--top`` best actions, ``--horizon`` rounds then the fluid estimate) and on ``--small`` windows of 4-8 jobs of
a quarter hour (full rollouts over every valid action; labels repeated ``--small-repeat`` times), the network
refitted on the aggregate after each iteration (the last aggregate, labels repeated as in the refit, is kept as
``...-labels-s{seed}.npz`` beside the agents). Windows are the run's training seeds ``1000 x seed + i``
(``i`` from 600 for the large, 700 for the small windows): never the held-out sets (seeds 1,000,000 on) nor the
small instances with proven optima (2,000,000 on). The network after each iteration is written to ``--agents``
(default ``tmp/rl_agents24/``, untracked) as ``normal-expert-...-i{k}-s{seed}.npz``; its meta records the CPU seconds
of this stage and of the whole recipe (the starting agent's plus this stage's). Evaluate with
``benchmarks/rl_learned.py --extra`` and ``benchmarks/rl_optimum.py --agent``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT / "src", ROOT):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import numpy as np  # noqa: E402

from optsched.generators.contention import random_contention_instance  # noqa: E402
from optsched.rl.env import ContentionEnv  # noqa: E402
from optsched.rl.export import export_numpy, load_numpy_weights, numpy_policy, widen_inputs  # noqa: E402
from optsched.rl.imitation import fit, margin_labels, planner_dagger  # noqa: E402
from optsched.rl.train import RECIPES, make_model, train_seeds  # noqa: E402
from optsched.sim.contention.agent import NumpyPolicy  # noqa: E402
from optsched.sim.contention.lookahead import plan_size  # noqa: E402


def _opt(x: str) -> int | None:
    return None if x in ("none", "all", "") else int(x)


def evaluate(args) -> int:
    """``--evaluate``: per seed, the starting agent and the new one (``--new``, ``{seed}`` replaced) on the held-out
    Normal sets (paired against the lookahead and against the starting agent) and on the small instances with
    proven optima (``--optima``); writes ``docs/results/rl_expert.md`` and ``.csv`` (``--page``: another stem;
    ``--quick``: ``tmp/rl_quick/``,
    one 64-job set and 4 small instances)."""
    import shlex

    import pandas as pd

    from benchmarks.rl import ci95
    from optsched.io import atomic_open
    from optsched.sim import simulate
    from optsched.sim.contention.lookahead import RlAgent

    assert RlAgent.name == "rl-agent"  # importing it registers the lookahead and the agent policy
    from optsched.rl.train import eval_seeds, job_sets

    seeds = [int(s) for s in args.seeds.split(",") if s]
    out = ROOT / ("tmp/rl_quick" if args.quick else "docs/results")
    out.mkdir(parents=True, exist_ok=True)
    agents = {}
    for s in seeds:
        agents[f"start s{s}"] = NumpyPolicy.load(args.start.format(seed=s))
        agents[f"new s{s}"] = NumpyPolicy.load(args.new.format(seed=s))
    t0 = time.perf_counter()
    rows = []
    for inst in job_sets(eval_seeds(1 if args.quick else args.sets), "normal", 64 if args.quick else 256):
        pols = {"lookahead": "contention-lookahead"}
        for label, pol in agents.items():
            pols[f"argmax|{label}"] = {"name": "rl-agent", "policy": pol}
            if label.startswith("new"):
                pols[f"sampled|{label}"] = {"name": "rl-agent", "policy": pol, "deterministic": False}
        for key, pol in pols.items():
            kind, _, label = key.rpartition("|")
            m = simulate(inst, scheduler=pol).custom["contention"]
            rows.append({"part": "held-out", "agent": label, "policy": kind or "lookahead",
                         "instance_seed": inst.seed, "jobs": len(inst.jobs), "value": m["avg_jct_s"] / 3600})
        print(f"  held-out set {inst.seed} done", flush=True)
    opt = pd.read_csv(args.optima)
    for _, k in (opt.head(4) if args.quick else opt).iterrows():
        inst = random_contention_instance(jobs=int(k["jobs"]), mix="normal", seed=int(k["seed"]), hours=0.25)
        objective = float(k["opt_avg_jct_h"]) * int(k["jobs"]) * 3600
        for label, pol in agents.items():
            run = simulate(inst, scheduler={"name": "rl-agent", "policy": pol})
            rows.append({"part": "small", "agent": label, "policy": "argmax", "instance_seed": inst.seed,
                         "jobs": len(inst.jobs), "value": float(run.jobs["round_jct_s"].sum()) / objective - 1})
    df = pd.DataFrame(rows)
    with atomic_open(out / f"{args.page}.csv", "w") as fh:
        df.to_csv(fh, index=False)
    h = df[df["part"] == "held-out"]
    look = h[h["policy"] == "lookahead"].set_index("instance_seed")["value"]

    def series(part: str, label: str, policy: str = "argmax") -> pd.Series:
        d = df[(df["part"] == part) & (df["agent"] == label) & (df["policy"] == policy)]
        return d.set_index(["instance_seed", "jobs"])["value"]

    def cell(x) -> str:
        m, hw = ci95(x)
        return f"{m:+.2%}" if math.isnan(hw) else f"{m:+.2%} ± {hw:.2%}"

    lines = ["# Issue 24: expert iteration, the planner distilled into the network (our simulator, our DP; not the "
             "paper's numbers)", "",
             f"Command: `.venv/bin/python benchmarks/rl_expert.py {shlex.join(sys.argv[1:])}` "
             f"({(time.perf_counter() - t0) / 60:.1f} min on the shared 2-core machine).", "",
             "Per seed, `start` is the agent the stage began from and `new` the network after the planner-labelled "
             "DAgger stage (`optsched.rl.imitation.planner_dagger`; the network alone at inference, numpy only). "
             "Held-out: Normal sets of 256 jobs (seeds 1,000,000 + i), the paired change of the average JCT "
             "(mean ± 95 % t-interval over the sets; pooled: over every seed x set pair) and the sets where the "
             "row is better. Small: the 30 instances with proven optima of `rl_optimum.csv`, the mean gap to the "
             "optimum (± 95 % t-interval over the instances, pooled over every seed x instance pair) and the "
             "paired change of the gap against the starting agent. CPU s (recipe): from each agent's meta, the "
             "starting agent's training plus, for `new`, the labelling and the refit.", "",
             "| seed | policy | CPU s (recipe) | vs lookahead | better | vs start | better | small gap | optimal "
             "| gap vs start |", "|---|---|---|---|---|---|---|---|---|---|"]
    pooled: dict[str, list] = {}
    for s in [*seeds, None]:
        for label, policy in (("start", "argmax"), ("new", "argmax"), ("new", "sampled")):
            if s is None:
                d = pooled.get(f"{label} {policy}")
                if not d or len(seeds) < 2:
                    continue
                vl, vs, gap, dg = (np.concatenate(x) for x in zip(*d))
                cpu = ""
            else:
                x = series("held-out", f"{label} s{s}", policy)
                base = series("held-out", f"start s{s}")
                vl = np.array([v / look[i] - 1 for (i, _), v in x.items()])
                vs = np.array([v / base[k] - 1 for k, v in x.items()])
                g, g0 = series("small", f"{label} s{s}"), series("small", f"start s{s}")
                gap = g.to_numpy() if policy == "argmax" else np.array([])
                dg = (g - g0).to_numpy() if policy == "argmax" else np.array([])
                pooled.setdefault(f"{label} {policy}", []).append((vl, vs, gap, dg))
                cpu = agents[f"{label} s{s}"].meta.get("cpu_s", "")
            same = label == "start" and policy == "argmax"
            lines.append(f"| {'all' if s is None else s} | {label} {policy} | {cpu} | {cell(vl)} | "
                         f"{int((vl < 0).sum())} / {len(vl)} | {'' if same else cell(vs)} | "
                         f"{'' if same else f'{int((vs < 0).sum())} / {len(vs)}'} | "
                         f"{cell(gap).lstrip('+') if len(gap) else ''} | "
                         f"{f'{int((gap < 1e-9).sum())} / {len(gap)}' if len(gap) else ''} | "
                         f"{cell(dg) if len(dg) and not same else ''} |")
    lines.append("")
    with atomic_open(out / f"{args.page}.md", "w") as fh:
        fh.write("\n".join(lines))
    print("\n".join(lines))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--start", required=True, help="the starting agent's .npz, {seed} replaced by the seed")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--large", type=int, default=12, help="large windows per iteration")
    ap.add_argument("--large-jobs", type=int, default=64)
    ap.add_argument("--horizon", default="6")
    ap.add_argument("--top", default="2")
    ap.add_argument("--small", type=int, default=40, help="4-8-job windows per iteration")
    ap.add_argument("--small-repeat", type=int, default=3)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--no-rebase", action="store_true", help="the planner stays over the starting network")
    ap.add_argument("--agents", default=str(ROOT / "tmp" / "rl_agents24"))
    ap.add_argument("--evaluate", action="store_true", help="evaluate --start against --new per seed (no training)")
    ap.add_argument("--new", default=None, help="with --evaluate: the new agents' .npz, {seed} replaced")
    ap.add_argument("--sets", type=int, default=5)
    ap.add_argument("--optima", default=str(ROOT / "docs" / "results" / "rl_optimum.csv"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--page", default="rl_expert", help="with --evaluate: the result page's file stem")
    ap.add_argument("--min-gain", type=float, default=0.0,
                    help="job-hours: keep a planner label only where it beats the network's own action by this much "
                         "(else the own action is the label)")
    ap.add_argument("--observation", default="rich", choices=("rich", "plan"),
                    help="what the new network reads; plan: the starting rich agent widened with zero weights for "
                         "the plan features (the same function at the start), labelled by the planner over it")
    ap.add_argument("--from-labels", action="store_true",
                    help="no labelling: refit the starting agent on the labels an earlier run kept (--epochs, --lr)")
    args = ap.parse_args(argv)
    if args.evaluate:
        if not args.new:
            ap.error("--evaluate needs --new")
        return evaluate(args)
    out = Path(args.agents)
    out.mkdir(parents=True, exist_ok=True)
    tag = (f"normal-expert-l{args.large}x{args.large_jobs}-h{args.horizon}-k{args.top}-s{args.small}"
           f"r{args.small_repeat}" + ("-fixed" if args.no_rebase else "")
           + ("-plan" if args.observation == "plan" else "") + (f"-g{args.min_gain:g}" if args.min_gain else ""))
    for seed in [int(s) for s in args.seeds.split(",") if s]:
        start = NumpyPolicy.load(args.start.format(seed=seed))
        seeds = train_seeds(seed, 1000)

        def large(i: int, seeds=seeds):
            return random_contention_instance(jobs=args.large_jobs, mix="normal", seed=seeds[(600 + i) % 1000])

        def small(i: int, seeds=seeds):
            return random_contention_instance(jobs=4 + i % 5, hours=0.25, mix="normal", seed=seeds[(700 + i) % 1000])

        teacher = None
        if args.observation == "plan":  # the rich agent stays the planner's base of the first iteration
            teacher = start
            start = widen_inputs(start, plan_size(4), {**start.meta, "observation": "plan"})
        env = ContentionEnv([large(0)], reward="avg-jct", observation=args.observation, work_conserving=True)
        model = make_model(env, seed=seed, **RECIPES["imitation"]["hyper"])
        load_numpy_weights(model, start)
        z = np.random.default_rng(0).normal(size=(3, start.n_inputs)).astype(np.float32)
        assert np.allclose([numpy_policy(model).logits(x) for x in z], [start.logits(x) for x in z], atol=1e-5)
        windows = []
        if args.large:
            windows.append((large, args.large, _opt(args.horizon), _opt(args.top), 1))
        if args.small:
            windows.append((small, args.small, None, None, args.small_repeat))
        c0, t0 = time.process_time(), time.perf_counter()
        log: list = []
        if args.from_labels:
            data = dict(np.load(out / f"{tag}-i{args.iterations}-labels-s{seed}.npz"))
            if args.min_gain:
                data = margin_labels(data, args.min_gain)
            stats = fit(model, data, epochs=args.epochs, lr=args.lr, seed=seed + 300)
            meta = {**start.meta, "name": f"{tag}-i{args.iterations}-e{args.epochs}-seed{seed}",
                    "start": start.meta.get("name"), "refit": {"epochs": args.epochs, "lr": args.lr, **stats,
                                                               "cpu_s": round(time.process_time() - c0, 1)}}
            export_numpy(model, out / f"{tag}-i{args.iterations}-e{args.epochs}-s{seed}.npz", meta)
            print(f"seed {seed} refit: {meta['refit']}", flush=True)
            continue

        def after(it: int, model, seed=seed, start=start, c0=c0, t0=t0, log=log) -> None:
            cpu = time.process_time() - c0
            meta = {**start.meta, "name": f"{tag}-i{it + 1}-seed{seed}", "start": start.meta.get("name"),
                    "algorithm": start.meta.get("algorithm", "") + " + planner DAgger",
                    "expert": {"iteration": it + 1, "large": [args.large, args.large_jobs, args.horizon, args.top],
                               "small": [args.small, args.small_repeat], "lr": args.lr, "epochs": args.epochs,
                               "rebase": not args.no_rebase, "cpu_s": round(cpu, 1),
                               "wall_s": round(time.perf_counter() - t0, 1), "log": log},
                    "cpu_s": round(float(start.meta.get("cpu_s", 0.0)) + cpu, 1)}
            path = out / f"{tag}-i{it + 1}-s{seed}.npz"
            export_numpy(model, path, meta)
            print(f"seed {seed} iteration {it + 1}: {log[-1]} stage {cpu:.1f} CPU s, total {meta['cpu_s']} CPU s "
                  f"-> {path.name}", flush=True)

        data = planner_dagger(model, windows, iterations=args.iterations, rebase=not args.no_rebase,
                              epochs=args.epochs, lr=args.lr, seed=seed, log=log, after=after,
                              observation=args.observation, base=teacher, min_gain=args.min_gain)
        np.savez(out / f"{tag}-i{args.iterations}-labels-s{seed}.npz", **data)  # the aggregate, for refits
    return 0


if __name__ == "__main__":
    sys.exit(main())
