"""Exact, slot-level scoring of a RAR-DDLS schedule, independent of the algorithm that made it.

For RAR-DDLS (paper 000) the evaluator replays the schedule slot by slot: the set of active jobs fixes each
job's contention p_j[t] (eq. 6), hence tau_j[t] (eq. 8) and phi_j[t] = floor(1/tau_j[t]) iterations in
slot t; job j completes at the first slot boundary C_j where its iterations reach F_j (eq. 9, half-open
slots: it holds its GPUs in slots a_j .. C_j - 1). Between two events (a start or a completion) the active
set, and so every phi, is constant, so the replay jumps from event to event.

>>> from optsched.cluster import Cluster, Server
>>> from optsched.problems.rar import RarInstance, RarJob
>>> from optsched.result import Schedule, ScheduledJob
>>> inst = RarInstance(Cluster((Server("s0", 2),), intra_bandwidth=1.0, inter_bandwidth=1.0), horizon=20,
...                    jobs=(RarJob("j0", 1, 10, 0.0, 1, 0.0, 0.25),))
>>> evaluate(inst, Schedule((ScheduledJob("j0", 3, {"s0": 1}),))).makespan   # 4 iterations/slot, 3 slots
6
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from ..errors import InstanceError, ScheduleError
from ..perf.rar import contention, phi_for
from ..problems.rar import RarInstance
from ..result import Schedule


@dataclass(frozen=True)
class Evaluation:
    """The evaluator's verdict: completion per job, makespan, average JCT (all jobs arrive at slot 0)."""

    completions: Mapping[str, int]
    makespan: int
    average_jct: float
    exceeds_horizon: bool
    schedule: Schedule  # the input schedule with the evaluated completions filled in
    horizon: int = 0

    objective_name = "makespan"

    @property
    def objective(self) -> int:
        return self.makespan

    def summary(self) -> str:
        """One line: makespan and average JCT (slots), and a note when the makespan passes the horizon."""
        note = f" (exceeds the horizon T={self.horizon})" if self.exceeds_horizon else ""
        return f"feasible: makespan={self.makespan} average JCT={self.average_jct:.2f}{note}"


def check_feasible(inst: RarInstance, schedule: Schedule) -> None:
    """Raise :class:`ScheduleError` unless every job appears once with G_j GPUs on known servers at an
    integer start >= 0. Capacity over time is checked during the replay."""
    by_id = {j.id: j for j in inst.jobs}
    seen: set[str] = set()
    for i, sj in enumerate(schedule.jobs):
        where = f"jobs[{i}]"
        if sj.id not in by_id:
            raise ScheduleError("job not in the instance", field=f"{where}.id", job=sj.id)
        if sj.id in seen:
            raise ScheduleError("job scheduled twice", field=f"{where}.id", job=sj.id)
        seen.add(sj.id)
        start = sj.start
        if isinstance(start, bool) or not isinstance(start, (int, float)) or not float(start).is_integer():
            raise ScheduleError(f"start must be an integer slot, got {start!r}", field=f"{where}.start", job=sj.id)
        if start < 0:
            raise ScheduleError(f"negative start {start!r}", field=f"{where}.start", job=sj.id)
        try:
            inst.cluster.check_placement(sj.placement, field=f"{where}.placement", job=sj.id)
        except ScheduleError:
            raise
        except InstanceError as exc:  # an unknown server or an oversized count is a schedule error too
            raise ScheduleError(exc.reason, field=exc.field, job=exc.job) from None
        want = by_id[sj.id].gpus
        if sj.gpus != want:
            raise ScheduleError(f"places {sj.gpus} GPUs but the job needs {want}",
                                field=f"{where}.placement", job=sj.id)
    missing = [j for j in by_id if j not in seen]
    if missing:
        raise ScheduleError(f"the schedule omits {len(missing)} job(s): {', '.join(missing[:5])}",
                            field="jobs", job=missing[0])


def evaluate(inst: RarInstance, schedule: Schedule) -> Evaluation:
    """Score ``schedule`` on ``inst`` with per-slot contention; raise :class:`ScheduleError` if infeasible."""
    check_feasible(inst, schedule)
    jobs = {j.id: j for j in inst.jobs}
    cap = inst.cluster.capacity
    starts = sorted((int(sj.start), sj.id) for sj in schedule.jobs)
    placement = {sj.id: dict(sj.placement) for sj in schedule.jobs}
    remaining = {j.id: j.iterations for j in inst.jobs}
    used = dict.fromkeys(cap, 0)
    active: dict[str, Mapping[str, int]] = {}
    completions: dict[str, int] = {}
    nxt = 0
    t = 0
    while nxt < len(starts) or active:
        if not active:
            t = max(t, starts[nxt][0])
        while nxt < len(starts) and starts[nxt][0] == t:
            jid = starts[nxt][1]
            nxt += 1
            for s, n in placement[jid].items():
                used[s] += n
                if used[s] > cap[s]:
                    holders = sorted(a for a in active if s in placement[a]) + [jid]
                    raise ScheduleError(
                        f"server {s!r} over capacity in slot {t}: {used[s]} GPUs used by "
                        f"{', '.join(holders)}, it has {cap[s]}", field="placement", job=jid)
            active[jid] = placement[jid]
        p = contention(active)
        phi = {j: phi_for(inst, jobs[j], active[j], p[j]) for j in active}
        step = min(math.ceil(remaining[j] / phi[j]) for j in active)
        if nxt < len(starts):
            step = min(step, starts[nxt][0] - t)
        t += step
        for j in list(active):
            remaining[j] -= phi[j] * step
            if remaining[j] <= 0:
                completions[j] = t
                for s, n in placement[j].items():
                    used[s] -= n
                del active[j]
    makespan = max(completions.values())
    return Evaluation(
        completions=completions,
        makespan=makespan,
        average_jct=sum(completions.values()) / len(completions),
        exceeds_horizon=makespan > inst.horizon,
        schedule=schedule.with_completions(completions),
        horizon=inst.horizon,
    )
