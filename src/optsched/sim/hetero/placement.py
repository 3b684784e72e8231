"""Placement helpers on typed clusters: a consolidated probe placement (to ask a performance model for a time) and
a placement of g GPUs within one GPU type (one server, else whole servers, else the first free GPUs).

>>> from optsched.cluster import parse_cluster
>>> from optsched.sim.state import ClusterState
>>> cs = ClusterState(parse_cluster("V100:2x4,K80:2x2"))
>>> probe_placement(cs, 1, 3).as_dict(), place_on_type(cs, cs.free.copy(), 0, 6).as_dict()
({2: 2, 3: 1}, {0: 4, 1: 2})
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..state import ClusterState, Placement

__all__ = ["bound_perf_ok", "place_on_type", "probe_placement"]


def bound_perf_ok(perf: Any, cs: ClusterState) -> bool:
    """True if ``perf`` knows the GPU type of every server (always true on a cluster of one type)."""
    if not cs.typed:
        return True
    types = getattr(perf, "server_types", None)
    return types is not None and tuple(types) == tuple(s.gpu_type for s in cs.cluster.servers)


def probe_placement(cs: ClusterState, k: int, g: int) -> Placement:
    """A consolidated placement of ``g`` GPUs on type ``k`` in an empty cluster (to ask a model for a time)."""
    idx = np.flatnonzero(cs.type_mask(k))
    caps = cs.capacity[idx]
    fit = idx[caps >= g]
    if len(fit):
        return Placement.of({int(fit[np.argmin(cs.capacity[fit])]): g})
    out, need = {}, g
    for s in idx[np.argsort(-caps, kind="stable")]:
        take = int(min(cs.capacity[s], need))
        out[int(s)] = take
        need -= take
        if need == 0:
            break
    return Placement.of(out)


def place_on_type(cs: ClusterState, free: np.ndarray, k: int, g: int) -> Placement | None:
    """``g`` GPUs among the free GPUs of type ``k``: one server (best fit), else whole free servers (largest
    first), else the first free GPUs of the type; None if the type has fewer than ``g`` free GPUs."""
    mask = cs.type_mask(k)
    f = np.where(mask, free, 0)
    if f.sum() < g:
        return None
    cand = np.where(f >= g, f, np.iinfo(np.int64).max)
    s = int(cand.argmin())
    if f[s] >= g:
        return Placement.of({s: g})
    whole = np.flatnonzero(mask & (free == cs.capacity))
    if cs.capacity[whole].sum() >= g:
        out, need = {}, g
        for s in whole[np.argsort(-cs.capacity[whole], kind="stable")]:
            take = int(min(cs.capacity[s], need))
            out[int(s)] = take
            need -= take
            if need == 0:
                return Placement.of(out)
    csum = np.cumsum(f)
    last = int(np.searchsorted(csum, g))
    out = {int(s): int(f[s]) for s in range(last) if f[s] > 0}
    out[last] = g - int(csum[last - 1] if last else 0)
    return Placement.of(out)
