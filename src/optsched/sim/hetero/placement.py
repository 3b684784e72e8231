"""Placement helpers on typed clusters: a consolidated probe placement (to ask a performance model for a time) and
a placement of g GPUs within one GPU type (one server, else whole servers, else the first free GPUs).

```pycon
>>> from optsched.cluster import parse_cluster
>>> from optsched.sim.state import ClusterState
>>> cs = ClusterState(parse_cluster("V100:2x4,K80:2x2"))
>>> probe_placement(cs, 1, 3).as_dict(), place_on_type(cs, cs.free.copy(), 0, 6).as_dict()
({2: 2, 3: 1}, {0: 4, 1: 2})

```
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..fitting import best_fit, first_free, whole_servers
from ..state import ClusterState, Placement

__all__ = ["bound_perf_ok", "place_on_type", "probe_placement"]


def bound_perf_ok(perf: Any, cs: ClusterState) -> bool:
    """True if ``perf`` knows the GPU type of every server (always true on a cluster of one type)."""
    if not cs.typed:
        return True
    types = getattr(perf, "server_types", None)
    return types is not None and tuple(types) == tuple(s.gpu_type for s in cs.cluster.servers)


# probe placements depend only on the cluster's servers (their capacities and types never change during a
# run): one cache per ClusterState, (type, gpus) -> placement; Optimus and Gavel ask for the same few many times
_PROBES: weakref.WeakKeyDictionary[ClusterState, dict[tuple[int, int], Placement]] = weakref.WeakKeyDictionary()

# placements over several servers, one object per distinct (servers, counts) and cluster state: every run segment
# keeps its placement for the result, and Gavel relaunches jobs round after round (a million Philly jobs on 2,000
# GPUs built about 2 million such placements, 12,538 distinct of 37,355 at 100,000 jobs); capped so that a long
# run's table stays small (placements are immutable: handing out an equal object is the same placement)
_SPANS: weakref.WeakKeyDictionary[ClusterState, dict[Placement, Placement]] = weakref.WeakKeyDictionary()
_SPANS_MAX = 1 << 16
# the pieces those placements are made of, shared too: server indices above 256 are an int object each in Python
# (one per list, dict and tuple that names them), and the GPU counts of whole-server spans repeat, (4, 4), (4, 4,
# 4, 2) ... (at 300,000 Philly jobs under Gavel the placements held about 130,000 such ints and 68,000 count
# tuples); the count table is capped like the spans
_INTS: list[int] = list(range(1024))
_COUNTS: dict[tuple[int, ...], tuple[int, ...]] = {}


def probe_placement(cs: ClusterState, k: int, g: int) -> Placement:
    """A consolidated placement of ``g`` GPUs on type ``k`` in an empty cluster (to ask a model for a time): the
    best fit of one server, else whole servers ([`optsched.sim.fitting`][]). Cached per cluster state (the
    answer depends only on its servers' capacities and types, fixed for its life)."""
    cache = _PROBES.get(cs)
    if cache is None:
        cache = _PROBES[cs] = {}
    pl = cache.get((k, g))
    if pl is None:
        pl = cache[(k, g)] = _probe(cs, k, g)
    return pl


def _probe(cs: ClusterState, k: int, g: int) -> Placement:
    caps = np.where(cs.type_mask(k), cs.capacity, 0)
    s = best_fit(caps, g)
    if s is not None:
        return Placement.of({s: g})
    got = whole_servers(caps, caps, min(g, int(caps.sum())))
    assert got is not None  # every server of the type is whole in an empty cluster
    return _shared(cs, Placement.of(got))


def place_on_type(cs: ClusterState, free: np.ndarray, k: int, g: int) -> Placement | None:
    """``g`` GPUs among the free GPUs of type ``k``: one server (best fit), else whole free servers (largest
    first), else the first free GPUs of the type; None if the type has fewer than ``g`` free GPUs."""
    if cs.typed:
        mask = cs.type_mask(k)
        f, cap = np.where(mask, free, 0), np.where(mask, cs.capacity, 0)
    else:  # one type: every server (no masked copies)
        f, cap = free, cs.capacity
    if f.sum() < g:
        return None
    s = best_fit(f, g)
    if s is not None:
        return Placement.one(s, int(g))
    got = whole_servers(f, cap, g) or first_free(f, g)
    assert got is not None  # the type has g free GPUs
    return _shared(cs, Placement.of(got))


def _shared(cs: ClusterState, pl: Placement) -> Placement:
    """The one object equal to ``pl`` among the placements handed out on ``cs`` (``pl`` if it is new)."""
    spans = _SPANS.get(cs)
    if spans is None or len(spans) >= _SPANS_MAX:
        spans = _SPANS[cs] = {}
    got = spans.get(pl)
    if got is None:
        ints, top = _INTS, pl.servers[-1]
        if top >= len(ints):
            ints.extend(range(len(ints), 2 * top + 1))
        if len(_COUNTS) >= _SPANS_MAX:
            _COUNTS.clear()
        # (the new object is its own key: the dict holds no second copy of the tuples)
        got = Placement(tuple(map(ints.__getitem__, pl.servers)), _COUNTS.setdefault(pl.counts, pl.counts),
                        pl.stages)
        spans[got] = got
    return got
