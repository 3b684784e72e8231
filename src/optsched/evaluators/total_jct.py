"""Independent scoring of a total-JCT schedule (paper 001's problem A): feasibility and sum_i w_i C_i.

```pycon
>>> from optsched.cluster import Cluster
>>> from optsched.problems.total_jct import Mode, TotalJctInstance, TotalJctJob
>>> from optsched.result import Schedule, ScheduledJob
>>> inst = TotalJctInstance(Cluster.homogeneous(1, 2), (TotalJctJob("a", 0, 2, (Mode((2,), 3),)),
...                                                      TotalJctJob("b", 1, 1, (Mode((1,), 2),))))
>>> ev = evaluate(inst, Schedule((ScheduledJob("a", 0, {"s0": 2}), ScheduledJob("b", 3, {"s0": 1}))))
>>> ev.objective, ev.makespan, ev.average_jct
(8, 5, 3.5)

```
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ScheduleError
from ..problems.total_jct import TotalJctInstance, _is_int
from ..result import Schedule, ScheduledJob
from . import check_capacity

__all__ = ["TotalJctEvaluation", "check_schedule", "evaluate"]


@dataclass(frozen=True)
class TotalJctEvaluation:
    """``objective``: sum_i w_i C_i; ``makespan``: max_i C_i; ``average_jct``: mean of C_i - r_i (time units)."""

    objective: int
    schedule: Schedule
    makespan: int = 0
    average_jct: float = 0.0
    objective_name = "total weighted completion"

    def summary(self) -> str:
        """One line: the objective, makespan and average JCT (time units)."""
        return f"feasible: objective={self.objective} makespan={self.makespan} average JCT={self.average_jct:.2f}"


def check_schedule(inst: TotalJctInstance, schedule: Schedule) -> int:
    """sum_i w_i C_i of ``schedule``, after checking it independently of any solver: one entry per job, integer
    start >= release, a placement whose shape is one of the job's modes, completion = start + that mode's
    duration, and no server over capacity at any time. Raises [`ScheduleError`][optsched.errors.ScheduleError]
    otherwise."""
    cap = inst.cluster.capacity
    ids = [sj.id for sj in schedule]
    if sorted(ids) != sorted(j.id for j in inst.jobs):
        raise ScheduleError(f"schedule lists jobs {sorted(ids)}, instance has {sorted(j.id for j in inst.jobs)}",
                            field="schedule")
    events: dict[str, list[tuple[int, int]]] = {s: [] for s in cap}
    total = 0
    for j in inst.jobs:
        sj = schedule[j.id]
        if not _is_int(sj.start) and not (isinstance(sj.start, float) and sj.start.is_integer()):
            raise ScheduleError(f"start must be an integer time, got {sj.start!r}", field="start", job=j.id)
        start = int(sj.start)
        if start < j.release:
            raise ScheduleError(f"starts at {start} before its release {j.release}", field="start", job=j.id)
        inst.cluster.check_placement(dict(sj.placement), field="placement", job=j.id)
        shape = tuple(sorted(sj.placement.values(), reverse=True))
        modes = {m.shape: m for m in j.modes}
        if shape not in modes:
            raise ScheduleError(f"placement shape {shape} is not a mode of the job", field="placement", job=j.id)
        end = start + modes[shape].duration
        if sj.completion is not None and sj.completion != end:
            raise ScheduleError(f"completion {sj.completion} != start + duration = {end}", field="completion",
                                job=j.id)
        total += j.weight * end
        for s, n in sj.placement.items():
            if end > start:
                events[s] += [(start, n), (end, -n)]
    check_capacity(events, cap)
    return total


def evaluate(inst: TotalJctInstance, schedule: Schedule) -> TotalJctEvaluation:
    """The checked objective and the schedule with completions filled in (the registry's evaluator)."""
    total = check_schedule(inst, schedule)
    rows, ends, jct = [], [], []
    for sj in schedule:
        j = inst.job(sj.id)
        d = {m.shape: m.duration for m in j.modes}[tuple(sorted(sj.placement.values(), reverse=True))]
        end = int(sj.start) + d
        rows.append(ScheduledJob(sj.id, sj.start, dict(sj.placement), end, sj.stage_placement))
        ends.append(end)
        jct.append(end - j.release)
    return TotalJctEvaluation(total, Schedule(tuple(rows), schedule.algorithm, inst.name), max(ends),
                              sum(jct) / len(jct))
