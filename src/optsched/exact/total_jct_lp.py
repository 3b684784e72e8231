"""A time-slot LP lower bound for total (weighted) completion time (paper 001's problem A), certified by its dual.

The bound is proved in ``docs/formulations/total-jct.md`` ("Time-slot LP bound"). In short: cut time into slots
of width ``delta``; variable ``y[j, a]`` is the time job j runs inside slot a (at most the slot's length after
the release). Every schedule, with each job shortened to its shortest mode, gives a feasible ``y``: each job runs
``d_j`` in all; per slot, ``sum_j g_j y[j, a] <= G * delta`` (GPUs) and, for every *wide class* (jobs with
``g_j (k + 1) > G``, of which at most k run at once), ``sum_{j in class} y[j, a] <= k * delta``; and its
completion ``C_j = M_j + d_j / 2`` where the mean busy time ``M_j`` is at least
``(1 / d_j) sum_a y[j, a] * max(r_j, start of slot a)``. A last slot from ``T * delta`` to infinity has no
capacity rows (dropping rows only relaxes). So the LP's minimum of ``sum_j w_j (M_j + d_j / 2)`` is at most the
optimum. The returned value is not the solver's floating-point objective: it is the weak-duality value of the
solver's dual vector (any dual vector with the right signs gives a valid bound), recomputed here, lowered by a
relative 1e-9 and rounded up (objectives are integers).

```pycon
>>> from optsched.generators.total_jct import random_total_jct_instance
>>> from optsched.exact.total_jct_bnb import root_lower_bound
>>> inst = random_total_jct_instance(6, 0)
>>> lp_lower_bound(inst) >= inst.trivial_lower_bound()
True

```
"""

from __future__ import annotations

import math

from ..algorithms.total_jct import greedy_total_jct
from ..errors import InstanceError
from ..problems.total_jct import TotalJctInstance

__all__ = ["lp_lower_bound", "wide_classes"]


def wide_classes(inst: TotalJctInstance, jobs: list[int]) -> list[tuple[frozenset[int], int]]:
    """Every distinct class ``{j in jobs : g_j (k + 1) > G}`` with more than k members, paired with its k: at
    most k of its jobs run at once (k + 1 of them need more than the G GPUs of the cluster)."""
    G = inst.cluster.total_gpus
    out: list[tuple[frozenset[int], int]] = []
    seen: set[frozenset[int]] = set()
    for k in range(1, G):
        cls = frozenset(i for i in jobs if inst.jobs[i].gpus * (k + 1) > G)
        if len(cls) > k and cls not in seen:
            seen.add(cls)
            out.append((cls, k))
    return out


def lp_lower_bound(inst: TotalJctInstance, *, slots: int = 2000, delta: int | None = None) -> int:
    """A lower bound on the optimal sum_j w_j C_j of ``inst`` from the time-slot LP of the module docstring.

    ``slots``: the number of capacity slots (of equal width ``delta``, by default the greedy schedule's last
    completion divided by ``slots``, rounded up) before the unconstrained last slot; finer slots give a larger
    bound and a larger LP (about ``slots`` x jobs variables). Solved with HiGHS (SciPy); the value is certified
    by weak duality (module docstring), so a solver inaccuracy can only weaken it.
    """
    import numpy as np
    import scipy.sparse as sp
    from scipy.optimize import linprog

    if not isinstance(slots, int) or isinstance(slots, bool) or slots < 1:
        raise InstanceError(f"must be a positive integer, got {slots!r}", field="slots")
    jobs = inst.jobs
    const = 0.0  # zero-duration jobs: w r; every LP job: w d / 2
    lp_jobs = []
    for i, j in enumerate(jobs):
        if j.weight > 0 and j.min_duration > 0:
            lp_jobs.append(i)
            const += j.weight * j.min_duration / 2
        elif j.min_duration == 0:
            const += j.weight * j.release
        # a zero-weight job with work: left out (dropping a job only frees capacity)
    if not lp_jobs:
        return math.ceil(const)
    G = inst.cluster.total_gpus
    if delta is None:
        g = greedy_total_jct(inst)
        span = max(g[j.id][2] + j.modes[g[j.id][0]].duration for j in jobs)
        delta = max(1, math.ceil(span / slots))
    elif not isinstance(delta, int) or isinstance(delta, bool) or delta < 1:
        raise InstanceError(f"must be a positive integer, got {delta!r}", field="delta")
    T = max(1, math.ceil(max(max(jobs[i].release for i in lp_jobs) + 1, (slots * delta)) / delta))
    classes = wide_classes(inst, lp_jobs)
    cost: list[float] = []
    upper: list[float] = []
    eq_r: list[int] = []
    ub_r: list[int] = []
    ub_c: list[int] = []
    ub_v: list[float] = []
    v = 0
    for row, i in enumerate(lp_jobs):
        j = jobs[i]
        rate = j.weight / j.min_duration
        member = [c for c, (cls, _) in enumerate(classes) if i in cls]
        for a in range(T + 1):
            lo, hi = a * delta, (a + 1) * delta
            if a < T and hi <= j.release:
                continue
            lo = max(lo, j.release)
            cost.append(rate * lo)
            upper.append(float(j.min_duration) if a == T else float(min(hi - lo, j.min_duration)))
            eq_r.append(row)
            if a < T:  # the last slot has no capacity rows
                ub_r.append(a)
                ub_c.append(v)
                ub_v.append(float(j.gpus))
                for c in member:
                    ub_r.append(T * (1 + c) + a)
                    ub_c.append(v)
                    ub_v.append(1.0)
            v += 1
    b_eq = np.array([float(jobs[i].min_duration) for i in lp_jobs])
    b_ub = np.array([float(G * delta)] * T + [float(k * delta) for _, k in classes for _ in range(T)])
    A_eq = sp.csr_matrix((np.ones(v), (np.array(eq_r), np.arange(v))), shape=(len(lp_jobs), v))
    A_ub = sp.csr_matrix((np.array(ub_v), (np.array(ub_r), np.array(ub_c))), shape=(len(b_ub), v))
    cvec = np.array(cost)
    u = np.array(upper)
    res = linprog(cvec, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=np.column_stack([np.zeros(v), u]),
                  method="highs")
    if res.status != 0:  # pragma: no cover - the LP is feasible and bounded by construction
        return inst.trivial_lower_bound()
    lam = np.asarray(res.eqlin.marginals, dtype=float)
    mu = np.minimum(np.asarray(res.ineqlin.marginals, dtype=float), 0.0)
    reduced = cvec - A_eq.T @ lam - A_ub.T @ mu
    dual = float(b_eq @ lam + b_ub @ mu + np.minimum(reduced, 0.0) @ u) + const
    bound = math.ceil(dual - 1e-9 * max(1.0, abs(dual)))
    return max(bound, inst.trivial_lower_bound())  # both are bounds
