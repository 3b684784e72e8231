"""Invariants of every run, over random small workloads and policy compositions (hypothesis).

Checked from the per-job segments the engine records ((start, end, placement, iterations) per stint on GPUs):
no server over capacity at any instant; every job starts no earlier than its arrival and completes exactly once;
JCT >= its time alone on its placement; the work of all segments adds up to the job's iterations (work conserved
across preemptions) and every segment did exactly the work its length allows; the fast path (incremental
priority lists, skipped rounds) makes the same decisions as the naive one; same seed, same result.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.sim.shared_data import DEEPSHARE, needs_data

from optsched.cluster import Cluster, Server
from optsched.perf.constant import ConstantPerf
from optsched.sim import Workload, WorkloadJob, build_policy, simulate
from optsched.sim.base import Composed

SCHEDULERS = ["fifo", "las", "srtf", "tiresias", {"name": "tiresias", "thresholds_gpu_s": [20, 200]},
              {"name": "las", "service": "gpu"}, {"name": "srtf", "starvation_s": 150}]
PLACEMENTS = ["consolidated", "first-free", "scattered"]
ADMISSIONS = ["accept-all", "accept-1.0", "accept-1.2", "accept-1.4", "accept-1.5"]


@st.composite
def cases(draw):
    caps = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    cluster = Cluster(tuple(Server(f"s{i}", c) for i, c in enumerate(caps)))
    total = sum(caps)
    n = draw(st.integers(1, 7))
    jobs = []
    for i in range(n):
        jobs.append(WorkloadJob(
            f"j{i}", float(draw(st.sampled_from([0, 0, 5, 10, 30, 60, 100, 250, 333]))),
            draw(st.integers(1, total)), float(draw(st.integers(1, 120))),
            draw(st.sampled_from([0.5, 1.0, 1.5, 3.0])), tracked=draw(st.booleans()) or i == 0))
    placement = {"name": draw(st.sampled_from(PLACEMENTS)), "backfill": draw(st.booleans())}
    cfg = dict(scheduler=draw(st.sampled_from(SCHEDULERS)), placement=placement,
               admission=draw(st.sampled_from(ADMISSIONS)), mode=draw(st.sampled_from(["round", "event"])),
               round_s=float(draw(st.sampled_from([7, 50, 300]))), restore_s=float(draw(st.sampled_from([0, 4]))),
               perf=ConstantPerf(draw(st.sampled_from([1.0, 1.25, 2.0]))))
    return Workload(tuple(jobs)), cluster, cfg


def check_invariants(wl: Workload, cluster: Cluster, cfg: dict, r) -> None:
    perf = cfg["perf"]
    restore = cfg["restore_s"]
    cap = [s.gpus for s in cluster.servers]
    by_id = {j.id: j for j in r.job_objects}
    assert len(by_id) == len(wl)
    events = []
    for wj in wl:
        j = by_id[wj.id]
        # completes exactly once, after it started, which is no earlier than its arrival
        assert j.status == "done" and not math.isnan(j.completion_s)
        assert j.first_start_s >= wj.arrival_s and j.admitted_s >= wj.arrival_s
        assert j.segments and j.segments[0][0] == j.first_start_s and j.segments[-1][1] == j.completion_s
        assert j.launches == len(j.segments) and j.preemptions == len(j.segments) - 1
        # work conserved across preemptions
        assert sum(seg[3] for seg in j.segments) == pytest.approx(wj.iterations, rel=1e-9)
        lower = 0.0
        prev_end = -math.inf
        for k, (t0, t1, pl, it) in enumerate(j.segments):
            assert t0 >= prev_end and t1 >= t0  # segments do not overlap and go forward
            prev_end = t1
            assert pl.gpus == wj.gpus
            alone = perf.alone_time_s(j, pl)
            stall = restore if k > 0 else 0.0
            # each segment did exactly the work its length allows (constant model: no co-location effect)
            assert it == pytest.approx(max(0.0, t1 - t0 - stall) / alone, rel=1e-9, abs=1e-6)
            lower += it * alone
            if t1 == t0:
                # launched and preempted by the next decision at the same instant (SRTF may undo a launch when
                # a victim of the same instant outranks it): it held no GPU time, and ClusterState.occupy has
                # checked every decision's capacity as it was applied
                continue
            for s, c in zip(pl.servers, pl.counts):
                events.append((t0, 1, s, c))
                events.append((t1, 0, s, -c))  # at equal times releases (0) come before occupations (1)
        # JCT >= its time alone on its placement(s)
        assert j.completion_s - wj.arrival_s >= lower - 1e-6
        assert j.completion_s - wj.arrival_s >= wj.duration_alone_s - 1e-6  # consolidated is the fastest
    # no server over capacity at any instant
    used = [0] * len(cap)
    for _, _, s, c in sorted(events):
        used[s] += c
        assert 0 <= used[s] <= cap[s]
    ts = r.timeseries
    assert (ts["busy_gpus"] <= cluster.total_gpus).all() and (ts["busy_gpus"] >= 0).all()
    assert r.summary["avg_jct_s"] == pytest.approx(r.jobs.loc[r.jobs.tracked, "jct_s"].mean())


@settings(max_examples=60)
@given(cases())
def test_invariants(case):
    wl, cluster, cfg = case
    r = simulate(wl, cluster, **cfg)
    check_invariants(wl, cluster, cfg, r)
    if cfg["mode"] == "round":
        # decisions only at multiples of round_s (Composed never asks for a wake-up in round mode)
        for j in r.job_objects:
            for t0, *_ in j.segments:
                assert t0 / cfg["round_s"] == pytest.approx(round(t0 / cfg["round_s"]), abs=1e-9)


@settings(max_examples=40)
@given(cases())
def test_fast_path_equals_naive(case):
    wl, cluster, cfg = case
    fast = simulate(wl, cluster, **cfg)
    cfg = dict(cfg)
    sched = build_policy(cfg.pop("scheduler"), cfg.pop("placement"))
    naive = simulate(wl, cluster, scheduler=Composed(sched.scheduling, sched.placement, naive=True), **cfg)
    cols = ["first_start_s", "completion_s", "preemptions"]
    assert np.array_equal(fast.jobs[cols].to_numpy(), naive.jobs[cols].to_numpy())
    assert fast.summary["decisions"] <= naive.summary["decisions"]


@settings(max_examples=40)
@given(cases())
def test_walk_pruning_changes_nothing(case):
    # fit_by_size lets the placement walk skip jobs at least as large as one that did not fit; a copy of the
    # same placement without that promise asks find() for every job: the decisions must be identical.
    wl, cluster, cfg = case
    cfg = dict(cfg)
    pruned = build_policy(cfg.pop("scheduler"), cfg.pop("placement"))
    plain_pl = type(pruned.placement)(preemptive=pruned.placement.preemptive, backfill=pruned.placement.backfill)
    plain_pl.fit_by_size = False
    a = simulate(wl, cluster, scheduler=pruned, **cfg)
    b = simulate(wl, cluster, scheduler=Composed(pruned.scheduling.__class__(**_opts(pruned.scheduling)), plain_pl),
                 **cfg)
    cols = ["first_start_s", "completion_s", "preemptions"]
    assert np.array_equal(a.jobs[cols].to_numpy(), b.jobs[cols].to_numpy())


def _opts(sched) -> dict:
    d = sched.describe()
    d.pop("name")
    return d


@settings(max_examples=15)
@given(cases())
def test_same_seed_same_result(case):
    wl, cluster, cfg = case
    a = simulate(wl, cluster, seed=3, **cfg)
    b = simulate(wl, cluster, seed=3, **cfg)
    assert a.jobs.drop(columns=[]).equals(b.jobs)
    assert a.config["seed"] == 3


@settings(max_examples=30)
@given(cases())
def test_fifo_starts_in_arrival_order(case):
    # FIFO without backfilling and without bumps (no starvation threshold reached: 1000 h) starts jobs in
    # arrival order (ties: workload order), whatever the placement and admission (both FIFO too).
    wl, cluster, cfg = case
    cfg = {**cfg, "scheduler": "fifo", "placement": cfg["placement"]["name"]}
    r = simulate(wl, cluster, **cfg)
    df = r.jobs.assign(order=range(len(r.jobs))).sort_values(["arrival_s", "order"])
    assert df["first_start_s"].is_monotonic_increasing
    assert r.summary["preemptions"] == 0


@needs_data(*DEEPSHARE)
def test_measured_contention_model_invariants():
    # DeepShare's measured table: multi-server jobs sharing servers slow each other down; capacity, start and
    # completion invariants hold, and a job's JCT is at least its time alone.
    from optsched.perf.measured import MeasuredPerf

    perf = MeasuredPerf()
    models = ["MoE", "DLRM", "GraphSage", "FSDP"]
    rng = np.random.default_rng(0)
    wl = Workload(tuple(WorkloadJob(f"j{i}", float(rng.integers(0, 2000)), int(rng.choice([2, 4, 8])),
                                    float(rng.integers(2000, 20000)), 1.0, model=models[i % 4]) for i in range(12)))
    cl = Cluster.homogeneous(4, 4)
    runs = {}
    for placement in ("scattered", "first-free"):
        r = runs[placement] = simulate(wl, cl, scheduler="fifo", placement=placement, perf=perf, mode="event")
        assert r.jobs["completion_s"].notna().all()
        for j in r.job_objects:
            assert sum(seg[3] for seg in j.segments) == pytest.approx(j.iterations)
            assert j.completion_s - j.arrival_s >= j.iterations * min(perf.alone_time_s(j, seg[2])
                                                                      for seg in j.segments) - 1e-6
    # contention happens under scattered placement: some split job ran slower than alone at some point
    slowed = [j for j in runs["scattered"].job_objects
              if any(seg[1] - seg[0] > seg[3] * perf.alone_time_s(j, seg[2]) * (1 + 1e-9) for seg in j.segments)]
    assert slowed
