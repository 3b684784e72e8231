"""Issue 29's fast paths of the deadline family give the results of the straightforward computation, bit for bit:
Themis's decision that reads the waiting jobs only as far as the GPUs go (against a reference subclass that
sorts and prices every waiting job at every decision, as before the speed-up), the lazy finish-time-fair split
against the eager one, and the leftover loops of ElasticFlow and of its fixed-reservation variant against plain
heaps that rescan each next step, and the placement helpers (fragments first, grow, shrink) against reading every
server one by one. Small random workloads, contended and not; per-job tables compared exactly."""

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


def _plain_ordered(free, g, order):
    """Fragments-first / most-free-first before the speed-up: every server of ``order`` read one by one."""
    out, need = {}, int(g)
    for s in order:
        f = int(free[s])
        if f <= 0:
            continue
        take = f if f < need else need
        out[int(s)] = take
        need -= take
        if need == 0:
            return out
    return None


def _plain_shrink(pl, n):
    held = dict(zip(pl.servers, pl.counts))
    drop = pl.gpus - n
    for s in sorted(held, key=lambda s: (held[s], -s)):
        if drop <= 0:
            break
        k = min(held[s], drop)
        held[s] -= k
        drop -= k
    return {s: c for s, c in held.items() if c}


def _plain_grow(pl, n, free):
    held = dict(zip(pl.servers, pl.counts))
    need = n - pl.gpus
    for s in sorted(held, key=lambda s: (-held[s], s)):
        k = min(int(free[s]), need)
        held[s] += k
        need -= k
    if need > 0:
        fl = [int(x) for x in free]
        for s in sorted((s for s in range(len(fl)) if fl[s] > 0), key=fl.__getitem__):
            if s in held:
                continue
            k = min(fl[s], need)
            held[s] = held.get(s, 0) + k
            need -= k
            if need == 0:
                break
    return None if need > 0 else {s: c for s, c in held.items() if c}


def test_placement_helpers_are_the_plain_ones():
    """fragments-first, most-free-first, grow and shrink (the deadline family's placements) give the placements
    of reading every server one by one, on small and large clusters (numpy's path above 64 nodes)."""
    import numpy as np

    from optsched.sim.deadline.common import grow, shrink
    from optsched.sim.fitting import fragments_first, most_free_first

    rng = random.Random(11)
    for _ in range(400):
        nodes = rng.choice([1, 3, 8, 70, 200])
        free = np.array([rng.choice([0, 0, 1, 2, 3, 4]) for _ in range(nodes)], dtype=np.int64)
        g = rng.randint(1, int(free.sum()) + 2)
        assert fragments_first(free, g) == _plain_ordered(free, g, np.argsort(free, kind="stable"))
        assert most_free_first(free, g) == _plain_ordered(free, g, np.argsort(-free, kind="stable"))
        assert fragments_first(free.tolist(), g) == fragments_first(free, g)
        held = {s: rng.randint(1, 4) for s in rng.sample(range(nodes), rng.randint(1, min(nodes, 6)))}
        pl = Placement.of(held)
        n_down = rng.randint(1, pl.gpus)
        assert shrink(pl, n_down) == _plain_shrink(pl, n_down)
        n_up = pl.gpus + rng.randint(1, int(free.sum()) + 2)
        assert grow(pl, n_up, free) == _plain_grow(pl, n_up, free)
