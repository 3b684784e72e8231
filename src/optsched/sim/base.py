"""Blox's scheduler abstractions as small base classes (digest 002, Table 6).

=====================  =========================================  ============================================
abstraction            input                                      output
=====================  =========================================  ============================================
AdmissionPolicy        new jobs, view                             accepted jobs (it may hold the rest)
SchedulingPolicy       view                                       priority list (highest priority first)
PlacementPolicy        priority list, view                        Decision(launch {job: Placement}, preempt)
SchedulerPlacer        view                                       Decision (combined scheduling + placement)
LaunchMechanism        job, placement / preemption, time          the stall before progress (restore overhead)
MetricCollector        view                                       -- (records what it wants)
=====================  =========================================  ============================================

The engine only talks to a [`SchedulerPlacer`][optsched.sim.base.SchedulerPlacer]; a scheduling policy plus a placement
policy are glued
into one by [`Composed`][optsched.sim.base.Composed]. A combined module (Pollux-style, or A-SRPT with its own pending
queue and its
own wake-up times) subclasses [`SchedulerPlacer`][optsched.sim.base.SchedulerPlacer] directly and may use the hooks
``on_admit``,
``on_completion`` and ``next_wakeup``.

```pycon
>>> d = Decision(); d.launch, d.preempt, d.migrate
({}, [], {})

```
"""

from __future__ import annotations

import bisect
import copy
import heapq
import math
import operator
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..errors import InstanceError, ScheduleError
from ..params import Params, plain
from .state import QUEUED, RUNNING, Job, Placement, SimView, moved_gpus

# Blox's anti-starvation guard: a job that has not run for this long gets job_priority 1 (digest 002, [R])
STARVATION_S = 3600.0 * 1000


@dataclass
class Decision:
    """What a scheduling round decides: jobs to start (job -> placement), jobs to suspend, and running jobs to
    move (job -> new placement).

    The engine applies preemptions first, then migrations (every migrating job releases its GPUs before any
    takes its new ones, so two jobs may swap), then launches. A migration keeps the job running and its
    progress, stalls it ``LaunchMechanism.migration_s`` and counts in ``migrations``, not in ``preemptions``
    nor ``launches``; a job may not be both migrated and preempted or launched. A job both preempted and
    launched in one decision is a *restart* (suspend + resume, as Blox moves jobs): one preemption, one launch,
    the resume stall.

    ```pycon
    >>> d = Decision(); d.launch, d.preempt, d.migrate
    ({}, [], {})

    ```
    """

    launch: dict[Job, Placement] = field(default_factory=dict)
    preempt: list[Job] = field(default_factory=list)
    migrate: dict[Job, Placement] = field(default_factory=dict)
    #: what [`DecisionBuilder`][optsched.sim.base.DecisionBuilder] already worked out for a move: job -> (old
    #: placement, new placement, [`moved_gpus`][optsched.sim.state.moved_gpus] of them). The engine uses an entry
    #: only when both placements are the very objects it moves the job from and to, else it works the move out
    #: again (a policy may edit ``migrate`` after building); not a constructor argument, not compared, not shown
    moved: dict[Job, tuple[Placement, Placement, dict[int, int]]] = field(default_factory=dict, init=False,
                                                                           repr=False, compare=False)


#: a placement on more servers than this is checked and taken (given back) by ``DecisionBuilder`` in a few numpy
#: calls rather than a loop of element reads and writes: about twice as fast at 250 servers, no faster at 50
#: (elastic deadline jobs span hundreds of servers on large clusters)
WIDE = 64


def _wide_index(free: np.ndarray, servers: Sequence[int]) -> np.ndarray | None:
    """A placement's servers as an index array into ``free`` when they are in range, ascending and distinct (a
    placement's, built by ``Placement.of``), so that one numpy read or write serves them all; else None (the
    caller then loops, which names a fault).

    ```pycon
    >>> _wide_index(np.array([1, 0, 2]), (0, 2)).tolist(), _wide_index(np.array([1, 0, 2]), (2, 0))
    ([0, 2], None)

    ```
    """
    if not (servers[0] >= 0 and servers[-1] < len(free)):
        return None
    idx = np.array(servers)
    return idx if (idx[1:] > idx[:-1]).all() else None


def check_placement(job: Job, placement: Placement, elastic: bool) -> None:
    """Raise [`ScheduleError`][optsched.errors.ScheduleError] unless ``placement`` is a
    [`Placement`][optsched.sim.state.Placement] of at least one GPU, of exactly the job's GPUs when the policy
    is not elastic: one rule for a decision being built and for the engine applying it."""
    if not isinstance(placement, Placement) or placement.gpus < 1:
        raise ScheduleError(f"must be a Placement holding at least one GPU, got {placement!r}", job=job.id)
    if not elastic and placement.gpus != job.gpus:
        raise ScheduleError(f"placement has {placement.gpus} GPUs, the job needs {job.gpus}", job=job.id)


class DecisionBuilder:
    """A decision under construction at one decision point, the way every policy writes one: it knows the free
    GPUs per server (``free``, a copy of the cluster's, and ``free_total``) and checks each preemption, move and
    launch as it is added, in the engine's order (what a preemption or a move frees can be launched on), raising
    [`ScheduleError`][optsched.errors.ScheduleError] naming the job at the faulty call.
    [`build`][optsched.sim.base.DecisionBuilder.build] returns the
    [`Decision`][optsched.sim.base.Decision]. ``elastic``: launches may hold another GPU count than the job requests.

    ```pycon
    >>> from optsched.cluster import Cluster
    >>> from optsched.sim.state import ClusterState, JobState, SimView, Job, QUEUED
    >>> a, b = Job("a", 0, 2, 10, 1.0), Job("b", 0, 2, 10, 1.0)
    >>> a.status = b.status = QUEUED
    >>> jobs = JobState(); jobs.add(a); jobs.add(b)
    >>> d = DecisionBuilder(SimView(0.0, ClusterState(Cluster.homogeneous(1, 3)), jobs, None))
    >>> d.launch(a, Placement.of({0: 2})); d.free.tolist(), d.free_total
    ([1], 1)
    >>> d.launch(b, Placement.of({0: 2}))
    Traceback (most recent call last):
    ...
    optsched.errors.ScheduleError: job 'b': 2 GPUs on server 0, which has 1 free

    ```
    """

    __slots__ = ("view", "free", "free_total", "elastic", "decision", "_preempted")

    def __init__(self, view: SimView, elastic: bool = False):
        self.view, self.elastic = view, bool(elastic)
        cs = view.cluster
        self.free = cs.free.copy()
        self.free_total = cs.total_gpus - cs.busy_gpus  # (the sum of free, kept by the cluster state)
        self.decision = Decision()
        self._preempted: set[str] = set()

    def fits(self, placement: Placement) -> bool:
        """Whether ``placement`` fits the GPUs free now (in this decision)."""
        free = self.free
        return all(0 <= s < len(free) and free[s] >= n for s, n in zip(placement.servers, placement.counts))

    def _take(self, job: Job, placement: Placement) -> None:
        free = self.free
        servers = placement.servers
        # many servers: checked and taken in a few numpy calls, not a loop of element reads
        idx = _wide_index(free, servers) if len(servers) > WIDE else None
        if idx is not None:
            cnt, held = np.array(placement.counts), free[idx]
            if cnt.min() > 0 and (held >= cnt).all():
                free[idx] = held - cnt
                self.free_total -= placement.gpus
                return
            # (not sorted and distinct, or a fault: the loop below, which names it)
        for s, n in zip(servers, placement.counts):
            if not 0 <= s < len(free):
                raise ScheduleError(f"unknown server index {s}", job=job.id)
            if n <= 0 or free[s] < n:
                raise ScheduleError(f"{n} GPUs on server {s}, which has {int(free[s])} free", job=job.id)
        for s, n in zip(placement.servers, placement.counts):
            free[s] -= n
        self.free_total -= placement.gpus

    def _give(self, placement: Placement) -> None:
        servers = placement.servers
        idx = _wide_index(self.free, servers) if len(servers) > WIDE else None
        if idx is not None:
            self.free[idx] += np.array(placement.counts)
        else:
            for s, n in zip(servers, placement.counts):
                self.free[s] += n
        self.free_total += placement.gpus

    def preempt(self, job: Job) -> None:
        """Suspend a running job (its GPUs are free for the rest of this decision)."""
        if job.status != RUNNING or job.id in self._preempted or job in self.decision.migrate:
            raise ScheduleError("preemption of a job that is not running (or already preempted or moved in "
                                "this decision)", job=job.id)
        assert job.placement is not None  # a running job holds GPUs
        self._preempted.add(job.id)
        self.decision.preempt.append(job)
        self._give(job.placement)

    def preempted(self, job: Job) -> None:
        """Record the preemption of a running job whose GPUs the caller has already added to
        [`free`][optsched.sim.base.DecisionBuilder.free] (a
        placement walk's dry run)."""
        self._preempted.add(job.id)
        self.decision.preempt.append(job)

    def migrate(self, job: Job, placement: Placement, *, _moved: dict[int, int] | None = None) -> None:
        """Move a running job to ``placement`` (its old GPUs are free first, so it may stay partly in place).
        ``_moved`` is internal, not for policies: the GPUs the move takes per server whose count changes
        (negative: gives back), when the caller built ``placement`` from the job's and kept them (the deadline
        family's ``grow`` and ``shrink``, checked against [`moved_gpus`][optsched.sim.state.moved_gpus] by
        tests): taken as they are, in place of ``moved_gpus``' walk over both placements, so they must be exactly
        what it returns; only the fit is still checked."""
        moved = _moved
        if moved is None:
            self.move({job: placement})
            return
        if job.status != RUNNING or job.id in self._preempted or job in self.decision.migrate:
            raise ScheduleError("migration of a job that is not running (or already preempted or moved in "
                                "this decision)", job=job.id)
        check_placement(job, placement, self.elastic)
        old = job.placement
        assert old is not None  # a running job holds GPUs
        delta = self._shift(old, placement, moved)
        if delta is None:  # it does not fit: the plain path names the fault
            self.move({job: placement})
            return
        self.decision.migrate[job] = placement
        self.decision.moved[job] = (old, placement, delta)

    def move(self, moves: dict[Job, Placement]) -> None:
        """Move several running jobs at once, as the engine does: every mover gives its GPUs back before any
        takes its new ones (two jobs may swap)."""
        for job, placement in moves.items():
            if job.status != RUNNING or job.id in self._preempted or job in self.decision.migrate:
                raise ScheduleError("migration of a job that is not running (or already preempted or moved in "
                                    "this decision)", job=job.id)
            check_placement(job, placement, self.elastic)
        if len(moves) == 1:  # one mover (what ``migrate`` adds): only the servers whose count changes are touched
            for job, placement in moves.items():
                assert job.placement is not None  # a running job holds GPUs
                old = job.placement
                delta = self._shift(old, placement)
                if delta is not None:
                    self.decision.migrate[job] = placement
                    self.decision.moved[job] = (old, placement, delta)  # the engine's shift reuses it
                    return
        for job in moves:
            assert job.placement is not None  # a running job holds GPUs
            self._give(job.placement)
        for job, placement in moves.items():
            self._take(job, placement)
            self.decision.migrate[job] = placement

    def _shift(self, old: Placement, new: Placement, delta: dict[int, int] | None = None) -> dict[int, int] | None:
        """``_give(old)`` then ``_take(new)``, writing only the servers whose count changes (the same free GPUs
        after; a job resized on hundreds of servers changes a few): when done, the GPUs taken per server
        ([`moved_gpus`][optsched.sim.state.moved_gpus], which the engine's shift reuses); None (nothing written)
        when ``new``'s servers are not ascending and distinct or it does not fit (the caller then takes the plain
        path, which names the fault). ``delta``: ``moved_gpus(old, new, ...)`` when the caller has it."""
        free = self.free
        if delta is None:
            delta = moved_gpus(old, new, len(free))
        if delta is None:
            return None
        if len(delta) > 16:  # many servers: checked and written in a few numpy calls (the same test and values)
            idx = np.fromiter(delta, np.int64, len(delta))
            d_a = np.fromiter(delta.values(), np.int64, len(delta))
            held = free[idx]
            if (held < d_a).any():  # (a server given back to, d < 0, always passes: free GPUs are not negative)
                return None
            free[idx] = held - d_a
        else:
            for s, d in delta.items():  # GPUs added on a server must be free now (what the job gives back is elsewhere)
                if d > 0 and free[s] < d:
                    return None
            for s, d in delta.items():
                free[s] -= d
        self.free_total += old.gpus - new.gpus
        return delta

    def launch(self, job: Job, placement: Placement) -> None:
        """Start a waiting job (or restart one preempted in this decision) on ``placement``; the engine checks
        every decision again when it applies it."""
        if not (job.status == QUEUED or job.id in self._preempted) or job in self.decision.launch:
            raise ScheduleError(f"launch of a job that is not waiting (status {job.status})", job=job.id)
        check_placement(job, placement, self.elastic)
        self._take(job, placement)
        self.decision.launch[job] = placement

    def build(self) -> Decision:
        """The decision (launches in the order they were added)."""
        return self.decision


class AdmissionPolicy(Params):
    """Decides which new jobs enter the system; it may hold jobs and release them later (its own queue).
    Parameters are declared once, in ``__init__`` ([`Params`][optsched.params.Params]: ``describe``, ``clone`` and
    the ``reset`` the engine calls before every run derive from them)."""

    name = "admission"
    #: True: ``admit`` returns the new jobs as they are and holds none (the engine then admits them without the
    #: call). A subclass that defines its own ``admit`` without declaring this gets False.
    admits_all = False

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if "admits_all" not in cls.__dict__ and "admit" in cls.__dict__:
            cls.admits_all = False

    def admit(self, new_jobs: list[Job], view: SimView) -> list[Job]:
        raise NotImplementedError

    @property
    def holding(self) -> int:
        """Jobs held back, not yet admitted."""
        return 0


#: how a scheduling policy's keys may change between events, the one speed promise it declares
#: ([`SchedulingPolicy.keys_change`][optsched.sim.base.SchedulingPolicy.keys_change])
KEYS_CHANGE = ("never", "running", "running-down", "at-expiry", "relative", "anytime")
FROZEN_KEYS = ("at-expiry", "relative")     # the key given in three pieces (queued_key, running_key, rank_at)
RUNNING_KEYS = ("running", "running-down")  # only running jobs' keys drift


class SchedulingPolicy(Params):
    """Orders the active jobs (queued and running), highest priority first.

    Subclasses give a sort ``key(job, now)``; the base adds Blox's anti-starvation bump (a job that has waited
    ``starvation_s`` since it last ran gets priority 1 for good, the others 999, and priority sorts first) and
    breaks ties by arrival then workload order.

    A policy declares once how its keys may change between events (arrival, completion, launch, preemption), in
    ``keys_change``; [`Composed`][optsched.sim.base.Composed] takes the cheapest path that promise allows, and
    every path gives the decisions of re-keying everything at every decision (``Composed(naive=True)``, which the
    tests compare with):

    * ``"never"``: no key changes without an event (FIFO, EDF, paper 001's fixed predicted orders): the priority
      list is kept sorted incrementally and no decision is repeated without an event;
    * ``"running"``: a waiting job's key is constant, running jobs' keys drift (LAS on GPU-seconds): only the
      running jobs (at most one per GPU) are re-keyed and re-sorted at a decision;
    * ``"running-down"``: as ``"running"``, and running jobs' keys only decrease (SRTF): a queued job can only lose
      preemption victims by waiting, so no decision changes without an event;
    * ``"at-expiry"`` and ``"relative"``: the key is given in three pieces, so that running jobs are never re-keyed
      wholesale: [`queued_key`][optsched.sim.base.SchedulingPolicy.queued_key] (a waiting job's, constant while it
      waits), [`running_key`][optsched.sim.base.SchedulingPolicy.running_key] (a running job's key and the time up
      to which it stays valid, read from its stored state) and [`rank_at`][optsched.sim.base.SchedulingPolicy.rank_at]
      (a waiting job's key in the running keys' terms at ``now``). ``key(job, now)`` must be
      ``running_key(job, now)[0]`` for a running job and ``rank_at(queued_key(job), now)`` for a waiting one.
      ``"at-expiry"``: ``rank_at`` is the identity and keys change only when a running key expires (Tiresias:
      a queue threshold crossed); ``"relative"``: waiting keys are compared with running ones relative to ``now``
      (LAS on wall-clock service);
    * ``"anytime"`` (the default): any key may change at any time; everything is re-keyed at every decision.

    A subclass that defines its own ``key`` (or another of ``key_methods``) without declaring ``keys_change`` gets
    ``"anytime"`` (an inherited promise describes the parent's key, not the new one).
    """

    name = "scheduling"
    family = "blox"  # the workload kind and metrics it was written for (optsched.sim.registry.FAMILIES)
    keys_change = "anytime"
    #: True: ``key(job, now)`` is the same whenever it is read (FIFO's arrival time, a deadline), so a launched
    #: job's queued entry serves as its running entry. A subclass that redefines a key method without declaring it
    #: gets False
    fixed_key = False
    # the methods that define the key: a subclass redefining one without declaring keys_change gets "anytime"
    key_methods: tuple[str, ...] = ("key",)

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if "keys_change" not in cls.__dict__ and any(m in cls.__dict__ for m in cls.key_methods):
            cls.keys_change = "anytime"
        if "fixed_key" not in cls.__dict__ and any(m in cls.__dict__ for m in cls.key_methods):
            cls.fixed_key = False
        if "keys_at" not in cls.__dict__ and "key" in cls.__dict__:  # a parent's keys_at computes the parent's key
            cls.keys_at = SchedulingPolicy.keys_at  # type: ignore[method-assign]
        if cls.keys_change not in KEYS_CHANGE:
            raise TypeError(f"{cls.__name__}.keys_change must be one of {KEYS_CHANGE}, got {cls.keys_change!r}")

    def __init__(self, starvation_s: float = STARVATION_S):
        self.starvation_s = float(starvation_s)

    def key(self, job: Job, now: float):
        raise NotImplementedError

    def keys_at(self, jobs: Sequence[Job], now: float) -> list:
        """``[key(job, now) for job in jobs]``: the keys of a batch of admissions, in one call (a subclass may
        compute them at once; one that redefines ``key`` alone gets this default back)."""
        key = self.key
        return [key(j, now) for j in jobs]

    def queued_key(self, job: Job):
        """``keys_change`` ``"at-expiry"`` / ``"relative"``: the key of a waiting job (constant while it waits)."""
        raise NotImplementedError

    def running_key(self, job: Job, now: float) -> tuple[Any, float]:
        """``keys_change`` ``"at-expiry"`` / ``"relative"``: ``(key, until)``: a running job's key at ``now``, the
        same at every time before ``until`` (``math.inf``: while it runs) as long as its stored state is
        unchanged."""
        raise NotImplementedError

    def rank_at(self, key, now: float):
        """``keys_change == "relative"``: a waiting job's
        [`queued_key`][optsched.sim.base.SchedulingPolicy.queued_key] compared with running keys at ``now``."""
        return key


class PlacementPolicy(Params):
    """Walks the priority list and decides launches and preemptions (Blox's generic ``place()``, [R]).

    For each job not running, in priority order: find GPUs among the free ones
    ([`find`][optsched.sim.base.PlacementPolicy.find]); if none and
    ``preemptive``, suspend running jobs of *lower* priority from the lowest-priority end until the job fits
    (a dry run first: if even all of them would not make room, nobody is suspended); if it still does not
    fit, stop (``backfill=False``, Blox) or go on to the next job (``backfill=True``).

    ``fit_by_size = True`` promises that whether [`find`][optsched.sim.base.PlacementPolicy.find] succeeds depends only
    on the job's GPU count and the
    free GPUs, monotonically (if g GPUs do not fit, more do not either): the walk then stops asking for jobs at
    least as large as one that failed (a large speed-up with backfilling).
    """

    name = "placement"
    fit_by_size = False
    elastic = False  # True: find() may give a job another GPU count than it requests (the composition is elastic)

    def __init__(self, preemptive: bool = True, backfill: bool = False):
        self.preemptive, self.backfill = bool(preemptive), bool(backfill)

    def find(self, job: Job, free: np.ndarray, view: SimView) -> Placement | None:
        raise NotImplementedError

    def walk_finder(self, free: np.ndarray, view: SimView) -> Any:
        """Optional speed-up of [`find`][optsched.sim.base.PlacementPolicy.find] for one walk: an object whose
        ``find(job)`` returns what ``self.find(job, free, view)`` would, kept in step by the walk, which takes each
        launch off ``free`` through its ``take(placement)`` (and asks for a new one when ``free`` is replaced).
        Default None: the walk calls ``find``. [`Consolidated`][optsched.sim.policies.Consolidated] gives a
        [`FreeIndex`][optsched.sim.fitting.FreeIndex]. With ``fit_by_size``, a finder may also have ``claim(g)``:
        its ``find`` of a job of ``g`` GPUs and, if found, ``take`` of it, at once (the walk takes every placement
        its finder gives)."""
        return None

    def fits_after(self, job: Job, trial: np.ndarray, servers: Sequence[int], view: SimView) -> bool:
        """During a dry run: False only if [`find`][optsched.sim.base.PlacementPolicy.find] of ``job`` on ``trial``
        would fail, given that it would
        have failed before GPUs were added to ``trial`` on ``servers`` (a victim's). The walk then skips that
        call. Default: True (always ask [`find`][optsched.sim.base.PlacementPolicy.find])."""
        return True

    def place(self, order: Sequence[Job], view: SimView) -> Decision:
        """Blox's ``place(job_priority_list, ...)``: ``order`` holds the active jobs, highest priority first (the
        walk of [`place_ranked`][optsched.sim.base.PlacementPolicy.place_ranked] on it, which is what a subclass
        overrides to change the walk)."""
        queued = [(i, j) for i, j in enumerate(order) if j.status != RUNNING]
        running = [(i, j) for i, j in enumerate(order) if j.status == RUNNING]
        return self.place_ranked(queued, running, view)

    def place_ranked(self, queued: Iterable[tuple[Any, Job]], running: Sequence[tuple[Any, Job]],
                     view: SimView, to_rank: Callable[[Any], Any] | None = None) -> Decision:
        """The same walk over the priority list split in two: ``queued`` and ``running`` are ``(rank, job)``
        pairs in increasing rank (rank = position in the priority list, or any key ordered the same way).
        The victims of a queued job of rank r are the running jobs of rank > r, lowest priority first.
        ``to_rank`` (optional) maps a queued pair's first item to a rank comparable with the running ranks,
        monotonically (it is called only for the jobs that need victims). Subclasses that change the walk
        override this; most only write [`find`][optsched.sim.base.PlacementPolicy.find]. A walk launches queued
        jobs and preempts running ones only as their victims: with nothing queued it decides nothing (the
        priority list relies on it)."""
        # the walk keeps its free GPUs in locals (its hot path) and hands them to a decision builder at the end;
        # its launches and preemptions are right by construction, and the engine checks them again at apply
        b = DecisionBuilder(view)
        free, free_total = b.free, b.free_total
        decision = b.decision
        n_run = len(running)
        # the victims taken so far are running[end:] (a dry run takes every victim from the lowest priority up
        # to the one that makes room), so the next dry run starts below them
        end = n_run
        find, fits_after = self.find, self.fits_after
        finder = self.walk_finder(free, view)  # (None, or the same answers as find on free, kept in step below)
        fast: Any = None
        take: Any = None
        claim: Any = None  # (a finder's find and take at once, when the answer depends on the GPU count alone)
        if finder is not None:
            fast, take = finder.find, finder.take
            if self.fit_by_size:
                claim = getattr(finder, "claim", None)
        # with fit_by_size: the smallest demand that did not fit the free GPUs / the free GPUs plus all its victims
        # (later jobs have fewer GPUs free and no more victims, so a demand at least as large fails too)
        min_failed = min_failed_dry = math.inf
        preemptive = self.preemptive and n_run > 0
        for rank, job in queued:
            g = job.gpus
            # find() is never asked to fit a job into fewer free GPUs than it needs (no placement can)
            if g > free_total or g >= min_failed:
                pl = None
            elif claim is not None:
                pl = claim(g)
                if pl is not None:  # (taken off free already)
                    decision.launch[job] = pl
                    free_total -= pl.gpus
                    continue
                min_failed = g
            else:
                pl = find(job, free, view) if fast is None else fast(job)
                if pl is None and self.fit_by_size:
                    min_failed = g
            if pl is None:
                # the first running job of lower priority than this one: the victims are those from lo on
                if preemptive:
                    lo = bisect.bisect_right(running, rank if to_rank is None else to_rank(rank), key=_first)
                else:
                    lo = n_run
            if pl is None and lo < end and g < min_failed_dry:
                # a dry run: add the victims' GPUs, lowest priority first, until the job fits; find() is asked
                # only when enough GPUs are free and fits_after() says the last victim may have made room
                trial = free.copy()
                avail = free_total
                k = end
                while k > lo:
                    k -= 1
                    vp = running[k][1].placement
                    assert vp is not None  # running jobs hold GPUs
                    for sv, c in zip(vp.servers, vp.counts):
                        trial[sv] += c
                    avail += vp.gpus
                    if avail >= g and fits_after(job, trial, vp.servers, view):
                        pl = find(job, trial, view)
                        if pl is not None:
                            break
                if pl is not None:
                    free, free_total = trial, avail
                    if finder is not None:  # the walk goes on with the trial's free GPUs
                        finder = self.walk_finder(free, view)
                        fast, take = finder.find, finder.take
                        if claim is not None:
                            claim = finder.claim
                    min_failed = min_failed_dry = math.inf
                    for i in range(end - 1, k - 1, -1):
                        b.preempted(running[i][1])
                    end = k
                elif self.fit_by_size:
                    min_failed_dry = g
            if pl is not None:
                decision.launch[job] = pl
                if finder is None:
                    for sv, c in zip(pl.servers, pl.counts):
                        free[sv] -= c
                else:
                    take(pl)  # (the finder takes it off free)
                free_total -= pl.gpus  # fewer free GPUs: a demand that failed still fails
            elif not self.backfill:
                break
            elif free_total == 0 and lo >= end:
                break  # later jobs have lower priority, hence no more victims than this one: none fits
        b.free, b.free_total = free, free_total
        return b.build()


# the sort key of (key, job) entries: a C-level getter, called millions of times by the bisections
_first = operator.itemgetter(0)
# Composed's own attributes (its copy takes the fast path only with exactly these) and the immutable values a copy
# keeps as they are
_COMPOSED_FIELDS = frozenset(("scheduling", "placement", "naive", "name", "elastic", "_bumped", "_q", "_r", "_entry",
                              "_waits", "_cross", "_seq", "_frozen", "_rekey_all", "_rebuild_needed", "_key_change",
                              "_stable_until", "_next_bump", "_wake"))
_PLAIN_KEY = frozenset((int, float, bool, str, type(None)))
_NIL = object()


def _generic_deepcopy(x: Any, memo: dict) -> Any:
    """``copy.deepcopy``'s own path for an object without ``__deepcopy__`` (its reduction, rebuilt)."""
    rv = x.__reduce_ex__(4)
    return copy._reconstruct(x, memo, *rv)  # type: ignore[attr-defined]


def _plain_object(v: Any) -> bool:
    """True if ``copy.deepcopy(v)`` is a new object of ``v``'s class with the same ``__dict__`` (its fields are plain
    values or tuples of them, and its class changes nothing in how it is copied)."""
    t = type(v)
    return (t.__reduce_ex__ is object.__reduce_ex__ and t.__reduce__ is object.__reduce__
            and getattr(t, "__getstate__", None) is getattr(object, "__getstate__", None)
            and getattr(t, "__setstate__", None) is None and getattr(t, "__deepcopy__", None) is None
            and not hasattr(t, "__slots__") and hasattr(v, "__dict__")
            and all(type(x) in _PLAIN_KEY or (type(x) is tuple and all(type(y) in _PLAIN_KEY for y in x))
                    for x in v.__dict__.values()))
_three = operator.itemgetter(0, 1, 2)


def ranked_order(queued: Iterable[tuple[Any, Job]], running: Iterable[tuple[Any, Job]],
                 to_rank: Callable[[Any], Any] | None = None) -> list[Job]:
    """The priority list (highest first) merged back from the two halves
    [`place_ranked`][optsched.sim.base.PlacementPolicy.place_ranked] is given, for a walk that reads it whole."""
    q = queued if to_rank is None else [(to_rank(k), j) for k, j in queued]
    return [j for _, j in sorted([*q, *running], key=_first)]


class SchedulerPlacer(Params):
    """A combined scheduling + placement module: the only interface the engine calls. Parameters are declared
    once, in ``__init__``, and all state is created there ([`Params`][optsched.params.Params]: ``describe``,
    ``clone`` and the ``reset`` the engine calls before every run derive from them).

    Hooks: ``on_admit(jobs, view)`` when jobs are admitted, ``on_completion(job, view)`` when one finishes,
    ``next_wakeup(now)`` a time (> now) at which it wants a decision even if nothing happens (e.g. the end of
    a delay window); ``every_round`` asks for a decision every round even with no job waiting.
    """

    name = "policy"
    family = "blox"  # the workload kind and metrics it was written for (optsched.sim.registry.FAMILIES)
    every_round = False
    elastic = False  # True: launches may use a GPU count other than the job's demand

    def decide(self, view: SimView) -> Decision:
        raise NotImplementedError

    def on_admit(self, jobs: Sequence[Job], view: SimView) -> None:
        pass

    def on_completion(self, job: Job, view: SimView) -> None:
        pass

    def next_wakeup(self, now: float) -> float:
        return math.inf

    def after_apply(self, decision: Decision, view: SimView, own: bool) -> None:
        """Called once the engine has applied ``decision`` (jobs launched are RUNNING, preempted are QUEUED);
        ``own``: it is the decision this policy's [`decide`][optsched.sim.base.SchedulerPlacer.decide] returned (False:
        an outside driver's, which the
        policy's own records must follow)."""

    def idle_until(self, view: SimView) -> float:
        """A time before which, absent any arrival, completion or wake-up, a new decision would decide nothing
        (the engine skips the rounds before it): the policy's one speed promise. Default ``view.now`` (none)."""
        return view.now


class Composed(SchedulerPlacer):
    """A scheduling policy followed by a placement policy (Blox's Fig. 2 steps 7-8).

    The priority list is kept as two sorted lists (queued and running jobs, by the full key (priority, key,
    arrival, index)), updated on admission, launch, preemption and completion. Keys that drift are handled in
    one of two ways:

    * with the scheduling policy's frozen keys (``keys_change`` "relative": LAS with service "time"; "at-expiry":
      Tiresias), a
      running job's entry is keyed once at its launch and re-keyed only when its key expires (a heap of the
      expiry times: Tiresias's threshold crossings; LAS's never do); LAS compares a waiting job with the
      running ones through ``rank_at`` (its key relative to ``now``) during the walk. With a co-location-aware
      performance model (which syncs running jobs' stored progress at every change of the running set) every
      running job is re-keyed at each decision; a migrated job is re-keyed when it moves;
    * otherwise the running jobs are re-keyed and re-sorted at every decision where a key may have changed
      (LAS with service "gpu", SRTF), never for FIFO (O(log n) per change instead of O(n log n) per round).

    The anti-starvation bump is applied (and everything re-sorted) at the first decision at or after the
    earliest time a waiting job has waited ``starvation_s``. In event mode (``view.round_s is None``) that time
    and Tiresias's crossings are wake-ups. ``naive=True`` is the reference the fast path is tested against: at
    every decision it sorts all active jobs by ``SchedulingPolicy.order`` (every key computed at ``now``) and
    hands that list to ``PlacementPolicy.place``, keeps no list, and never lets the engine skip a round.
    """

    def __init__(self, scheduling: SchedulingPolicy, placement: PlacementPolicy, naive: bool = False):
        self.scheduling, self.placement = scheduling, placement
        self.naive = bool(naive)
        self.name = f"{scheduling.name}+{placement.name}"
        self.elastic = bool(placement.elastic)
        self._clear()

    def _clear(self) -> None:
        # Blox's job_priority, kept here (the engine alone writes jobs): the ids of the jobs bumped to priority 1
        # by the anti-starvation guard (for good, as Blox never resets it); every other job has 999
        self._bumped: set[str] = set()
        self._q: list = []            # sorted entries (full key, job) of queued jobs
        self._r: list = []            # sorted entries of running jobs
        self._entry: dict[str, tuple] = {}
        # (bump time, index, wait_since, job) of queued jobs in increasing bump time: a job joins at the time it
        # starts waiting (now), so appending keeps the order
        self._waits: deque = deque()
        self._cross: list = []        # frozen keys: heap (expiry time, seq, entry) of running entries
        self._seq = 0
        self._frozen = False          # the scheduling policy's frozen-key protocol is in use (set by _rebuild)
        self._rekey_all = False       # ... but running jobs' stored state changes between decisions
        self._rebuild_needed = True
        self._key_change = -math.inf  # keys may have changed from this time on
        self._stable_until = -math.inf
        self._next_bump = math.inf
        self._wake = math.inf

    # -- the anti-starvation bump (Blox's job_priority) ------------------------------------------------------
    def priority(self, job: Job) -> int:
        """Blox's ``job_priority`` of ``job``: 1 once bumped, 999 before."""
        return 1 if job.id in self._bumped else 999

    def bump(self, job: Job, now: float) -> int:
        """Blox's anti-starvation guard: a job that has waited ``starvation_s`` since it last ran (or arrived)
        gets ``job_priority`` 1 for the rest of its life (Blox sets it and never resets it), the others keep 999;
        the priority sorts before the policy's key."""
        if job.id not in self._bumped and job.status != RUNNING and \
                now - job.wait_since_s >= self.scheduling.starvation_s:
            self._bumped.add(job.id)
        return self.priority(job)

    def order(self, view: SimView) -> list[Job]:
        """Every active job in priority order, every key computed at ``view.now`` (the naive path)."""
        now, key = view.now, self.scheduling.key
        return sorted(view.jobs.active.values(), key=lambda j: (self.bump(j, now), key(j, now), j.arrival_s, j.index))

    def _next_bump_s(self, jobs: Iterable[Job]) -> float:
        """Earliest time a waiting job could get the bump (lets the engine skip idle rounds safely)."""
        st, bumped = self.scheduling.starvation_s, self._bumped
        return min((j.wait_since_s + st for j in jobs if j.status == QUEUED and j.id not in bumped),
                   default=math.inf)

    # -- the sorted lists ----------------------------------------------------------------------------------
    def _key(self, job: Job, now: float):
        return (1 if job.id in self._bumped else 999, self.scheduling.key(job, now), job.w.arrival_s, job.index)

    def _queued_entry(self, job: Job, now: float) -> tuple:
        if self._frozen:
            # the priority inline (not self.priority(job)): entries are built at every admission and launch
            return (1 if job.id in self._bumped else 999, self.scheduling.queued_key(job), job.w.arrival_s,
                    job.index), job
        return self._key(job, now), job

    def _running_entry(self, job: Job, now: float) -> tuple:
        if not self._frozen:
            return self._key(job, now), job
        k, until = self.scheduling.running_key(job, now)
        e = ((1 if job.id in self._bumped else 999, k, job.w.arrival_s, job.index), job)
        if until < math.inf:
            self._seq += 1
            heapq.heappush(self._cross, (until, self._seq, e))
        return e

    def _insert(self, lst: list, e: tuple) -> None:
        self._entry[e[1].id] = e
        bisect.insort(lst, e, key=_first)

    def _remove(self, lst: list, job: Job) -> None:
        e = self._entry.pop(job.id)
        i = bisect.bisect_left(lst, e[0], key=_first)
        if i >= len(lst) or lst[i][1] is not job:
            raise RuntimeError(f"priority list out of sync for job {job.id!r}")  # pragma: no cover
        del lst[i]

    def _drop(self, lst: list, jobs: Sequence[Job], tail: bool) -> None:
        """Remove ``jobs`` from ``lst``: at once if they are its last entries from the end (``tail``) or its first
        entries in order (as the walk's own decisions leave them), else one by one."""
        m = len(jobs)
        if not m:
            return
        if m <= len(lst) and [e[1] for e in (lst[:-m - 1:-1] if tail else lst[:m])] == jobs:
            for j in jobs:
                del self._entry[j.id]
            if tail:
                del lst[len(lst) - m:]
            else:
                del lst[:m]
        else:
            for j in jobs:
                self._remove(lst, j)

    def _push_wait(self, job: Job) -> None:
        if self.scheduling.starvation_s < math.inf:
            w = self._waits
            item = (job.wait_since_s + self.scheduling.starvation_s, job.index, job.wait_since_s, job)
            w.append(item)
            if len(w) > 1 and item[0] < w[-2][0]:  # not pushed at its start of waiting: restore the order
                self._waits = deque(sorted(w, key=_three))

    def _bump_top(self) -> float:
        w = self._waits
        bumped = self._bumped
        while w and (w[0][3].status != QUEUED or w[0][3].wait_since_s != w[0][2] or w[0][3].id in bumped):
            w.popleft()
        return w[0][0] if w else math.inf

    def _cross_top(self) -> float:
        """The earliest expiry of a running entry still in the list (stale heap items are dropped)."""
        c, entry = self._cross, self._entry
        while c and entry.get(c[0][2][1].id) is not c[0][2]:
            heapq.heappop(c)
        return c[0][0] if c else math.inf

    def _rebuild(self, view: SimView) -> None:
        now = view.now
        sched = self.scheduling
        self._frozen = sched.keys_change in FROZEN_KEYS
        self._rekey_all = self._frozen and bool(getattr(view.perf, "colocation_aware", False))
        self._q, self._r, self._entry, self._waits, self._cross = [], [], {}, deque(), []
        for j in view.jobs.active.values():
            self.bump(j, now)
            if j.status == RUNNING:
                e = self._running_entry(j, now)
                self._r.append(e)
            else:
                e = self._queued_entry(j, now)
                self._q.append(e)
                if j.status == QUEUED and sched.starvation_s < math.inf:
                    self._waits.append((j.wait_since_s + sched.starvation_s, j.index, j.wait_since_s, j))
            self._entry[j.id] = e
        self._q.sort(key=_first)
        self._r.sort(key=_first)
        self._waits = deque(sorted(self._waits, key=_three))
        self._rebuild_needed = False

    def _resort_running(self, now: float) -> None:
        """Re-key the running jobs at ``now`` and re-sort them (the list is nearly sorted: timsort is linear on
        it). The keys come from the policy's ``key`` (or, with frozen keys, ``running_key``)."""
        if self._frozen:
            self._cross = []
            r = [self._running_entry(j, now) for _, j in self._r]
        else:
            bumped, key = self._bumped, self.scheduling.key
            r = [((1 if j.id in bumped else 999, key(j, now), j.w.arrival_s, j.index), j) for _, j in self._r]
        r.sort(key=_first)
        self._entry.update({e[1].id: e for e in r})
        self._r = r

    def _expire(self, now: float) -> None:
        """Frozen keys: re-key the running jobs whose key expires by ``now`` (Tiresias: crossed a threshold)."""
        c, entry = self._cross, self._entry
        due: list[Job] = []
        while c and c[0][0] <= now:
            e: tuple = heapq.heappop(c)[2]
            if entry.get(e[1].id) is e:
                due.append(e[1])
        for j in due:
            self._remove(self._r, j)
            self._insert(self._r, self._running_entry(j, now))

    # -- engine hooks --------------------------------------------------------------------------------------
    def on_admit(self, jobs: Sequence[Job], view: SimView) -> None:
        hook = getattr(self.scheduling, "on_admit", None)  # a key that learns about jobs at admission (predictions)
        if hook is not None:
            hook(jobs, view)
        if not self._rebuild_needed:
            now, q, entry, bumped = view.now, self._q, self._entry, self._bumped
            frozen = self._frozen
            qkey = self.scheduling.queued_key
            st = self.scheduling.starvation_s
            waits = self._waits
            keys = [qkey(j) for j in jobs] if frozen else self.scheduling.keys_at(jobs, now)
            starve = st < math.inf
            last = waits[-1][0] if waits else -math.inf  # (the latest bump time queued)
            for j, k in zip(jobs, keys):  # _insert(_q, _queued_entry(j)) and _push_wait(j), inline: every admission
                jid = j.id
                e = ((1 if bumped and jid in bumped else 999, k, j.w.arrival_s, j.index), j)
                entry[jid] = e
                if q and e[0] < q[-1][0]:
                    bisect.insort(q, e, key=_first)
                else:  # after every entry (the usual case: jobs arrive in key order): insort's own place
                    q.append(e)
                if starve:
                    ws = j.wait_since_s
                    item = (ws + st, j.index, ws, j)
                    waits.append(item)
                    if item[0] < last:  # not pushed at its start of waiting: the order restored
                        self._waits = waits = deque(sorted(waits, key=_three))
                        last = waits[-1][0]
                    else:
                        last = item[0]

    def on_completion(self, job: Job, view: SimView) -> None:
        # (the engine does these lines inline, reading _rebuild_needed, _entry and _r once per advance: only a
        # decision replaces them; keep them alike)
        if not self._rebuild_needed:  # _remove(_r, job), inline: every completion
            e = self._entry.pop(job.id)
            r = self._r
            i = bisect.bisect_left(r, e[0], key=_first)
            if i >= len(r) or r[i][1] is not job:
                raise RuntimeError(f"priority list out of sync for job {job.id!r}")  # pragma: no cover
            del r[i]

    def after_apply(self, decision: Decision, view: SimView, own: bool) -> None:
        # ``decision`` may come from an outside driver instead of decide(): the lists follow it all the same,
        # but the promise that nothing changes without an event holds only after a decision of our own
        now = view.now
        sched = self.scheduling
        if not self._rebuild_needed:
            if decision.preempt:
                moved = {j.id for j in decision.preempt}
                started = [j for j in decision.launch if j.id not in moved]
            else:
                started = list(decision.launch)
            if decision.preempt:
                self._drop(self._r, decision.preempt, tail=True)  # the walk preempts from the end of the list
            q, m = self._q, len(started)
            if (sched.fixed_key and not self._frozen and not decision.preempt and m and m <= len(q)
                    and [e[1] for e in q[:m]] == started):
                # fixed keys (FIFO): the launched jobs' queued entries, the head of the queue, are their running
                # entries as they are (the same key, bump and tie-breaks): moved to the running list
                r = self._r
                for e in q[:m]:
                    if r and e[0] < r[-1][0]:
                        bisect.insort(r, e, key=_first)
                    else:  # after every entry: insort's own place
                        r.append(e)
                del q[:m]
                started = []
            else:
                self._drop(q, started, tail=False)  # ... and launches from its head (no backfill)
            for j in decision.preempt:
                if j not in decision.launch:
                    self._insert(self._q, self._queued_entry(j, now))
                    self._push_wait(j)
            if self._frozen:
                for j in decision.launch:
                    self._insert(self._r, self._running_entry(j, now))
            elif started or decision.preempt:  # _insert(_r, _running_entry(j)), inline: every launch
                r, entry, bumped, key = self._r, self._entry, self._bumped, sched.key
                for j in decision.launch:
                    e = ((1 if j.id in bumped else 999, key(j, now), j.w.arrival_s, j.index), j)
                    entry[j.id] = e
                    if r and e[0] < r[-1][0]:
                        bisect.insort(r, e, key=_first)
                    else:  # after every entry: insort's own place
                        r.append(e)
            if self._frozen:
                for j in decision.migrate:  # a move syncs the job's stored state: its key is read anew
                    self._remove(self._r, j)
                    self._insert(self._r, self._running_entry(j, now))
        if self.naive:  # everything from the jobs themselves
            self._next_bump = self._next_bump_s(view.jobs.active.values())
            waiting = any(j.status != RUNNING for j in view.jobs.active.values())
        else:
            self._next_bump = self._bump_top()
            waiting = bool(self._q)
        change = sched.keys_change
        if self._frozen:
            if not self._rebuild_needed and self._cross and self._cross[0][0] <= now:
                # crossings due since our last decision (an outside driver's decision came instead): re-key them
                # now, so that the wake-up below is the next crossing to come, not one already past
                self._expire(now)
            self._key_change = self._cross_top()
        elif self.naive and change in FROZEN_KEYS:  # no heap: the running keys' expiries, read anew
            running_key = sched.running_key
            self._key_change = min((running_key(j, now)[1] for j in view.jobs.active.values()
                                    if j.status == RUNNING), default=math.inf)
        else:
            self._key_change = math.inf if change == "never" else now
        if not own:
            self._stable_until = -math.inf
        elif change == "running-down":
            self._stable_until = math.inf  # a queued job only loses victims as running keys shrink
        elif change == "relative":
            self._stable_until = now  # a waiting job's rank against the running ones moves with time
        else:
            self._stable_until = self._key_change
        wake = math.inf
        if view.round_s is None and waiting:  # event mode: threshold crossings and bumps are events
            # after an outside driver's decision the promise is void, but the running jobs' key changes (their
            # crossing times) still are events: without them a crossing would wait for the next arrival
            st = self._stable_until if own else self._key_change
            wake = min(self._next_bump, st if st > now else math.inf)
        self._wake = wake

    def decide(self, view: SimView) -> Decision:
        now = view.now
        pl = self.placement
        if self.naive:
            decision = pl.place(self.order(view), view)
            return decision
        if self._rebuild_needed or now >= self._bump_top():
            self._rebuild(view)
        elif self._frozen:
            if self._rekey_all:
                self._resort_running(now)  # stored progress moved at syncs: every running key is read anew
            elif self._cross and self._cross[0][0] <= now:
                self._expire(now)
        elif now >= self._key_change:
            if self.scheduling.keys_change in RUNNING_KEYS:
                if self._q:
                    self._resort_running(now)  # only running jobs' keys moved
                # else: nothing queued, so the walk launches nothing whatever the running order (a placement
                # launches queued jobs, running ones are only victims); the running list stays sorted by its
                # stored keys (insertions and removals keep that) until re-keyed
            else:
                self._rebuild(view)
        to_rank = None
        if self.scheduling.keys_change == "relative":  # waiting jobs' keys in the running keys' terms
            rank_at = self.scheduling.rank_at

            def to_rank(k: tuple) -> tuple:
                return (k[0], rank_at(k[1], now), k[2], k[3])
        return pl.place_ranked(self._q, self._r, view, to_rank)

    def next_wakeup(self, now: float) -> float:
        return self._wake if self._wake > now else math.inf

    def idle_until(self, view: SimView) -> float:
        return view.now if self.naive else min(self._next_bump, self._stable_until)

    def __deepcopy__(self, memo: dict) -> Composed:
        """What ``copy.deepcopy``'s generic path gives, for the exact class with its own attributes only: the sorted
        lists copied entry by entry (an entry shared by the lists, ``_entry`` and the expiry heap is copied once),
        keys of plain values and tuples of them kept as they are (immutable), jobs taken from ``memo`` (a simulator
        copy has copied them), the two parts copied by their fields when those are plain values. A what-if copy of
        the live run copies its active policy at every switching point; the generic path took about four fifths of
        such a copy. Anything else (a subclass, another attribute, another kind of key or part) goes the generic way.

        ```pycon
        >>> from optsched.sim.registry import build_policy
        >>> p = build_policy("las"); p._bumped.add("a"); p._seq = 3
        >>> c = copy.deepcopy(p)
        >>> c is not p, c._bumped == p._bumped and c._bumped is not p._bumped, c._seq, c.scheduling is p.scheduling
        (True, True, 3, False)

        ```
        """
        d = self.__dict__
        if type(self) is not Composed or d.keys() != _COMPOSED_FIELDS:
            return _generic_deepcopy(self, memo)
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        deepcopy, known = copy.deepcopy, memo.get
        nil = _NIL

        def job(j: Any) -> Any:
            c = known(id(j), nil)
            return c if c is not nil else deepcopy(j, memo)

        def entry(e: Any) -> Any:
            c = known(id(e), nil)
            if c is nil:
                k = e[0]
                if not all(type(x) in _PLAIN_KEY or (type(x) is tuple and all(type(y) in _PLAIN_KEY for y in x))
                           for x in k):
                    k = deepcopy(k, memo)
                c = memo[id(e)] = (k, job(e[1]))
            return c

        nd = new.__dict__
        for k, v in d.items():
            if type(v) in _PLAIN_KEY:
                nd[k] = v
            elif k in ("_q", "_r"):
                nd[k] = [entry(e) for e in v]
            elif k == "_entry":
                nd[k] = {i: entry(e) for i, e in v.items()}
            elif k == "_cross":
                nd[k] = [(t, q, entry(e)) for t, q, e in v]
            elif k == "_waits":
                nd[k] = deque((t, i, w, job(j)) for t, i, w, j in v)
            elif k == "_bumped":
                nd[k] = set(v)
            elif k in ("scheduling", "placement") and _plain_object(v):
                c = known(id(v), nil)
                if c is nil:
                    tv: Any = type(v)
                    c = memo[id(v)] = tv.__new__(tv)
                    c.__dict__.update(v.__dict__)
                nd[k] = c
            else:
                nd[k] = deepcopy(v, memo)
        return new

    def describe(self) -> dict:
        own = {k: plain(v) for k, v in self.get_params().items() if k not in ("scheduling", "placement")}
        return {"name": self.name, **own, "scheduling": self.scheduling.describe(),
                "placement": self.placement.describe()}


class LaunchMechanism(Params):
    """Launch and preemption (Blox's two mechanism abstractions), as the simulator models them.

    [`stall_s`][optsched.sim.base.LaunchMechanism.stall_s] is the stall (seconds without progress while holding the
    GPUs) of a job starting on a
    placement: ``restore_s`` when it resumes after a preemption (checkpoint-restore overhead, Blox section 7
    profiles it), ``start_s`` on its first launch. Preemption happens at an iteration boundary with no lost
    work (Blox's iteration-boundary checkpoint); ``checkpoint_s`` is charged at the next resume as well,
    because in the simulator the checkpoint is written while the GPUs are being handed over.
    [`migration_stall_s`][optsched.sim.base.LaunchMechanism.migration_stall_s] is the stall of a running job moved to
    another placement (``migration_s``).

    ```pycon
    >>> m = LaunchMechanism(restore_s=30, migration_s=5)
    >>> m.describe()["migration_s"], m.migration_stall_s(None, None, None, 0.0)
    (5.0, 5.0)

    ```
    """

    name = "checkpoint-restore"

    def __init__(self, restore_s: float = 0.0, checkpoint_s: float = 0.0, start_s: float = 0.0,
                 migration_s: float = 0.0):
        for n, v in (("restore_s", restore_s), ("checkpoint_s", checkpoint_s), ("start_s", start_s),
                     ("migration_s", migration_s)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 <= v < math.inf):
                raise InstanceError(f"must be a finite number >= 0, got {v!r}", field=n)
        self.restore_s, self.checkpoint_s, self.start_s = float(restore_s), float(checkpoint_s), float(start_s)
        self.migration_s = float(migration_s)

    def stall_s(self, job: Job, placement: Placement, now: float) -> float:
        """Stall of a launch of ``job`` on ``placement`` at ``now`` (first start or resume)."""
        if job.launches == 0:
            return self.start_s
        return self.restore_s + self.checkpoint_s

    def migration_stall_s(self, job: Job, old: Placement, new: Placement, now: float) -> float:
        """Stall of ``job`` moved from ``old`` to ``new`` at ``now`` (it keeps its progress and its GPUs)."""
        return self.migration_s


class MetricCollector:
    """Called after every scheduling round with the view (Blox's metric collection). Subclass and pass
    instances as ``simulate(..., collectors=[...])``; ``result()`` is stored in ``SimResult.custom``."""

    name = "metrics"

    def reset(self) -> None:
        """Called at [`Simulator.reset`][optsched.sim.engine.Simulator.reset] (before a run); override to clear what a
        previous run recorded."""

    def collect(self, view: SimView) -> None:
        pass

    def result(self):
        return None

    def finish(self, result: Any) -> None:
        """Called on the run's [`SimResult`][optsched.sim.metrics.SimResult] (after ``result()``): a family's metrics
        collector adds its per-job columns, summary keys and ``result.custom`` entries here."""
