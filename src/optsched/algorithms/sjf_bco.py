"""SJF-BCO (paper 000, Algorithm 1) with FA-FFP (Algorithm 2) and LBSGF (Algorithm 3).

Every interpretation is written down, with the algorithm's line numbers, in ``docs/algorithms/sjf-bco.md``.
In short:

* estimates (section 5): rho-hat_j = F_j * tau_min_j (the job alone on its fastest placement), u and l the
  tightest constants with l * rho_j <= rho-hat_j <= u * rho_j for every execution time rho_j the model allows
  (see [`estimates`][optsched.algorithms.sjf_bco.estimates]); a job adds rho-hat_j / u to the estimated load U of each
  GPU it uses;
* "wait for some job to exit" (Alg. 2 lines 9-10, Alg. 3 lines 13-14) runs in simulated time: the jobs are
  placed in order by a list schedule whose clock only moves forward; a job may use only GPUs idle at the
  current slot, and the clock jumps to the next completion when it cannot be placed. The simulation is the
  exact slot model of eqs. 6-9 (contention recomputed at every start and completion), so a packing's
  makespan m_theta^kappa is the makespan the evaluator finds for the schedule;
* theta is bisected over the integers of [1, T] as in Alg. 1 lines 5-30 (over [T + 1, total estimated load]
  only if no theta <= T packs every job);
  the kappa loop (lines 8-23) runs kappa = 1..n_g, evaluating only one kappa per distinct job-size class
  (kappa values that send the same jobs to FA-FFP give the same packing);
* Lemma 2: the returned ``theta`` is theta~_u, the tightest limit under which the chosen packing is found:
  the maximum estimated GPU load W-hat_max of that packing (re-running the packing at this limit yields the
  same schedule; the integer found by the bisection is ``theta_bisection``).

```pycon
>>> from optsched.generators.rar import tiny_rar_example
>>> inst = tiny_rar_example()
>>> est = estimates(inst)
>>> est.u >= 1 >= est.l > 0, sorted(est.rho_hat) == ["j0", "j1"]
(True, True)
>>> sched, info = sjf_bco(inst)
>>> info["theta"] == info["max_estimated_load"] <= info["theta_bisection"]
True

```
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..errors import InstanceError
from ..limits import paused_gc
from ..perf.rar import contention_binds, iteration_time, iterations_per_slot, tau_bounds
from ..problems.rar import RarInstance
from ..registry import algorithm
from ..result import Schedule, ScheduledJob

_EPS = 1e-9  # slack on U + rho-hat/u <= theta, so that a limit equal to a float sum admits that sum


# -- section 5: estimated execution times and the bounds u, l ------------------------------------------------
@dataclass(frozen=True)
class Estimates:
    """SJF-BCO's estimated execution times and the section-5 constants, all in slots.

    ``rho_hat[j]``  rho-hat_j = F_j * tau_min_j: job j's execution time alone on its fastest placement
                    (the paper's "product of tau_j and F_j", section 7), independent of the placement;
    ``rho_min[j]``, ``rho_max[j]``  the fewest / most slots job j can take under ANY schedule:
                    ceil(F_j / floor(1/tau_min_j)) and ceil(F_j / floor(1/tau_max_j)), with
                    (tau_min_j, tau_max_j) = [`optsched.perf.rar.tau_bounds`][] (every placement and every
                    contention level), since every slot gives between floor(1/tau_max) and floor(1/tau_min)
                    iterations;
    ``u``, ``l``    the tightest constants with l * rho_j <= rho-hat_j <= u * rho_j for every achievable
                    rho_j in [rho_min_j, rho_max_j]: u = max(1, max_j rho-hat_j / rho_min_j),
                    l = min(1, min_j rho-hat_j / rho_max_j) (section 5 requires l <= 1 <= u). Because
                    rho-hat_j <= rho_min_j, u = 1 up to rounding and rho-hat_j / u <= rho_j always holds (the
                    step theta*_u <= T* of Theorem 5);
    ``load[j]``     rho-hat_j / u: what job j adds to each of its GPUs' estimated load U (eq. 15).

    ```pycon
    >>> from optsched.generators.rar import tiny_rar_example
    >>> e = estimates(tiny_rar_example())
    >>> all(e.l * e.rho_max[j] <= e.rho_hat[j] <= e.u * e.rho_min[j] for j in e.rho_hat)
    True

    ```
    """

    rho_hat: Mapping[str, float]
    u: float
    l: float  # noqa: E741 - the paper's name
    rho_min: Mapping[str, int] = field(default_factory=dict)
    rho_max: Mapping[str, int] = field(default_factory=dict)
    tau_min: Mapping[str, float] = field(default_factory=dict)
    tau_max: Mapping[str, float] = field(default_factory=dict)
    load: Mapping[str, float] = field(default_factory=dict)


def estimates(inst: RarInstance) -> Estimates:
    """rho-hat per job, u and l for ``inst`` (section 5); see [`Estimates`][optsched.algorithms.sjf_bco.Estimates] for
    the definitions.

    Stable public API: ``optsched.bounds`` imports it to evaluate Lemmas 2-4 and Theorem 5.

    ```pycon
    >>> from optsched.generators.rar import tiny_rar_example
    >>> e = estimates(tiny_rar_example())
    >>> round(e.rho_hat["j0"], 3), e.rho_min["j0"], e.rho_max["j0"]   # 120 * 0.039875 (one server)
    (4.785, 5, 7)

    ```
    """
    rho_hat, rho_min, rho_max, t_lo, t_hi = {}, {}, {}, {}, {}
    for job in inst.jobs:
        lo, hi = tau_bounds(inst, job)
        t_lo[job.id], t_hi[job.id] = lo, hi
        rho_hat[job.id] = job.iterations * lo
        rho_min[job.id] = math.ceil(job.iterations / iterations_per_slot(lo))
        rho_max[job.id] = math.ceil(job.iterations / iterations_per_slot(hi))
    u = max(1.0, max(rho_hat[j] / rho_min[j] for j in rho_hat))
    l = min(1.0, min(rho_hat[j] / rho_max[j] for j in rho_hat))  # noqa: E741
    load = {j: r / u for j, r in rho_hat.items()}
    return Estimates(rho_hat, u, l, rho_min, rho_max, t_lo, t_hi, load)


# -- the list-schedule packing in simulated time ---------------------------------------------------------------
@dataclass
class Packing:
    """One complete packing of every job: the schedule, its exact makespan and the estimated GPU loads."""

    makespan: int
    start: list[int]             # per job index
    completion: list[int]        # per job index
    gpus: list[list[int]]        # per job index: global GPU indices, in the order the rule chose them
    loads: list[float]           # per GPU: estimated load U
    theta: float = 0.0
    kappa: int | None = None


def _pop_current(heap: list[tuple[float, int, int]], version: list[int], g: int) -> list[tuple[float, int, int]]:
    """Pop the (up to) ``g`` smallest entries of a lazily versioned heap whose version is current; stale entries
    are dropped for good. Callers push back the ones they do not consume."""
    taken: list[tuple[float, int, int]] = []
    while len(taken) < g and heap:
        e = heapq.heappop(heap)
        if version[e[1]] == e[2]:
            taken.append(e)
    return taken


class PackState:
    """A packing in progress under one limit theta: the clock, the GPUs' loads U and idle flags, the running jobs.

    Every question a rule asks is answered from incremental structures, so placing a job costs about
    O(G_j log N) (or the few servers LBSGF looks at) instead of O(N) numpy work: a heap of the idle GPUs by
    (U, index) for the least-loaded rules, a heap of all GPUs by (U, index) for "can this job ever fit?", a heap
    of the servers by mean load for LBSGF, the least idle load per server and a min segment tree over blocks of
    servers for First-Fit. Entries of the idle heap carry a version and are dropped lazily once stale; the two
    heaps keyed by loads hold one entry per GPU or server, re-keyed lazily when a stale one reaches the top
    (loads only grow, so a stale key is a lower bound). A running job keeps (iterations
    left at slot ``tu``, phi since ``tu``) and one entry in the completion heap; when a split job starts or
    ends only the split jobs sharing one of its servers get their contention and phi recomputed (eq. 6). The
    floating-point sums are those of the numpy original (same order), so the choices are bit-identical. The
    state can be copied (SJF-BCO's checkpoints at kappa boundaries).
    """

    __slots__ = ("pk", "lim", "t", "U", "free", "fver", "fheap", "uver", "aheap", "smean", "smv", "sver", "sfmin",
                 "ftree",
                 "Unp", "freenp", "start", "comp", "gpus", "srv", "rem", "phi", "tu", "cver", "cheap",
                 "cnt", "sjobs", "pc", "n_active", "need_heap", "need_srv", "need_ff", "need_np")

    def __init__(self, pk: Packer, theta: float, needs: frozenset[str] = frozenset()):
        self.pk = pk
        self.lim = theta + _EPS
        self.t = 0
        ng, n, S = pk.n_gpus, len(pk.jobs), pk.n_servers
        self.U = [0.0] * ng
        self.free = bytearray(b"\x01") * ng
        self.fver = [0] * ng
        self.uver = [0] * ng
        self.aheap = [(0.0, g, 0) for g in range(ng)]          # sorted, hence a heap
        self.need_heap = "heap" in needs
        self.need_srv = "servers" in needs
        self.need_ff = "ff" in needs
        self.need_np = "numpy" in needs
        self.fheap = [(0.0, g, 0) for g in range(ng)] if self.need_heap else []
        # LBSGF: each server's mean U, and a heap of (mean, server, version) with one entry per server whose key may
        # lag behind the mean (means only grow), re-keyed when it reaches the top
        self.smean = [(0.0, s, 0) for s in range(S)] if self.need_srv else []   # sorted, hence a heap
        self.smv = [0.0] * S if self.need_srv else []
        self.sver = [0] * S if self.need_srv else []
        # First-Fit: each server's least idle U, and a min segment tree over blocks of servers (Packer.ftree0)
        self.sfmin = [0.0] * S if self.need_ff else []
        self.ftree = pk.ftree0[:] if self.need_ff else []
        self.Unp: Any = None
        self.freenp: Any = None
        if self.need_np:  # numpy only for mask rules (RAND): SJF-BCO, FF and LS start without it
            import numpy as np

            self.Unp, self.freenp = np.zeros(ng), np.ones(ng, dtype=bool)
        self.start = [-1] * n
        self.comp = [-1] * n
        self.gpus: list[list[int]] = [[] for _ in range(n)]
        self.srv: list[tuple[int, ...]] = [()] * n
        self.rem = [0] * n
        self.phi = [0] * n
        self.tu = [0] * n
        self.cver = [0] * n
        self.cheap: list[tuple[int, int, int]] = []
        self.cnt = [0] * S
        self.sjobs: dict[int, set[int]] = {}
        self.pc = [0] * n                                     # contention p of each running job
        self.n_active = 0

    def copy(self, needs: frozenset[str] | None = None) -> PackState:
        """An independent copy (job GPU lists are shared: they are never changed once set); with ``needs``, one
        that keeps only the rules' structures ``needs`` names
        ([`keep_only`][optsched.algorithms.sjf_bco.PackState.keep_only]), without copying a dropped idle heap."""
        new = object.__new__(PackState)
        drop = needs is not None and "heap" not in needs
        for name in PackState.__slots__:
            if drop and name == "fheap":
                new.fheap = []
                continue
            v = getattr(self, name)
            if isinstance(v, (list, bytearray)):
                v = v[:]
            elif hasattr(v, "copy") and not isinstance(v, dict):   # numpy arrays of the mask rules
                v = v.copy()
            elif isinstance(v, dict):
                v = {s: set(js) for s, js in v.items()}
            setattr(new, name, v)
        if needs is not None:
            new.keep_only(needs)
        return new

    def keep_only(self, needs: frozenset[str]) -> None:
        """From now on maintain the structures of the rules needing ``needs``: drop the idle heap if they do not
        read it, and build LBSGF's server means (and their heap) from the loads if it was not kept so far. The
        means are what [`_update_means`][optsched.algorithms.sjf_bco.PackState._update_means] would hold (each
        is recomputed from its GPUs' U whenever one changes, so a fresh computation gives the same floats), and a
        heap of current entries answers every query as the lazily re-keyed one would: SJF-BCO's continuations
        with LBSGF keep no idle heap, and its FA-FFP prefix no server means."""
        if "heap" not in needs and self.need_heap:
            self.need_heap, self.fheap = False, []
        if "servers" in needs and not self.need_srv:
            S = self.pk.n_servers
            self.need_srv, self.smv, self.sver = True, [0.0] * S, [0] * S
            self._update_means(range(S))
            self.smean = [(self.smv[s], s, self.sver[s]) for s in range(S)]
            heapq.heapify(self.smean)

    # -- the "can job j ever fit" test (idle or not), for every rule but LBSGF -------------------------------
    def enough_anywhere(self, j: int) -> bool:
        """Do G_j GPUs, idle or not, pass U + load_j <= theta? The G_j-th least U decides, since fl(U + l) is
        monotone in U."""
        heap, U, uver = self.aheap, self.U, self.uver
        g = self.pk.size[j]
        # one entry per GPU whose key may lag behind U (U only grows): a stale entry at the top is re-keyed, a
        # current one is the least (U, index) of all
        taken: list[tuple[float, int, int]] = []
        while len(taken) < g and heap:
            e = heap[0]
            gg = e[1]
            if uver[gg] == e[2]:
                taken.append(heapq.heappop(heap))
            else:
                heapq.heapreplace(heap, (U[gg], gg, uver[gg]))
        ok = len(taken) == g and taken[-1][0] + self.pk.load[j] <= self.lim
        for e in taken:
            heapq.heappush(heap, e)
        return ok

    # -- starting and finishing jobs -------------------------------------------------------------------------
    def commit(self, j: int, chosen: list[int]) -> None:
        """Start job j at the current slot on ``chosen`` (idle GPUs that passed the rule)."""
        pk = self.pk
        load = pk.load[j]
        U, free, fver, uver, gs = self.U, self.free, self.fver, self.uver, pk.gpu_server_list
        servers = set()
        for g in chosen:
            free[g] = 0
            fver[g] += 1
            U[g] += load
            uver[g] += 1          # its entry in aheap is re-keyed lazily (enough_anywhere)
            servers.add(gs[g])
        srv = tuple(sorted(servers))
        if self.Unp is not None and self.freenp is not None:
            self.Unp[chosen] = [U[g] for g in chosen]
            self.freenp[chosen] = False
        if self.need_srv:
            self._update_means(srv)
        if self.need_ff:
            self._update_ff(srv)
        self.gpus[j] = chosen
        self.srv[j] = srv
        self.start[j] = self.t
        self.rem[j] = pk.iters[j]
        self.tu[j] = self.t
        self.phi[j] = 0
        self.n_active += 1
        if len(srv) > 1 and pk.p_matters:
            cnt, pc, sjobs = self.cnt, self.pc, self.sjobs
            changed = [j]
            for s in srv:
                cnt[s] += 1
                c = cnt[s]
                js = sjobs.get(s)
                if js is None:
                    js = sjobs[s] = set()
                for k in js:                 # p_k = max over k's servers of cnt: it rises only to c
                    if c > pc[k]:
                        pc[k] = c
                        changed.append(k)
                js.add(j)
            pc[j] = max(cnt[s] for s in srv)
            for k in changed:
                self._rephi(k)
        else:
            self.pc[j] = 1 if len(srv) > 1 else 0   # p cannot change phi (see Packer.p_matters)
            self._rephi(j)

    def _rephi(self, k: int) -> None:
        """Recompute job k's phi at the current slot from its contention ``pc[k]``; re-key its completion if
        phi changed."""
        new = self.pk.phi_of(k, len(self.srv[k]), self.pc[k])
        old = self.phi[k]
        if new == old:
            return
        t = self.t
        if old:
            self.rem[k] -= old * (t - self.tu[k])
        self.tu[k] = t
        self.phi[k] = new
        self.cver[k] += 1
        heapq.heappush(self.cheap, (t - (-self.rem[k] // new), k, self.cver[k]))

    def advance(self) -> None:
        """Jump the clock to the next completion and finish every job that completes then."""
        cheap, cver, comp = self.cheap, self.cver, self.comp
        while True:
            c, k, v = heapq.heappop(cheap)
            if cver[k] == v and comp[k] < 0:
                break
        self.t = c
        done = [k]
        while cheap and cheap[0][0] == c:
            _, k, v = heapq.heappop(cheap)
            if cver[k] == v and comp[k] < 0:
                done.append(k)
        check: set[int] = set()
        touched: set[int] = set()
        p_matters, cnt, pc, sjobs = self.pk.p_matters, self.cnt, self.pc, self.sjobs
        free, fver, U = self.free, self.fver, self.U
        for k in done:
            comp[k] = c
            self.n_active -= 1
            gl = self.gpus[k]
            for g in gl:
                free[g] = 1
                fver[g] += 1
            if self.need_heap:
                fheap = self.fheap
                for g in gl:
                    heapq.heappush(fheap, (U[g], g, fver[g]))
            if self.freenp is not None:
                self.freenp[gl] = True
            srv = self.srv[k]
            touched.update(srv)
            if len(srv) > 1 and p_matters:
                for s in srv:
                    cnt[s] -= 1
                    js = sjobs[s]
                    js.discard(k)
                    c_old = cnt[s] + 1
                    for k2 in js:            # only jobs whose maximum was this server's count can drop
                        if pc[k2] == c_old:
                            check.add(k2)
        if self.need_ff:
            self._update_ff(tuple(touched))
        for k in check:
            if comp[k] < 0:
                p = max(cnt[s] for s in self.srv[k])
                if p != pc[k]:
                    pc[k] = p
                    self._rephi(k)

    # -- the structures of the rules -------------------------------------------------------------------------
    def _update_means(self, srv: Iterable[int]) -> None:
        """Refresh the mean U of the servers whose GPUs' loads changed (mean = sum of U in GPU order / O_s, as
        numpy's bincount computes it); their heap entries turn stale and are re-keyed lazily (Lbsgf)."""
        pk, U, smv, sver = self.pk, self.U, self.smv, self.sver
        for s in srv:
            first, cap = pk.server_first[s], pk.cap_list[s]
            acc = 0.0
            for g in range(first, first + cap):
                acc += U[g]
            smv[s] = acc / cap
            sver[s] += 1

    def _update_ff(self, srv: Iterable[int]) -> None:
        """Refresh the least idle load of the servers ``srv``, of their blocks and of the blocks' ancestors in
        First-Fit's tree."""
        pk, U, free, sfmin, tree = self.pk, self.U, self.free, self.sfmin, self.ftree
        size, bs = pk.fsize, pk.BLOCK
        blocks = set()
        for s in srv:
            first = pk.server_first[s]
            m = math.inf
            for g in range(first, first + pk.cap_list[s]):
                if free[g] and U[g] < m:
                    m = U[g]
            sfmin[s] = m
            blocks.add(s // bs)
        for b in blocks:
            i = size + b
            tree[i] = min(sfmin[b * bs:b * bs + bs])
            i >>= 1
            while i:
                left, right = tree[2 * i], tree[2 * i + 1]
                v = left if left < right else right
                if tree[i] == v:
                    break          # the ancestors hold the same minimum already
                tree[i] = v
                i >>= 1

    def finish(self, cutoff: float) -> Packing | None:
        """Run every placed job to completion; None if the makespan reaches ``cutoff``."""
        while self.n_active:
            self.advance()
            if self.n_active and self.t >= cutoff:
                return None
        makespan = max(self.comp)
        if makespan >= cutoff:
            return None
        return Packing(makespan, list(self.start), list(self.comp), list(self.gpus), list(self.U))


class Rule:
    """A placement rule: ``choose(state, j)`` returns G_j idle GPUs passing the load limit (and takes them
    out of its structure), or None; ``enough(state, j)`` says whether G_j GPUs would pass with every GPU idle.
    ``needs`` names the structures of [`PackState`][optsched.algorithms.sjf_bco.PackState] it reads."""

    needs: frozenset[str] = frozenset()
    name = "rule"

    def choose(self, st: PackState, j: int) -> list[int] | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def enough(self, st: PackState, j: int) -> bool:
        return st.enough_anywhere(j)

    def __repr__(self) -> str:
        return f"<rule {self.name}>"


class LeastLoaded(Rule):
    """The G_j idle GPUs with least U passing the limit (ties: lower GPU index): FA-FFP (Alg. 2 lines 2-4)
    and LS. The idle GPUs passing the limit are a prefix of the idle heap in (U, index) order, so the G_j
    smallest idle GPUs are the answer if the G_j-th of them passes."""

    needs = frozenset({"heap"})

    def __init__(self, name: str):
        self.name = name

    def choose(self, st: PackState, j: int) -> list[int] | None:
        heap = st.fheap
        g = st.pk.size[j]
        taken = _pop_current(heap, st.fver, g)
        if len(taken) == g and taken[-1][0] + st.pk.load[j] <= st.lim:
            return [e[1] for e in taken]
        for e in taken:
            heapq.heappush(heap, e)
        return None


class Lbsgf(Rule):
    """Algorithm 3 lines 2-8: the fewest least-busy servers (mean U ascending, ties by server order) holding
    lambda_j * G_j GPUs; among their idle GPUs passing the limit, the G_j with least U (ties: server rank, GPU
    index)."""

    needs = frozenset({"servers"})
    name = "lbsgf"

    @staticmethod
    def _servers(st: PackState, j: int) -> list[int]:
        pk = st.pk
        target = pk.lam[j] * pk.size[j] - _EPS
        acc, out, caps = 0, [], pk.cap_list
        heap, smv, sver = st.smean, st.smv, st.sver
        taken = []
        while heap:      # servers by (mean U, index) ascending: a current entry at the top is the least of all
            e = heap[0]
            s = e[1]
            if e[2] != sver[s]:
                heapq.heapreplace(heap, (smv[s], s, sver[s]))
                continue
            taken.append(heapq.heappop(heap))
            out.append(s)
            acc += caps[s]
            if acc >= target:
                break
        for e in taken:
            heapq.heappush(heap, e)
        return out

    def _candidates(self, st: PackState, j: int, idle: bool) -> list[tuple[float, int, int]]:
        pk, U, free, lim, load = st.pk, st.U, st.free, st.lim, st.pk.load[j]
        out = []
        for rank, s in enumerate(self._servers(st, j)):
            first = pk.server_first[s]
            for g in range(first, first + pk.cap_list[s]):
                if (free[g] or not idle) and U[g] + load <= lim:
                    out.append((U[g], rank, g))
        return out

    def choose(self, st: PackState, j: int) -> list[int] | None:
        cand = self._candidates(st, j, True)
        g = st.pk.size[j]
        if len(cand) < g:
            return None
        cand.sort()
        return [c[2] for c in cand[:g]]

    def enough(self, st: PackState, j: int) -> bool:
        return len(self._candidates(st, j, False)) >= st.pk.size[j]


class FirstFit(Rule):
    """FF: the first G_j idle GPUs passing the limit in cluster order (server by server, GPU index order).

    A server, or a block of servers, whose least idle U fails the limit holds no such GPU (fl(U + load) is
    monotone in U), so it is skipped whole; the next block worth scanning is found in a min segment tree over
    the blocks in O(log S) rather than by a scan of every block. The same GPUs as a plain scan, in the same
    order."""

    needs = frozenset({"ff"})
    name = "ff"

    def choose(self, st: PackState, j: int) -> list[int] | None:
        pk, U, free, lim, tree, sfmin = st.pk, st.U, st.free, st.lim, st.ftree, st.sfmin
        load, g = pk.load[j], pk.size[j]
        size, n_blocks, n_servers, bs, out = pk.fsize, pk.n_blocks, pk.n_servers, pk.BLOCK, []
        i = size                               # the leaf of block 0
        while True:
            # climb to the leftmost node at or right of i whose subtree holds a block passing the limit
            while not tree[i] + load <= lim:
                while i & 1:
                    i >>= 1
                if not i:
                    return None
                i += 1
            while i < size:                    # descend to its leftmost passing leaf
                i <<= 1
                if not tree[i] + load <= lim:
                    i += 1
            b = i - size
            if b >= n_blocks:                  # padding (only reachable with an infinite limit)
                return None
            for s in range(b * bs, min(b * bs + bs, n_servers)):
                if not sfmin[s] + load <= lim:
                    continue
                first = pk.server_first[s]
                for gg in range(first, first + pk.cap_list[s]):
                    if free[gg] and U[gg] + load <= lim:
                        out.append(gg)
                        if len(out) == g:
                            return out
            if b + 1 >= n_blocks:
                return None
            i += 1


class MaskRule(Rule):
    """A rule over numpy arrays: ``pick(pk, j, cand)`` gets the idle GPUs passing the limit in index order
    (every GPU of the cluster is looked at: O(N) per call; RAND uses it)."""

    needs = frozenset({"numpy"})

    def pick(self, pk: Packer, j: int, cand: Any) -> list[int] | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def choose(self, st: PackState, j: int) -> list[int] | None:
        assert st.Unp is not None and st.freenp is not None
        cand = ((st.Unp + st.pk.load[j] <= st.lim) & st.freenp).nonzero()[0]
        if len(cand) < st.pk.size[j]:
            return None
        return self.pick(st.pk, j, cand)


#: Algorithm 2's rule (FA-FFP) and Algorithm 3's (LBSGF)
fa_ffp: Rule = LeastLoaded("fa-ffp")
lbsgf: Rule = Lbsgf()


class Packer:
    """Per-instance precomputation and the packing loop shared by SJF-BCO and the baselines FF, LS, RAND."""

    BLOCK = 16  # servers per leaf of First-Fit's segment tree
    early_stop = True  # place() drops a packing as soon as its makespan is bound to reach the cutoff (tests: off)
    reuse = True       # the bisection skips packings known to repeat one it has run (Repeats; needs early_stop)

    def __init__(self, inst: RarInstance, lam: float | None = None):
        self.inst = inst
        self.est = estimates(inst)
        servers = inst.cluster.servers
        self.n_servers = len(servers)
        self.server_ids = inst.cluster.server_ids
        self.cap_list = [s.gpus for s in servers]
        self.server_first = [0] * self.n_servers
        acc = 0
        for s, c in enumerate(self.cap_list):
            self.server_first[s] = acc
            acc += c
        self.gpu_server = [s for s, c in enumerate(self.cap_list) for _ in range(c)]  # GPU -> server index
        self.gpu_server_list = self.gpu_server
        self.gpu_local = [g for c in self.cap_list for g in range(c)]               # GPU -> index on its server
        self.n_gpus = acc
        # First-Fit's min segment tree over blocks of BLOCK servers, every GPU idle at U = 0 (padding: +inf)
        self.n_blocks = -(-self.n_servers // self.BLOCK)
        self.fsize = size = 1 << max(0, self.n_blocks - 1).bit_length()
        self.ftree0 = [0.0] * size + [0.0] * self.n_blocks + [math.inf] * (size - self.n_blocks)
        for i in range(size - 1, 0, -1):
            self.ftree0[i] = min(self.ftree0[2 * i], self.ftree0[2 * i + 1])
        self.jobs = inst.jobs
        self.size = [j.gpus for j in self.jobs]
        self.iters = [j.iterations for j in self.jobs]
        self.rho_min = [self.est.rho_min[j.id] for j in self.jobs]
        self.load = [self.est.load[j.id] for j in self.jobs]
        if lam is not None:
            if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not lam >= 1:
                raise InstanceError(f"must be a number >= 1, got {lam!r}", field="lam")
        self.lam = [float(lam) if lam is not None else float(j.lam) for j in self.jobs]
        self._phi: dict[tuple[int, int, int], int] = {}
        # with xi_1 * p <= 1 for every reachable p, k = max(1, xi_1 p) = 1 and contention never changes phi
        self.p_matters = contention_binds(inst)

    def phi_of(self, j: int, n_servers: int, p: int) -> int:
        """phi of job j on ``n_servers`` servers at contention ``p``, from [`optsched.perf.rar`][] (cached), so
        that it agrees exactly with the evaluator."""
        key = (j, n_servers, p)
        v = self._phi.get(key)
        if v is None:
            v = self._phi[key] = iterations_per_slot(iteration_time(self.inst, self.jobs[j], n_servers, p))
        return v

    def placement(self, gpus: Sequence[int]) -> dict[str, int]:
        ids = self.server_ids
        out: dict[int, int] = {}
        for g in gpus:
            s = self.gpu_server_list[int(g)]
            out[s] = out.get(s, 0) + 1
        return {ids[s]: out[s] for s in sorted(out)}

    # -- the packing -----------------------------------------------------------------------------------------
    def new_state(self, theta: float, rules: Iterable[Rule]) -> PackState:
        needs: set[str] = set()
        for r in rules:
            needs |= r.needs
        return PackState(self, theta, frozenset(needs))

    def tail(self, jobs: Sequence[int], after: int = 0) -> list[int]:
        """``tail[i]``: the fewest slots the packing still needs once job ``jobs[i]`` is to be placed: the longest
        ``rho_min`` (section 5: no placement or contention runs a job faster) of ``jobs[i:]`` and of the jobs placed
        after them (``after``, the longest of those). Each starts at the current slot or later, so the makespan
        is at least the clock plus this."""
        out = list(itertools.accumulate(reversed([self.rho_min[j] for j in jobs]), max, initial=after))
        out.reverse()
        return out

    def place(self, st: PackState, jobs: Sequence[int], rule_for: Callable[[int], Rule],
              cutoff: float = math.inf, tail: Sequence[int] | None = None) -> bool:
        """Place ``jobs`` in order into ``st``; False when some job can never be placed (Alg. 2/3 "return
        empty") or the packing's makespan is bound to reach ``cutoff`` (such a packing is dropped by its
        caller whatever happens next, so stopping early changes no result): the clock plus ``tail[i]`` (see
        [`tail`][optsched.algorithms.sjf_bco.Packer.tail]; default: of ``jobs`` alone) reaches it, or a job just
        started ends at or after it (known at its start when contention cannot change a speed)."""
        if not self.early_stop:
            tail = None
        elif cutoff < math.inf:
            if tail is None:
                tail = self.tail(jobs)
            if jobs and st.t + tail[0] >= cutoff:
                return False
        fixed = self.early_stop and cutoff < math.inf and not self.p_matters
        iters, phi = self.iters, st.phi
        for i, j in enumerate(jobs):
            rule = rule_for(j)
            chosen = rule.choose(st, j)
            if chosen is None:
                # U does not change while waiting, so a job the load limit excludes even with every GPU idle
                # can never be placed: fail now instead of draining the cluster first (same outcome).
                if not rule.enough(st, j):
                    return False
                while chosen is None:
                    if not st.n_active:
                        return False
                    st.advance()
                    if st.t >= cutoff or (tail is not None and st.t + tail[i] >= cutoff):
                        return False
                    chosen = rule.choose(st, j)
            st.commit(j, chosen)
            if fixed and st.t - (-iters[j] // phi[j]) >= cutoff:
                return False
        return True

    def run(self, order: Sequence[int], theta: float, rule_for: Callable[[int], Rule],
            cutoff: float = math.inf) -> Packing | None:
        """Place the jobs of ``order`` one by one (list schedule, monotone clock) under the load limit
        ``theta``; ``rule_for(j)`` gives the placement rule of job j. Returns None when some job can never be
        placed (Alg. 2/3 line "return empty") or when the makespan would reach ``cutoff`` (such a packing
        cannot be kept by Alg. 1 lines 22 and 25, so it is abandoned early)."""
        st = self.new_state(theta, {rule_for(j) for j in order})
        if not self.place(st, order, rule_for, cutoff):
            return None
        res = st.finish(cutoff)
        if res is not None:
            res.theta = theta
        return res

    def schedule(self, packing: Packing, algorithm: str) -> Schedule:
        return Schedule(tuple(ScheduledJob(job.id, int(packing.start[i]), self.placement(packing.gpus[i]))
                              for i, job in enumerate(self.jobs)), algorithm=algorithm, instance=self.inst.name)

    def total_load(self) -> float:
        import numpy as np  # numpy's (pairwise) summation order; only the bisection's fallback range needs it

        return float((np.array(self.load) * np.array(self.size)).sum())


# -- Algorithm 1 -----------------------------------------------------------------------------------------------
def bisect_theta(pk: Packer, pack_for_theta: Callable[[int, float], Packing | None]) -> Packing | None:
    """Algorithm 1 lines 5-30: integer bisection on theta over [1, T]; a theta whose best packing strictly
    improves the best makespan so far moves ``right`` below it, any other theta moves ``left`` above it.

    Fallback (not in the paper): if no theta in [1, T] packs every job (the estimated loads exceed the
    horizon), the same bisection runs over [T + 1, ceil(total estimated load)]. At the upper end no GPU's
    load can exceed theta, so the packing always succeeds and a schedule is always returned."""
    best: Packing | None = None
    m = math.inf
    for rng in ((1, pk.inst.horizon), None):
        # the fallback range's top is computed only if it is needed
        left, right = rng or (pk.inst.horizon + 1, max(pk.inst.horizon, math.ceil(pk.total_load())))
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


class Repeats:
    """What the bisection learns from a theta that returned a packing, for the thetas after it.

    A packing under limit theta only ever asks "U + load <= theta + eps?" (the rules' choices, the idle and
    all-GPU tests), and each answer it acts on is a monotone function of the limit: FA-FFP/LS take the G_j least
    loaded idle GPUs if the G_j-th passes, First-Fit the first G_j passing in cluster order, LBSGF the G_j least
    loaded passing ones of servers chosen by mean load (no limit involved); a "yes" to "can it ever fit?" is
    followed by a placement on G_j GPUs at least as loaded (U does not change while the clock waits), or by
    the packing's stop. So under a lower limit theta' every "no" stays "no", and every "yes" stays "yes" as long
    as the loads it accepted do: if the highest estimated load of the attempt (its ``reach``, max U where it
    ended) is within theta' + eps, the attempt under theta' makes the same decisions up to the point where it
    stopped, and stops there at the latest under a cutoff no larger.

    Once theta returned a packing, the bisection only tries lower thetas, with a best makespan m' at most that
    packing's, and every attempt that succeeded at theta ended at or above it. An attempt repeated under
    theta' either succeeds with the same makespan (>= m', so it is dropped) or fails; hence it is not run
    again: ``repeats(key, theta', lim')`` is true when an attempt ``key`` (SJF-BCO: a kappa; FF, LS: the one
    packing) at some theta >= theta' that returned a packing reached at most ``lim'`` = theta' + eps.
    ``on=False`` (``Packer.reuse`` or ``Packer.early_stop`` off) runs every attempt.

    ```pycon
    >>> r = Repeats(True)
    >>> r.found(600, {1: 425.5, 2: 590.0})
    >>> r.repeats(1, 450, 450 + _EPS), r.repeats(2, 450, 450 + _EPS), r.repeats(1, 700, 700 + _EPS)
    (True, False, False)

    ```
    """

    def __init__(self, on: bool):
        self.on = on
        self.top = math.inf                    # the least theta that returned a packing
        self.reach: dict[Any, float] = {}      # attempt -> least reach at such a theta

    def below(self, theta: float) -> bool:
        """Is ``theta`` at or below every theta that returned a packing (and some did)?"""
        return self.on and theta <= self.top < math.inf

    def repeats(self, key: Any, theta: float, lim: float) -> bool:
        return self.below(theta) and self.reach.get(key, math.inf) <= lim

    def found(self, theta: float, reach: Mapping[Any, float]) -> None:
        """Theta returned a packing; ``reach[key]``: the max U of attempt ``key`` where it ended."""
        if not self.on:
            return
        self.top = min(self.top, theta)
        for key, v in reach.items():
            if v < self.reach.get(key, math.inf):
                self.reach[key] = v


def bisect_rule(pk: Packer, rule: Rule) -> Packing | None:
    """Algorithm 1's bisection with one rule for every job, in the instance's order (FF and LS): one packing per
    theta, skipping the thetas that would repeat a packing found above them
    ([`Repeats`][optsched.algorithms.sjf_bco.Repeats]).

    ```pycon
    >>> from optsched.generators.rar import tiny_rar_example
    >>> pk = Packer(tiny_rar_example())
    >>> bisect_rule(pk, fa_ffp).makespan > 0
    True

    ```
    """
    order = list(range(len(pk.jobs)))
    rep = Repeats(pk.early_stop and pk.reuse)

    def pack_for_theta(theta: int, m: float) -> Packing | None:
        if rep.repeats(None, theta, theta + _EPS):
            return None
        res = pk.run(order, theta, lambda j: rule, cutoff=m)
        if res is not None:
            rep.found(theta, {None: max(res.loads)})
        return res

    return bisect_theta(pk, pack_for_theta)


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
    """Algorithm 1: returns the packer and the kept packing (with its theta and kappa).

    For one theta, the packings of the kappa values share their prefix: the jobs with G_j <= kappa come first
    in SJF order and all go to FA-FFP. So the prefix is packed once, class by class of job sizes, and each kappa
    continues from a copy of the state at its class boundary with LBSGF (the same placements as packing every
    kappa from slot 0). A kappa whose prefix already reached the cutoff, or failed, fails as it would alone.

    Repeats (``Packer.reuse``, see [`Repeats`][optsched.algorithms.sjf_bco.Repeats]): once a theta has returned a
    packing, every later theta of the bisection is below it; a kappa whose attempt there kept every GPU's load
    within the new limit would repeat it decision for decision and is not run again (it cannot beat the makespan
    found), and a prefix state saved at a class boundary is reused when its loads stay within the new limit."""
    if kappa is not None and (isinstance(kappa, bool) or not isinstance(kappa, int) or kappa < 1):
        raise InstanceError(f"must be a positive integer, got {kappa!r}", field="kappa")
    pk = packer or Packer(inst, lam)
    order = sjf_order(inst)
    n = len(order)
    # boundary[k]: how many jobs of the SJF order go to FA-FFP under kappa k (a prefix: the order is by size); the
    # kappa loop ends at the first kappa sending every job to FA-FFP (larger ones would repeat its packing)
    kappas, boundary = [], {}
    for k in kappa_classes(inst, kappa):
        kappas.append(k)
        boundary[k] = sum(1 for j in order if pk.size[j] <= k)
        if boundary[k] == n:
            break
    suffix = pk.tail(order)   # suffix[i]: the longest rho_min of order[i:] (Packer.place's early stop)
    rest_rule: Callable[[int], Rule] = lambda j: lbsgf  # noqa: E731
    prefix_rule: Callable[[int], Rule] = lambda j: fa_ffp  # noqa: E731
    rep = Repeats(pk.early_stop and pk.reuse)
    saved: dict[int, tuple[float, float, PackState]] = {}   # kappa -> (reach, bound, FA-FFP state at its boundary)

    def prefix_bound(st: PackState, b: int) -> float:
        """The largest value Packer.place's early-stop tests took while the prefix reached ``b``: it stops a
        prefix under cutoff c iff this reaches c (see Repeats)."""
        start = st.start
        out = max((start[order[i]] + suffix[i] for i in range(b)), default=-math.inf)
        if not pk.p_matters:      # the ends known at the start (Packer.place's ``fixed`` test)
            iters, phi = pk.iters, st.phi
            out = max(out, max((start[order[i]] - (-iters[order[i]] // phi[order[i]]) for i in range(b)),
                               default=-math.inf))
        return out

    def pack_for_theta(theta: int, m: float) -> Packing | None:
        lim = theta + _EPS
        run = [k for k in kappas if not rep.repeats(k, theta, lim)]
        if not run:
            return None
        best: Packing | None = None           # Alg. 1 line 7: m_theta <- T (here: +inf, see bisect_theta)
        reach: dict[int, float] = {}          # kappa -> max U of its attempt (this theta)
        keep: dict[int, tuple[float, float, PackState]] = {}
        st: PackState | None = None
        done = 0
        for idx, k in enumerate(kappas):      # lines 8-23, kappa ascending
            if k not in run:
                continue
            cutoff = min(m, best.makespan if best else math.inf)
            b = boundary[k]
            # a saved prefix state at the latest boundary in (done, b] that this limit repeats
            stops = None
            for k0 in reversed(kappas[:idx + 1]):
                if boundary[k0] <= done:
                    break
                s0 = saved.get(k0)
                if s0 is not None and rep.below(theta) and s0[0] <= lim:
                    if s0[1] >= m:    # the prefix would stop before this boundary under the cutoff m
                        stops = s0[0]
                    else:
                        st, done = s0[2].copy(), boundary[k0]
                        st.lim = lim
                    break
            if stops is not None:     # this kappa and every larger one fail on the same prefix
                for k2 in kappas[idx:]:
                    reach[k2] = stops
                break
            if st is None:
                st = pk.new_state(theta, (fa_ffp,))   # the prefix: FA-FFP's structures only
            # the shared prefix, under the loosest cutoff of the kappas still to come (m)
            ok = pk.place(st, order[done:b], prefix_rule, m, suffix[done:b])
            pre = max(st.U)
            if not ok:
                for k2 in kappas[idx:]:       # this kappa and every larger one fail on the same prefix
                    reach[k2] = pre
                break
            if rep.on and done < b and (k not in saved or pre < saved[k][0]):
                keep[k] = (pre, prefix_bound(st, b), st.copy())
            done = b
            if st.t >= cutoff:                # this kappa's own packing would have stopped in the prefix
                reach[k] = pre
                continue
            last = k == kappas[-1]
            if last:
                cont = st
                cont.keep_only(lbsgf.needs)       # the rest: LBSGF's structures only
            else:
                cont = st.copy(lbsgf.needs)
            res = cont.finish(cutoff) if pk.place(cont, order[b:], rest_rule, cutoff, suffix[b:]) else None
            reach[k] = max(cont.U)
            if res is not None and (best is None or res.makespan < best.makespan):
                res.theta, res.kappa = theta, k
                best = res
        if best is not None:
            rep.found(theta, reach)
            for k, v in keep.items():
                if k not in saved or v[0] < saved[k][0]:
                    saved[k] = v
        return best

    best = bisect_theta(pk, pack_for_theta)
    assert best is not None  # theta = right always packs
    return pk, best


def pack(pk: Packer, order: Sequence[int], theta: float, rule_for: Callable[[int], Rule],
         cutoff: float = math.inf) -> Packing | None:
    """One packing of ``order`` under limit ``theta`` (see [`Packer.run`][optsched.algorithms.sjf_bco.Packer.run])."""
    return pk.run(order, theta, rule_for, cutoff)


def sjf_bco_rules(pk: Packer, kappa: int) -> Callable[[int], Rule]:
    """Algorithm 1 lines 11-15: FA-FFP for G_j <= kappa, LBSGF otherwise."""
    return lambda j: fa_ffp if pk.size[j] <= kappa else lbsgf


@algorithm("sjf-bco", RarInstance)
def sjf_bco(inst: RarInstance, *, seed: int | None = None, time_limit: float | None = None,
            kappa: int | None = None, lam: float | None = None):
    """SJF-BCO (paper 000, Alg. 1-3): smallest job first, FA-FFP/LBSGF packing, bisection on theta.

    Options: ``kappa`` fixes the FA-FFP/LBSGF threshold (default: the paper's loop over 1..n_g), ``lam``
    overrides every job's lambda_j. Returns the schedule and ``info`` with ``theta`` (theta~_u),
    ``theta_bisection``, ``kappa``, ``max_estimated_load`` (W-hat_max, Lemma 2), ``makespan_packing``,
    ``rho_hat``, ``u``, ``l``, ``gpu_assignment`` (job -> [[server id, GPU index on the server], ...]).
    """
    with paused_gc():   # millions of acyclic heap entries: the collector's passes would find nothing
        pk, best = run_sjf_bco(inst, kappa, lam)
        return pk.schedule(best, "sjf-bco"), info_for(pk, best)


def info_for(pk: Packer, best: Packing) -> dict:
    ids = pk.inst.cluster.server_ids
    server, local = pk.gpu_server_list, pk.gpu_local
    w_max = float(max(best.loads))
    return {
        "theta": w_max,
        "theta_bisection": best.theta,
        "kappa": best.kappa,
        "max_estimated_load": w_max,
        "makespan_packing": best.makespan,
        "rho_hat": dict(pk.est.rho_hat),
        "u": pk.est.u,
        "l": pk.est.l,
        "lam": None if not pk.lam else (pk.lam[0] if all(x == pk.lam[0] for x in pk.lam) else "per job"),
        "gpu_assignment": {job.id: [[ids[server[g]], local[g]] for g in best.gpus[i]]
                           for i, job in enumerate(pk.jobs)},
    }
