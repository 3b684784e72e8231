"""A column-generation (Lagrangian-dual) lower bound on the best single-server schedule of total (weighted)
completion time (paper 001's problem A; issue 23, lower side).

When every job runs on one server, a schedule is a partition of the jobs among the servers and one schedule per
server ([`optsched.exact.total_jct_assign`][]: the best such schedule is the best partition's sum of per-server
optima V_m(S)). For any prices pi (one per job), every partition pays sum_j pi_j + sum_m (V_m(S_m) - pi(S_m)),
so the best single-server schedule costs at least

    sum_j pi_j + sum_m min(0, min_S (V_m(S) - pi(S)))

(the *pricing* problem of server m: choose any set S of jobs, schedule it on m alone, pay its cost minus its
prices). This module computes that bound with prices from a column-generation master LP (columns: per-server
job sets with a schedule's cost; the duals of its covering rows are the prices), and solves each pricing problem
exactly by a branch and bound over one server in which every job is optional (`price_server`). The argument is in
``docs/formulations/total-jct.md`` ("Column-generation bound"). A pricing search stopped by its limit gives the least
bound of the nodes it left (still a bound). Servers of equal capacity share one pricing problem.

```pycon
>>> from optsched.cluster import Cluster
>>> from optsched.problems.total_jct import Mode, TotalJctInstance, TotalJctJob
>>> inst = TotalJctInstance(Cluster.homogeneous(2, 1), tuple(
...     TotalJctJob(x, 0, 1, (Mode((1,), d),)) for x, d in (("a", 3), ("b", 2), ("c", 1))))
>>> cg_lower_bound(inst)["bound"]    # the best: c then a on one server, b on the other (1 + 4 + 2)
7

```
"""

from __future__ import annotations

import math
import time
from typing import Any, Sequence

from ..errors import InstanceError
from ..problems.total_jct import TotalJctInstance
from .total_jct_lp import PricedRuns

__all__ = ["PricingResult", "price_server", "cg_lower_bound", "lagrangian_start_prices", "split_instance",
           "shape_instance", "SPLIT_WEIGHTS", "split_factor", "split_weights", "spread_split_bound"]


class PricingResult:
    """``value``: the least sum_{j in S} (w_j C_j - pi_j) found (0 for the empty set); ``lower``: a proven lower
    bound on it (``value`` when ``complete``); ``columns``: per job set (bit mask over the candidates' positions)
    the least schedule cost sum w_j C_j met with reduced value below ``collect_below``; ``best``: (mask, starts)
    of ``value``; ``nodes``."""

    def __init__(self, value: float, lower: float, complete: bool, columns: dict[int, tuple[int, list[int]]],
                 best: tuple[int, list[int]], nodes: int):
        self.value, self.lower, self.complete = value, lower, complete
        self.columns, self.best, self.nodes = columns, best, nodes


class _Prices(PricedRuns):
    """Slot prices for one server of capacity ``cap`` (per GPU and time unit; and per job and time unit for each
    wide class: jobs with g (k + 1) > cap, at most k at once), and per job the least priced run
    h_j(t) = min over starts S >= max(r_j, t) of w_j (S + d_j) + price_j(S, d_j)."""

    def __init__(self, R: list[int], W: list[int], G: list[int], D: list[int], cap: int, end: int, slots: int):
        import numpy as np

        self.R, self.W, self.G, self.D = R, W, G, D
        n = len(R)
        self.delta = max(1, math.ceil(end / max(1, slots)))
        self.T = max(1, math.ceil(end / self.delta))
        self.end = self.T * self.delta
        self.classes: list[tuple[list[int], int]] = []
        seen: set[tuple[int, ...]] = set()
        for k in range(1, cap):
            cls = [i for i in range(n) if G[i] * (k + 1) > cap]
            if len(cls) > k and tuple(cls) not in seen:
                seen.add(tuple(cls))
                self.classes.append((cls, k))
        T, dl = self.T, self.delta
        self.cap = np.array([float(cap * dl)] * T + [float(k * dl) for _, k in self.classes for _ in range(T)])
        self.member = [[c for c, (m, _) in enumerate(self.classes) if i in m] for i in range(n)]
        self.slot = np.arange(self.end) // dl
        self.lam = np.zeros(len(self.cap))

    def _rates(self, lam: Any, i: int) -> Any:
        T = self.T
        rate = self.G[i] * lam[:T][self.slot]
        for c in self.member[i]:
            rate = rate + lam[T * (1 + c):T * (2 + c)][self.slot]
        return rate

    def _f(self, lam: Any, i: int) -> tuple[Any, Any]:
        import numpy as np

        end = self.end
        S = np.arange(end + 1)
        P = np.concatenate([[0.0], np.cumsum(self._rates(lam, i))])
        w, r, d = self.W[i], self.R[i], self.D[i]
        f = w * (S + d) + P[np.minimum(S + d, end)] - P[S]
        f[:min(r, end + 1)] = np.inf
        return f, P

    def evaluate(self, lam: Any, pi: Sequence[float]) -> tuple[float, Any]:
        """The relaxation's value sum_j min(0, min_S f_j(S) - pi_j) - const at ``lam``, and a subgradient."""
        import numpy as np

        end, T, dl = self.end, self.T, self.delta
        total = -float(lam @ self.cap)
        use = np.zeros(len(self.cap))
        for i in range(len(self.R)):
            f, _ = self._f(lam, i)
            k = int(np.argmin(f))
            late = self.W[i] * (max(self.R[i], end + 1) + self.D[i])
            v = min(float(f[k]), late) - pi[i]
            if v >= 0:
                continue
            total += v
            if late <= f[k]:
                continue
            runs = np.zeros(end)
            runs[k:min(k + self.D[i], end)] = 1.0
            per = np.add.reduceat(runs, np.arange(0, end, dl))
            use[:T] += self.G[i] * per
            for c in self.member[i]:
                use[T * (1 + c):T * (2 + c)] += per
        return total, use - self.cap

    def ascend(self, pi: Sequence[float], iterations: int, target: float) -> float:
        """Projected subgradient steps (Polyak's towards ``target``, shrinking) from the current prices; keeps
        the best prices met and builds the tables. Returns the relaxation's best value."""
        import numpy as np

        lam = self.lam
        best, best_lam = self.evaluate(lam, pi)[0], lam
        step = 1.0
        for it in range(iterations):
            val, sub = self.evaluate(lam, pi)
            if val > best:
                best, best_lam = val, lam
            norm = float(sub @ sub)
            gap = target - val
            if norm == 0.0 or gap <= 1e-9:
                break
            lam = np.maximum(lam + step * gap / norm * sub, 0.0)
            if it % 20 == 19:
                step *= 0.7
        self.lam = best_lam
        self.const = float(best_lam @ self.cap)
        self.P: list[list[float]] = []
        self.h: list[list[float]] = []
        for i in range(len(self.R)):
            f, P = self._f(best_lam, i)
            h = np.minimum.accumulate(f[::-1])[::-1]
            h = np.minimum(h, self.W[i] * (max(self.R[i], self.end + 1) + self.D[i]))
            self.P.append(P.tolist())
            self.h.append(h.tolist())
        return best


def price_server(R: list[int], W: list[int], G: list[int], D: list[int], cap: int, pi: Sequence[float], *,
                 prices: _Prices | None = None, node_limit: int = 200_000, collect_below: float = 0.0,
                 max_columns: int = 50, deadline: float = math.inf, known: float = 0.0) -> PricingResult:
    """min over job sets S and schedules of S on one server of ``cap`` GPUs of sum_{j in S} (W_j C_j - pi_j),
    by branch and bound (jobs placed in (start, index) order, each at its earliest fitting start, as in
    [`solve_total_jct_bnb`][optsched.exact.total_jct_bnb.solve_total_jct_bnb]; a node is also the solution that
    drops every job not placed yet). Bound at a node: its cost plus, per job not placed, the least of 0 and its
    cheapest possible term (trivially w_j (max(r_j, t) + d_j) - pi_j; with ``prices``, the priced runs'
    Lagrangian form, formulation "Column-generation bound"; or the wide jobs, 2 G[i] > cap, which never overlap,
    on one machine in Smith's order plus the narrow jobs' terms: bound (W) there). Job i: release R[i], weight W[i],
    GPUs G[i]
    (<= cap), duration D[i]. ``known``: the value of some job set's schedule known to the caller (at most 0),
    the search's first incumbent (``best`` is then empty unless the search beats it).

    ```pycon
    >>> res = price_server([0, 0], [1, 1], [1, 1], [3, 2], 1, [10.0, 3.0])
    >>> res.value, res.complete     # job 0 alone: 3 - 10; with job 1 first: 2 - 3 + 5 - 10
    (-7.0, True)

    ```
    """
    n = len(R)
    full = (1 << n) - 1
    best: list[Any] = [min(0.0, known), 0, []]  # value, mask, starts (per position in the mask's order)
    cols: dict[int, tuple[int, list[int]]] = {}
    nodes = [0]
    stop = [False]
    memo: dict[tuple, list[tuple[int, int, float]]] = {}
    starts: list[int] = [0] * n
    const = prices.const if prices is not None else 0.0

    # wide jobs (2 g > cap, d > 0): no two run at once on this server, so those placed after a node run one after
    # the other on a single machine; per set of wide jobs left, the least sum over subsets X of
    # sum_{j in X} (w_j C_j - pi_j) on that machine from time a, releases dropped, is min_s (a s + G[s]) over the
    # weight sums s = w(X) (Smith's order; formulation, "Column-generation bound", bound (W))
    wide = [i for i in range(n) if 2 * G[i] > cap and D[i] > 0]
    wide_mask = sum(1 << i for i in wide)
    smith = sorted(wide, key=lambda i: (-W[i] / D[i], i))[::-1]  # reverse Smith order: the last job first
    curves: dict[int, list[tuple[int, float]]] = {}

    def wide_min(left: int, a: int) -> float:
        left &= wide_mask
        if not left:
            return 0.0
        cur = curves.get(left)
        if cur is None:
            dp: dict[int, float] = {0: 0.0}
            for i in smith:
                if left >> i & 1:
                    for s0, v0 in list(dp.items()):
                        v2 = v0 - pi[i] + D[i] * (s0 + W[i])
                        s2 = s0 + W[i]
                        if v2 < dp.get(s2, math.inf):
                            dp[s2] = v2
            cur = curves[left] = sorted(dp.items())
        return min(a * s0 + g0 for s0, g0 in cur)

    def wide_end(t: int, running: tuple) -> int:
        a = t
        for e, q in running:
            if 2 * q > cap and e > a:
                a = e
        return a

    def lower(mask: int, t: int, cost: float, pen: float, running: tuple = ()) -> float:
        lb = cost
        lbw = cost + wide_min(full & ~mask, wide_end(t, running))
        for x in range(n):
            if not mask >> x & 1:
                v = W[x] * ((R[x] if R[x] > t else t) + D[x]) - pi[x]
                if v < 0:
                    lb += v
                    if not wide_mask >> x & 1:
                        lbw += v
        if lbw > lb:
            lb = lbw
        if prices is not None:
            lb2 = cost + pen - const
            for x in range(n):
                if not mask >> x & 1:
                    v = prices.rest(x, t) - pi[x]
                    if v < 0:
                        lb2 += v
            if lb2 > lb:
                lb = lb2
        return lb - 1e-9 * max(1.0, abs(lb))

    def rec(mask: int, chosen: int, t: int, last: int, running: tuple, cost: float, pen: float, lb: float) -> None:
        # mask: jobs placed or excluded (by the gap rule); chosen: jobs placed; lb: this node's bound
        nodes[0] += 1
        if nodes[0] >= node_limit or (nodes[0] % 1024 == 0 and time.perf_counter() > deadline):
            stop[0] = True
        if stop[0]:
            if lb < open_min[0]:
                open_min[0] = lb  # not searched: its bound stands for it
            return
        if cost < collect_below - 1e-9:
            real = round(cost + sum(pi[x] for x in range(n) if chosen >> x & 1))
            old = cols.get(chosen)
            if old is None or real < old[0]:
                cols[chosen] = (real, [starts[x] for x in range(n) if chosen >> x & 1])
        if cost < best[0] - 1e-9:
            best[0], best[1], best[2] = cost, chosen, [starts[x] for x in range(n) if chosen >> x & 1]
        if mask == full:
            return
        earliest = []
        for i in range(n):
            if mask >> i & 1:
                continue
            s = R[i] if R[i] > t else t
            if D[i] > 0:
                free = cap - sum(q for e, q in running if e > s)
                if free < G[i]:
                    for e, q in running:  # ends in increasing order
                        if e <= s:
                            continue
                        free += q
                        if free >= G[i]:
                            s = e
                            break
            earliest.append((s, i))
        # gap rule: a job (w > 0) that can run to completion before a child's start is never worth placing after
        # it (moving it into that gap is feasible and cheaper), so it is excluded below that child
        done = [(s + D[i] if D[i] > 0 else s + 0.5, i) for s, i in earliest if W[i] > 0]
        kids = []
        at: dict[int, tuple[list[float], list[float], float, float, float]] = {}
        for s, i in earliest:
            if s == t and i < last:
                continue
            excl = 0
            for f, x in done:
                if f <= s and x != i:
                    excl |= 1 << x
            c2 = cost + W[i] * (s + D[i]) - pi[i]
            p2 = pen + (prices.price(i, s, D[i]) if prices is not None else 0.0)
            m2 = mask | 1 << i | excl
            tm = at.get(s)
            if tm is None:  # per job left at this node, its two terms at start s (shared by the children at s)
                t1 = [0.0] * n
                t2 = [0.0] * n
                for x in range(n):
                    if not mask >> x & 1:
                        v = W[x] * ((R[x] if R[x] > s else s) + D[x]) - pi[x]
                        t1[x] = v if v < 0 else 0.0
                        if prices is not None:
                            v = prices.rest(x, s) - pi[x]
                            t2[x] = v if v < 0 else 0.0
                tm = at[s] = (t1, t2, float(sum(t1)), float(sum(t2)),
                              float(sum(t1[x] for x in range(n) if not wide_mask >> x & 1)))
            t1, t2, s1, s2, s3 = tm
            gone = m2 & ~mask
            for x in range(n):
                if gone >> x & 1:
                    s1 -= t1[x]
                    s2 -= t2[x]
                    if not wide_mask >> x & 1:
                        s3 -= t1[x]
            lb = c2 + s1
            if wide_mask & ~m2:
                a = s + D[i] if wide_mask >> i & 1 else wide_end(s, running)
                lw = c2 + s3 + wide_min(full & ~m2, a)
                if lw > lb:
                    lb = lw
            if prices is not None and c2 + p2 - const + s2 > lb:
                lb = c2 + p2 - const + s2
            lb -= 1e-9 * max(1.0, abs(lb))
            if lb >= best[0] - 1e-9:
                continue
            kids.append((lb, s, i, c2, p2, m2))
        kids.sort()
        for lb, s, i, c2, p2, m2 in kids:
            if lb >= best[0] - 1e-9:
                break
            if stop[0]:
                if lb < open_min[0]:
                    open_min[0] = lb  # the least bound of the children left (they are sorted)
                break
            c = s + D[i]
            run = tuple(sorted([(e, q) for e, q in running if e > s] + ([(c, G[i])] if D[i] > 0 else [])))
            key = (m2, run)
            seen = memo.get(key)
            if seen is None:
                if len(memo) >= 500_000:
                    memo.clear()
                memo[key] = [(s, i, c2)]
            else:
                if any(s0 <= s and c0 <= c2 and (s0 < s or l0 <= i) for s0, l0, c0 in seen):
                    continue
                seen[:] = [e for e in seen if not (s <= e[0] and c2 <= e[2] and (s < e[0] or i <= e[1]))]
                seen.append((s, i, c2))
            starts[i] = s
            rec(m2, chosen | 1 << i, s, i, run, c2, p2, lb)

    open_min = [math.inf]  # the least bound of the nodes a stopped search left
    rec(0, 0, 0, -1, (), 0.0, 0.0, lower(0, 0, 0.0, 0.0))
    complete = not stop[0]
    low = best[0] if complete else min(best[0], open_min[0])
    keep = dict(sorted(cols.items(), key=lambda kv: kv[1][0] - sum(pi[x] for x in range(n) if kv[0] >> x & 1))
                [:max_columns])
    return PricingResult(float(best[0]), float(low), complete, keep, (int(best[1]), list(best[2])), nodes[0])


def cg_lower_bound(inst: TotalJctInstance, *, partitions: Sequence[Sequence[Sequence[int]]] = (),
                   iterations: int = 50, node_limit: int = 200_000, slots: int = 200, lag_iterations: int = 15,
                   time_limit: float | None = None, smoothing: float = 0.7, start_prices: Sequence[float] | None = None,
                   target: float | None = None, log: bool = False) -> dict[str, Any]:
    """A lower bound on the cost of every single-server schedule of ``inst`` (module docstring): ``iterations``
    rounds of column generation (master LP over the columns met so far, by HiGHS; its covering duals as prices;
    each server class's pricing problem by [`price_server`][optsched.exact.total_jct_cg.price_server] with
    ``node_limit`` nodes, pruned by slot prices on ``slots`` slots after ``lag_iterations`` subgradient steps).
    ``partitions``: known partitions (per server, job indices) whose per-server schedules seed the columns (by
    default the greedy schedule's, [`partition_of`][optsched.exact.total_jct_assign.partition_of]).
    ``start_prices``: job prices (one per job) for the first round instead of the master's duals, and so the first
    centre of the smoothing; e.g. [`lagrangian_start_prices`][optsched.exact.total_jct_cg.lagrangian_start_prices]
    (any prices keep the bound valid: it is computed from the prices used).

    Returns ``bound`` (an integer: the best round's sum_j pi_j + sum_m min(0, pricing lower bound), lowered by a
    relative 1e-7 and rounded up; ``None`` when some job fits no server alone: there is no single-server
    schedule), ``lp`` (the last master LP's value: with every pricing complete and no column below its
    threshold, equal to the bound), ``rounds``, ``complete`` (the best round's pricing searches all finished),
    ``columns``, ``nodes``, ``seconds``.
    """
    import numpy as np
    from scipy.optimize import linprog

    from .total_jct_assign import ServerOptima

    if start_prices is not None and len(start_prices) != inst.n_jobs:
        raise InstanceError(f"must have one price per job ({inst.n_jobs}), got {len(start_prices)}",
                            field="start_prices")
    t0 = time.perf_counter()
    deadline = math.inf if time_limit is None else t0 + time_limit
    jobs = inst.jobs
    n = len(jobs)
    caps = [s.gpus for s in inst.cluster.servers]
    # single-server duration of each job on each capacity (None: does not fit alone)
    dur: dict[int, list[int | None]] = {}
    for c in set(caps):
        dur[c] = [min((m.duration for m in j.modes if len(m.shape) == 1 and m.shape[0] <= c), default=None)
                  for j in jobs]
    if any(all(dur[c][i] is None for c in dur) for i in range(n)):
        return {"bound": None, "lp": None, "rounds": 0, "complete": False, "columns": 0, "nodes": 0,
                "seconds": time.perf_counter() - t0}
    classes = sorted(set(caps), reverse=True)
    count = {c: caps.count(c) for c in classes}
    cand = {c: [i for i in range(n) if dur[c][i] is not None] for c in classes}
    R = [j.release for j in jobs]
    Wt = [j.weight for j in jobs]
    Gp = [j.gpus for j in jobs]
    columns: list[tuple[int, frozenset[int], int]] = []  # (capacity, job set, cost)
    seen_cols: dict[tuple[int, frozenset[int]], int] = {}  # -> position in columns

    def add(c: int, S: frozenset[int], cost: int) -> bool:
        if not S:
            return False
        k = seen_cols.get((c, S))
        if k is None:
            seen_cols[(c, S)] = len(columns)
            columns.append((c, S, cost))
            return True
        if cost < columns[k][2]:
            columns[k] = (c, S, cost)
            return True
        return False

    opt = ServerOptima(inst, 5.0)
    if not partitions:  # without a known partition the slacks' large duals make the first pricing searches hard
        from ..algorithms.total_jct import greedy_total_jct
        from .total_jct_assign import partition_of

        partitions = [[sorted(p) for p in partition_of(inst, greedy_total_jct(inst), opt.fits)]]
    for part in partitions:
        for m, S in enumerate(part):
            if S:
                add(caps[m], frozenset(S), opt.value(m, frozenset(S)))
    big = float(sum(Wt[i] * (inst.horizon() + 1) for i in range(n)) + 1)
    prices_of: dict[int, _Prices] = {}
    for c in classes:
        J = cand[c]
        end = max(R) + math.ceil(sum(Gp[i] * (dur[c][i] or 0) for i in J) / c)
        prices_of[c] = _Prices([R[i] for i in J], [Wt[i] for i in J], [Gp[i] for i in J],
                               [dur[c][i] or 0 for i in J], c, end, slots)
    best_bound = -math.inf
    best_complete = False
    lp_val = None
    nodes = 0
    rounds = 0
    center: list[float] | None = None
    alpha = smoothing
    for _ in range(iterations):
        if time.perf_counter() > deadline:
            break
        rounds += 1
        # master: min sum cost x + big * slack; covering rows (>= 1) and one row per capacity class (<= count)
        nc = len(columns)
        A = np.zeros((n + len(classes), nc + n))
        cost = np.array([float(col[2]) for col in columns] + [big] * n)
        for k, (c, cs, _) in enumerate(columns):
            for i in cs:
                A[i, k] = -1.0
            A[n + classes.index(c), k] = 1.0
        for i in range(n):
            A[i, nc + i] = -1.0
        b = np.array([-1.0] * n + [float(count[c]) for c in classes])
        res = linprog(cost, A_ub=A, b_ub=b, bounds=(0, None), method="highs")
        if res.status != 0:  # pragma: no cover - the slacks make it always feasible
            break
        lp_val = float(res.fun)
        pi_lp = [max(0.0, -float(v)) for v in res.ineqlin.marginals[:n]]
        # dual smoothing (Wentges): price at a point between the best prices so far and the LP's duals
        if rounds == 1 and start_prices is not None:
            pi = [max(0.0, float(x)) for x in start_prices]
        else:
            pi = pi_lp if center is None else [alpha * a + (1 - alpha) * b for a, b in zip(center, pi_lp)]
        total = sum(pi)
        complete = True
        new = 0
        for c in classes:
            J = cand[c]
            pj = [pi[i] for i in J]
            pr = prices_of[c]
            known = min((cost_ - sum(pi[i] for i in S) for c_, S, cost_ in columns if c_ == c), default=0.0)
            pr.ascend(pj, lag_iterations, min(0.0, known))
            out = price_server([R[i] for i in J], [Wt[i] for i in J], [Gp[i] for i in J],
                               [dur[c][i] or 0 for i in J], c, pj, prices=pr, node_limit=node_limit,
                               collect_below=-1e-6, deadline=deadline, known=known)
            nodes += out.nodes
            complete = complete and out.complete
            total += count[c] * min(0.0, out.lower)
            for mask, (real, _) in out.columns.items():
                new += add(c, frozenset(J[x] for x in range(len(J)) if mask >> x & 1), real)
        if total > best_bound:
            best_bound, best_complete, center = total, complete, pi
        elif center is not None and new == 0:
            alpha *= 0.5  # the smoothed prices found no column: move towards the LP's duals
        if target is not None and math.ceil(best_bound - 1e-7 * max(1.0, abs(best_bound))) >= target:
            break  # the caller needs no more
        if new == 0 and center is not None and alpha > 0.05 and lp_val - best_bound > 1e-6 * max(1.0, abs(lp_val)) \
                and math.ceil(best_bound - 1e-7 * max(1.0, abs(best_bound))) < math.ceil(lp_val - 1e-6):
            continue
        if log:  # pragma: no cover - a progress line for manual runs
            print(f"round {rounds}: lp {lp_val:.2f} bound {total:.2f} best {best_bound:.2f} new {new} "
                  f"cols {len(columns)} nodes {nodes} {time.perf_counter() - t0:.1f}s", flush=True)
        if new == 0 or lp_val - best_bound < 1e-6 * max(1.0, abs(lp_val)) or \
                math.ceil(best_bound - 1e-7 * max(1.0, abs(best_bound))) >= math.ceil(lp_val - 1e-6):
            break  # costs are integers: the rounded bound cannot pass the master LP's value rounded up
    bound = None
    if best_bound > -math.inf:
        bound = max(math.ceil(best_bound - 1e-7 * max(1.0, abs(best_bound))), inst.trivial_lower_bound())
    return {"bound": bound, "lp": lp_val, "rounds": rounds, "complete": best_complete, "columns": len(columns),
            "nodes": nodes, "seconds": time.perf_counter() - t0}


def lagrangian_start_prices(inst: TotalJctInstance, *, slots: int = 1000, iterations: int = 300,
                            target: float | None = None) -> list[float]:
    """Job prices for [`cg_lower_bound`][optsched.exact.total_jct_cg.cg_lower_bound]'s first round from the
    Lagrangian bound of the whole instance ([`LagrangianBound`][optsched.exact.total_jct_lp.LagrangianBound]):
    pi_j = rest(j, 0), job j's least priced run. A starting point only (any prices give a valid bound): it puts the
    first round near the Lagrangian bound instead of far below it (12-job seed 0, OUR measurement: 187,207 after
    one round, against the Lagrangian 185,053 at the same 300 slots and 110,891 from the master's duals).

    ```pycon
    >>> from optsched.generators.total_jct import random_total_jct_instance
    >>> inst = random_total_jct_instance(6, 0)
    >>> pi = lagrangian_start_prices(inst, slots=100, iterations=20)
    >>> len(pi), min(pi) > 0
    (6, True)

    ```
    """
    from .total_jct_lp import LagrangianBound

    lag = LagrangianBound(inst, slots=slots, iterations=iterations, target=target)
    return [float(lag.rest(i, 0)) for i in range(inst.n_jobs)]


def split_instance(inst: TotalJctInstance, job: int, shape: tuple[int, ...],
                   weights: Sequence[int] | None = None) -> TotalJctInstance:
    """The instance in which job ``job`` (index), run in its multi-server mode of shape ``shape``, becomes one job
    per part of the shape (ids ``<id>#0``, ``<id>#1``, ...: that part's GPUs, the mode's duration, the job's
    release; the job's weight on part 0, weight 0 on the others), each with the single-server mode of its part;
    every other job unchanged. Each schedule of ``inst`` that runs ``job`` in that shape and every other job on
    one server is, part by part, a single-server schedule of it with the same cost (formulation, "Spread jobs,
    split"), so a lower bound on its single-server schedules bounds those schedules.

    ``weights``: the parts' weights (integers >= 0, one per part) instead of (w, 0, ..., 0). Their sum must be
    ``f`` times the job's weight for an integer ``f >= 1``; every other job's weight is then multiplied by ``f``, so
    each such schedule costs ``f`` times as much in the split instance (its parts end together): a bound ``B`` on
    the split instance gives ``ceil(B / f)``. Spreading the weight over the parts keeps the parts that carry weight
    from being put off to the end (formulation, "Spread jobs, split").

    ```pycon
    >>> from optsched.generators.total_jct import random_total_jct_instance
    >>> sub = split_instance(random_total_jct_instance(6, 0), 3, (3, 1))
    >>> [(j.id, j.gpus, j.weight, [m.shape for m in j.modes]) for j in sub.jobs[3:5]]
    [('j3#0', 3, 1, [(3,)]), ('j3#1', 1, 0, [(1,)])]

    ```
    """
    import dataclasses

    from ..problems.total_jct import Mode, TotalJctJob

    j = inst.jobs[job]
    mode = min((m for m in j.modes if m.shape == tuple(shape)), key=lambda m: m.duration, default=None)
    if mode is None or len(mode.shape) < 2:
        raise InstanceError(f"has no multi-server mode of shape {tuple(shape)!r}", field="modes", job=j.id)
    f = 1
    if weights is None:
        weights = split_weights(j.weight, mode.shape, "first")
    else:
        weights = list(weights)
        total = sum(weights)
        if len(weights) != len(mode.shape) or any(not isinstance(x, int) or x < 0 for x in weights) or \
                (j.weight == 0 and total != 0) or (j.weight > 0 and (total % j.weight or total == 0)):
            raise InstanceError(f"split weights {weights!r} must be {len(mode.shape)} integers >= 0 summing to a "
                                f"positive multiple of the job's weight {j.weight}", field="weights", job=j.id)
        f = split_factor(j.weight, weights)
    parts = tuple(TotalJctJob(f"{j.id}#{k}", j.release, q, (Mode((q,), mode.duration),), weights[k])
                  for k, q in enumerate(mode.shape))
    rest = inst.jobs if f == 1 else tuple(dataclasses.replace(x, weight=x.weight * f) for x in inst.jobs)
    return dataclasses.replace(inst, jobs=rest[:job] + parts + rest[job + 1:])


def shape_instance(inst: TotalJctInstance, job: int, shape: tuple[int, ...]) -> TotalJctInstance:
    """The instance in which job ``job`` (index) keeps only its modes of shape ``shape``; its schedules are the
    schedules of ``inst`` that run that job in that shape.

    ```pycon
    >>> from optsched.generators.total_jct import random_total_jct_instance
    >>> [m.shape for m in shape_instance(random_total_jct_instance(6, 0), 3, (2, 2)).jobs[3].modes]
    [(2, 2)]

    ```
    """
    from .total_jct_assign import modes_instance

    shape = tuple(shape)
    out = modes_instance(inst, job, lambda m: m.shape == shape)
    if out is None:
        raise InstanceError(f"has no mode of shape {shape!r}", field="modes", job=inst.jobs[job].id)
    return out


#: the rules of [`split_weights`][optsched.exact.total_jct_cg.split_weights]
SPLIT_WEIGHTS = ("first", "even", "gpus")


def split_weights(weight: int, shape: tuple[int, ...], rule: str) -> list[int]:
    """The parts' weights for [`split_instance`][optsched.exact.total_jct_cg.split_instance]: ``first`` (the job's
    weight on part 0), ``even`` (the job's weight on every part) or ``gpus`` (the weight times the part's GPUs).

    ```pycon
    >>> split_weights(1, (3, 1), "first"), split_weights(1, (3, 1), "even"), split_weights(2, (3, 1), "gpus")
    ([1, 0], [1, 1], [6, 2])

    ```
    """
    if rule == "first":
        return [weight] + [0] * (len(shape) - 1)
    if rule == "even":
        return [weight] * len(shape)
    if rule == "gpus":
        return [weight * q for q in shape]
    raise InstanceError(f"must be one of {', '.join(SPLIT_WEIGHTS)}, got {rule!r}", field="split_weights")


def split_factor(weight: int, weights: Sequence[int]) -> int:
    """The factor ``f`` of a split whose parts weigh ``weights`` (formulation, "Weighted split"): their sum over the
    job's ``weight`` (1 for a job of weight 0). Every other job's weight is multiplied by it, and a bound ``B`` on
    the split instance gives ``ceil(B / f)``.

    ```pycon
    >>> split_factor(2, split_weights(2, (3, 1), "gpus")), split_factor(1, [1, 0]), split_factor(0, [0, 0])
    (4, 1, 1)

    ```
    """
    return sum(weights) // weight if weight else 1


def spread_split_bound(inst: TotalJctInstance, upper: int, single: int | None, spread: dict[str, int], *,
                       slots: int = 2000, iterations: int = 1000, pair_slots: int = 1000, pair_iterations: int = 300,
                       cg_rounds: int = 0, cg_nodes: int = 400_000, weights: str = "even",
                       log: bool = False) -> dict[str, Any]:
    """The combined bound of formulation "Spread jobs, split": with ``upper`` the cost of a known schedule,
    ``single`` a lower bound on every single-server schedule (``None``: none exists) and ``spread`` the spread
    bounds B_j ([`spread_bounds`][optsched.exact.total_jct_assign.spread_bounds]), the optimum is at least

        min(upper, single, min over jobs j with B_j < upper and their multi-server shapes s of L(j, s),
            min over pairs j < k of such jobs of B(j, k))

    where L(j, s) is the larger of the Lagrangian bound (``slots``, ``iterations``) of the instance in which j keeps
    only shape s ([`shape_instance`][optsched.exact.total_jct_cg.shape_instance]) and, when that is below
    min(``upper``, ``single``) and ``cg_rounds`` > 0 (until it reaches that), the column-generation bound of the
    split instance (part weights by ``weights``, see [`split_weights`][optsched.exact.total_jct_cg.split_weights];
    ``cg_rounds`` rounds,
    ``cg_nodes`` nodes per pricing search, first priced at the Lagrangian start prices), and B(j, k) the
    Lagrangian bound (``pair_slots``, ``pair_iterations``) of the instance in which both keep only their
    multi-server modes; only the jobs with B_j below min(``upper``, ``single``) are looked at (the others' terms
    cannot be the least). Returns ``bound`` (the minimum; ``upper`` when it reaches it: the schedule is optimal),
    ``shapes`` ({(job id, shape): (Lagrangian, CG or None)}), ``pairs`` ({(id, id): bound}), ``seconds``.

    ```pycon
    >>> from optsched.generators.total_jct import random_total_jct_instance
    >>> from optsched.exact.total_jct_assign import spread_bounds
    >>> inst = random_total_jct_instance(6, 0)
    >>> spread = spread_bounds(inst, slots=200, iterations=20)
    >>> spread_split_bound(inst, 70497, 70497, spread, slots=200, iterations=20)["bound"]  # optimum (library)
    70497

    ```
    """
    import itertools

    from .total_jct_assign import spread_instance
    from .total_jct_lp import LagrangianBound

    t0 = time.perf_counter()
    index = {j.id: i for i, j in enumerate(inst.jobs)}
    goal = upper if single is None else min(upper, single)  # no term needs to pass the minimum's other terms
    open_jobs = sorted((index[x] for x, b in spread.items() if b < goal))
    shapes: dict[tuple[str, tuple[int, ...]], tuple[int, int | None]] = {}
    for i in open_jobs:
        j = inst.jobs[i]
        for shape in sorted({m.shape for m in j.modes if len(m.shape) > 1}):
            lag = LagrangianBound(shape_instance(inst, i, shape), slots=slots, iterations=iterations,
                                  target=upper).bound()
            cg = None
            if lag < goal and cg_rounds > 0:
                w = split_weights(j.weight, shape, weights)
                f = split_factor(j.weight, w)
                sub = split_instance(inst, i, shape, w)
                start = lagrangian_start_prices(sub, slots=slots, iterations=iterations, target=upper * f)
                res = cg_lower_bound(sub, iterations=cg_rounds, node_limit=cg_nodes, start_prices=start,
                                     target=goal * f, log=log)
                if res["bound"] is not None:
                    cg = math.ceil(res["bound"] / f)
            shapes[(j.id, shape)] = (lag, cg)
            if log:  # pragma: no cover - a progress line for manual runs
                print(f"{j.id} {shape}: Lagrangian {lag}, CG {cg}, {time.perf_counter() - t0:.1f}s", flush=True)
    pairs: dict[tuple[str, str], int] = {}
    for a, b in itertools.combinations(open_jobs, 2):
        both = spread_instance(spread_instance(inst, a) or inst, b)
        assert both is not None  # both have multi-server modes (they have spread bounds)
        pairs[(inst.jobs[a].id, inst.jobs[b].id)] = LagrangianBound(both, slots=pair_slots, iterations=pair_iterations,
                                                                    target=upper).bound()
    terms = [upper] + ([] if single is None else [single]) + list(pairs.values())
    terms += [max(lag, cg if cg is not None else lag) for lag, cg in shapes.values()]
    return {"bound": min(terms), "shapes": shapes, "pairs": pairs, "seconds": time.perf_counter() - t0}
