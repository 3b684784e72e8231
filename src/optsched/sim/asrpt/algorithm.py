"""A-SRPT: Algorithm 1 of paper 001 as an online policy of the simulator (``a-srpt``, ``a-srpt-perfect``).

A virtual single machine runs preemptive SRPT on p~_i = (g_i/G) n~_i alpha~_i^min; a job enters the strict
FIFO pending queue when it completes there; the head starts on SelectLeast servers, or, if it is
communication-heavy (alpha_i^max >= COMM_HEAVY alpha~_i^min), on SelectMost servers at once when its mapped
alpha is within COMM_HEAVY alpha~_i^min, else after a delay window of tau p~_i (early start on improvement);
replicas are mapped with Heavy-Edge. Every reading of an ambiguous line of the paper is in
``docs/algorithms/a-srpt.md`` (section "A-SRPT on the cluster"), each with the paper's line; the code cites them
as [R1]...[R12].

```pycon
>>> from optsched.sim import Workload, WorkloadJob, simulate
>>> wl = Workload((WorkloadJob("a", 0, 2, 10, 1.0, predicted_iterations=10),
...                WorkloadJob("b", 0, 1, 4, 1.0, predicted_iterations=4)))
>>> r = simulate(wl, servers=1, gpus_per_server=2, scheduler="a-srpt", mode="event")
>>> [(j.id, j.first_start_s, j.completion_s) for j in r.job_objects]  # virtual sizes a 10, b 2
[('a', 12.0, 22.0), ('b', 2.0, 6.0)]

```
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from typing import Any

import numpy as np

from ...errors import InstanceError
from ...exact.single_machine import VirtualSRPT
from ...perf.mixed import SpecCache
from ...problems.pipeline import PipelineJob
from ..base import Decision, DecisionBuilder
from ..state import Job, SimView
from .predicting import PredictingPolicy, select_servers

__all__ = ["ASRPT", "ASRPTPerfect", "COMM_HEAVY", "DEFAULT_TAU"]

COMM_HEAVY = 1.5          # paper l. 178: "1.5 in our experiments"
DEFAULT_TAU = 100.0       # [R6] the paper gives no tau for its simulations (tau = 0 on the testbed, l. 241)


class ASRPT(PredictingPolicy):
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

    ```pycon
    >>> ASRPT(window_blocks_queue=False, release="arrival").describe()["release"]
    'arrival'

    ```

    Introspection for tests: ``queue_log`` (job ids in the order they entered pending_queue, with the time),
    ``start_order``, and per job ``records[job_id]`` (columns of the run's per-job table):
    ``virtual_completion_s``, ``queued_s``, ``popped_s``, ``comm_heavy``, ``window_s``, ``alpha_s``.
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
        self._skip: set[str] = set()      # started by an outside driver before their virtual completion

    def virtual_size_s(self, job: Job) -> float:
        """p~_i = (g_i / G) n~_i alpha~_i^min (seconds on the virtual unit-speed machine)."""
        return job.gpus / self.G * self.pred[job.id] * self.atmin_s[job.id]

    def _advance(self, now: float) -> None:
        for done in self.vm.advance(now):  # [R1] Alg. 1 line 2: newly completed, in completion order
            jid = str(done)  # the virtual machine knows jobs by their ids
            job = self.jobs.pop(jid)
            self._note(job, virtual_completion_s=self.vm.completion[jid])
            if jid in self._skip:  # an outside driver started it already
                self._skip.discard(jid)
                continue
            if self.release == "virtual":
                self._note(job, queued_s=now)
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
                self._note(j, queued_s=now)
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

    def _forget(self, ids: set[str]) -> None:
        if self._wait is not None and self._wait.id in ids:
            self._wait, self._kappa, self._deadline, self._wait_picks = None, math.inf, math.inf, []
        gone = [j for j in self.queue if j.id in ids] + [e[3] for e in self._heap if e[3].id in ids]
        if gone:
            self.queue = deque(j for j in self.queue if j.id not in ids)
            self._heap = [e for e in self._heap if e[3].id not in ids]
            heapq.heapify(self._heap)
            for j in gone:
                self._qgpus[j.gpus] -= 1
        self._skip.update(i for i in ids if i in self.jobs)

    def _requeue(self, job: Job) -> None:
        if self.release == "virtual" and job.id in self.jobs:  # the virtual machine releases it as usual
            self._skip.discard(job.id)
            return
        self._skip.discard(job.id)
        if self.release == "virtual":
            self.queue.appendleft(job)  # it had left the head of the queue: it goes back there
        else:
            heapq.heappush(self._heap, (self.virtual_size_s(job), job.arrival_s, job.index, job))
        self._qgpus[job.gpus] = self._qgpus.get(job.gpus, 0) + 1

    def decide(self, view: SimView) -> Decision:
        self._setup(view)
        now = view.now
        self._advance(now)
        b = DecisionBuilder(view)
        free = b.free  # the builder's: every launch below updates it
        reserved = np.zeros_like(free)   # GPUs kept for the waiting head (window_blocks_queue=False)
        blocked = False                  # the head cannot start now: later jobs only by the ablation rules
        if self._wait is not None:       # [R7] inside the delay window: re-plan at the current availability
            job = self._wait
            picks = select_servers(free, job.gpus, True)
            pl, a = self.mapper.place(job, picks)
            if a < self._kappa or now >= self._deadline:
                self._wait, self._kappa, self._deadline, self._wait_picks = None, math.inf, math.inf, []
                self._note(job, early_start=a < self.records.get(job.id, {}).get("kappa_s", math.inf))
                self._launch(b, job, pl, a)
            elif self.window_blocks_queue:
                return b.build()  # [R8] the queue stays blocked behind the waiting head
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
                self._note(job, popped_s=now, comm_heavy=heavy, backfilled=True)
                started.add(job.id)
                qg[job.gpus] -= 1
                failed.clear()  # the availability changed
                self._launch(b, job, pl, a)
                avail = free - reserved
                total_free, smallest = int(avail.sum()), None
                continue
            if job.gpus > total_free:  # Alg. 1 line 5: head-of-line blocking, strict FIFO [R3]
                if self.head_blocks_queue:
                    break
                blocked = True  # ablation: backfill past a head that does not fit (no reservation for it)
                continue
            self._note(job, popped_s=now)
            heavy = self.is_comm_heavy(job)
            self._note(job, comm_heavy=heavy)
            started.add(job.id)  # popped (line 7): leaves the queue, started now or held in the window
            qg[job.gpus] -= 1
            if heavy:
                picks = select_servers(avail, job.gpus, True)
                pl, a = self.mapper.place(job, picks)                                  # line 9-11
                window = self.tau * self.virtual_size_s(job)                           # line 17 [R6]
                self._note(job, window_s=window)
                if a <= self.comm_heavy * self.atmin_s[job.id] or not now + window > now:  # line 12 [R5]
                    self._launch(b, job, pl, a)
                else:
                    self._wait, self._kappa, self._deadline = job, a, now + window      # line 16
                    self._note(job, kappa_s=a)
                    if self.window_blocks_queue:
                        break
                    blocked = True
                    for s, n in picks:
                        reserved[s] += n
            else:
                pl, a = self.mapper.place(job, select_servers(avail, job.gpus, False))  # lines 27-28
                self._launch(b, job, pl, a)
            avail = free - reserved
            total_free, smallest = int(avail.sum()), None
        self._remove(started)
        return b.build()

    def next_wakeup(self, now: float) -> float:
        t = self._deadline
        ready = getattr(self.vm, "_ready", None)  # the virtual machine's next completion (all jobs released)
        if ready and self.release == "virtual":
            t = min(t, self.vm.now + ready[0][0])
        if t <= now:
            t = math.nextafter(now, math.inf)
        return t


class ASRPTPerfect(ASRPT):
    """A-SRPT with the true iterations (paper l. 267: "perfect knowledge of job durations")."""

    name = "a-srpt-perfect"

    def __init__(self, tau: float = DEFAULT_TAU, comm_heavy: float = COMM_HEAVY, seed: int | None = 0,
                 nic_gbps: float | None = None, intra_gbs: float | None = None, predictor: Any = "perfect"):
        if predictor != "perfect":
            raise InstanceError("a-srpt-perfect always uses the true iterations", field="predictor")
        super().__init__(tau, comm_heavy, "perfect", seed, nic_gbps, intra_gbs)
