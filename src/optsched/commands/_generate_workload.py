"""``optsched generate workload``: an online workload file (paper 002) from a trace or the synthetic generator."""

from __future__ import annotations

import argparse

from ._args import add_seed_and_output, positive_float, positive_int


def register(kinds) -> None:
    p = kinds.add_parser("workload", help="online workload (paper 002): Philly, Pollux, bursty or synthetic jobs",
                         description="A workload for 'optsched simulate FILE' "
                                     "(optsched.generators.workload.generate_workload): --source synthetic "
                                     "(Poisson arrivals, Philly-like GPU mix), philly or philly:blox (the Philly "
                                     "trace, Blox's filter, re-timed), pollux:N, bursty; the traces are read from "
                                     "the shared data folder.")
    p.add_argument("--source", default="synthetic",
                   help="synthetic | philly | philly:blox | pollux:N | bursty (default synthetic)")
    p.add_argument("--jobs", type=positive_int("--jobs"), default=None,
                   help="number of jobs (synthetic default 200; traces: the first N by arrival)")
    p.add_argument("--load", type=positive_float("--load"), default=None,
                   help="arrivals per hour (default 8; Pollux keeps its own times unless given)")
    add_seed_and_output(p)
    p.set_defaults(build=_build)


def _build(args: argparse.Namespace):
    from ..generators.workload import generate_workload

    return generate_workload(args.source, jobs=args.jobs, load_jph=args.load, seed=args.seed)


def summary(wl) -> str:
    """One line for a workload file (``generate workload``, ``generate contention --workload``): jobs, their
    GPUs, the arrival span."""
    sizes: dict[int, int] = {}
    for j in wl.jobs:
        sizes[j.gpus] = sizes.get(j.gpus, 0) + 1
    mix = ", ".join(f"{g} GPUs x{c}" for g, c in sorted(sizes.items()))
    last = max((j.arrival_s for j in wl.jobs), default=0.0)
    when = "all at t = 0" if last == 0 else f"arrivals over {last / 3600:.3g} h"
    return f"{getattr(wl, 'name', '') or 'workload'}: {len(wl.jobs)} jobs ({mix}), {when}"

