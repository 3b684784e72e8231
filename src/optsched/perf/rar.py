"""Paper 000's per-iteration time under contention (eqs. 6-9), in slots.

Resolutions of the digest's open points (``docs/algorithms/sjf-bco.md``):

* k = max(1, xi_1 * p) so that a job alone on its links keeps its full bandwidth (f(alpha, 1) = 1);
* p_j counts the jobs active in the slot that are split over several servers and share one of j's servers
  (j included); a job on one server has p_j = 0 and uses the intra-server bandwidth;
* iterations per slot phi = floor(1/tau) (eq. 9), computed once here so every caller agrees exactly.

>>> f_degradation(2.0, 0.5)
2.5
>>> iterations_per_slot(0.25), iterations_per_slot(0.3)
(4, 3)
"""

from __future__ import annotations

import math
from typing import Mapping

from ..problems.rar import RarInstance, RarJob

# floor(1/tau) is taken with this slack so that tau = 1/n computed in floating point still gives n.
_FLOOR_EPS = 1e-9


def f_degradation(k: float, alpha: float) -> float:
    """f(alpha, k) = k + alpha (k - 1): bandwidth degradation with k contending jobs (section 4.1)."""
    return k + alpha * (k - 1.0)


def contention_k(p: int, xi1: float) -> float:
    """k = max(1, xi_1 * p) ([D] of digest section 1)."""
    return max(1.0, xi1 * p)


def iteration_time(inst: RarInstance, job: RarJob, n_servers: int, p: int) -> float:
    """tau_j of eq. (8) for ``job`` spread over ``n_servers`` servers with contention ``p``.

    tau = 2(w-1)m/(wB) + (w-1)m/(wC) + xi_2 * n_servers + Delta^f M + Delta^b, with w = G_j and
    B = b^i on one server, b^e / f(alpha, k) across servers.
    """
    w = job.gpus
    if n_servers <= 1:
        bandwidth = inst.cluster.intra_bandwidth
    else:
        bandwidth = inst.cluster.inter_bandwidth / f_degradation(contention_k(p, inst.contention_xi),
                                                                 inst.degradation_alpha)
    ring = (w - 1) * job.gradient_size / w
    return (2.0 * ring / bandwidth + ring / inst.reduce_speed
            + inst.overhead_xi * max(1, n_servers) + job.compute_time)


def iterations_per_slot(tau: float) -> int:
    """phi = floor(1/tau) (eq. 9)."""
    return math.floor(1.0 / tau + _FLOOR_EPS)


def max_contention(inst: RarInstance) -> int:
    """Largest p any job can see: split jobs sharing one server, at most one per GPU of the largest server."""
    split_capable = sum(1 for j in inst.jobs if j.gpus >= 2)
    return max(1, min(inst.cluster.max_server_gpus, split_capable))


def tau_bounds(inst: RarInstance, job: RarJob, explain: bool = False):
    """(tau_min, tau_max) over every placement and every contention level the job can meet.

    These are section 5's bounds (number of servers in [1, G_j], bandwidth in [b^e/f(alpha, k_max), b^i])
    restricted to what the cluster allows: a single-server placement only if a server has G_j GPUs, at most
    min(G_j, |S|) servers, at least the fewest servers holding G_j GPUs.  With ``explain`` a third item says
    which placement gives the maximum.
    """
    cluster = inst.cluster
    options: list[tuple[float, str]] = []
    if job.gpus <= cluster.max_server_gpus:
        options.append((iteration_time(inst, job, 1, 0), "one server"))
    most = min(job.gpus, len(cluster.servers))
    if most >= 2:
        fewest = max(2, cluster.min_servers_for(job.gpus))
        p = max_contention(inst)
        options.append((iteration_time(inst, job, fewest, 1), f"{fewest} servers, no contention"))
        options.append((iteration_time(inst, job, most, p), f"{most} servers, contention p={p}"))
    lo = min(t for t, _ in options)
    hi, why = max(options)
    return (lo, hi, why) if explain else (lo, hi)


def contention(placements: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    """p_j of eq. (6) for the jobs active in one slot.

    ``placements`` maps each active job to its GPUs per server. For a job split over several servers,
    p_j = max over its servers of the number of split jobs on that server (itself included); 0 otherwise.

    >>> contention({"a": {"s0": 1, "s1": 1}, "b": {"s1": 2, "s2": 1}, "c": {"s2": 4}})
    {'a': 2, 'b': 2, 'c': 0}
    """
    split = {j: pl for j, pl in placements.items() if sum(1 for n in pl.values() if n > 0) > 1}
    per_server: dict[str, int] = {}
    for pl in split.values():
        for s, n in pl.items():
            if n > 0:
                per_server[s] = per_server.get(s, 0) + 1
    return {j: (max(per_server[s] for s, n in pl.items() if n > 0) if j in split else 0)
            for j, pl in placements.items()}


def phi_for(inst: RarInstance, job: RarJob, placement: Mapping[str, int], p: int) -> int:
    """Iterations per slot of ``job`` on ``placement`` with contention ``p``."""
    n_servers = sum(1 for n in placement.values() if n > 0)
    return iterations_per_slot(iteration_time(inst, job, n_servers, p))
