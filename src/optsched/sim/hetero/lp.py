"""Gavel's allocation LPs over the fraction of time each job spends on each GPU type (``docs/formulations/gavel.md``).

Inputs are plain arrays: ``T`` (jobs x types) the throughput of every job on every GPU type when it holds its
``z`` GPUs of that type (iterations per second; 0 where it may not run), ``z`` the GPUs each job needs (Gavel's
scale factor), ``N`` the GPUs of each type. The unknown ``x[m, k]`` is the fraction of wall-clock time job ``m``
spends on type ``k``; every allocation satisfies Gavel's base constraints (Narayanan et al., OSDI 2020,
section 4.1):

* ``0 <= x[m, k] <= 1``, and ``x[m, k] = 0`` where ``T[m, k] = 0`` or ``z[m] > N[k]`` (a job never spans types);
* ``sum_k x[m, k] <= 1`` (a job runs on at most one type at a time);
* ``sum_m z[m] x[m, k] <= N[k]`` (a type's GPUs are not over-subscribed on average).

Objectives (both are single LPs; Gavel's code bisects over the makespan instead, we substitute ``u = 1/T``):

* [`max_min_fairness`][optsched.sim.hetero.lp.max_min_fairness]: heterogeneity-aware LAS. Maximise ``t`` with ``sum_k
  T[m,k] x[m,k] >= t Teq[m]`` for
  every job, ``Teq`` the throughput of its equal share of the cluster
  ([`equal_share_throughput`][optsched.sim.hetero.lp.equal_share_throughput]); the equal
  share is feasible with ``t = 1``, so ``t* >= 1``: every job does at least as well as on its equal share (Gavel's
  sharing incentive).
* [`min_makespan`][optsched.sim.hetero.lp.min_makespan]: finish every job's remaining work ``R`` as early as possible if
  the allocation held:
  maximise ``u`` with ``sum_k T[m,k] x[m,k] >= R[m] u``; the makespan is ``1 / u*``.

``efficiency=True`` (default) adds a second LP that keeps the first optimum (``t >= t* (1 - 1e-9)``) and maximises
the sum of the jobs' normalised throughputs, so that no capacity is left idle that some job could use (a
single max-min LP is indifferent to everything but its bottleneck). ``aggregate=True`` (max-min only) solves one
row per class of identical jobs (same throughputs, GPUs and equal share): an exact reformulation, since averaging
an optimal allocation over identical jobs keeps it feasible and optimal (both LPs are symmetric in them).

Solvers: ``"glop"`` (OR-Tools' GLOP in process, the matrix handed over in one call; the default) and ``"highs"``
(HiGHS through PuLP, out of process: the cross-check of the tests). With ``"glop"``, one GPU type, the efficiency
phase and room for every job at once, the answer (every x = 1, the optimum min T / c) is written down without an LP:
it is the LP's unique optimum, which GLOP returns bit for bit (``docs/formulations/gavel.md``). ``"closed-form"``
(opt-in) is ``"glop"`` plus, on one GPU type without room for every job, the LPs' exact optimum as a fractional
knapsack (``_knapsack``) instead of GLOP: about 13 ms of CPU less per decision at 500-800 jobs, but GLOP's answer
differs from the exact one by its tolerances (up to about 1e-8 relative: which of two nearly optimal vertices it
stops at), and Gavel's realisation breaks priority ties on ``x``, so per-job results can differ from ``"glop"``'s.
``defer=True`` (with ``"glop"``; what the ``gavel`` schedulers use) returns that exact optimum where it is unique,
with ``Allocation.glop`` solving the LP with GLOP on demand: the scheduler decides on it only where GLOP's answer
would decide the same (``docs/formulations/gavel.md``, "deferring GLOP"), so its results stay GLOP's.

Two jobs, one GPU of each of two types, each job four times faster on "its" type: the equal share gives each
2.5 iterations/s; running each job on its fast type gives 4, i.e. t* = 1.6:

```pycon
>>> T = np.array([[4.0, 1.0], [1.0, 4.0]]); z = np.array([1, 1]); N = np.array([1, 1])
>>> a = max_min_fairness(T, z, N)
>>> round(a.value, 4), a.x.round(3).tolist(), equal_share_throughput(T, z, N).tolist()
(1.6, [[1.0, 0.0], [0.0, 1.0]], [2.5, 2.5])

```
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...errors import InstanceError, SolverError

SOLVERS = ("glop", "highs", "closed-form")
_KEEP = 1e-9  # phase 2 keeps t >= t* (1 - _KEEP)
#: knapsack ratios closer than this (relative) are treated as tied: the LP may then have several optima
TIE = 1e-6
#: where the LP's optimum is unique, GLOP's x is assumed within ``GLOP_TOL (1 + x)`` of it, and exactly 1.0 where
#: it is 1.0 (at most 4.3e-9 and always so over the 1,719 such LPs of a 100,000-job run, 4e-9 on crowded ones;
#: ``Gavel.verify`` checks it wherever it is relied on)
GLOP_TOL = 1e-7


@dataclass
class Allocation:
    """An LP's answer: ``x`` (jobs x types time fractions), ``value`` (t* or u*), the objective's name, the
    number of LPs and rows solved, and the wall time spent building (``build_s``) and solving (``solve_s``).

    ``glop``, when set (``defer=True``, one GPU type without room, a unique optimum): ``x`` is the LP's exact
    optimum written down as a fractional knapsack, standing in for GLOP's answer, which differs from it by GLOP's
    tolerances ([`GLOP_TOL`][optsched.sim.hetero.lp.GLOP_TOL]); ``glop()`` solves the LP with GLOP and returns its
    [`Allocation`][optsched.sim.hetero.lp.Allocation] (what ``defer=False`` returns)."""

    x: np.ndarray
    value: float
    objective: str
    lps: int = 0
    rows: int = 0
    build_s: float = 0.0
    solve_s: float = 0.0
    info: dict = field(default_factory=dict)
    glop: Callable[[], Allocation] | None = field(default=None, repr=False, compare=False)

    @property
    def wall_s(self) -> float:
        return self.build_s + self.solve_s

    def throughputs(self, T: np.ndarray) -> np.ndarray:
        """Each job's effective throughput ``sum_k T[m,k] x[m,k]``."""
        return (np.asarray(T, dtype=float) * self.x).sum(axis=1)


def _check(T, z, N) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    T = np.asarray(T, dtype=float)
    z = np.asarray(z, dtype=float)
    N = np.asarray(N, dtype=float)
    if T.ndim != 2 or z.shape != (T.shape[0],) or N.shape != (T.shape[1],):
        raise InstanceError(f"shapes must be T (jobs x types), z (jobs), N (types); got {T.shape}, {z.shape}, "
                            f"{N.shape}", field="T")
    if not (np.all(np.isfinite(T)) and np.all(T >= 0)):
        raise InstanceError("throughputs must be finite and >= 0", field="T")
    if not (np.all(z >= 1) and np.all(np.isfinite(z))):
        raise InstanceError("every job needs at least one GPU", field="z")
    if not (np.all(N >= 0) and np.all(np.isfinite(N))):
        raise InstanceError("GPU counts per type must be >= 0", field="N")
    # a job needing more GPUs than a type has can never run on it (a job never spans types)
    T = np.where(z[:, None] <= N[None, :], T, 0.0)
    return T, z, N


EQUAL_SHARES = ("cluster", "gavel-code")


def equal_share_throughput(T, z, N, share: str = "cluster") -> np.ndarray:
    """``Teq[m]``: job m's throughput on its equal share of the cluster, spread over the types in proportion to
    their GPUs, for a time share of

    * ``"cluster"`` (default, Gavel's paper, section 4.1): ``min(1, G / (M z[m]))`` of the time, its 1/M of all
      the cluster's G GPUs' time (at most all the time);
    * ``"gavel-code"`` (Gavel's published code: the proportional allocation ``N_k / M`` scaled to a row sum of at
      most 1, and the job's ratio multiplied by its scale factor): ``min(1, G / M) / z[m]``. The two agree
      when ``G <= M`` (no more GPUs than jobs); with more GPUs than jobs the code's reference is ``1 / z[m]`` of
      the time, smaller than the paper's for every job with ``z[m] > 1`` (``docs/algorithms/gavel.md``, section 3).

    ```pycon
    >>> equal_share_throughput([[2.0, 1.0]], [1], [3, 1]).tolist()
    [1.75]
    >>> equal_share_throughput([[2.0, 1.0]], [2], [3, 1], "gavel-code").tolist()  # 1/2 of the time, type 0 only
    [0.75]

    ```
    """
    T, z, N = _check(T, z, N)
    if share not in EQUAL_SHARES:
        raise InstanceError(f"must be one of {', '.join(EQUAL_SHARES)}, got {share!r}", field="share")
    return _equal_share(T, z, N, share)


def _equal_share(T: np.ndarray, z: np.ndarray, N: np.ndarray, share: str) -> np.ndarray:
    """[`equal_share_throughput`][optsched.sim.hetero.lp.equal_share_throughput] of checked arrays."""
    M, total = T.shape[0], N.sum()
    if M == 0 or total <= 0:
        return np.zeros(M)
    time_share = np.minimum(1.0, total / (M * z)) if share == "cluster" else min(1.0, total / M) / z
    return time_share * (T @ (N / total))


def _unrunnable(T: np.ndarray, needed: np.ndarray, what: str) -> None:
    """Refuse jobs that can run on no type (all their throughputs 0 once ``z > N`` is masked) but ``needed``: an
    LP would give them nothing, or be unbounded, and say nothing (issue 28)."""
    bad = np.flatnonzero((T.max(axis=1, initial=0.0) <= 0) & needed)
    if len(bad):
        raise InstanceError(f"job(s) at row(s) {bad[:10].tolist()}{' ...' if len(bad) > 10 else ''} can run on no "
                            f"GPU type (throughput 0 everywhere, or more GPUs than any type has): {what}", field="T")


def _sparse_lp(T: np.ndarray, z: np.ndarray, N: np.ndarray, c: np.ndarray, n: np.ndarray):
    """Rows: per-class row sums, capacity per type (weighted by the class sizes ``n``), and the objective rows
    ``T x - c s >= 0``. Columns: x (classes x types, upper bound 0 where T = 0) then s."""
    import scipy.sparse as sp

    M, K = T.shape
    nx = M * K
    # built row by row in CSR form (sorted column indices, explicit zeros kept), as the COO triplets
    # (one_m: x[m, :]; obj_m: T[m, :] then -c[m] on s; cap_k: z n on x[:, k]) would convert
    xi = np.arange(nx, dtype=np.int32).reshape(M, K)
    indices = np.concatenate([xi.ravel(), np.column_stack([xi, np.full(M, nx, dtype=np.int32)]).ravel(),
                              xi.T.ravel()])
    data = np.concatenate([np.ones(nx), np.column_stack([T, -c]).ravel(), np.tile(z * n, K)])
    indptr = np.concatenate([np.arange(0, nx + 1, K), nx + np.arange(1, M + 1) * (K + 1),
                             nx + M * (K + 1) + np.arange(1, K + 1) * M]).astype(np.int32)
    A = sp.csr_matrix((data, indices, indptr), shape=(2 * M + K, nx + 1))
    ub = np.append((T.ravel() > 0).astype(float), np.inf)
    lb = np.zeros(nx + 1)
    clb = np.concatenate([np.full(M, -np.inf), np.zeros(M), np.full(K, -np.inf)])
    cub = np.concatenate([np.ones(M), np.full(M, np.inf), N])
    return A, lb, ub, clb, cub


def _values(solver, model) -> np.ndarray:
    """Every variable's value, in index order: the solve helper's array when this OR-Tools has it (the same
    doubles as ``solver.values``, without a pandas Series of one Variable object per column)."""
    helper = getattr(solver, "_Solver__solve_helper", None)
    if helper is not None and hasattr(helper, "variable_values"):
        v = np.asarray(helper.variable_values(), dtype=float)
        if v.shape == (model.num_variables,):
            return v
    return solver.values(model.get_variables()).to_numpy(dtype=float)


def _solve_glop(T, z, N, c, n, efficiency: bool) -> tuple[np.ndarray, float, float, float, int]:
    from ortools.linear_solver.python import model_builder as mb

    t0 = time.perf_counter()
    M, K = T.shape
    A, lb, ub, clb, cub = _sparse_lp(T, z, N, c, n)
    obj = np.zeros(M * K + 1)
    obj[-1] = 1.0
    model = mb.Model()
    model.helper.fill_model_from_sparse_data(lb, ub, obj, clb, cub, A)
    model.helper.set_maximize(True)
    build = time.perf_counter() - t0
    t1 = time.perf_counter()
    solver = mb.Solver("glop")
    status = solver.solve(model)
    if status != mb.SolveStatus.OPTIMAL:
        raise SolverError(f"GLOP returned {status.name} on Gavel's LP")
    s_star = float(solver.value(model.var_from_index(M * K)))
    lps = 1
    if efficiency:
        # keep the optimum, maximise the sum of normalised throughputs n_m (T x)_m / c_m
        w = (T * (n / c)[:, None]).ravel()
        model.helper.set_var_lower_bound(M * K, s_star * (1.0 - _KEEP))
        model.helper.set_objective_coefficients(list(range(M * K + 1)), list(np.append(w, 0.0)))
        status = solver.solve(model)
        if status != mb.SolveStatus.OPTIMAL:
            raise SolverError(f"GLOP returned {status.name} on the second phase of Gavel's LP")
        lps = 2
    x = _values(solver, model)[:M * K].reshape(M, K)
    return x, s_star, build, time.perf_counter() - t1, lps


def _solve_highs(T, z, N, c, n, efficiency: bool) -> tuple[np.ndarray, float, float, float, int]:
    import pulp

    from ...exact._pulp import solve, var

    t0 = time.perf_counter()
    M, K = T.shape
    prob = pulp.LpProblem("gavel", pulp.LpMaximize)
    x = [[var(prob, f"x_{m}_{k}", 0, 1 if T[m, k] > 0 else 0) for k in range(K)] for m in range(M)]
    s = var(prob, "s", 0, None)
    for m in range(M):
        prob += pulp.lpSum(x[m]) <= 1, f"one_{m}"
        prob += pulp.lpSum(float(T[m, k]) * x[m][k] for k in range(K)) - float(c[m]) * s >= 0, f"obj_{m}"
    for k in range(K):
        prob += pulp.lpSum(float(z[m] * n[m]) * x[m][k] for m in range(M)) <= float(N[k]), f"cap_{k}"
    prob += s
    build = time.perf_counter() - t0
    t1 = time.perf_counter()
    st = solve(prob, "highs", gap_rel=0.0)
    if st != "optimal":
        raise SolverError(f"HiGHS returned {st} on Gavel's LP")
    s_star = float(s.value())
    lps = 1
    if efficiency:
        s.lowBound = s_star * (1.0 - _KEEP)
        prob.setObjective(pulp.lpSum(float(n[m] * T[m, k] / c[m]) * x[m][k] for m in range(M) for k in range(K)))
        st = solve(prob, "highs", gap_rel=0.0)
        if st != "optimal":
            raise SolverError(f"HiGHS returned {st} on the second phase of Gavel's LP")
        lps = 2
    xv = np.array([[x[m][k].value() or 0.0 for k in range(K)] for m in range(M)])
    return xv, s_star, build, time.perf_counter() - t1, lps


def _classes(key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct rows of ``key`` in lexicographic order (first column first), each row's class and each
    class' size: ``np.unique(key, axis=0, return_inverse=True, return_counts=True)``'s answer (equal rows are
    equal bit for bit here: no -0.0, no NaN), by one lexsort instead of a sort of structured rows.

    ```pycon
    >>> u, inv, cnt = _classes(np.array([[2.0, 1.0], [1.0, 5.0], [2.0, 1.0]]))
    >>> u.tolist(), inv.tolist(), cnt.tolist()
    ([[1.0, 5.0], [2.0, 1.0]], [1, 0, 1], [1, 2])

    ```
    """
    m = len(key)
    o = np.lexsort(key.T[::-1])
    s = key[o]
    new = np.ones(m, dtype=bool)
    new[1:] = (s[1:] != s[:-1]).any(axis=1)
    inverse = np.empty(m, dtype=np.int64)
    inverse[o] = np.cumsum(new) - 1
    return s[new], inverse, np.diff(np.append(np.flatnonzero(new), m))


def _solve(T, z, N, c, objective: str, solver: str, efficiency: bool, aggregate: bool,
           defer: bool = False) -> Allocation:
    if solver not in SOLVERS:
        raise InstanceError(f"must be one of {', '.join(SOLVERS)}, got {solver!r}", field="solver")
    M, K = T.shape
    live = np.flatnonzero(c > 0)  # jobs that can run somewhere (the others get nothing)
    if len(live) == 0 or N.sum() <= 0:
        return Allocation(np.zeros((M, K)), 0.0 if len(live) == 0 else math.inf, objective)
    Tl, zl, cl = T[live], z[live], c[live]
    # scale the objective rows so that the optimum is about 1 whatever the units (remaining iterations of 1e5-1e6
    # over throughputs of 10-50/s make u* ~ 1e-5, where HiGHS' 13-digit text output and phase 2's 1e-9 of slack
    # disagree): the equal share is feasible with ratio min(Teq/c), so the scaled optimum is >= 1
    teq = _equal_share(Tl, zl, N, "cluster")
    ok = teq > 0
    scale = float(np.min(teq[ok] / cl[ok])) if ok.any() else 1.0
    scale = scale if math.isfinite(scale) and scale > 0 else 1.0
    cl = cl * scale
    if aggregate:
        key = np.column_stack([Tl, zl, cl])
        uniq, inverse, counts = _classes(key)
        Ta, za, ca, na = uniq[:, :K], uniq[:, K], uniq[:, K + 1], counts.astype(float)
    else:
        inverse = np.arange(len(live))
        Ta, za, ca, na = Tl, zl, cl, np.ones(len(live))
    one_type = solver != "highs" and efficiency and K == 1
    closed = one_type and float((za * na).sum()) <= float(N[0])
    knapsack = one_type and not closed and (solver == "closed-form" or defer)

    def answer(xa: np.ndarray, s_star: float, build: float, solve_s: float, lps: int, method: str) -> Allocation:
        x = np.zeros((M, K))
        x[live] = np.clip(xa, 0.0, 1.0)[inverse]
        return Allocation(x, s_star * scale, objective, lps=lps, rows=len(Ta), build_s=build, solve_s=solve_s,
                          info={"solver": solver, "aggregate": aggregate, "efficiency": efficiency, "scale": scale,
                                "closed_form": method in ("all-run", "knapsack"), "method": method})

    def lp() -> Allocation:
        run = _solve_highs if solver == "highs" else _solve_glop
        return answer(*run(Ta, za, N, ca, na, efficiency), "highs" if solver == "highs" else "glop")

    if closed:
        return answer(*_all_run(Ta, ca), "all-run")
    if knapsack:
        xa, s_star, lo, build, solve_s = _knapsack_parts(Ta, za, float(N[0]), ca, na)
        if solver == "closed-form":
            return answer(xa[:, None], s_star, build, solve_s, 0, "knapsack")
        if _unique_knapsack(Ta[:, 0] / (ca * za), xa, lo):
            a = answer(xa[:, None], s_star, build, solve_s, 0, "knapsack")
            a.glop = lp
            return a
    return lp()


def _all_run(T: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, float, float, float, int]:
    """Both phases' optimum, without an LP, when there is one GPU type and every job can hold its GPUs all the
    time (``sum z n <= N``; ``docs/formulations/gavel.md``, "one type with room for every job"): phase 1's
    ``s* = min_m T[m] / c[m]`` (row m allows s <= T[m] x[m] / c[m] <= T[m] / c[m], and x = 1 attains every such
    bound at once), and phase 2's unique maximiser ``x = 1`` (it is feasible and attains every variable's upper
    bound, each with a positive weight). The answer GLOP gives there, bit for bit (tested).

    ```pycon
    >>> x, s, *_ = _all_run(np.array([[2.0], [6.0]]), np.array([1.0, 2.0]))
    >>> x.ravel().tolist(), s
    ([1.0, 1.0], 2.0)

    ```
    """
    t0 = time.perf_counter()
    s_star = float(np.min(T[:, 0] / c))
    x = np.ones(T.shape)
    return x, s_star, 0.0, time.perf_counter() - t0, 0


def _knapsack_parts(T: np.ndarray, z: np.ndarray, N: float, c: np.ndarray,
                    n: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, float, float]:
    """[`_knapsack`][optsched.sim.hetero.lp._knapsack]'s x (one value per row), s* and lower bounds ``lo``
    (``c s_lb / T``, unclipped), and its build and solve seconds."""
    t0 = time.perf_counter()
    t, zn = T[:, 0], z * n
    s_star = min(float(np.min(t / c)), N / float(np.sum(zn * c / t)))
    lo = c * (s_star * (1.0 - _KEEP)) / t
    x = np.minimum(1.0, lo)
    spare = N - float(np.sum(zn * x))
    if spare > 0:
        order = np.lexsort((np.arange(len(t)), -(t / (c * z))))
        need = (zn * (1.0 - x))[order]
        cum = np.cumsum(need)
        k = int(np.searchsorted(cum, spare, side="right"))  # order[:k] fit whole
        x[order[:k]] = 1.0
        if k < len(order):
            m = order[k]
            x[m] = min(1.0, x[m] + (spare - (float(cum[k - 1]) if k else 0.0)) / zn[m])
    return x, s_star, lo, 0.0, time.perf_counter() - t0


def _knapsack(T: np.ndarray, z: np.ndarray, N: float, c: np.ndarray,
              n: np.ndarray) -> tuple[np.ndarray, float, float, float, int]:
    """Both phases' exact optimum, without an LP, on one GPU type without room for every job
    (``docs/formulations/gavel.md``, "one type without room: a fractional knapsack"). Phase 1:
    ``s* = min(min_m T[m] / c[m], N / sum_m z[m] n[m] c[m] / T[m])``. Phase 2 with ``s >= s_lb = s* (1 - 1e-9)``:
    every x[m] at least ``lo[m] = c[m] s_lb / T[m]``, the capacity left over handed out in decreasing order of
    ``T[m] / (c[m] z[m])`` (ties: row order), each up to x = 1: a fractional knapsack. It is the LP's optimum
    exactly; GLOP's answer agrees to GLOP's tolerances (about 1e-8 relative), not bit for bit.

    ```pycon
    >>> x, s, *_ = _knapsack(np.array([[1.0], [1.0]]), np.ones(2), 1.0, np.array([30.0, 10.0]), np.ones(2))
    >>> round(1 / s, 6), x.ravel().round(6).tolist()
    (40.0, [0.75, 0.25])

    ```
    """
    x, s_star, _, build, solve_s = _knapsack_parts(T, z, N, c, n)
    return x[:, None], s_star, build, solve_s, 0


def _unique_knapsack(ratio: np.ndarray, x: np.ndarray, lo: np.ndarray) -> bool:
    """Whether the fractional knapsack's answer ``x`` (bounds ``min(1, lo) <= x <= 1``, value ``ratio`` per unit
    of capacity) is the unique optimum of phase 2 with a margin: every row that could give capacity up
    (``x > lo``) has a ratio above every other row that could take more (``x < 1``) by more than
    [`TIE`][optsched.sim.hetero.lp.TIE] relative (``docs/formulations/gavel.md``, "deferring GLOP"). With a tie
    the LP has several optima and GLOP may return any of them.

    ```pycon
    >>> lo = np.array([0.2, 0.2, 0.2])
    >>> _unique_knapsack(np.array([3.0, 2.0, 1.0]), np.array([1.0, 0.5, 0.2]), lo)
    True
    >>> _unique_knapsack(np.array([3.0, 2.0, 2.0]), np.array([1.0, 0.5, 0.2]), lo)  # rows 1 and 2 tie
    False

    ```
    """
    down, up = x > lo, x < 1.0
    both = down & up
    if int(both.sum()) > 1:
        return False
    hi_up = float(ratio[up & ~both].max(initial=-math.inf))
    lo_down = float(ratio[down & ~both].min(initial=math.inf))
    r_both = float(ratio[both][0]) if both.any() else None
    ok = lo_down > hi_up * (1.0 + TIE)
    if r_both is not None:
        ok = ok and lo_down > r_both * (1.0 + TIE) and r_both > hi_up * (1.0 + TIE)
    return bool(ok)


def max_min_fairness(T, z, N, *, solver: str = "glop", efficiency: bool = True, aggregate: bool = True,
                     share: str = "cluster", defer: bool = False) -> Allocation:
    """Gavel's heterogeneity-aware max-min fairness (LAS) LP (module docstring); ``value`` is t*, the smallest
    ratio of a job's throughput to its equal-share throughput (>= 1); ``share`` chooses the equal share
    ([`equal_share_throughput`][optsched.sim.hetero.lp.equal_share_throughput]: the paper's, or Gavel's code's). A job
    that can run on no type raises
    [`InstanceError`][optsched.errors.InstanceError] (its equal share is 0: the LP would ignore it).

    ```pycon
    >>> max_min_fairness([[1.0], [0.0]], [1, 1], [2])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    optsched.errors.InstanceError: T: job(s) at row(s) [1] can run on no GPU type ...

    ```
    """
    T, z, N = _check(T, z, N)
    _unrunnable(T, np.ones(T.shape[0], dtype=bool), "max-min would give them nothing")
    if share not in EQUAL_SHARES:
        raise InstanceError(f"must be one of {', '.join(EQUAL_SHARES)}, got {share!r}", field="share")
    return _solve(T, z, N, _equal_share(T, z, N, share), "max-min", solver, efficiency, aggregate, defer)


def min_makespan(T, z, N, remaining, *, solver: str = "glop", efficiency: bool = True,
                 defer: bool = False) -> Allocation:
    """The makespan LP (module docstring): ``value`` is u* = 1 / makespan of the remaining work ``remaining``
    (iterations per job) under the best allocation, if it held until every job finishes.

    ```pycon
    >>> a = min_makespan([[1.0], [1.0]], [1, 1], [1], [30.0, 10.0])
    >>> round(1 / a.value, 6), a.x.round(3).ravel().tolist()
    (40.0, [0.75, 0.25])

    ```
    """
    T, z, N = _check(T, z, N)
    R = np.asarray(remaining, dtype=float)
    if R.shape != (T.shape[0],) or not np.all(R >= 0) or not np.all(np.isfinite(R)):
        raise InstanceError("remaining work must be one finite number >= 0 per job", field="remaining")
    _unrunnable(T, R > 0, "their remaining work would never finish (the makespan is infinite)")
    c = np.where(T.max(axis=1, initial=0.0) > 0, R, 0.0)
    return _solve(T, z, N, c, "makespan", solver, efficiency, False, defer)


__all__ = ["EQUAL_SHARES", "SOLVERS", "Allocation", "equal_share_throughput", "max_min_fairness", "min_makespan"]
