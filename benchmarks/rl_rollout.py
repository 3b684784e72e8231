"""Issue 24's rollout-teacher experiment: DAgger from the lookahead (the imitation recipe), then DAgger in which the
student acts on 32-job Normal windows and the rollout teacher labels (OUR simulator; never the paper's numbers).

Run: ``.venv/bin/python benchmarks/rl_rollout.py [--seed 0] [--iterations 2] [--episodes 4] [--repeat 6]
[--agents DIR]``; then evaluate the agent with ``benchmarks/rl_learned.py --extra "rollout s0=PATH"``.

The rollout teacher ([`optsched.rl.imitation.rollout_action`][]) tries every valid action on a replay of the same
window and follows the lookahead to its end (one step of policy improvement over the lookahead; about 25 CPU s per
32-job window). Its labels are few (about 170 per window), so the refit repeats them ``--repeat`` times beside the
lookahead's. Writes ``normal-rollout-i{iterations}x{episodes}-r{repeat}-s{seed}.npz`` into ``--agents`` (default
``tmp/rl_agents24/``, untracked) with the CPU and wall seconds in its metadata.
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
from optsched.rl.export import export_numpy, numpy_policy  # noqa: E402
from optsched.rl.imitation import dagger, fit, rollouts  # noqa: E402
from optsched.rl.train import make_model, train_seeds  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--episodes", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=6)
    ap.add_argument("--agents", default=str(ROOT / "tmp" / "rl_agents24"))
    args = ap.parse_args(argv)
    seed = args.seed
    c0, t0 = time.process_time(), time.perf_counter()
    seeds = train_seeds(seed, 1000)

    def sets(jobs: int):
        return lambda i: random_contention_instance(jobs=jobs, mix="normal",
                                                    seed=seeds[i % 1000] + (0 if jobs == 64 else 500))

    env = ContentionEnv(sets(64), reward="avg-jct", observation="rich", work_conserving=True)
    # the imitation recipe's model and DAgger stage (optsched.rl.train.RECIPES["imitation"])
    model = make_model(env, seed=seed, gamma=1.0, n_steps=1024, learning_rate=1e-4)
    base = dagger(model, env, iterations=8, episodes=24, gamma=1.0, seed=seed)
    print(f"lookahead DAgger: {time.process_time() - c0:.1f} CPU s", flush=True)
    env32 = ContentionEnv(sets(32), reward="avg-jct", observation="rich", work_conserving=True)
    rng = np.random.default_rng(seed)
    roll: dict | None = None
    log = []
    for it in range(args.iterations):
        new = rollouts(env32, args.episodes, numpy_policy(model), 0.0, 1.0, rng, teacher="rollout")
        roll = new if roll is None else {k: np.concatenate([roll[k], new[k]]) for k in roll}
        student = numpy_policy(model)
        agree = float(np.mean([student.act(o, m) == a for o, m, a in zip(roll["obs"], roll["mask"], roll["action"])]))
        data = {k: np.concatenate([base[k]] + [roll[k]] * args.repeat) for k in base}
        stats = fit(model, data, epochs=10, lr=1e-3, seed=seed + 100 + it)
        log.append({"iteration": it, "rollout_samples": int(len(roll["action"])), "agree_before": agree, **stats,
                    "cpu_s": round(time.process_time() - c0, 1)})
        print(log[-1], flush=True)
    wall = round(time.perf_counter() - t0, 1)
    info = {"name": f"normal-rollout-dagger-seed{seed}", "mix": "normal", "reward": "avg-jct", "observation": "rich",
            "work_conserving": True, "jobs": 64, "seed": seed, "cpu_s": round(time.process_time() - c0, 1),
            "wall_s": wall, "imitation_s": wall, "timesteps": 0,
            "imitation": {"teacher": "lookahead, then rollout", "log": log}}
    out = Path(args.agents) / f"normal-rollout-i{args.iterations}x{args.episodes}-r{args.repeat}-s{seed}.npz"
    out.parent.mkdir(parents=True, exist_ok=True)
    export_numpy(model, out, info)
    print(f"wrote {out} ({info['cpu_s']} CPU s, {wall} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
