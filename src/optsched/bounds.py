"""Paper 000's guarantees as functions of the instance, and certified lower bounds on the optimal makespan.

Everything here is computed from the same per-iteration model the evaluator uses (:mod:`optsched.perf.rar`),
so a bound and a score never disagree on a rounding. How each quantity is computed, and which of the paper's
statements hold for the model as written, is documented in ``docs/algorithms/sjf-bco.md`` (section
"Guarantees verified"); the makespan lower bound is proved in ``formulations/rar-feasibility-milp.md``.

Placement classes and contention levels
    tau_j (eq. 8) depends on a placement only through its number of servers n, and on the other jobs only
    through the contention p (eq. 6). A job can use n = 1 server iff some server has G_j GPUs, and
    n in [max(2, fewest servers holding G_j GPUs), min(G_j, |S|)] servers otherwise; a split job (n >= 2)
    meets p in 1 .. ``max_contention(inst)`` (it counts itself), a single-server job has p = 0.
    :func:`phi_table` tabulates floor(1/tau) over these (n, p) pairs.

>>> from optsched.generate import tiny_rar_example
>>> inst = tiny_rar_example()
>>> placement_classes(inst, inst.jobs[0])
(1, 2)
>>> duration_range(inst, inst.jobs[0])       # (fewest, most) slots job j0 can take
(5, 7)
>>> n_g(inst), makespan_lower_bound(inst) <= 6
(4, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping

from .perf.rar import iteration_time, iterations_per_slot, max_contention
from .problems.rar import RarInstance, RarJob


# -- placement classes, phi tables, durations --------------------------------------------------------------
def placement_classes(inst: RarInstance, job: RarJob) -> tuple[int, ...]:
    """The numbers of servers n a placement of ``job`` can span on ``inst``'s cluster, ascending."""
    caps = sorted((s.gpus for s in inst.cluster.servers), reverse=True)
    out = []
    if job.gpus <= caps[0]:
        out.append(1)
    fewest = max(2, inst.cluster.min_servers_for(job.gpus))
    out.extend(range(fewest, min(job.gpus, len(caps)) + 1))
    return tuple(out)


def contention_levels(inst: RarInstance, n_servers: int) -> range:
    """The contention values p a job on ``n_servers`` servers can meet: 0 alone on one server, else 1..P."""
    return range(0, 1) if n_servers <= 1 else range(1, max_contention(inst) + 1)


def phi_table(inst: RarInstance, job: RarJob) -> dict[int, tuple[int, ...]]:
    """n -> (phi at p = 0, 1, ..., P): iterations per slot, floor(1/tau), exactly as the evaluator computes them.

    For n = 1 the row is constant (a job on one server has no contention); for n >= 2 the entry at p = 0 equals
    the one at p = 1 (k = max(1, xi_1 p) gives the full share either way) so that a table lookup with p = 0 is
    harmless.
    """
    return _phi_table(inst, job)


@lru_cache(maxsize=4096)
def _phi_table(inst: RarInstance, job: RarJob) -> dict[int, tuple[int, ...]]:
    top = max_contention(inst)
    table = {}
    for n in placement_classes(inst, job):
        row = [iterations_per_slot(iteration_time(inst, job, n, max(p, 1 if n > 1 else 0)))
               for p in range(top + 1)]
        table[n] = tuple(row)
    return table


def phi_range(inst: RarInstance, job: RarJob) -> tuple[int, int]:
    """(fewest, most) iterations per slot ``job`` can make under any placement class and contention level."""
    values = [phi for n, row in phi_table(inst, job).items() for p, phi in enumerate(row)
              if p in contention_levels(inst, n)]
    return min(values), max(values)


def duration_range(inst: RarInstance, job: RarJob) -> tuple[int, int]:
    """(d_min, d_max): the fewest and most slots ``job`` can run, ceil(F/phi_max) and ceil(F/phi_min).

    Every execution of the job takes between these many slots whatever the placement and the co-located jobs,
    since it makes between phi_min and phi_max iterations in every slot it runs.
    """
    lo, hi = phi_range(inst, job)
    return -(-job.iterations // hi), -(-job.iterations // lo)


# -- certified makespan lower bounds ----------------------------------------------------------------------
def n_g(inst: RarInstance) -> int:
    """n_g = max_j G_j (Theorem 1)."""
    return inst.max_job_gpus


def makespan_lower_bound(inst: RarInstance) -> int:
    """A certified lower bound on the optimal makespan T*, in closed form (no solver).

    max( max_j d_min_j ,  ceil( sum_j G_j d_min_j / N ) ,  pair bound ): every job runs at least d_min_j slots
    on G_j GPUs, no slot holds more than N GPU-slots, and two jobs with G_j + G_k > N can never overlap in
    time. Proof: ``formulations/rar-feasibility-milp.md``, section "A certified makespan lower bound".
    """
    return _closed_form_lb(inst)


@lru_cache(maxsize=1024)
def _closed_form_lb(inst: RarInstance) -> int:
    n_gpus = inst.cluster.total_gpus
    dmin = [duration_range(inst, j)[0] for j in inst.jobs]
    lb = max(dmin)
    lb = max(lb, -(-sum(j.gpus * d for j, d in zip(inst.jobs, dmin)) // n_gpus))
    # jobs of more than N/2 GPUs pairwise exclude each other in time: they all run one after another
    big = [d for j, d in zip(inst.jobs, dmin) if 2 * j.gpus > n_gpus]
    lb = max(lb, sum(big))
    return int(lb)


def lower_bound(inst: RarInstance, *, lp: bool = True, time_limit: float | None = 60.0) -> int:
    """The best certified lower bound on the optimal makespan we can compute cheaply.

    The closed-form bound of :func:`makespan_lower_bound`, raised by the LP relaxation of the min max-load
    problem with the certified weights d_min_j (``optsched.exact.rar_milp.lp_lower_bound``) when ``lp``.
    Valid for every instance; used by the ``exact`` solver as ``Result.lower_bound``.
    """
    lb = makespan_lower_bound(inst)
    if lp:
        from .exact.rar_milp import lp_lower_bound

        lb = max(lb, math.ceil(lp_lower_bound(inst, time_limit=time_limit) - 1e-9))
    return int(lb)
