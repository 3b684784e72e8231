"""What the deadline policies share: the ring model of the view, per-job run times by GPU count, and the
allocation of section 3.2 (best fit on ascending free GPUs; fragments first for cross-node plans).

>>> import numpy as np
>>> allocate(np.array([3, 1, 4, 2]), 2, cross=False)     # best fit: the node with the fewest free GPUs >= 2
{3: 2}
>>> allocate(np.array([3, 1, 4, 2]), 5, cross=True)      # fragments first: 1, then 2, then 2 of the 3
{1: 1, 3: 2, 0: 2}
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ...errors import InstanceError
from ...perf.ring import RingPerf, job_profile
from ..state import Job, Placement, SimView

__all__ = ["JobTimes", "allocate", "place", "ring_of", "shrink", "grow"]


def ring_of(view: SimView) -> RingPerf:
    """The view's performance model, which must be the ring model (the deadline policies plan with it)."""
    perf = view.perf
    if not isinstance(perf, RingPerf):
        raise InstanceError(f"the deadline policies need perf='ring' (optsched.perf.ring.RingPerf), got "
                            f"{type(perf).__name__}", field="perf")
    return perf


@dataclass(frozen=True)
class JobTimes:
    """A job's profile and its remaining work, with the run time on n GPUs on one node or across nodes."""

    t_cal: float
    params: float
    work: float
    max_gpus: int

    @classmethod
    def of(cls, job: Job, now: float) -> JobTimes:
        t_cal, params = job_profile(job.spec, job.id)
        spec = job.spec
        max_gpus = getattr(spec, "max_gpus", None)
        return cls(t_cal, params, job.remaining_iterations(now), int(max_gpus) if max_gpus else 1 << 30)

    def run_time_s(self, perf: RingPerf, n: int, cross: bool) -> float:
        return perf.run_time_s(self.t_cal, self.params, self.work, n, cross)

    def speed(self, perf: RingPerf, n: int, cross: bool) -> float:
        """Batches per second on n GPUs (0 for n = 0)."""
        return 0.0 if n <= 0 else 1.0 / perf.batch_time_s(self.t_cal, self.params, n, cross)


def allocate(free: np.ndarray | Sequence[int], n: int, cross: bool) -> dict[int, int] | None:
    """Section 3.2 [T step 1, R the rest]: nodes sorted by free GPUs ascending (ties by index); a single-node
    plan takes the first node with at least ``n`` free (best fit); a cross-node plan takes the free GPUs of the
    nodes in that order (fragments first) until it has ``n``. None if it does not fit."""
    order = sorted(range(len(free)), key=lambda i: (int(free[i]), i))
    if not cross:
        for i in order:
            if free[i] >= n:
                return {i: n}
        return None
    out: dict[int, int] = {}
    need = n
    for i in order:
        f = int(free[i])
        if f <= 0:
            continue
        take = min(f, need)
        out[i] = take
        need -= take
        if need == 0:
            return out
    return None


def place(free: np.ndarray, n: int) -> dict[int, int] | None:
    """One node if some node has ``n`` free GPUs (best fit), else fragments first across nodes.

    >>> place(np.array([1, 3]), 2), place(np.array([1, 3]), 4), place(np.array([1, 1]), 3)
    ({1: 2}, {0: 1, 1: 3}, None)
    """
    return allocate(free, n, cross=False) or allocate(free, n, cross=True)


def shrink(pl: Placement, n: int) -> dict[int, int]:
    """``pl`` reduced to ``n`` GPUs in place: GPUs leave the nodes where the job holds fewest first (the job
    stays as consolidated as it was).

    >>> shrink(Placement.of({0: 3, 2: 1}), 2)
    {0: 2}
    """
    held = dict(zip(pl.servers, pl.counts))
    drop = pl.gpus - n
    for s in sorted(held, key=lambda s: (held[s], -s)):
        if drop <= 0:
            break
        k = min(held[s], drop)
        held[s] -= k
        drop -= k
    return {s: c for s, c in held.items() if c}


def grow(pl: Placement, n: int, free: np.ndarray) -> dict[int, int] | None:
    """``pl`` grown to ``n`` GPUs: first the free GPUs of the nodes it already uses (most held first), then
    other nodes, fragments first. None if there are not enough free GPUs.

    >>> grow(Placement.of({1: 1}), 3, np.array([1, 1, 4]))
    {1: 2, 0: 1}
    """
    held = dict(zip(pl.servers, pl.counts))
    need = n - pl.gpus
    for s in sorted(held, key=lambda s: (-held[s], s)):
        k = min(int(free[s]), need)
        held[s] += k
        need -= k
    if need > 0:
        for s in sorted(range(len(free)), key=lambda i: (int(free[i]), i)):
            if s in pl.servers or free[s] <= 0:
                continue
            k = min(int(free[s]), need)
            held[s] = held.get(s, 0) + k
            need -= k
            if need == 0:
                break
    return None if need > 0 else {s: c for s, c in held.items() if c}


def deadline_of(job: Job) -> float:
    """The job's absolute deadline (inf when it has none)."""
    return math.inf if job.deadline_s is None else float(job.deadline_s)
