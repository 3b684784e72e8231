"""Independent scoring of a deadline schedule (paper 003's offline problem): feasibility and deadlines met.

A schedule lists the jobs that run, each once, non-preemptively, from ``start`` (seconds) on ``placement``
(node id -> GPUs); a job absent from the schedule does not run (it misses its deadline). The evaluator
recomputes every completion with the time model (eq. 1: B_intra on one node, B_inter across nodes), checks
that no job starts before its arrival, that a placement uses known nodes and at most ``max_gpus`` GPUs, and
that no node is over capacity at any instant (a job ending at t frees its GPUs for a job starting at t; two
jobs may overlap by up to the package's tolerance ``DEADLINE_TOL_S``, 1 us, which absorbs floating-point
noise). It works in continuous time: the exact models' time grid is theirs, not the evaluator's.

```pycon
>>> from optsched.problems.deadline import DeadlineJob, DeadlineWorkload, paper_cluster
>>> from optsched.result import Schedule, ScheduledJob
>>> wl = DeadlineWorkload(paper_cluster(1, 2), (DeadlineJob("a", "ResNet-50", 0, 1.0, 1),
...                                              DeadlineJob("b", "ResNet-50", 0, 1.0, 1)))
>>> ev = evaluate(wl, Schedule((ScheduledJob("a", 0, {"n0": 1}), ScheduledJob("b", 0, {"n0": 1}))))
>>> ev.objective, ev.met, ev.summary()
(2.0, ('a', 'b'), 'feasible: 2 of 2 deadlines met (weighted 2), 2 jobs run')
>>> evaluate(wl, Schedule((ScheduledJob("a", 0, {"n0": 2}), ScheduledJob("b", 0, {"n0": 1}))))
Traceback (most recent call last):
...
optsched.errors.ScheduleError: placement: node n0 uses 3 GPUs > 2 at time 0

```
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InstanceError, ScheduleError
from ..problems.deadline import DEADLINE_TOL_S, DeadlineWorkload, job_weight, meets_deadline
from ..result import Schedule, ScheduledJob
from . import check_capacity

__all__ = ["DeadlineEvaluation", "evaluate"]


@dataclass(frozen=True)
class DeadlineEvaluation:
    """``objective``: the weighted number of deadlines met (``weights``: ``count`` or ``urgency``, see
    [`optsched.problems.deadline.WEIGHTS`][]); ``met`` / ``missed``: job ids (a job not run is missed);
    ``schedule``: the schedule with every completion filled in."""

    objective: float
    schedule: Schedule
    met: tuple[str, ...]
    missed: tuple[str, ...]
    weights: str = "count"
    objective_name = "deadlines met"

    @property
    def ratio(self) -> float:
        """R_trace (eq. 13): deadlines met / jobs."""
        n = len(self.met) + len(self.missed)
        return len(self.met) / n if n else 1.0

    def summary(self) -> str:
        """One line: deadlines met of all jobs, the weighted objective, the jobs run."""
        n = len(self.met) + len(self.missed)
        return (f"feasible: {len(self.met)} of {n} deadlines met (weighted {self.objective:g}), "
                f"{len(self.schedule)} jobs run")


def evaluate(inst: DeadlineWorkload, schedule: Schedule, weights: str = "count") -> DeadlineEvaluation:
    """Check ``schedule`` against ``inst`` (module docstring) and count the deadlines met; an infeasible
    schedule raises [`ScheduleError`][optsched.errors.ScheduleError] naming the field and the job."""
    known = {j.id: j for j in inst.jobs}
    node_ids = [s.id for s in inst.cluster.servers]
    cap = inst.cluster.capacity
    seen: set[str] = set()
    rows: list[ScheduledJob] = []
    events: dict[str, list[tuple[float, int]]] = {s: [] for s in node_ids}
    met: list[str] = []
    total = 0.0
    for sj in schedule:
        if sj.id not in known:
            raise ScheduleError("is not a job of the instance", field="schedule", job=sj.id)
        if sj.id in seen:
            raise ScheduleError("is scheduled twice", field="schedule", job=sj.id)
        seen.add(sj.id)
        j = known[sj.id]
        start = float(sj.start)
        if start < j.arrival_s - DEADLINE_TOL_S:
            raise ScheduleError(f"starts at {start:g} before its arrival {j.arrival_s:g}", field="start", job=j.id)
        try:
            inst.cluster.check_placement(dict(sj.placement), field="placement", job=j.id)
        except ScheduleError:
            raise
        except InstanceError as exc:  # an infeasible placement is a schedule error
            raise ScheduleError(exc.reason, field=exc.field, job=exc.job) from None
        n = sj.gpus
        if n < 1:
            raise ScheduleError("holds no GPU", field="placement", job=j.id)
        if n > j.max_gpus:
            raise ScheduleError(f"{n} GPUs, more than the {j.max_gpus} its dataset gives a batch each",
                                field="placement", job=j.id)
        end = start + inst.run_time_s(j, n, cross=len(sj.placement) > 1)
        if sj.completion is not None and abs(sj.completion - end) > 1e-6 * max(1.0, abs(end)):
            raise ScheduleError(f"completion {sj.completion:g} != start + run time = {end:g}", field="completion",
                                job=j.id)
        for s, c in sj.placement.items():  # GPUs are free again DEADLINE_TOL_S before the end (float noise)
            events[s] += [(start, c), (end - DEADLINE_TOL_S, -c)]
        rows.append(ScheduledJob(sj.id, start, dict(sj.placement), end, sj.stage_placement))
        if meets_deadline(end, j.deadline_s):
            met.append(j.id)
            total += job_weight(j.alpha, weights)
    check_capacity(events, cap, "node", "g")
    order = [j.id for j in inst.jobs]
    met_set = set(met)
    return DeadlineEvaluation(total, Schedule(tuple(rows), schedule.algorithm, inst.name),
                              tuple(i for i in order if i in met_set), tuple(i for i in order if i not in met_set),
                              weights)
