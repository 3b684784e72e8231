"""``optsched solve INSTANCE [--algorithm NAME] [-o SCHEDULE]``; ``optsched solve --list``."""

from __future__ import annotations

import argparse
import sys

from ._args import output_file, positive_float, seed


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
    p.add_argument("-o", "--output", type=output_file("-o"),
                   help="write the schedule JSON here (atomically; '-' for standard output)")
    p.add_argument("--seed", type=seed(), default=0, help="random seed (0 .. 2^31-1) of randomised algorithms "
                                                         "and of CP-SAT's search (default 0)")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--time-limit", type=positive_float("--time-limit"), default=None,
                       help="seconds of wall clock, for exact models (default: the model's own, 60 s for RAR-DDLS)")
    limit.add_argument("--deterministic-limit", type=positive_float("--deterministic-limit"), default=None,
                       help="CP-SAT deterministic time instead of seconds: a run stopped by it is reproducible "
                            "with the same seed (CP-SAT models only)")
    p.add_argument("--progress", action="store_true",
                   help="heartbeat lines on stderr while an exact model runs (default when stderr is a terminal)")
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
    from ..exact._cpsat import heartbeat
    from ..io import save_schedule
    from ..registry import get_algorithm, problem_of

    if args.list:
        print_algorithms()
        return 0
    if not args.instance:
        raise InstanceError("is required (or --list to see the algorithms)", field="INSTANCE")
    inst = load_instance(args.instance)
    name = args.algorithm or problem_of(inst).default_algorithm
    if name is None:
        raise InstanceError("this problem has no algorithms", field="--algorithm")
    alg = get_algorithm(name)
    options = {}
    for flag, value in (("--time-limit", args.time_limit), ("--deterministic-limit", args.deterministic_limit)):
        if value is not None and not alg.exact:
            raise InstanceError(f"applies to exact models only; {name} is a heuristic", field=flag)
    if args.deterministic_limit is not None:
        options["deterministic_limit"] = args.deterministic_limit
    every = 10.0 if (args.progress or sys.stderr.isatty()) and alg.exact else None
    with heartbeat(every, sys.stderr):
        try:
            res = solve(inst, name, seed=args.seed, time_limit=args.time_limit, **options)
        except TypeError as exc:
            if "deterministic_limit" not in str(exc):
                raise
            raise InstanceError(f"{name} is not a CP-SAT model", field="--deterministic-limit") from None
    out = sys.stderr if args.output == "-" else sys.stdout  # the schedule itself goes to standard output
    limit = res.info.get("limit")
    print(res.summary() + (f" limit={limit}" if limit and alg.exact else ""), file=out)
    if res.schedule is None:
        print(f"no schedule found ({res.status}); nothing written", file=out)
        return NO_SCHEDULE
    ev = res.evaluation if res.evaluation is not None else evaluate(inst, res.schedule)
    print(ev.summary(), file=out)
    if args.output:
        extra = {"objective": res.objective}
        makespan = getattr(ev, "makespan", None)
        save_schedule(res.schedule, args.output, makespan=makespan, status=str(res.status),
                      lower_bound=res.lower_bound, runtime_s=round(res.runtime_s, 6), seed=res.seed, **extra)
        if args.output != "-":
            print(f"schedule written to {args.output}")
    return 0
