"""Two LP lower bounds for total (weighted) completion time (paper 001's problem A), each certified by its dual.

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

[`start_lp_lower_bound`][optsched.exact.total_jct_lp.start_lp_lower_bound] ("Start-slot LP bound") keeps each run
in one piece instead: each job chooses one start slot, and a start in slot a surely covers the time from the slot's
last integer to the earliest start plus d_j; the same two kinds of capacity rows bound the covers.

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
from typing import Any

from ..algorithms.total_jct import greedy_total_jct
from ..errors import InstanceError
from ..problems.total_jct import TotalJctInstance

__all__ = ["LagrangianBound", "PricedRuns", "lagrangian_lower_bound", "lp_lower_bound", "start_lp_lower_bound",
           "wide_classes"]


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


def lp_lower_bound(inst: TotalJctInstance, *, slots: int = 2000, delta: int | None = None,
                   keep: dict[str, Any] | None = None) -> int:
    """A lower bound on the optimal sum_j w_j C_j of ``inst`` from the time-slot LP of the module docstring.

    ``slots``: the number of capacity slots (of equal width ``delta``, by default the greedy schedule's last
    completion divided by ``slots``, rounded up) before the unconstrained last slot; finer slots give a larger
    bound and a larger LP (about ``slots`` x jobs variables). Solved with HiGHS (SciPy); the value is certified
    by weak duality (module docstring), so a solver inaccuracy can only weaken it. ``keep``: a dict that
    receives the slot width ``delta``, the slot count ``T``, the wide ``classes`` and the capacity rows' dual
    ``prices`` (non-negative; the GPU rows, then each class's rows), which
    [`LagrangianBound`][optsched.exact.total_jct_lp.LagrangianBound] turns into a bound at any search node.
    """
    import numpy as np
    import scipy.sparse as sp

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
    delta = _slot_width(inst, slots, delta)
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
    prices: list[Any] = []
    dual = _certified(np.array(cost), A_ub, b_ub, A_eq, b_eq, np.array(upper), const, prices=prices)
    if dual is None:  # pragma: no cover - the LP is feasible and bounded by construction
        return inst.trivial_lower_bound()
    if keep is not None:  # the capacity rows' prices, for LagrangianBound
        keep.update(delta=delta, T=T, classes=classes, prices=prices[0])
    bound = math.ceil(dual - 1e-9 * max(1.0, abs(dual)))
    return max(bound, inst.trivial_lower_bound())  # both are bounds


def _certified(c: Any, A_ub: Any, b_ub: Any, A_eq: Any, b_eq: Any, upper: Any, const: float, *,
               method: str = "highs", time_limit: float | None = None, prices: list[Any] | None = None
               ) -> float | None:
    """min c y + const over A_eq y = b_eq, A_ub y <= b_ub, 0 <= y <= upper, as a value that every feasible y
    reaches (weak duality with the solver's dual vector, recomputed here; formulation, "Certification"); None
    when the solver returns no optimal basis (infeasible, or stopped by ``time_limit`` seconds)."""
    import numpy as np
    from scipy.optimize import linprog

    opts = {} if time_limit is None else {"time_limit": float(time_limit)}
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=np.column_stack([np.zeros(len(c)), upper]),
                  method=method, options=opts)
    if res.status != 0:
        return None
    mu = np.minimum(np.asarray(res.ineqlin.marginals, dtype=float), 0.0)
    if prices is not None:
        prices.append(-mu)
    reduced = c - A_ub.T @ mu
    val = float(b_ub @ mu)
    if A_eq is not None:
        lam = np.asarray(res.eqlin.marginals, dtype=float)
        reduced = reduced - A_eq.T @ lam
        val += float(b_eq @ lam)
    return val + float(np.minimum(reduced, 0.0) @ upper) + const


def _slot_width(inst: TotalJctInstance, slots: int, delta: int | None) -> int:
    """``delta`` checked, or by default the greedy schedule's last completion divided by ``slots``, rounded up."""
    if delta is None:
        g = greedy_total_jct(inst)
        span = max(g[j.id][2] + j.modes[g[j.id][0]].duration for j in inst.jobs)
        return max(1, math.ceil(span / slots))
    if not isinstance(delta, int) or isinstance(delta, bool) or delta < 1:
        raise InstanceError(f"must be a positive integer, got {delta!r}", field="delta")
    return delta


def _earliest(a: int, delta: int, r: int) -> int:
    """The earliest start in slot ``a`` of a job released at ``r`` (slot ``T``: from ``T * delta`` on)."""
    return max(a * delta, r)


def _cover(a: int, b: int, r: int, d: int, delta: int, T: int) -> int:
    """The time a job (release ``r``, duration ``d``) that starts in slot ``a`` surely runs in slot ``b``:
    starts are integers, so it runs on [(a + 1) delta - 1, earliest start + d) at least; none from slot T on."""
    if b < a or a >= T:
        return 0
    return max(min(_earliest(a, delta, r) + d, (b + 1) * delta) - max((a + 1) * delta - 1, b * delta), 0)


def start_lp_lower_bound(inst: TotalJctInstance, *, slots: int = 1500, delta: int | None = None,
                         time_limit: float | None = None) -> int | None:
    """A lower bound on the optimal sum_j w_j C_j of ``inst`` from the start-slot LP (formulation, "Start-slot LP
    bound"): each job starts once, in one of ``slots`` slots of width ``delta`` (default: the greedy schedule's
    last completion / ``slots``, rounded up) or after them; a start in slot a covers the slots after a for at
    least the job's shortest duration from the slot's earliest start, and per slot the covered time, times the
    GPUs, stays within the cluster's GPUs (and, for every wide class, within k jobs). It sees that a job runs
    without a break, which the time-slot LP ([`lp_lower_bound`][optsched.exact.total_jct_lp.lp_lower_bound])
    does not; that one is finer per variable. Solved with HiGHS's interior point method on the cumulative
    start variables (a few non-zeros per row); certified by weak duality as the other. ``time_limit``: seconds
    of wall clock for HiGHS; when it stops the solve, None (no bound).

    ```pycon
    >>> from optsched.cluster import Cluster
    >>> from optsched.problems.total_jct import Mode, TotalJctJob
    >>> two = TotalJctInstance(Cluster.homogeneous(1, 2), (TotalJctJob("a", 0, 2, (Mode((2,), 4),)),
    ...                                                   TotalJctJob("b", 0, 2, (Mode((2,), 4),))))
    >>> start_lp_lower_bound(two, slots=8, delta=1), lp_lower_bound(two, slots=8, delta=1)  # optimum 12
    (12, 11)

    ```
    """
    import numpy as np
    import scipy.sparse as sp

    if not isinstance(slots, int) or isinstance(slots, bool) or slots < 1:
        raise InstanceError(f"must be a positive integer, got {slots!r}", field="slots")
    jobs = inst.jobs
    const = 0.0
    lp_jobs = []
    for i, j in enumerate(jobs):
        if j.weight > 0 and j.min_duration > 0:
            lp_jobs.append(i)
        elif j.min_duration == 0:
            const += j.weight * j.release
    if not lp_jobs:
        return math.ceil(const)
    delta = _slot_width(inst, slots, delta)
    T = slots
    G = inst.cluster.total_gpus
    classes = wide_classes(inst, lp_jobs)
    n_cap = T * (1 + len(classes))  # capacity rows: per slot, GPUs, then per class
    cost: list[float] = []
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    row = n_cap
    v = 0
    for i in lp_jobs:
        j = jobs[i]
        d, r, w = j.min_duration, j.release, j.weight
        a0 = r // delta  # the slot of the release; z[a] (a0 <= a < T): the job starts in slot a or before
        member = [T * (1 + c) for c, (cls, _) in enumerate(classes) if i in cls]

        # x[a] = z[a] - z[a - 1] (z[a0 - 1] = 0, z[T] = 1): cost sum_a c[a] x[a] = c[T] + sum_a (c[a] - c[a+1]) z[a]
        const += w * (_earliest(T, delta, r) + d)
        cost += [w * (_earliest(a, delta, r) - _earliest(a + 1, delta, r)) for a in range(a0, T)]
        # coefficient of z[a] in the row of slot b: _cover(a, b) - _cover(a + 1, b); for a > a0 it depends on
        # b - a alone and is non-zero only at b - a in {0, 1, q, q + 1} (d = q delta + rest)
        q = d // delta
        for b in range(a0, T):
            coef: dict[int, int] = {}
            for a in {a0, b, b - 1, b - q, b - q - 1}:
                if a0 <= a < T:
                    c1 = _cover(a, b, r, d, delta, T) - _cover(a + 1, b, r, d, delta, T)
                    if c1:
                        coef[a] = c1
            for a, c1 in coef.items():
                rows.append(b)
                cols.append(v + a - a0)
                vals.append(float(j.gpus * c1))
                for base in member:
                    rows.append(base + b)
                    cols.append(v + a - a0)
                    vals.append(float(c1))
        for a in range(a0, T - 1):  # z non-decreasing (x >= 0)
            rows += [row, row]
            cols += [v + a - a0, v + a + 1 - a0]
            vals += [1.0, -1.0]
            row += 1
        v += max(0, T - a0)
    if v == 0:  # every release after the slots: each job's cost is fixed
        return max(math.ceil(const - 1e-9 * max(1.0, abs(const))), inst.trivial_lower_bound())
    b_ub = np.array([float(G * delta)] * T + [float(k * delta) for _, k in classes for _ in range(T)]
                    + [0.0] * (row - n_cap))
    A_ub = sp.csr_matrix((np.array(vals), (np.array(rows), np.array(cols))), shape=(row, v))
    dual = _certified(np.array(cost), A_ub, b_ub, None, None, np.ones(v), const, method="highs-ipm",
                      time_limit=time_limit)
    if dual is None:
        return None
    return max(math.ceil(dual - 1e-9 * max(1.0, abs(dual))), inst.trivial_lower_bound())  # both are bounds


class PricedRuns:
    """Per-job tables of priced runs under slot prices that end at ``end``: ``P[i][t]`` the price of job i's run
    on [0, t) (t <= end), ``h[i][t]`` = ``rest(i, t)`` for t <= end, and the jobs' weights ``W``, releases ``R``
    and shortest durations ``D``. [`LagrangianBound`][optsched.exact.total_jct_lp.LagrangianBound] and the
    column-generation pricing ([`optsched.exact.total_jct_cg`][]) fill them; the branch and bounds read them."""

    end: int
    P: list[list[float]]
    h: list[list[float]]
    W: list[int]
    R: list[int]
    D: list[int]

    def price(self, i: int, s: int, d: int) -> float:
        """The price of job ``i``'s run on [s, s + d) (any of its modes: its GPUs are the same in all)."""
        e = self.end
        P = self.P[i]
        return P[s + d if s + d < e else e] - P[s if s < e else e]

    def rest(self, i: int, t: int) -> float:
        """The least w_i (S + d_i) + price_i(S, d_i) over integer starts S >= max(r_i, t)."""
        if t <= self.end:
            return self.h[i][t]
        return self.W[i] * ((self.R[i] if self.R[i] > t else t) + self.D[i])


class LagrangianBound(PricedRuns):
    """Lower bounds, at the root and at branch-and-bound nodes, from prices on the time-slot LP's capacity rows
    (formulation, "Lagrangian bound"). Each slot a < T of width ``delta`` has a price ``lam[a] >= 0`` per GPU and
    time unit, and each wide class one per job and time unit; any non-negative prices give a bound. They start at
    the duals of the time-slot LP ([`lp_lower_bound`][optsched.exact.total_jct_lp.lp_lower_bound] with ``slots``)
    and ``iterations`` subgradient steps (towards ``target``, by default the greedy schedule's cost; no more after
    ``time_limit`` seconds of wall clock, if given) keep the best.
    For every schedule, sum_j w_j C_j >= sum_j [w_j (S_j + d_j) + price_j(S_j, d_j)] - ``const``, where
    ``price_j(S, d)`` is the price of job j's run [S, S + d) and ``const`` the price of all capacity; so a node
    whose placed jobs cost ``cost`` with prices ``pen`` (their real runs) and whose other jobs start at ``t`` or
    later is worth at least ``cost + pen + sum_j rest(j, t) - const``, ``rest(j, t)`` the least
    ``w_j (S + d_j) + price_j(S, d_j)`` over integer starts S >= max(r_j, t) (d_j the shortest mode).

    ```pycon
    >>> from optsched.generators.total_jct import random_total_jct_instance
    >>> inst = random_total_jct_instance(6, 0)
    >>> lag = LagrangianBound(inst, slots=200, iterations=50)
    >>> inst.trivial_lower_bound() <= lag.root() <= 70497     # the optimum (bundled library)
    True

    ```
    """

    def __init__(self, inst: TotalJctInstance, *, slots: int = 1000, delta: int | None = None, iterations: int = 0,
                 target: float | None = None, time_limit: float | None = None):
        import time

        import numpy as np

        t0 = time.perf_counter()

        if not isinstance(iterations, int) or isinstance(iterations, bool) or iterations < 0:
            raise InstanceError(f"must be an integer >= 0, got {iterations!r}", field="iterations")
        keep: dict[str, Any] = {}
        self.lp = lp_lower_bound(inst, slots=slots, delta=delta, keep=keep)
        self.inst = inst
        jobs = inst.jobs
        self.n = len(jobs)
        if not keep:  # no job with work and weight: no prices (every bound is then the trivial one)
            keep = {"delta": 1, "T": 0, "classes": [], "prices": np.zeros(0)}
        self.delta, self.T, classes = dl, T, _ = keep["delta"], keep["T"], keep["classes"]
        self.end = T * dl  # no prices from here on
        G = inst.cluster.total_gpus
        self._cap = np.array([float(G * dl)] * T + [float(k * dl) for _, k in classes for _ in range(T)])
        self._member = [[c for c, (m, _) in enumerate(classes) if i in m] for i in range(self.n)]
        self._slot = np.arange(self.end) // dl
        lam = np.maximum(np.asarray(keep["prices"], dtype=float)[:len(self._cap)], 0.0)
        best, best_lam = self._evaluate(lam)[0], lam
        if iterations:
            if target is None:
                g = greedy_total_jct(inst)
                target = float(sum(j.weight * (g[j.id][2] + j.modes[g[j.id][0]].duration) for j in jobs))
            step = 1.0
            for it in range(iterations):  # Polyak steps towards target, shrinking every 50 iterations
                if time_limit is not None and time.perf_counter() - t0 > time_limit:
                    break
                val, sub = self._evaluate(lam)
                if val > best:
                    best, best_lam = val, lam
                norm = float(sub @ sub)
                if norm == 0.0 or val >= target:
                    break
                lam = np.maximum(lam + step * (target - val) / norm * sub, 0.0)
                if it % 50 == 49:
                    step *= 0.8
        self.prices = best_lam
        self._tables(best_lam)

    def _rates(self, lam: Any, i: int) -> Any:
        """Job ``i``'s price per time unit at every instant before ``end``."""
        T, slot = self.T, self._slot
        rate = self.inst.jobs[i].gpus * lam[:T][slot]
        for c in self._member[i]:
            rate = rate + lam[T * (1 + c):T * (2 + c)][slot]
        return rate

    def _evaluate(self, lam: Any) -> tuple[float, Any]:
        """The bound at prices ``lam`` (sum_j rest(j, 0) - const) and a subgradient (each row's use by the
        jobs' cheapest runs, minus its capacity)."""
        import numpy as np

        end, T, dl = self.end, self.T, self.delta
        total = -float(lam @ self._cap)
        use = np.zeros(len(self._cap))
        S = np.arange(end + 1)
        for i, j in enumerate(self.inst.jobs):
            P = np.concatenate([[0.0], np.cumsum(self._rates(lam, i))])
            w, r, d = j.weight, j.release, j.min_duration
            f = w * (S + d) + P[np.minimum(S + d, end)] - P[S]
            f[:min(r, end + 1)] = np.inf
            k = int(np.argmin(f))
            late = w * (max(r, end + 1) + d)
            if late <= f[k]:
                total += late
                continue
            total += float(f[k])
            runs = np.zeros(end)
            runs[k:min(k + d, end)] = 1.0
            per = np.add.reduceat(runs, np.arange(0, end, dl)) if end else runs
            use[:T] += j.gpus * per
            for c in self._member[i]:
                use[T * (1 + c):T * (2 + c)] += per
        return total, use - self._cap

    def _tables(self, lam: Any) -> None:
        import numpy as np

        end = self.end
        self.const = float(lam @ self._cap)
        S = np.arange(end + 1)
        self.W = [j.weight for j in self.inst.jobs]
        self.R = [j.release for j in self.inst.jobs]
        self.D = [j.min_duration for j in self.inst.jobs]
        self.P: list[list[float]] = []  # per job: P[t] = price of its run on [0, t) (t <= end)
        self.h: list[list[float]] = []  # per job: h[t] = rest(j, t) for t <= end
        for i, j in enumerate(self.inst.jobs):
            P = np.concatenate([[0.0], np.cumsum(self._rates(lam, i))])
            w, r, d = j.weight, j.release, j.min_duration
            f = w * (S + d) + P[np.minimum(S + d, end)] - P[S]
            f[:min(r, end + 1)] = np.inf
            h = np.minimum.accumulate(f[::-1])[::-1]
            h = np.minimum(h, w * (max(r, end + 1) + d))  # starts after end: w (S + d), no price
            self.P.append(P.tolist())
            self.h.append(h.tolist())

    def root(self) -> float:
        """The bound with no job placed (floating point; at least the time-slot LP's value at the start)."""
        return sum(self.rest(i, 0) for i in range(self.n)) - self.const

    def bound(self) -> int:
        """[`root`][optsched.exact.total_jct_lp.LagrangianBound.root] made safe: lowered by a relative 1e-7 (the
        floating-point sums), rounded up (objectives are integers) and at least the trivial bound."""
        v = self.root()
        return max(math.ceil(v - 1e-7 * max(1.0, abs(v))), self.inst.trivial_lower_bound())


def lagrangian_lower_bound(inst: TotalJctInstance, *, slots: int = 2000, iterations: int = 1000,
                           target: float | None = None) -> int:
    """A lower bound on the optimal sum_j w_j C_j of ``inst``: the Lagrangian bound of
    [`LagrangianBound`][optsched.exact.total_jct_lp.LagrangianBound] (time-slot LP duals on ``slots`` slots, then
    ``iterations`` subgradient steps towards ``target``), each job's run priced at its exact integer start.

    ```pycon
    >>> from optsched.generators.total_jct import random_total_jct_instance
    >>> inst = random_total_jct_instance(6, 0)
    >>> inst.trivial_lower_bound() <= lagrangian_lower_bound(inst, slots=200, iterations=20) <= 70497
    True

    ```
    """
    return LagrangianBound(inst, slots=slots, iterations=iterations, target=target).bound()
