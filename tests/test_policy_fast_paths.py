"""Issue 29's fast paths of Gavel and Optimus give the per-job results of the straightforward computation, bit for
bit: each policy is run beside a reference subclass that decides the plain way (per job, per round, in Python,
as the policies did before the speed-up) on small random workloads (contended and not, one GPU type and several,
round and event mode), and the per-job tables must be equal exactly. The LP's matrix and its classes of identical
jobs are compared with the constructions they replace."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from optsched.cluster import parse_cluster
from optsched.generators.workload import synthetic_workload
from optsched.perf.hetero import HeteroPerf
from optsched.sim import Workload, simulate
from optsched.sim.base import Decision, DecisionBuilder
from optsched.sim.fitting import best_fit, whole_servers
from optsched.sim.hetero import Gavel, GavelMakespan
from optsched.sim.hetero.lp import _classes, _sparse_lp, max_min_fairness, min_makespan
from optsched.sim.hetero.placement import bound_perf_ok, place_on_type
from optsched.sim.optimus import Optimus, marginal_gain_allocation
from optsched.sim.state import RUNNING, Placement

_EPS = 1e-9


def _probe_plain(cs, k: int, g: int) -> Placement:
    """The probe placement computed afresh (no cache), with the scan of best_fit over a list."""
    caps = np.where(cs.type_mask(k), cs.capacity, 0)
    s = best_fit(caps.tolist(), g)
    if s is not None:
        return Placement.of({s: g})
    return Placement.of(whole_servers(caps, caps, min(g, int(caps.sum()))))


class PlainGavel(Gavel):
    """Gavel's realisation written the straightforward way: every round, every active job in Python."""

    def __init__(self, objective: str = "max-min", solver: str = "glop", aggregate: bool = True,
                 efficiency: bool = True, round_s: float = 300.0):
        super().__init__(objective, solver, aggregate, efficiency, round_s)
        self.x_of: dict = {}
        self.rec_of: dict = {}
        self.rows_of: dict = {}

    def on_admit(self, jobs, view):
        self._dirty = True

    def on_completion(self, job, view):
        self._dirty = True
        for d in (self.x_of, self.rec_of, self.rows_of):
            d.pop(job.id, None)

    def after_apply(self, decision, view, own):
        pass

    def _plain_row(self, job, view):
        row = self.rows_of.get(job.id)
        if row is None:
            cs, perf = view.cluster, view.perf
            row = np.zeros(len(cs.types))
            for k, t in enumerate(cs.types):
                if (job.gpu_type and job.gpu_type != t) or job.gpus > cs.type_capacity[k]:
                    continue
                pl = _probe_plain(cs, k, job.gpus)
                it = perf.time_on(job, t, job.gpus, pl.n_servers) if hasattr(perf, "time_on") \
                    else perf.alone_time_s(job, pl)
                row[k] = 1.0 / float(it)
            self.rows_of[job.id] = row
        return row

    def decide(self, view):
        now, cs = view.now, view.cluster
        for j in view.jobs.active.values():
            rec = self.rec_of.setdefault(j.id, np.zeros(len(cs.types)))
            since = j.running_since_s
            if j.status == RUNNING and j.placement is not None and since is not None:
                start = since if self._last_t is None else max(self._last_t, since)
                if now > start:
                    rec[int(cs.type_of[j.placement.servers[0]])] += now - start
        self._last_t = now
        jobs = sorted(view.jobs.active.values(), key=lambda j: (j.arrival_s, j.index))
        self._wake = now + self.round_s if (view.round_s is None and jobs) else math.inf
        if not jobs:
            return Decision()
        if self._dirty or any(j.id not in self.x_of for j in jobs):
            assert bound_perf_ok(view.perf, cs)
            T = np.array([self._plain_row(j, view) for j in jobs])
            z = np.array([j.gpus for j in jobs], dtype=float)
            N = cs.type_capacity.astype(float)
            if self.objective == "max-min":
                a = max_min_fairness(T, z, N, solver=self.solver, efficiency=self.efficiency,
                                     aggregate=self.aggregate)
            else:
                a = min_makespan(T, z, N, np.array([j.remaining_iterations(now) for j in jobs]),
                                 solver=self.solver, efficiency=self.efficiency)
            self.x_of = {j.id: a.x[i] for i, j in enumerate(jobs)}
            self._dirty = False
        entries = []
        for pos, j in enumerate(jobs):
            x, rec = self.x_of[j.id], self.rec_of[j.id]
            elapsed = now - j.admitted_s
            for kk in np.flatnonzero(x > _EPS):
                frac = rec[kk] / elapsed if elapsed > 0 else 0.0
                prio = x[kk] / frac if frac > 0 else math.inf
                entries.append((-prio, -x[kk], pos, int(kk)))
        entries.sort()
        free_t = cs.type_capacity.copy()
        chosen: dict = {}
        order = []
        for _, _, pos, k in entries:
            j = jobs[pos]
            if j.id in chosen or j.gpus > free_t[k]:
                continue
            chosen[j.id] = k
            free_t[k] -= j.gpus
            order.append((j, k))
        b = DecisionBuilder(view)
        for j in jobs:
            if j.status == RUNNING and j.placement is not None:
                if chosen.get(j.id) != int(cs.type_of[j.placement.servers[0]]):
                    b.preempt(j)
        gone = {j.id for j in b.decision.preempt}
        stay = {j.id for j in jobs if j.status == RUNNING and j.id not in gone}
        for j, k in order:
            if j.id not in stay:
                b.launch(j, place_on_type(cs, b.free, k, j.gpus))
        return b.build()


class PlainGavelMakespan(PlainGavel):
    def __init__(self, solver: str = "glop", efficiency: bool = True, round_s: float = 300.0):
        super().__init__("makespan", solver=solver, aggregate=False, efficiency=efficiency, round_s=round_s)


class PlainOptimus(Optimus):
    """Optimus's allocation the straightforward way: estimates afresh at every decision, the greedy of
    ``marginal_gain_allocation`` whatever the model."""

    def decide(self, view):
        cs, perf, now = view.cluster, view.perf, view.now
        if not self._dirty:
            return Decision()
        self._dirty = False
        jobs = list(view.jobs.active.values())
        if not jobs:
            return Decision()

        def it(j, g):
            return float(perf.alone_time_s(j, _probe_plain(cs, 0, g)))

        rem = {j.id: j.remaining_iterations(now) for j in jobs}
        by_id = {j.id: j for j in jobs}
        order = sorted(jobs, key=lambda j: (rem[j.id] * it(j, j.gpus), j.arrival_s, j.index))
        scaling = bool(getattr(perf, "scales_with_gpus", False))

        def cap(jid):
            j = by_id[jid]
            return min(cs.total_gpus, max(j.gpus, cs.max_capacity)) if scaling else j.gpus

        alloc = marginal_gain_allocation([j.id for j in order], cs.total_gpus,
                                         lambda jid, g: rem[jid] * it(by_id[jid], g), cap,
                                         None if scaling else (lambda jid: by_id[jid].gpus))
        b = DecisionBuilder(view, elastic=True)
        for j in jobs:
            if j.status == RUNNING and j.placement is not None and alloc.get(j.id, 0) != j.held_gpus:
                b.preempt(j)
        gone = {j.id for j in b.decision.preempt}
        todo = [by_id[jid] for jid in alloc if not (by_id[jid].status == RUNNING and jid not in gone)]
        for j in sorted(todo, key=lambda j: -alloc[j.id]):
            b.launch(j, place_on_type(cs, b.free, 0, alloc[j.id]))
        return b.build()


def _workload(n: int, load: float, seed: int, max_gpus: int) -> Workload:
    wl = synthetic_workload(n, load, seed, gpu_mix={1: 4, 2: 2, 4: 2, 8: 1})
    return Workload(tuple(j for j in wl if j.gpus <= max_gpus))


def _assert_same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns) and len(a) == len(b)
    for c in a.columns:
        x, y = a[c].to_numpy(), b[c].to_numpy()
        if x.dtype.kind == "f":
            same = (x.view(np.int64) == y.view(np.int64)) | (np.isnan(x) & np.isnan(y))
        else:
            same = x == y
        assert same.all(), f"column {c}: jobs {a['id'][~same].tolist()[:5]} differ"


GAVEL_CASES = [  # cluster, mode, jobs, load (jobs/h), seed
    ("4x4", "round", 40, 12.0, 0),            # one type, contended
    ("8x4", "event", 30, 3.0, 1),             # one type, light load
    ("V100:2x4,K80:2x4", "round", 40, 10.0, 2),
    ("V100:1x8,P100:2x4,K80:2x4", "event", 40, 10.0, 3),
    ("V100:2x8,K80:2x4", "round", 30, 30.0, 4),
]


@pytest.mark.parametrize("cluster,mode,n,load,seed", GAVEL_CASES)
@pytest.mark.parametrize("fast,plain", [(Gavel, PlainGavel), (GavelMakespan, PlainGavelMakespan)],
                         ids=["max-min", "makespan"])
def test_gavel_fast_path_gives_the_plain_results(cluster, mode, n, load, seed, fast, plain):
    cl = parse_cluster(cluster)
    wl = _workload(n, load, seed, 8)
    perf = HeteroPerf.for_cluster(cl) if ":" in cluster else "hetero"
    runs = [simulate(wl, cl, scheduler=p(), perf=perf, mode=mode, seed=seed).jobs for p in (fast, plain)]
    assert runs[0]["preemptions"].sum() > 0 or load < 5  # the realisation time-slices under contention
    _assert_same(*runs)


@pytest.mark.parametrize("cluster,mode,n,load,seed,perf", [
    ("4x4", "round", 40, 12.0, 0, "hetero"),
    ("2x8", "event", 40, 20.0, 1, "hetero"),
    ("4x4", "round", 40, 12.0, 2, "constant"),
    ("3x4", "event", 40, 20.0, 3, "constant"),
])
def test_optimus_fast_path_gives_the_plain_results(cluster, mode, n, load, seed, perf):
    cl = parse_cluster(cluster)
    wl = _workload(n, load, seed, cl.total_gpus)
    runs = [simulate(wl, cl, scheduler=p(), perf=perf, mode=mode, seed=seed).jobs for p in (Optimus, PlainOptimus)]
    _assert_same(*runs)


def test_lp_matrix_and_classes_match_the_constructions_they_replace():
    rng = np.random.default_rng(7)
    for _ in range(200):
        m, k = int(rng.integers(1, 40)), int(rng.integers(1, 5))
        T = rng.choice([0.0, 0.5, 1.0, 1 / 3], (m, k))
        z, c, n = rng.integers(1, 4, m).astype(float), rng.random(m), rng.integers(1, 5, m).astype(float)
        A = _sparse_lp(T, z, np.full(k, 8.0), c, n)[0]
        i, j = np.repeat(np.arange(m), k), np.tile(np.arange(k), m)
        xi = np.arange(m * k)
        B = sp.csr_matrix((np.concatenate([np.ones(m * k), T.ravel(), -c, np.repeat(z * n, k)]),
                           (np.concatenate([i, m + i, m + np.arange(m), 2 * m + j]),
                            np.concatenate([xi, xi, np.full(m, m * k), xi]))), shape=(2 * m + k, m * k + 1))
        assert A.shape == B.shape and np.array_equal(A.indptr, B.indptr) and np.array_equal(A.indices, B.indices)
        assert np.array_equal(A.data.view(np.int64), B.data.view(np.int64))
        key = np.column_stack([T, z, rng.choice([0.25, 1.0], m)])
        u, inv, cnt = np.unique(key, axis=0, return_inverse=True, return_counts=True)
        U, INV, CNT = _classes(key)
        assert np.array_equal(u, U) and np.array_equal(inv.ravel(), INV) and np.array_equal(cnt, CNT)


def test_best_fit_vectorised_matches_the_scan():
    rng = np.random.default_rng(3)
    for _ in range(300):
        free = rng.integers(0, 9, int(rng.integers(1, 60)))
        g = int(rng.integers(1, 9))
        assert best_fit(free, g) == best_fit(free.tolist(), g)


def test_place_on_type_hands_out_one_object_per_multi_server_placement():
    # every run segment keeps its placement: equal spans share one object (memory at a million jobs), and the
    # shared object is the placement the plain construction gives
    from optsched.sim.state import ClusterState

    cs = ClusterState(parse_cluster("V100:4x4,K80:2x2"))
    first = place_on_type(cs, cs.free.copy(), 0, 10)
    again = place_on_type(cs, cs.free.copy(), 0, 10)
    assert first is again and first == Placement.of(whole_servers(np.where(cs.type_mask(0), cs.free, 0),
                                                                  np.where(cs.type_mask(0), cs.capacity, 0), 10))
    other = place_on_type(ClusterState(parse_cluster("V100:4x4,K80:2x2")), cs.free.copy(), 0, 10)
    assert other == first and other is not first  # one table per cluster state
    assert place_on_type(cs, cs.free.copy(), 1, 3) == Placement.of({4: 2, 5: 1})


def test_distinct_multi_server_placements_share_their_server_ints_and_counts():
    # servers past 256 are an int object each, and whole-server counts repeat: distinct placements built from
    # separate dicts share those pieces (memory at a million jobs), and stay equal to the plain construction
    from optsched.sim.state import ClusterState

    cs = ClusterState(parse_cluster("V100:600x4"))
    free = cs.free.copy()
    free[:300] = 0
    a = place_on_type(cs, free, 0, 8)
    free[300] = 0
    b = place_on_type(cs, free, 0, 8)
    assert a == Placement.of({300: 4, 301: 4}) and b == Placement.of({301: 4, 302: 4})
    assert a is not b and a.counts is b.counts and a.servers[1] is b.servers[0]


def _lp_only(monkeypatch) -> None:
    """Make lp._solve always call the LP solver (no closed form)."""
    import optsched.sim.hetero.lp as lp

    monkeypatch.setattr(lp, "_all_run", lambda T, c: lp._solve_glop(T, np.ones(len(T)), np.array([1e18]), c,
                                                                     np.ones(len(T)), True))
    monkeypatch.setattr(lp, "_knapsack", lambda T, z, N, c, n: lp._solve_glop(T, z, np.array([N]), c, n, True))
    monkeypatch.setattr(lp, "_unique_knapsack", lambda ratio, x, lo: False)  # never defer GLOP


@pytest.mark.parametrize("objective", ["max-min", "makespan"])
def test_one_type_with_room_closed_form_is_glops_answer_bit_for_bit(objective):
    """One GPU type with room for every job at once: the closed form (x = 1, s* = min T / c) equals GLOP's
    two-phase solve of the same LP exactly, and HiGHS' to its tolerance; without room the LP is solved."""
    from optsched.sim.hetero.lp import _solve_glop

    rng = np.random.default_rng(11)
    seen = {True: 0, False: 0}
    for _ in range(120):
        m = int(rng.integers(1, 30))
        T = rng.uniform(0.01, 3.0, (m, 1))
        z = rng.integers(1, 5, m).astype(float)
        room = bool(rng.integers(0, 2))
        N = np.array([z.sum() + (float(rng.integers(0, 3)) if room else -1.0)])
        if N[0] < z.max():
            continue
        R = rng.uniform(1e3, 1e6, m)
        a = max_min_fairness(T, z, N) if objective == "max-min" else min_makespan(T, z, N, R)
        assert a.info["method"] == ("all-run" if room else "glop")
        seen[room] += 1
        if not room:
            continue
        # the same LP through GLOP: rows and scale as lp._solve builds them (no classes: every row its own)
        from optsched.sim.hetero.lp import _equal_share

        c = _equal_share(T, z, N, "cluster") if objective == "max-min" else R
        scale = float(np.min(_equal_share(T, z, N, "cluster") / c))
        x, s, *_ = _solve_glop(T, z, N, c * scale, np.ones(m), True)
        assert np.array_equal(a.x, np.clip(x, 0, 1)) and a.value == s * scale
        h = (max_min_fairness(T, z, N, solver="highs") if objective == "max-min"
             else min_makespan(T, z, N, R, solver="highs"))
        assert not h.info["closed_form"] and h.x == pytest.approx(a.x) and h.value == pytest.approx(a.value)
    assert seen[True] > 20 and seen[False] > 20


@pytest.mark.parametrize("fast", [Gavel, GavelMakespan], ids=["max-min", "makespan"])
def test_gavel_closed_form_gives_the_lp_results(fast, monkeypatch):
    """A one-type cluster with room for every job (the closed form taken at every decision) and one without: the
    per-job table with the closed form equals the one with GLOP solving every LP."""
    for cluster, n, load in (("16x4", 30, 4.0), ("4x4", 40, 12.0)):
        cl = parse_cluster(cluster)
        wl = _workload(n, load, 5, 8)
        g = fast()
        with_closed = simulate(wl, cl, scheduler=g, perf="hetero", mode="round", seed=5).jobs
        closed = [e["method"] == "all-run" for e in g.lp_log]
        assert any(closed) and (cluster == "16x4" or not all(closed))
        with monkeypatch.context() as mp:
            _lp_only(mp)
            lp_only = simulate(wl, cl, scheduler=fast(), perf="hetero", mode="round", seed=5).jobs
        _assert_same(with_closed, lp_only)


@pytest.mark.parametrize("objective", ["max-min", "makespan"])
def test_one_type_without_room_knapsack_is_the_lp_optimum(objective):
    """``solver="closed-form"`` on one GPU type without room for every job: the fractional knapsack's answer is
    feasible, its s* is the LP's optimum (GLOP's and HiGHS' to their tolerances), and its phase-2 objective is
    at least GLOP's (it is the optimum; GLOP's is within its tolerances of it); where no two jobs tie on
    T / (c z) the optimum is unique and x equals GLOP's to 1e-7 (not bit for bit: GLOP's tolerances)."""
    from optsched.sim.hetero.lp import _KEEP, _equal_share, _solve_glop

    rng = np.random.default_rng(12)
    tied = untied = 0
    for i in range(150):
        m = int(rng.integers(2, 30))
        ties = i % 3 == 0
        T = (rng.choice([0.5, 1.0, 2.0], (m, 1)) if ties else rng.uniform(0.01, 3.0, (m, 1)))
        z = (rng.choice([1.0, 2.0], m) if ties else rng.integers(1, 5, m).astype(float))
        R = rng.choice([1e3, 4e3], m) if ties else rng.uniform(1e3, 1e6, m)
        N = np.array([float(rng.integers(int(z.max()), int(z.sum())))])  # some job cannot hold its GPUs
        if objective == "max-min":
            a = max_min_fairness(T, z, N, solver="closed-form", aggregate=False)
            h = max_min_fairness(T, z, N, solver="highs", aggregate=False)
            R = _equal_share(T, z, N, "cluster")  # the rows' coefficients
        else:
            a, h = min_makespan(T, z, N, R, solver="closed-form"), min_makespan(T, z, N, R, solver="highs")
        assert a.info["method"] == "knapsack" and a.lps == 0
        x = a.x[:, 0]
        assert np.all(x >= 0) and np.all(x <= 1) and float(z @ x) <= N[0] * (1 + 1e-12)
        s = a.value / a.info["scale"]  # the scaled LP's s
        c = R * a.info["scale"]
        assert np.all(T[:, 0] * x >= c * s * (1 - _KEEP) * (1 - 1e-12))  # every row keeps phase 1's optimum
        xg, sg, *_ = _solve_glop(T, z, N, c, np.ones(m), True)
        xg = np.clip(xg[:, 0], 0, 1)
        assert s == pytest.approx(sg, rel=1e-12)
        w = T[:, 0] / c
        assert float(w @ x) >= float(w @ xg) - 1e-9 * float(w.sum())
        assert h.value == pytest.approx(a.value, rel=1e-7)
        key = T[:, 0] / (R * z)
        if len(np.unique(key)) == m:
            untied += 1
            assert x == pytest.approx(xg, abs=1e-7)
            assert x == pytest.approx(h.x[:, 0], abs=1e-6)
        else:
            tied += 1
    assert tied > 20 and (untied > 60 or objective == "max-min")  # max-min: T / (c z) depends on z only



def test_remaining_work_read_on_arrays_is_remaining_iterations_bit_for_bit():
    """``gavel._remaining`` gives every job's ``remaining_iterations(now)`` exactly: running or not, stalled
    (restore overhead) or not, ``now`` before its start, and work overshot (0)."""
    from optsched.sim.hetero.gavel import _remaining
    from optsched.sim.state import QUEUED, Job

    rng = np.random.default_rng(5)
    jobs = []
    for i in range(500):
        j = Job(str(i), 0.0, 1, float(rng.uniform(1, 1e6)), 1.0)
        j.status = RUNNING if rng.random() < 0.6 else QUEUED
        j.executed = float(rng.uniform(0, 1.1e6))
        j.rate, j.t_ref = float(rng.uniform(0, 40)), float(rng.uniform(0, 1e4))
        j.stall_until = j.t_ref + float(rng.choice([0.0, rng.uniform(-50, 50)]))
        jobs.append(j)
    for now in (0.0, 5e3, 1e4 + 60.0, float(rng.uniform(0, 2e4))):
        got = _remaining(jobs, now)
        want = np.array([j.remaining_iterations(now) for j in jobs])
        assert np.array_equal(got.view(np.int64), want.view(np.int64))
    assert (want == 0).any() and (want > 0).any()


class _Verified(GavelMakespan):
    verify = True  # every deferred LP also solved by GLOP: its x and every decision checked against it


class _NoDefer(GavelMakespan):
    defer = False  # GLOP solves every LP without room (as before the deferral)


class _Uncertified(_Verified):
    def _order_certain(self, *args):  # trusts the exact optimum everywhere
        return True


DEFER_CASES = [("4x4", 60, 12.0, 0, "round"), ("2x8", 60, 20.0, 2, "event"), ("4x4", 80, 12.0, 8, "event")]


@pytest.mark.parametrize("cluster,n,load,seed,mode", DEFER_CASES)
def test_deferred_glop_decides_as_glop(cluster, n, load, seed, mode):
    """On one GPU type without room, GavelMakespan decides on the LP's exact optimum where that is certain to
    decide as GLOP's answer, and has GLOP solve where not: with ``verify`` every deferred LP is also solved by
    GLOP, its x checked within GLOP_TOL of the optimum and every decision taken on the deferred x checked equal
    to the one on GLOP's; the per-job table equals the one with GLOP solving every LP."""
    cl = parse_cluster(cluster)
    wl = _workload(n, load, seed, 8)
    g = _Verified()
    deferred = simulate(wl, cl, scheduler=g, perf="hetero", mode=mode, seed=seed).jobs
    methods = [e["method"] for e in g.lp_log]
    assert methods.count("knapsack (deferred)") > 20 and methods.count("glop") == g.materialised > 0
    _assert_same(deferred, simulate(wl, cl, scheduler=_NoDefer(), perf="hetero", mode=mode, seed=seed).jobs)


def test_deferred_glop_needs_its_certificate():
    """Deciding on the exact optimum everywhere (no certificate) decides otherwise than GLOP's answer on the
    first of the workloads above: verify catches it, so the certificate is what keeps the results GLOP's."""
    cluster, n, load, seed, mode = DEFER_CASES[0]
    with pytest.raises(AssertionError, match="decides otherwise than GLOP's"):
        simulate(_workload(n, load, seed, 8), parse_cluster(cluster), scheduler=_Uncertified(), perf="hetero",
                 mode=mode, seed=seed)


def test_order_certificate_on_hand_made_greedy_orders():
    """``Gavel._order_certain`` on sorted pairs: keys within GLOP_TOL of each other where x < 1 may be
    reordered by GLOP's answer; a reordering that could change a launch order or a choice is refused."""
    g = Gavel()
    inf = math.inf
    T, F = True, False

    def ok(ps, xs, chosen, launched, gpus, cap):
        return g._order_certain(np.array(ps, float), np.array(xs, float), np.array(chosen), np.array(launched),
                                np.array(gpus), cap)

    near = 0.5 * (1 + 1e-9)
    assert not ok([2.0, 2.0 * (1 - 1e-9)], [0.5, near], [T, T], [T, T], [1, 1], 4)  # two launches, near keys
    assert ok([2.0, 1.0], [0.5, 0.5], [T, T], [T, T], [1, 1], 4)                  # far apart
    assert ok([2.0, 2.0], [1.0, 1.0], [T, T], [T, T], [1, 1], 4)                  # x = 1: GLOP's is 1.0 too
    assert ok([2.0, 2.0], [0.5, 0.5], [T, T], [T, F], [1, 1], 4)                  # one launch, both chosen
    assert ok([inf, inf], [0.5, near], [T, T], [F, T], [1, 1], 4)
    assert not ok([inf, inf], [0.5, near], [T, T], [T, T], [1, 1], 4)
    assert ok([2.0, 2.0], [1.0, 0.5], [T, F], [T, F], [2, 5], 4)                  # 5 GPUs never fit: 4 free
    assert not ok([2.0, 2.0], [1.0, 0.5], [T, F], [T, F], [2, 3], 4)              # first, 3 would fit
    # a pair far from its neighbour but close to one before it (a wide interval) is in the same group
    assert not ok([2.0, 2.0, 2.0 - 1e-7], [1.0, 1.0, 1e-3], [T, T, T], [T, T, T], [1, 1, 1], 4)
