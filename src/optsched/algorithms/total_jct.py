"""A greedy heuristic for total JCT with placement choice (paper 001's problem A) and the serial schedule
generation it shares with the brute force of [`optsched.exact.total_jct`][].

```pycon
>>> from optsched.generators.total_jct import random_total_jct_instance
>>> inst = random_total_jct_instance(4, 0)
>>> from optsched.evaluators.total_jct import evaluate
>>> evaluate(inst, greedy_schedule(inst)).objective >= inst.trivial_lower_bound()
True

```
"""

from __future__ import annotations

from typing import Sequence

from ..problems.total_jct import TotalJctInstance, placement_options, schedule_from_choice
from ..registry import algorithm
from ..result import Schedule

__all__ = ["Profile", "greedy_schedule", "greedy_total_jct"]


class Profile:
    """Per-server usage over integer time as a list of placed intervals (tiny instances)."""

    def __init__(self, caps: Sequence[int]):
        self.caps = list(caps)
        self.iv: list[list[tuple[int, int, int]]] = [[] for _ in caps]  # (start, end, gpus) per server

    def fits(self, u: Sequence[int], t: int, d: int) -> bool:
        if d == 0:
            return True
        for m, n in enumerate(u):
            if not n:
                continue
            ivs = self.iv[m]
            # usage is piecewise constant; its maximum on [t, t+d) is reached at t or at a start inside
            points = [t] + [a for a, _, _ in ivs if t < a < t + d]
            for p in points:
                if sum(g for a, b, g in ivs if a <= p < b) + n > self.caps[m]:
                    return False
        return True

    def earliest(self, u: Sequence[int], release: int, d: int) -> int:
        """Earliest integer t >= release with u fitting on [t, t+d): r or the end of a placed interval."""
        cands = sorted({release} | {b for ivs in self.iv for _, b, _ in ivs if b > release})
        for t in cands:
            if self.fits(u, t, d):
                return t
        raise AssertionError("unreachable: after every placed interval ends the cluster is empty")

    def add(self, u: Sequence[int], t: int, d: int) -> None:
        for m, n in enumerate(u):
            if n and d:
                self.iv[m].append((t, t + d, n))

    def remove(self, u: Sequence[int], t: int, d: int) -> None:
        for m, n in enumerate(u):
            if n and d:
                self.iv[m].remove((t, t + d, n))


def greedy_total_jct(inst: TotalJctInstance) -> dict[str, tuple[int, tuple[int, ...], int]]:
    """A feasible schedule: jobs by (release, min duration, id), each at the (vector) that completes first."""
    caps = [s.gpus for s in inst.cluster.servers]
    prof = Profile(caps)
    opts = placement_options(inst)
    order = sorted(range(inst.n_jobs), key=lambda i: (inst.jobs[i].release, inst.jobs[i].min_duration,
                                                      inst.jobs[i].id))
    out = {}
    for i in order:
        j = inst.jobs[i]
        best = None
        for k, u in opts[i]:
            d = j.modes[k].duration
            t = prof.earliest(u, j.release, d)
            if best is None or (t + d, d) < best[0]:
                best = ((t + d, d), k, u, t)
        assert best is not None  # every job has at least one mode, hence one option
        _, k, u, t = best
        prof.add(u, t, j.modes[k].duration)
        out[j.id] = (k, u, t)
    return out


def greedy_schedule(inst: TotalJctInstance) -> Schedule:
    """[`greedy_total_jct`][optsched.algorithms.total_jct.greedy_total_jct] as a
    [`Schedule`][optsched.result.Schedule]."""
    return schedule_from_choice(inst, greedy_total_jct(inst), "total-jct-greedy")


@algorithm("total-jct-greedy", TotalJctInstance)
def _registered_greedy(inst: TotalJctInstance, *, seed: int | None = None, time_limit: float | None = None
                       ) -> Schedule:
    """greedy: jobs by release, each on the placement that completes first (the exact models' incumbent)"""
    return greedy_schedule(inst)
