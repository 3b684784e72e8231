"""Job state and cluster state of the simulator (Blox digest, section 1).

* [`Job`][optsched.sim.state.Job]: one job of a workload plus everything the engine tracks about it (Blox's JobState
  entry:
  arrival, demand, iterations, profiled iteration time, attained service, placement, first start, completion,
  preemptions, and free-form ``metrics``). Progress is stored lazily: ``executed`` iterations at time ``t_ref``
  and a constant ``rate`` (iterations/s) since then, so nothing has to be touched per round.
* [`JobState`][optsched.sim.state.JobState]: Blox's dict of active jobs (admitted, not finished) and finished jobs.
* [`ClusterState`][optsched.sim.state.ClusterState]: free GPUs per server as a numpy array (the hot path), the jobs on
  every server (for
  co-location-aware models and policies), and Blox's per-GPU data frame on demand
  ([`gpu_frame`][optsched.sim.state.ClusterState.gpu_frame]).
* [`Placement`][optsched.sim.state.Placement]: GPUs per server (server *indices*), optionally GPUs per stage on each
  server for
  multi-stage (pipeline) jobs.

```pycon
>>> from optsched.cluster import Cluster
>>> cs = ClusterState(Cluster.homogeneous(2, 4))
>>> p = Placement.of({0: 3})
>>> cs.occupy("a", p); cs.free.tolist(), cs.busy_gpus
([1, 4], 3)
>>> cs.release("a", p); cs.free.tolist()
[4, 4]

```
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..cluster import Cluster
from ..errors import ScheduleError
from ..perf.base import PlacementLike

_set = object.__setattr__  # (frozen, slotted) Placement fields set without the dataclass checks

# job status values (plain strings: cheap to compare, readable in the per-job records)
WAITING_ADMISSION = "admission"   # arrived, held by the admission policy
QUEUED = "queued"                 # admitted, not running (never started, or preempted)
RUNNING = "running"
DONE = "done"


@dataclass(frozen=True, slots=True)
class Placement:
    """GPUs per server index; ``stages`` (optional) gives, per server, the GPUs of each pipeline stage.

    ```pycon
    >>> Placement.of({2: 1, 0: 3}).servers, Placement.of({2: 1, 0: 3}).gpus, Placement.of({0: 3}).n_servers
    ((0, 2), 4, 1)

    ```
    """

    servers: tuple[int, ...]
    counts: tuple[int, ...]
    stages: Mapping[int, tuple[int, ...]] | None = None

    @classmethod
    def of(cls, mapping: Mapping[int, int], stages: Mapping[int, tuple[int, ...]] | None = None) -> Placement:
        items = sorted((int(s), int(n)) for s, n in mapping.items() if n)
        return cls(tuple(s for s, _ in items), tuple(n for _, n in items), stages)

    # GPUs in all: read at every launch, preemption and completion, so computed once (not compared, not shown)
    gpus: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpus", sum(self.counts))

    @classmethod
    def one(cls, server: int, gpus: int) -> Placement:
        """``gpus`` GPUs on one server (the same as ``Placement.of({server: gpus})``, built without the checks of
        the generated ``__init__``: placement walks ask for one per launch). Placements are immutable, so one
        object per (server, GPUs) is kept and handed out again: a million launches hold a few thousand
        placements, not a million.

        ```pycon
        >>> Placement.one(3, 2) == Placement.of({3: 2}), Placement.one(3, 2).gpus
        (True, 2)

        ```
        """
        p = _ONE.get((server, gpus))
        if p is None or cls is not Placement:
            p = object.__new__(cls)
            _set(p, "servers", (server,))
            _set(p, "counts", (gpus,))
            _set(p, "stages", None)
            _set(p, "gpus", gpus)
            if cls is Placement:
                _ONE[server, gpus] = p
        return p

    @classmethod
    def _of_sorted(cls, servers: tuple[int, ...], counts: tuple[int, ...], gpus: int) -> Placement:
        """``Placement.of(dict(zip(servers, counts)))`` for a caller that already holds what it would build:
        ``servers`` ascending and distinct, ``counts`` positive Python ints adding up to ``gpus`` (internal: no
        check; one server gives [`one`][optsched.sim.state.Placement.one]'s shared placement, as ``of`` does
        not, equal to it). The deadline family's ``grow`` and ``shrink`` build their placements this way.

        ```pycon
        >>> Placement._of_sorted((0, 2), (3, 1), 4) == Placement.of({2: 1, 0: 3})
        True

        ```
        """
        if len(servers) == 1 and cls is Placement:
            return cls.one(servers[0], counts[0])
        p = object.__new__(cls)
        _set(p, "servers", servers)
        _set(p, "counts", counts)
        _set(p, "stages", None)
        _set(p, "gpus", gpus)
        return p

    @property
    def n_servers(self) -> int:
        return len(self.servers)

    def as_dict(self) -> dict[int, int]:
        return dict(zip(self.servers, self.counts))

    # immutable by contract (frozen; ``stages`` is never mutated): copies share it
    def __copy__(self) -> Placement:
        return self

    def __deepcopy__(self, memo: dict) -> Placement:
        return self


_ONE: dict[tuple[int, int], Placement] = {}  # Placement.one's placements, by (server, GPUs)


class _Fields:
    """The eleven workload fields of a [`Job`][optsched.sim.state.Job] built by hand (a job built from a workload
    reads them from its workload job instead)."""

    __slots__ = ("arrival_s", "iterations", "iteration_time_s", "tracked", "model", "predicted_iterations",
                 "deadline_s", "user", "group", "spec", "gpu_type")

    def __init__(self, arrival_s: float, iterations: float, iteration_time_s: float, tracked: bool, model: str,
                 predicted_iterations: float | None, deadline_s: float | None, user: str, group: str, spec: Any,
                 gpu_type: str):
        self.arrival_s, self.iterations, self.iteration_time_s, self.tracked = (arrival_s, iterations,
                                                                                iteration_time_s, tracked)
        self.model, self.predicted_iterations, self.deadline_s = model, predicted_iterations, deadline_s
        self.user, self.group, self.spec, self.gpu_type = user, group, spec, gpu_type

    def __deepcopy__(self, memo: dict) -> _Fields:
        return self  # read-only by contract, like a workload job


class _Segments:
    """A job's closed segments: ``(start, end, iterations)`` per segment in one typed array, the placements in a
    list. Only jobs that ran more than once store any (Gavel relaunches its jobs round after round: 300,000 Philly
    jobs held about 370,000 segments, 60 bytes each as a flat list of boxed fields, 34 here)."""

    __slots__ = ("times", "placements")

    def __init__(self, times: array, placements: list[Placement]) -> None:
        self.times, self.placements = times, placements

    def add(self, start: float, end: float, placement: Placement, iterations: float) -> None:
        self.times.extend((start, end, iterations))
        self.placements.append(placement)

    def tuples(self) -> list[tuple[float, float, Placement, float]]:
        t = self.times
        return [(t[3 * k], t[3 * k + 1], pl, t[3 * k + 2]) for k, pl in enumerate(self.placements)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Segments) and self.times == other.times and self.placements == other.placements

    def copy(self) -> _Segments:
        """Its own containers, the same numbers and (immutable) placements: a copied job's segments."""
        return _Segments(array("d", self.times), list(self.placements))


class Job:
    """One job: workload fields and simulation state, both read-only to policies: the engine alone writes a job,
    through its lifecycle methods ([`launch`][optsched.sim.state.Job.launch],
    [`preempt`][optsched.sim.state.Job.preempt], [`migrate`][optsched.sim.state.Job.migrate],
    [`complete`][optsched.sim.state.Job.complete]); a policy
    keeps whatever it needs to remember about a job in itself.

    Workload fields: ``id, arrival_s, gpus, iterations, iteration_time_s`` (profiled, alone, consolidated),
    ``model, predicted_iterations, deadline_s, user, group, spec`` (an arbitrary object a performance model may
    need, e.g. a ``RarJob`` or a ``PipelineJob``), ``tracked`` (counted in the metrics) and ``gpu_type`` (the GPU
    type the job must run on, "" for any). ``w`` is the workload job itself (a job built from a workload): the
    ``id`` and ``gpus`` are copied from it (the engine reads them at every event), the other eleven are read
    through it.

    What policies read of the state: ``status``, ``placement``, ``held_gpus``, ``first_start_s``,
    ``completion_s``, ``preemptions``, ``launches``, ``migrations``, ``wait_since_s`` (when it last stopped
    running or arrived), ``segments``, and the accessors [`executed_at`][optsched.sim.state.Job.executed_at],
    [`remaining_iterations`][optsched.sim.state.Job.remaining_iterations],
    [`attained_at`][optsched.sim.state.Job.attained_at], [`attained_gpu_at`][optsched.sim.state.Job.attained_gpu_at],
    [`running_since_s`][optsched.sim.state.Job.running_since_s] and
    [`service_anchor`][optsched.sim.state.Job.service_anchor] (for
    policies that key on attained service exactly; a job that does not run has its exact service in
    ``attained_s`` / ``attained_gpu_s``). ``executed``, ``t_ref``, ``rate``, ``stall_until``,
    ``seg_start`` and ``version`` are the engine's lazy bookkeeping.

    ``gpus`` is what the job *requests*; ``held_gpus`` what it holds now (its placement's GPUs while it runs,
    0 otherwise). They differ only under an elastic launch; GPU-seconds of service (``attained_gpu_s``,
    Tiresias, LAS with ``service="gpu"``) and utilisation count the GPUs held.

    ```pycon
    >>> j = Job("a", 0, 4, 100, 1.0)
    >>> j.status = QUEUED
    >>> j.launch(0.0, Placement.of({0: 2}), stall_s=0.0)   # the engine's elastic launch on 2 GPUs
    >>> j.rate = 0.5                                        # its rate, from the performance model
    >>> j.attained_gpu_at(100.0), j.executed_at(100.0), j.running_since_s
    (200.0, 50.0, 0.0)

    ```
    """

    __slots__ = ("id", "index", "gpus", "w",
                 "status", "executed", "t_ref", "stall_until", "rate", "attained_s", "attained_gpu_s",
                 "admitted_s", "first_start_s", "completion_s", "placement", "preemptions", "launches",
                 "wait_since_s", "version", "_segs", "seg_start", "iteration_now_s", "held_gpus", "migrations")

    def __init__(self, id: str, arrival_s: float, gpus: int, iterations: float, iteration_time_s: float, *,
                 index: int = 0, model: str = "", predicted_iterations: float | None = None,
                 deadline_s: float | None = None, user: str = "", group: str = "", spec: Any = None,
                 tracked: bool = True, gpu_type: str = ""):
        self.id, self.index, self.gpus = id, index, int(gpus)
        # the other workload fields, read through ``w`` (the workload job, shared with it: a million jobs spare a
        # million copies of eleven fields)
        self.w = _Fields(float(arrival_s), float(iterations), float(iteration_time_s), tracked, model,
                         predicted_iterations, deadline_s, user, group, spec, gpu_type)
        self.status = WAITING_ADMISSION
        self.executed = 0.0          # iterations done at time t_ref
        self.t_ref = 0.0
        self.stall_until = 0.0       # no progress before this time (checkpoint-restore overhead)
        self.rate = 0.0              # iterations per second while running, after the stall
        self.iteration_now_s = math.inf
        self.attained_s = 0.0        # wall time held GPUs (Blox's attained_service), at t_ref
        self.attained_gpu_s = 0.0    # GPU-seconds held (Tiresias' attained service), at t_ref
        self.held_gpus = 0           # GPUs held now (the placement's while running; 0 otherwise)
        self.admitted_s = math.nan
        self.first_start_s = math.nan
        self.completion_s = math.nan
        self.placement: Placement | None = None
        self.preemptions = 0
        self.launches = 0
        self.migrations = 0          # moves while running (Decision.migrate): not preemptions, not launches
        self.wait_since_s = float(arrival_s)  # last time it stopped running (or arrived): anti-starvation clock
        self.version = 0                      # bumps whenever its completion time changes (lazy heap deletion)
        # the closed segments, flat (start, end, placement, iterations, start, ...): an empty tuple until one is
        # stored, then a list. A job that completes in its first segment stores none: ``segments`` derives it from
        # the first start, the completion, the placement and the work (a million jobs spare a million lists and
        # tuples)
        self._segs: _Segments | tuple[()] = ()
        self.seg_start: tuple[float, float] | None = None

    # the workload job's fields kept in ``w`` (read-only, like every field of a job to a policy; a C-level getter
    # each: no Python frame per read)
    arrival_s = property(attrgetter("w.arrival_s"), doc="Arrival time, seconds (workload field).")
    iterations = property(attrgetter("w.iterations"), doc="The work, iterations (workload field).")
    iteration_time_s = property(attrgetter("w.iteration_time_s"),
                                doc="Profiled seconds per iteration, alone, consolidated (workload field).")
    tracked = property(attrgetter("w.tracked"), doc="Counted in the metrics (workload field).")
    model = property(attrgetter("w.model"), doc="The model's name (workload field).")
    predicted_iterations = property(attrgetter("w.predicted_iterations"),
                                    doc="What a predictor believes the work is (workload field; None if none).")
    deadline_s = property(attrgetter("w.deadline_s"), doc="Absolute deadline (workload field; None if none).")
    user = property(attrgetter("w.user"), doc="Tenant label (workload field).")
    group = property(attrgetter("w.group"), doc="Tenant label (workload field).")
    spec = property(attrgetter("w.spec"), doc="What a performance model may need (workload field).")
    gpu_type = property(attrgetter("w.gpu_type"),
                        doc='The GPU type the job must run on ("" = any; placements keep a job on one type).')

    # -- lazily evaluated progress ---------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.status == RUNNING

    def executed_at(self, now: float) -> float:
        """Iterations done by ``now`` (running jobs progress at ``rate`` after their stall)."""
        if self.status != RUNNING:
            return self.executed
        start = self.t_ref if self.t_ref > self.stall_until else self.stall_until
        return self.executed + self.rate * (now - start) if now > start else self.executed

    def attained_at(self, now: float) -> float:
        """Wall-clock seconds this job has held GPUs by ``now``."""
        return self.attained_s + (now - self.t_ref if self.status == RUNNING else 0.0)

    def attained_gpu_at(self, now: float) -> float:
        """GPU-seconds this job has held by ``now`` (GPUs held, not requested)."""
        return self.attained_gpu_s + ((now - self.t_ref) * self.held_gpus if self.status == RUNNING else 0.0)

    def remaining_iterations(self, now: float) -> float:
        return max(0.0, self.w.iterations - self.executed_at(now))

    @property
    def running_since_s(self) -> float | None:
        """When the job took its current placement (a launch or a move), None while it does not run."""
        return self.seg_start[0] if self.seg_start is not None else None

    @property
    def service_anchor(self) -> tuple[float, float, float]:
        """``(t, attained_s, attained_gpu_s)``: the job's attained service, exactly, at time ``t``; while it
        runs it grows from there at one second (``held_gpus`` GPU-seconds) per second. Policies that key on
        attained service without rounding (LAS, Tiresias) read it."""
        return self.t_ref, self.attained_s, self.attained_gpu_s

    @property
    def segments(self) -> Sequence[tuple[float, float, Placement, float]]:
        """The closed segments, ``(start, end, placement, iterations)`` each, in order (an empty tuple before the
        first ends). Built on each read: the job stores them flat, and none for a job that ran once to its
        completion (that segment is ``(first_start_s, completion_s, placement, iterations)``)."""
        s = self._segs
        if s:
            return s.tuples()
        if self.status == DONE and self.placement is not None:
            return [(self.first_start_s, self.completion_s, self.placement, self.executed)]
        return ()

    @segments.setter
    def segments(self, segs: Iterable[tuple[float, float, Placement, float]]) -> None:
        segs = list(segs)
        self._segs = (_Segments(array("d", [x for a, b, _, n in segs for x in (a, b, n)]), [seg[2] for seg in segs])
                      if segs else ())

    @property
    def duration_alone_s(self) -> float:
        """Profiled time alone: iterations x profiled iteration time."""
        return (w := self.w).iterations * w.iteration_time_s

    def sync(self, now: float) -> None:
        """Fold the progress since ``t_ref`` into the stored counters (called before a rate change)."""
        if self.status == RUNNING and now > self.t_ref:
            self.executed = self.executed_at(now)
            dt = now - self.t_ref
            a, g = self.attained_s, self.attained_gpu_s
            self.attained_s = a + dt
            # on one GPU equal service stays equal: the same float object, not a second one (a million jobs)
            self.attained_gpu_s = self.attained_s if g == a and self.held_gpus == 1 else g + dt * self.held_gpus
        self.t_ref = now

    def finish_time(self) -> float:
        """When a running job completes at its current rate."""
        start = self.t_ref if self.t_ref > self.stall_until else self.stall_until
        if self.rate <= 0:
            return math.inf
        return start + max(0.0, self.w.iterations - self.executed) / self.rate

    # -- the lifecycle: the engine's only ways to change a job -------------------------------------------------
    def admit(self, now: float) -> None:
        """Admitted by the admission policy: it waits for GPUs."""
        self.status, self.admitted_s, self.wait_since_s = QUEUED, now, now

    def launch(self, now: float, placement: Placement, stall_s: float) -> None:
        """Starts (or resumes) on ``placement``; no progress for ``stall_s`` seconds. The engine sets the rate
        from the performance model right after (the engine's launch does these lines inline: keep them alike)."""
        self.status, self.placement, self.t_ref, self.held_gpus = RUNNING, placement, now, placement.gpus
        self.stall_until = now + stall_s if stall_s else now  # (no new float without a stall)
        self.launches += 1
        if math.isnan(self.first_start_s):
            self.first_start_s = now
        self.seg_start = (now, self.executed)

    def _end_segment(self, now: float) -> Placement:
        """Close the running job's current segment; returns the placement it held."""
        pl = self.placement
        assert pl is not None and self.seg_start is not None  # a running job always holds GPUs
        t0, e0 = self.seg_start
        done = self.executed - e0 if e0 else self.executed
        if self._segs:
            self._segs.add(t0, now, pl, done)
        else:
            self._segs = _Segments(array("d", (t0, now, done)), [pl])
        self.seg_start = None
        return pl

    def preempt(self, now: float) -> Placement:
        """Suspended at ``now`` (all work kept); returns the placement it gives back."""
        self.sync(now)
        pl = self._end_segment(now)
        self.status, self.placement, self.rate, self.held_gpus = QUEUED, None, 0.0, 0
        self.preemptions += 1
        self.wait_since_s = now
        self.version += 1
        return pl

    def leave(self, now: float) -> Placement:
        """The first half of a move: the segment on the old placement ends; returns that placement."""
        self.sync(now)
        return self._end_segment(now)

    def migrate(self, now: float, placement: Placement, stall_s: float) -> None:
        """The second half of a move: runs on ``placement`` from ``now``, no progress for ``stall_s`` seconds,
        progress kept (after [`leave`][optsched.sim.state.Job.leave])."""
        self.placement, self.held_gpus = placement, placement.gpus
        self.stall_until = now + stall_s
        self.migrations += 1
        self.seg_start = (now, self.executed)

    def complete(self, now: float) -> Placement:
        """Finishes at ``now``; returns the placement it gives back."""
        # sync(now), without its progress (the work is all done: ``executed`` is the job's iterations)
        t_ref = self.t_ref
        if self.status == RUNNING and now > t_ref:
            dt = now - t_ref
            a, g = self.attained_s, self.attained_gpu_s
            self.attained_s = s = a + dt
            self.attained_gpu_s = s if g == a and self.held_gpus == 1 else g + dt * self.held_gpus
        self.t_ref = now
        self.executed = self.w.iterations
        if self._segs:
            pl = self._end_segment(now)
        else:  # its only segment: not stored (``segments`` derives it)
            held = self.placement
            assert held is not None  # a running job always holds GPUs
            pl = held
            self.seg_start = None
        # (its rate is read only while it runs: the shared 0.0, not a float per finished job)
        self.status, self.completion_s, self.held_gpus, self.rate = DONE, now, 0, 0.0
        self.version += 1
        return pl

    def __deepcopy__(self, memo: dict) -> Job:
        # a copy of a simulator copies tens of thousands of jobs: immutable fields (numbers, strings, the
        # placement, the spec, which are read-only by contract) are shared, the segment list copied
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        _copy_shared_fields(self, new)
        # numbers and Placements (an empty tuple is shared)
        new._segs = self._segs.copy() if self._segs else ()
        return new

    def __repr__(self) -> str:
        return f"Job({self.id!r}, arrival={self.arrival_s:g}, gpus={self.gpus}, status={self.status})"


def _field_copier(names: Iterable[str]):
    """``f(src, dst)`` assigning ``dst.<name> = src.<name>`` for every name, as one straight-line function (a
    loop of getattr/setattr takes twice as long, and a simulator copy copies every job)."""
    body = "".join(f"    dst.{n} = src.{n}\n" for n in names)
    ns: dict = {}
    exec(f"def copier(src, dst):\n{body}", ns)  # noqa: S102 - names are our own __slots__
    return ns["copier"]


_copy_shared_fields = _field_copier(n for n in Job.__slots__ if n != "_segs")

# the fields a Job copies from its workload job (the rest it reads through ``w``, the workload job itself; the
# rest of the slots is simulation state)
_WORKLOAD_FIELDS = ("id", "gpus")


def _jobs_maker():
    """``make(workload_jobs)``: one fresh [`Job`][optsched.sim.state.Job] per workload job (``index`` = its
    position), the same as ``Job(w.id, w.arrival_s, ..., index=i, ...)`` one by one, as one straight-line loop
    body (a simulator builds every job of its workload at each reset). A workload job's fields are already
    plain floats and ints (WorkloadJob converts them); the state fields start as a fresh Job's (read from one)."""
    tmpl = Job("template", 0.0, 1, 1.0, 1.0)
    state = [n for n in Job.__slots__ if n not in _WORKLOAD_FIELDS and n not in ("index", "wait_since_s", "w")]
    body = "".join(f"        j.{n} = w.{n}\n" for n in _WORKLOAD_FIELDS) + "        j.w = w\n"
    body += "".join(f"        j.{n} = T_{n}\n" for n in state)
    ns: dict = {"new": object.__new__, "Job": Job, **{f"T_{n}": getattr(tmpl, n) for n in state}}
    src = ("def make(wjobs):\n    out = []\n    add = out.append\n    for i, w in enumerate(wjobs):\n"
           "        j = new(Job)\n" + body + "        j.index = i\n        j.wait_since_s = w.arrival_s\n"
           "        add(j)\n    return out\n")
    exec(src, ns)  # noqa: S102 - names are our own __slots__
    return ns["make"]


jobs_from_workload = _jobs_maker()


class FinishedJobs(Mapping[str, Job]):
    """The finished jobs, by id, in order of completion: a read-only mapping over a list (a dict of a million
    finished jobs took about 40 bytes each; the list takes 8, and the id index is built only if a lookup asks).

    ```pycon
    >>> f = FinishedJobs(); f.add(Job("b", 0, 1, 1, 1.0)); f.add(Job("a", 0, 1, 1, 1.0))
    >>> list(f), f["a"].id, "c" in f, len(f)
    (['b', 'a'], 'a', False, 2)

    ```
    """

    __slots__ = ("_jobs", "_index", "add")

    def __init__(self, jobs: Iterable[Job] = ()) -> None:
        self._jobs: list[Job] = list(jobs)
        self._index: dict[str, Job] = {}
        self.add = self._jobs.append  # the engine's hot path: one append per completion

    def __getitem__(self, job_id: str) -> Job:
        index, jobs = self._index, self._jobs
        if len(index) < len(jobs):  # index the jobs finished since the last lookup
            for j in jobs[len(index):]:
                index[j.id] = j
        return index[job_id]

    def __iter__(self) -> Iterator[str]:
        return (j.id for j in self._jobs)

    def __len__(self) -> int:
        return len(self._jobs)

    def values(self):  # the jobs in order of completion (a list, no index needed)
        return list(self._jobs)

    def copy(self) -> FinishedJobs:
        return FinishedJobs(self._jobs)

    def __deepcopy__(self, memo: dict) -> FinishedJobs:
        return self.copy()  # finished jobs are never written again: shared, like a simulator copy shares them


class JobState:
    """Blox's JobState: ``active`` (admitted, not finished) and ``finished`` jobs, keyed by job id
    (``finished`` in order of completion, read-only)."""

    def __init__(self) -> None:
        self.active: dict[str, Job] = {}
        self.finished = FinishedJobs()

    def add(self, job: Job) -> None:
        self.active[job.id] = job

    def finish(self, job: Job) -> None:
        del self.active[job.id]
        self.finished.add(job)

    def running(self) -> list[Job]:
        return [j for j in self.active.values() if j.status == RUNNING]

    def queued(self) -> list[Job]:
        return [j for j in self.active.values() if j.status == QUEUED]

    def __iter__(self) -> Iterator[Job]:
        return iter(self.active.values())

    def __len__(self) -> int:
        return len(self.active)


def moved_gpus(old: Placement, new: Placement, n_servers: int) -> dict[int, int] | None:
    """The GPUs a job moved from ``old`` to ``new`` takes on each server whose count changes (negative: gives
    back), or None when ``new``'s servers are not ascending, distinct and below ``n_servers``, a count of it is not
    positive, or ``old`` names a server twice (a move to check the plain way, which names the fault).

    ```pycon
    >>> moved_gpus(Placement.of({0: 4, 1: 2}), Placement.of({0: 4, 2: 1}), 3), moved_gpus(Placement.of({0: 1}),
    ...     Placement((2, 1), (1, 1)), 3)
    ({2: 1, 1: -2}, None)

    ```
    """
    held = dict(zip(old.servers, old.counts))
    if len(held) != len(old.servers):
        return None
    out: dict[int, int] = {}
    last = -1
    for s, n in zip(new.servers, new.counts):
        if s <= last or s >= n_servers or n <= 0:
            return None
        last = s
        d = n - held.pop(s, 0)
        if d:
            out[s] = d
    for s, n in held.items():  # the servers it leaves
        out[s] = -n
    return out


class ClusterState:
    """Free GPUs per server (numpy), jobs per server, GPU types, and the GPU data frame of Blox on demand.

    Servers are addressed by index (``cluster.servers[i]``); ``server_ids`` maps back to names. GPU types:
    ``types`` (names, in order of first appearance), ``type_of`` (numpy: type index of every server), ``typed``
    (more than one type), ``type_capacity`` (GPUs per type); [`allowed`][optsched.sim.state.ClusterState.allowed] is the
    server mask a job may use.

    ```pycon
    >>> from optsched.cluster import parse_cluster
    >>> cs = ClusterState(parse_cluster("V100:1x4,K80:2x2"))
    >>> cs.types, cs.type_of.tolist(), cs.type_capacity.tolist(), cs.typed
    (('V100', 'K80'), [0, 1, 1], [4, 4], True)
    >>> cs.allowed(Job("a", 0, 2, 1, 1.0, gpu_type="K80")).tolist(), cs.type_name(Placement.of({2: 1}))
    ([False, True, True], 'K80')

    ```
    """

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.server_ids: tuple[str, ...] = cluster.server_ids
        self.capacity = np.array([s.gpus for s in cluster.servers], dtype=np.int64)
        self.free = self.capacity.copy()
        # the same counts as Python ints: what occupy and release read (a numpy element read makes a numpy scalar,
        # about ten times the cost of a list's); ``free`` stays the array every policy reads, written alongside
        self._fl: list[int] = self.free.tolist()
        self.total_gpus = int(self.capacity.sum())
        self.max_capacity = int(self.capacity.max())
        self.uniform = bool((self.capacity == self.max_capacity).all())  # every server has max_capacity GPUs
        self.busy_gpus = 0
        self.jobs_on: list[dict[str, int]] = [dict() for _ in cluster.servers]  # server -> {job id: gpus}
        self.types: tuple[str, ...] = cluster.gpu_types
        index = {t: k for k, t in enumerate(self.types)}
        self.type_of = np.array([index[s.gpu_type] for s in cluster.servers], dtype=np.int64)
        self.type_capacity = np.bincount(self.type_of, weights=self.capacity, minlength=len(self.types)).astype(
            np.int64)
        self.typed = len(self.types) > 1
        self._masks = [self.type_of == k for k in range(len(self.types))]

    def __deepcopy__(self, memo: dict) -> ClusterState:
        # what changes is copied (free GPUs, jobs per server, the busy count); the rest (the cluster, capacities,
        # GPU types, type masks) is fixed for the life of the state and shared
        new = type(self).__new__(type(self))  # (copy.copy's result, without its reduce protocol: half the cost)
        new.__dict__.update(self.__dict__)
        memo[id(self)] = new
        new.free = self.free.copy()
        new._fl = self._fl[:]
        new.jobs_on = [dict(d) for d in self.jobs_on]
        return new

    def type_index(self, name: str) -> int:
        """Index of GPU type ``name`` in [`types`][optsched.sim.state.ClusterState.types] (-1 if the cluster has
        none)."""
        try:
            return self.types.index(name)
        except ValueError:
            return -1

    def allowed(self, job: Any) -> np.ndarray:
        """Boolean mask of the servers whose GPU type ``job`` may use (all of them unless it names a type)."""
        t = getattr(job, "gpu_type", "")
        if not t:
            return np.ones(len(self.capacity), dtype=bool)
        k = self.type_index(t)
        return self._masks[k] if k >= 0 else np.zeros(len(self.capacity), dtype=bool)

    def type_mask(self, k: int) -> np.ndarray:
        """Boolean mask of the servers of type index ``k``."""
        return self._masks[k]

    def type_name(self, placement: PlacementLike) -> str:
        """The GPU type of a placement (of its first server; placements here never mix types)."""
        return self.types[int(self.type_of[placement.servers[0]])]

    def free_by_type(self, free: np.ndarray | None = None) -> np.ndarray:
        """Free GPUs per type (of ``free``, default the current free GPUs)."""
        f = self.free if free is None else free
        return np.bincount(self.type_of, weights=f, minlength=len(self.types)).astype(np.int64)

    def fits(self, placement: Placement) -> bool:
        return all(0 <= s < len(self.free) and self.free[s] >= n for s, n in zip(placement.servers, placement.counts))

    def occupy(self, job_id: str, placement: Placement) -> None:
        fl = self._fl
        n_servers = len(fl)
        servers = placement.servers
        if len(servers) == 1:  # most launches: one server, no pairs to build
            s, n = servers[0], placement.counts[0]
            if not 0 <= s < n_servers:
                raise ScheduleError(f"unknown server index {s}", job=job_id)
            f = fl[s]
            if n <= 0 or f < n:
                raise ScheduleError(f"{n} GPUs on server {self.server_ids[s]!r}, which has {f} free", job=job_id)
            fl[s] = self.free[s] = f - n
            self.jobs_on[s][job_id] = n
            self.busy_gpus += n
            return
        pairs = tuple(zip(servers, placement.counts))
        for s, n in pairs:
            if not 0 <= s < n_servers:
                raise ScheduleError(f"unknown server index {s}", job=job_id)
            if n <= 0 or fl[s] < n:
                raise ScheduleError(f"{n} GPUs on server {self.server_ids[s]!r}, which has {fl[s]} free",
                                    job=job_id)
        free, jobs_on = self.free, self.jobs_on
        for s, n in pairs:
            fl[s] = free[s] = fl[s] - n
            jobs_on[s][job_id] = n
        self.busy_gpus += placement.gpus

    def release(self, job_id: str, placement: Placement) -> None:
        fl, jobs_on = self._fl, self.jobs_on
        servers = placement.servers
        if len(servers) == 1:  # most completions: one server
            s, n = servers[0], placement.counts[0]
            fl[s] = self.free[s] = fl[s] + n
            del jobs_on[s][job_id]
            self.busy_gpus -= n
            return
        free = self.free
        for s, n in zip(servers, placement.counts):
            fl[s] = free[s] = fl[s] + n
            del jobs_on[s][job_id]
        self.busy_gpus -= placement.gpus

    def shift(self, moves: Sequence[tuple[str, Placement, Placement]],
              deltas: Sequence[dict[int, int] | None] | None = None) -> bool:
        """Move jobs: ``release(job_id, old)`` for every ``(job_id, old, new)`` of ``moves``, then
        ``occupy(job_id, new)`` for each in order (a decision's moves), writing the free GPUs only on the servers
        whose count changes: the same state after, down to the order of every server's jobs (the movers on a
        server listed last, in the order of ``moves``, as releases then occupies leave them). True when done;
        False, with nothing written, when a placement's servers are not ascending and distinct or the moves do
        not fit (the caller then releases and occupies, which names the fault). ``deltas`` (optional, one per
        move): ``moved_gpus(old, new, n_servers)`` of that move when the caller already has it (the decision
        builder's), None where not: it is then worked out here.

        ```pycon
        >>> from optsched.cluster import Cluster
        >>> cs = ClusterState(Cluster.homogeneous(3, 4)); cs.occupy("a", Placement.of({0: 4, 1: 2}))
        >>> cs.shift([("a", Placement.of({0: 4, 1: 2}), Placement.of({0: 4, 2: 1}))]), cs.free.tolist(), cs.busy_gpus
        (True, [0, 4, 3], 5)

        ```
        """
        if type(self) is not ClusterState:  # a subclass's release and occupy may keep more: they run
            return False
        fl, jobs_on = self._fl, self.jobs_on
        n_servers = len(fl)
        net: dict[int, int] = {}  # server -> GPUs the moves take there (negative: give back), all movers together
        plans = []
        for k, (job_id, old, new) in enumerate(moves):  # check first: nothing is written unless all fit
            delta = deltas[k] if deltas is not None else None
            if delta is None:
                delta = moved_gpus(old, new, n_servers)
            if delta is None:
                return False
            if net:
                for s, d in delta.items():
                    net[s] = net.get(s, 0) + d
            else:
                net.update(delta)  # (the first mover's, copied in C)
            held = set(old.servers)
            plans.append((job_id, new, held, held.difference(new.servers)))  # (the servers it leaves)
        for s, d in net.items():
            if d > 0 and fl[s] < d:
                return False
        for job_id, _, _, gone in plans:
            for s in gone:
                del jobs_on[s][job_id]
        for job_id, new, held, _ in plans:  # each mover listed last on its servers, in order
            for s, n in zip(new.servers, new.counts):
                on = jobs_on[s]
                if s in held:
                    if len(on) == 1:  # alone there (its own entry): already last, only its count is written
                        on[job_id] = n
                        continue
                    del on[job_id]
                on[job_id] = n
        free = self.free
        busy = 0
        changed = []
        for s, d in net.items():
            if d:
                fl[s] -= d
                busy += d
                changed.append(s)
        if len(changed) > 8:  # many servers: one numpy write, not one numpy scalar write each
            free[changed] = list(map(fl.__getitem__, changed))
        else:
            for s in changed:
                free[s] = fl[s]
        self.busy_gpus += busy
        return True

    def colocated(self, placement: PlacementLike, exclude: str | None = None) -> set[str]:
        """Ids of the jobs sharing at least one server with ``placement``."""
        out: set[str] = set()
        for s in placement.servers:
            out.update(self.jobs_on[s])
        out.discard(exclude)
        return out

    def gpu_frame(self):
        """Blox's ClusterState data frame: one row per GPU (Node_ID, GPU_ID, local_GPU_ID, GPU_type, IN_USE,
        JOB_IDS)."""
        import pandas as pd

        rows, gid = [], 0
        for s, cap in enumerate(self.capacity):
            owners = [jid for jid, n in self.jobs_on[s].items() for _ in range(n)]
            for local in range(int(cap)):
                owner = owners[local] if local < len(owners) else None
                rows.append((self.server_ids[s], gid, local, self.types[int(self.type_of[s])], owner is not None,
                             owner))
                gid += 1
        return pd.DataFrame(rows, columns=["Node_ID", "GPU_ID", "local_GPU_ID", "GPU_type", "IN_USE", "JOB_IDS"])

    def server_names(self, placement: Placement) -> dict[str, int]:
        return {self.server_ids[s]: n for s, n in zip(placement.servers, placement.counts)}


@dataclass
class SimView:
    """What every policy sees: the time, the cluster, the jobs, the performance model, the round length (None in
    event mode), the run's admission policy and free-form extras (``rng``, ``seed``)."""

    now: float
    cluster: ClusterState
    jobs: JobState
    perf: Any
    round_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    admission: Any = None  # the run's admission policy, read-only (a scheduler may read what it decided)

    def active(self) -> Iterable[Job]:
        return self.jobs.active.values()
