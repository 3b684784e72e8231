"""Issue 29's fast paths of the deadline family give the results of the straightforward computation, bit for bit:
Themis's decision that reads the waiting jobs only as far as the GPUs go (against a reference subclass that
sorts and prices every waiting job at every decision, as before the speed-up), the lazy finish-time-fair split
against the eager one, and the leftover loops of ElasticFlow and of its fixed-reservation variant against plain
heaps that rescan each next step, and the placement helpers (fragments first, grow, shrink) against reading every
server one by one; the third pass: the fixed variant's runs of unit steps over speed tables shared by the ring
model's jobs of one profile, ElasticFlow's plan with its per-free-GPU tables, gandiva-ts's decision and
ElasticFlow's whole decision (kept order, apply_targets over the changed jobs) against the plain ones. Small random
workloads, contended and not; per-job tables compared exactly."""

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
from optsched.sim.deadline.elasticflow import (
    EDFAdmission,
    EDFElastic,
    EDFWithAdmission,
    ElasticFlow,
    ElasticFlowAdmission,
    GandivaTimeSlicing,
    Ladder,
    ladder_of,
    lend,
)
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


def _dipping_jobs(rng, n, max_gpus):
    """``n`` random jobs' (exponent, dip count, largest count) and their ``JobTimes``: speed ``1 / g**e`` with a
    30 % dip at one count (the shape the leftover loops must handle: a speed that dips and recovers)."""
    shape = {i: (rng.uniform(0.2, 1.0), rng.choice([3, 5, 64]), rng.randint(1, max_gpus)) for i in range(n)}
    times = {i: JobTimes(lambda g, c, e=shape[i]: 1.0 / (g ** e[0]) * (1.3 if g == e[1] else 1.0), 100.0,
                         shape[i][2]) for i in range(n)}
    return shape, times


def test_leftover_loops_are_the_plain_ones():
    rng = random.Random(3)
    for _ in range(200):
        n, spare = rng.randint(1, 8), rng.randint(0, 40)
        # fixed variant: a memo shared across calls (as across decisions), jobs whose speed dips and recovers
        shape, memo = _dipping_jobs(rng, n, 16)
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


# -- issue 29, third pass: shared speed tables, unit-step runs, the plan's tables, gandiva-ts, apply_targets -------
def _curve(kind, rng):
    """Seconds per unit of work on g GPUs (cross: across nodes) of a few shapes: ring-like (gains per added GPU
    that grow), concave (gains that fall), flat stretches, a dip (a count slower than the one before)."""
    a, c, e = rng.uniform(0.01, 0.5), rng.uniform(0.0, 0.3), rng.uniform(0.3, 0.9)
    dip = rng.randint(2, 40)
    if kind == "ring":
        return lambda g, cross: (a + (2.0 * (g - 1) / g * c * (1.5 if cross else 1.0))) / g
    if kind == "concave":
        return lambda g, cross: a / g ** e
    if kind == "flat":
        return lambda g, cross: a / min(g, dip)
    return lambda g, cross: a / g * (1.4 if g % dip == 0 else 1.0)


def test_leftover_unit_step_runs_are_the_plain_ones():
    """The fixed variant's leftovers with speed tables shared by the jobs of one speed function (as the ring
    model's jobs of one (T_cal, params) share them): runs of unit steps taken at once give the plain loop's
    counts, on curves whose gains grow, fall, stay flat or dip, with spares up to a few hundred GPUs."""
    rng = random.Random(29)
    for _ in range(120):
        kinds = [rng.choice(["ring", "concave", "flat", "dip"]) for _ in range(rng.randint(1, 3))]
        curves = [_curve(k, rng) for k in kinds]
        shared = [({}, {}, []) for _ in curves]  # one speed cache, step memo and unit-step table per curve
        n = rng.randint(1, 7)
        which = [rng.randrange(len(curves)) for _ in range(n)]
        caps = [rng.choice([1 << 30, rng.randint(1, 300)]) for _ in range(n)]
        for _rep in range(3):  # the tables persist across calls, as across decisions
            spare = rng.randint(0, 400)
            target = {i: rng.randint(1, min(caps[i], 60)) for i in range(n)}
            work = {i: rng.uniform(1.0, 500.0) for i in range(n)}
            times = {}
            for i in range(n):
                jt = JobTimes(curves[which[i]], work[i], caps[i])
                jt._cache, jt.steps, jt.runs = shared[which[i]]
                times[i] = jt
            fast_t, plain_t = dict(target), dict(target)
            fast = leftovers(times, fast_t, spare)
            fresh = {i: JobTimes(curves[which[i]], work[i], caps[i]) for i in range(n)}
            assert (fast, fast_t) == (_plain_leftovers(fresh, plain_t, spare), plain_t)


def test_ring_jobs_share_one_speed_table():
    """Under the ring model, jobs of one (T_cal, params) share their speeds (the same floats as asking the model);
    another model, or a subclass of the ring model, keeps a table per job."""
    from types import SimpleNamespace as NS

    from optsched.perf.ring import RingPerf
    from optsched.problems.deadline import DeadlineJob
    from optsched.sim.deadline.common import hypothetical

    perf = RingPerf()

    def job(jid, model):
        return NS(id=jid, spec=DeadlineJob(jid, model, 0.0, 1.0, epochs=1), remaining_iterations=lambda now: 10.0)

    a, b, c = (JobTimes.of(job(k, m), perf, 0.0) for k, m in (("a", "ResNet-50"), ("b", "ResNet-50"), ("c", "TSN")))
    assert a._cache is b._cache and a.steps is b.steps and a._cache is not c._cache
    for g in (1, 2, 3, 7, 64):
        for cross in (False, True):
            assert b.batch_time(g, cross) == perf.alone_time_s(job("b", "ResNet-50"), hypothetical(g, cross))

    class Ring2(RingPerf):
        pass

    d, e = (JobTimes.of(job(k, "ResNet-50"), Ring2(), 0.0) for k in "de")
    assert d._cache is not e._cache and d.runs is None


def test_ladder_tables_are_its_bisects():
    rng = random.Random(5)
    for _ in range(200):
        counts = sorted(rng.sample(range(1, 40), rng.randint(1, 6)))
        lad = Ladder(counts, sorted(rng.uniform(0.1, 9.0) for _ in counts))
        n = rng.randint(0, 50)
        cnt, spd = lad.by_free(n)
        for f in range(n + 1):
            i = lad.best_upto(f)
            assert (cnt[f], spd[f]) == ((counts[i], lad.speeds[i]) if i >= 0 else (0, 0.0))


def _plain_plan_jobs(jobs, now, total, share="min"):
    """ElasticFlow's plan before the tables: the interval ends copied per call, a bisect per interval."""
    import bisect

    from optsched.problems.deadline import DEADLINE_TOL_S

    def finish(lad, k, work, times, free, limit):
        counts, speeds = lad.counts, lad.speeds
        cap, top = counts[k], speeds[k]
        ends = times[1:] + [math.inf]
        for t0, end, f in zip(times, ends, free):
            if t0 > limit:
                break
            if f >= cap:
                s = top
            else:
                i = bisect.bisect_right(counts, f) - 1
                if i < 0:
                    continue
                s = speeds[i]
            t = t0 + work / s
            if t <= end:
                return t
            work -= s * (end - t0)
        return math.inf

    def take(lad, k, fin, times, free):
        if fin < math.inf:
            m = bisect.bisect_right(times, fin) - 1
            if times[m] < fin and (m + 1 == len(times) or times[m + 1] > fin):
                times.insert(m + 1, fin)
                free.insert(m + 1, free[m])
        counts, cap = lad.counts, lad.counts[k]
        now_count, change = -1, math.inf
        for m, t in enumerate(times):
            if t >= fin:
                if change == math.inf and now_count > 0:
                    change = t
                break
            f = free[m]
            i = bisect.bisect_right(counts, min(f, cap)) - 1
            c = counts[i] if i >= 0 else 0
            if now_count < 0:
                now_count = c
            elif c != now_count and change == math.inf:
                change = t
            free[m] = f - c
        return max(now_count, 0), change

    times, free, plans, failed = [now], [total], {}, []
    for key, lad, work, deadline in jobs:
        limit = deadline + DEADLINE_TOL_S
        ks = [len(lad.counts) - 1] if share == "max" else range(len(lad.counts))
        best = next(((k, f) for k in ks if (f := finish(lad, k, work, times, free, limit)) <= limit), None)
        if not lad.counts or best is None:
            failed.append(key)
            continue
        plans[key] = take(lad, best[0], best[1], times, free)
    return plans, failed


def _random_plan_jobs(rng: random.Random) -> tuple[int, list]:
    """A random cluster size and 1-25 plan entries (key, ladder, work, deadline), unsorted; about 5 % of the jobs
    have no work left (they end at once)."""
    total = rng.choice([4, 16, 64, 2000])
    jobs = []
    for i in range(rng.randint(1, 25)):
        counts = sorted(rng.sample([1, 2, 3, 4, 8, 16, 32, 64, 512, 1024], rng.randint(1, 5)))
        speeds = sorted(rng.uniform(0.1, 50.0) for _ in counts)
        work = 0.0 if rng.random() < 0.05 else rng.uniform(1.0, 5000.0)
        jobs.append((i, Ladder(counts, speeds), work, rng.uniform(10.0, 3000.0)))
    return total, jobs


def test_plan_is_the_plain_one():
    """The plan with its tables and kept interval ends gives the plain plan's counts, change times and
    infeasible jobs, bit for bit (the smallest feasible share found by a scan of every share)."""
    from optsched.sim.deadline.elasticflow import plan_jobs

    rng = random.Random(17)
    for _ in range(300):
        total, jobs = _random_plan_jobs(rng)
        jobs.sort(key=lambda x: x[3])
        now = rng.uniform(0.0, 5.0) if rng.random() < 0.7 else rng.uniform(0.0, 400.0)  # some deadlines past
        for share in ("min", "max"):
            assert plan_jobs(jobs, now, total, share) == _plain_plan_jobs(jobs, now, total, share)


class PlainGandiva(GandivaTimeSlicing):
    """gandiva-ts's decision before the speed-up: a key function over every active job, the whole walk, a
    builder at every decision."""

    def decide(self, view):
        from optsched.problems.deadline import DEADLINE_TOL_S
        from optsched.sim.deadline.common import deadline_of

        now, q, since = view.now, self.quantum_s, self._since
        active = list(view.jobs.active.values())
        for j in active:
            since.setdefault(j.id, j.arrival_s)
        waiting = any(j.status == QUEUED for j in active)

        def key(j):
            if j.status == RUNNING:
                if not waiting or now - since[j.id] < q - DEADLINE_TOL_S:
                    return (0, since[j.id], deadline_of(j), j.index)
                return (1, since[j.id] + q, deadline_of(j), j.index)
            return (1, since[j.id], deadline_of(j), j.index)

        free, keep = view.cluster.total_gpus, []
        for j in sorted(active, key=key):
            if j.gpus <= free:
                keep.append(j)
                free -= j.gpus
        b, wake, kept = DecisionBuilder(view), math.inf, set(keep)
        for j in active:
            if j.status == RUNNING and j not in kept:
                b.preempt(j)
                since[j.id] = now
        for j in keep:
            if j.status == QUEUED:
                pl = place(b.free, j.gpus)
                if pl is None:
                    continue
                b.launch(j, Placement.of(pl))
                since[j.id] = now
                wake = min(wake, now + q)
            else:
                wake = min(wake, since[j.id] + q)
        self._wake = wake
        return b.build()


def test_gandiva_fast_decision_is_the_plain_one():
    wls = [deadline_workload(lam, h, nodes=n, gpus_per_node=4, seed=s)
           for lam, h, n, s in ((2.0, 12.0, 2, 0), (6.0, 5.0, 2, 1), (8.0, 10.0, 4, 3))]  # the last two: queues
    for wl in wls:
        a, b = (simulate(wl, scheduler=p()).jobs for p in (GandivaTimeSlicing, PlainGandiva))
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_gandiva_all_fit_starts_the_waiting_jobs_in_the_walks_order():
    """Jobs arriving together that all fit at once (``_all_fit``): the order they start in decides who gets one
    node and who is split across two (slower under the ring model), so the per-job tables show it."""
    from optsched.problems.deadline import DeadlineJob, DeadlineWorkload, paper_cluster

    jobs = [DeadlineJob(i, "ResNet-50", t, alpha=a, epochs=0.3, gpus=g) for i, t, a, g in
            (("a", 0.0, 0.5, 3), ("b", 0.0, 1.0, 3), ("c", 0.0, 1.5, 1), ("d", 0.0, 1.5, 1),
             ("e", 9000.0, 0.5, 1), ("f", 9000.0, 1.0, 1), ("g", 9000.0, 1.5, 3), ("h", 9000.0, 1.5, 3))]
    wl = DeadlineWorkload(paper_cluster(2, 4), tuple(jobs))
    runs = [simulate(wl, scheduler=p()) for p in (GandivaTimeSlicing, PlainGandiva)]
    pd.testing.assert_frame_equal(runs[0].jobs, runs[1].jobs, check_exact=True)
    assert runs[0].jobs["completion_s"].notna().all()


def _plain_apply_targets(view, target):
    """apply_targets before the speed-up: every running job walked and sorted, Placement.of throughout."""
    from optsched.sim.deadline.common import deadline_of, grow, shrink

    running = [j for j in target if j.status == RUNNING]
    if all(target[j] == j.held_gpus for j in running) and not any(
            g > 0 and j.status == QUEUED for j, g in target.items()):
        return Decision()
    b = DecisionBuilder(view, elastic=True)
    for j in running:
        if target[j] == 0:
            b.preempt(j)
        elif target[j] < j.placement.gpus:
            b.migrate(j, Placement.of(shrink(j.placement, target[j])))
    for j in sorted(running, key=lambda j: -target[j]):
        if target[j] > j.placement.gpus:
            b.migrate(j, Placement.of(grow(j.placement, target[j], b.free)))
    for j in sorted((j for j in target if j.status == QUEUED and target[j] > 0),
                    key=lambda j: (-target[j], deadline_of(j), j.index)):
        b.launch(j, Placement.of(place(b.free, target[j])))
    return b.build()


class PlainElasticFlow(ElasticFlow):
    """ElasticFlow's decision before the speed-up: every active job sorted at every decision, the plain plan
    (a scan of every share), the plain lend and apply_targets; no plan reused from the admission."""

    def on_admit(self, jobs, view):
        pass

    def on_completion(self, job, view):
        self._ladders.pop(job.id, None)

    def decide(self, view):
        from optsched.problems.deadline import DEADLINE_TOL_S
        from optsched.sim.deadline.common import deadline_of

        now, total = view.now, view.cluster.total_gpus
        order = sorted(view.jobs.active.values(), key=deadline_order)
        ending = {j: j.held_gpus for j in order if j.status == RUNNING and j.finish_time() <= now + DEADLINE_TOL_S}
        total -= sum(ending.values())
        entries = [(j, ladder_of(j, view, self._ladders), j.remaining_iterations(now)) for j in order
                   if j not in ending]
        plans, _ = _plain_plan_jobs([(j, lad, w, deadline_of(j)) for j, lad, w in entries
                                     if math.isfinite(deadline_of(j))], now, total)
        target = {j: plans[j][0] if j in plans else 0 for j, *_ in entries}
        self._wake = min((p[1] for p in plans.values()), default=math.inf)
        _plain_lend(entries, target, total - sum(target.values()))
        target.update(ending)
        return _plain_apply_targets(view, target)


def test_elasticflow_decision_is_the_plain_one():
    """ElasticFlow (no admission: the scheduler plans every job itself) and the elastic EDF's apply_targets
    against the plain computation, on small and larger clusters (jobs spanning many nodes)."""
    from optsched.sim.deadline.elasticflow import ElasticFlowNoAdmission

    class PlainNoAdmit(PlainElasticFlow):
        default_admission = "accept-all"

    wls = [*_workloads(), deadline_workload(40.0, 1.5, nodes=32, gpus_per_node=4, seed=6),
           elasticflow_shaped_workload(50, nodes=8, gpus_per_node=4, seed=3, load=4.0)]
    for wl in wls:
        a, b = (simulate(wl, scheduler=p()).jobs for p in (ElasticFlowNoAdmission, PlainNoAdmit))
        pd.testing.assert_frame_equal(a, b, check_exact=True)


class PlainAdmission(ElasticFlowAdmission):
    """ElasticFlow's admission the plain way: the admitted jobs sorted, every trial's entries read afresh, the
    plain plan (a scan of every share), no plan left for the scheduler."""

    def admit(self, new_jobs, view):
        from optsched.sim.deadline.common import deadline_of

        now, total = view.now, view.cluster.total_gpus
        admitted = sorted((j for j in view.jobs.active.values() if math.isfinite(deadline_of(j))),
                          key=deadline_order)

        def entries(jobs):
            return [(j.id, ladder_of(j, view, self.ladders), j.remaining_iterations(now), deadline_of(j))
                    for j in jobs]

        out = []
        for j in sorted(new_jobs, key=lambda j: (j.arrival_s, j.index)):
            if not math.isfinite(deadline_of(j)):
                out.append(j)
                continue
            trial = sorted([*admitted, j], key=deadline_order)
            plans, failed = _plain_plan_jobs(entries(trial), now, total, self.share)
            ok = j.id in plans
            if ok and failed:
                before, _ = _plain_plan_jobs(entries(admitted), now, total, self.share)
                ok = set(before) <= set(plans)
            if ok:
                admitted = trial
                out.append(j)
            else:
                self.declined.append(j.id)
        self.last_plan = None
        return out


@pytest.mark.parametrize("share", ["min", "max"])
def test_admission_and_its_reused_plan_are_the_plain_ones(share):
    """ElasticFlow's admission (the admitted jobs' entries read once per arrival, the new job's inserted) and
    the scheduler's reuse of its plan and entries at the same instant, against the plain admission and the
    plain scheduler (no reuse), on workloads that decline jobs, with best-effort jobs among them; ``max``: EDF's
    admission in front of the elastic EDF."""
    wls = [*_workloads(), deadline_workload(40.0, 1.5, nodes=32, gpus_per_node=4, seed=6),
           elasticflow_shaped_workload(60, nodes=4, gpus_per_node=4, seed=3, load=4.0, best_effort_share=0.2),
           elasticflow_shaped_workload(60, nodes=8, gpus_per_node=4, seed=4, load=6.0, best_effort_share=0.3)]
    declined = 0
    for wl in wls:
        if share == "min":
            fast = simulate(wl, scheduler=ElasticFlow(), admission=ElasticFlowAdmission())
            plain = simulate(wl, scheduler=PlainElasticFlow(), admission=PlainAdmission())
        else:
            fast = simulate(wl, scheduler=EDFWithAdmission(), admission=EDFAdmission())
            plain = simulate(wl, scheduler=EDFWithAdmission(), admission=PlainAdmission("max"))
        assert fast.admission.declined == plain.admission.declined
        declined += len(plain.admission.declined)
        pd.testing.assert_frame_equal(fast.jobs, plain.jobs, check_exact=True)
    assert declined > 0  # the comparison covers declines


def _near_end_instances(seed, n=300):
    """Plans on large clusters (every share fits: ``_plan_fit`` decides) whose last job's deadline is set at its
    end as ``plan_jobs`` walks it, one ulp either side, or at the one-division end: the comparisons the bound
    must decide."""
    from optsched.problems.deadline import DEADLINE_TOL_S
    from optsched.sim.deadline.elasticflow import plan_jobs

    rng = random.Random(seed)
    out = []
    for _ in range(n):
        total = rng.choice([512, 2000])
        now = rng.choice([0.0, rng.uniform(0.0, 1e5)])
        jobs = []
        for i in range(rng.randint(2, 40)):
            counts = sorted(rng.sample([1, 2, 4, 8, 16], rng.randint(1, 4)))
            speeds = sorted(rng.uniform(0.1, 7.0) for _ in counts)
            work = rng.choice([rng.uniform(1.0, 5e4), float(rng.randint(1, 9) * 100)])
            jobs.append((i, Ladder(counts, speeds), work, now + rng.uniform(50.0, 3e4)))
        jobs.sort(key=lambda x: x[3])
        key, lad, work, _ = jobs[-1]
        for share in ("min", "max"):
            k = 0 if share == "min" else len(lad.counts) - 1
            plans, _ = plan_jobs(jobs[:-1] + [(key, lad, work, math.inf)], now, total, share)
            fin = plans[key][1] if key in plans and plans[key][1] < math.inf else now + work / lad.speeds[k]
            for end in (fin, math.nextafter(fin, math.inf), math.nextafter(fin, -math.inf),
                        now + work / lad.speeds[k]):
                out.append((jobs[:-1] + [(key, lad, work, end - DEADLINE_TOL_S)], now, total, share))
    return out


def test_plan_now_is_plan_jobs():
    """``plan_now`` (the counts now, the infeasible jobs, the earliest change) against ``plan_jobs``, bit for bit:
    on the random plans of ``test_plan_is_the_plain_one`` and on large clusters where every share fits and a
    deadline sits at a planned end to the ulp; the bound is needed: without it (0) the one-division end decides
    some of those comparisons wrongly, and the fast path must have decided most of the large plans."""
    from optsched.sim.deadline import elasticflow as ef

    def expected(jobs, now, total, share):
        plans, failed = ef.plan_jobs(jobs, now, total, share)
        return ({k: p[0] for k, p in plans.items()}, failed, min((p[1] for p in plans.values()), default=math.inf))

    rng = random.Random(23)
    cases = _near_end_instances(29)
    for _ in range(300):
        total, jobs = _random_plan_jobs(rng)
        jobs.sort(key=lambda x: x[3])
        now = rng.uniform(0.0, 5.0) if rng.random() < 0.7 else rng.uniform(0.0, 400.0)
        cases += [(jobs, now, total, s) for s in ("min", "max")]
    for case in cases:
        assert ef.plan_now(*case) == expected(*case)
    near = _near_end_instances(29)  # without the job whose deadline is at its end: the fast path decides
    assert sum(ef._plan_fit(c[0][:-1], *c[1:]) is not None for c in near) > 0.9 * len(near)
    drift = ef._DRIFT
    try:
        ef._DRIFT = 0.0
        assert any(ef.plan_now(*case) != expected(*case) for case in cases)
    finally:
        ef._DRIFT = drift



def test_grow_and_shrink_keep_the_moves_moved_gpus():
    """The per-server GPUs ``grow`` and ``shrink`` hand to ``DecisionBuilder.migrate`` (which takes them as they
    are, in place of ``moved_gpus``) are ``moved_gpus`` of the move they build, on small and large clusters."""
    import numpy as np

    from optsched.sim.deadline.common import grow, placement_of, shrink
    from optsched.sim.state import moved_gpus

    rng = random.Random(29)
    for _ in range(400):
        nodes = rng.choice([3, 8, 70, 200])
        free = np.array([rng.choice([0, 0, 1, 2, 3, 4]) for _ in range(nodes)], dtype=np.int64)
        pl = Placement.of({s: rng.randint(1, 4) for s in rng.sample(range(nodes), rng.randint(1, min(nodes, 40)))})
        gone: dict[int, int] = {}
        new = placement_of(shrink(pl, rng.randint(1, pl.gpus), gone))
        assert gone == moved_gpus(pl, new, nodes)
        added: dict[int, int] = {}
        got = grow(pl, pl.gpus + rng.randint(1, int(free.sum()) + 1), free, added)
        if got is not None:
            assert added == moved_gpus(pl, placement_of(got), nodes)


# -- issue 29, ninth pass: placements built from the move, lend by position --------------------------------------
def test_grown_and_shrunk_are_the_plain_placements():
    """``grown`` and ``shrunk`` build their placements without a dict or a sort (``Placement._of_sorted``): equal,
    field by field, to ``Placement.of`` of the plain walks, with Python ints and the right GPU count, on small and
    large clusters, on placements holding many servers, and on a placement whose servers are not ascending."""
    import numpy as np

    from optsched.sim.deadline.common import grown, shrunk

    rng = random.Random(929)
    for _ in range(500):
        nodes = rng.choice([3, 8, 70, 200, 500])
        free = np.array([rng.choice([0, 0, 1, 2, 3, 4]) for _ in range(nodes)], dtype=np.int64)
        held = {s: rng.randint(1, 4) for s in rng.sample(range(nodes), rng.randint(1, min(nodes, 60)))}
        pl = Placement.of(held)
        n_down = rng.randint(0, pl.gpus + 1)
        got = shrunk(pl, n_down)
        want = Placement.of(_plain_shrink(pl, n_down))
        assert (got.servers, got.counts, got.stages, got.gpus) == (want.servers, want.counts, None, want.gpus)
        assert all(type(x) is int for x in got.servers + got.counts)
        n_up = pl.gpus + rng.randint(0, int(free.sum()) + 2)
        got_up, plain = grown(pl, n_up, free), _plain_grow(pl, n_up, free)
        if plain is None:
            assert got_up is None
        else:
            assert got_up is not None
            want = Placement.of(plain)
            assert (got_up.servers, got_up.counts, got_up.stages, got_up.gpus) == (want.servers, want.counts, None,
                                                                                    want.gpus)
            assert all(type(x) is int for x in got_up.servers + got_up.counts)
    odd = Placement((5, 1, 3), (1, 4, 2))  # not ascending: shrink reads its pairs, not its order
    assert shrunk(odd, 4) == Placement.of(_plain_shrink(odd, 4)) == Placement.of({1: 4})
    assert Placement._of_sorted((7,), (3,), 3) is Placement.one(7, 3)


def test_apply_targets_starts_jobs_where_place_puts_them():
    """A waiting job asking more GPUs than any server holds skips the single-node search (no server can hold it):
    on clusters of unequal servers every start lands where ``place`` puts it, one node whenever one fits."""
    from optsched.cluster import parse_cluster
    from optsched.sim.base import DecisionBuilder
    from optsched.sim.deadline.common import place, placement_of
    from optsched.sim.deadline.elasticflow_fixed import apply_targets
    from optsched.sim.state import QUEUED, ClusterState, Job, JobState, SimView

    rng = random.Random(7)
    for _ in range(60):
        spec = rng.choice(["V100:3x2,K80:1x8", "V100:2x8,K80:5x2", "V100:4x4", "V100:1x1,K80:2x6,P100:1x3"])
        cs = ClusterState(parse_cluster(spec))
        jobs = JobState()
        target = {}
        for k in range(rng.randint(1, 4)):
            j = Job(f"j{k}", 0.0, 1, 10.0, 1.0, deadline_s=100.0 + k)
            j.status = QUEUED
            jobs.add(j)
            target[j] = rng.randint(1, cs.total_gpus // 2)
        view = SimView(0.0, cs, jobs, None)
        got = apply_targets(view, target).launch
        b = DecisionBuilder(view, elastic=True)  # the same starts, each placed by ``place``
        for j in sorted(target, key=lambda j: (-target[j], j.deadline_s, j.index)):
            pl = place(b.free, target[j])
            if pl is not None:
                b.launch(j, placement_of(pl))
        assert got == b.build().launch


def test_leftovers_read_the_speeds_only():
    """The fixed variant's scheduler hands ``leftovers`` each job's times as cached, whatever work they were made
    with (it no longer rebuilds them with the work left): the steps read the speeds only, so any work gives the
    same counts."""
    rng = random.Random(41)
    for _ in range(150):
        n, spare = rng.randint(1, 6), rng.randint(0, 60)
        shape, base = _dipping_jobs(rng, n, 24)
        target = {i: rng.randint(1, shape[i][2]) for i in range(n)}
        outs = []
        for works in (dict.fromkeys(range(n), 100.0), {i: rng.uniform(1e-3, 1e6) for i in range(n)}):
            t = dict(target)
            outs.append((leftovers({i: base[i].with_work(works[i]) for i in range(n)}, t, spare), t))
        assert outs[0] == outs[1]


# -- issue 29, session 11: lend's steps in one sort ------------------------------------------------------------------
def test_lend_sorted_is_the_heap_on_many_jobs():
    """lend from ``_LEND_SORTED_FROM`` jobs on (one numpy sort of every step) against the plain heap, on many jobs
    sharing a few ladders: equal speeds and works (ties between jobs), savings that rise along a ladder (a later
    step beating an earlier one), jobs with no work left, holding none or a ladder count, GPUs that run out."""
    from optsched.sim.deadline.elasticflow import _LEND_SORTED_FROM, _lend_sorted

    rng = random.Random(11)
    sorted_runs = 0
    for _ in range(400):
        lads = []
        for _l in range(rng.randint(1, 4)):
            pool = rng.choice([[1, 2, 4, 8, 16, 32, 64], [1, 2, 3, 4, 6, 8, 16], [1, 2, 4, 8]])
            counts = sorted(rng.sample(pool, rng.randint(2, len(pool))))
            if rng.random() < 0.5:
                speeds = sorted(rng.uniform(0.1, 10.0) for _ in counts)
            else:  # small integers: equal savings across jobs and steps
                speeds = [float(x) for x in sorted(rng.sample(range(1, 30), len(counts)))]
            lads.append(Ladder(counts, speeds))
        n = rng.randint(_LEND_SORTED_FROM, 60)
        jobs = [(i, rng.choice(lads), rng.choice([0.0, 50.0, 100.0, rng.uniform(0.0, 1000.0)])) for i in range(n)]
        target = {i: rng.choice([0, 0, *lad.counts]) for i, lad, _ in jobs}
        spare = rng.randint(1, 400)
        fast_t, plain_t, sorted_t = dict(target), dict(target), dict(target)
        assert (lend(jobs, fast_t, spare), fast_t) == (_plain_lend(jobs, plain_t, spare), plain_t)
        left = _lend_sorted(jobs, sorted_t, spare)
        if left is not None:
            sorted_runs += 1
            assert (left, sorted_t) == (_plain_lend(jobs, dict(target), spare), plain_t)
    assert sorted_runs > 300  # (the sort ran: not every instance fell back to the heap)
