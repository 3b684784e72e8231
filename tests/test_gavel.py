"""Gavel's allocation LPs (GLOP vs HiGHS through PuLP, and closed forms on tiny instances), their realisation
round by round (achieved time fractions converge to the LP's), and Optimus's marginal-gain allocation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched.cluster import parse_cluster
from optsched.errors import InstanceError
from optsched.generators.workload import synthetic_workload
from optsched.perf.hetero import HeteroPerf
from optsched.sim import Workload, WorkloadJob, simulate
from optsched.sim.hetero import (
    Gavel,
    GavelMakespan,
    equal_share_throughput,
    finish_time_fairness,
    max_min_fairness,
    min_makespan,
)
from optsched.sim.optimus import marginal_gain_allocation

MODELS = ["ResNet-50/ImageNet", "A3C/Pong", "LSTM/WikiText-2", "Transformer/Multi30K"]


def _instance(rng: np.random.Generator, m: int, k: int):
    T = rng.uniform(0.1, 5.0, (m, k)) * (rng.random((m, k)) < 0.85)
    T[np.arange(m), rng.integers(0, k, m)] = rng.uniform(0.1, 5.0, m)  # every job runs somewhere
    z = rng.choice([1, 1, 2, 4], m)
    N = rng.choice([2, 4, 8], k)
    N[rng.integers(0, k)] = 8  # every job fits on some type (a job never spans types)
    T[:, N == 8] = np.maximum(T[:, N == 8], 0.05)
    return T, z, N


def _check_feasible(a, T, z, N):
    x = a.x
    assert np.all(x >= -1e-9) and np.all(x <= 1 + 1e-9)
    assert np.all(x.sum(axis=1) <= 1 + 1e-7)
    assert np.all((z[:, None] * x).sum(axis=0) <= N + 1e-6)
    assert np.all(x[(T == 0) | (z[:, None] > N[None, :])] <= 1e-9)


# -- the max-min LP -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("a", [1.0, 1.5, 4.0, 10.0])
def test_max_min_closed_form_two_jobs_two_types(a):
    # each job a times faster on "its" type, one GPU of each: equal share (a + 1) / 2, optimum a
    T = np.array([[a, 1.0], [1.0, a]])
    z, N = np.array([1, 1]), np.array([1, 1])
    assert equal_share_throughput(T, z, N).tolist() == [(a + 1) / 2] * 2
    for solver in ("glop", "highs"):
        assert max_min_fairness(T, z, N, solver=solver).value == pytest.approx(2 * a / (a + 1), rel=1e-7)


def test_max_min_closed_form_one_type():
    # identical one-GPU jobs on N GPUs of one type: every job gets min(1, N/M) of the time, t* = 1 (the equal share)
    for m, n in ((3, 2), (5, 5), (2, 6)):
        a = max_min_fairness(np.ones((m, 1)), np.ones(m), np.array([n]))
        assert a.value == pytest.approx(1.0)
        assert np.allclose(a.x[:, 0], min(1.0, n / m))


@pytest.mark.parametrize("seed", range(6))
def test_max_min_glop_equals_highs_and_aggregation_is_exact(seed):
    rng = np.random.default_rng(seed)
    T, z, N = _instance(rng, int(rng.integers(2, 7)), int(rng.integers(1, 4)))
    T = np.vstack([T, T[:2]])  # identical jobs, for the aggregation
    z = np.concatenate([z, z[:2]])
    glop = max_min_fairness(T, z, N)
    highs = max_min_fairness(T, z, N, solver="highs", aggregate=False)
    assert glop.value == pytest.approx(highs.value, rel=1e-6)
    assert glop.rows < len(T)  # the two copies share a row
    for a in (glop, highs):
        _check_feasible(a, T, z, N)
        # the reported optimum is achieved by the allocation itself
        teq = equal_share_throughput(T, z, N)
        live = teq > 0
        assert np.min(a.throughputs(T)[live] / teq[live]) == pytest.approx(a.value, rel=1e-6)
        assert a.value >= 1.0 - 1e-9  # sharing incentive: the equal share is feasible


def test_the_efficiency_phase_keeps_the_optimum_and_uses_idle_capacity():
    # job 0 is the bottleneck on type 0; job 1 could use type 1 fully, which max-min alone need not ask for
    T = np.array([[1.0, 0.0], [1.0, 1.0]])
    z, N = np.array([1, 1]), np.array([1, 1])
    one = max_min_fairness(T, z, N, efficiency=False)
    two = max_min_fairness(T, z, N)
    assert two.value == pytest.approx(one.value) and two.lps == 2
    assert two.throughputs(T).sum() == pytest.approx(2.0)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 6), st.integers(1, 3))
def test_max_min_sharing_incentive(seed, m, k):
    T, z, N = _instance(np.random.default_rng(seed), m, k)
    a = max_min_fairness(T, z, N)
    _check_feasible(a, T, z, N)
    assert a.value >= 1.0 - 1e-7


# -- the makespan LP ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_makespan_closed_form_one_type(seed):
    # one-GPU jobs, one type of N GPUs, speeds s_m: makespan = max(max_m R_m/s_m, sum_m (R_m/s_m) / N)
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 7))
    n = int(rng.integers(1, 5))
    s, R = rng.uniform(0.5, 3.0, m), rng.uniform(10.0, 100.0, m)
    work = R / s
    expect = max(work.max(), work.sum() / n)
    for solver in ("glop", "highs"):
        a = min_makespan(s[:, None], np.ones(m), np.array([n]), R, solver=solver)
        assert 1.0 / a.value == pytest.approx(expect, rel=1e-6)


@pytest.mark.parametrize("seed", range(5))
def test_makespan_glop_equals_highs(seed):
    rng = np.random.default_rng(100 + seed)
    T, z, N = _instance(rng, int(rng.integers(2, 6)), int(rng.integers(2, 4)))
    R = rng.uniform(1.0, 50.0, len(T))
    g, h = min_makespan(T, z, N, R), min_makespan(T, z, N, R, solver="highs")
    assert g.value == pytest.approx(h.value, rel=1e-6)
    _check_feasible(g, T, z, N)
    # every job finishes by the makespan at its allocated throughput
    assert np.all(R / g.throughputs(T) <= 1.0 / g.value * (1 + 1e-6))


def test_lp_bad_input():
    with pytest.raises(InstanceError):
        max_min_fairness(np.ones((2, 2)), np.ones(3), np.ones(2))
    with pytest.raises(InstanceError):
        max_min_fairness(-np.ones((1, 1)), np.ones(1), np.ones(1))
    with pytest.raises(InstanceError):
        max_min_fairness(np.ones((1, 1)), np.ones(1), np.ones(1), solver="cplex")
    with pytest.raises(InstanceError):
        min_makespan(np.ones((1, 1)), np.ones(1), np.ones(1), [-1.0])


# -- the realisation ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, n_jobs", [("V100:1x1,K80:1x1", 3), ("V100:1x2,P100:1x1,K80:1x2", 5)])
def test_realised_time_fractions_converge_to_the_lp(spec, n_jobs):
    cl = parse_cluster(spec)
    wl = Workload(tuple(WorkloadJob(str(i), 0.0, 1, 1e9, 1.0, model=MODELS[i % len(MODELS)])
                        for i in range(n_jobs)))
    g = Gavel()
    simulate(wl, cl, scheduler=g, perf=HeteroPerf.for_cluster(cl), max_time_s=300.0 * 600)
    assert len(g.lp_log) == 1  # a static job set: one LP
    elapsed = g._last_t
    assert elapsed >= 300.0 * 590
    x = np.array([g.allocation(str(i)) for i in range(n_jobs)])
    assert (x > 1e-6).sum() > n_jobs or np.any((x > 1e-6) & (x < 1 - 1e-6))  # time-slicing needed
    got = np.array([g.received(str(i)) for i in range(n_jobs)]) / elapsed
    assert np.abs(got - x).max() < 0.01


def test_gavel_finishes_a_heterogeneous_workload_and_needs_a_bound_model():
    cl = parse_cluster("V100:1x4,K80:1x4")
    base = synthetic_workload(25, load_jph=10.0, seed=4, gpu_mix={1: 0.6, 2: 0.3, 4: 0.1})
    wl = Workload(tuple(WorkloadJob(j.id, j.arrival_s, j.gpus, j.iterations, j.iteration_time_s,
                                    model=MODELS[i % 4]) for i, j in enumerate(base)))
    perf = HeteroPerf.for_cluster(cl)
    for sched in (Gavel(), GavelMakespan(), Gavel(solver="highs")):
        r = simulate(wl, cl, scheduler=sched, perf=perf)
        assert r.summary["finished_tracked"] == len(wl)
        rho = finish_time_fairness(r, cl, perf)
        assert len(rho) == len(wl) and np.all(rho["rho"] > 0)
    with pytest.raises(InstanceError) as e:
        simulate(wl, cl, scheduler="gavel")
    assert e.value.field == "perf"


def test_gavel_glop_and_highs_runs_agree():
    cl = parse_cluster("V100:1x2,K80:1x2")
    base = synthetic_workload(12, load_jph=8.0, seed=6, gpu_mix={1: 0.7, 2: 0.3})
    wl = Workload(tuple(WorkloadJob(j.id, j.arrival_s, j.gpus, j.iterations, j.iteration_time_s,
                                    model=MODELS[i % 4]) for i, j in enumerate(base)))
    perf = HeteroPerf.for_cluster(cl)
    a, b = Gavel(), Gavel(solver="highs")
    simulate(wl, cl, scheduler=a, perf=perf)
    simulate(wl, cl, scheduler=b, perf=perf)
    # the first LP is solved on the same job set: same optimum
    assert a.lp_log[0]["value"] == pytest.approx(b.lp_log[0]["value"], rel=1e-6)


# -- Optimus -----------------------------------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 4), st.integers(1, 8))
def test_marginal_gain_greedy_is_optimal_for_convex_times(seed, m, extra):
    # remaining time a_j (alpha_j + (1 - alpha_j) / g): convex and decreasing in g (Amdahl-like), so the greedy
    # by marginal gain minimises the sum of remaining times (checked by enumeration)
    rng = np.random.default_rng(seed)
    a, alpha = rng.uniform(1, 100, m), rng.uniform(0, 0.5, m)
    gpus, cap = m + extra, 1 + extra

    def f(j, g):
        return a[j] * (alpha[j] + (1 - alpha[j]) / g)
    alloc = marginal_gain_allocation(list(range(m)), gpus, f, lambda j: cap)
    assert sum(alloc.values()) <= gpus and all(1 <= g <= cap for g in alloc.values())
    best = min(sum(f(j, g) for j, g in enumerate(c))
               for c in itertools.product(range(1, cap + 1), repeat=m) if sum(c) <= gpus)
    assert sum(f(j, g) for j, g in alloc.items()) == pytest.approx(best, rel=1e-9)


def test_marginal_gain_gives_one_gpu_each_first_in_order():
    alloc = marginal_gain_allocation(["a", "b", "c"], 2, lambda j, g: 100.0 / g, lambda j: 4)
    assert alloc == {"a": 1, "b": 1}


def test_optimus_under_the_constant_model_gives_requests():
    wl = synthetic_workload(20, load_jph=20.0, seed=2, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2})
    r = simulate(wl, (2, 4), scheduler="optimus")
    assert r.summary["finished_tracked"] == len(wl)
    for j in r.job_objects:
        assert all(sum(pl.counts) == j.gpus for _, _, pl, _ in j.segments)


def test_optimus_under_a_scaling_model_shares_by_marginal_gain():
    wl = Workload((WorkloadJob("short", 0, 1, 1800, 1.0, model="ResNet-50/ImageNet"),
                   WorkloadJob("long", 0, 1, 36000, 1.0, model="ResNet-50/ImageNet")))
    r = simulate(wl, (1, 4), scheduler="optimus", perf="hetero", mode="event")
    first = {j.id: sum(j.segments[0][2].counts) for j in r.job_objects}
    assert first["short"] >= 1 and first["long"] >= 1 and sum(first.values()) == 4
    assert first["long"] >= first["short"]  # more time to save on the long job
    # once the short job is done the long one takes the whole server
    long = next(j for j in r.job_objects if j.id == "long")
    assert sum(long.segments[-1][2].counts) == 4
    with pytest.raises(InstanceError) as e:
        simulate(wl, parse_cluster("V100:1x2,K80:1x2"), scheduler="optimus", perf="hetero")
    assert e.value.field == "cluster"


def test_lp_log_columns_give_back_every_row_exactly():
    """Gavel's LP log is stored as typed columns (memory at a million jobs): every field comes back as it went in,
    ``closed_form`` as a bool, the method by name, and a replaced last row keeps its time, jobs and rows."""
    import random

    from optsched.sim.hetero.gavel import _LpLog

    rng = random.Random(3)
    log, rows = _LpLog(), []
    for k in range(50):
        row = (rng.random() * 1e6, rng.randrange(10**6), rng.randrange(10**4), rng.randrange(3), rng.random() / 7,
               rng.random() / 3, rng.random() * 1e-3 + 1e-300, rng.random() < 0.5,
               rng.choice(["glop", "highs", "all-run", "knapsack", "glop (deferred)"]))
        log.append(*row)
        rows.append(row)
        if k % 7 == 3:
            log.redo_last(2, 0.5, 0.25, 1 / 3, False, "glop")
            rows[-1] = rows[-1][:3] + (2, 0.5, 0.25, 1 / 3, False, "glop")
    got = list(log.rows())
    assert len(log) == 50 and got == rows
    assert all(type(r[7]) is bool for r in got)
