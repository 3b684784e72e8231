"""Exact preemptive single-machine SRPT for 1|r_j,pmtn|sum C_j: the virtual instance of A-SRPT (paper 001).

A-SRPT (paper 001, Sec. IV-C, Alg. 1 line 2) "virtualises" the cluster as one unit-speed preemptive machine
on which job ``i`` has size ``(g_i/G) * n_i * alpha~_i^min`` (instance A1) or, with predicted iterations,
``(g_i/G) * n~_i * alpha~_i^min`` (instance A~1). Shortest Remaining Processing Time first is optimal for
``1|r_j,pmtn|sum C_j`` (Schrage 1968, paper ref. [17]); jobs are released to the cluster in the order they
complete on this virtual machine. See ``docs/algorithms/a-srpt.md``.

* [`VirtualSRPT`][optsched.exact.single_machine.VirtualSRPT] is the online, incremental form: add jobs at (or before)
  their release, ``advance(t)``
  and get the jobs newly completed by time ``t`` in completion order (exactly Alg. 1 line 2).
* [`srpt`][optsched.exact.single_machine.srpt] is the batch form: completion times, completion order and the total.
* [`brute_force_preemptive_optimum`][optsched.exact.single_machine.brute_force_preemptive_optimum] (a DP over unit
  slots) and [`best_nonpreemptive_schedule`][optsched.exact.single_machine.best_nonpreemptive_schedule]
  (all permutations) are independent exact checks for tiny integer instances.

Time is continuous and event-driven: the only events are releases and completions, so with
``fractions.Fraction`` (or ``int``) inputs every completion time is exact. Ties between equal remaining times are
broken by release time, then job id (the paper is silent; digest 001 Sec. 3 recommends this), so the running
job is never preempted by a newcomer of equal remaining time. A job of size 0 completes at its release.

This module registers no algorithm (it is auto-imported by the registry and has no import side effects).

```pycon
>>> from fractions import Fraction as F
>>> res = srpt([("a", 0, 3), ("b", 1, 1), ("c", 1, F(1, 2))])
>>> res.order
('c', 'b', 'a')
>>> res.completion == {"c": F(3, 2), "b": F(5, 2), "a": F(9, 2)}
True
>>> res.total
Fraction(17, 2)

```
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from numbers import Real
from typing import Any

from ..errors import InstanceError

__all__ = [
    "SrptResult", "VirtualSRPT", "best_nonpreemptive_schedule", "brute_force_preemptive_optimum", "srpt",
    "virtual_size",
]

JobId = Hashable
# times and sizes: int and Fraction stay exact, a float anywhere makes floats. numbers.Real is what the checks
# accept at run time (numpy scalars too), but a type checker can do no arithmetic on that abstract class.
Num = int | float | Fraction


def virtual_size(gpus: int, total_gpus: int, iterations: Num, alpha: Num) -> Num:
    """Size of a job on the virtual single machine: ``(g_i / G) * n_i * alpha_i`` (paper 001, Sec. IV-C).

    With ``int``/``Fraction`` arguments the result is an exact ``Fraction``.

    ```pycon
    >>> virtual_size(2, 8, 10, Fraction(3, 2))
    Fraction(15, 4)

    ```
    """
    if total_gpus <= 0:
        raise InstanceError("must be positive", field="total_gpus")
    if gpus <= 0 or gpus > total_gpus:
        raise InstanceError(f"must be in 1..{total_gpus}", field="gpus")
    if iterations < 0:
        raise InstanceError("must be non-negative", field="iterations")
    if alpha <= 0:
        raise InstanceError("must be positive", field="alpha")
    g = Fraction(gpus, total_gpus) if not isinstance(iterations, float) and not isinstance(alpha, float) \
        else gpus / total_gpus
    return g * iterations * alpha


def _check_number(value: Any, field: str, job: JobId) -> None:
    # bool is an int subclass but never a meaningful time or size
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InstanceError(f"must be a real number, got {value!r}", field=field, job=str(job))
    if isinstance(value, float) and not math.isfinite(value):
        raise InstanceError(f"must be finite, got {value!r}", field=field, job=str(job))
    if value < 0:
        raise InstanceError(f"must be non-negative, got {value!r}", field=field, job=str(job))


class VirtualSRPT:
    """Online preemptive SRPT on a unit-speed machine, advanced in continuous time.

    ``add(job_id, release, size)`` registers a job (its release may lie in the future, but not before the
    current clock); ``advance(t)`` runs the machine up to time ``t`` and returns the ids of the jobs that
    completed in ``(previous clock, t]`` (plus zero-size jobs released at the previous clock), in completion
    order. ``completion`` maps every completed job to its exact completion time.

    Priority: smallest remaining size, then earliest release, then smallest id (ids must be mutually
    orderable, e.g. all ``str`` or all ``int``).

    ```pycon
    >>> v = VirtualSRPT()
    >>> v.add("long", 0, 4); v.add("unseen", 1, 0)   # predicted size 0: completes at its release
    >>> v.advance(1)
    ['unseen']
    >>> v.add("short", 2, 1)
    >>> v.advance(3), v.completion["short"]
    (['short'], 3)
    >>> v.advance(10), v.completion["long"], v.now
    (['long'], 5, 10)

    ```
    """

    def __init__(self, start: Num = 0) -> None:
        self.now: Num = start
        self.completion: dict[JobId, Num] = {}
        self._release: dict[JobId, Num] = {}
        self._future: list[tuple[Num, int, JobId]] = []  # heap of (release, insertion seq, id)
        self._ready: list[tuple[Num, Num, JobId]] = []  # heap of (remaining, release, id), released jobs
        self._remaining: dict[JobId, Num] = {}
        self._seq = 0  # a plain counter: itertools.count cannot be deep-copied from Python 3.14 on

    # -- state -------------------------------------------------------------------------------------------
    @property
    def active(self) -> int:
        """Number of jobs added but not yet completed."""
        return len(self._remaining)

    def remaining(self, job_id: JobId) -> Num:
        """Remaining virtual size of an uncompleted job (its full size if not yet released)."""
        return self._remaining[job_id]

    # -- input -------------------------------------------------------------------------------------------
    def add(self, job_id: JobId, release: Num, size: Num) -> None:
        """Register a job released at ``release >= now`` with virtual size ``size >= 0``."""
        if job_id in self._release:
            raise InstanceError("duplicate job id", field="id", job=str(job_id))
        _check_number(release, "release", job_id)
        _check_number(size, "size", job_id)
        if release < self.now:
            raise InstanceError(f"release {release} is before the virtual clock {self.now}", field="release",
                                job=str(job_id))
        self._release[job_id] = release
        self._remaining[job_id] = size
        if release <= self.now:
            heapq.heappush(self._ready, (size, release, job_id))
        else:
            self._seq += 1
            heapq.heappush(self._future, (release, self._seq, job_id))

    # -- simulation --------------------------------------------------------------------------------------
    def _admit(self) -> None:
        while self._future and self._future[0][0] <= self.now:
            _, _, jid = heapq.heappop(self._future)
            heapq.heappush(self._ready, (self._remaining[jid], self._release[jid], jid))

    def advance(self, t: Num | None = None) -> list[JobId]:
        """Run up to time ``t`` (``None``: until every added job is complete) and return the newly completed
        job ids in completion order (simultaneous completions in priority order)."""
        if t is not None and t < self.now:
            raise InstanceError(f"cannot move the virtual clock back from {self.now} to {t}", field="t")
        done: list[JobId] = []
        while True:
            self._admit()
            next_release = self._future[0][0] if self._future else None
            if not self._ready:
                if next_release is not None and (t is None or next_release <= t):
                    self.now = next_release  # idle until the next release
                    continue
                break
            rem, rel, jid = self._ready[0]
            finish = self.now + rem
            # complete before admitting a release at the same instant: the completion happens first either way
            if (next_release is None or finish <= next_release) and (t is None or finish <= t):
                heapq.heappop(self._ready)
                self.now = finish
                self.completion[jid] = finish
                del self._remaining[jid]
                done.append(jid)
                continue
            # run the head job until the next event (a release) or the horizon t, whichever comes first
            # (with neither a release nor t the head job completed above: one of them is set here)
            horizon = next_release if next_release is not None and (t is None or next_release <= t) else t
            assert horizon is not None
            heapq.heapreplace(self._ready, (rem - (horizon - self.now), rel, jid))
            self._remaining[jid] = rem - (horizon - self.now)
            self.now = horizon
            if horizon == t and (next_release is None or next_release > horizon):
                break
        if t is not None and t > self.now:
            self.now = t
        return done


@dataclass(frozen=True)
class SrptResult:
    """Completion time of every job, the completion order and the total completion time."""

    completion: dict[JobId, Num]
    order: tuple[JobId, ...]
    total: Num


def srpt(jobs: Iterable[tuple[JobId, Num, Num]]) -> SrptResult:
    """Preemptive SRPT on one unit-speed machine for ``(id, release, size)`` triples: the optimum of
    ``1|r_j,pmtn|sum C_j``.

    ```pycon
    >>> srpt([(1, 0, 2), (2, 0, 2)]).completion   # equal sizes: the smaller id first
    {1: 2, 2: 4}

    ```
    """
    machine = VirtualSRPT()
    for jid, release, size in jobs:
        machine.add(jid, release, size)
    order = tuple(machine.advance(None))
    # int + Fraction stays exact; a float anywhere makes the total a float
    total = sum((machine.completion[j] for j in order), 0)
    return SrptResult(dict(machine.completion), order, total)


# ---------------------------------------------------------------------------------------------------------
# Independent exact checks for tiny integer instances
# ---------------------------------------------------------------------------------------------------------

def _check_tiny(releases: Sequence[int], sizes: Sequence[int], max_jobs: int, max_value: int) -> None:
    if len(releases) != len(sizes):
        raise InstanceError("releases and sizes differ in length", field="sizes")
    if len(sizes) > max_jobs:
        raise InstanceError(f"at most {max_jobs} jobs for the brute force", field="jobs")
    for j, (r, p) in enumerate(zip(releases, sizes)):
        for name, v in (("release", r), ("size", p)):
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= max_value:
                raise InstanceError(f"must be an integer in 0..{max_value}", field=name, job=str(j))


def brute_force_preemptive_optimum(releases: Sequence[int], sizes: Sequence[int]) -> int:
    """Optimal total completion time of ``1|r_j,pmtn|sum C_j`` by dynamic programming over unit time slots.

    State ``(t, remaining sizes)``; in slot ``[t, t+1)`` the machine runs one released unfinished job or, only
    when none is available, idles. Forbidding voluntary idling loses nothing: moving a later unit of an
    available job into an idle slot never delays any completion. Integer data admits an optimal schedule with
    integer preemption points (the McNaughton/SRPT argument), so unit slots lose nothing either. This does not
    use SRPT's rule, so it is an independent check of [`srpt`][optsched.exact.single_machine.srpt]. Zero-size jobs
    complete at their release.
    At most 6 jobs with releases and sizes in 0..8.

    ```pycon
    >>> brute_force_preemptive_optimum([0, 1, 1], [3, 1, 1])   # a 0-1, b 1-2, c 2-3, a 3-5
    10

    ```
    """
    _check_tiny(releases, sizes, max_jobs=6, max_value=8)
    n = len(sizes)
    base = sum(r for r, p in zip(releases, sizes) if p == 0)
    memo: dict[tuple[int, tuple[int, ...]], int] = {}

    def best(t: int, rem: tuple[int, ...]) -> int:
        # minimum total completion time of the unfinished jobs, from time t on
        key = (t, rem)
        if key in memo:
            return memo[key]
        if not any(rem):
            return 0
        avail = [j for j in range(n) if rem[j] > 0 and releases[j] <= t]
        if not avail:
            value = best(min(releases[j] for j in range(n) if rem[j] > 0), rem)
        else:
            costs = []
            for j in avail:
                nxt = list(rem)
                nxt[j] -= 1
                costs.append((t + 1 if nxt[j] == 0 else 0) + best(t + 1, tuple(nxt)))
            value = min(costs)
        memo[key] = value
        return value

    return base + best(min(releases, default=0), tuple(sizes))


def best_nonpreemptive_schedule(releases: Sequence[Num], sizes: Sequence[Num]
                                ) -> tuple[Num, tuple[int, ...]]:
    """Best non-preemptive schedule over all job permutations (each job starts at ``max(previous end,
    release)``): the optimum of ``1|r_j|sum C_j``. Returns ``(total, order)``; at most 7 jobs.

    ```pycon
    >>> best_nonpreemptive_schedule([0, 1, 1], [3, 1, 1])   # idle 0-1, then b, c, a: 2 + 3 + 6
    (11, (1, 2, 0))

    ```
    """
    if len(sizes) > 7:
        raise InstanceError("at most 7 jobs for the permutation brute force", field="jobs")
    best: tuple[Num, tuple[int, ...]] | None = None
    for perm in itertools.permutations(range(len(sizes))):
        t: Num = 0
        total: Num = 0
        for j in perm:
            t = max(t, releases[j]) + sizes[j]
            total += t
        if best is None or total < best[0]:
            best = (total, perm)
    assert best is not None or not sizes
    return best if best is not None else (0, ())
