"""MILP of paper 000's feasibility problem (14)-(16) as an optimisation: the minimum over GPU assignments of the
maximum (estimated) GPU load, through PuLP with CBC and with HiGHS; and its LP relaxation as a certified lower
bound on the optimal makespan. Mathematics and proofs: ``docs/formulations/rar-feasibility-milp.md``.

Given weights w_j (the load job j puts on each of its G_j GPUs) and N identical GPUs:

    theta*(w) = min theta   s.t.  sum_g x_jg = G_j (each job on G_j distinct GPUs),  x_jg in {0, 1},
                                  sum_j w_j x_jg <= theta  (every GPU's load, eq. 16),
                                  theta >= w_j  and  theta >= w_j + w_k if G_j + G_k > N  (valid, redundant),
                                  L_0 >= L_1 >= ... >= L_{N-1}  (GPUs are identical: symmetry breaking).

Two weightings:

* ``"estimated"``: w_j = rho-hat_j / u, the paper's (15) with SJF-BCO's estimates
  (``optsched.algorithms.sjf_bco.estimates``): theta*(w) is the paper's theta*_u of Lemma 4.
* ``"certified"``: w_j = d_min_j, the fewest slots job j can run under any placement and any contention
  ([`optsched.bounds.duration_range`][]). Then theta*(w) <= T* (the optimal makespan), and so is the LP
  relaxation: this is the certified lower bound used for large instances.

```pycon
>>> from optsched.generators.rar import tiny_rar_example
>>> r = min_max_load([4, 2], [5.0, 3.0], 8, solver="cbc")
>>> r.theta, r.status
(5.0, 'optimal')
>>> lp_lower_bound(tiny_rar_example()) <= 5
True

```
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import pulp

from ..bounds import duration_range, estimates, lp_closed_form  # noqa: F401 (lp_closed_form re-exported)
from ..errors import InstanceError
from ..problems.rar import RarInstance
from . import _pulp


@dataclass(frozen=True)
class LoadResult:
    """A min max-load solve: theta (objective), status, solver, runtime and the assignment job -> GPUs."""

    theta: float | None
    status: str
    solver: str
    runtime_s: float
    assignment: tuple[tuple[int, ...], ...] = field(default=())  # per job, the GPU indices (empty for LPs)
    relaxed: bool = False


def min_max_load(gpus: Sequence[int], weights: Sequence[float], n_gpus: int, *, solver: str = "cbc",
                 relax: bool = False, time_limit: float | None = None, symmetry: bool = True,
                 threads: int | None = 1) -> LoadResult:
    """Solve theta*(w) (or its LP relaxation with ``relax``) for jobs needing ``gpus[j]`` GPUs of ``n_gpus``."""
    if len(gpus) != len(weights):
        raise InstanceError("gpus and weights differ in length", field="weights")
    if any(g > n_gpus for g in gpus):
        raise InstanceError(f"a job needs more than the {n_gpus} GPUs available", field="gpus")
    t0 = time.perf_counter()
    J, N = range(len(gpus)), range(n_gpus)
    prob = pulp.LpProblem("min_max_gpu_load", pulp.LpMinimize)
    cat = pulp.LpContinuous if relax else pulp.LpBinary
    x = {(j, g): _pulp.var(prob, f"x_{j}_{g}", 0, 1, cat) for j in J for g in N}
    theta = _pulp.var(prob, "theta", 0, None, pulp.LpContinuous)
    prob += theta
    for j in J:
        prob += pulp.lpSum(x[j, g] for g in N) == gpus[j], f"gang_{j}"
        prob += theta >= weights[j], f"longest_{j}"
    for j in J:  # two jobs that cannot fit side by side share a GPU
        for k in J:
            if j < k and gpus[j] + gpus[k] > n_gpus:
                prob += theta >= weights[j] + weights[k], f"pair_{j}_{k}"
    load = [pulp.lpSum(weights[j] * x[j, g] for j in J) for g in N]
    for g in N:
        prob += load[g] <= theta, f"load_{g}"
    if symmetry:
        for g in range(n_gpus - 1):
            prob += load[g] >= load[g + 1], f"sym_{g}"
    status = _pulp.solve(prob, solver, time_limit, threads=threads if solver == "cbc" else None)
    value = pulp.value(theta) if status in ("optimal", "time limit") else None
    assignment: tuple[tuple[int, ...], ...] = ()
    if value is not None and not relax:
        assignment = tuple(tuple(g for g in N if (x[j, g].value() or 0) > 0.5) for j in J)
    return LoadResult(value, status, solver, time.perf_counter() - t0, assignment, relax)



def certified_weights(inst: RarInstance) -> list[float]:
    """w_j = d_min_j: the fewest slots job j can take under any placement and contention."""
    return [float(duration_range(inst, j)[0]) for j in inst.jobs]


def estimated_weights(inst: RarInstance) -> list[float]:
    """w_j = rho-hat_j / u, the paper's eq. (15), from SJF-BCO's estimates."""
    est = estimates(inst)
    return [est.rho_hat[j.id] / est.u for j in inst.jobs]


def feasibility_milp(inst: RarInstance, *, weights: str = "estimated", solver: str = "cbc", relax: bool = False,
                     time_limit: float | None = None) -> LoadResult:
    """theta*(w) of the instance, with the ``"estimated"`` (paper, theta*_u) or ``"certified"`` weights."""
    if weights not in ("estimated", "certified"):
        raise InstanceError(f"weights must be 'estimated' or 'certified', got {weights!r}", field="weights")
    w = estimated_weights(inst) if weights == "estimated" else certified_weights(inst)
    return min_max_load([j.gpus for j in inst.jobs], w, inst.cluster.total_gpus, solver=solver, relax=relax,
                        time_limit=time_limit)


def lp_lower_bound(inst: RarInstance, *, solver: str = "highs", time_limit: float | None = 60.0) -> float:
    """The LP relaxation of theta*(d_min) solved by ``solver``: a certified lower bound on the optimal makespan
    (any valid lower bound on theta*(d_min) is one; ``docs/formulations/rar-feasibility-milp.md``)."""
    r = feasibility_milp(inst, weights="certified", solver=solver, relax=True, time_limit=time_limit)
    if r.status != "optimal" or r.theta is None:
        # an LP that did not solve certifies nothing beyond the closed form, which is itself a valid bound
        return lp_closed_form([j.gpus for j in inst.jobs], certified_weights(inst), inst.cluster.total_gpus)
    return float(r.theta)


def milp_lower_bound(inst: RarInstance, *, solver: str = "highs", time_limit: float | None = 60.0) -> int | None:
    """ceil(theta*(d_min)) when the MILP is solved to optimality, else ``None``."""
    r = feasibility_milp(inst, weights="certified", solver=solver, time_limit=time_limit)
    return math.ceil(r.theta - 1e-6) if r.status == "optimal" and r.theta is not None else None


def brute_min_max_load(gpus: Sequence[int], weights: Sequence[float], n_gpus: int) -> float:
    """theta*(w) by enumerating every GPU subset per job (tiny inputs only): a third, solver-free method."""
    from itertools import combinations

    best = math.inf

    def rec(j: int, loads: list[float]) -> None:
        nonlocal best
        if max(loads) >= best:
            return
        if j == len(gpus):
            best = max(loads)
            return
        for subset in combinations(range(n_gpus), gpus[j]):
            for g in subset:
                loads[g] += weights[j]
            rec(j + 1, loads)
            for g in subset:
                loads[g] -= weights[j]

    rec(0, [0.0] * n_gpus)
    return best
