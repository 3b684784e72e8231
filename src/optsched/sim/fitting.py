"""The GPU-fitting rules of the simulator, one home for each: where ``g`` GPUs go among the free GPUs per server.

Every policy that places jobs picks one of these rules (or chains two); each takes the free GPUs per server
(``free``, a numpy array or a sequence) and returns the GPUs taken per server as a dict in the order the rule
visits the servers (that order matters to Heavy-Edge's mapping), or None when the GPUs do not suffice:

==========================  ================================================================================
rule                        servers, in order
==========================  ================================================================================
[`best_fit`][optsched.sim.fitting.best_fit]            one server: the one with the fewest free GPUs >= g, ties by index
(Blox's
                            consolidated placement, paper 003's single-node allocation)
[`whole_servers`][optsched.sim.fitting.whole_servers]       wholly free servers, largest first (ties by index), as few
as possible
[`consolidated`][optsched.sim.fitting.consolidated]        [`best_fit`][optsched.sim.fitting.best_fit] for a job that
fits a server, else [`whole_servers`][optsched.sim.fitting.whole_servers] (Blox)
[`first_free`][optsched.sim.fitting.first_free]          the first free GPUs in GPU-id order: servers by index (Blox's
"scattered")
[`fragments_first`][optsched.sim.fitting.fragments_first]     servers by free GPUs ascending, ties by index (paper 003's
cross-node allocation,
                            paper 001's SelectLeast)
[`most_free_first`][optsched.sim.fitting.most_free_first]     servers by free GPUs descending, ties by index (paper
001's SelectMost)
[`spread`][optsched.sim.fitting.spread]              one GPU at a time round-robin over the servers, most free first (as
many servers
                            as possible)
==========================  ================================================================================

```pycon
>>> import numpy as np
>>> free = np.array([3, 1, 4, 2])
>>> best_fit(free, 2), fragments_first(free, 5), most_free_first(free, 5), first_free(free, 5)
(3, {1: 1, 3: 2, 0: 2}, {2: 4, 0: 1}, {0: 3, 1: 1, 2: 1})
>>> whole_servers(np.array([4, 2, 4]), np.array([4, 4, 4]), 6), spread(np.array([2, 2]), 3)
({0: 4, 2: 2}, {0: 2, 1: 1})

```
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import Sequence

import numpy as np

from .state import _ONE, Placement

__all__ = ["FreeIndex", "best_fit", "consolidated", "first_free", "fragments_first", "most_free_first", "spread",
           "whole_servers"]

Free = np.ndarray | Sequence[int]

_NO_FIT = np.iinfo(np.int64).max
_FIT_SCORE: dict[tuple[int, int], np.ndarray] = {}
_WHOLE_COUNTS: dict[tuple[int, int], tuple[int, ...]] = {}  # GPUs per server of g GPUs on whole servers of max_cap
_COUNTS: dict[int, tuple[tuple[int, ...], ...]] = {}  # FreeIndex's counts to try per GPU demand, by max_cap


def best_fit(free: Free, g: int) -> int | None:
    """The server with the fewest free GPUs that still holds ``g`` (ties: the lowest index), or None. On a numpy
    array of more than a few servers, one vectorised argmin (the same answer as the scan)."""
    if isinstance(free, np.ndarray) and free.ndim == 1 and free.dtype.kind in "iu" and len(free) > 16:
        score = np.where(free >= g, free, _NO_FIT)
        s = int(score.argmin())
        return s if score[s] != _NO_FIT else None
    best, best_f = None, None
    for s, f in enumerate(free):
        f = int(f)
        if f >= g and (best_f is None or f < best_f):
            best, best_f = s, f
    return best


def whole_servers(free: Free, capacity: Free, g: int) -> dict[int, int] | None:
    """Wholly free servers (free = capacity > 0), largest first (ties by index), each taken whole but the last,
    until ``g`` GPUs are taken; None if all of them hold fewer than ``g``."""
    f, cap = np.asarray(free), np.asarray(capacity)
    whole = np.flatnonzero((f == cap) & (cap > 0))
    if cap[whole].sum() < g:
        return None
    out, need = {}, g
    for s in whole[np.argsort(-cap[whole], kind="stable")]:
        take = int(min(cap[s], need))
        out[int(s)] = take
        need -= take
        if need == 0:
            break
    return out


def consolidated(g: int, free: np.ndarray, cap: np.ndarray, max_cap: int, uniform: bool = False) -> Placement | None:
    """Blox's consolidated placement: [`best_fit`][optsched.sim.fitting.best_fit] if ``g`` fits a server (``max_cap``:
    the largest
    capacity), else [`whole_servers`][optsched.sim.fitting.whole_servers]; as a
    [`Placement`][optsched.sim.state.Placement]. ``uniform``: every server has ``max_cap``
    GPUs (whole servers are then taken in index order, as the general rule does). The simulator's hot path:
    the best fit is one table lookup and one argmin over the servers.

    ```pycon
    >>> consolidated(2, np.array([3, 1, 4, 2]), np.array([4, 4, 4, 4]), 4).as_dict()
    {3: 2}

    ```
    """
    if g <= max_cap:
        # exact fit first, then the fewest free >= g; ties by server index: the first minimum of a score that
        # is the free count where it is >= g (free GPUs are 0..max_cap: one lookup table per (g, max_cap))
        table = _FIT_SCORE.get((g, max_cap))
        if table is None:
            a = np.arange(max_cap + 1, dtype=np.int64)
            table = _FIT_SCORE[g, max_cap] = np.where(a >= g, a, _NO_FIT)
        score = table.take(free)
        s = int(score.argmin())
        return Placement.one(s, g) if score[s] != _NO_FIT else None
    if uniform:
        whole = free == max_cap
        n = -(-g // max_cap)  # servers needed
        if int(np.count_nonzero(whole)) < n:
            return None
        counts = _WHOLE_COUNTS.get((g, max_cap))
        if counts is None:  # (one tuple per demand and server size, shared by every such placement)
            counts = _WHOLE_COUNTS[g, max_cap] = (max_cap,) * (n - 1) + (g - (n - 1) * max_cap,)
        return Placement(tuple(np.flatnonzero(whole)[:n].tolist()), counts)
    out = whole_servers(free, cap, g)
    return None if out is None else Placement.of(out)


class FreeIndex:
    """The servers by free GPU count, for one placement walk over the free-GPU array ``free``: the
    [`consolidated`][optsched.sim.fitting.consolidated] rule answered from sorted lists of server indices (one
    per free count, each built from ``free`` at its first use) instead of a scan of every server. The walk
    keeps it in step: it takes each placement off ``free`` through [`take`][optsched.sim.fitting.FreeIndex.take]
    (or calls [`taken`][optsched.sim.fitting.FreeIndex.taken] after taking it itself): the only changes ``free``
    may see while the index is in use.

    ```pycon
    >>> free, cap = np.array([3, 1, 4, 2]), np.array([4, 4, 4, 4])
    >>> ix = FreeIndex(free, cap, 4, True)
    >>> pl = ix.consolidated(2); pl.as_dict(), pl == consolidated(2, free, cap, 4, True)
    ({3: 2}, True)
    >>> ix.take(pl); free.tolist()
    [3, 1, 4, 0]
    >>> ix.consolidated(2).as_dict(), ix.consolidated(5)
    ({0: 2}, None)

    ```
    """

    __slots__ = ("free", "cap", "max_cap", "uniform", "_by", "_last", "_counts")

    def __init__(self, free: np.ndarray, cap: np.ndarray, max_cap: int, uniform: bool = False):
        self.free, self.cap, self.max_cap, self.uniform = free, cap, max_cap, uniform
        self._by: list[list[int] | None] = [None] * (max_cap + 1)  # free count -> its servers, ascending
        self._last: tuple | None = None  # (placement, free count) of the last one-server answer
        # the free counts a one-server job of g GPUs may take, in order of preference (g, g + 1, ..., max_cap)
        counts = _COUNTS.get(max_cap)
        if counts is None:
            counts = _COUNTS[max_cap] = tuple(tuple(range(g, max_cap + 1)) for g in range(max_cap + 1))
        self._counts = counts

    def _bucket(self, f: int) -> list[int]:
        b = self._by[f]
        if b is None:
            b = self._by[f] = (self.free == f).nonzero()[0].tolist()  # (np.flatnonzero's answer, without its wrapper)
        return b

    def consolidated(self, g: int) -> Placement | None:
        """``consolidated(g, free, cap, max_cap, uniform)`` on the current ``free`` (the same placement)."""
        max_cap = self.max_cap
        if g <= max_cap:
            by = self._by
            for f in range(g, max_cap + 1):  # the fewest free >= g, then the lowest index
                b = by[f]
                if b is None:
                    b = self._bucket(f)
                if b:
                    pl = Placement.one(b[0], g)
                    self._last = (pl, f)
                    return pl
            return None
        if not self.uniform:
            return consolidated(g, self.free, self.cap, max_cap)
        whole = self._bucket(max_cap)
        n = -(-g // max_cap)
        if len(whole) < n:
            return None
        counts = _WHOLE_COUNTS.get((g, max_cap))
        if counts is None:
            counts = _WHOLE_COUNTS[g, max_cap] = (max_cap,) * (n - 1) + (g - (n - 1) * max_cap,)
        return Placement(tuple(whole[:n]), counts)

    def claim(self, g: int) -> Placement | None:
        """[`consolidated`][optsched.sim.fitting.FreeIndex.consolidated] of ``g`` GPUs and, if found, its
        [`take`][optsched.sim.fitting.FreeIndex.take] at once (a walk takes every placement its finder gives):
        the same placement, ``free`` and index as the two calls.

        ```pycon
        >>> free = np.array([3, 1, 4, 2])
        >>> ix = FreeIndex(free, np.array([4, 4, 4, 4]), 4, True)
        >>> ix.claim(2).as_dict(), free.tolist(), ix.claim(2).as_dict(), ix.claim(5)
        ({3: 2}, [3, 1, 4, 0], {0: 2}, None)

        ```
        """
        max_cap = self.max_cap
        if g <= max_cap:
            by = self._by
            for f in self._counts[g]:  # the fewest free >= g, then the lowest index
                b = by[f]
                if b is None:
                    b = self._bucket(f)
                if b:
                    s = b[0]
                    del b[0]
                    self._last = None
                    self.free[s] = f - g
                    b = by[f - g]
                    if b is not None:
                        insort(b, s)
                    pl = _ONE.get((s, g))  # (Placement.one's cache, read here first: a launch each)
                    return Placement.one(s, g) if pl is None else pl
            return None
        pl = self.consolidated(g)
        if pl is not None:
            self.take(pl)
        return pl

    def take(self, placement: Placement) -> None:
        """Take ``placement``'s GPUs off ``free`` and move its servers to their new counts."""
        last = self._last
        if last is not None:
            self._last = None
            f = last[1]
            b = self._by[f]
            s = placement.servers[0]
            if last[0] is placement and b and b[0] == s:  # the last answer: the first server of its list
                c = placement.counts[0]
                self.free[s] = f - c
                del b[0]
                b = self._by[f - c]
                if b is not None:
                    insort(b, s)
                return
        free = self.free
        for s, c in zip(placement.servers, placement.counts):
            free[s] -= c
        self.taken(placement)

    def taken(self, placement: Placement) -> None:
        """``placement``'s GPUs have just been taken off ``free``: move its servers to their new counts."""
        free, by = self.free, self._by
        self._last = None
        for s, c in zip(placement.servers, placement.counts):
            new = int(free[s])
            b = by[new + c]
            if b is not None:
                del b[bisect_left(b, s)]
            b = by[new]
            if b is not None:
                insort(b, s)


def first_free(free: Free, g: int) -> dict[int, int] | None:
    """The first free GPUs in GPU-id order (servers by index), or None."""
    f = np.asarray(free)
    csum = np.cumsum(f)
    if not len(csum) or csum[-1] < g:
        return None
    last = int(np.searchsorted(csum, g))
    out = {int(s): int(f[s]) for s in range(last) if f[s] > 0}
    out[last] = g - int(csum[last - 1] if last else 0)
    return out


def _ordered(free: Free, g: int, order: Free) -> dict[int, int] | None:
    out, need = {}, int(g)
    if len(order) <= 32:  # a few servers: read one by one
        for s in order:
            f = int(free[s])
            if f <= 0:
                continue
            take = f if f < need else need
            out[int(s)] = take
            need -= take
            if need == 0:
                return out
        return None
    # many: the servers with free GPUs, in the given order, read as Python ints at once (the same answer)
    fa = np.asarray(free)
    if fa.dtype.kind not in "iu":
        fa = fa.astype(np.int64)
    o = np.asarray(order, dtype=np.int64)
    o = o[fa[o] > 0]
    for s, f in zip(o.tolist(), fa[o].tolist()):
        take = f if f < need else need
        out[s] = take
        need -= take
        if need == 0:
            return out
    return None


def fragments_first(free: Free, g: int) -> dict[int, int] | None:
    """Servers by free GPUs ascending (ties by index), taking their free GPUs until ``g``; None if too few."""
    return _ordered(free, g, np.argsort(np.asarray(free), kind="stable"))


def most_free_first(free: Free, g: int) -> dict[int, int] | None:
    """Servers by free GPUs descending (ties by index), taking their free GPUs until ``g``; None if too few."""
    return _ordered(free, g, np.argsort(-np.asarray(free), kind="stable"))


def spread(free: Free, g: int) -> dict[int, int] | None:
    """One GPU at a time, round-robin over the servers with free GPUs, most free first; None if too few."""
    f = np.asarray(free)
    if f.sum() < g:
        return None
    left = f.copy()
    take = np.zeros_like(f)
    order = np.argsort(-f, kind="stable")
    need = g
    while need:
        for s in order:
            if left[s] > 0:
                left[s] -= 1
                take[s] += 1
                need -= 1
                if need == 0:
                    break
    return {int(s): int(n) for s, n in enumerate(take) if n}
