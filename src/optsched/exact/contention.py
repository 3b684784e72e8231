"""The optimal offline schedule of a contention instance under the repository's round model (paper 004).

**The round model** (``docs/formulations/contention-rounds.md``): time is cut into rounds of ``round_s`` seconds. In
each round a *configuration* runs: a set of released, unfinished jobs, each on one multi-node split of its
demand (2 GPUs: 2 x 1; 4: 2 x 2 or 4 x 1; 8: 2 x 4 or 4 x 2) within every node's GPUs. Job j then trains
``thp(j, servers) x ratio_j x round_s`` samples, ``ratio_j`` the measured table's pairwise worst case over the
multi-node jobs sharing a node with it, floored ([`fresh_ratios`][optsched.perf.measured.MeasuredPerf.fresh_ratios]).
A job completes at the end of the round in which its samples are reached; the objective is the total JCT
``sum_j (completion_j - arrival_j)``. Configurations of consecutive rounds are independent: any job may be
stopped, restarted or moved at a round boundary at no cost (the repository's LAS and SRTF re-place every job
every round), so the threshold preemption and the sticky ratios of the repository's RL inference constrain no
optimum: every policy of [`optsched.sim.contention`][], simulated with those rules, is at least this optimum
(each of its rounds is a configuration whose sticky ratios are at most the fresh ones, and more progress never
delays anybody).

**Methods.**

* [`solve_contention_dp`][optsched.exact.contention.solve_contention_dp] (``contention-dp``, the default): dynamic
  programming over rounds. The state is
  the round and the samples left per job; the choices of a round are the configurations of its active jobs,
  reduced to their *progress vectors* (equal vectors lead to equal futures; a vector dominated component-wise
  by another is never better, since more progress never delays anybody) and enumerated up to a relabelling of
  the nodes (all empty nodes are alike). Branch and bound with the lower bound "each job at its fastest split,
  alone, from now on" and a memo of exact states (time-shifted once every job has arrived).
* [`solve_contention_bb`][optsched.exact.contention.solve_contention_bb] (``contention-bb``, for 6-8 jobs): the same
  states and progress vectors, searched depth-first below the best total known (an upper bound passed down, from a
  first plan), with a transposition table of exact values and lower bounds keyed up to identical jobs, every
  configuration enumerated once for all sets of jobs, and stronger bounds computed for all of a state's choices at
  once. Equal to the DP on the benchmark's 30 instances of 4-5 jobs, 40 times faster there in all.
* [`brute_force_contention`][optsched.exact.contention.brute_force_contention] (``contention-brute``, the second method,
  tiny instances): every configuration
  of every round by plain enumeration (no symmetry, no dominance), depth-first with only the same bound.
* [`evaluate_plan`][optsched.exact.contention.evaluate_plan]: the independent scorer both methods' plans, and the
  simulator's, are checked with.

```pycon
>>> from optsched.generators.contention import random_contention_instance
>>> inst = random_contention_instance(jobs=3, seed=0, hours=0.25)
>>> dp, bf = solve_contention_dp(inst), brute_force_contention(inst)
>>> dp.status.value, dp.objective == bf.objective, evaluate_plan(inst, dp.info["plan"]).total_jct_s == dp.objective
('optimal', True, True)

```
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from ..errors import InstanceError, ScheduleError
from ..perf.measured import MeasuredPerf
from ..problems.contention import ContentionInstance
from ..registry import algorithm
from ..result import Result, Schedule, ScheduledJob, SolveStatus

# these doctests read the shared DeepShare tables: skipped when they are absent (conftest.py at the root)
__doctest_requires__ = {"*": "deepshare-contention"}

Plan = list[dict[str, tuple[int, ...]]]  # per round: job id -> node indices
TOL = 1e-9
# a job is done at the end of a round if what it still lacks would take at most EPS of that round at the round's
# rate: the simulator's accounting (runner.round_up) rounds a completion down to the boundary by the same rule
EPS = 1e-6


@dataclass(frozen=True)
class PlanEvaluation:
    """Completions (end of the finishing round), JCTs and the total of a plan."""

    completions: Mapping[str, float]
    jct: Mapping[str, float]
    total_jct_s: float
    rounds: int

    @property
    def avg_jct_s(self) -> float:
        return self.total_jct_s / len(self.jct) if self.jct else 0.0


def round_fractions(inst: ContentionInstance, perf: MeasuredPerf) -> list[dict[int, float]]:
    """Per job of ``inst`` (in order): the fraction of it done in one round alone on n servers, for each split n
    the job may take; its largest is the job's fastest progress (contention only lowers it).

    ```pycon
    >>> from optsched.generators.contention import random_contention_instance
    >>> inst = random_contention_instance(jobs=2, seed=1, hours=0.25)
    >>> fr = round_fractions(inst, MeasuredPerf(floor=inst.floor))
    >>> len(fr) == 2 and all(0 < f <= 1 for d in fr for f in d.values())
    True

    ```
    """
    return [{n: perf.throughput(j.model, j.gpus, n) * inst.round_s / j.samples for n, _ in inst.splits(j.gpus)}
            for j in inst.jobs]


class _Model:
    """Per-instance tables: throughput of each (job, action), ratio keys, release rounds."""

    def __init__(self, inst: ContentionInstance, perf: MeasuredPerf | None = None):
        self.inst = inst
        self.perf = perf or MeasuredPerf(floor=inst.floor, extrapolate=any(j.gpus > 8 for j in inst.jobs))
        self.ids = [j.id for j in inst.jobs]
        self.T = inst.round_s
        self.release = [math.ceil(j.arrival_s / self.T - TOL) for j in inst.jobs]
        self.splits = [inst.splits(j.gpus) for j in inst.jobs]
        self.frac = round_fractions(inst, self.perf)
        self.best = [max(f.values()) for f in self.frac]
        self.gpus = [j.gpus for j in inst.jobs]
        self.capacity = inst.total_gpus
        self.key = [{n: self.perf.table_key(j.model, j.gpus, n, j.id)[0] for n, _ in s}
                    for j, s in zip(inst.jobs, self.splits)]

    def progress(self, config: Mapping[int, tuple[int, ...]]) -> dict[int, float]:
        """Fraction of each job of ``config`` (job index -> nodes) done in one round."""
        entries = {str(i): (self.key[i][len(nodes)], nodes) for i, nodes in config.items()}
        r = self.perf.fresh_ratios(entries)
        return {i: self.frac[i][len(nodes)] * r[str(i)] for i, nodes in config.items()}

    def actions(self, i: int) -> list[tuple[int, ...]]:
        return [a for n, _ in self.splits[i] for a in itertools.combinations(range(self.inst.nodes), n)]

    def configs(self, active: Sequence[int], symmetric: bool) -> Iterator[dict[int, tuple[int, ...]]]:
        """Every capacity-feasible configuration of the ``active`` jobs (each off or on one action); with
        ``symmetric`` only one representative per relabelling of the empty nodes."""
        inst = self.inst
        per = {i: dict(self.splits[i]) for i in active}
        free = [inst.gpus_per_node] * inst.nodes
        cur: dict[int, tuple[int, ...]] = {}

        def rec(k: int) -> Iterator[dict[int, tuple[int, ...]]]:
            if k == len(active):
                yield dict(cur)
                return
            i = active[k]
            yield from rec(k + 1)  # off
            for n, g in per[i].items():
                choices: Iterator[tuple[int, ...]]
                if symmetric:
                    used = [s for s in range(inst.nodes) if free[s] < inst.gpus_per_node]
                    empty = [s for s in range(inst.nodes) if free[s] == inst.gpus_per_node]
                    choices = (tuple(sorted(u + tuple(empty[:n - len(u)])))
                               for m in range(0, n + 1) if n - m <= len(empty)
                               for u in itertools.combinations(used, m))
                else:
                    choices = itertools.combinations(range(inst.nodes), n)
                for nodes in choices:
                    if all(free[s] >= g for s in nodes):
                        for s in nodes:
                            free[s] -= g
                        cur[i] = nodes
                        yield from rec(k + 1)
                        del cur[i]
                        for s in nodes:
                            free[s] += g

        return rec(0)


def pareto_options(m: _Model, jobs: tuple[int, ...]) -> list[tuple[tuple[float, ...], dict[int, tuple[int, ...]]]]:
    """The non-dominated progress vectors (over ``jobs``) of the non-empty configurations of ``jobs``, each
    with one configuration that makes it, most total progress first."""
    best: dict[tuple[float, ...], dict[int, tuple[int, ...]]] = {}
    for cfg in m.configs(jobs, symmetric=True):
        if cfg:
            p = m.progress(cfg)
            best.setdefault(tuple(round(p.get(i, 0.0), 12) for i in jobs), cfg)
    vecs = sorted(best, key=lambda v: -sum(v))
    front: list[tuple[float, ...]] = []
    for v in vecs:  # a vector can only be dominated by one of larger (or equal) sum, seen before it
        if not any(all(a >= b for a, b in zip(w, v)) for w in front):
            front.append(v)
    return [(v, best[v]) for v in front]


def evaluate_plan(inst: ContentionInstance, plan: Sequence[Mapping[str, Sequence[int]]],
                  perf: MeasuredPerf | None = None, *, strict: bool = True) -> PlanEvaluation:
    """Score a plan (one ``{job id: node indices}`` per round from round 0) under the round model; a
    [`ScheduleError`][optsched.errors.ScheduleError] names the round and job of any violation (unknown job, illegal
    split,
    node capacity, a job before its arrival or after its completion, a job never completed). ``strict=False``
    drops a job from the rounds after its completion instead (a simulated policy's rounds, scored with fresh
    ratios, may finish a job earlier than the simulator did)."""
    m = _Model(inst, perf)
    index = {j: i for i, j in enumerate(m.ids)}
    left = [1.0] * len(m.ids)
    done: dict[str, float] = {}
    for t, cfg in enumerate(plan):
        free = [inst.gpus_per_node] * inst.nodes
        config = {}
        for jid, nodes in cfg.items():
            if jid not in index:
                raise ScheduleError(f"round {t}: unknown job", job=jid)
            i = index[jid]
            nodes = tuple(sorted(int(s) for s in nodes))
            g = inst.jobs[i].gpus
            if len(set(nodes)) != len(nodes) or any(not 0 <= s < inst.nodes for s in nodes):
                raise ScheduleError(f"round {t}: bad nodes {list(nodes)}", job=jid)
            if (len(nodes), g // len(nodes)) not in m.splits[i] or g % len(nodes):
                raise ScheduleError(f"round {t}: {g} GPUs over {len(nodes)} nodes is not a legal split", job=jid)
            if t < m.release[i]:
                raise ScheduleError(f"round {t}: runs before its arrival ({inst.jobs[i].arrival_s} s)", job=jid)
            if jid in done:
                if not strict:
                    continue
                raise ScheduleError(f"round {t}: runs after its completion", job=jid)
            for s in nodes:
                free[s] -= g // len(nodes)
                if free[s] < 0:
                    raise ScheduleError(f"round {t}: node {s} over capacity", job=jid)
            config[i] = nodes
        for i, p in m.progress(config).items():
            left[i] -= p
            if left[i] <= EPS * p:
                left[i] = 0.0
                done[m.ids[i]] = (t + 1) * m.T
    missing = [j for j in m.ids if j not in done]
    if missing:
        raise ScheduleError(f"{len(missing)} job(s) not completed by the plan's {len(plan)} rounds", job=missing[0])
    jct = {j: done[j] - inst.jobs[index[j]].arrival_s for j in m.ids}
    return PlanEvaluation(done, jct, float(sum(jct.values())), len(plan))


def _result(inst: ContentionInstance, m: _Model, plan: Plan, status: SolveStatus, t0: float, name: str,
            bound: float | None, info: dict[str, Any]) -> Result:
    ev = evaluate_plan(inst, plan, m.perf)
    first: dict[str, tuple[int, tuple[int, ...]]] = {}
    for t, cfg in enumerate(plan):
        for jid, nodes in cfg.items():
            first.setdefault(jid, (t, nodes))
    jobs = []
    for job in inst.jobs:
        t, nodes = first[job.id]
        jobs.append(ScheduledJob(job.id, t * inst.round_s, {f"n{s}": job.gpus // len(nodes) for s in nodes},
                                 completion=ev.completions[job.id]))
    info = {**info, "plan": [{j: list(v) for j, v in cfg.items()} for cfg in plan], "rounds": len(plan),
            "avg_jct_s": ev.avg_jct_s}
    return Result(ev.total_jct_s, status, time.perf_counter() - t0, Schedule(tuple(jobs), name, inst.name), name,
                  lower_bound=bound, info=info)


def _lb(m: _Model, t: int, left: Sequence[float], most: Sequence[float] = ()) -> int:
    """A lower bound on the sum over unfinished jobs of (completion round + 1) from round t on: the k-th
    completion is at least the k-th smallest "alone at the fastest split from now" round, and at least the rounds
    the cluster's GPUs need for the k smallest remaining GPU-round areas at the fastest split (the preemptive
    one-machine relaxation: shortest area first), and, with ``most[k-1]`` the largest progress (in job fractions)
    any configuration makes in a round on any k of these jobs, the rounds that rate needs for the k smallest
    remaining fractions; the sum of the largest of the three, k = 1..n."""
    own, area, frac = [], [], []
    for i, x in enumerate(left):
        if x > TOL:
            r = x / m.best[i]
            own.append(max(t, m.release[i]) + math.ceil(r - EPS))
            area.append(r * m.gpus[i])
            frac.append(x)
    own.sort()
    area.sort()
    frac.sort()
    total, acc, accf = 0, 0.0, 0.0
    for k, (o, a, f) in enumerate(zip(own, area, frac)):
        acc += a
        accf += f
        rate = most[k] if k < len(most) else math.inf
        total += max(o, t + math.ceil(acc / m.capacity - EPS), t + math.ceil(accf / rate - EPS))
    return total


def _cost_offset(inst: ContentionInstance) -> float:
    return sum(j.arrival_s for j in inst.jobs)


def contention_lower_bound(inst: ContentionInstance, perf: MeasuredPerf | None = None) -> float:
    """A lower bound on the optimal total JCT of any size (no job limit): the DP's bound at round 0 with bounds
    (a) and (b) of ``docs/formulations/contention-rounds.md`` (the k-th completion is no earlier than the k-th
    "alone at the fastest split" round, nor than the rounds the cluster's GPUs need for the k smallest areas).

    ```pycon
    >>> from optsched.generators.contention import random_contention_instance
    >>> inst = random_contention_instance(jobs=3, seed=0, hours=0.25)
    >>> contention_lower_bound(inst) <= solve_contention_dp(inst).objective
    True

    ```
    """
    m = _Model(inst, perf)
    return _lb(m, 0, [1.0] * len(m.ids)) * inst.round_s - _cost_offset(inst)


def solve_contention_dp(inst: ContentionInstance, *, time_limit: float | None = 60.0, max_jobs: int = 8,
                        perf: MeasuredPerf | None = None) -> Result:
    """The optimum by dynamic programming over rounds (module docstring); ``time_limit`` stops the search with
    the best plan found (status ``time limit``, the proven bound kept)."""
    if inst.n_jobs > max_jobs:
        raise InstanceError(f"at most {max_jobs} jobs for the exact model, got {inst.n_jobs}", field="jobs")
    t0 = time.perf_counter()
    m = _Model(inst, perf)
    n = len(m.ids)
    deadline = math.inf if time_limit is None else t0 + time_limit
    opts_cache: dict[tuple[int, ...], list[tuple[tuple[float, ...], dict[int, tuple[int, ...]]]]] = {}
    last_release = max(m.release, default=0)
    stats = {"states": 0, "memo_hits": 0, "option_sets": 0}

    def options(active: tuple[int, ...]):
        if active not in opts_cache:
            opts_cache[active] = pareto_options(m, active)
            stats["option_sets"] += 1
        return opts_cache[active]

    most_cache: dict[tuple[int, ...], list[float]] = {}

    def most(jobs: tuple[int, ...]) -> list[float]:
        """For k = 1.., the largest progress of a round on any k of ``jobs`` (released or not)."""
        if not jobs:
            return []
        if jobs not in most_cache:
            top = [0.0] * len(jobs)
            for v, _ in options(jobs):
                acc = 0.0
                for k, x in enumerate(sorted(v, reverse=True)):
                    acc += x
                    top[k] = max(top[k], acc)
            most_cache[jobs] = top
        return most_cache[jobs]

    memo: dict[tuple, tuple[float, list]] = {}
    incumbent: list[Any] = [math.inf, None]

    class _Timeout(Exception):
        pass

    def g(t: int, left: tuple[float, ...], acc: float, path: list) -> tuple[float, list]:
        """Exact least sum of (completion round + 1) over the unfinished jobs from round t on, and its plan.
        Only local pruning (a branch whose bound reaches this state's best so far), so memoised values are
        exact; ``acc`` and ``path`` only track the best complete plan seen (for a time limit)."""
        stats["states"] += 1
        unfinished = [i for i in range(n) if left[i] > TOL]
        if not unfinished:
            if acc < incumbent[0]:
                incumbent[0], incumbent[1] = acc, list(path)
            return 0.0, []
        # once every job has arrived the future does not depend on t but for a shift of t per unfinished job
        key, shift = ((t, left), 0) if t < last_release else ((-1, left), t * len(unfinished))
        if key in memo:
            stats["memo_hits"] += 1
            v, p = memo[key]
            return v + shift, p
        if time.perf_counter() > deadline:
            raise _Timeout
        active = tuple(i for i in unfinished if m.release[i] <= t)
        choices = options(active) if active else []
        if not choices:  # nothing released yet: wait a round
            v, p = g(t + 1, left, acc, path + [{}])
            best, plan = v, [{}] + p
        else:
            scored = []
            for vec, cfg in choices:
                nl = list(left)
                fin = 0
                for i, x in zip(active, vec):
                    nl[i] = left[i] - x
                    if nl[i] <= EPS * x:
                        nl[i] = 0.0
                        fin += t + 1
                rest = tuple(i for i in range(n) if nl[i] > TOL)
                scored.append((fin + _lb(m, t + 1, nl, most(rest)), fin, nl, cfg))
            scored.sort(key=lambda s: s[0])
            best, plan = math.inf, []
            for lb, fin, nl, cfg in scored:
                if lb >= best - 1e-9:
                    break
                v, p = g(t + 1, tuple(nl), acc + fin, path + [cfg])
                if fin + v < best:
                    best, plan = fin + v, [cfg] + p
        memo[key] = (best - shift, plan)
        return best, plan

    timed_out = False
    try:
        total, plan_idx = g(0, tuple([1.0] * n), 0.0, [])
    except _Timeout:
        timed_out = True
        total, plan_idx = incumbent[0], incumbent[1]
    if plan_idx is None:
        raise InstanceError("no plan found within the time limit", field="time_limit")
    plan: Plan = [{m.ids[i]: nodes for i, nodes in cfg.items()} for cfg in plan_idx]
    if timed_out:
        status, bound = SolveStatus.TIME_LIMIT, _lb(m, 0, [1.0] * n) * inst.round_s - _cost_offset(inst)
    else:
        status, bound = SolveStatus.OPTIMAL, total * inst.round_s - _cost_offset(inst)
    return _result(inst, m, plan, status, t0, "contention-dp", bound, dict(stats))


def brute_force_contention(inst: ContentionInstance, *, max_jobs: int = 4, max_rounds: int = 40,
                           perf: MeasuredPerf | None = None) -> Result:
    """The optimum by plain enumeration of every configuration of every round (module docstring), depth-first
    with the bound of [`solve_contention_dp`][optsched.exact.contention.solve_contention_dp] only; for a handful of jobs
    and short jobs."""
    if inst.n_jobs > max_jobs:
        raise InstanceError(f"at most {max_jobs} jobs for the brute force, got {inst.n_jobs}", field="jobs")
    t0 = time.perf_counter()
    m = _Model(inst, perf)
    n = len(m.ids)
    best: list[Any] = [math.inf, None]
    nodes_visited = [0]
    cfg_cache: dict[tuple[int, ...], list[tuple[dict[int, float], dict[int, tuple[int, ...]]]]] = {}

    def rec(t: int, left: list[float], acc: float, path: list) -> None:
        nodes_visited[0] += 1
        if all(x <= TOL for x in left):
            if acc < best[0]:
                best[0], best[1] = acc, list(path)
            return
        if t >= max_rounds or acc + _lb(m, t, left) >= best[0] - 1e-9:
            return
        active = tuple(i for i in range(n) if left[i] > TOL and m.release[i] <= t)
        if active not in cfg_cache:
            # most total progress first, so that a good plan is found early and bounds the rest
            cfg_cache[active] = sorted(((m.progress(c), c) for c in m.configs(active, symmetric=False)),
                                       key=lambda pc: -sum(pc[0].values()))
        for p, cfg in cfg_cache[active]:
            nl = list(left)
            fin = 0
            for i, x in p.items():
                nl[i] = left[i] - x
                if nl[i] <= EPS * x:
                    nl[i] = 0.0
                    fin += t + 1
            path.append(cfg)
            rec(t + 1, nl, acc + fin, path)
            path.pop()

    rec(0, [1.0] * n, 0.0, [])
    if best[1] is None:
        raise InstanceError(f"no plan completes every job within {max_rounds} rounds", field="max_rounds")
    plan: Plan = [{m.ids[i]: nodes for i, nodes in cfg.items()} for cfg in best[1]]
    obj = best[0] * inst.round_s - _cost_offset(inst)
    return _result(inst, m, plan, SolveStatus.OPTIMAL, t0, "contention-brute", obj, {"nodes": nodes_visited[0]})


def _front(vecs: Sequence[tuple[float, ...]]) -> list[int]:
    """Indices of the non-dominated vectors of ``vecs`` (equal vectors kept once), most total first (ties in
    the given order)."""
    if not len(vecs):
        return []
    arr = np.array(vecs, dtype=float)
    order = sorted(range(len(vecs)), key=lambda k: -sum(vecs[k]))
    keep: list[int] = []
    front = np.empty((0, arr.shape[1]))
    for k in order:  # a vector can only be dominated by one of larger (or equal) sum, seen before it
        if not (front >= arr[k]).all(axis=1).any():
            keep.append(k)
            front = np.vstack([front, arr[k]])
    return keep


def _config_table(m: _Model) -> dict[int, list[tuple[tuple[float, ...], dict[int, tuple[int, ...]]]]]:
    """Every configuration of all the jobs, enumerated once as
    [`pareto_options`][optsched.exact.contention.pareto_options] does for each set (the same representatives of
    the empty-node relabellings), grouped by the set of jobs it runs (a bit mask): per group, its non-dominated
    progress vectors over all the jobs (0 for the jobs off), each with one configuration. The options of a set S
    are the non-dominated vectors of the groups inside S."""
    inst = m.inst
    n, G, N = len(m.ids), inst.gpus_per_node, inst.nodes
    pr = {(i, a, l, b): m.perf.pair_ratio(m.key[i][a], m.key[l][b])
          for i in range(n) for a in m.frac[i] for l in range(n) for b in m.frac[l] if l != i}
    free = [G] * N
    placed: list[tuple[int, int, frozenset[int]]] = []
    ratio = [1.0] * n
    cur: dict[int, tuple[int, ...]] = {}
    # per set of jobs run: (ratios, splits) -> one configuration; the progress vectors are made after
    groups: dict[int, dict[tuple[tuple[float, ...], int], dict[int, tuple[int, ...]]]] = {}

    def rec(i: int, mask: int, code: int) -> None:
        if i == n:
            if mask:
                g = groups.setdefault(mask, {})
                leaf = (tuple(ratio), code)
                if leaf not in g:
                    g[leaf] = dict(cur)
            return
        rec(i + 1, mask, code * 8)  # off (the mask tells it from split 0)
        for split, (k, g_per) in enumerate(m.splits[i]):
            used = [s for s in range(N) if free[s] < G]
            empty = [s for s in range(N) if free[s] == G]
            for u in range(0, k + 1):
                if k - u > len(empty):
                    continue
                for us in itertools.combinations(used, u):
                    nodes = tuple(sorted(us + tuple(empty[:k - u])))
                    if any(free[s] < g_per for s in nodes):
                        continue
                    ns = frozenset(nodes)
                    saved = list(ratio)
                    for l, b, ls in placed:
                        if ls & ns:
                            ratio[i] = min(ratio[i], pr[(i, k, l, b)])
                            ratio[l] = min(ratio[l], pr[(l, b, i, k)])
                    for s in nodes:
                        free[s] -= g_per
                    placed.append((i, k, ns))
                    cur[i] = nodes
                    rec(i + 1, mask | 1 << i, code * 8 + split)
                    del cur[i]
                    placed.pop()
                    for s in nodes:
                        free[s] += g_per
                    ratio[:] = saved

    rec(0, 0, 0)
    out = {}
    for mask, g in groups.items():
        by_vec: dict[tuple[float, ...], dict[int, tuple[int, ...]]] = {}
        for (rat, _), cfg in g.items():
            vec = tuple(round(m.frac[j][len(cfg[j])] * rat[j], 12) if j in cfg else 0.0 for j in range(n))
            by_vec.setdefault(vec, cfg)
        vecs = list(by_vec)
        out[mask] = [(vecs[k], by_vec[vecs[k]]) for k in _front(vecs)]
    return out


class _Search:
    """The state of one branch-and-bound run (``solve_contention_bb``): option matrices per set of active jobs,
    the batch lower bound of a state's children, and a transposition table of exact values and lower bounds."""

    def __init__(self, m: _Model, deadline: float, max_states: int | None):
        self.m = m
        n = self.n = len(m.ids)
        self.deadline, self.max_states = deadline, max_states
        self.release = np.array(m.release, dtype=float)
        self.best = np.array(m.best)
        self.gpus = np.array(m.gpus, dtype=float)
        self.bits = 1 << np.arange(n)
        self.last_release = max(m.release, default=0)
        inst = m.inst
        # identical jobs (same model, demand, samples and release) are interchangeable: a state is keyed by the
        # multiset of (class, fraction left) pairs
        sig = [(j.model, j.gpus, j.samples, r) for j, r in zip(inst.jobs, m.release)]
        self.cls = [sig.index(s) for s in sig]
        self.opts: dict[tuple[int, ...], tuple[np.ndarray, list[dict[int, tuple[int, ...]]]]] = {}
        self.pareto: dict[tuple[int, ...], list[tuple[tuple[float, ...], dict[int, tuple[int, ...]]]]] = {}
        self.most_rows: dict[int, np.ndarray] = {}
        self.table: dict[int, list[tuple[tuple[float, ...], dict[int, tuple[int, ...]]]]] | None = None
        self.memo: dict[tuple, list[float]] = {}  # key -> [lower bound, exact value or inf], minus the shift
        self.stats = {"states": 0, "memo_hits": 0, "option_sets": 0}

    def pareto_of(self, jobs: tuple[int, ...]):
        """[`pareto_options`][optsched.exact.contention.pareto_options] of ``jobs``, read from the table of every
        configuration (enumerated once, at the first call)."""
        if jobs not in self.pareto:
            if self.table is None:
                self.table = _config_table(self.m)
            mask = sum(1 << i for i in jobs)
            cand = [(v, c) for t, g in self.table.items() if not t & ~mask for v, c in g]
            vecs = [tuple(v[i] for i in jobs) for v, _ in cand]
            self.pareto[jobs] = [(vecs[k], cand[k][1]) for k in _front(vecs)]
            self.stats["option_sets"] += 1
        return self.pareto[jobs]

    def options(self, active: tuple[int, ...]) -> tuple[np.ndarray, list[dict[int, tuple[int, ...]]]]:
        if active not in self.opts:
            p = self.pareto_of(active)
            self.opts[active] = (np.array([v for v, _ in p], dtype=float).reshape(len(p), len(active)),
                                 [c for _, c in p])
        return self.opts[active]

    def most_row(self, mask: int) -> np.ndarray:
        """Bounds (c) and (d)'s rates for the jobs of ``mask``: row 0, for k = 1.., the largest progress (in job
        fractions) of one round on any k of them; row 1, the same in rounds at the job's fastest split alone
        (progress / ``best``); inf past their number."""
        if mask not in self.most_rows:
            jobs = tuple(i for i in range(self.n) if mask >> i & 1)
            top = np.full((2, self.n), np.inf)
            if jobs:
                V = self.options(jobs)[0]
                for row, W in enumerate((V, V / self.best[list(jobs)])):
                    top[row, :len(jobs)] = np.cumsum(-np.sort(-W, axis=1), axis=1).max(axis=0)
            self.most_rows[mask] = top
        return self.most_rows[mask]

    def bounds(self, t: int, X: np.ndarray) -> np.ndarray:
        """A lower bound on the least sum of (completion round + 1) from round ``t`` for every row of ``X``
        (fractions left): for k = 1.., the largest of bounds (a)-(d) of ``docs/formulations/contention-rounds.md``
        on the k-th completion, summed."""
        U = X > TOL
        kk = np.arange(1, self.n + 1)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = X / self.best
            need = np.ceil(r - EPS)  # rounds of running each job still needs, at the least
            own = np.sort(np.where(U, np.maximum(t, self.release) + need, np.inf), axis=1)
            area = t + np.ceil(np.cumsum(np.sort(np.where(U, need * self.gpus, np.inf), axis=1), axis=1)
                               / self.m.capacity - EPS)
            masks = U.astype(np.int64) @ self.bits
            uniq, inv = np.unique(masks, return_inverse=True)
            rates = np.stack([self.most_row(int(u)) for u in uniq])[inv.reshape(-1)]
            frac = t + np.ceil(np.cumsum(np.sort(np.where(U, X, np.inf), axis=1), axis=1) / rates[:, 0] - EPS * kk)
            norm = t + np.ceil((np.cumsum(np.sort(np.where(U, r, np.inf), axis=1), axis=1) - EPS * kk)
                               / rates[:, 1])
            best = np.maximum(np.maximum(own, area), np.maximum(np.nan_to_num(frac, nan=t), np.nan_to_num(norm, nan=t)))
            return np.where(kk <= U.sum(axis=1)[:, None], best, 0.0).sum(axis=1)

    def children(self, t: int, left: tuple[float, ...]):
        """(bound, completions counted, next fractions, configuration) of every choice of round t, best bound
        first; ``None`` for configuration means waiting (nothing released)."""
        active = tuple(i for i in range(self.n) if left[i] > TOL and self.m.release[i] <= t)
        if not active:
            row = np.array([left])
            return iter([(float(self.bounds(t + 1, row)[0]), 0, left, {})])
        V, cfgs = self.options(active)
        X = np.tile(np.array(left), (len(V), 1))
        idx = list(active)
        sub = X[:, idx] - V
        done = sub <= EPS * V
        sub[done] = 0.0
        X[:, idx] = sub
        fin = done.sum(axis=1) * (t + 1)
        f = fin + self.bounds(t + 1, X)
        order = np.argsort(f, kind="stable")
        # made lazily: a search usually stops after the first few
        return ((float(f[c]), int(fin[c]), tuple(X[c].tolist()), cfgs[c]) for c in order.tolist())

    def key(self, t: int, left: tuple[float, ...]) -> tuple[tuple, int]:
        """The transposition key of a state and the shift of its value (once every job has arrived, the future
        does not depend on t but for a shift of t per unfinished job)."""
        pairs = tuple(sorted((self.cls[i], round(x, 10)) for i, x in enumerate(left) if x > TOL))
        if t < self.last_release:
            return (t, pairs), 0
        return (-1, pairs), t * len(pairs)

    def search(self, t: int, left: tuple[float, ...], budget: float) -> float:
        """The least sum of (completion round + 1) over the unfinished jobs from round t on if it is below
        ``budget`` (then stored as exact), else a lower bound on it that is at least ``budget``."""
        if all(x <= TOL for x in left):
            return 0.0
        key, shift = self.key(t, left)
        entry = self.memo.get(key)
        if entry is not None:
            self.stats["memo_hits"] += 1
            if entry[1] < math.inf:
                return entry[1] + shift
            if entry[0] + shift >= budget:
                return entry[0] + shift
        self.stats["states"] += 1
        if time.process_time() > self.deadline or (self.max_states is not None
                                                   and self.stats["states"] > self.max_states):
            raise _Stop
        best, lower = math.inf, math.inf
        for f, fin, nl, _ in self.children(t, left):
            cap = min(budget, best)
            if f >= cap:
                lower = min(lower, f)
                break
            v = fin + self.search(t + 1, nl, cap - fin)
            if v < cap:
                best = v
            else:
                lower = min(lower, v)
        if best < budget:
            self.memo[key] = [best - shift, best - shift]
            return best
        lb = max(lower, entry[0] + shift if entry is not None else -math.inf)
        self.memo[key] = [lb - shift, math.inf]
        return lb

    def exact(self, t: int, left: tuple[float, ...]) -> float:
        if all(x <= TOL for x in left):
            return 0.0
        key, shift = self.key(t, left)
        entry = self.memo.get(key)
        return math.inf if entry is None else entry[1] + shift

    def plan(self, value: float) -> list[dict[int, tuple[int, ...]]]:
        """An optimal plan, read back from the exact values of the table."""
        t, left, out = 0, tuple([1.0] * self.n), []
        while any(x > TOL for x in left):
            for _, fin, nl, cfg in self.children(t, left):
                if abs(fin + self.exact(t + 1, nl) - value) < 1e-6:
                    out.append(cfg)
                    value -= fin
                    t, left = t + 1, nl
                    break
            else:  # pragma: no cover - the table holds the optimum's path by construction
                raise AssertionError("no child attains the optimal value")
        return out

    def dive(self) -> tuple[float, list[dict[int, tuple[int, ...]]]]:
        """A first plan: the child of best bound at every round (an upper bound for the search)."""
        t, left, total, out = 0, tuple([1.0] * self.n), 0.0, []
        while any(x > TOL for x in left):
            _, fin, nl, cfg = next(self.children(t, left))
            out.append(cfg)
            total += fin
            t, left = t + 1, nl
        return total, out


class _Stop(Exception):
    pass


def _clean(inst: ContentionInstance, plan: Sequence[Mapping[str, Sequence[int]]], m: _Model) -> Plan:
    """``plan`` with every job dropped from the rounds after its completion (scored with fresh ratios), until
    nothing changes: a strict plan no worse than ``plan`` scored leniently."""
    cur: Plan = [{j: tuple(int(s) for s in v) for j, v in cfg.items()} for cfg in plan]
    while True:
        ev = evaluate_plan(inst, cur, m.perf, strict=False)
        last = {j: round(c / inst.round_s) for j, c in ev.completions.items()}
        new = [{j: v for j, v in cfg.items() if t < last[j]} for t, cfg in enumerate(cur)]
        new = new[:max(last.values(), default=0)]
        if new == cur:
            return cur
        cur = new


def solve_contention_bb(inst: ContentionInstance, *, time_limit: float | None = 60.0,
                        max_states: int | None = None, incumbent: Sequence[Mapping[str, Sequence[int]]] | None = None,
                        max_jobs: int = 10, perf: MeasuredPerf | None = None) -> Result:
    """The optimum by depth-first branch and bound over rounds with a transposition table (module docstring,
    ``docs/formulations/contention-rounds.md``): the same states, progress vectors and bounds as
    [`solve_contention_dp`][optsched.exact.contention.solve_contention_dp], but every branch is searched only
    below the best total known (an upper bound passed down), identical jobs are interchangeable in the table,
    and a first plan comes from a dive (or ``incumbent``, a plan such as a simulated policy's rounds, when better).
    ``time_limit`` is in CPU seconds of this process; it and ``max_states`` (a deterministic limit) stop the
    search with the best plan known (status ``time limit``, the root bound kept).

    ```pycon
    >>> from optsched.generators.contention import random_contention_instance
    >>> inst = random_contention_instance(jobs=4, seed=1, hours=0.25)
    >>> bb = solve_contention_bb(inst)
    >>> bb.status.value, bb.objective == solve_contention_dp(inst).objective
    ('optimal', True)

    ```
    """
    if inst.n_jobs > max_jobs:
        raise InstanceError(f"at most {max_jobs} jobs for the exact model, got {inst.n_jobs}", field="jobs")
    t0 = time.perf_counter()
    m = _Model(inst, perf)
    n = len(m.ids)
    s = _Search(m, math.inf if time_limit is None else time.process_time() + time_limit, max_states)
    ub, plan_idx = s.dive()
    plan: Plan = [{m.ids[i]: nodes for i, nodes in cfg.items()} for cfg in plan_idx]
    source = "dive"
    if incumbent is not None:
        given = _clean(inst, incumbent, m)
        value = (evaluate_plan(inst, given, m.perf).total_jct_s + _cost_offset(inst)) / inst.round_s
        if value < ub - 1e-6:
            ub, plan, source = round(value), given, "incumbent"
    root = tuple([1.0] * n)
    try:
        v = s.search(0, root, ub)
        status = SolveStatus.OPTIMAL
        if v < ub:
            ub, source = v, "search"
            plan = [{m.ids[i]: nodes for i, nodes in cfg.items()} for cfg in s.plan(v)]
        bound = ub
    except _Stop:
        status = SolveStatus.TIME_LIMIT
        key, shift = s.key(0, root)
        bound = max(_lb(m, 0, list(root)), s.memo.get(key, [-math.inf])[0] + shift)
    info = {**s.stats, "first_plan": source, "table": len(s.memo)}
    res = _result(inst, m, plan, status, t0, "contention-bb", bound * inst.round_s - _cost_offset(inst), info)
    if status is SolveStatus.OPTIMAL and abs((res.objective or 0.0) - bound * inst.round_s + _cost_offset(inst)) > 1e-3:
        # the search's value and the independent scorer's disagree (docs/formulations/contention-rounds.md, item 4)
        raise AssertionError(f"search value {res.lower_bound} but the plan scores {res.objective}")
    return res


@algorithm("contention-dp", ContentionInstance, exact=True,
           description="optimal total JCT under the round model (DP over rounds with dominance and bounds)")
def _registered_dp(inst: ContentionInstance, *, seed: int | None = None, time_limit: float | None = None,
                   **options: Any) -> Result:
    return solve_contention_dp(inst, time_limit=60.0 if time_limit is None else time_limit, **options)


@algorithm("contention-bb", ContentionInstance, exact=True,
           description="optimal total JCT under the round model (branch and bound over rounds, 6-8 jobs)")
def _registered_bb(inst: ContentionInstance, *, seed: int | None = None, time_limit: float | None = None,
                   **options: Any) -> Result:
    return solve_contention_bb(inst, time_limit=60.0 if time_limit is None else time_limit, **options)


@algorithm("contention-brute", ContentionInstance, exact=True,
           description="optimal total JCT under the round model by plain enumeration (tiny instances)")
def _registered_brute(inst: ContentionInstance, *, seed: int | None = None, time_limit: float | None = None,
                      **options: Any) -> Result:
    return brute_force_contention(inst, **options)


__all__ = ["Plan", "PlanEvaluation", "brute_force_contention", "contention_lower_bound", "evaluate_plan",
           "pareto_options", "round_fractions", "solve_contention_bb", "solve_contention_dp"]
