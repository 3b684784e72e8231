"""Exact, slot-level scoring of a RAR-DDLS schedule, independent of the algorithm that made it.

For RAR-DDLS (paper 000) the evaluator replays the schedule slot by slot: the set of active jobs fixes each
job's contention p_j[t] (eq. 6), hence tau_j[t] (eq. 8) and phi_j[t] = floor(1/tau_j[t]) iterations in
slot t; job j completes at the first slot boundary C_j where its iterations reach F_j (eq. 9, half-open
slots: it holds its GPUs in slots a_j .. C_j - 1). Between two events (a start or a completion) the active
set, and so every phi, is constant, so the replay jumps from event to event.

```pycon
>>> from optsched.cluster import Cluster, Server
>>> from optsched.problems.rar import RarInstance, RarJob
>>> from optsched.result import Schedule, ScheduledJob
>>> inst = RarInstance(Cluster((Server("s0", 2),), intra_bandwidth=1.0, inter_bandwidth=1.0), horizon=20,
...                    jobs=(RarJob("j0", 1, 10, 0.0, 1, 0.0, 0.25),))
>>> evaluate(inst, Schedule((ScheduledJob("j0", 3, {"s0": 1}),))).makespan   # 4 iterations/slot, 3 slots
6

```
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Mapping

from ..cluster import check_placement_in
from ..errors import ScheduleError
from ..limits import paused_gc
from ..perf.rar import contention_binds, iteration_time, iterations_per_slot, phi_for
from ..problems.rar import RarInstance, RarJob
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
    """Raise [`ScheduleError`][optsched.errors.ScheduleError] unless every job appears once with G_j GPUs on known
    servers at an
    integer start >= 0. Capacity over time is checked during the replay."""
    by_id = {j.id: j for j in inst.jobs}
    cap = inst.cluster.capacity   # once: Cluster.check_placement rebuilds it per call
    seen: set[str] = set()
    for i, sj in enumerate(schedule.jobs):
        # the common case in one pass, without building the error texts: a known job, seen once, an int start
        # >= 0, known servers with int counts within their sizes adding up to G_j; anything else is checked (and
        # reported) below
        job = by_id.get(sj.id)
        start, pl = sj.start, sj.placement
        if job is not None and sj.id not in seen and type(start) is int and start >= 0:
            total = 0
            for sid, n in pl.items():
                c = cap.get(sid)
                if c is None or type(n) is not int or n < 0 or n > c:
                    break
                total += n
            else:
                if total == job.gpus:
                    seen.add(sj.id)
                    continue
        where = f"jobs[{i}]"
        if sj.id not in by_id:
            raise ScheduleError("job not in the instance", field=f"{where}.id", job=sj.id)
        if sj.id in seen:
            raise ScheduleError("job scheduled twice", field=f"{where}.id", job=sj.id)
        seen.add(sj.id)
        start = sj.start
        if type(start) is not int and (isinstance(start, bool) or not isinstance(start, (int, float))
                                       or not float(start).is_integer()):
            raise ScheduleError(f"start must be an integer slot, got {start!r}", field=f"{where}.start", job=sj.id)
        if start < 0:
            raise ScheduleError(f"negative start {start!r}", field=f"{where}.start", job=sj.id)
        check_placement_in(cap, sj.placement, field=f"{where}.placement", job=sj.id, error=ScheduleError)
        want = by_id[sj.id].gpus
        if sj.gpus != want:
            raise ScheduleError(f"places {sj.gpus} GPUs but the job needs {want}",
                                field=f"{where}.placement", job=sj.id)
    missing = [j for j in by_id if j not in seen]
    if missing:
        raise ScheduleError(f"the schedule omits {len(missing)} job(s): {', '.join(missing[:5])}",
                            field="jobs", job=missing[0])


def evaluate(inst: RarInstance, schedule: Schedule) -> Evaluation:
    """Score ``schedule`` on ``inst`` with per-slot contention; raise [`ScheduleError`][optsched.errors.ScheduleError]
    if infeasible.

    Event-driven: at each slot where something happens, the jobs completing then release their GPUs first,
    then the jobs starting then take theirs (half-open slots). A running job keeps (iterations left at slot
    ``since``, phi since then); its completion is since + ceil(left / phi) while phi holds. A start or an end
    of a split job changes p only for the split jobs on its servers (eq. 6), so only those are re-rated; and
    none of them when contention cannot change a speed in this instance
    ([`contention_binds`][optsched.perf.rar.contention_binds]: every split job then runs at its p = 1 speed).
    Python's cyclic garbage collector is paused meanwhile ([`paused_gc`][optsched.limits.paused_gc]).
    """
    with paused_gc():
        return _evaluate(inst, schedule)


def _evaluate(inst: RarInstance, schedule: Schedule) -> Evaluation:
    check_feasible(inst, schedule)
    jobs = {j.id: j for j in inst.jobs}
    cap = inst.cluster.capacity
    starts = sorted((int(sj.start), sj.id) for sj in schedule.jobs)
    # a ScheduledJob's placement holds positive counts only (zeros are dropped, negatives refused above)
    placement = {sj.id: sj.placement for sj in schedule.jobs}
    left = {j.id: j.iterations for j in inst.jobs}
    since: dict[str, int] = {}
    rate: dict[str, int] = {}
    version: dict[str, int] = dict.fromkeys(left, 0)
    used = dict.fromkeys(cap, 0)
    split_on: dict[str, set[str]] = {s: set() for s in cap}   # running split jobs per server
    running: set[str] = set()
    heap: list[tuple[int, str, int]] = []
    completions: dict[str, int] = {}
    phi_cache: dict[tuple[str, int], int] = {}
    binds = contention_binds(inst)

    def take(jid: str, t: int) -> Mapping[str, int]:
        """Start ``jid`` at ``t`` on its GPUs (refused if a server is then over capacity); its placement."""
        pl = placement[jid]
        for s, n in pl.items():
            used[s] += n
            if used[s] > cap[s]:
                holders = sorted(a for a in running if s in placement[a]) + [jid]
                raise ScheduleError(
                    f"server {s!r} over capacity in slot {t}: {used[s]} GPUs used by "
                    f"{', '.join(holders)}, it has {cap[s]}", field="placement", job=jid)
        running.add(jid)
        return pl

    if not binds:
        # numpy's import (about 0.1 s) pays from about 20,000 jobs on
        fixed = _fixed_speed_completions(inst, schedule, jobs, cap) if len(starts) >= NUMPY_FROM else None
        if fixed is not None:
            return _evaluation(inst, schedule, fixed)
        # a server is over capacity: the replay below finds the first such slot and names its holders
        # every job keeps the speed of its own placement (p = 1 if split, else 0) from start to end: its completion
        # is known at its start, and the replay only checks the capacity (the same events in the same order)
        n_starts, nxt = len(starts), 0
        ends: list[tuple[int, str]] = []
        heappush, heappop = heapq.heappush, heapq.heappop
        while nxt < n_starts or ends:
            t = int(min(ends[0][0] if ends else math.inf, starts[nxt][0] if nxt < n_starts else math.inf))
            while ends and ends[0][0] == t:
                jid = heappop(ends)[1]
                completions[jid] = t
                running.discard(jid)
                for s, n in placement[jid].items():
                    used[s] -= n
            while nxt < n_starts and starts[nxt][0] == t:
                jid = starts[nxt][1]
                nxt += 1
                pl = placement[jid]
                for s, n in pl.items():
                    if used[s] + n > cap[s]:
                        take(jid, t)   # raises, naming the holders
                for s, n in pl.items():
                    used[s] += n
                running.add(jid)
                ns = len(pl)       # its counts are all positive: len(pl) servers
                phi = iterations_per_slot(iteration_time(inst, jobs[jid], ns, 1 if ns > 1 else 0))
                heappush(ends, (t + math.ceil(left[jid] / phi), jid))
        return _evaluation(inst, schedule, completions)

    def p_of(jid: str) -> int:
        pl = placement[jid]
        return max(len(split_on[s]) for s in pl) if len(pl) > 1 else 0

    def rerate(jid: str, t: int) -> None:
        p = p_of(jid)
        phi = phi_cache.get((jid, p))
        if phi is None:
            phi = phi_cache[(jid, p)] = phi_for(inst, jobs[jid], placement[jid], p)
        old = rate.get(jid, 0)
        if phi == old:
            return
        if old:
            left[jid] -= old * (t - since[jid])
        since[jid], rate[jid] = t, phi
        version[jid] += 1
        heapq.heappush(heap, (t + math.ceil(left[jid] / phi), jid, version[jid]))

    nxt = 0
    while nxt < len(starts) or running:
        while heap and (heap[0][2] != version[heap[0][1]] or heap[0][1] not in running):
            heapq.heappop(heap)
        t_end = heap[0][0] if heap else math.inf
        t_start = starts[nxt][0] if nxt < len(starts) else math.inf
        t = int(min(t_end, t_start))
        touched: set[str] = set()
        while heap and heap[0][0] == t:                       # completions at t release their GPUs first
            _, jid, v = heapq.heappop(heap)
            if v != version[jid] or jid not in running:
                continue
            completions[jid] = t
            running.discard(jid)
            pl = placement[jid]
            for s, n in pl.items():
                used[s] -= n
            if len(pl) > 1:
                for s in pl:
                    split_on[s].discard(jid)
                    touched |= split_on[s]
        while nxt < len(starts) and starts[nxt][0] == t:
            jid = starts[nxt][1]
            nxt += 1
            pl = take(jid, t)
            if len(pl) > 1:
                for s in pl:
                    split_on[s].add(jid)
                    touched |= split_on[s]
            else:
                touched.add(jid)
        for jid in touched:
            if jid in running:
                rerate(jid, t)
    return _evaluation(inst, schedule, completions)


#: schedules of at least this many jobs check the capacity with numpy where contention cannot bind (tests: 0)
NUMPY_FROM = 20_000


def _fixed_speed_completions(inst: RarInstance, schedule: Schedule, jobs: Mapping[str, RarJob],
                             cap: Mapping[str, int]) -> dict[str, int] | None:
    """Where contention cannot bind (every job runs at its own placement's speed from start to end): each job's
    completion from its start, and the capacity checked at once with numpy instead of replayed event by event.

    Per server, the GPU counts taken at the starts and released at the completions are sorted by slot, releases
    first at equal slots (half-open slots, as in the replay); their running sum is the server's use after each
    event, and every server's events sum to zero, so one cumulative sum over the servers' runs end to end gives
    every server's use. Returns the completions in the replay's order (by slot, then job id), or None if some
    server is over capacity (the caller replays to name the first such slot and its holders).

    ```pycon
    >>> from optsched.generators.rar import tiny_rar_example
    >>> from optsched.result import Schedule, ScheduledJob
    >>> inst = tiny_rar_example()
    >>> jobs, cap = {j.id: j for j in inst.jobs}, inst.cluster.capacity
    >>> sched = Schedule((ScheduledJob("j0", 0, {"s0": 4}), ScheduledJob("j1", 5, {"s0": 2})))
    >>> _fixed_speed_completions(inst, sched, jobs, cap)    # j1 takes s0's GPUs in the slot j0 frees them
    {'j0': 5, 'j1': 8}
    >>> crowded = Schedule((ScheduledJob("j0", 0, {"s0": 4}), ScheduledJob("j1", 4, {"s0": 2})))
    >>> _fixed_speed_completions(inst, crowded, jobs, cap) is None
    True

    ```
    """
    import numpy as np

    index = {s: i for i, s in enumerate(cap)}
    comp: list[tuple[int, str]] = []
    srv: list[int] = []
    on: list[int] = []
    off: list[int] = []
    cnt: list[int] = []
    ceil, per_slot = math.ceil, iterations_per_slot
    for sj in schedule.jobs:
        jid, pl, start = sj.id, sj.placement, int(sj.start)
        job = jobs[jid]
        ns = len(pl)       # its counts are all positive: len(pl) servers
        # eq. (8) at p = 1 if split (else 0), as the replay computes it
        end = start + ceil(job.iterations / per_slot(iteration_time(inst, job, ns, 1 if ns > 1 else 0)))
        comp.append((end, jid))
        for s, n in pl.items():
            srv.append(index[s])
            on.append(start)
            off.append(end)
            cnt.append(n)
    server = np.array(srv + srv, dtype=np.int64)
    slot = np.array(on + off, dtype=np.int64)
    delta = np.array(cnt, dtype=np.int64)
    delta = np.concatenate([delta, -delta])
    order = np.lexsort((delta, slot, server))       # by server, then slot, releases (negative) first
    use = np.cumsum(delta[order])
    if (use > np.fromiter(cap.values(), dtype=np.int64, count=len(cap))[server[order]]).any():
        return None
    comp.sort()
    return {jid: t for t, jid in comp}


def _evaluation(inst: RarInstance, schedule: Schedule, completions: dict[str, int]) -> Evaluation:
    makespan = max(completions.values())
    return Evaluation(
        completions=completions,
        makespan=makespan,
        average_jct=sum(completions.values()) / len(completions),
        exceeds_horizon=makespan > inst.horizon,
        schedule=schedule.with_completions(completions),
        horizon=inst.horizon,
    )
