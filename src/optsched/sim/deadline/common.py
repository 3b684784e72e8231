"""What the deadline policies share: per-job run times by GPU count through the view's performance model, and
the allocation of section 3.2 (best fit on ascending free GPUs; fragments first for cross-node plans).

The policies ask the performance model (``view.perf``, the ring model of paper 003 in the deadline runs) for
the time of hypothetical placements ([`hypothetical`][optsched.sim.deadline.common.hypothetical]), so they run with any
model whose time depends on the
GPU count and on one node vs several (the constant model of Blox too: there a GPU more never helps).

```pycon
>>> import numpy as np
>>> allocate(np.array([3, 1, 4, 2]), 2, cross=False)     # best fit: the node with the fewest free GPUs >= 2
{3: 2}
>>> allocate(np.array([3, 1, 4, 2]), 5, cross=True)      # fragments first: 1, then 2, then 2 of the 3
{1: 1, 3: 2, 0: 2}

```
"""

from __future__ import annotations

import math
import operator
import weakref
from itertools import compress
from typing import Any, Callable, Sequence

import numpy as np

from ...errors import InstanceError
from ...perf.base import PerfModel
from ...perf.ring import RingPerf, job_profile
from ..fitting import best_fit, fragments_first
from ..state import Job, Placement

__all__ = ["JobTimes", "allocate", "deadline_of", "deadline_order", "grow", "grown", "hypothetical", "place",
           "placement_of", "shared_tables", "shrink", "shrunk"]


_SINGLE: dict[int, Placement] = {}
_CROSS: dict[int, Placement] = {}


def hypothetical(n: int, cross: bool) -> Placement:
    """A placement of ``n`` GPUs on one node, or across two (``cross``): what a plan looks like to a
    performance model that depends only on the GPU count and on one node vs several (ring, constant)."""
    table = _CROSS if cross else _SINGLE
    pl = table.get(n)
    if pl is None:
        pl = table[n] = Placement.of({0: n - 1, 1: 1} if cross and n > 1 else {0: n})
    return pl


class JobTimes:
    """A job's time on n GPUs on one node or across nodes, for its remaining ``work``, through any
    performance model ([`of`][optsched.sim.deadline.common.JobTimes.of]: the view's ``perf`` and the simulator's job;
    seconds per unit of work from
    ``alone_time_s`` on [`hypothetical`][optsched.sim.deadline.common.hypothetical] placements, cached), or through a
    function ``batch_time(n, cross)``
    (tests, offline use). ``max_gpus``: the most GPUs the job can use (its spec's, else unbounded).

    ```pycon
    >>> jt = JobTimes(lambda n, cross: 1.0 / n, work=100.0)
    >>> jt.run_time_s(4, False), jt.useful(4, False), JobTimes(lambda n, c: 1.0, 10.0).useful(2, False)
    (25.0, True, False)

    ```
    """

    __slots__ = ("_fn", "_cache", "steps", "runs", "work", "max_gpus")

    def __init__(self, batch_time: Callable[[int, bool], float], work: float, max_gpus: int = 1 << 30):
        self._fn = batch_time
        self._cache: dict[tuple[int, bool], float] = {}
        # count -> (counts scanned up to, next faster count or 0, its gain): a memo of the leftover loop's next step,
        # which depends on the speeds only (shared by with_work, as the cache)
        self.steps: dict[int, tuple[int, int, float]] = {}
        # the leftover loop's table of unit steps (built by it, elasticflow_fixed._unit_steps) when the speeds are
        # shared by every job with the same speed function (None: per job, no table)
        self.runs: list[Any] | None = None
        self.work, self.max_gpus = float(work), int(max_gpus)

    @classmethod
    def of(cls, job: Job, perf: PerfModel, now: float) -> JobTimes:
        """The job's times under ``perf``; under the ring model (whose time depends on the job's (T_cal, params),
        the GPU count and one node vs several only) every job with the same (T_cal, params) shares one cache of
        speeds and steps: the same floats, computed once per run instead of once per job."""
        max_gpus = getattr(job.spec, "max_gpus", None)
        jt = cls(lambda n, cross: perf.alone_time_s(job, hypothetical(n, cross)), job.remaining_iterations(now),
                 int(max_gpus) if max_gpus else 1 << 30)
        shared = shared_tables(job, perf)
        if shared is not None:
            jt._cache, jt.steps, jt.runs, _ = shared
        return jt

    def batch_time(self, n: int, cross: bool) -> float:
        """Seconds per unit of work on n GPUs."""
        key = (n, cross and n > 1)
        t = self._cache.get(key)
        if t is None:
            t = self._cache[key] = float(self._fn(n, key[1]))
        return t

    def run_time_s(self, n: int, cross: bool) -> float:
        return self.work * self.batch_time(n, cross)

    def speed(self, n: int, cross: bool) -> float:
        """Units of work per second on n GPUs (0 for n = 0)."""
        return 0.0 if n <= 0 else 1.0 / self.batch_time(n, cross)

    def useful(self, n: int, cross: bool) -> bool:
        """Eq. (10)-(11): n GPUs are faster than one (always true for n = 1)."""
        return n <= 1 or self.batch_time(n, cross) < self.batch_time(1, False)

    def with_work(self, work: float) -> JobTimes:
        """The same job with another amount of work (the cache is shared)."""
        other = JobTimes(self._fn, work, self.max_gpus)
        other._cache, other.steps, other.runs = self._cache, self.steps, self.runs
        return other


# perf model -> (T_cal, params) -> (speed cache, step memo, unit-step table, other memos) of every job with that
# profile
_SHARED: weakref.WeakKeyDictionary[PerfModel, dict[tuple[float, float], tuple[dict, dict, list, dict]]] = (
    weakref.WeakKeyDictionary())


def shared_tables(job: Job, perf: PerfModel) -> tuple[dict, dict, list, dict] | None:
    """The tables shared by the jobs whose times are one pure function of the GPU count and one node vs several:
    the ring model's (exactly that class: a subclass may read more of the job), keyed by (T_cal, params): the
    speed cache, the leftover loop's step memo and unit-step table (``JobTimes``), and a dict of other memos of
    pure functions of the speeds (ElasticFlow's ladders). None: per job (another model)."""
    if type(perf) is not RingPerf:
        return None
    try:
        key = job_profile(job.spec, job.id)
    except InstanceError:
        return None
    by_profile = _SHARED.get(perf)
    if by_profile is None:
        by_profile = _SHARED[perf] = {}
    tables = by_profile.get(key)
    if tables is None:
        tables = by_profile[key] = ({}, {}, [], {})
    return tables


def allocate(free: np.ndarray | Sequence[int], n: int, cross: bool) -> dict[int, int] | None:
    """Section 3.2 [T step 1, R the rest]: nodes sorted by free GPUs ascending (ties by index); a single-node
    plan takes the first node with at least ``n`` free (best fit); a cross-node plan takes the free GPUs of the
    nodes in that order (fragments first) until it has ``n``. None if it does not fit
    ([`best_fit`][optsched.sim.fitting.best_fit], [`fragments_first`][optsched.sim.fitting.fragments_first])."""
    if not cross:
        s = best_fit(free, n)
        return None if s is None else {s: n}
    return fragments_first(free, n)


def place(free: np.ndarray, n: int, cap: int | None = None) -> dict[int, int] | None:
    """One node if some node has ``n`` free GPUs (best fit), else fragments first across nodes. ``cap``
    (optional): the most GPUs any node has; for a larger ``n`` the one-node search is skipped (no node can fit).

    ```pycon
    >>> place(np.array([1, 3]), 2), place(np.array([1, 3]), 4), place(np.array([1, 1]), 3)
    ({1: 2}, {0: 1, 1: 3}, None)

    ```
    """
    if cap is not None and n > cap:
        return allocate(free, n, cross=True)
    return allocate(free, n, cross=False) or allocate(free, n, cross=True)


def placement_of(mapping: dict[int, int]) -> Placement:
    """``Placement.of(mapping)``; one node's through ``Placement.one`` (the same placement, built once).

    ```pycon
    >>> placement_of({3: 2}) == Placement.of({3: 2}), placement_of({0: 1, 2: 3}).gpus
    (True, 4)

    ```
    """
    if len(mapping) == 1:
        for s, n in mapping.items():
            if n:
                return Placement.one(int(s), int(n))
    if 0 in mapping.values():
        mapping = {s: n for s, n in mapping.items() if n}
    keys = sorted(mapping)  # what Placement.of builds, without a Python loop over the servers
    return Placement(tuple(map(int, keys)), tuple(map(int, map(mapping.__getitem__, keys))))


def shrunk(pl: Placement, n: int, moved: dict[int, int] | None = None) -> Placement:
    """``pl`` reduced to ``n`` GPUs: GPUs leave the nodes where the job holds fewest first, ties the highest index
    (the job stays as consolidated as it was). ``moved`` (optional): gets the GPUs given back per server, negative
    (what [`moved_gpus`][optsched.sim.state.moved_gpus] of the move gives, for ``DecisionBuilder.migrate``). The
    servers kept stay in ``pl``'s ascending order, so the placement is built without a dict or a sort
    (``placement_of(shrink(pl, n))``, the same placement).

    ```pycon
    >>> moved = {}
    >>> shrunk(Placement.of({0: 3, 2: 1, 5: 3}), 4, moved), moved
    (Placement(servers=(0, 5), counts=(3, 1), stages=None), {2: -1, 5: -2})

    ```
    """
    servers, counts = pl.servers, pl.counts
    drop = pl.gpus - n
    if drop <= 0:
        return placement_of(dict(zip(servers, counts)))
    if list(servers) != sorted(servers):  # (not a placement of ``Placement.of``: the dict's way)
        return placement_of(_shrink_pairs(pl, n, moved))
    if moved is None:
        moved = {}
    new = list(counts)
    # fewest held first, ties the highest index: a stable sort of the positions from the last
    for p in sorted(range(len(counts) - 1, -1, -1), key=counts.__getitem__):
        c = new[p]
        k = c if c < drop else drop
        new[p] = c - k
        drop -= k
        moved[servers[p]] = -k
        if drop <= 0:
            break
    if 0 in new:
        return Placement._of_sorted(tuple(compress(servers, new)), tuple(filter(None, new)), n)
    return Placement._of_sorted(servers, tuple(new), n)


def _shrink_pairs(pl: Placement, n: int, moved: dict[int, int] | None = None) -> dict[int, int]:
    """``shrink`` read off the placement's pairs, for a placement whose servers are in any order."""
    held = dict(zip(pl.servers, pl.counts))
    drop = pl.gpus - n
    if drop > 0:
        for c, s in sorted(zip(pl.counts, map(operator.neg, pl.servers))):
            k = min(c, drop)
            held[-s] -= k
            drop -= k
            if moved is not None:
                moved[-s] = -k
            if drop <= 0:
                break
    return held if 0 not in held.values() else {s: c for s, c in held.items() if c}


def shrink(pl: Placement, n: int, moved: dict[int, int] | None = None) -> dict[int, int]:
    """``pl`` reduced to ``n`` GPUs, as {server: GPUs} ([`shrunk`][optsched.sim.deadline.common.shrunk]'s
    placement as a dict).

    ```pycon
    >>> shrink(Placement.of({0: 3, 2: 1}), 2)
    {0: 2}

    ```
    """
    return shrunk(pl, n, moved).as_dict()


def grown(pl: Placement, n: int, free: np.ndarray | Sequence[int], moved: dict[int, int] | None = None
          ) -> Placement | None:
    """``pl`` grown to ``n`` GPUs: first the free GPUs of the nodes it already uses (most held first, ties the
    lowest index), then other nodes, fragments first (free GPUs ascending, ties by index). None if there are not
    enough free GPUs. ``moved`` (optional): gets the GPUs added per server (what
    [`moved_gpus`][optsched.sim.state.moved_gpus] of the move gives, for ``DecisionBuilder.migrate``).

    ```pycon
    >>> moved = {}
    >>> grown(Placement.of({1: 1}), 3, np.array([1, 1, 4]), moved), moved
    (Placement(servers=(0, 1), counts=(1, 2), stages=None), {1: 1, 0: 1})

    ```
    """
    held = dict(zip(pl.servers, pl.counts))
    need = n - pl.gpus
    if moved is None:
        moved = {}
    fl = free.tolist() if isinstance(free, np.ndarray) else [int(x) for x in free]
    # the nodes it uses that have free GPUs, most held first (ties: the lowest index); the others add nothing
    room = [s for s in held if fl[s] > 0] if need > 0 else []
    if len(room) > 1:
        room.sort(key=lambda s: (-held[s], s))
    for s in room:
        k = fl[s]
        if k >= need:
            held[s] += need
            moved[s] = need
            need = 0
            break
        held[s] += k
        moved[s] = k
        need -= k
    if need > 0:
        # nodes by free GPUs ascending, ties by index (a stable sort), the empty ones skipped; a few nodes are
        # sorted faster in Python, many with numpy (the same order)
        if len(fl) <= 64:
            order = sorted((s for s in range(len(fl)) if fl[s] > 0), key=fl.__getitem__)
        else:
            arr = np.asarray(free)
            nz = np.flatnonzero(arr > 0)
            order = nz[np.argsort(arr[nz], kind="stable")].tolist()
        for s in order:
            if s in held:
                continue
            k = fl[s]
            if k >= need:
                held[s] = need
                moved[s] = need
                need = 0
                break
            held[s] = k
            moved[s] = k
            need -= k
        if need > 0:
            return None
    if 0 in held.values():
        held = {s: c for s, c in held.items() if c}
    keys = sorted(held)
    return Placement._of_sorted(tuple(keys), tuple(map(held.__getitem__, keys)), max(n, pl.gpus))


def grow(pl: Placement, n: int, free: np.ndarray | Sequence[int], moved: dict[int, int] | None = None
         ) -> dict[int, int] | None:
    """``pl`` grown to ``n`` GPUs, as {server: GPUs} in ascending server order
    ([`grown`][optsched.sim.deadline.common.grown]'s placement as a dict); None if there are not enough free GPUs.

    ```pycon
    >>> grow(Placement.of({1: 1}), 3, np.array([1, 1, 4]))
    {0: 1, 1: 2}

    ```
    """
    p = grown(pl, n, free, moved)
    return None if p is None else p.as_dict()


def deadline_of(job: Job) -> float:
    """The job's absolute deadline (inf when it has none)."""
    return math.inf if job.deadline_s is None else float(job.deadline_s)


def deadline_order(job: Job) -> tuple[float, float, int]:
    """The sort key of earliest-deadline-first: deadline, then arrival, then workload order."""
    return deadline_of(job), job.arrival_s, job.index
