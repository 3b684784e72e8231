"""Paper 000's per-iteration time under contention (eqs. 6-9), in slots: the model every RAR-DDLS scorer uses.

The scalar part (tau of eq. 8 for a job on n servers at contention p, phi = floor(1/tau) of eq. 9, the bounds
of section 5) is defined with the problem in [`optsched.problems.rar`][] (validation needs it) and re-exported
here; this module adds the per-slot contention of a set of active jobs (eq. 6). Resolutions of the digest's
open points (``docs/algorithms/sjf-bco.md``):

* k = max(1, xi_1 * p) so that a job alone on its links keeps its full bandwidth (f(alpha, 1) = 1);
* p_j counts the jobs active in the slot that are split over several servers and share one of j's servers
  (j included); a job on one server has p_j = 0 and uses the intra-server bandwidth;
* iterations per slot phi = floor(1/tau) (eq. 9), computed once so every caller agrees exactly.

```pycon
>>> f_degradation(2.0, 0.5)
2.5
>>> iterations_per_slot(0.25), iterations_per_slot(0.3)
(4, 3)

```
"""

from __future__ import annotations

from typing import Mapping

from ..problems.rar import (
    RarInstance,
    RarJob,
    contention_k,
    f_degradation,
    iteration_time,
    iterations_per_slot,
    max_contention,
    tau_bounds,
)

__all__ = ["contention", "contention_binds", "contention_k", "f_degradation", "iteration_time",
           "iterations_per_slot", "max_contention", "phi_for", "tau_bounds"]


def contention(placements: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    """p_j of eq. (6) for the jobs active in one slot.

    ``placements`` maps each active job to its GPUs per server. For a job split over several servers,
    p_j = max over its servers of the number of split jobs on that server (itself included); 0 otherwise.

    ```pycon
    >>> contention({"a": {"s0": 1, "s1": 1}, "b": {"s1": 2, "s2": 1}, "c": {"s2": 4}})
    {'a': 2, 'b': 2, 'c': 0}

    ```
    """
    split = {j: pl for j, pl in placements.items() if sum(1 for n in pl.values() if n > 0) > 1}
    per_server: dict[str, int] = {}
    for pl in split.values():
        for s, n in pl.items():
            if n > 0:
                per_server[s] = per_server.get(s, 0) + 1
    return {j: (max(per_server[s] for s, n in pl.items() if n > 0) if j in split else 0)
            for j, pl in placements.items()}


def contention_binds(inst: RarInstance) -> bool:
    """Can contention change some job's speed in ``inst``? Only if k = max(1, xi_1 p) exceeds 1 at the largest
    reachable p ([`max_contention`][optsched.perf.rar.max_contention]; k grows with p). When it does not, every
    split job has the bandwidth of p = 1 whatever runs beside it, so a scorer need not re-rate a job's neighbours
    when it starts or ends.

    ```pycon
    >>> from optsched.generators.rar import random_rar_instance
    >>> inst = random_rar_instance(20, 4, 0)
    >>> contention_binds(inst), contention_binds(random_rar_instance(20, 4, 0, contention_xi=1.0))
    (False, True)

    ```
    """
    return contention_k(max_contention(inst), inst.contention_xi) > 1.0


def phi_for(inst: RarInstance, job: RarJob, placement: Mapping[str, int], p: int) -> int:
    """Iterations per slot of ``job`` on ``placement`` with contention ``p``."""
    n_servers = sum(1 for n in placement.values() if n > 0)
    return iterations_per_slot(iteration_time(inst, job, n_servers, p))
