"""Issue 24: the rollout teacher and issue-24 agents on the proven small instances of ``rl_optimum.csv``, in OUR
simulator against OUR DP's optima (never the paper's numbers); prints, writes nothing.

Run: ``.venv/bin/python benchmarks/rl_small_teachers.py [--optima docs/results/rl_optimum.csv] [--agent [LABEL=]NPZ
...]`` (needs the ``[rl]`` extra for the environment).

The instances and their optima are those of ``benchmarks/rl_optimum.py`` (its CSV: jobs, seed, status,
``opt_avg_jct_h``; the DP is not run again), so the gaps are comparable with its table. Rows: the lookahead, its
small-demand-first variant, the rollout teacher ([`optsched.rl.imitation.rollout_action`][] followed from the
first decision: each valid action tried, the lookahead to the end of the episode) and each agent as ``rl-agent``
(argmax and sampled). Per row: mean gap over the proven instances (4 and 5 jobs apart), how many are optimal, CPU
seconds. Then, on the states the rollout teacher visits where more than one action is valid, how often the
lookahead and each agent (argmax) choose the teacher's action, and in which round those states lie.
"""

from __future__ import annotations

import argparse
import re
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
from optsched.sim import simulate  # noqa: E402
from optsched.sim.contention.agent import load_policy  # noqa: E402
from optsched.sim.contention.lookahead import RlAgent  # noqa: E402  (importing it registers the lookaheads)

assert RlAgent.name == "rl-agent"


def main(argv: list[str] | None = None) -> int:
    from optsched.rl.env import ContentionEnv
    from optsched.rl.imitation import rollout_action

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--optima", default=str(ROOT / "docs" / "results" / "rl_optimum.csv"))
    ap.add_argument("--hours", type=float, default=0.25, help="isolated hours per job (rl_optimum's --hours)")
    ap.add_argument("--agent", nargs="*", default=[], help="issue-24 .npz agents, LABEL=PATH or PATH")
    args = ap.parse_args(argv)
    opt = pd.read_csv(args.optima)
    opt = opt[opt["status"] == "optimal"].reset_index(drop=True)
    insts = [(random_contention_instance(jobs=int(r["jobs"]), mix="normal", seed=int(r["seed"]), hours=args.hours),
              float(r["opt_avg_jct_h"])) for _, r in opt.iterrows()]
    agents = {}
    for a in args.agent:
        label, _, path = a.rpartition("=")
        agents[label or Path(path).stem] = load_policy(path)

    def report(label: str, gaps: list[float], cpu: float) -> None:
        g = np.asarray(gaps)
        by = " ".join(f"{n} jobs {g[opt['jobs'] == n].mean():.2%}" for n in sorted(opt["jobs"].unique()))
        print(f"{label}: mean gap {g.mean():.2%} ({by}), optimal on {int(np.sum(g < 1e-9))} / {len(g)}, "
              f"{cpu:.1f} CPU s", flush=True)

    specs: dict = {"lookahead": "contention-lookahead", "lookahead-small": "contention-lookahead-small"}
    for label, pol in agents.items():
        specs[f"rl-agent [{label}]"] = {"name": "rl-agent", "policy": pol}
        specs[f"rl-agent sampled [{label}]"] = {"name": "rl-agent", "policy": pol, "deterministic": False}
    recipes: dict[str, list[float]] = {}  # "rl-agent [small " -> the gaps of every seed x instance pair
    for label, spec in specs.items():
        c = time.process_time()
        gaps = [float(simulate(i, scheduler=spec).jobs["round_jct_s"].mean()) / 3600 / o - 1 for i, o in insts]
        report(label, gaps, time.process_time() - c)
        if label.startswith("rl-agent") and re.search(r"s\d+]$", label):
            recipes.setdefault(re.sub(r"s\d+]$", "", label), []).extend(gaps)
    for g, v in recipes.items():
        if len(v) > len(insts):
            m, h = ci95(v)
            print(f"{g}all {len(v) // len(insts)} seeds]: mean gap {m:.2%} ± {h:.2%} over {len(v)} seed x instance "
                  f"pairs, optimal on {int(np.sum(np.asarray(v) < 1e-9))}", flush=True)
    c = time.process_time()
    gaps, rounds = [], []
    agree: dict[str, list[bool]] = {"lookahead": [], **{k: [] for k in agents}}
    for inst, o in insts:
        env = ContentionEnv([inst], reward="avg-jct", observation="rich", work_conserving=True)
        obs, _ = env.reset(options={"instance": inst})
        total, done, taken = 0.0, False, list[int]()
        while not done:
            mask = env.action_masks()
            a = rollout_action(env, taken)
            if mask[:-1].sum() > 1:
                agree["lookahead"].append(env.expert_action() == a)
                for k, pol in agents.items():
                    agree[k].append(pol.act(obs, mask, True) == a)
                if env.expert_action() != a:
                    rounds.append(env._rounds)
            obs, r, term, trunc, _ = env.step(a)
            taken.append(a)
            total, done = total + r, term or trunc
        gaps.append(-total / o - 1)  # the avg-jct return is minus the average JCT in hours
    report("rollout teacher", gaps, time.process_time() - c)
    n = len(agree["lookahead"])
    print(f"states with a choice on the teacher's path: {n}; the lookahead differs from the teacher in "
          f"{len(rounds)} (rounds: {sorted(set(rounds))})")
    for k, hits in agree.items():
        print(f"  agreement with the rollout teacher, {k}: {np.mean(hits):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
