"""Moves written only where a count changes (issue 29): ``ClusterState.shift`` leaves the state that releasing
every mover and then occupying each gives (free GPUs, the busy count, and every server's jobs in their order), and
``DecisionBuilder``'s one-mover shift leaves the free GPUs its give-then-take gives; moves that do not fit are
refused with nothing written. Random clusters, placements and moves, compared with the plain path."""

from __future__ import annotations

import copy
import random

import pytest

from optsched.cluster import Cluster
from optsched.errors import ScheduleError
from optsched.sim.base import DecisionBuilder
from optsched.sim.state import RUNNING, ClusterState, Job, JobState, Placement, SimView


def _random_placement(rng: random.Random, free: list[int], most: int) -> Placement | None:
    """Some of the free GPUs of a random set of servers (None: none free)."""
    servers = [s for s, f in enumerate(free) if f > 0]
    if not servers:
        return None
    chosen = rng.sample(servers, rng.randint(1, min(len(servers), most)))
    return Placement.of({s: rng.randint(1, free[s]) for s in chosen})


def _state(cs: ClusterState) -> tuple:
    return cs.free.tolist(), cs._fl[:], cs.busy_gpus, [list(d.items()) for d in cs.jobs_on]


@pytest.mark.parametrize("seed", range(40))
def test_cluster_shift_is_release_then_occupy(seed):
    rng = random.Random(seed)
    n = rng.choice([3, 8, 40])
    cs = ClusterState(Cluster.homogeneous(n, rng.choice([2, 4, 8])))
    held: dict[str, Placement] = {}
    for k in range(rng.randint(2, 12)):
        pl = _random_placement(rng, cs._fl, rng.choice([2, 6, 30]))
        if pl is not None:
            cs.occupy(f"j{k}", pl)
            held[f"j{k}"] = pl
    for _ in range(30):
        movers = rng.sample(sorted(held), rng.randint(1, min(4, len(held))))
        # new placements drawn from what would be free once the movers are out, sometimes more (a misfit)
        spare = cs._fl[:]
        for jid in movers:
            for s, c in zip(held[jid].servers, held[jid].counts):
                spare[s] += c
        moves = []
        for jid in movers:
            pl = _random_placement(rng, [f + (rng.random() < 0.1) for f in spare], rng.choice([2, 6, 30]))
            if pl is None:
                break
            for s, c in zip(pl.servers, pl.counts):
                spare[s] = max(0, spare[s] - c)
            moves.append((jid, held[jid], pl))
        if not moves:
            continue
        plain = copy.deepcopy(cs)
        try:
            for jid, old, _ in moves:
                plain.release(jid, old)
            for jid, _, new in moves:
                plain.occupy(jid, new)
            fits = True
        except ScheduleError:
            fits = False
        before = _state(cs)
        assert cs.shift(moves) is fits
        if fits:
            assert _state(cs) == _state(plain)
            for jid, _, new in moves:
                held[jid] = new
        else:
            assert _state(cs) == before  # nothing written


def test_cluster_shift_refuses_placements_out_of_order():
    cs = ClusterState(Cluster.homogeneous(3, 4))
    old = Placement.of({0: 2})
    cs.occupy("a", old)
    before = _state(cs)
    for bad in (Placement((2, 1), (1, 1)), Placement((1, 1), (1, 1)), Placement((5,), (1,))):
        assert not cs.shift([("a", old, bad)])
        assert _state(cs) == before


@pytest.mark.parametrize("seed", range(30))
def test_builder_shift_is_give_then_take(seed):
    rng = random.Random(seed)
    cs = ClusterState(Cluster.homogeneous(rng.choice([4, 20, 80]), 4))
    jobs = JobState()
    placed = []
    for k in range(rng.randint(1, 10)):
        pl = _random_placement(rng, cs._fl, rng.choice([3, 40]))
        if pl is None:
            break
        j = Job(f"j{k}", 0.0, pl.gpus, 10.0, 1.0)
        j.status, j.placement, j.held_gpus = RUNNING, pl, pl.gpus
        cs.occupy(j.id, pl)
        jobs.add(j)
        placed.append(j)
    view = SimView(0.0, cs, jobs, None)
    for _ in range(20):
        j = rng.choice(placed)
        spare = cs.free.tolist()
        for s, c in zip(j.placement.servers, j.placement.counts):
            spare[s] += c
        new = _random_placement(rng, [f + (rng.random() < 0.1) for f in spare], rng.choice([3, 40]))
        if new is None:
            continue
        fast, plain = DecisionBuilder(view, elastic=True), DecisionBuilder(view, elastic=True)
        plain._give(j.placement)
        try:
            plain._take(j, new)
            fits = True
        except ScheduleError:
            fits = False
        assert (fast._shift(j.placement, new) is not None) is fits
        if fits:
            assert fast.free.tolist() == plain.free.tolist() and fast.free_total == plain.free_total
        else:
            assert fast.free.tolist() == cs.free.tolist()  # nothing written
            with pytest.raises(ScheduleError):
                fast.migrate(j, new)  # the plain path names the fault


def _engine_after_move(edit):
    """A 3-server x 2-GPU run: a (2 GPUs) on server 0 from 0; at b's arrival (30) a decision built with
    ``DecisionBuilder.migrate`` moves a to server 1, ``edit`` may change it; the cluster state right after."""
    from optsched.problems.workload import Workload, WorkloadJob
    from optsched.sim import LaunchMechanism, Simulator

    wl = Workload((WorkloadJob("a", 0, 2, 100, 1.0), WorkloadJob("b", 30, 1, 10, 1.0)))
    sim = Simulator(wl, Cluster.homogeneous(3, 2), mode="event", launch=LaunchMechanism(migration_s=5.0))
    sim.reset()
    while (view := sim.advance()) is not None:
        if view.now == 30:
            a = view.jobs.active["a"]
            b = DecisionBuilder(view, elastic=True)
            b.migrate(a, Placement.of({1: 2}))
            d = b.build()
            assert d.moved[a][:2] == (Placement.of({0: 2}), Placement.of({1: 2}))  # the builder's work is kept
            edit(d, a)
            sim.apply(d)
            return _state(view.cluster)
        sim.apply(sim.decide())
    raise AssertionError("no decision at 30")


def test_engine_reuses_the_builders_moved_gpus():
    # a planted delta for the very placements the builder saw is what the engine writes: the engine reused it
    # rather than working the move out again (the true one gives the plain state: server 1 full, 0 free)
    free, _, busy, on = _engine_after_move(lambda d, a: None)
    assert (free, busy, on) == ([2, 0, 2], 2, [[], [("a", 2)], []])

    def plant(d, a):
        old, new, _ = d.moved[a]
        d.moved[a] = (old, new, {1: 2})  # (server 0 never given back)

    free, _, busy, _ = _engine_after_move(plant)
    assert (free, busy) == ([0, 0, 2], 4)


def test_engine_ignores_the_builders_work_for_an_edited_move():
    # the policy moves a elsewhere after building: the kept entry is for other placements, so the engine works
    # the move out itself (a planted, wrong entry must not be used)
    def edit(d, a):
        old, new, _ = d.moved[a]
        d.moved[a] = (old, new, {1: 2})
        d.migrate[a] = Placement.of({2: 2})

    free, _, busy, on = _engine_after_move(edit)
    assert (free, busy, on) == ([2, 2, 0], 2, [[], [], [("a", 2)]])


def test_cluster_shift_leaves_the_callers_deltas_alone():
    # two movers with their deltas handed in: the moves are summed in a dict of shift's own, not in the first's
    cs = ClusterState(Cluster.homogeneous(4, 4))
    pa, pb = Placement.of({0: 4, 1: 2}), Placement.of({2: 3})
    cs.occupy("a", pa)
    cs.occupy("b", pb)
    na, nb = Placement.of({0: 4, 1: 3}), Placement.of({1: 1, 2: 3})
    da, db = {1: 1}, {1: 1}
    assert cs.shift([("a", pa, na), ("b", pb, nb)], [da, db])
    assert (da, db) == ({1: 1}, {1: 1})
    assert cs.free.tolist() == [0, 0, 1, 4] and cs.busy_gpus == 11
    assert [list(d) for d in cs.jobs_on[:3]] == [["a"], ["a", "b"], ["b"]]


def test_builder_migrate_takes_the_callers_moved_gpus():
    cs = ClusterState(Cluster.homogeneous(3, 4))
    j = Job("a", 0.0, 6, 10.0, 1.0)
    pl = Placement.of({0: 4, 1: 2})
    j.status, j.placement, j.held_gpus = RUNNING, pl, 6
    cs.occupy("a", pl)
    jobs = JobState()
    jobs.add(j)
    view = SimView(0.0, cs, jobs, None)
    new = Placement.of({0: 4, 1: 3, 2: 1})
    b = DecisionBuilder(view, elastic=True)
    b.migrate(j, new, _moved={1: 1, 2: 1})  # the true delta: what the walk gives
    plain = DecisionBuilder(view, elastic=True)
    plain.migrate(j, new)
    assert b.free.tolist() == plain.free.tolist() == [0, 1, 3] and b.free_total == plain.free_total == 4
    assert b.build().moved[j] == (pl, new, {1: 1, 2: 1})
    planted = DecisionBuilder(view, elastic=True)
    planted.migrate(j, new, _moved={2: 1})  # taken as it is (not walked again): server 1 keeps its 2 free
    assert planted.free.tolist() == [0, 2, 3]
    with pytest.raises(ScheduleError):  # a move that does not fit still goes the plain way, which names it
        DecisionBuilder(view, elastic=True).migrate(j, Placement.of({0: 4, 1: 2, 2: 5}), _moved={2: 5})
