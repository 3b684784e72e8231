"""``optsched evaluate INSTANCE SCHEDULE [--json]``: score any schedule file, whoever made it."""

from __future__ import annotations

import argparse

from ..io import json_text
from ._output import evaluation_dict


def register(sub) -> None:
    p = sub.add_parser("evaluate", help="score a schedule file against its instance",
                       description="Replay a schedule on its instance with the problem's own exact evaluator "
                                   "(the slot-level model for RAR-DDLS, sum of weighted completions for total "
                                   "JCT, eq. 7 for a placement) and print its figures; an infeasible schedule is "
                                   "rejected with the reason (exit code 2).")
    p.add_argument("instance", help="instance JSON file")
    p.add_argument("schedule", help="schedule JSON file (format optsched/schedule@1)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every job's start and completion")
    p.add_argument("--json", action="store_true",
                   help="print the figures (and with -v every job) as JSON on standard output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..limits import paused_gc

    # a 100,000-job schedule's rows and JSON text are acyclic too: the collector's passes over every live job
    # there took about a fifth of the command (issue 29), as inside loading and evaluating
    with paused_gc():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from ..api import evaluate, load_instance
    from ..io import load_schedule

    inst = load_instance(args.instance)
    sched = load_schedule(args.schedule)
    ev = evaluate(inst, sched)
    claimed = sched.makespan
    makespan = getattr(ev, "makespan", None)
    note = (f"the file claims makespan {claimed}, the evaluator finds {makespan}"
            if claimed is not None and makespan is not None and claimed != makespan else None)
    if args.json:
        doc = {"instance": args.instance, "schedule": args.schedule, "feasible": True, **evaluation_dict(ev)}
        if note:
            doc["note"] = note
        print(json_text(doc, ev.schedule.rows() if args.verbose else None, default=str))
        return 0
    print(ev.summary())
    if note:
        print(f"note: {note}")
    if args.verbose:
        for j in sorted(ev.schedule.jobs, key=lambda j: (j.start, j.id)):
            pl = ",".join(f"{s}={n}" for s, n in j.placement.items())
            done = "-" if j.completion is None else f"{j.completion:g}"
            print(f"{j.id:>8} start={j.start:>6g} completion={done:>6} placement={pl}")
    return 0
