"""The Blox policies: scheduling (FIFO, LAS, SRTF, Tiresias), admission (accept-all, accept-k) and placement
(consolidated, first-free, scattered); they are found by name through [`optsched.sim.registry`][].

Every rule and the line it follows is in ``docs/algorithms/blox-engine.md``.

```pycon
>>> Tiresias(thresholds_gpu_s=[100, 1000]).thresholds_gpu_s, AcceptK(1.2).k
((100.0, 1000.0), 1.2)

```
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from ..errors import InstanceError
from .base import AdmissionPolicy, PlacementPolicy, SchedulingPolicy
from .fitting import FreeIndex, consolidated, first_free, spread
from .state import RUNNING, Job, Placement, SimView


# -- scheduling ------------------------------------------------------------------------------------------------
class Fifo(SchedulingPolicy):
    """Arrival order. Blox: key ``(job_priority, submit_time)``."""

    name = "fifo"
    keys_change = "never"
    fixed_key = True

    def key(self, job: Job, now: float):
        return job.w.arrival_s

    def keys_at(self, jobs, now: float) -> list:
        return [j.w.arrival_s for j in jobs]


def _two_sum(a: float, b: float) -> tuple[float, float]:
    """``a + b`` exactly, as ``(hi, lo)`` with ``hi = fl(a + b)`` and ``lo`` its rounding error (Knuth's
    TwoSum, round-to-nearest): pairs compare as tuples in the order of the exact sums.

    ```pycon
    >>> _two_sum(1e16, 1.0), _two_sum(0.1, 0.2) < _two_sum(0.3, 0.0)
    ((1e+16, 1.0), False)

    ```
    """
    s = a + b
    bp = s - a
    ap = s - bp
    return s, (a - ap) + (b - bp)


class Las(SchedulingPolicy):
    """Least attained service first. Blox: key ``(job_priority, attained_service)`` with attained service in
    wall-clock seconds held (``service="time"``, Blox's simulator); ``service="gpu"`` uses GPU-seconds.

    With ``service="time"`` every running job's service grows at the same rate, so jobs are compared by their
    *exact* service (the real number ``attained_s + (now - t_ref)`` of the stored floats, no rounding): the key
    is that service minus ``now``, as an exact pair of floats (``attained_s - t_ref`` for a running job, constant
    while it runs; ``attained_s - now`` for a waiting one). This lets [`Composed`][optsched.sim.base.Composed] keep
    running jobs sorted without re-keying them (``keys_change = "relative"``; ``"running"`` with service "gpu").

    ```pycon
    >>> from optsched.sim.state import Job
    >>> a, b = Job("a", 0, 1, 10, 1.0), Job("b", 0, 1, 10, 1.0)
    >>> a.status, a.t_ref, a.attained_s = RUNNING, 100.0, 50.0      # (the engine's) 50 s before t = 100, running
    >>> b.attained_s = 120.0                                         # waiting, 120 s
    >>> las = Las()
    >>> las.key(a, 160.0) < las.key(b, 160.0), las.key(a, 180.0) < las.key(b, 180.0)
    (True, False)

    ```
    """

    name = "las"
    keys_change = "relative"

    def __init__(self, service: str = "time", **kw):
        super().__init__(**kw)
        if service not in ("time", "gpu"):
            raise InstanceError(f"must be 'time' or 'gpu', got {service!r}", field="service")
        self.service = service
        if service == "gpu" and self.keys_change == "relative":  # (a subclass' own key declared its own)
            self.keys_change = "running"  # GPU-seconds grow at each job's own rate: running keys drift apart

    def key(self, job: Job, now: float):
        if self.service == "time":
            # the exact service minus now: a running job's is constant (both grow at one second per second)
            t, s, _ = job.service_anchor
            return _two_sum(s, -(t if job.status == RUNNING else now))
        return job.attained_gpu_at(now)

    def queued_key(self, job: Job):
        return job.attained_s  # a waiting job's attained service: its stored value, exactly (it does not grow)

    def running_key(self, job: Job, now: float):
        t, s, _ = job.service_anchor
        return _two_sum(s, -t), math.inf

    def rank_at(self, key, now: float):
        return _two_sum(key, -now)



class Srtf(SchedulingPolicy):
    """Shortest remaining time first: remaining iterations x profiled iteration time (Blox:
    ``iteration_time * total_iterations - attained_service``, equal to ours when the job ran at its profiled
    speed; ours stays exact under slow-downs and stalls). ``use_predicted`` ranks by predicted iterations."""

    name = "srtf"
    # only running jobs' keys change, and only downwards: their priority over queued jobs can only grow, so a
    # queued job never gains a preemption victim by waiting; the queued order is constant
    keys_change = "running-down"

    def __init__(self, use_predicted: bool = False, **kw):
        super().__init__(**kw)
        self.use_predicted = bool(use_predicted)

    def key(self, job: Job, now: float):
        w = job.w  # (the workload fields, read straight: every running job is re-keyed at every decision)
        total = w.predicted_iterations if (self.use_predicted and w.predicted_iterations is not None) \
            else w.iterations
        return max(0.0, total - job.executed_at(now)) * w.iteration_time_s



class Tiresias(SchedulingPolicy):
    """Discrete LAS (Tiresias 2D-LAS as Blox describes it: "FIFO within queues and LAS across queues").

    Queue q holds the jobs whose attained GPU-service s satisfies thresholds[q-1] <= s < thresholds[q]
    (queue 0: below the first threshold); lower queues first; within a queue, FIFO by arrival. A waiting job's
    queue is that of its stored service (with a relative slack of 1e-12: a job at a threshold up to rounding is
    in the next queue); a running job moves to queue q + 1 at its crossing time ``t_ref + (thresholds[q] - s) /
    rate`` (s its service at ``t_ref``, rate its GPUs held, or 1 for ``service="time"``), that float being the
    definition, so a running job's key is constant up to that time (``keys_change = "at-expiry"``).

    ```pycon
    >>> from optsched.sim.state import Job
    >>> j = Job("a", 0, 2, 10, 1.0)
    >>> j.status, j.held_gpus, j.t_ref, j.attained_gpu_s = RUNNING, 2, 100.0, 50.0
    >>> t = Tiresias(thresholds_gpu_s=[100, 1000])
    >>> t.running_key(j, 110.0), t.queue_of(j, 125.0), t.queue_of(j, 575.0)
    (((0, 0.0), 125.0), 1, 2)

    ```
    """

    name = "tiresias"
    keys_change = "at-expiry"
    key_methods = ("key", "queue_of")  # running_key reads the queues through _base/_crossing, not queue_of

    def __init__(self, thresholds_gpu_s=(3600.0,), service: str = "gpu", **kw):
        super().__init__(**kw)
        th = tuple(float(x) for x in thresholds_gpu_s)
        if any(t <= 0 for t in th) or list(th) != sorted(set(th)):
            raise InstanceError(f"must be positive and strictly increasing, got {list(thresholds_gpu_s)!r}",
                                field="thresholds_gpu_s")
        if service not in ("time", "gpu"):
            raise InstanceError(f"must be 'time' or 'gpu', got {service!r}", field="service")
        self.thresholds_gpu_s, self.service = th, service

    def service_at(self, job: Job, now: float) -> float:
        return job.attained_gpu_at(now) if self.service == "gpu" else job.attained_at(now)

    def _queue(self, s: float) -> int:
        """The queue of service ``s`` (a service at a threshold up to rounding is in the next queue)."""
        return bisect.bisect_right(self.thresholds_gpu_s, s + 1e-12 * max(1.0, abs(s)))

    def _base(self, job: Job) -> tuple[float, int]:
        """(service at the job's service anchor, the queue of that service)."""
        _, s_time, s_gpu = job.service_anchor
        s = s_gpu if self.service == "gpu" else s_time
        return s, self._queue(s)

    def _crossing(self, job: Job, s: float, q: int) -> float:
        """When a running job with service ``s`` at its anchor reaches ``thresholds[q]``."""
        return job.service_anchor[0] + (self.thresholds_gpu_s[q] - s) / (job.held_gpus if self.service == "gpu"
                                                                         else 1)

    def queue_of(self, job: Job, now: float) -> int:
        s, q = self._base(job)
        if job.status == RUNNING:
            n_th = len(self.thresholds_gpu_s)
            while q < n_th and self._crossing(job, s, q) <= now:
                q += 1
        return q

    def key(self, job: Job, now: float):
        return (self.queue_of(job, now), job.w.arrival_s)

    def queued_key(self, job: Job):
        # a waiting job's service is its stored value (it does not grow): no anchor needed
        return (self._queue(job.attained_gpu_s if self.service == "gpu" else job.attained_s), job.w.arrival_s)

    def running_key(self, job: Job, now: float):
        s, q = self._base(job)
        n_th = len(self.thresholds_gpu_s)
        t = math.inf
        while q < n_th:
            t = self._crossing(job, s, q)
            if t > now:
                break
            q += 1
            t = math.inf
        return (q, job.w.arrival_s), t



# -- admission -------------------------------------------------------------------------------------------------
class AcceptAll(AdmissionPolicy):
    name = "accept-all"
    admits_all = True

    def admit(self, new_jobs, view):
        return list(new_jobs)


class AcceptK(AdmissionPolicy):
    """Blox's ``loadBasedAccept``: new jobs wait in a FIFO overflow queue; each round, while the GPU demand of
    the active jobs plus the jobs admitted so far this round is <= k x cluster GPUs, the head is admitted (the
    test comes before each add, so the last admitted job may overshoot). Demand = GPUs *requested* (``gpus``),
    whatever an elastic launch gave a job."""

    name = "accept-k"

    def __init__(self, k: float = 1.2):
        if isinstance(k, bool) or not isinstance(k, (int, float)) or not k > 0:
            raise InstanceError(f"must be a positive number, got {k!r}", field="k")
        self.k = float(k)
        self.queue: list[Job] = []
        self._head = 0

    def admit(self, new_jobs, view):
        self.queue.extend(new_jobs)
        demand = sum(j.gpus for j in view.jobs.active.values())
        limit = self.k * view.cluster.total_gpus
        added, out = 0, []
        while demand + added <= limit and self._head < len(self.queue):
            job = self.queue[self._head]
            self._head += 1
            added += job.gpus
            out.append(job)
        if self._head > 1024 and self._head * 2 > len(self.queue):  # amortised O(1) pops
            del self.queue[:self._head]
            self._head = 0
        return out

    @property
    def holding(self) -> int:
        return len(self.queue) - self._head


# -- placement -------------------------------------------------------------------------------------------------
# GPU types: on a cluster with one GPU type (every cluster that names none) the placements below run their plain
# code. On a heterogeneous cluster a job runs on one type at a time: on its own ``gpu_type`` if it names one, else
# on any single type; the walk's size-only pruning (``fit_by_size``) is switched off there, since whether a job
# fits then also depends on the type it may use.
def _typed(policy: PlacementPolicy, view: SimView) -> bool:
    if not view.cluster.typed:
        return False
    if policy.fit_by_size:
        policy.fit_by_size = False  # an instance attribute: set before find() returns, so the walk never prunes
    return True


def _type_masks(job: Job, view: SimView) -> list[np.ndarray]:
    """The server masks a job may use, one per GPU type, in the cluster's type order."""
    cs = view.cluster
    if job.gpu_type:
        k = cs.type_index(job.gpu_type)
        return [cs.type_mask(k)] if k >= 0 else []
    return [cs.type_mask(k) for k in range(len(cs.types))]


def _on_one_type(fit, job: Job, free: np.ndarray, view: SimView):
    """``fit(gpus, free)`` on the free GPUs of each type the job may use, in order: the first placement found."""
    for m in _type_masks(job, view):
        pl = fit(job.gpus, np.where(m, free, 0))
        if pl is not None:
            return pl
    return None


def _first_free(g: int, free: np.ndarray) -> Placement | None:
    got = first_free(free, g)
    return None if got is None else Placement.of(got)


def _scattered(g: int, free: np.ndarray) -> Placement | None:
    got = spread(free, g)
    return None if got is None else Placement.of(got)


class _IndexFinder(FreeIndex):
    """Consolidated's walk finder: ``find(job)`` is ``Consolidated.find`` on an untyped cluster, from the index."""

    __slots__ = ()

    def find(self, job: Job) -> Placement | None:
        return self.consolidated(job.gpus)


class Consolidated(PlacementPolicy):
    """Fewest servers. A job that fits in one server goes to one server: an exact fit first, otherwise the
    server with the fewest free GPUs >= demand (Blox ``_consolidated_placement``), else it waits (strict
    consolidation, as Blox). A job larger than every server takes whole free servers, largest first, as few
    as possible (Blox is silent: it never finds a place for such a job). On a heterogeneous cluster the server
    is chosen among those of the job's type (any type if it names none: the best fit over all of them); a job
    larger than a server takes whole servers of one type, the first type in the cluster's order with enough."""

    name = "consolidated"
    fit_by_size = True

    def fits_after(self, job, trial, servers, view):
        # nothing fitted before GPUs were added on ``servers``: a one-server job can now fit only on one of them,
        # a job larger than a server only if one of them is now wholly free
        cs = view.cluster
        if cs.typed:
            return True
        g = job.gpus
        if g <= cs.max_capacity:
            for s in servers:
                if trial[s] >= g:
                    return True
            return False
        cap = cs.capacity
        for s in servers:
            if trial[s] == cap[s]:
                return True
        return False

    def walk_finder(self, free, view):
        cs = view.cluster
        if cs.typed or type(self).find is not Consolidated.find:  # (a subclass' own find is asked itself)
            return None
        return _IndexFinder(free, cs.capacity, cs.max_capacity, cs.uniform)

    def find(self, job, free, view):
        cs = view.cluster
        if not cs.typed:
            return consolidated(job.gpus, free, cs.capacity, cs.max_capacity, cs.uniform)
        _typed(self, view)
        masks = _type_masks(job, view)
        if not masks:
            return None
        allowed = np.logical_or.reduce(masks)
        cap = np.where(allowed, cs.capacity, 0)
        if job.gpus <= int(cap.max()):
            return consolidated(job.gpus, np.where(allowed, free, 0), cap, int(cap.max()))
        for m in masks:  # whole servers of one type
            capm = np.where(m, cs.capacity, 0)
            pl = consolidated(job.gpus, np.where(m, free, 0), capm, int(capm.max()))
            if pl is not None:
                return pl
        return None


class FirstFree(PlacementPolicy):
    """The first free GPUs in GPU-id order: fill servers in index order (Blox's ``_scattered_placement``,
    which "fills node by node", and the First-Free GPU placement of section 7). On a heterogeneous cluster, the
    first free GPUs of the first type (in the cluster's order, or the job's own type) with enough free GPUs."""

    name = "first-free"
    fit_by_size = True

    def find(self, job, free, view):
        if not _typed(self, view):
            return _first_free(job.gpus, free)
        return _on_one_type(_first_free, job, free, view)


class Scattered(PlacementPolicy):
    """Spread: one GPU at a time, round-robin over the servers with free GPUs, most free first (the opposite of
    consolidation: as many servers as possible). Blox's "scattered" fills node by node, which is our
    ``first-free``; this policy is the spread-out end of the placement spectrum. On a heterogeneous cluster it
    spreads over the servers of one type (the first with enough free GPUs, or the job's own)."""

    name = "scattered"
    fit_by_size = True

    def find(self, job, free, view):
        if not _typed(self, view):
            return _scattered(job.gpus, free)
        return _on_one_type(_scattered, job, free, view)
