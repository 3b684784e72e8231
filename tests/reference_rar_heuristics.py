"""The RAR-DDLS heuristics' packer and the evaluator as they were before issue 16 (numpy, O(GPUs) per placed
job; the evaluator re-deriving every job's contention at every event), kept verbatim as test oracles: the fast
implementations in ``optsched.algorithms`` and ``optsched.evaluators.rar`` must give the very same schedules,
``info`` and completions (``tests/test_rar_scale.py``). Not part of the package."""

# ruff: noqa
# mypy: ignore-errors
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from optsched.algorithms.sjf_bco import estimates
from optsched.errors import InstanceError
from optsched.evaluators.rar import check_feasible
from optsched.perf.rar import contention, iteration_time, iterations_per_slot, max_contention, phi_for
from optsched.problems.rar import RarInstance
from optsched.result import Schedule, ScheduledJob
from optsched.errors import ScheduleError

_EPS = 1e-9


# -- the list-schedule packing in simulated time ---------------------------------------------------------------
@dataclass
class Packing:
    """One complete packing of every job: the schedule, its exact makespan and the estimated GPU loads."""

    makespan: int
    start: np.ndarray            # per job index
    completion: np.ndarray       # per job index
    gpus: list[np.ndarray]       # per job index: global GPU indices
    loads: np.ndarray            # per GPU: estimated load U
    theta: float = 0.0
    kappa: int | None = None


# A rule picks G_j GPUs for job j among the GPUs of ``mask`` (a boolean array over all GPUs), or returns None
# when there are not enough of them.
Rule = Callable[["Packer", int, np.ndarray], "np.ndarray | None"]


class Packer:
    """Per-instance precomputation and the packing loop shared by SJF-BCO and the baselines FF, LS, RAND."""

    def __init__(self, inst: RarInstance, lam: float | None = None):
        self.inst = inst
        self.est = estimates(inst)
        servers = inst.cluster.servers
        self.n_servers = len(servers)
        self.cap = np.array([s.gpus for s in servers], dtype=np.int64)
        self.gpu_server = np.repeat(np.arange(self.n_servers), self.cap)           # GPU -> server index
        self.gpu_local = np.concatenate([np.arange(c) for c in self.cap])          # GPU -> index on its server
        self.n_gpus = int(self.cap.sum())
        self.jobs = inst.jobs
        n = len(self.jobs)
        self.size = np.array([j.gpus for j in self.jobs], dtype=np.int64)
        self.iters = np.array([j.iterations for j in self.jobs], dtype=np.int64)
        self.load = np.array([self.est.load[j.id] for j in self.jobs], dtype=float)
        if lam is not None:
            if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not lam >= 1:
                raise InstanceError(f"must be a number >= 1, got {lam!r}", field="lam")
        self.lam = np.array([float(lam) if lam is not None else j.lam for j in self.jobs], dtype=float)
        self.p_max = max_contention(inst)
        # phi[j, n_servers, p], filled lazily from optsched.perf.rar so it agrees exactly with the evaluator
        self._phi = np.zeros((n, self.n_servers + 1, self.p_max + 1), dtype=np.int64)

    # -- helpers ---------------------------------------------------------------------------------------------
    def _fill_phi(self, idx: np.ndarray, ns: np.ndarray, ps: np.ndarray) -> np.ndarray:
        vals = self._phi[idx, ns, ps]
        for k in np.nonzero(vals == 0)[0]:
            j, n, p = int(idx[k]), int(ns[k]), int(ps[k])
            v = iterations_per_slot(iteration_time(self.inst, self.jobs[j], n, p))
            self._phi[j, n, p] = v
            vals[k] = v
        return vals

    def placement(self, gpus: np.ndarray) -> dict[str, int]:
        counts = np.bincount(self.gpu_server[gpus], minlength=self.n_servers)
        ids = self.inst.cluster.server_ids
        return {ids[s]: int(c) for s, c in enumerate(counts) if c}

    # -- the packing -----------------------------------------------------------------------------------------
    def run(self, order: Sequence[int], theta: float, rule_for: Callable[[int], Rule],
            cutoff: float = math.inf) -> Packing | None:
        """Place the jobs of ``order`` one by one (list schedule, monotone clock) under the load limit
        ``theta``; ``rule_for(j)`` gives the placement rule of job j. Returns None when some job can never be
        placed (Alg. 2/3 line "return empty") or when the makespan would reach ``cutoff`` (such a packing
        cannot be kept by Alg. 1 lines 22 and 25, so it is abandoned early)."""
        n = len(self.jobs)
        S = self.n_servers
        U = self._U = np.zeros(self.n_gpus)   # the rules read the current loads through ``_U``
        owner_free = np.ones(self.n_gpus, dtype=bool)   # GPU idle at the current slot
        active = np.zeros(n, dtype=bool)
        rem = self.iters.copy()
        start = np.full(n, -1, dtype=np.int64)
        comp = np.full(n, -1, dtype=np.int64)
        nserv = np.zeros(n, dtype=np.int64)
        uses = np.zeros((n, S), dtype=np.int64)          # 1 where job j uses server s
        split = np.zeros(n, dtype=bool)
        cnt = np.zeros(S, dtype=np.int64)               # active split jobs per server
        phi = np.zeros(n, dtype=np.int64)
        gpus: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * n
        t = 0
        dirty = False

        def advance() -> None:
            """Jump the clock to the next completion (no job starts in between: the clock is monotone)."""
            nonlocal t, dirty
            idx = np.nonzero(active)[0]
            if dirty:
                p = np.zeros(len(idx), dtype=np.int64)
                sp = split[idx]
                if sp.any():
                    p[sp] = (uses[idx[sp]] * cnt).max(axis=1)
                phi[idx] = self._fill_phi(idx, nserv[idx], p)
                dirty = False
            steps = -(-rem[idx] // phi[idx])
            step = int(steps.min())
            t += step
            rem[idx] -= phi[idx] * step
            done = idx[rem[idx] <= 0]
            comp[done] = t
            active[done] = False
            for j in done:
                owner_free[gpus[j]] = True
                if split[j]:
                    cnt[:] -= uses[j]
            dirty = True

        for j in order:
            rule = rule_for(j)
            load_ok = U + self.load[j] <= theta + _EPS
            # U does not change while waiting, so a job the load limit excludes even with every GPU idle can
            # never be placed: fail now instead of draining the cluster first (same outcome, less work).
            enough = getattr(rule, "enough", None)
            if not (enough(self, j, load_ok) if enough else rule(self, j, load_ok) is not None):
                return None
            while True:
                chosen = rule(self, j, load_ok & owner_free)
                if chosen is not None:
                    break
                if not active.any():
                    return None
                advance()
                if t >= cutoff:
                    return None
            chosen = np.asarray(chosen, dtype=np.int64)
            gpus[j] = chosen
            owner_free[chosen] = False
            U[chosen] += self.load[j]
            per = np.bincount(self.gpu_server[chosen], minlength=S)
            uses[j] = per > 0
            nserv[j] = int(uses[j].sum())
            if nserv[j] > 1:
                split[j] = True
                cnt += uses[j]
            start[j] = t
            active[j] = True
            dirty = True
        while active.any():
            advance()
            if active.any() and t >= cutoff:
                return None
        makespan = int(comp.max())
        if makespan >= cutoff:
            return None
        return Packing(makespan, start, comp, gpus, U, theta)

    def schedule(self, packing: Packing, algorithm: str) -> Schedule:
        return Schedule(tuple(ScheduledJob(job.id, int(packing.start[i]), self.placement(packing.gpus[i]))
                              for i, job in enumerate(self.jobs)), algorithm=algorithm, instance=self.inst.name)

    def total_load(self) -> float:
        return float((self.load * self.size).sum())


# -- placement rules ------------------------------------------------------------------------------------------
def fa_ffp(pk: Packer, j: int, mask: np.ndarray) -> np.ndarray | None:
    """Algorithm 2 lines 2-4: the G_j GPUs of ``mask`` with least U (ties: lower GPU index)."""
    cand = np.nonzero(mask)[0]
    g = pk.size[j]
    if len(cand) < g:
        return None
    return cand[np.argsort(pk_U(pk)[cand], kind="stable")[:g]]


def lbsgf(pk: Packer, j: int, mask: np.ndarray) -> np.ndarray | None:
    """Algorithm 3 lines 2-8: the fewest least-busy servers (mean U ascending, ties by server order) holding
    lambda_j * G_j GPUs; among their GPUs of ``mask``, the G_j with least U (ties: server rank, GPU index)."""
    U = pk_U(pk)
    g = pk.size[j]
    mean = np.bincount(pk.gpu_server, weights=U, minlength=pk.n_servers) / pk.cap
    order = np.argsort(mean, kind="stable")
    m = int(np.searchsorted(np.cumsum(pk.cap[order]), pk.lam[j] * g - _EPS)) + 1
    rank = np.full(pk.n_servers, pk.n_servers + 1)
    rank[order[:m]] = np.arange(min(m, pk.n_servers))
    gpu_rank = rank[pk.gpu_server]
    cand = np.nonzero(mask & (gpu_rank <= pk.n_servers))[0]
    if len(cand) < g:
        return None
    return cand[np.lexsort((cand, gpu_rank[cand], U[cand]))[:g]]


def pk_U(pk: Packer) -> np.ndarray:
    """The estimated GPU loads U of the packing in progress."""
    return pk._U


# -- Algorithm 1 -----------------------------------------------------------------------------------------------
def bisect_theta(pk: Packer, pack_for_theta: Callable[[int, float], Packing | None]) -> Packing | None:
    """Algorithm 1 lines 5-30: integer bisection on theta over [1, T]; a theta whose best packing strictly
    improves the best makespan so far moves ``right`` below it, any other theta moves ``left`` above it.

    Fallback (not in the paper): if no theta in [1, T] packs every job (the estimated loads exceed the
    horizon), the same bisection runs over [T + 1, ceil(total estimated load)]. At the upper end no GPU's
    load can exceed theta, so the packing always succeeds and a schedule is always returned."""
    best: Packing | None = None
    m = math.inf
    top = max(pk.inst.horizon, math.ceil(pk.total_load()))
    for left, right in ((1, pk.inst.horizon), (pk.inst.horizon + 1, top)):
        while left <= right:
            theta = (left + right) // 2
            cand = pack_for_theta(theta, m)
            if cand is not None and cand.makespan < m:
                m, best = cand.makespan, cand
                right = theta - 1
            else:
                left = theta + 1
        if best is not None:
            return best
    return best


def kappa_classes(inst: RarInstance, kappa: int | None) -> list[int]:
    """The kappa values Algorithm 1 line 8 needs: 1..n_g, keeping the first kappa of each class of values that
    send the same jobs to FA-FFP (G_j <= kappa); a fixed ``kappa`` gives just that value."""
    if kappa is not None:
        return [kappa]
    sizes = sorted({j.gpus for j in inst.jobs})
    seen, out = set(), []
    for k in range(1, inst.max_job_gpus + 1):
        key = sum(1 for s in sizes if s <= k)
        if key not in seen:
            seen.add(key)
            out.append(k)
    return out


def sjf_order(inst: RarInstance) -> list[int]:
    """Algorithm 1 line 4: jobs by G_j ascending; ties keep the instance order (stable sort)."""
    return sorted(range(len(inst.jobs)), key=lambda i: inst.jobs[i].gpus)


def run_sjf_bco(inst: RarInstance, kappa: int | None = None, lam: float | None = None,
                packer: Packer | None = None) -> tuple[Packer, Packing]:
    """Algorithm 1: returns the packer and the kept packing (with its theta and kappa)."""
    if kappa is not None and (isinstance(kappa, bool) or not isinstance(kappa, int) or kappa < 1):
        raise InstanceError(f"must be a positive integer, got {kappa!r}", field="kappa")
    pk = packer or Packer(inst, lam)
    order = sjf_order(inst)
    kappas = kappa_classes(inst, kappa)

    def pack_for_theta(theta: int, m: float) -> Packing | None:
        best: Packing | None = None           # Alg. 1 line 7: m_theta <- T (here: +inf, see bisect_theta)
        for k in kappas:                      # lines 8-23
            cutoff = min(m, best.makespan if best else math.inf)
            res = pack(pk, order, theta, sjf_bco_rules(pk, k), cutoff)
            if res is not None and (best is None or res.makespan < best.makespan):
                res.kappa = k
                best = res
        return best

    best = bisect_theta(pk, pack_for_theta)
    assert best is not None  # theta = right always packs
    return pk, best


def pack(pk: Packer, order: Sequence[int], theta: float, rule_for: Callable[[int], Rule],
         cutoff: float = math.inf) -> Packing | None:
    """One packing of ``order`` under limit ``theta`` (see :meth:`Packer.run`)."""
    return pk.run(order, theta, rule_for, cutoff)


def sjf_bco_rules(pk: Packer, kappa: int) -> Callable[[int], Rule]:
    """Algorithm 1 lines 11-15: FA-FFP for G_j <= kappa, LBSGF otherwise."""
    return lambda j: fa_ffp if pk.size[j] <= kappa else lbsgf



def info_for(pk: Packer, best: Packing) -> dict:
    ids = pk.inst.cluster.server_ids
    w_max = float(best.loads.max())
    return {
        "theta": w_max,
        "theta_bisection": best.theta,
        "kappa": best.kappa,
        "max_estimated_load": w_max,
        "makespan_packing": best.makespan,
        "rho_hat": dict(pk.est.rho_hat),
        "u": pk.est.u,
        "l": pk.est.l,
        "lam": None if pk.lam.size == 0 else (float(pk.lam[0]) if np.all(pk.lam == pk.lam[0]) else "per job"),
        "gpu_assignment": {job.id: [[ids[pk.gpu_server[g]], int(pk.gpu_local[g])] for g in best.gpus[i]]
                           for i, job in enumerate(pk.jobs)},
    }


def ff_rule(pk: Packer, j: int, mask: np.ndarray) -> np.ndarray | None:
    """The first G_j GPUs of ``mask`` in cluster order (server by server)."""
    cand = np.nonzero(mask)[0]
    return cand[:pk.size[j]] if len(cand) >= pk.size[j] else None


def ls_rule(pk: Packer, j: int, mask: np.ndarray) -> np.ndarray | None:
    """The G_j GPUs of ``mask`` with least estimated load U (ties: lower GPU index)."""
    cand = np.nonzero(mask)[0]
    if len(cand) < pk.size[j]:
        return None
    return cand[np.argsort(pk_U(pk)[cand], kind="stable")[:pk.size[j]]]


class RandRule:
    """RAND's rule: G_j GPUs drawn uniformly without replacement among those of ``mask``. ``enough`` answers
    the packer's up-front "can this job ever fit?" question without consuming random draws."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    @staticmethod
    def enough(pk: Packer, j: int, mask: np.ndarray) -> bool:
        return int(mask.sum()) >= pk.size[j]

    def __call__(self, pk: Packer, j: int, mask: np.ndarray) -> np.ndarray | None:
        cand = np.nonzero(mask)[0]
        if len(cand) < pk.size[j]:
            return None
        return np.sort(self.rng.choice(cand, size=int(pk.size[j]), replace=False))


def _same_rule(rule: RandRule, j: int) -> RandRule:
    return rule


def evaluate_reference(inst: RarInstance, schedule: Schedule) -> Evaluation:
    """Score ``schedule`` on ``inst`` with per-slot contention; raise :class:`ScheduleError` if infeasible."""
    check_feasible(inst, schedule)
    jobs = {j.id: j for j in inst.jobs}
    cap = inst.cluster.capacity
    starts = sorted((int(sj.start), sj.id) for sj in schedule.jobs)
    placement = {sj.id: dict(sj.placement) for sj in schedule.jobs}
    remaining = {j.id: j.iterations for j in inst.jobs}
    used = dict.fromkeys(cap, 0)
    active: dict[str, Mapping[str, int]] = {}
    completions: dict[str, int] = {}
    nxt = 0
    t = 0
    while nxt < len(starts) or active:
        if not active:
            t = max(t, starts[nxt][0])
        while nxt < len(starts) and starts[nxt][0] == t:
            jid = starts[nxt][1]
            nxt += 1
            for s, n in placement[jid].items():
                used[s] += n
                if used[s] > cap[s]:
                    holders = sorted(a for a in active if s in placement[a]) + [jid]
                    raise ScheduleError(
                        f"server {s!r} over capacity in slot {t}: {used[s]} GPUs used by "
                        f"{', '.join(holders)}, it has {cap[s]}", field="placement", job=jid)
            active[jid] = placement[jid]
        p = contention(active)
        phi = {j: phi_for(inst, jobs[j], active[j], p[j]) for j in active}
        step = min(math.ceil(remaining[j] / phi[j]) for j in active)
        if nxt < len(starts):
            step = min(step, starts[nxt][0] - t)
        t += step
        for j in list(active):
            remaining[j] -= phi[j] * step
            if remaining[j] <= 0:
                completions[j] = t
                for s, n in placement[j].items():
                    used[s] -= n
                del active[j]
    makespan = max(completions.values())
    return makespan, completions


def _bisected(inst, rule, name):
    pk = Packer(inst)
    order = list(range(len(inst.jobs)))
    best = bisect_theta(pk, lambda theta, m: pk.run(order, theta, lambda j: rule, cutoff=m))
    return pk.schedule(best, name), info_for(pk, best)


def _same_rule(rule, j):
    return rule


def reference(inst: RarInstance, name: str, seed: int | None = None):
    """(schedule, info) of heuristic ``name`` as the code before issue 16 computed them."""
    if name == "sjf-bco":
        pk, best = run_sjf_bco(inst)
        return pk.schedule(best, "sjf-bco"), info_for(pk, best)
    if name == "ff":
        return _bisected(inst, ff_rule, "ff")
    if name == "ls":
        return _bisected(inst, ls_rule, "ls")
    pk = Packer(inst)
    order = list(range(len(inst.jobs)))
    best = None
    for theta in (float(inst.horizon), math.inf):
        rule = RandRule(np.random.default_rng(seed))
        best = pk.run(order, theta, functools.partial(_same_rule, rule))
        if best is not None:
            break
    return pk.schedule(best, "rand"), info_for(pk, best)
