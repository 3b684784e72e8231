"""``optsched list [WHAT]``: what the package offers, one line each (heuristic vs exact marked)."""

from __future__ import annotations

import argparse

WHAT = ("problems", "algorithms", "schedulers", "placements", "admissions", "perf")


def register(sub) -> None:
    p = sub.add_parser("list", help="list problems, algorithms, simulator policies and performance models",
                       description="List what optsched offers: the problems (with their file format, default "
                                   "algorithm and generator), the algorithms (heuristic or exact), and the "
                                   "simulator's schedulers, placements, admission policies and performance "
                                   "models.")
    p.add_argument("what", nargs="?", choices=WHAT, default=None, help="one section only (default: all)")
    p.set_defaults(func=run)


def first_sentence(doc: str | None) -> str:
    """The first sentence of a docstring's first paragraph, on one line."""
    para = " ".join((doc or "").strip().split("\n\n")[0].split())
    head, dot, _ = para.partition(". ")
    return head + "." if dot else para


def _problems() -> None:
    from ..registry import problems

    for p in problems().values():
        extra = f"default {p.default_algorithm}" if p.default_algorithm else "no solvers"
        print(f"{p.name:<13} {p.format:<26} {extra:<24} {p.title}")


def _sim(kind: str) -> None:
    from ..sim import policies

    policies.load_plugins()
    table = {"schedulers": policies.SCHEDULERS, "placements": policies.PLACEMENTS,
             "admissions": policies.ADMISSIONS, "perf": policies.PERF_MODELS}[kind]
    for name in sorted(table):
        obj = table[name]
        print(f"{name:<17} {'' if isinstance(obj, str) else first_sentence(obj.__doc__)}")


def run(args: argparse.Namespace) -> int:
    from .solve import print_algorithms

    sections = [args.what] if args.what else list(WHAT)
    for i, what in enumerate(sections):
        if len(sections) > 1:
            print(("\n" if i else "") + f"[{what}]")
        if what == "problems":
            _problems()
        elif what == "algorithms":
            print_algorithms()
        else:
            _sim(what)
    return 0
