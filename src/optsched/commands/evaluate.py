"""``optsched evaluate INSTANCE SCHEDULE``: score any schedule file, whoever made it."""

from __future__ import annotations

import argparse


def register(sub) -> None:
    p = sub.add_parser("evaluate", help="score a schedule file against its instance",
                       description="Replay a schedule on its instance with the problem's exact model (the "
                                   "slot-level model for RAR-DDLS) and print makespan and average JCT, and "
                                   "the objective where it is not the makespan (total-JCT instances); an "
                                   "infeasible schedule is rejected with the reason (exit code 2).")
    p.add_argument("instance", help="instance JSON file")
    p.add_argument("schedule", help="schedule JSON file (format optsched/schedule@1)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every job's start and completion")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..io import load, load_schedule
    from ..registry import evaluator

    inst = load(args.instance)
    sched = load_schedule(args.schedule)
    ev = evaluator(type(inst).__name__)(inst, sched)
    # total-JCT instances (optsched/total-jct@1) minimise sum_i w_i C_i, not the makespan: print both
    objective = f"objective={ev.objective} " if ev.objective != ev.makespan else ""
    print(f"feasible: {objective}makespan={ev.makespan} average JCT={ev.average_jct:.2f}"
          + (" (exceeds the horizon)" if getattr(ev, "exceeds_horizon", False) else ""))
    claimed = sched.makespan
    if claimed is not None and claimed != ev.makespan:
        print(f"note: the file claims makespan {claimed}, the evaluator finds {ev.makespan}")
    if args.verbose:
        for j in sorted(ev.schedule.jobs, key=lambda j: (j.start, j.id)):
            pl = ",".join(f"{s}={n}" for s, n in j.placement.items())
            print(f"{j.id:>8} start={int(j.start):>6} completion={j.completion:>6} placement={pl}")
    return 0
