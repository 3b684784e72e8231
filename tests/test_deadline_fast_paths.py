"""Issue 29's fast paths of the deadline family give the results of the straightforward computation, bit for bit:
Themis's decision that reads the waiting jobs only as far as the GPUs go (against a reference subclass that
sorts and prices every waiting job at every decision, as before the speed-up), the lazy finish-time-fair split
against the eager one, and the leftover loops of ElasticFlow and of its fixed-reservation variant against plain
heaps that rescan each next step. Small random workloads, contended and not; per-job tables compared exactly."""

from __future__ import annotations

import heapq
import math
import random

import pandas as pd
import pytest

from optsched.generators.deadline import deadline_workload, elasticflow_shaped_workload, tiny_deadline_workload
from optsched.sim import simulate
from optsched.sim.base import Decision, DecisionBuilder
from optsched.sim.deadline.common import JobTimes, deadline_order, place
from optsched.sim.deadline.elasticflow import EDFElastic, EDFWithAdmission, Ladder, ladder_of, lend
from optsched.sim.deadline.elasticflow_fixed import apply_targets, leftovers
from optsched.sim.deadline.themis import ThemisFTF, ftf_allocate, ftf_allocate_lazy, rho
from optsched.sim.state import QUEUED, RUNNING, Placement


class PlainThemis(ThemisFTF):
    """Themis's decision the plain way: every waiting job sorted and priced at every decision, the eager split."""

    def on_admit(self, jobs, view):
        pass

    def on_completion(self, job, view):
        pass

    def after_apply(self, decision, view, own):
        pass

    def decide(self, view):
        d = Decision()
        active = list(view.jobs.active.values())
        if self.batch and any(j.status == RUNNING for j in active):
            return d
        waiting = sorted((j for j in active if j.status == QUEUED), key=lambda j: (j.arrival_s, j.index))
        total = int(view.cluster.free.sum())
        if not waiting or total == 0:
            return d
        now, cs = view.now, view.cluster
        node = int(cs.max_capacity)
        share = max(1, cs.total_gpus // max(1, len(active)))
        by_id = {j.id: j for j in waiting}
        times = {j.id: JobTimes.of(j, view.perf, now) for j in waiting}
        ideal = {j.id: times[j.id].with_work(j.iterations).run_time_s(share, cross=share > node) for j in waiting}
        alloc = ftf_allocate([j.id for j in waiting], total,
                             lambda jid, g: rho(times[jid], g, elapsed_s=now - by_id[jid].arrival_s,
                                                ideal_s=ideal[jid], node_gpus=node),
                             lambda jid: times[jid].max_gpus)
        b = DecisionBuilder(view, elastic=True)
        for jid in sorted((k for k, g in alloc.items() if g),
                          key=lambda k: (-alloc[k], by_id[k].arrival_s, by_id[k].index)):
            b.launch(by_id[jid], Placement.of(place(b.free, alloc[jid])))
        return b.build()


def _plain_edf_decide(self, view):
    """Elastic EDF the plain way: every active job sorted and walked at every decision."""
    order = sorted(view.jobs.active.values(), key=deadline_order)
    target = {j: j.held_gpus for j in order if j.status == RUNNING and j.finish_time() <= view.now + 1e-6}
    free = view.cluster.total_gpus - sum(target.values())
    for j in order:
        if j in target:
            continue
        lad = ladder_of(j, view, self._ladders)
        i = lad.best_upto(free)
        target[j] = lad.counts[i] if i >= 0 else 0
        free -= target[j]
    return apply_targets(view, target)


class PlainEDFElastic(EDFElastic):
    decide = _plain_edf_decide

    def on_admit(self, jobs, view):
        pass

    def on_completion(self, job, view):
        self._ladders.pop(job.id, None)


class PlainEDFWithAdmission(EDFWithAdmission):
    decide = _plain_edf_decide

    def on_admit(self, jobs, view):
        pass

    def on_completion(self, job, view):
        self._ladders.pop(job.id, None)


def _workloads():
    yield from (tiny_deadline_workload(8, seed=s) for s in range(4))
    yield from (deadline_workload(lam, 12.0, nodes=2, gpus_per_node=4, seed=s) for s, lam in ((0, 2.0), (1, 8.0)))
    yield deadline_workload(20.0, 10.0, nodes=4, gpus_per_node=4, seed=3)  # heavy: a long queue


@pytest.mark.parametrize("batch", [True, False])
def test_themis_fast_decision_is_the_plain_one(batch):
    for wl in _workloads():
        fast, plain = (simulate(wl, scheduler=p(batch=batch)).jobs for p in (ThemisFTF, PlainThemis))
        assert len(fast) == len(wl.jobs)
        pd.testing.assert_frame_equal(fast, plain, check_exact=True)


@pytest.mark.parametrize("fast, plain", [(EDFElastic, PlainEDFElastic), (EDFWithAdmission, PlainEDFWithAdmission)])
def test_elastic_edf_truncated_walk_is_the_full_one(fast, plain):
    wls = [*_workloads(), elasticflow_shaped_workload(40, nodes=2, gpus_per_node=4, seed=1),
           elasticflow_shaped_workload(60, nodes=4, gpus_per_node=4, seed=2, load=6.0)]
    for wl in wls:
        a, b = (simulate(wl, scheduler=p()).jobs for p in (fast, plain))
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_ftf_lazy_is_the_eager_split():
    rng = random.Random(7)
    for _ in range(300):
        n, gpus = rng.randint(1, 12), rng.randint(1, 20)
        base = {i: rng.uniform(0.5, 5.0) for i in range(n)}
        expo = {i: rng.choice([0.3, 0.7, 1.0, 1.2]) for i in range(n)}
        caps = {i: rng.randint(1, 8) for i in range(n)}

        def r(j, g, base=base, expo=expo):
            return math.inf if g <= 0 else base[j] / g ** expo[j] + 0.1 * g * (expo[j] > 1)

        eager = {k: g for k, g in ftf_allocate(list(range(n)), gpus, r, caps.get).items() if g}
        assert ftf_allocate_lazy(iter(range(n)), gpus, r, caps.get) == eager
    # a job priced finite without GPUs: the lazy split falls back to the eager one
    r0 = lambda j, g: 10.0 if g == 0 else 1.0 / g  # noqa: E731
    assert ftf_allocate_lazy(iter("ab"), 3, r0) == {k: g for k, g in ftf_allocate(list("ab"), 3, r0).items() if g}


def _plain_leftovers(times, target, spare):
    """The fixed variant's leftovers before the speed-up: a fresh scan for each next step, push then pop."""
    def next_step(jt, g, limit):
        base = jt.speed(g, cross=g > 1)
        for g2 in range(g + 1, limit + 1):
            s2 = jt.speed(g2, cross=True)
            if s2 > base:
                return (s2 - base) / (g2 - g), g2
        return None

    heap, jobs = [], list(times)
    for i, j in enumerate(jobs):
        st = next_step(times[j], target[j], min(target[j] + spare, times[j].max_gpus))
        if st is not None:
            heap.append((-st[0], i, st[1]))
    heapq.heapify(heap)
    while spare > 0 and heap:
        _, i, g2 = heapq.heappop(heap)
        j = jobs[i]
        if g2 - target[j] > spare:
            continue
        spare -= g2 - target[j]
        target[j] = g2
        st = next_step(times[j], g2, min(g2 + spare, times[j].max_gpus))
        if st is not None:
            heapq.heappush(heap, (-st[0], i, st[1]))
    return spare


def _plain_lend(jobs, target, spare):
    """ElasticFlow's lend before the speed-up: each next step pushed, then popped."""
    heap = []

    def step(i, lad, work, g):
        k = lad.best_upto(g) + 1
        if k < len(lad.counts) and lad.counts[k] - g <= spare:
            t_now = math.inf if g <= 0 else work / lad.speeds[k - 1]
            heapq.heappush(heap, (-((t_now - work / lad.speeds[k]) / (lad.counts[k] - g)), i, k))

    for i, (key, lad, work) in enumerate(jobs):
        step(i, lad, work, target[key])
    while spare > 0 and heap:
        _, i, k = heapq.heappop(heap)
        key, lad, work = jobs[i]
        if lad.counts[k] - target[key] > spare:
            continue
        spare -= lad.counts[k] - target[key]
        target[key] = lad.counts[k]
        step(i, lad, work, target[key])
    return spare


def test_leftover_loops_are_the_plain_ones():
    rng = random.Random(3)
    for _ in range(200):
        n, spare = rng.randint(1, 8), rng.randint(0, 40)
        # fixed variant: a memo shared across calls (as across decisions), jobs whose speed dips and recovers
        shape = {i: (rng.uniform(0.2, 1.0), rng.choice([3, 5, 64]), rng.randint(1, 16)) for i in range(n)}
        memo = {i: JobTimes(lambda g, c, e=shape[i]: 1.0 / (g ** e[0]) * (1.3 if g == e[1] else 1.0), 100.0,
                            shape[i][2]) for i in range(n)}
        for _rep in range(2):
            target = {i: rng.randint(0, shape[i][2]) for i in range(n)}
            work = {i: rng.uniform(1.0, 500.0) for i in range(n)}
            fast_t, plain_t = dict(target), dict(target)
            fast = leftovers({i: memo[i].with_work(work[i]) for i in range(n)}, fast_t, spare)
            fresh = {i: JobTimes(memo[i]._fn, work[i], shape[i][2]) for i in range(n)}
            assert (fast, fast_t) == (_plain_leftovers(fresh, plain_t, spare), plain_t)
        # ElasticFlow's ladders
        jobs = []
        for i in range(n):
            counts = sorted(rng.sample([1, 2, 3, 4, 6, 8, 16], rng.randint(1, 5)))
            speeds = sorted(rng.uniform(0.1, 10.0) for _ in counts)
            jobs.append((i, Ladder(counts, speeds), rng.uniform(1.0, 1000.0)))
        target = {i: rng.choice([0, *jobs[i][1].counts]) for i in range(n)}
        fast_t, plain_t = dict(target), dict(target)
        assert (lend(jobs, fast_t, spare), fast_t) == (_plain_lend(jobs, plain_t, spare), plain_t)


@pytest.mark.parametrize("policy", ["elasticflow", "elasticflow-fixed"])
def test_family_runs_finish_every_admitted_job(policy):
    """Not a comparison: the fast paths still run every job of an ElasticFlow-shaped workload to its end or
    decline it."""
    wl = elasticflow_shaped_workload(30, nodes=2, gpus_per_node=4, seed=5)
    jobs = simulate(wl, scheduler=policy).jobs
    assert (jobs["completion_s"].notna() | jobs["admitted_s"].isna()).all()
