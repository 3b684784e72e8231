"""``optsched solve INSTANCE [--algorithm NAME] [-o SCHEDULE]``; ``optsched solve --list``."""

from __future__ import annotations

import argparse
import sys


def register(sub) -> None:
    p = sub.add_parser("solve", help="solve an instance with one algorithm and write the schedule",
                       description="Solve an instance file (any registered problem) with a registered "
                                   "algorithm; print a summary (objective, the evaluator's figures, runtime, and "
                                   "status/bound/gap for exact models) and write the schedule file. Exit code 0 "
                                   "when a schedule was found, 3 when an exact model stopped (time limit) "
                                   "without one.",
                       epilog="Examples: optsched solve tiny.json; optsched solve tiny.json -a exact "
                              "--time-limit 30 -o tiny.schedule.json; optsched solve --list")
    p.add_argument("instance", nargs="?", help="instance JSON file")
    p.add_argument("-a", "--algorithm", default=None,
                   help="algorithm name (default: the problem's own, e.g. sjf-bco for RAR-DDLS, "
                        "total-jct-cpsat for total JCT, heavy-edge for placement); --list shows them all")
    p.add_argument("-o", "--output", help="write the schedule JSON here (atomically; '-' for standard output)")
    p.add_argument("--seed", type=int, default=0, help="random seed for randomised algorithms (default 0)")
    p.add_argument("--time-limit", type=float, default=None, help="seconds, for exact models")
    p.add_argument("--list", action="store_true", help="list the registered algorithms and exit")
    p.set_defaults(func=run)


NO_SCHEDULE = 3  # exit code: an exact model stopped before finding any schedule


def print_algorithms(problem: str | None = None) -> None:
    """One line per algorithm: name, problem, heuristic or exact, description (the default marked)."""
    from ..registry import list_algorithms

    for name, a in list_algorithms(problem).items():
        default = " (default)" if a.problem.default_algorithm == name else ""
        print(f"{name:<17} {a.problem.name:<10} {a.kind:<9} {a.description}{default}")


def run(args: argparse.Namespace) -> int:
    from ..api import evaluate, load_instance, solve
    from ..errors import InstanceError
    from ..io import save_schedule

    if args.list:
        print_algorithms()
        return 0
    if not args.instance:
        raise InstanceError("is required (or --list to see the algorithms)", field="INSTANCE")
    inst = load_instance(args.instance)
    res = solve(inst, args.algorithm, seed=args.seed, time_limit=args.time_limit)
    out = sys.stderr if args.output == "-" else sys.stdout  # the schedule itself goes to standard output
    print(res.summary(), file=out)
    if res.schedule is None:
        print(f"no schedule found ({res.status}); nothing written", file=out)
        return NO_SCHEDULE
    ev = evaluate(inst, res.schedule)
    print(ev.summary(), file=out)
    if args.output:
        extra = {"objective": res.objective}
        makespan = getattr(ev, "makespan", None)
        save_schedule(res.schedule, args.output, makespan=makespan, status=str(res.status),
                      lower_bound=res.lower_bound, runtime_s=round(res.runtime_s, 6), seed=res.seed, **extra)
        if args.output != "-":
            print(f"schedule written to {args.output}")
    return 0
