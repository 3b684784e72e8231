"""Server-assignment descent for total JCT (optsched.exact.total_jct_assign): the decomposition it rests on (with
single-server modes only, the optimum is the best partition's sum of per-server optima) against the brute force
of the whole instance, and the descent's contract (feasible, never worse than its start, locally optimal when it
says so, deterministic)."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tests.test_total_jct_bnb import tiny_instances

from optsched.algorithms.total_jct import greedy_total_jct
from optsched.cluster import Cluster
from optsched.errors import InstanceError
from optsched.evaluators.total_jct import check_schedule
from optsched.exact.total_jct import brute_force_total_jct
from optsched.exact.total_jct_assign import assignment_descent, server_instance, spread_bounds, spread_instance
from optsched.generators.total_jct import random_total_jct_instance
from optsched.problems.total_jct import Mode, TotalJctInstance, TotalJctJob, choice_cost


def _single_server_only(inst: TotalJctInstance) -> TotalJctInstance:
    jobs = tuple(TotalJctJob(j.id, j.release, j.gpus, tuple(m for m in j.modes if len(m.shape) == 1), j.weight)
                 for j in inst.jobs)
    assume(all(j.modes for j in jobs))
    return TotalJctInstance(inst.cluster, jobs)


def _fits(inst: TotalJctInstance, i: int, m: int) -> bool:
    return any(len(md.shape) == 1 and md.shape[0] <= inst.cluster.servers[m].gpus for md in inst.jobs[i].modes)


def _partition_value(inst: TotalJctInstance, where: tuple[int, ...]) -> int:
    """Sum over servers of the brute-force optimum of that server alone with the jobs ``where`` sends to it."""
    total = 0
    for m in range(len(inst.cluster.servers)):
        S = {i for i, x in enumerate(where) if x == m}
        if S:
            total += brute_force_total_jct(server_instance(inst, m, S)).objective
    return total


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(tiny_instances())
def test_best_partition_of_per_server_optima_is_the_optimum(inst):
    """The decomposition (formulation, "Server decomposition"): with single-server modes only, the optimum equals
    the least, over partitions of the jobs among the servers where they fit, of the sum of the servers' own
    optima; two brute forces that share no search."""
    inst = _single_server_only(inst)
    M = len(inst.cluster.servers)
    options = [[m for m in range(M) if _fits(inst, i, m)] for i in range(inst.n_jobs)]
    best = min(_partition_value(inst, where) for where in itertools.product(*options))
    assert best == brute_force_total_jct(inst).objective


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(tiny_instances(), st.booleans())
def test_descent_is_feasible_never_worse_and_locally_optimal(inst, only_single):
    if only_single:
        inst = _single_server_only(inst)
    start = greedy_total_jct(inst)
    res = assignment_descent(inst, start)
    assert res.schedule is not None
    assert check_schedule(inst, res.schedule) == res.objective <= choice_cost(inst, start)
    assert res.objective >= brute_force_total_jct(inst).objective
    if res.info.get("skipped"):
        assert res.objective == choice_cost(inst, start)
        return
    assert res.info["unproven"] == 0 and res.info["local_optimum"]
    # no move of one job to another server improves the final partition (each server re-solved by brute force)
    ids = {j.id: i for i, j in enumerate(inst.jobs)}
    where_of = {ids[x]: m for m, part in enumerate(res.info["partition"]) for x in part}
    where = tuple(where_of[i] for i in range(inst.n_jobs))
    here = _partition_value(inst, where)
    assert res.objective <= here
    if res.objective < choice_cost(inst, start):
        assert res.objective == here
    for i in range(inst.n_jobs):
        for m in range(len(inst.cluster.servers)):
            if m != where[i] and _fits(inst, i, m):
                assert _partition_value(inst, where[:i] + (m,) + where[i + 1:]) >= here


def test_descent_improves_a_generator_instance_and_is_deterministic():
    inst = random_total_jct_instance(10, 1)
    start = greedy_total_jct(inst)
    a = assignment_descent(inst, start, units=2)
    b = assignment_descent(inst, start, units=2)
    assert a.objective == b.objective and a.schedule == b.schedule
    assert a.objective <= choice_cost(inst, start)
    assert a.info["partition_cost"] <= a.info["start_cost"] or a.info["moves"] > 0 or a.objective == choice_cost(
        inst, start)


def test_a_job_without_single_server_mode_skips_the_descent():
    inst = TotalJctInstance(Cluster.homogeneous(2, 1), (
        TotalJctJob("a", 0, 2, (Mode((1, 1), 3),)), TotalJctJob("b", 0, 1, (Mode((1,), 2),))))
    res = assignment_descent(inst)
    assert res.info["skipped"] and res.info["evaluations"] == 0
    assert res.objective == choice_cost(inst, greedy_total_jct(inst)) >= brute_force_total_jct(inst).objective


def test_evaluation_limit_and_bad_arguments():
    inst = random_total_jct_instance(8, 0)
    res = assignment_descent(inst, evaluations=0)
    assert res.info["evaluations"] == 0 and not res.info["local_optimum"]
    assert res.objective <= choice_cost(inst, greedy_total_jct(inst))
    with pytest.raises(InstanceError, match="evaluations"):
        assignment_descent(inst, evaluations=-1)
    with pytest.raises(InstanceError, match="units"):
        assignment_descent(inst, units=0)
    with pytest.raises(InstanceError, match="no single-server mode"):
        server_instance(TotalJctInstance(Cluster.homogeneous(2, 1), (TotalJctJob("a", 0, 2, (Mode((1, 1), 3),)),)),
                        0, {0})


def test_total_jct_lns_runs_the_descent_after_lns():
    from optsched.exact.total_jct_lns import solve_total_jct_lns

    inst = random_total_jct_instance(12, 0)
    kw = dict(time_limit=None, deterministic_limit=0.4, num_workers=1, seed=0, start_slots=0, slots=100,
              lagrangian_slots=100, lagrangian_iterations=5, descent_evaluations=30)
    res = solve_total_jct_lns(inst, **kw)
    if res.info.get("descent_objective") is None:  # the branch and bound proved it first: nothing to test here
        pytest.skip("proved by the branch and bound")
    assert res.objective == min(res.info["lns_objective"], res.info["descent_objective"], res.info["bnb_objective"])
    assert check_schedule(inst, res.schedule) == res.objective >= res.lower_bound
    assert solve_total_jct_lns(inst, **kw).objective == res.objective  # deterministic
    for bad in ({"descent_share": 1.5}, {"descent_evaluations": -1}):
        with pytest.raises(InstanceError, match=next(iter(bad))):
            solve_total_jct_lns(inst, **{**kw, **bad})


def _single_server_modes(inst: TotalJctInstance) -> TotalJctInstance | None:
    """``inst`` with the multi-server modes dropped; None when some job then has no mode."""
    jobs = tuple(dataclasses.replace(j, modes=tuple(m for m in j.modes if len(m.shape) == 1)) for j in inst.jobs)
    return None if any(not j.modes for j in jobs) else TotalJctInstance(inst.cluster, jobs)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(), st.integers(20, 60), st.integers(0, 30), st.integers(1, 13))
def test_spread_bounds_split_the_schedules_and_stay_below(inst, slots, iterations, push):
    """Formulation, "Spread jobs": every schedule is single-server or spreads some job, so the optimum is the least
    of the single-server optimum and, per job with a multi-server mode, the optimum of its spread instance (four
    brute forces that share nothing but the enumeration of vectors); and each spread bound is at most its spread
    instance's optimum, with prices pushed towards targets up to 13 times the optimum."""
    opt = brute_force_total_jct(inst).objective
    single = _single_server_modes(inst)
    parts = [] if single is None else [brute_force_total_jct(single).objective]
    spread = {}
    for i, j in enumerate(inst.jobs):
        sub = spread_instance(inst, i)
        assert (sub is None) == all(len(m.shape) == 1 for m in j.modes)
        if sub is not None:
            assert [x.id for x in sub.jobs] == [x.id for x in inst.jobs]
            assert all(len(m.shape) > 1 for m in sub.jobs[i].modes)
            spread[j.id] = brute_force_total_jct(sub).objective
    assert opt == min(parts + list(spread.values()))
    bounds = spread_bounds(inst, slots=slots, iterations=iterations, target=push * max(opt, 1))
    assert sorted(bounds) == sorted(spread)
    for jid, b in bounds.items():
        assert b <= spread[jid]


def test_spread_bounds_exclude_spreading_on_a_generator_instance():
    """On the 10-job seed-0 instance (proved by the branch and bound) every spread job costs more than the optimum:
    so some optimal schedule is single-server, and the best partition gives it."""
    from optsched.exact.total_jct_bnb import solve_total_jct_bnb

    inst = random_total_jct_instance(10, 0)
    res = solve_total_jct_bnb(inst, time_limit=None, deterministic_limit=50, num_workers=1)
    bounds = spread_bounds(inst, slots=300, iterations=100, target=res.objective)
    assert res.status.value == "optimal" and bounds and min(bounds.values()) >= res.objective
    single = _single_server_modes(inst)
    assert single is not None
    assert solve_total_jct_bnb(single, time_limit=None, deterministic_limit=50, num_workers=1).objective == \
        res.objective


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(tiny_instances(), st.integers(0, 5), st.booleans())
def test_partition_neighbourhood_is_the_best_partition_within_its_radius(inst, radius, only_single):
    """partition_neighbourhood against a brute force of its own claim: the least, over every partition within
    ``radius`` moves of the start's, of the sum of per-server brute-force optima (with the start's cost kept when
    none is below); with radius >= jobs and single-server modes only, the brute-force optimum itself."""
    from optsched.exact.total_jct_assign import partition_neighbourhood, partition_of

    if only_single:
        inst = _single_server_only(inst)
    start = greedy_total_jct(inst)
    res = partition_neighbourhood(inst, start, radius=radius, units=50)
    assert res.schedule is not None and check_schedule(inst, res.schedule) == res.objective
    if res.info.get("skipped"):
        assert res.objective == choice_cost(inst, start)
        return
    assert res.info["complete"] and res.info["unproven"] == 0
    M = len(inst.cluster.servers)
    options = [[m for m in range(M) if _fits(inst, i, m)] for i in range(inst.n_jobs)]
    base = partition_of(inst, start, options)
    where0 = tuple(next(m for m in range(M) if i in base[m]) for i in range(inst.n_jobs))
    near = [w for w in itertools.product(*options) if sum(a != b for a, b in zip(w, where0)) <= radius]
    best = min(_partition_value(inst, w) for w in near)
    assert res.info["partitions"] == len(near)
    assert res.objective == min(best, choice_cost(inst, start))
    if radius >= inst.n_jobs and only_single:
        assert res.objective == brute_force_total_jct(inst).objective


def test_partition_neighbourhood_arguments():
    from optsched.exact.total_jct_assign import partition_neighbourhood

    inst = random_total_jct_instance(6, 0)
    with pytest.raises(InstanceError, match="radius"):
        partition_neighbourhood(inst, greedy_total_jct(inst), radius=-1)
    with pytest.raises(InstanceError, match="units"):
        partition_neighbourhood(inst, greedy_total_jct(inst), units=0)
    res = partition_neighbourhood(inst, greedy_total_jct(inst), radius=6, time_limit=0)
    assert not res.info["complete"] and res.info["partitions"] == 0
