"""Issue 24: does the agent learn? The imitation recipe's agents against random actions, contention-greedy and the
one-step lookahead, in OUR simulator (repository round semantics): never the paper's numbers.

Run: ``.venv/bin/python benchmarks/rl_learned.py [--quick] [--seeds 1] [--imitation 6] [--imitation-episodes 16]
[--timesteps 0] [--ppo-lr LR] [--teachers lookahead] [--recipe imitation] [--jobs 64] [--sets 5] [--mixes normal]
[--agents DIR] [--extra [LABEL=]NPZ ...]``.

1. **Agents.** ``--seeds`` agents trained by :func:`optsched.rl.train.train` with the ``imitation`` recipe:
   DAgger from ``contention-lookahead`` (``--imitation`` iterations of ``--imitation-episodes`` episodes), then
   ``--timesteps`` MaskablePPO steps (average-JCT reward, undiscounted; work-conserving actions; the richer
   observation; windows of ``--jobs`` jobs, training seeds ``1000 x seed + i``). The wall time of each training
   is recorded (the issue's budget: 15 minutes on the shared 2-core machine, one torch thread). Agents are kept in
   ``--agents`` (default ``tmp/rl_agents24/``, untracked) and reused when present. ``--extra``: more ``.npz``
   agents evaluated beside them (``LABEL=PATH``, or a path labelled by its stem). ``--teachers``: the imitation
   teachers (``lookahead``, ``lookahead-small``), ``--seeds`` agents each; ``--ppo-lr``: PPO's learning rate.
2. **Evaluation.** Per mix, ``--sets`` held-out job sets of 256 jobs (seeds 1,000,000 + i, never trained on),
   all at t = 0: LAS, SRTF, random actions, contention-greedy, the lookahead and its small-demand-first variant,
   the shipped paper agent (rl-base, rl-hybrid) and each new agent as ``rl-agent`` with argmax and with sampled
   actions. Per policy: mean ± 95 % t-interval over the job sets (agents: over every seed x set). Paired: each
   agent row against each baseline on the same sets, the mean change of the average JCT with its 95 %
   t-interval and the wins.

Writes ``docs/results/rl_learned.md`` and ``rl_learned.csv`` (``--quick``: ``tmp/rl_quick/``, tiny).
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT / "src", ROOT):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import pandas as pd  # noqa: E402

from benchmarks.rl import ci95  # noqa: E402  (one 95 % interval for the RL tables)
from optsched.io import atomic_open  # noqa: E402
from optsched.sim import simulate  # noqa: E402
from optsched.sim.contention.agent import NumpyPolicy  # noqa: E402
from optsched.sim.contention.lookahead import RlAgent  # noqa: E402  (importing it registers the lookaheads)

assert RlAgent.name == "rl-agent"

BASELINES = {"LAS": "contention-las", "SRTF": "contention-srtf", "random": "contention-random",
             "contention-greedy": "contention-greedy", "lookahead": "contention-lookahead",
             "lookahead-small": "contention-lookahead-small",
             "rl-base (paper agent)": "rl-base", "rl-hybrid (paper agent)": "rl-hybrid"}
REFS = ("random", "contention-greedy", "lookahead", "lookahead-small", "rl-hybrid (paper agent)")


TEACHER_TAG = {"lookahead": "", "lookahead-small": "small "}  # label prefix of each teacher's agents


def agent_file(folder: Path, seed: int, args, teacher: str = "lookahead") -> Path:
    """Where the agent of ``seed`` and ``teacher`` is cached (the name says its recipe)."""
    name = f"normal-imitation-i{args.imitation}x{args.imitation_episodes}-t{args.timesteps}-j{args.jobs}"
    if args.timesteps and args.ppo_lr is not None:
        name += f"-lr{args.ppo_lr:g}"
    if teacher != "lookahead":
        name += f"-{teacher}"
    if args.recipe != "imitation":
        name += f"-{args.recipe}"
    return folder / f"{name}-s{seed}.npz"


def get_agent(folder: Path, seed: int, args, teacher: str = "lookahead") -> NumpyPolicy:
    from optsched.rl.train import train

    path = agent_file(folder, seed, args, teacher)
    if not path.exists():
        print(f"  training {path.stem} ...", flush=True)
        hyper = {} if args.ppo_lr is None else {"learning_rate": args.ppo_lr}
        _, info = train(mix="normal", seed=seed, timesteps=args.timesteps, imitation=args.imitation,
                        imitation_episodes=args.imitation_episodes, jobs=args.jobs, numpy_output=path,
                        teacher=teacher, recipe=args.recipe, **hyper)
        print(f"  trained in {info['wall_s']} s (imitation {info['imitation_s']} s)", flush=True)
    return NumpyPolicy.load(path)


def evaluate(mixes, n_sets: int, jobs: int, agents: dict[str, NumpyPolicy],
             reuse: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every policy on every held-out set; ``reuse``: rows of an earlier run (same sets) kept instead of simulating
    again, matched by (mix, policy, agent label, set)."""
    from optsched.rl.train import eval_seeds, job_sets

    rows = []
    old: dict = {}
    if reuse is not None:
        reuse = reuse.fillna({"agent": ""})
        old = {(r["mix"], r["policy"], r["agent"], int(r["instance_seed"])): r.to_dict() for _, r in reuse.iterrows()}
    for mix in mixes:
        for inst in job_sets(eval_seeds(n_sets), mix, jobs):
            pols: dict = dict(BASELINES)
            for label, agent in agents.items():
                pols[f"rl-agent argmax|{label}"] = {"name": "rl-agent", "policy": agent}
                pols[f"rl-agent sampled|{label}"] = {"name": "rl-agent", "policy": agent, "deterministic": False}
            for label, pol in pols.items():
                name, _, agent = label.partition("|")
                if (mix, name, agent, inst.seed) in old:
                    rows.append(old[(mix, name, agent, inst.seed)])
                    continue
                run = simulate(inst, scheduler=pol)
                m = run.custom["contention"]
                rows.append({"mix": mix, "policy": name, "agent": agent, "instance_seed": inst.seed,
                             "avg_jct_h": m["avg_jct_s"] / 3600,
                             "p90_jct_h": m["p90_jct_s"] / 3600,
                             "utilisation": m["utilisation"], "avg_cs": m["avg_cs"],
                             "makespan_h": m["makespan_s"] / 3600})
            print(f"  {mix} set {inst.seed} done", flush=True)
    return pd.DataFrame(rows)


def pooled(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with, for every agent recipe of more than one seed, its rows again under the agent label
    ``<recipe>all seeds`` (so that the tables give the mean and the paired change over every seed x set pair)."""
    a = df[df["agent"] != ""]
    group = a["agent"].str.replace(r"s\d+$", "", regex=True)
    extra = []
    for g, rows in a.groupby(group, sort=False):
        if rows["agent"].nunique() > 1:
            extra.append(rows.assign(agent=f"{g}all seeds"))
    return pd.concat([df, *extra], ignore_index=True) if extra else df


def tables(df: pd.DataFrame) -> list[str]:
    lines = []
    df = pooled(df)
    for mix, d in df.groupby("mix", sort=False):
        lines += [f"## {mix.capitalize()} mix", "", "| policy | n | avg JCT (h) | p90 JCT (h) | util. | mean CS | "
                  "makespan (h) |", "|---|---|---|---|---|---|---|"]
        for (pol, agent), g in d.groupby(["policy", "agent"], sort=False):
            pol = f"{pol} [{agent}]" if agent else pol
            cells = []
            for k in ("avg_jct_h", "p90_jct_h", "utilisation", "avg_cs", "makespan_h"):
                m, h = ci95(g[k])
                cells.append(f"{m:.3f}" if math.isnan(h) else f"{m:.3f} ± {h:.3f}")
            lines.append(f"| {pol} | {len(g)} | " + " | ".join(cells) + " |")
        lines += ["", "Paired on the same job sets (change of the average JCT, mean ± 95 % t-interval over every "
                  "agent seed x set pair; wins = pairs where the row's policy is better):", "",
                  "| policy | against | change | wins |", "|---|---|---|---|"]
        base = d[d["agent"] == ""].set_index(["policy", "instance_seed"])["avg_jct_h"]
        rows = [("lookahead", d[d["policy"] == "lookahead"])]
        rows += [(f"{p} [{agent}]", g) for (p, agent), g in d[d["agent"] != ""].groupby(["policy", "agent"],
                                                                                        sort=False)]
        for pol, a in rows:
            for ref in REFS:
                if ref == pol or not len(a):
                    continue
                r = [x / base[(ref, s)] - 1 for x, s in zip(a["avg_jct_h"], a["instance_seed"])]
                m, h = ci95(r)
                lines.append(f"| {pol} | {ref} | {m:+.1%} ± {h:.1%} | {sum(v < 0 for v in r)} / {len(r)} |")
        lines.append("")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--imitation", type=int, default=6)
    ap.add_argument("--imitation-episodes", type=int, default=16)
    ap.add_argument("--timesteps", type=int, default=0)
    ap.add_argument("--ppo-lr", type=float, default=None, help="MaskablePPO learning rate (default: the recipe's)")
    ap.add_argument("--teachers", default="lookahead",
                    help="comma-separated imitation teachers: lookahead, lookahead-small (one agent per seed each)")
    ap.add_argument("--jobs", type=int, default=64, help="jobs per training window")
    ap.add_argument("--recipe", choices=["imitation", "mixed"], default="imitation",
                    help="the training recipe (mixed: then DAgger with the rollout teacher on 4-8-job windows)")
    ap.add_argument("--sets", type=int, default=5)
    ap.add_argument("--mixes", default="normal")
    ap.add_argument("--agents", default=str(ROOT / "tmp" / "rl_agents24"))
    ap.add_argument("--reuse", default=None, help="a CSV of an earlier run whose rows are kept (same sets)")
    ap.add_argument("--extra", nargs="*", default=[],
                    help="more .npz agents to evaluate, as LABEL=PATH or PATH (label = file stem)")
    args = ap.parse_args(argv)
    eval_jobs = 256
    if args.quick:
        args.seeds, args.imitation, args.imitation_episodes, args.timesteps = 1, 2, 2, 0
        args.jobs, args.sets, eval_jobs = 16, 1, 32
    out = ROOT / ("tmp/rl_quick" if args.quick else "docs/results")
    folder = Path(args.agents) / ("quick" if args.quick else "")
    folder.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    teachers = [t for t in args.teachers.split(",") if t]
    agents = {f"{TEACHER_TAG[t]}s{s}": get_agent(folder, s, args, t) for t in teachers for s in range(args.seeds)}
    for f in args.extra:
        label, _, path = f.rpartition("=")
        agents[label or Path(path).stem] = NumpyPolicy.load(path)
    walls = {k: (a.meta.get("wall_s"), a.meta.get("cpu_s"), a.meta.get("imitation_s")) for k, a in agents.items()}
    reuse = pd.read_csv(args.reuse) if args.reuse else None
    df = evaluate([m for m in args.mixes.split(",") if m], args.sets, eval_jobs, agents, reuse)
    wall = time.perf_counter() - t0
    lines = ["# Issue 24: a learned scheduler against random actions, contention-greedy and the lookahead "
             "(our simulator; not the paper's numbers)", "",
             f"Held-out job sets: {args.sets} per mix, {eval_jobs} jobs each, all at t = 0, seeds 1,000,000 + i "
             "(never trained on); repository round semantics (300 s rounds, DeepShare's measured table, floor 0.35, "
             f"threshold 0.6, sticky ratios). Agents: the `{args.recipe}` recipe (`optsched.rl.train`), DAgger from "
             + " / ".join(f"`contention-{t}`" + (f" (labels `{TEACHER_TAG[t]}sN`)" if TEACHER_TAG[t] else "")
                          for t in teachers)
             + f" ({args.imitation} iterations x {args.imitation_episodes} episodes of "
             f"{args.jobs}-job Normal windows)"
             + ("" if args.recipe != "mixed" else ", then DAgger with the rollout teacher on 4-8-job windows of a "
                "quarter hour (`RECIPES['mixed']`)")
             + f", then {args.timesteps} MaskablePPO steps"
             + ("" if args.ppo_lr is None else f" (learning rate {args.ppo_lr:g})") + "; average-JCT reward "
             "(undiscounted), work-conserving actions, the richer observation. `rl-agent argmax` / `sampled`: the "
             "masked argmax / a draw from the masked softmax (seed 0). The paper's shipped agent "
             "(`rl/data/normal.npz`) runs as rl-base and rl-hybrid. `[all seeds]`: every seed x set pair of one "
             "recipe pooled (n = seeds x sets).", "",
             f"Command: `{shlex.join(['.venv/bin/python', 'benchmarks/rl_learned.py', *sys.argv[1:]])}` "
             f"({wall / 60:.1f} min on the shared 2-core machine, training included when not cached"
             + ("; rows of `--reuse` kept, not simulated again" if args.reuse else "") + ").", "",
             "Training per agent, seconds (wall / CPU of the process / DAgger part of the wall time): "
             + ", ".join(f"{k}: {w} / {c} / {i}" for k, (w, c, i) in walls.items()), "", *tables(df)]
    with atomic_open(out / "rl_learned.md") as fh:
        fh.write("\n".join(lines) + "\n")
    with atomic_open(out / "rl_learned.csv", newline="") as fh:
        df.to_csv(fh, index=False)
    print(f"wrote {out / 'rl_learned.md'} ({wall / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
