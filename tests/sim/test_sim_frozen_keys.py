"""LAS and Tiresias without re-keying running jobs (``SchedulingPolicy.keys_change`` "relative" and
"at-expiry"), and the placement walk's shortcuts: every fast path gives what the naive reference gives.

* LAS with service "time" orders jobs by their exact attained service (no rounding), which a running job's key
  ``attained_s - t_ref`` (constant while it runs) and a waiting job's ``attained_s - now`` express;
* a Tiresias running job keeps its queue up to the crossing time ``running_key`` returns, not a moment more;
* ``Composed`` (frozen running lists, crossing heap, lazy ranks) makes the decisions of ``Composed(naive=True)``
  (every key computed at every decision, the whole list handed to ``place``) on random workloads: LAS "time"
  and "gpu", Tiresias by GPU-seconds and by time, with anti-starvation bumps, backfilling, restore stalls, round
  and event mode; also with a co-location-aware model (progress synced at every change), with an outside driver
  that migrates jobs, with a placement that overrides ``place``, and across copies mid-run;
* the walk's ``fits_after`` and the consolidated search (uniform servers, best fit) against plain references.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.sim.test_sim_copy import _check_copy_mid_run
from tests.sim.test_sim_invariants import cases

from optsched.cluster import Cluster, Server
from optsched.perf.base import PerfModel
from optsched.sim import Decision, LaunchMechanism, Placement, Simulator, Workload, WorkloadJob, build_policy, simulate
from optsched.sim.base import Composed
from optsched.sim.fitting import consolidated as _consolidated
from optsched.sim.policies import Consolidated, Las, Tiresias
from optsched.sim.state import QUEUED, RUNNING, Job

FROZEN = [{"name": "las"}, {"name": "las", "starvation_s": 40}, {"name": "las", "service": "gpu"},
          {"name": "tiresias"}, {"name": "tiresias", "thresholds_gpu_s": [20, 200]},
          {"name": "tiresias", "thresholds_gpu_s": [7, 30, 31, 90], "service": "time"},
          {"name": "tiresias", "thresholds_gpu_s": [25], "starvation_s": 60}]
COLS = ["first_start_s", "completion_s", "preemptions", "launches", "migrations", "attained_gpu_s"]


@st.composite
def frozen_cases(draw):
    wl, cluster, cfg = draw(cases())
    return wl, cluster, {**cfg, "scheduler": draw(st.sampled_from(FROZEN))}


def _run(wl, cluster, cfg, naive=False, placement=None, perf=None):
    cfg = dict(cfg)
    pol = build_policy(cfg.pop("scheduler"), cfg.pop("placement"))
    pol = Composed(pol.scheduling, placement or pol.placement, naive=naive)
    if perf is not None:
        cfg["perf"] = perf
    return simulate(wl, cluster, scheduler=pol, **cfg), pol


def _same_jobs(a, b):
    assert np.array_equal(a.jobs[COLS].to_numpy(), b.jobs[COLS].to_numpy(), equal_nan=True)


# -- the keys -----------------------------------------------------------------------------------------------------
# times and services with near-ties: sums of a few round numbers, shifted by a few units in the last place
def _near(values):
    return st.builds(lambda v, k: v if k == 0 else (math.nextafter(v, math.inf) if k > 0 else
                                                   math.nextafter(v, -math.inf)),
                     st.sampled_from(values), st.integers(-1, 1))


TIMES = _near([0.0, 0.1, 0.3, 1 / 3, 7.0, 300.0, 1e6 + 0.1, 3.3e6, 7.5e6])


@st.composite
def las_jobs(draw):
    j = Job("x", 0.0, 1, 10, 1.0, index=draw(st.integers(0, 5)))
    j.attained_s = draw(TIMES)
    if draw(st.booleans()):
        j.status, j.t_ref = RUNNING, draw(TIMES)
    else:
        j.status = QUEUED
    return j


def _exact_service(j, now):
    s = Fraction(j.attained_s)
    return s + Fraction(now) - Fraction(j.t_ref) if j.status == RUNNING else s


@settings(max_examples=300)
@given(las_jobs(), las_jobs(), TIMES)
def test_las_time_key_orders_by_exact_service(a, b, now):
    las = Las()
    ka, kb = las.key(a, now), las.key(b, now)
    ea, eb = _exact_service(a, now), _exact_service(b, now)
    assert (ka < kb) == (ea < eb) and (ka == kb) == (ea == eb)
    # the frozen pieces say the same thing: a running job's key is constant, a waiting one's goes through rank_at
    for j, k in ((a, ka), (b, kb)):
        if j.status == RUNNING:
            assert las.running_key(j, now) == (k, math.inf) and las.running_key(j, now + 1e6)[0] == k
        else:
            assert las.rank_at(las.queued_key(j), now) == k


@st.composite
def tiresias_jobs(draw):
    th = sorted(set(draw(st.lists(st.sampled_from([1.0, 7.0, 20.0, 33.3, 100.0, 3600.0]), min_size=1,
                                  max_size=4))))
    pol = Tiresias(thresholds_gpu_s=th, service=draw(st.sampled_from(["gpu", "time"])))
    j = Job("x", 0.0, 4, 10, 1.0)
    j.status, j.held_gpus = RUNNING, draw(st.integers(1, 8))
    j.t_ref = draw(_near([0.0, 0.1, 10.0, 1e6 + 0.1]))
    j.attained_gpu_s = j.attained_s = draw(_near([0.0, 0.5, 7.0, 20.0, 99.9, 3600.0]))
    return pol, j, j.t_ref + draw(st.sampled_from([0.0, 0.05, 1.0, 3.3, 10.0, 1000.0]))


@settings(max_examples=300)
@given(tiresias_jobs(), st.floats(0.0, 1.0))
def test_tiresias_running_key_holds_until_its_expiry(case, frac):
    pol, j, now = case
    key, until = pol.running_key(j, now)
    assert key == pol.key(j, now) and until > now
    later = now + frac * (min(until, now + 1e4) - now)
    for t in (later, math.nextafter(until, -math.inf)):
        if now <= t < until:
            assert pol.key(j, t) == key
    if until < math.inf:
        assert pol.key(j, until)[0] > key[0]   # the next queue from the crossing time on
    else:
        assert key[0] == len(pol.thresholds_gpu_s)


# -- the fast path against the naive one --------------------------------------------------------------------------
@settings(max_examples=60)
@given(frozen_cases())
def test_frozen_keys_fast_path_equals_naive(case):
    wl, cluster, cfg = case
    fast, pol = _run(wl, cluster, cfg)
    naive, _ = _run(wl, cluster, cfg, naive=True)
    _same_jobs(fast, naive)
    assert fast.summary["decisions"] <= naive.summary["decisions"]
    name = cfg["scheduler"]["name"]
    assert pol._frozen == (name == "tiresias" or cfg["scheduler"].get("service", "time") == "time")


def _every_fit(base: type) -> type:
    """``base`` letting the walk ask find() after every victim (no fits_after shortcut)."""
    return type(f"EveryFit{base.__name__}", (base,), {"fits_after": lambda self, job, trial, servers, view: True})


def _own_walk(base: type) -> type:
    """``base`` overriding place(): Composed then hands it the whole priority list (built from both lists)."""
    return type(f"OwnWalk{base.__name__}", (base,), {"place": lambda self, order, view: base.place(self, order, view)})


@settings(max_examples=40)
@given(frozen_cases())
def test_walk_shortcuts_and_a_place_override_change_nothing(case):
    wl, cluster, cfg = case
    opts = {k: v for k, v in cfg["placement"].items() if k != "name"}
    base = type(build_policy("fifo", cfg["placement"]).placement)
    ref, _ = _run(wl, cluster, cfg, naive=True)
    for make in (_every_fit, _own_walk):
        got, _ = _run(wl, cluster, cfg, placement=make(base)(**opts))
        _same_jobs(got, ref)


class SharedSlowdown(PerfModel):
    """Co-location-aware toy model: a job sharing a server with another job runs 1.5 times slower."""

    colocation_aware = True
    name = "shared-slowdown"

    def alone_time_s(self, job, placement):
        return job.iteration_time_s * (1.25 if len(placement.servers) > 1 else 1.0)

    def iteration_times_s(self, running, cluster):
        return {j.id: self.alone_time_s(j, j.placement) * (1.5 if cluster.colocated(j.placement, j.id) else 1.0)
                for j in running}


@settings(max_examples=40)
@given(frozen_cases())
def test_frozen_keys_with_a_colocation_aware_model(case):
    # every change of the running set syncs the running jobs' stored progress (t_ref, attained service): the
    # fast path re-reads every running key at each decision, and must still agree with the naive one
    wl, cluster, cfg = case
    fast, pol = _run(wl, cluster, cfg, perf=SharedSlowdown())
    naive, _ = _run(wl, cluster, cfg, naive=True, perf=SharedSlowdown())
    _same_jobs(fast, naive)
    assert pol._rekey_all == pol._frozen


def _check_lists(pol, now):
    """Composed's stored running entries are what the jobs' state gives now (unless the key expired by now)."""
    if not pol._frozen or pol._rekey_all:
        return
    sched = pol.scheduling
    until = {e[1].id: t for t, _, e in pol._cross if pol._entry.get(e[1].id) is e}
    for key, j in pol._r:
        fresh, t = sched.running_key(j, now)
        if until.get(j.id, math.inf) > now:
            assert key == (pol.priority(j), fresh, j.arrival_s, j.index) and until.get(j.id, math.inf) == t


def _drive_with_migrations(wl, cluster, cfg, naive):
    """At the first decision point after new arrivals (a point the fast path never skips) an outside driver
    moves the running one-server job of lowest index to the server of lowest index with room (if any); the
    policy decides the others."""
    c = dict(cfg)
    base = build_policy(c["scheduler"], c["placement"])
    sim = Simulator(wl, cluster, policy=Composed(base.scheduling, base.placement, naive=naive),
                    perf=c["perf"], mode=c["mode"], round_s=c["round_s"],
                    launch=LaunchMechanism(restore_s=c["restore_s"], migration_s=3.0))
    sim.reset()
    arrived = 0
    while (view := sim.advance()) is not None:
        d = None
        n = sum(1 for w in wl.jobs if w.arrival_s <= view.now)
        if n > arrived:
            arrived = n
            free = view.cluster.free
            for j in sorted((j for j in view.active() if j.status == RUNNING), key=lambda j: j.index):
                if j.placement.n_servers == 1:
                    to = [s for s in range(len(free)) if s != j.placement.servers[0] and free[s] >= j.gpus]
                    if to:
                        d = Decision(migrate={j: Placement.of({to[0]: j.gpus})})
                        break
        sim.apply(d if d is not None else sim.decide())
        _check_lists(sim.policy, view.now)
    return sim.result()


@st.composite
def awkward_cases(draw):
    """Times that are not binary fractions (0.1, 1/3, ...), so that syncing a job's progress rounds."""
    wl, cluster, cfg = draw(frozen_cases())
    jobs = tuple(WorkloadJob(w.id, draw(st.sampled_from([0.0, 0.1, 0.7, 3.3, 10.1, 33.3])), w.gpus, w.iterations,
                             draw(st.sampled_from([0.1, 1 / 3, 0.7, 1.1])), tracked=w.tracked) for w in wl.jobs)
    # rounds longer than the restore stall (4 s): shorter ones would let LAS preempt every resumed job before it
    # progresses, for ever
    return Workload(jobs), cluster, {**cfg, "round_s": draw(st.sampled_from([7.1, 50 / 3, 33.3]))}


@settings(max_examples=60)
@given(awkward_cases())
def test_frozen_keys_with_migrations_by_a_driver(case):
    # a migration syncs the moved job's progress (attained service and t_ref, rounded): the fast path re-keys
    # it when it moves
    wl, cluster, cfg = case
    fast = _drive_with_migrations(wl, cluster, cfg, naive=False)
    naive = _drive_with_migrations(wl, cluster, cfg, naive=True)
    _same_jobs(fast, naive)


def test_no_round_before_the_clock():
    # b's completion (3.666...7, after a migration stall) lands one unit in the last place after round 11
    # (11 x 1/3 = 3.666...5). The naive run holds round 11 before the completion, then round 12 (t = 4) starts c;
    # the fast path, having skipped rounds 3-11, used to put "round 11" after the completion, before the clock.
    wl = Workload((WorkloadJob("a", 0.0, 1, 1.0, 0.1), WorkloadJob("c", 0.1, 9, 1.0, 0.1),
                   WorkloadJob("b", 0.0, 1, 2.0, 1 / 3), WorkloadJob("d", 0.0, 1, 1.0, 0.1)))
    cl = Cluster((Server("s0", 1), Server("s1", 4), Server("s2", 4)))
    cfg = {"scheduler": {"name": "tiresias"}, "placement": {"name": "consolidated"}, "perf": None,
           "mode": "round", "round_s": 1 / 3, "restore_s": 0.0}
    fast = _drive_with_migrations(wl, cl, cfg, naive=False)
    naive = _drive_with_migrations(wl, cl, cfg, naive=True)
    _same_jobs(fast, naive)
    t = fast.jobs.set_index("id")
    assert t.loc["b", "completion_s"] > 11 / 3 and t.loc["c", "first_start_s"] == 4.0


@settings(max_examples=30)
@given(frozen_cases(), st.integers(0, 12))
def test_frozen_keys_copy_mid_run(case, k):
    wl, cluster, cfg = case

    def make():
        return Simulator(wl, cluster, policy=build_policy(cfg["scheduler"], cfg["placement"]),
                         perf=cfg["perf"], mode=cfg["mode"], round_s=cfg["round_s"],
                         launch=LaunchMechanism(restore_s=cfg["restore_s"]))

    _check_copy_mid_run(make, k)


def test_las_fast_path_preempts_many_in_one_decision():
    # round mode, 8 one-GPU jobs running, 8 new ones arrive: LAS preempts the longest-served half each round;
    # the walk takes several victims in one decision (the victims are the tail of the running list)
    wl = Workload(tuple(WorkloadJob(f"a{i}", 0.0, 1, 1000.0, 1.0) for i in range(8))
                  + tuple(WorkloadJob(f"b{i}", 450.0 + i, 1, 100.0 + i, 1.0) for i in range(8)))
    cl = Cluster.homogeneous(2, 4)
    runs = [simulate(wl, cl, scheduler=Composed(Las(), Consolidated(), naive=n)) for n in (False, True)]
    _same_jobs(*runs)
    assert runs[0].summary["preemptions_total"] >= 8


# -- the consolidated search ----------------------------------------------------------------------------------------
def _consolidated_reference(g, free, cap, max_cap):
    """Blox's rule written plainly: best fit on one server (fewest free >= g, lowest index), else whole free
    servers, largest first (ties by index)."""
    if g <= max_cap:
        fits = [(int(free[s]), s) for s in range(len(free)) if free[s] >= g]
        return Placement.of({min(fits)[1]: g}) if fits else None
    whole = sorted((-int(cap[s]), s) for s in range(len(free)) if cap[s] > 0 and free[s] == cap[s])
    if sum(-c for c, _ in whole) < g:
        return None
    out, need = {}, g
    for c, s in whole:
        out[s] = min(-c, need)
        need -= out[s]
        if not need:
            break
    return Placement.of(out)


@settings(max_examples=300)
@given(st.lists(st.integers(1, 8), min_size=1, max_size=10), st.data())
def test_consolidated_search_matches_the_plain_rule(caps, data):
    cap = np.array(caps, dtype=np.int64)
    free = np.array([data.draw(st.integers(0, c)) for c in caps], dtype=np.int64)
    g = data.draw(st.integers(1, int(cap.sum())))
    uniform = len(set(caps)) == 1
    want = _consolidated_reference(g, free, cap, int(cap.max()))
    assert _consolidated(g, free, cap, int(cap.max()), uniform) == want
    assert _consolidated(g, free, cap, int(cap.max()), False) == want


def test_consolidated_on_uniform_and_mixed_servers():
    # mixed sizes: 8 GPUs take the 6-GPU server whole, then 2 of a 4-GPU one; uniform: two whole servers
    mixed = np.array([4, 6, 4])
    assert _consolidated(8, mixed, mixed, 6, False) == Placement.of({1: 6, 0: 2})
    uni = np.array([4, 4, 4])
    assert _consolidated(8, np.array([4, 3, 4]), uni, 4, True) == Placement.of({0: 4, 2: 4})
    assert _consolidated(9, np.array([4, 4, 4]), uni, 4, True) == Placement.of({0: 4, 1: 4, 2: 1})
    assert _consolidated(9, np.array([4, 3, 4]), uni, 4, True) is None
    cl = Cluster(tuple(Server(f"s{i}", c) for i, c in enumerate([4, 6, 4])))
    r = simulate(Workload((WorkloadJob("a", 0, 8, 10, 1.0),)), cl, scheduler="las", mode="event")
    assert r.job_objects[0].segments[0][2].as_dict() == {1: 6, 0: 2}


def test_run_pauses_the_garbage_collector_and_restores_it():
    import gc

    wl = Workload((WorkloadJob("a", 0.0, 1, 10.0, 1.0),))
    seen = []

    class Probe(Consolidated):
        def find(self, job, free, view):
            seen.append(gc.isenabled())
            return super().find(job, free, view)

    was = gc.isenabled()
    try:
        for state in (True, False):
            (gc.enable if state else gc.disable)()
            simulate(wl, Cluster.homogeneous(1, 1), scheduler=Composed(Las(), Probe()))
            assert gc.isenabled() is state and seen[-1] is False
        gc.enable()
        with pytest.raises(ZeroDivisionError):
            simulate(wl, Cluster.homogeneous(1, 1), scheduler=Composed(Las(), type("Boom", (Consolidated,), {
                "find": lambda self, job, free, view: 1 / 0})()))
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


# -- the one declaration ------------------------------------------------------------------------------------------
def test_a_subclass_with_its_own_key_does_not_inherit_the_parents_promise():
    from optsched.sim.base import SchedulingPolicy
    from optsched.sim.policies import Fifo

    class Lifo(Fifo):
        def key(self, job, now):
            return -job.arrival_s

    class DeclaredLifo(Fifo):
        keys_change = "never"

        def key(self, job, now):
            return -job.arrival_s

    class QueueByHalf(Tiresias):  # Tiresias's key is also defined by queue_of
        def queue_of(self, job, now):
            return super().queue_of(job, now) // 2

    assert Fifo.keys_change == "never" and Lifo.keys_change == "anytime" and DeclaredLifo.keys_change == "never"
    assert Tiresias.keys_change == "at-expiry" and QueueByHalf.keys_change == "anytime"
    assert Las().keys_change == "relative" and Las(service="gpu").keys_change == "running"
    with pytest.raises(TypeError, match="keys_change must be one of"):
        type("Sometimes", (SchedulingPolicy,), {"keys_change": "sometimes"})
