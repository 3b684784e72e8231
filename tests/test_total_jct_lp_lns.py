"""The time-slot LP lower bound (optsched.exact.total_jct_lp) against the brute-force optimum, and the LNS
(optsched.exact.total_jct_lns) against the brute force and the evaluator, on tiny instances."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.test_total_jct_bnb import tiny_instances

from optsched.algorithms.total_jct import greedy_total_jct
from optsched.cluster import Cluster, Server
from optsched.errors import InstanceError
from optsched.evaluators.total_jct import check_schedule
from optsched.exact.total_jct import brute_force_total_jct
from optsched.exact.total_jct_lns import choice_of_schedule, improve, lns_total_jct
from optsched.exact.total_jct_lp import lp_lower_bound, start_lp_lower_bound, wide_classes
from optsched.generators.total_jct import random_total_jct_instance
from optsched.problems.total_jct import Mode, TotalJctInstance, TotalJctJob, choice_cost, schedule_from_choice


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(), st.integers(1, 4), st.integers(1, 30))
def test_lp_bound_is_below_the_brute_force_optimum(inst, delta, slots):
    """Any slot width and any number of capacity slots (the last slot is uncapacitated): still a bound."""
    opt = brute_force_total_jct(inst).objective
    assert lp_lower_bound(inst, slots=slots, delta=delta) <= opt
    assert inst.trivial_lower_bound() <= lp_lower_bound(inst, slots=slots) <= opt


def test_lp_bound_sees_what_the_trivial_bound_misses():
    """Two 2-GPU jobs of length 4 on one 2-GPU server, released at 0: optimum 4 + 8 = 12, trivial bound 8. By
    hand, the LP with unit slots: the GPU row lets one unit of work per slot in all, so the eight units fill
    slots 0..7; the cost sum_j (1/4) sum_a a y[j, a] + d_j / 2 is then (0 + 1 + ... + 7) / 4 + 2 + 2 = 11."""
    inst = TotalJctInstance(Cluster.homogeneous(1, 2), (TotalJctJob("a", 0, 2, (Mode((2,), 4),)),
                                                         TotalJctJob("b", 0, 2, (Mode((2,), 4),))))
    assert brute_force_total_jct(inst).objective == 12
    assert inst.trivial_lower_bound() == 8
    assert lp_lower_bound(inst, slots=20, delta=1) == 11


def test_lp_bound_rejects_bad_arguments():
    inst = random_total_jct_instance(3, 0)
    with pytest.raises(InstanceError, match="slots"):
        lp_lower_bound(inst, slots=0)
    with pytest.raises(InstanceError, match="delta"):
        lp_lower_bound(inst, delta=0)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(), st.integers(1, 4), st.integers(1, 30))
def test_start_lp_bound_is_below_the_brute_force_optimum(inst, delta, slots):
    """The start-slot LP: any slot width and count (starts after the last slot are free of capacity rows)."""
    opt = brute_force_total_jct(inst).objective
    assert inst.trivial_lower_bound() <= start_lp_lower_bound(inst, slots=slots, delta=delta) <= opt
    assert start_lp_lower_bound(inst, slots=slots) <= opt


def _dense_start_lp(inst, slots, delta):
    """The start-slot LP of the formulation written directly: one variable per (job, start slot), every covered
    slot listed (no cumulative variables); solved by HiGHS's simplex. A second implementation of the same LP."""
    import numpy as np
    from scipy.optimize import linprog

    jobs = inst.jobs
    lp = [i for i, j in enumerate(jobs) if j.weight > 0 and j.min_duration > 0]
    const = sum(j.weight * j.release for j in jobs if j.min_duration == 0)
    classes = wide_classes(inst, lp)
    cols = []  # (job row, cost, {capacity row: coefficient})
    for row, i in enumerate(lp):
        j = jobs[i]
        d = j.min_duration
        for a in range(min(j.release // delta, slots), slots + 1):
            lo = max(a * delta, j.release)
            cov = {}
            if a < slots:
                for b in range(a, slots):  # the job surely runs on [(a + 1) delta - 1, lo + d)
                    t = min(lo + d, (b + 1) * delta) - max((a + 1) * delta - 1, b * delta)
                    if t > 0:
                        cov[b] = j.gpus * t
                        for c, (cls, _) in enumerate(classes):
                            if i in cls:
                                cov[slots * (1 + c) + b] = t
            cols.append((row, j.weight * (lo + d), cov))
    if not lp:
        return const
    A_eq = np.zeros((len(lp), len(cols)))
    A_ub = np.zeros((slots * (1 + len(classes)), len(cols)))
    for v, (row, _, cov) in enumerate(cols):
        A_eq[row, v] = 1
        for r, t in cov.items():
            A_ub[r, v] = t
    b_ub = [inst.cluster.total_gpus * delta] * slots + [k * delta for _, k in classes for _ in range(slots)]
    res = linprog([c for _, c, _ in cols], A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=np.ones(len(lp)), bounds=(0, 1),
                  method="highs-ds")
    assert res.status == 0
    return res.fun + const


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(), st.integers(1, 3), st.integers(1, 12))
def test_start_lp_bound_is_the_dense_lp_rounded_up(inst, delta, slots):
    """The solved form (cumulative start variables, a few coefficients per row) has the value of the LP as
    written in the formulation: the certified value is that LP's minimum rounded up (or the trivial bound)."""
    dense = _dense_start_lp(inst, slots, delta)
    got = start_lp_lower_bound(inst, slots=slots, delta=delta)
    assert got == max(math.ceil(dense - 1e-6), inst.trivial_lower_bound())


def test_start_lp_bound_sees_that_jobs_run_without_a_break():
    """Two 2-GPU jobs of length 4 on one 2-GPU server at 0 (optimum 12) and a 1-GPU job of length 3 at 1 on a
    second server of 1 GPU: the time-slot LP lets each wide job's work spread (11 + 4), the start-slot LP keeps
    every run in one piece and finds the optimum 16."""
    inst = TotalJctInstance(Cluster((Server("s0", 2), Server("s1", 1))), (
        TotalJctJob("a", 0, 2, (Mode((2,), 4),)), TotalJctJob("b", 0, 2, (Mode((2,), 4),)),
        TotalJctJob("c", 1, 1, (Mode((1,), 3),))))
    assert brute_force_total_jct(inst).objective == 16
    assert lp_lower_bound(inst, slots=20, delta=1) < 16
    assert start_lp_lower_bound(inst, slots=20, delta=1) == 16


def test_start_lp_bound_rejects_bad_arguments_and_can_stop():
    inst = random_total_jct_instance(3, 0)
    with pytest.raises(InstanceError, match="slots"):
        start_lp_lower_bound(inst, slots=0)
    with pytest.raises(InstanceError, match="delta"):
        start_lp_lower_bound(inst, delta=0)
    assert start_lp_lower_bound(random_total_jct_instance(12, 0), slots=3000, time_limit=1e-6) is None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(max_jobs=4))
def test_lns_with_every_job_free_finds_the_optimum(inst):
    """One round that frees every job is CP-SAT on the whole model: it must reach the brute force's optimum
    (tiny instances: solved to optimality well within the deterministic limit)."""
    opt = brute_force_total_jct(inst).objective
    res = lns_total_jct(inst, rounds=1, window=inst.n_jobs, round_limit=20.0, seed=0)
    assert check_schedule(inst, res.schedule) == res.objective == opt
    assert res.objective <= res.info["start_cost"]


@pytest.mark.parametrize("n, seed", [(8, 0), (10, 1)])
def test_lns_never_worsens_and_is_deterministic(n, seed):
    inst = random_total_jct_instance(n, seed)
    start = greedy_total_jct(inst)
    a = lns_total_jct(inst, start, rounds=6, window=4, round_limit=0.2, seed=seed)
    b = lns_total_jct(inst, start, rounds=6, window=4, round_limit=0.2, seed=seed)
    assert a.objective == b.objective and a.schedule == b.schedule
    assert check_schedule(inst, a.schedule) == a.objective <= choice_cost(inst, start)
    assert a.info["rounds"] == 6


def test_improve_keeps_fixed_jobs_and_choice_round_trips():
    inst = random_total_jct_instance(6, 0)
    start = greedy_total_jct(inst)
    assert choice_of_schedule(inst, schedule_from_choice(inst, start, "greedy")) == start
    new = improve(inst, start, {0, 1, 2}, round_limit=5.0)
    if new is not None:  # an improvement must keep jobs 3-5 exactly where they were
        assert all(new[j.id] == start[j.id] for j in inst.jobs[3:])
        assert choice_cost(inst, new) < choice_cost(inst, start)
        check_schedule(inst, schedule_from_choice(inst, new, "lns"))


def test_lns_needs_a_limit():
    with pytest.raises(InstanceError, match="time_limit"):
        lns_total_jct(random_total_jct_instance(3, 0))


def test_registered_lns_proves_tiny_and_bounds_larger_instances():
    import optsched
    from optsched.result import SolveStatus

    tiny = random_total_jct_instance(5, 0)
    res = optsched.solve(tiny, "total-jct-lns", deterministic_limit=5, num_workers=1, seed=0)
    assert res.status == SolveStatus.OPTIMAL and res.objective == brute_force_total_jct(tiny).objective
    # proven by the branch and bound alone, still reported under the name asked for
    assert res.algorithm == "total-jct-lns" and res.info["found_by"] == "total-jct-bnb"
    inst = random_total_jct_instance(12, 0)
    a = optsched.solve(inst, "total-jct-lns", deterministic_limit=0.8, num_workers=1, seed=0, lagrangian_iterations=200)
    b = optsched.solve(inst, "total-jct-lns", deterministic_limit=0.8, num_workers=1, seed=0, lagrangian_iterations=200)
    assert a.objective == b.objective and a.lower_bound == b.lower_bound  # deterministic with one worker
    assert check_schedule(inst, a.schedule) == a.objective
    if a.status != SolveStatus.OPTIMAL:
        assert a.lower_bound == max(a.info["bnb_bound"], a.info["lp_bound"], a.info["start_lp_bound"],
                                    a.info["lagrangian_bound"]) < a.objective
        assert a.objective <= a.info["bnb_objective"]
    assert a.lower_bound <= 190664  # the library's proven optimum of this instance (total-jct-n12-seed0)
    c = optsched.solve(inst, "total-jct-lns", deterministic_limit=0.8, num_workers=1, seed=0, start_slots=0,
                       lagrangian_iterations=200)
    assert c.info.get("start_lp_bound") is None and c.lower_bound <= a.lower_bound


@pytest.mark.parametrize("option", [{"start_slots": -1}, {"start_slots": 1.5}, {"start_lp_share": 1.0},
                                    {"start_lp_share": -0.1}])
def test_registered_lns_rejects_bad_start_lp_options(option):
    import optsched

    with pytest.raises(InstanceError, match=next(iter(option))):
        optsched.solve(random_total_jct_instance(3, 0), "total-jct-lns", deterministic_limit=0.1, num_workers=1,
                       **option)
