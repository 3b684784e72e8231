"""Exact placement of one mixed-parallelism job: min per-iteration time and min cut (paper 001, Table II).

**Min-time** (``docs/formulations/placement-min-time.md``). alpha(x) of eq. (7) is the max over the used servers
of a *column cost* that depends on that server's column x^m alone ([`optsched.perf.pipeline.column_cost`][]).
So a placement is a multiset of columns, and servers with equal free GPUs are interchangeable: the model
has one integer variable n_c per candidate column c (how many servers use it), never one per server:

    min alpha  s.t.  sum_c n_c c_s = k_s (all s),  n_c <= U_c y_c,  alpha >= cost(c) y_c,
    mapping form:   sum_{|c| = q} n_c = N_q        (the N_q servers giving q GPUs each fill up exactly)
    selection form: sum_{|c| >= t} n_c <= N_{>=t}  (t = 1..g; Hall's condition for nested capacities)

solved by CP-SAT (integer-scaled costs) or as a MILP through PuLP (CBC or HiGHS). The column multiset is
turned back into per-server counts by giving the largest columns to the largest servers.

**Min-cut** (``docs/formulations/placement-min-cut.md``): the balanced graph partition Heavy-Edge approximates,
at replica level: a_{v,m} = 1 if replica v goes to server m, z_{e,m} <= a_{u,m}, a_{v,m}; maximise the
weight kept inside servers. Servers of equal size are ordered by their smallest replica (symmetry breaking).

```pycon
>>> from optsched.algorithms.heavy_edge import fig2_job
>>> from optsched.perf.pipeline import Network
>>> net = Network(8, 1.25, 300.0)
>>> r = min_time_placement(fig2_job(), net, {"a": 4, "b": 1, "c": 1}, solver="cpsat")
>>> r.status.value, round(r.alpha, 3)
('optimal', 22.2)
>>> min_cut_placement(fig2_job(), {"a": 4, "b": 1, "c": 1}, solver="cpsat").cut_weight_mb
4.0

```
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..algorithms.heavy_edge import _adjacency, contiguous_assignment, counts_from_assignment, cut_weight, heavy_edge
from ..errors import InstanceError, SolverError
from ..perf.pipeline import Column, Network, column_cost, column_costs, columns_up_to, min_alpha_enumerate
from ..problems.pipeline import PipelineJob
from ..result import SolveStatus, freeze
from . import _cpsat, _pulp

SOLVERS = ("cpsat", "cbc", "highs")
_SCALE = 1_000_000  # CP-SAT works in integer nano-ms (ms * 1e6): ties below 1e-6 ms are not separated
Replica = tuple[int, int]  # a vertex (stage, replica) of the job graph Omega, 0-based


@dataclass(frozen=True)
class ExactPlacement:
    """An exact model's answer: per-server counts (servers it uses), alpha (ms), status and runtime."""

    counts: Mapping[str, tuple[int, ...]]
    alpha: float
    status: SolveStatus
    runtime_s: float
    solver: str
    form: str
    objective: float            # alpha for min-time, the cut weight (MB) for min-cut
    assignment: Mapping[str, tuple[Replica, ...]] | None = None
    info: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # read-only mappings that still pickle and deep-copy (types.MappingProxyType does neither)
        for name in ("counts", "assignment", "info"):
            object.__setattr__(self, name, freeze(getattr(self, name)))

    @property
    def cut_weight_mb(self) -> float:
        if self.info.get("model") == "min-cut":
            return self.objective
        return float(self.info.get("cut_weight_mb", math.nan))


# -- shared input checks -----------------------------------------------------------------------------------
def _free_items(job: PipelineJob, free: Mapping[str, int], form: str) -> list[tuple[str, int]]:
    if form not in ("mapping", "selection"):
        raise ValueError(f"form must be 'mapping' or 'selection', got {form!r}")
    items = []
    for sid, n in free.items():
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise InstanceError(f"free GPUs must be a non-negative integer, got {n!r}", field=f"free[{sid!r}]",
                                job=job.id)
        if n:
            items.append((sid, int(n)))
    total = sum(n for _, n in items)
    if total < job.gpus:
        raise InstanceError(f"job needs {job.gpus} GPUs but only {total} are free", field="free", job=job.id)
    if form == "mapping" and total != job.gpus:
        raise InstanceError(f"the mapping form needs servers giving exactly g_i = {job.gpus} GPUs, got {total}",
                            field="free", job=job.id)
    return items


def _check_solver(solver: str) -> None:
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")


def _cpsat_params(job: PipelineJob, solver: str, time_limit: float | None, num_workers: int, seed: int | None,
                  deterministic_limit: float | None) -> _cpsat.Params:
    """CP-SAT's parameters, checked before any work; a seed or deterministic limit given to CBC or HiGHS is
    an error rather than silently ignored (neither has a deterministic limit here)."""
    for name, value in (("seed", seed), ("deterministic_limit", deterministic_limit)):
        if value is not None and solver != "cpsat":
            raise InstanceError(f"applies to the 'cpsat' solver only, not {solver!r}", field=name, job=job.id)
    return _cpsat.Params(time_limit=time_limit, deterministic_limit=deterministic_limit, num_workers=num_workers,
                         seed=seed)


# -- min-time: the column model ----------------------------------------------------------------------------
@dataclass(frozen=True)
class ColumnModel:
    """Candidate columns with their costs and the class data of one min-time instance."""

    cols: np.ndarray           # (n, S) int
    cost: np.ndarray           # (n,) ms
    ub: np.ndarray             # (n,) max copies of each column
    sizes: np.ndarray          # (n,) column sums
    class_count: Mapping[int, int]  # q -> N_q (servers giving q GPUs; selection form: capped at g_i)
    form: str

    def lower_bound(self, n_stages: int) -> float:
        """Every stage sits on some server: alpha >= max_s min{cost(c) : c_s > 0} (0 if a stage has none)."""
        lb = 0.0
        for s in range(n_stages):
            mask = self.cols[:, s] > 0
            if mask.any():
                lb = max(lb, float(self.cost[mask].min()))
        return lb


def build_column_model(job: PipelineJob, net: Network, free_counts: Sequence[int], form: str,
                       upper_bound: float | None = None) -> ColumnModel:
    """Enumerate the candidate columns (0 <= c_s <= k_s; |c| a class size for mapping, 1..max for selection).

    With ``upper_bound`` (the alpha of a known feasible placement), columns costing more are dropped: no
    placement using one can beat the known one, and the known one stays feasible.
    """
    gi = job.gpus
    counts: dict[int, int] = {}
    for q in free_counts:
        q = min(q, gi) if form == "selection" else q  # a server giving more than g_i is as good as g_i
        counts[q] = counts.get(q, 0) + 1
    qmax = max(counts)
    cols = columns_up_to(job, qmax, min_sum=1)
    if form == "mapping":
        cols = [c for c in cols if sum(c) in counts]
    arr = np.array(cols, dtype=np.int64).reshape(len(cols), job.n_stages)
    cost = column_costs(job, net, arr)
    k = np.array(job.replicas)
    with np.errstate(divide="ignore"):
        per_stage = np.where(arr > 0, k // np.maximum(arr, 1), np.iinfo(np.int64).max)
    sizes = arr.sum(axis=1)
    cap = np.array([sum(n for q, n in counts.items() if q >= s) for s in sizes])
    ub = np.minimum(per_stage.min(axis=1), cap)
    keep = ub > 0
    if upper_bound is not None:
        keep &= cost <= upper_bound * (1 + 1e-9) + 1e-12
    return ColumnModel(arr[keep], cost[keep], ub[keep], sizes[keep], freeze(counts), form)


def _assign_columns(items: list[tuple[str, int]], chosen: list[Column], form: str, gi: int) -> dict[str, Column]:
    """Give the chosen columns to servers: per class (mapping) or largest column to largest server."""
    out: dict[str, Column] = {}
    servers = sorted(items, key=lambda it: -it[1])  # stable: ties keep the caller's order
    chosen = sorted(chosen, key=lambda c: (-sum(c), c))
    if form == "mapping":
        by_size: dict[int, list[Column]] = {}
        for c in chosen:
            by_size.setdefault(sum(c), []).append(c)
        for sid, q in servers:
            out[sid] = by_size[q].pop(0)
        return out
    for (sid, q), c in zip(servers, chosen):
        if sum(c) > q:  # cannot happen when Hall's condition held
            raise SolverError(f"column {c} does not fit server {sid} with {q} free GPUs")
        out[sid] = c
    return out


def min_time_placement(job: PipelineJob, net: Network, free: Mapping[str, int], *, form: str = "mapping",
                       solver: str = "cpsat", time_limit: float | None = 10.0, num_workers: int = 1,
                       prune: bool = True, seed: int | None = None,
                       deterministic_limit: float | None = None) -> ExactPlacement:
    """Minimise alpha (eq. 7) over per-server replica counts; optimality proven unless the time limit hits.

    ``form="mapping"``: ``free`` gives exactly g_i GPUs and each server gives all of its GPUs (the input of
    Heavy-Edge). ``form="selection"``: any subset of the free GPUs (sum >= g_i).
    With ``prune`` (default), Heavy-Edge's placement (on SelectMost's servers for the selection form) gives
    an upper bound, and columns costing more than it are left out of the model (exactness is kept).
    ``seed`` and ``deterministic_limit`` (CP-SAT only) make a limited run reproducible
    ([`optsched.exact._cpsat`][]); ``info["limit"]`` then says which limit applied.
    """
    _check_solver(solver)
    params = _cpsat_params(job, solver, time_limit, num_workers, seed, deterministic_limit)
    t0 = time.perf_counter()
    items = _free_items(job, free, form)
    gi = job.gpus
    ub = _heavy_edge_bound(job, net, items) if prune else None
    model = build_column_model(job, net, [q for _, q in items], form, upper_bound=ub)
    run_info: dict[str, Any] = {}
    if solver == "cpsat":
        n_val, status, bound, run_info = _min_time_cpsat(job, model, params)
    else:
        n_val, status, bound, run_info = _min_time_pulp(job, model, solver, time_limit)
    if n_val is None:
        return ExactPlacement({}, math.inf, status, time.perf_counter() - t0, solver, form, math.inf,
                              info={"model": "min-time", "columns": len(model.cost), **run_info})
    chosen: list[Column] = []
    for i, n in enumerate(n_val):
        chosen.extend([tuple(int(v) for v in model.cols[i])] * int(n))
    counts = _assign_columns(items, chosen, form, gi)
    a = max(column_cost(job, net, c) for c in counts.values())  # recomputed in floating point, not scaled
    assign = contiguous_assignment(job, counts)
    info = {"model": "min-time", "columns": int(len(model.cost)), "classes": dict(model.class_count),
            "bound": bound, "cut_weight_mb": cut_weight(job, assign), "heavy_edge_bound": ub, **run_info}
    return ExactPlacement(counts, a, status, time.perf_counter() - t0, solver, form, a, assign, info)


def _heavy_edge_bound(job: PipelineJob, net: Network, items: list[tuple[str, int]]) -> float:
    """alpha of Heavy-Edge on the largest servers (SelectMost): a feasible placement in both forms."""
    chosen, left = [], job.gpus
    for sid, q in sorted(items, key=lambda it: -it[1]):
        if left <= 0:
            break
        chosen.append((sid, min(q, left)))
        left -= min(q, left)
    counts = heavy_edge(job, chosen, rng=0).counts
    return max(column_cost(job, net, c) for c in counts.values())


def _min_time_cpsat(job: PipelineJob, m: ColumnModel, params: _cpsat.Params
                    ) -> tuple[list[int] | None, SolveStatus, float | None, dict[str, Any]]:
    """Solve the column model by CP-SAT: copies per column, status, proven lower bound on alpha (ms), and
    the run's info."""
    from ortools.sat.python import cp_model

    md = cp_model.CpModel()
    n = len(m.cost)
    cost_i = [int(math.ceil(c * _SCALE)) for c in m.cost]
    nv = [md.new_int_var(0, int(m.ub[i]), f"n{i}") for i in range(n)]
    yv = [md.new_bool_var(f"y{i}") for i in range(n)]
    lb = int(math.ceil(m.lower_bound(job.n_stages) * _SCALE))
    a = md.new_int_var(min(lb, max(cost_i, default=0)), max(cost_i, default=0), "alpha")
    for s, k in enumerate(job.replicas):
        md.add(sum(int(m.cols[i, s]) * nv[i] for i in range(n) if m.cols[i, s]) == k)
    _size_constraints(m, lambda idx: sum(nv[i] for i in idx), md.add)
    for i in range(n):
        md.add(nv[i] <= int(m.ub[i]) * yv[i])
        md.add(nv[i] >= 1).only_enforce_if(yv[i])
        md.add(a >= cost_i[i]).only_enforce_if(yv[i])
    md.minimize(a)
    run = _cpsat.solve(md, params, scale=_SCALE)
    if run.objective is None:
        return None, run.status, None, run.info()
    return [run.value(v) for v in nv], run.status, None if run.bound is None else run.bound / _SCALE, run.info()


def _size_constraints(m: ColumnModel, total, add) -> None:
    """Mapping: each class of q-GPU servers is filled exactly; selection: Hall's nested-capacity condition."""
    n = len(m.cost)
    if m.form == "mapping":
        for q, cnt in m.class_count.items():
            add(total([i for i in range(n) if m.sizes[i] == q]) == cnt)
    else:
        for t in range(1, max(m.class_count) + 1):
            idx = [i for i in range(n) if m.sizes[i] >= t]
            cap = sum(c for q, c in m.class_count.items() if q >= t)
            if idx and cap < sum(int(m.ub[i]) for i in idx):
                add(total(idx) <= cap)


_STATUS = {"optimal": SolveStatus.OPTIMAL, "infeasible": SolveStatus.INFEASIBLE,
           "time limit": SolveStatus.TIME_LIMIT, "interrupted": SolveStatus.INTERRUPTED}


def _solve_pulp(prob, solver: str, time_limit: float | None) -> tuple[SolveStatus, bool, dict[str, Any]]:
    """Solve a PuLP model with CBC or HiGHS (both out of process, [`optsched.exact._pulp`][]) to a zero gap:
    the status, whether the variables hold a solution, and the run's info (the signal that stopped it)."""
    run = _pulp.run(prob, solver, time_limit, gap_rel=0.0)
    return _STATUS.get(run.status, SolveStatus.UNKNOWN), run.found, run.info()


def _min_time_pulp(job: PipelineJob, m: ColumnModel, solver: str, time_limit: float | None):
    import pulp

    prob = pulp.LpProblem("min_time_placement", pulp.LpMinimize)
    n = len(m.cost)
    nv = [_pulp.var(prob, f"n{i}", 0, int(m.ub[i]), cat="Integer") for i in range(n)]
    yv = [_pulp.var(prob, f"y{i}", cat="Binary") for i in range(n)]
    a = _pulp.var(prob, "alpha", m.lower_bound(job.n_stages))
    prob += a
    for s, k in enumerate(job.replicas):
        prob += pulp.lpSum(int(m.cols[i, s]) * nv[i] for i in range(n) if m.cols[i, s]) == k
    _size_constraints(m, lambda idx: pulp.lpSum(nv[i] for i in idx), prob.addConstraint)
    for i in range(n):
        prob += nv[i] <= int(m.ub[i]) * yv[i]
        prob += nv[i] >= yv[i]
        prob += a >= float(m.cost[i]) * yv[i]
    status, found, info = _solve_pulp(prob, solver, time_limit)
    if not found or not n or nv[0].varValue is None:
        return None, status, None, info
    return [int(round(v.varValue or 0)) for v in nv], status, None, info


# -- min-time: the per-server compact MILP (digest 6(a); the reference the column model is measured against) --
def min_time_placement_per_server(job: PipelineJob, net: Network, free: Mapping[str, int], *,
                                  form: str = "mapping", solver: str = "highs", time_limit: float | None = 60.0,
                                  symmetry_breaking: bool = True) -> ExactPlacement:
    """Min alpha as the compact per-server MILP of the digest (section 6(a)), through PuLP (CBC or HiGHS).

    One binary w_{s,m,c} per (stage, server, count c); alpha >= sum_c w_{s,m,c}(comp_s + AR_s(c)) + COMM_{s,m}(x)
    - Big_s (1 - y_{s,m}). Exact like [`min_time_placement`][optsched.exact.placement.min_time_placement] but with one
      block of variables per server, so
    it grows with the cluster and carries the servers' symmetry (partly broken, with ``symmetry_breaking``, by
    ordering equal-size servers by GPUs used then by stage-1 count). Kept as the paper-style reference
    (``docs/formulations/placement-min-time.md``).
    """
    import pulp

    if solver not in ("cbc", "highs"):
        raise ValueError("the per-server model is a MILP: solver must be 'cbc' or 'highs'")
    t0 = time.perf_counter()
    items = _free_items(job, free, form)
    S, ks = job.n_stages, job.replicas
    g, bi, ba = net.gpus_per_server, net.inter_bandwidth_gbs, net.intra_bandwidth_gbs
    st = job.stages
    M = len(items)
    prob = pulp.LpProblem("min_time_per_server", pulp.LpMinimize)
    w = {(s, m, c): _pulp.var(prob, f"w_{s}_{m}_{c}", cat="Binary")
         for s in range(S) for m in range(M) for c in range(1, min(ks[s], items[m][1]) + 1)}
    x = {(s, m): pulp.lpSum(c * w[s, m, c] for c in range(1, min(ks[s], items[m][1]) + 1)) for s in range(S)
         for m in range(M)}
    y = {(s, m): pulp.lpSum(w[s, m, c] for c in range(1, min(ks[s], items[m][1]) + 1)) for s in range(S)
         for m in range(M)}
    alpha_v = _pulp.var(prob, "alpha", 0)
    prob += alpha_v
    for s in range(S):
        prob += pulp.lpSum(x[s, m] for m in range(M)) == ks[s]
        for m in range(M):
            prob += y[s, m] <= 1
    for m, (_, q) in enumerate(items):
        used = pulp.lpSum(x[s, m] for s in range(S))
        prob += (used == q) if form == "mapping" else (used <= q)
    for s in range(S):
        din2, dout2 = 2 * st[s].d_in_mb, 2 * st[s].d_out_mb
        big = max(g / bi, 1 / ba) * (din2 + dout2)
        for m in range(M):
            terms = []
            for c in range(1, min(ks[s], items[m][1]) + 1):
                k = ks[s]
                ar = 0.0 if k == 1 else (2 * (k - 1) * st[s].params_mb * g / (k * c * bi) if c < k
                                         else 2 * (k - 1) * st[s].params_mb / (k * ba))
                terms.append((st[s].compute_ms + ar) * w[s, m, c])
            comm = 0
            if s > 0:
                frac = x[s - 1, m] * (1.0 / ks[s - 1])
                comm += (g / bi) * din2 - (g / bi) * din2 * frac + (din2 / ba) * frac
            if s + 1 < S:
                frac = x[s + 1, m] * (1.0 / ks[s + 1])
                comm += (g / bi) * dout2 - (g / bi) * dout2 * frac + (dout2 / ba) * frac
            prob += alpha_v >= pulp.lpSum(terms) + comm - big * (1 - y[s, m])
    if symmetry_breaking:
        # equal-size servers are interchangeable: order them by a weighted count (stage 1 heaviest)
        weight = [(max(ks) + 1) ** (S - 1 - s) for s in range(S)]
        for a in range(M):
            for b in range(a + 1, M):
                if items[a][1] == items[b][1] and all(items[c][1] != items[a][1] for c in range(a + 1, b)):
                    prob += (pulp.lpSum(weight[s] * x[s, a] for s in range(S))
                             >= pulp.lpSum(weight[s] * x[s, b] for s in range(S)))
    status, found, run_info = _solve_pulp(prob, solver, time_limit)
    if not found or alpha_v.varValue is None:
        return ExactPlacement({}, math.inf, status, time.perf_counter() - t0, solver, form, math.inf,
                              info={"model": "min-time-per-server", **run_info})
    counts = {}
    for m, (sid, _) in enumerate(items):
        col = tuple(int(round(sum(c * (w[s, m, c].varValue or 0) for c in range(1, min(ks[s], items[m][1]) + 1))))
                    for s in range(S))
        if any(col):
            counts[sid] = col
    best = max(column_cost(job, net, c) for c in counts.values())  # `a` indexes servers above
    info = {"model": "min-time-per-server", "variables": len(w), "objective_value": alpha_v.varValue, **run_info}
    return ExactPlacement(counts, best, status, time.perf_counter() - t0, solver, form, best, info=info)


# -- min-cut: balanced graph partition ---------------------------------------------------------------------
def min_cut_placement(job: PipelineJob, free: Mapping[str, int], *, solver: str = "cpsat",
                      time_limit: float | None = 10.0, num_workers: int = 1, net: Network | None = None,
                      seed: int | None = None, deterministic_limit: float | None = None) -> ExactPlacement:
    """Partition the replica graph Omega into parts of sizes ``free`` (sum = g_i) with minimum cut weight (MB).

    ``net`` (optional) is used only to report alpha of the partition found. ``seed`` and
    ``deterministic_limit`` as in [`min_time_placement`][optsched.exact.placement.min_time_placement] (CP-SAT only).
    """
    _check_solver(solver)
    params = _cpsat_params(job, solver, time_limit, num_workers, seed, deterministic_limit)
    t0 = time.perf_counter()
    items = _free_items(job, free, "mapping")
    adj = _adjacency(job)
    V = list(adj.vertices)
    vidx = {v: i for i, v in enumerate(V)}
    E = [(vidx[u], vidx[v], w) for w, u, v in adj.edges_desc]
    W = sum(w for _, _, w in E)
    M = len(items)
    # servers of equal size are interchangeable: order them by their smallest replica
    groups: dict[int, list[int]] = {}
    for m, (_, q) in enumerate(items):
        groups.setdefault(q, []).append(m)
    run_info: dict[str, Any] = {}
    if solver == "cpsat":
        part, status, bound, run_info = _min_cut_cpsat(V, E, items, groups, params)
    else:
        part, status, bound, run_info = _min_cut_pulp(V, E, items, groups, solver, time_limit)
    if part is None:
        return ExactPlacement({}, math.inf, status, time.perf_counter() - t0, solver, "mapping", math.inf,
                              info={"model": "min-cut", **run_info})
    assign = {items[m][0]: tuple(V[i] for i in range(len(V)) if part[i] == m) for m in range(M)}
    cut = float(sum(w for i, j, w in E if part[i] != part[j]))
    counts = counts_from_assignment(job, assign)
    a = math.nan
    if net is not None:
        a = max(column_cost(job, net, c) for c in counts.values())
    info = {"model": "min-cut", "total_weight_mb": W, "cut_bound_mb": bound, **run_info}
    return ExactPlacement(counts, a, status, time.perf_counter() - t0, solver, "mapping", cut, assign, info)


def _min_cut_cpsat(V: list[Replica], E: list[tuple[int, int, float]], items: list[tuple[str, int]],
                   groups: dict[int, list[int]], params: _cpsat.Params
                   ) -> tuple[list[int] | None, SolveStatus, float | None, dict[str, Any]]:
    """Solve the partition by CP-SAT: server index per replica, status, proven lower bound on the cut (MB),
    and the run's info."""
    from ortools.sat.python import cp_model

    md = cp_model.CpModel()
    nV, M = len(V), len(items)
    a = [[md.new_bool_var(f"a{v}_{m}") for m in range(M)] for v in range(nV)]
    for v in range(nV):
        md.add_exactly_one(a[v])
    for m, (_, q) in enumerate(items):
        md.add(sum(a[v][m] for v in range(nV)) == q)
    _cut_symmetry(nV, groups, lambda v, m: a[v][m], md.add, lambda xs: sum(xs))
    w_int = [int(round(w * _SCALE)) for _, _, w in E]
    terms = []
    for e, (u, v, _) in enumerate(E):
        same = md.new_bool_var(f"same{e}")  # 1 iff u and v share a server
        for m in range(M):
            # same -> (a_um == a_vm) on every server: both there or both elsewhere
            md.add_implication(same, a[u][m]).only_enforce_if(a[v][m])
            md.add_implication(same, a[v][m]).only_enforce_if(a[u][m])
        terms.append(w_int[e] * same)
    md.maximize(sum(terms))
    run = _cpsat.solve(md, params, scale=_SCALE)
    if run.objective is None:
        return None, run.status, None, run.info()
    part = [next(m for m in range(M) if run.value(a[v][m])) for v in range(nV)]
    # the bound on the weight kept inside servers is an upper one: total - kept is a lower bound on the cut
    bound = None if run.bound is None else (sum(w_int) - run.bound) / _SCALE
    return part, run.status, bound, run.info()


def _cut_symmetry(nV, groups, var, add, total) -> None:
    """Within a group of equal-size servers m_1 < m_2 < ...: replica v may go to m_j only if some replica
    u < v is on m_{j-1} (parts ordered by their smallest replica; valid because the parts are interchangeable)."""
    for ms in groups.values():
        for j in range(1, len(ms)):
            prev, cur = ms[j - 1], ms[j]
            add(var(0, cur) == 0)
            for v in range(1, nV):
                add(var(v, cur) <= total([var(u, prev) for u in range(v)]))


def _min_cut_pulp(V, E, items, groups, solver, time_limit):
    import pulp

    prob = pulp.LpProblem("min_cut_placement", pulp.LpMaximize)
    nV, M = len(V), len(items)
    a = [[_pulp.var(prob, f"a{v}_{m}", cat="Binary") for m in range(M)] for v in range(nV)]
    z = [[_pulp.var(prob, f"z{e}_{m}", 0, 1) for m in range(M)] for e in range(len(E))]
    prob += pulp.lpSum(w * z[e][m] for e, (_, _, w) in enumerate(E) for m in range(M))
    for v in range(nV):
        prob += pulp.lpSum(a[v]) == 1
    for m, (_, q) in enumerate(items):
        prob += pulp.lpSum(a[v][m] for v in range(nV)) == q
    for e, (u, v, _) in enumerate(E):
        for m in range(M):
            prob += z[e][m] <= a[u][m]
            prob += z[e][m] <= a[v][m]
    _cut_symmetry(nV, groups, lambda v, m: a[v][m], prob.addConstraint, pulp.lpSum)
    status, found, info = _solve_pulp(prob, solver, time_limit)
    if not found or a[0][0].varValue is None:
        return None, status, None, info
    part = [max(range(M), key=lambda m: a[v][m].varValue or 0) for v in range(nV)]
    return part, status, None, info


def alpha_min(job: PipelineJob, net: Network, *, method: str = "exact", time_limit: float | None = 10.0) -> float:
    """The true alpha_i^min (ms) over every placement on a cluster of idle g-GPU servers.

    ``method="enumerate"`` walks every multiset of server columns (tiny jobs only, ~g_i <= 10);
    ``method="exact"`` solves the selection-form CP-SAT model of
    [`min_time_placement`][optsched.exact.placement.min_time_placement] with g_i idle
    servers (any size; optimality proven unless the time limit stops it, then it raises).
    """
    if method == "enumerate":
        return min_alpha_enumerate(job, net, [net.gpus_per_server] * job.gpus, exact_sizes=False)[0]
    if method == "exact":
        res = min_time_placement(job, net, {f"m{i}": net.gpus_per_server for i in range(job.gpus)},
                                 form="selection", solver="cpsat", time_limit=time_limit)
        if res.status != SolveStatus.OPTIMAL:
            raise InstanceError(f"alpha_min not proven within {time_limit} s (status {res.status})", job=job.id)
        return res.alpha
    raise InstanceError(f"must be 'exact' or 'enumerate', got {method!r}", field="method")
