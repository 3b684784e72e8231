"""Issue 24, expert iteration: distil the planner ([`optsched.rl.planner`][]) into the network, in OUR simulator
(never the paper's numbers).

Run: ``.venv/bin/python benchmarks/rl_expert.py --start PATH_WITH_{seed} [--seeds 0,1,2,3,4] [--iterations 2]
[--large 12] [--large-jobs 64] [--horizon 6] [--top 2] [--small 40] [--small-repeat 3] [--lr 1e-3] [--epochs 10]
[--no-rebase] [--agents DIR] [--from-labels]``.

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
from optsched.rl.export import export_numpy, load_numpy_weights, numpy_policy  # noqa: E402
from optsched.rl.imitation import fit, planner_dagger  # noqa: E402
from optsched.rl.train import RECIPES, make_model, train_seeds  # noqa: E402
from optsched.sim.contention.agent import NumpyPolicy  # noqa: E402


def _opt(x: str) -> int | None:
    return None if x in ("none", "all", "") else int(x)


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
    ap.add_argument("--from-labels", action="store_true",
                    help="no labelling: refit the starting agent on the labels an earlier run kept (--epochs, --lr)")
    args = ap.parse_args(argv)
    out = Path(args.agents)
    out.mkdir(parents=True, exist_ok=True)
    tag = (f"normal-expert-l{args.large}x{args.large_jobs}-h{args.horizon}-k{args.top}-s{args.small}"
           f"r{args.small_repeat}" + ("-fixed" if args.no_rebase else ""))
    for seed in [int(s) for s in args.seeds.split(",") if s]:
        start = NumpyPolicy.load(args.start.format(seed=seed))
        seeds = train_seeds(seed, 1000)

        def large(i: int, seeds=seeds):
            return random_contention_instance(jobs=args.large_jobs, mix="normal", seed=seeds[(600 + i) % 1000])

        def small(i: int, seeds=seeds):
            return random_contention_instance(jobs=4 + i % 5, hours=0.25, mix="normal", seed=seeds[(700 + i) % 1000])

        env = ContentionEnv([large(0)], reward="avg-jct", observation="rich", work_conserving=True)
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
                              epochs=args.epochs, lr=args.lr, seed=seed, log=log, after=after)
        np.savez(out / f"{tag}-i{args.iterations}-labels-s{seed}.npz", **data)  # the aggregate, for refits
    return 0


if __name__ == "__main__":
    sys.exit(main())
