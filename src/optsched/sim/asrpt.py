"""A-SRPT (paper 001, Algorithm 1) and its baselines as online policies of the simulator.

Every policy here is a combined :class:`~optsched.sim.base.SchedulerPlacer` (it owns its queue and its server
selection), non-preemptive, and maps replicas to GPUs with Heavy-Edge (:mod:`optsched.algorithms.heavy_edge`).
Registered names (``simulate(..., scheduler=NAME)``, ``optsched simulate --scheduler NAME``):

==================  ==========================================================================================
``a-srpt``          Alg. 1: virtual single machine (preemptive SRPT on p~_i = (g_i/G) n~_i alpha~_i^min),
                    strict FIFO pending queue in virtual-completion order, COMM_HEAVY test, delay window
                    tau p~_i with early start on improvement, SelectMost / SelectLeast, Heavy-Edge
``a-srpt-perfect``  the same with n~_i = n_i (true iterations)
``spjf``            shortest predicted job (n~_i alpha~_i^min) first, strict order (MLaaS)
``spwf``            shortest predicted workload (g_i n~_i alpha~_i^min) first, strict order (Tiresias)
``wcs-duration``    work-conserving by predicted duration: start every job that fits, in that order
``wcs-workload``    work-conserving by predicted workload
``wcs-subtime``     work-conserving by submission time
==================  ==========================================================================================

Every reading of an ambiguous line of the paper is in ``docs/algorithms/a-srpt.md`` (section "A-SRPT on the
cluster"), each with the paper's line; the code cites them as [R1]...[R12].

Performance model: use ``perf="mixed"`` (:class:`optsched.perf.mixed.MixedPerf`, eq. 7) so that the engine's
iteration times are the ones the policy reasons with; the policies take their network from it when given.

Predictions [R10]: ``predictor="workload"`` (default) uses each job's ``predicted_iterations`` (absent -> 0,
an unseen job); ``"perfect"`` the true iterations; a fitted :class:`optsched.predict.IterationPredictor` is
asked once per admission batch, for the (group, user) pairs it has not answered yet.

Offline use (tiny instances, the exact-optimum comparison): :func:`run_asrpt` / :func:`run_policy`.

>>> from optsched.models import catalogue_job
>>> jobs = [("a", 0.0, catalogue_job("VGG19:dp4"), 1000, 1000),      # (id, release, spec, n, n~)
...         ("b", 0.0, catalogue_job("VGG19:1gpu"), 100, 100)]
>>> run = run_asrpt(jobs, (1, 4))
>>> run.order, run.start_s["a"] > run.completion_s["b"]   # b is smaller on the virtual machine; a waits
(('b', 'a'), True)
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import InstanceError
from ..exact.single_machine import VirtualSRPT
from ..perf.mixed import MixedPerf, SpecCache
from ..perf.pipeline import Network
from ..problems.pipeline import PipelineJob
from .base import Decision, SchedulerPlacer
from .policies import register_scheduler
from .state import Job, Placement, SimView

__all__ = ["ASRPT", "ASRPTPerfect", "COMM_HEAVY", "OrderedPolicy", "PolicyRun", "SPJF", "SPWF", "WCSDuration",
           "WCSSubTime", "WCSWorkload", "POLICY_NAMES", "run_asrpt", "run_policy", "select_servers"]

COMM_HEAVY = 1.5          # paper l. 178: "1.5 in our experiments"
DEFAULT_TAU = 100.0       # [R6] the paper gives no tau for its simulations (tau = 0 on the testbed, l. 241)


# -- server selection and mapping ------------------------------------------------------------------------------
def select_servers(free: np.ndarray, g: int, most: bool) -> list[tuple[int, int]]:
    """SelectMost (``most=True``, Alg. 1 line 9) or SelectLeast (line 27): visit the servers with free GPUs by
    free count descending (ascending), ties by server index, and take min(free, still needed) from each.

    >>> select_servers(np.array([3, 8, 1, 0]), 10, True), select_servers(np.array([3, 8, 1, 0]), 5, False)
    ([(1, 8), (0, 2)], [(2, 1), (0, 3), (1, 1)])
    """
    order = np.argsort(-free if most else free, kind="stable")
    out, need = [], int(g)
    for s in order:
        f = int(free[s])
        if f <= 0:
            continue
        take = f if f < need else need
        out.append((int(s), take))
        need -= take
        if need == 0:
            return out
    raise InstanceError(f"needs {g} GPUs but only {int(free.sum())} are free", field="gpus")


class _Mapper:
    """Heavy-Edge on selected servers, cached by (spec structure, GPUs taken per position, seed)."""

    def __init__(self, cache: SpecCache, seed: int):
        self.cache, self.seed = cache, seed
        self._he: dict = {}

    def place(self, job: Job, picks: list[tuple[int, int]]) -> tuple[Placement, float]:
        """The placement (with per-stage counts) and its per-iteration time in seconds."""
        spec = job.spec
        mapping = {s: n for s, n in picks}
        if not isinstance(spec, PipelineJob):
            return Placement.of(mapping), job.iteration_time_s
        if spec.n_stages == 1:
            cols = [(n,) for _, n in picks]
        else:
            takes = tuple(n for _, n in picks)
            key = (SpecCache.key(spec), takes)
            cols = self._he.get(key)
            if cols is None:
                from ..algorithms.heavy_edge import heavy_edge
                res = heavy_edge(spec, [(str(i), n) for i, n in enumerate(takes)], rng=self.seed)
                cols = self._he[key] = [tuple(res.counts[str(i)]) for i in range(len(takes))]
        stages = {s: c for (s, _), c in zip(picks, cols)}
        return Placement.of(mapping, stages=stages), self.cache.alpha_ms(spec, cols) / 1000.0


# -- shared machinery ------------------------------------------------------------------------------------------
class _PredictingPolicy(SchedulerPlacer):
    """Predictions, alpha-tilde_min / alpha_max per job, Heavy-Edge mapping (shared by A-SRPT and baselines)."""

    name = "predicting"

    def __init__(self, predictor: Any = "workload", seed: int | None = 0, nic_gbps: float | None = None,
                 intra_gbs: float | None = None):
        if isinstance(predictor, str) and predictor not in ("workload", "perfect"):
            hint = (" (fit optsched.predict.make_predictor(...) on a history and pass the object)"
                    if predictor in ("random-forest", "mean", "median") else "")
            raise InstanceError(f"must be 'workload', 'perfect' or a fitted IterationPredictor, got {predictor!r}"
                                + hint, field="predictor")
        if not isinstance(predictor, str) and not hasattr(predictor, "predict"):
            raise InstanceError(f"must be 'workload', 'perfect' or a fitted IterationPredictor, got "
                                f"{type(predictor).__name__}", field="predictor")
        self.predictor = predictor
        self.seed = 0 if seed is None else int(seed)
        self.nic_gbps, self.intra_gbs = nic_gbps, intra_gbs
        self._ready = False
        self._pred_cache: dict = {}
        self.pred: dict[str, float] = {}      # job id -> n~_i
        self.atmin_s: dict[str, float] = {}   # job id -> alpha~_i^min (s)
        self.amax_s: dict[str, float] = {}    # job id -> alpha_i^max (s)
        self.start_order: list[str] = []

    # setup on first contact with a view: the network comes from the perf model when it is paper 001's
    def _setup(self, view: SimView) -> None:
        if self._ready:
            return
        self._ready = True
        caps = view.cluster.capacity
        self.G = int(caps.sum())
        g = int(caps.max())
        perf = view.perf
        if isinstance(perf, MixedPerf) and self.nic_gbps is None and self.intra_gbs is None:
            net = perf.network
            if net.gpus_per_server != g:
                raise InstanceError(f"perf model has g = {net.gpus_per_server} GPUs per server, the cluster {g}",
                                    field="perf.gpus_per_server")
            self.cache = perf.cache
        else:
            net = Network.from_gbps(g, 10.0 if self.nic_gbps is None else float(self.nic_gbps),
                                    300.0 if self.intra_gbs is None else float(self.intra_gbs))
            self.cache = SpecCache(net)
        self.network = net
        self.mapper = _Mapper(self.cache, self.seed)

    def _predict(self, jobs: Sequence[Job]) -> None:
        p = self.predictor
        if p == "workload":
            for j in jobs:
                self.pred[j.id] = float(j.predicted_iterations) if j.predicted_iterations is not None else 0.0
        elif p == "perfect":
            for j in jobs:
                self.pred[j.id] = float(j.iterations)
        else:  # a fitted IterationPredictor: one batch call for the (group, user) pairs not answered yet
            todo = sorted({(j.group, j.user) for j in jobs} - set(self._pred_cache))
            if todo:
                vals = p.predict([{"group_id": gr, "user_id": us} for gr, us in todo])
                self._pred_cache.update(zip(todo, (float(v) for v in vals)))
            for j in jobs:
                self.pred[j.id] = max(0.0, self._pred_cache[(j.group, j.user)])

    def _profile(self, jobs: Sequence[Job]) -> None:
        for j in jobs:
            spec = j.spec
            if isinstance(spec, PipelineJob):
                self.atmin_s[j.id] = self.cache.alpha_tilde_min_ms(spec) / 1000.0
                self.amax_s[j.id] = self.cache.alpha_max_ms(spec) / 1000.0
            else:  # no spec: the profiled time, and never communication-heavy
                self.atmin_s[j.id] = self.amax_s[j.id] = j.iteration_time_s
            j.metrics["predicted_iterations"] = self.pred[j.id]

    def predicted_duration_s(self, job: Job) -> float:
        """n~_i alpha~_i^min: the baselines' 'predicted duration' [R11]."""
        return self.pred[job.id] * self.atmin_s[job.id]

    def on_admit(self, jobs, view) -> None:
        self._setup(view)
        self._predict(jobs)
        self._profile(jobs)

    def _launch(self, decision: Decision, job: Job, pl: Placement, alpha_s: float, free: np.ndarray) -> None:
        decision.launch[job] = pl
        free[list(pl.servers)] -= pl.counts
        job.metrics["alpha_s"] = alpha_s
        self.start_order.append(job.id)

    def describe(self) -> dict:
        p = self.predictor if isinstance(self.predictor, str) else getattr(self.predictor, "name", "custom")
        return {"name": self.name, "predictor": p, "seed": self.seed, "nic_gbps": self.nic_gbps,
                "intra_gbs": self.intra_gbs}


# -- A-SRPT ----------------------------------------------------------------------------------------------------
@register_scheduler("a-srpt")
class ASRPT(_PredictingPolicy):
    """Algorithm 1 of paper 001 in continuous time (readings [R1]-[R12] in ``docs/algorithms/a-srpt.md``).

    ``tau``: delay factor (max wait tau * p~_i of a communication-heavy job); ``comm_heavy``: the threshold
    (1.5); ``predictor``: see the module docstring; ``seed``: Heavy-Edge's random fill.

    Ablation options (not in the paper; defaults = the paper's reading, section "Ablation" of the doc):

    * ``window_blocks_queue=False``: while the popped head waits in its delay window, later queued jobs may
      start: the head's current SelectMost picks are reserved, and each later job (in queue order, skipping
      those that do not fit) starts on the rest if it needs no window of its own (not communication-heavy:
      SelectLeast; heavy: SelectMost and only if alpha <= COMM_HEAVY alpha~min, else it stays queued).
    * ``head_blocks_queue=False``: the same backfill past a head that does not fit (line 5), with no
      reservation for that head (it may starve; the ablation measures the cost of strict FIFO).
    * ``release="arrival"``: a job enters the pending queue at its arrival instead of its virtual completion;
      the queue is ordered by p~_i (SRPT priority at release; ties arrival, workload position).

    >>> ASRPT(window_blocks_queue=False, release="arrival").describe()["release"]
    'arrival'

    Introspection for tests: ``queue_log`` (job ids in the order they entered pending_queue, with the time),
    ``start_order``, and per job ``metrics``: ``virtual_completion_s``, ``queued_s``, ``popped_s``,
    ``comm_heavy``, ``window_s``, ``alpha_s``.
    """

    name = "a-srpt"

    def __init__(self, tau: float = DEFAULT_TAU, comm_heavy: float = COMM_HEAVY, predictor: Any = "workload",
                 seed: int | None = 0, nic_gbps: float | None = None, intra_gbs: float | None = None, *,
                 window_blocks_queue: bool = True, head_blocks_queue: bool = True, release: str = "virtual"):
        super().__init__(predictor, seed, nic_gbps, intra_gbs)
        for n, v in (("tau", tau), ("comm_heavy", comm_heavy)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0 or not math.isfinite(v):
                raise InstanceError(f"must be a finite number >= 0, got {v!r}", field=n)
        for n, v in (("window_blocks_queue", window_blocks_queue), ("head_blocks_queue", head_blocks_queue)):
            if not isinstance(v, bool):
                raise InstanceError(f"must be True or False, got {v!r}", field=n)
        if release not in ("virtual", "arrival"):
            raise InstanceError(f"must be 'virtual' or 'arrival', got {release!r}", field="release")
        self.tau, self.comm_heavy = float(tau), float(comm_heavy)
        # ablation options (docs/algorithms/a-srpt.md, "Ablation"); the defaults are the paper's reading
        self.window_blocks_queue, self.head_blocks_queue, self.release = window_blocks_queue, head_blocks_queue, release
        self.vm = VirtualSRPT()
        self.queue: deque[Job] = deque()
        self._heap: list = []             # release="arrival": (p~_i, arrival, index, job)
        self._qgpus: dict[int, int] = {}  # GPU demand -> number of queued jobs (prunes the ablation backfill)
        self.jobs: dict[str, Job] = {}
        self.queue_log: list[tuple[str, float]] = []
        self._wait: Job | None = None     # popped head job inside its delay window
        self._wait_picks: list[tuple[int, int]] = []
        self._kappa = math.inf
        self._deadline = math.inf

    def virtual_size_s(self, job: Job) -> float:
        """p~_i = (g_i / G) n~_i alpha~_i^min (seconds on the virtual unit-speed machine)."""
        return job.gpus / self.G * self.pred[job.id] * self.atmin_s[job.id]

    def _advance(self, now: float) -> None:
        for jid in self.vm.advance(now):  # [R1] Alg. 1 line 2: newly completed, in completion order
            job = self.jobs.pop(jid)
            job.metrics["virtual_completion_s"] = self.vm.completion[jid]
            if self.release == "virtual":
                job.metrics["queued_s"] = now
                self.queue.append(job)
                self.queue_log.append((jid, now))
                self._qgpus[job.gpus] = self._qgpus.get(job.gpus, 0) + 1

    def on_admit(self, jobs, view) -> None:
        super().on_admit(jobs, view)
        now = view.now
        self._advance(now)
        for j in jobs:
            self.jobs[j.id] = j
            self.vm.add(j.id, now, self.virtual_size_s(j))  # release = admission time (= arrival, event mode)
            if self.release == "arrival":  # ablation: queued at once, in SRPT priority at release (p~_i)
                heapq.heappush(self._heap, (self.virtual_size_s(j), j.arrival_s, j.index, j))
                j.metrics["queued_s"] = now
                self.queue_log.append((j.id, now))
                self._qgpus[j.gpus] = self._qgpus.get(j.gpus, 0) + 1

    def is_comm_heavy(self, job: Job) -> bool:
        """[R4] alpha_max / alpha~_min >= COMM_HEAVY (Alg. 1 line 8)."""
        return self.amax_s[job.id] >= self.comm_heavy * self.atmin_s[job.id]

    def _pending(self, started: set[str]):
        """The pending queue in its order, lazily: virtual-completion FIFO (paper) or, with
        ``release="arrival"``, p~_i priority (ties: arrival, workload position). ``started``: ids the caller
        popped; with ``release="arrival"`` a popped head leaves the heap here at once."""
        if self.release == "virtual":
            yield from self.queue  # not mutated while iterated: removals happen in _remove
            return
        h = self._heap
        while h:
            top = h[0][3]
            yield top
            if top.id not in started:
                break
            heapq.heappop(h)
            started.discard(top.id)
        if len(h) > 1:  # the head was skipped (ablation backfill): the rest in heap order, on a copy
            rest = h.copy()
            heapq.heappop(rest)
            while rest:
                yield heapq.heappop(rest)[3]

    def _remove(self, started: set[str]) -> None:
        if not started:
            return
        left = len(started)
        if self.release == "virtual":
            q = self.queue
            while q and q[0].id in started:  # the usual case: a prefix of the queue started
                q.popleft()
                left -= 1
            if left:
                self.queue = deque(j for j in q if j.id not in started)
        else:
            h = self._heap
            while h and h[0][3].id in started:
                heapq.heappop(h)
                left -= 1
            if left:
                self._heap = [e for e in h if e[3].id not in started]
                heapq.heapify(self._heap)

    def decide(self, view: SimView) -> Decision:
        self._setup(view)
        now = view.now
        self._advance(now)
        free = view.cluster.free.copy()
        decision = Decision()
        reserved = np.zeros_like(free)   # GPUs kept for the waiting head (window_blocks_queue=False)
        blocked = False                  # the head cannot start now: later jobs only by the ablation rules
        if self._wait is not None:       # [R7] inside the delay window: re-plan at the current availability
            job = self._wait
            picks = select_servers(free, job.gpus, True)
            pl, a = self.mapper.place(job, picks)
            if a < self._kappa or now >= self._deadline:
                self._wait, self._kappa, self._deadline, self._wait_picks = None, math.inf, math.inf, []
                job.metrics["early_start"] = a < job.metrics.get("kappa_s", math.inf)
                self._launch(decision, job, pl, a, free)
            elif self.window_blocks_queue:
                return decision  # [R8] the queue stays blocked behind the waiting head
            else:  # ablation (a): keep the head's current SelectMost picks, backfill the rest
                blocked = True
                for s, n in picks:
                    reserved[s] += n
        started: set[str] = set()
        failed: set = set()  # backfill: (structure, GPUs) that needed a window at the current availability
        qg = self._qgpus
        # avail / total_free / the smallest queued GPU count change only when a job launches or the head
        # reserves GPUs: recomputed there, not per scanned job (the ablation scans long queues)
        avail = free - reserved
        total_free = int(avail.sum())
        smallest = None
        for job in self._pending(started):
            if total_free <= 0:
                break
            if blocked:  # ablation backfill: start a later job only if it fits and needs no window of its own
                if job.gpus > total_free:
                    if smallest is None:
                        smallest = min((g for g, c in qg.items() if c > 0), default=total_free + 1)
                    if smallest > total_free:
                        break  # no queued job is small enough: the rest of the scan cannot start anything
                    continue
                heavy = self.is_comm_heavy(job)
                key = (SpecCache.key(job.spec) if isinstance(job.spec, PipelineJob) else job.id, job.gpus)
                if heavy and key in failed:
                    continue
                pl, a = self.mapper.place(job, select_servers(avail, job.gpus, heavy))
                if heavy and not a <= self.comm_heavy * self.atmin_s[job.id]:
                    failed.add(key)
                    continue
                job.metrics.update(popped_s=now, comm_heavy=heavy, backfilled=True)
                started.add(job.id)
                qg[job.gpus] -= 1
                failed.clear()  # the availability changed
                self._launch(decision, job, pl, a, free)
                avail = free - reserved
                total_free, smallest = int(avail.sum()), None
                continue
            if job.gpus > total_free:  # Alg. 1 line 5: head-of-line blocking, strict FIFO [R3]
                if self.head_blocks_queue:
                    break
                blocked = True  # ablation: backfill past a head that does not fit (no reservation for it)
                continue
            job.metrics["popped_s"] = now
            heavy = self.is_comm_heavy(job)
            job.metrics["comm_heavy"] = heavy
            started.add(job.id)  # popped (line 7): leaves the queue, started now or held in the window
            qg[job.gpus] -= 1
            if heavy:
                picks = select_servers(avail, job.gpus, True)
                pl, a = self.mapper.place(job, picks)                                  # line 9-11
                window = self.tau * self.virtual_size_s(job)                           # line 17 [R6]
                job.metrics["window_s"] = window
                if a <= self.comm_heavy * self.atmin_s[job.id] or not now + window > now:  # line 12 [R5]
                    self._launch(decision, job, pl, a, free)
                else:
                    self._wait, self._kappa, self._deadline = job, a, now + window      # line 16
                    job.metrics["kappa_s"] = a
                    if self.window_blocks_queue:
                        break
                    blocked = True
                    for s, n in picks:
                        reserved[s] += n
            else:
                pl, a = self.mapper.place(job, select_servers(avail, job.gpus, False))  # lines 27-28
                self._launch(decision, job, pl, a, free)
            avail = free - reserved
            total_free, smallest = int(avail.sum()), None
        self._remove(started)
        return decision

    def next_wakeup(self, now: float) -> float:
        t = self._deadline
        ready = getattr(self.vm, "_ready", None)  # the virtual machine's next completion (all jobs released)
        if ready and self.release == "virtual":
            t = min(t, self.vm.now + ready[0][0])
        if t <= now:
            t = math.nextafter(now, math.inf)
        return t

    def describe(self) -> dict:
        return {**super().describe(), "tau": self.tau, "comm_heavy": self.comm_heavy,
                "window_blocks_queue": self.window_blocks_queue, "head_blocks_queue": self.head_blocks_queue,
                "release": self.release}


@register_scheduler("a-srpt-perfect")
class ASRPTPerfect(ASRPT):
    """A-SRPT with the true iterations (paper l. 267: "perfect knowledge of job durations")."""

    name = "a-srpt-perfect"

    def __init__(self, tau: float = DEFAULT_TAU, comm_heavy: float = COMM_HEAVY, seed: int | None = 0,
                 nic_gbps: float | None = None, intra_gbs: float | None = None, predictor: Any = "perfect"):
        if predictor != "perfect":
            raise InstanceError("a-srpt-perfect always uses the true iterations", field="predictor")
        super().__init__(tau, comm_heavy, "perfect", seed, nic_gbps, intra_gbs)


# -- baselines -------------------------------------------------------------------------------------------------
class OrderedPolicy(_PredictingPolicy):
    """A non-preemptive priority order with Heavy-Edge mapping on SelectMost servers [R11].

    ``strict=True``: start jobs in order while the head fits, then stop (SPJF, SPWF: "if the shortest job does
    not fit, it will not schedule longer jobs", paper l. 282). ``strict=False``: work-conserving, start every
    job that fits, in order (WCS, l. 265). Ties: arrival time, then workload position.
    """

    name = "ordered"
    strict = True

    def __init__(self, predictor: Any = "workload", seed: int | None = 0, nic_gbps: float | None = None,
                 intra_gbs: float | None = None):
        super().__init__(predictor, seed, nic_gbps, intra_gbs)
        self._heaps: dict[int, list] = {}

    def key(self, job: Job) -> float:
        raise NotImplementedError

    def on_admit(self, jobs, view) -> None:
        super().on_admit(jobs, view)
        for j in jobs:
            h = self._heaps.setdefault(0 if self.strict else j.gpus, [])
            heapq.heappush(h, (self.key(j), j.arrival_s, j.index, j))

    def decide(self, view: SimView) -> Decision:
        self._setup(view)
        free = view.cluster.free.copy()
        total_free = int(free.sum())
        decision = Decision()
        heaps = self._heaps
        while True:
            if self.strict:
                h = heaps.get(0)
                if not h or h[0][3].gpus > total_free:
                    break
            else:  # the best head among the demand classes that fit
                best = None
                for g, hh in heaps.items():
                    if hh and g <= total_free and (best is None or hh[0][:3] < heaps[best][0][:3]):
                        best = g
                if best is None:
                    break
                h = heaps[best]
            job = heapq.heappop(h)[3]
            pl, a = self.mapper.place(job, select_servers(free, job.gpus, True))
            self._launch(decision, job, pl, a, free)
            total_free -= job.gpus
        return decision


@register_scheduler("spjf")
class SPJF(OrderedPolicy):
    """Shortest predicted job first (MLaaS, paper l. 265 (1)), strict order."""

    name = "spjf"
    strict = True

    def key(self, job):
        return self.predicted_duration_s(job)


@register_scheduler("spwf")
class SPWF(OrderedPolicy):
    """Shortest predicted workload (duration x GPUs) first (Tiresias, l. 265 (2)), strict order."""

    name = "spwf"
    strict = True

    def key(self, job):
        return self.predicted_duration_s(job) * job.gpus


@register_scheduler("wcs-duration")
class WCSDuration(OrderedPolicy):
    """Work-conserving by predicted duration (l. 265 (3))."""

    name = "wcs-duration"
    strict = False

    def key(self, job):
        return self.predicted_duration_s(job)


@register_scheduler("wcs-workload")
class WCSWorkload(OrderedPolicy):
    """Work-conserving by predicted workload (l. 265 (4))."""

    name = "wcs-workload"
    strict = False

    def key(self, job):
        return self.predicted_duration_s(job) * job.gpus


@register_scheduler("wcs-subtime")
class WCSSubTime(OrderedPolicy):
    """Work-conserving by submission time (l. 265 (5))."""

    name = "wcs-subtime"
    strict = False

    def key(self, job):
        return job.arrival_s


POLICY_NAMES = ("a-srpt", "a-srpt-perfect", "spjf", "spwf", "wcs-duration", "wcs-workload", "wcs-subtime")


# -- offline runs on small instances ---------------------------------------------------------------------------
@dataclass(frozen=True)
class PolicyRun:
    """One policy on one instance: per-job start and completion times (s), placements, per-iteration times (s).

    ``total_completion_s`` = sum_i C_i (paper 001's objective (8)); ``total_jct_s`` = sum_i (C_i - r_i);
    ``order``: job ids in start order; ``placement``: id -> {server index: per-stage GPU counts};
    ``result``: the simulator's :class:`~optsched.sim.metrics.SimResult`.
    """

    completion_s: Mapping[str, float]
    start_s: Mapping[str, float]
    placement: Mapping[str, Mapping[int, tuple[int, ...]]]
    alpha_s: Mapping[str, float]
    order: tuple[str, ...]
    total_completion_s: float
    total_jct_s: float
    result: Any


def _as_workload_jobs(jobs, net: Network):
    from ..problems.workload import WorkloadJob

    out = []
    cache = SpecCache(net)
    for i, j in enumerate(jobs):
        if isinstance(j, WorkloadJob):
            out.append(j)
            continue
        try:
            jid, release, spec, iters, *rest = j
        except (TypeError, ValueError):
            raise InstanceError("each job must be a WorkloadJob or (id, release_s, PipelineJob, iterations"
                                "[, predicted_iterations])", field=f"jobs[{i}]") from None
        if not isinstance(spec, PipelineJob):
            raise InstanceError(f"must be a PipelineJob, got {type(spec).__name__}", field=f"jobs[{i}].spec",
                                job=str(jid))
        pred = rest[0] if rest else None
        out.append(WorkloadJob(str(jid), release, spec.gpus, iters, cache.alpha_tilde_min_ms(spec) / 1000.0,
                               model=spec.model, predicted_iterations=pred if pred else None, spec=spec))
    return out


def run_policy(policy: str | SchedulerPlacer, jobs: Sequence, cluster: Any = (1, 8), *, nic_gbps: float = 10.0,
               intra_gbs: float = 300.0, seed: int = 0, mode: str = "event", **options) -> PolicyRun:
    """Run one policy of this module (by name or object) on a small offline instance, in the event-driven
    engine with paper 001's performance model (:class:`~optsched.perf.mixed.MixedPerf`).

    * ``jobs``: :class:`~optsched.problems.workload.WorkloadJob` objects with a ``spec``, or tuples
      ``(id, release_s, PipelineJob, iterations[, predicted_iterations])``; ``iteration_time_s`` is set to
      alpha~_i^min / 1000 (s), a predicted count of 0 / None means unseen (n~ = 0).
    * ``cluster``: ``(servers, gpus_per_server)`` or a homogeneous :class:`~optsched.cluster.Cluster`;
      ``nic_gbps`` (Gbit/s) and ``intra_gbs`` (GB/s) give B_inter and B_intra.
    * other keyword arguments are the policy's options (``tau``, ``comm_heavy``, ``predictor``).

    Times are in seconds: a job on placement x runs n_i * alpha_i(x) / 1000 s (eq. 7 is in ms).
    """
    from ..cluster import Cluster
    from . import simulate
    from ..problems.workload import Workload

    if isinstance(cluster, Cluster):
        caps = {s.gpus for s in cluster.servers}
        if len(caps) != 1:
            raise InstanceError("paper 001's model needs homogeneous servers", field="cluster")
        g, cl = caps.pop(), cluster
    else:
        try:
            m, g = cluster
        except (TypeError, ValueError):
            raise InstanceError(f"must be a Cluster or (servers, gpus_per_server), got {cluster!r}",
                                field="cluster") from None
        cl = Cluster.homogeneous(int(m), int(g))
    perf = MixedPerf(int(g), nic_gbps, intra_gbs)
    wl = Workload(tuple(_as_workload_jobs(jobs, perf.network)), name="offline")
    res = simulate(wl, cl, scheduler=policy, perf=perf, mode=mode, seed=seed, **options)
    done = res.job_objects
    comp = {j.id: j.completion_s for j in done}
    start = {j.id: j.first_start_s for j in done}
    plc = {j.id: dict(j.segments[0][2].stages or {s: (n,) for s, n in j.segments[0][2].as_dict().items()})
           for j in done}
    alpha = {j.id: j.iteration_now_s for j in done}
    order = tuple(sorted(comp, key=lambda k: (start[k], [j.id for j in done].index(k))))
    return PolicyRun(comp, start, plc, alpha, order, float(sum(comp.values())),
                     float(sum(comp[j.id] - j.arrival_s for j in done)), res)


def run_asrpt(jobs: Sequence, cluster: Any = (1, 8), *, tau: float = DEFAULT_TAU, predictor: Any = "workload",
              nic_gbps: float = 10.0, intra_gbs: float = 300.0, seed: int = 0) -> PolicyRun:
    """A-SRPT on a small offline instance: per-job completion times (``.completion_s``), start times,
    placements and the totals. ``predictor="perfect"`` gives A-SRPT-Perfect; the default uses each job's
    predicted iterations (5th tuple entry; absent = unseen, n~ = 0). See :func:`run_policy`.

    >>> from optsched.models import catalogue_job
    >>> r = run_asrpt([("x", 0.0, catalogue_job("ResNet152:1gpu"), 10, 10)], (1, 8))
    >>> p = 1 / 8 * 10 * r.alpha_s["x"]          # virtual size (g/G) n~ alpha~min: x starts when it completes
    >>> math.isclose(r.start_s["x"], p), math.isclose(r.completion_s["x"], p + 10 * r.alpha_s["x"])
    (True, True)
    """
    return run_policy("a-srpt", jobs, cluster, tau=tau, predictor=predictor, nic_gbps=nic_gbps,
                      intra_gbs=intra_gbs, seed=seed)
