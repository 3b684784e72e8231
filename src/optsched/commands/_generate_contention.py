"""``optsched generate contention ...``: a DeepShare job set (paper 004) as an ``optsched/contention@1`` file, or
with ``--workload`` as a simulator workload (``optsched/workload@1``, models and samples for ``--perf measured``).

```pycon
>>> from optsched.cli import main
>>> import tempfile, os
>>> out = os.path.join(tempfile.mkdtemp(), "set.json")
>>> main(["generate", "contention", "--jobs", "12", "--mix", "heavy", "--seed", "1", "-o", out])  # doctest: +ELLIPSIS
deepshare-heavy-n12-seed1: 12 jobs (mix heavy, paper ratios; 2 GPUs x4, ...), all at t = 0, 4 x 8 GPUs, 300 s rounds
written to ...
0

```
"""

from __future__ import annotations

import argparse

from ._args import output_file, positive_float, positive_int, seed

# these doctests read the shared DeepShare tables: skipped when they are absent (conftest.py at the root)
__doctest_requires__ = {"*": "deepshare-contention"}

# a job set is held in memory with its per-job simulation state: 1,000,000 jobs is far beyond any study of paper 004
MAX_JOBS = 1_000_000


def register(kinds) -> None:
    from ..generators.contention import MIXES, VARIANTS

    p = kinds.add_parser("contention", help="DeepShare job set under network contention (paper 004)",
                         description="A seeded DeepShare job set (optsched.generators.contention): the six profiled "
                                     "models in one of the paper's four mixes, demands 2/4/8 GPUs, one isolated "
                                     "hour of samples each, all queued at t = 0 (or Poisson arrivals). Simulate it "
                                     "with 'optsched rl evaluate', solve small ones exactly with 'optsched solve'.")
    p.add_argument("--jobs", type=positive_int("--jobs", MAX_JOBS), default=256,
                   help=f"jobs per set (default 256, at most {MAX_JOBS:,})")
    p.add_argument("--mix", choices=sorted(MIXES), default="normal", help="model mix (default normal)")
    p.add_argument("--variant", choices=VARIANTS, default="paper",
                   help="mix ratios: the paper's 4:1 or the repository's 2:1 (default paper)")
    p.add_argument("--draw", choices=["exact", "multinomial"], default="exact",
                   help="exact shares, shuffled (default), or each job's model drawn independently (repository)")
    p.add_argument("--max-gpus", type=int, choices=[8, 32], default=8,
                   help="8: demands 2/4/8 (repository, default); 32: also 16 and 32 (paper, extrapolated)")
    p.add_argument("--hours", type=positive_float("--hours"), default=1.0,
                   help="isolated duration of every job in hours (default 1)")
    p.add_argument("--arrival", choices=["zero", "poisson"], default="zero", help="arrivals (default: all at 0)")
    p.add_argument("--load", type=positive_float("--load"), default=0.8,
                   help="Poisson arrivals: offered GPU load (default 0.8)")
    p.add_argument("--seed", type=seed(), default=0, help="random seed (default 0)")
    p.add_argument("--workload", action="store_true", help="write the simulator's workload format instead")
    p.add_argument("-o", "--output", required=True, type=output_file("-o"), help="file to write ('-': standard output)")
    p.set_defaults(build=build)


def build(args: argparse.Namespace):
    from ..generators.contention import random_contention_instance, to_workload

    inst = random_contention_instance(args.jobs, args.mix, args.seed, variant=args.variant, draw=args.draw,
                                      max_gpus=args.max_gpus, hours=args.hours, arrival=args.arrival, load=args.load)
    return to_workload(inst) if args.workload else inst


def summary(inst) -> str:
    sizes: dict[int, int] = {}
    for j in inst.jobs:
        sizes[j.gpus] = sizes.get(j.gpus, 0) + 1
    mix = ", ".join(f"{g} GPUs x{c}" for g, c in sorted(sizes.items()))
    when = "all at t = 0" if all(j.arrival_s == 0 for j in inst.jobs) else "Poisson arrivals"
    return (f"{inst.name}: {inst.n_jobs} jobs (mix {inst.meta.get('mix', '?')}, {inst.meta.get('variant', '?')} "
            f"ratios; {mix}), {when}, {inst.nodes} x {inst.gpus_per_node} GPUs, {inst.round_s:g} s rounds")
