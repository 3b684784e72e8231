"""``optsched solve INSTANCE --algorithm NAME [-o SCHEDULE]``."""

from __future__ import annotations

import argparse

# problem class -> the algorithm ``optsched solve`` runs when --algorithm is not given
DEFAULT_ALGORITHM = {"RarInstance": "sjf-bco", "TotalJctInstance": "total-jct-cpsat"}


def register(sub) -> None:
    p = sub.add_parser("solve", help="solve an instance with one algorithm and write the schedule",
                       description="Solve an instance file with a registered algorithm; print a summary "
                                   "(objective, average JCT, runtime, and status/bound/gap for exact models) "
                                   "and write the schedule file.")
    p.add_argument("instance", help="instance JSON file")
    p.add_argument("-a", "--algorithm", default=None,
                   help="algorithm name (default: sjf-bco for RAR-DDLS, total-jct-cpsat for total-JCT "
                        "instances); 'optsched solve --list' shows them all")
    p.add_argument("-o", "--output", help="write the schedule JSON here (atomically)")
    p.add_argument("--seed", type=int, default=0, help="random seed for randomised algorithms (default 0)")
    p.add_argument("--time-limit", type=float, default=None, help="seconds, for exact models")
    p.add_argument("--list", action="store_true", help="list the registered algorithms and exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..io import load, save_schedule
    from ..registry import algorithms, evaluator, solve

    if args.list:
        for name, spec in algorithms().items():
            print(f"{name:<16} {spec.problem:<16} {'exact' if spec.exact else 'heuristic':<9} {spec.description}")
        return 0
    inst = load(args.instance)
    algorithm = args.algorithm or DEFAULT_ALGORITHM.get(type(inst).__name__, "sjf-bco")
    res = solve(inst, algorithm, seed=args.seed, time_limit=args.time_limit)
    print(res.summary())
    if res.schedule is not None:
        ev = evaluator(type(inst).__name__)(inst, res.schedule)
        jct = getattr(ev, "average_jct", None)
        if jct is not None:
            print(f"average JCT={jct:.2f}")
        if args.output:
            # the file's "makespan" is always the makespan; another objective (total JCT) goes beside it
            extra = {"objective": res.objective} if ev.objective != ev.makespan else {}
            save_schedule(res.schedule, args.output, makespan=ev.makespan, status=str(res.status),
                          lower_bound=res.lower_bound, runtime_s=round(res.runtime_s, 6), seed=res.seed, **extra)
            print(f"schedule written to {args.output}")
    return 0
