"""Requested vs held GPUs: an elastic launch holds fewer GPUs than the job requests, and every GPU-second of
accounting (attained service, Tiresias's queues, utilisation, segments) counts the GPUs held.

The constant performance model keeps the profiled iteration time whatever the GPUs held (1 s here), so
"iterations" read as seconds of work."""

from __future__ import annotations

import pytest

from optsched.cluster import Cluster
from optsched.errors import ScheduleError
from optsched.sim import (
    Composed,
    Decision,
    Placement,
    PlacementPolicy,
    SchedulerPlacer,
    Simulator,
    Workload,
    WorkloadJob,
)
from optsched.sim.base import ranked_order
from optsched.sim.policies import Tiresias
from optsched.sim.state import RUNNING


class HalfOnFirstServer(SchedulerPlacer):
    """Elastic: starts every waiting job, in arrival order, on half its GPUs (at least one) of server 0."""

    name = "test-half"
    elastic = True

    def decide(self, view):
        d = Decision()
        free = int(view.cluster.free[0])
        for j in sorted(view.jobs.active.values(), key=lambda j: j.arrival_s):
            g = max(1, j.gpus // 2)
            if j.status != RUNNING and g <= free:
                d.launch[j] = Placement.of({0: g})
                free -= g
        return d


class HalfPlacement(PlacementPolicy):
    """Elastic walk over the priority list: each waiting job gets half its GPUs (at least one) on one server;
    if none has room, running jobs of lower priority are preempted, lowest first, while that makes room."""

    name = "test-half-placement"

    def place_ranked(self, queued, running, view, to_rank=None):
        order = ranked_order(queued, running, to_rank)
        free = view.cluster.free.copy()
        d = Decision()
        for rank, job in enumerate(order):
            if job.status == RUNNING:
                continue
            g = max(1, job.gpus // 2)
            trial, chosen = free.copy(), []
            victims = [v for v in reversed(order[rank + 1:]) if v.status == RUNNING and v not in d.preempt]
            while not (trial >= g).any() and victims:
                v = victims.pop(0)
                chosen.append(v)
                trial[list(v.placement.servers)] += v.placement.counts
            fits = (trial >= g).nonzero()[0]
            if len(fits):
                s = int(fits[0])
                free = trial
                free[s] -= g
                d.preempt.extend(chosen)
                d.launch[job] = Placement.of({s: g})
        return d


def test_elastic_launch_accounts_the_gpus_held():
    # a requests 4 GPUs and holds 2 for 100 s: 200 GPU-seconds (not 4 x 100 = 400); the cluster (4 GPUs) is half
    # busy: mean utilisation 0.5; the segment's placement holds 2 GPUs.
    wl = Workload((WorkloadJob("a", 0, 4, 100, 1.0),))
    r = Simulator(wl, Cluster.homogeneous(1, 4), policy=HalfOnFirstServer(), mode="event").run()
    row = r.jobs.iloc[0]
    assert (row.gpus, row.first_start_s, row.completion_s, row.attained_gpu_s) == (4, 0.0, 100.0, 200.0)
    assert r.summary["mean_utilisation"] == pytest.approx(0.5)
    (seg,) = r.job_objects[0].segments
    assert seg[2].gpus == 2 and seg[:2] == (0.0, 100.0) and r.job_objects[0].held_gpus == 0


def test_elastic_attained_service_while_running_and_two_jobs():
    # a (4 GPUs requested, 2 held, 100 s) at 0; b (2 requested, 1 held, 40 s) at 0: both start at 0.
    # attained GPU-seconds at t=30: a 60, b 30 (requested would say 120 and 60). Utilisation: 3 of 4 GPUs busy
    # for 40 s, then 2 until 100: (3 x 40 + 2 x 60) / (4 x 100) = 0.6.
    wl = Workload((WorkloadJob("a", 0, 4, 100, 1.0), WorkloadJob("b", 0, 2, 40, 1.0)))
    sim = Simulator(wl, Cluster.homogeneous(1, 4), policy=HalfOnFirstServer(), mode="event")
    sim.reset()
    assert sim.advance() is not None
    sim.apply(sim.decide())
    assert sim.advance(until=30) is None
    a, b = sim.jobs
    assert (a.held_gpus, b.held_gpus) == (2, 1)
    assert (a.attained_gpu_at(30), b.attained_gpu_at(30)) == (60.0, 30.0)
    while sim.advance() is not None:
        sim.apply(sim.decide())
    r = sim.result()
    assert r.jobs["attained_gpu_s"].tolist() == [200.0, 40.0]
    assert r.summary["mean_utilisation"] == pytest.approx(0.6)


class ElasticHalf(HalfPlacement):
    elastic = True  # a composition with this placement launches jobs on other GPU counts than they request


def test_tiresias_queues_count_the_gpus_held():
    # one server of 4 GPUs, Tiresias with one threshold at 150 GPU-s, event mode, every job on half its GPUs.
    # a (4 req, holds 2, 300 s) at 0; b (4 req, holds 2, 100 s) at 10; c (2 req, holds 1, 50 s) at 20 waits
    # (no GPU free; a, b, c all in queue 0, FIFO inside it). a reaches 150 GPU-seconds at 0 + 150 / 2 = 75 (held
    # GPUs; with the 4 requested it would be 37.5): a drops to queue 1, c preempts a and runs 75-125 (on 1 GPU).
    # b reaches 150 at 10 + 75 = 85: queue 1 behind a (FIFO inside it); a (2 GPUs, 1 free) preempts b and runs
    # from 85 with 225 left: 310. c ends at 125: b (75 done) resumes and ends at 150.
    # GPU-seconds: a 2 x 75 + 2 x 225 = 600, b 2 x 75 + 2 x 25 = 200, c 50.
    wl = Workload((WorkloadJob("a", 0, 4, 300, 1.0), WorkloadJob("b", 10, 4, 100, 1.0),
                   WorkloadJob("c", 20, 2, 50, 1.0)))
    policy = Composed(Tiresias(thresholds_gpu_s=[150]), ElasticHalf())
    assert policy.elastic
    r = Simulator(wl, Cluster.homogeneous(1, 4), policy=policy, mode="event").run()
    got = {row.id: (row.first_start_s, row.completion_s, row.preemptions, row.attained_gpu_s)
           for row in r.jobs.itertuples()}
    assert got == {"a": (0, 310, 1, 600), "b": (10, 150, 1, 200), "c": (75, 125, 0, 50)}
    a = r.job_objects[0]
    assert [(s, e, pl.gpus) for s, e, pl, _ in a.segments] == [(0, 75, 2), (85, 310, 2)]


def test_placements_must_hold_gpus_and_match_unless_elastic():
    wl = Workload((WorkloadJob("a", 0, 2, 10, 1.0),))
    for policy, pl, words in ((HalfOnFirstServer(), Placement.of({}), "at least one GPU"),
                              (Composed(Tiresias(), HalfPlacement()), Placement.of({0: 1}), "needs 2")):
        sim = Simulator(wl, Cluster.homogeneous(1, 2), policy=policy, mode="event")
        sim.reset()
        view = sim.advance()
        with pytest.raises(ScheduleError, match=words):
            sim.apply(Decision(launch={view.jobs.active["a"]: pl}))
