"""The Lagrangian bound of total JCT (optsched.exact.total_jct_lp.LagrangianBound) and the branch and bound that
uses it at its nodes (optsched.exact.total_jct_bnb), against the brute-force optimum on tiny instances."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.test_total_jct_bnb import tiny_instances

from optsched.cluster import Cluster
from optsched.errors import InstanceError, ScheduleError
from optsched.exact.total_jct import brute_force_total_jct
from optsched.exact.total_jct_bnb import solve_total_jct_bnb
from optsched.exact.total_jct_lns import choice_of_schedule
from optsched.exact.total_jct_lp import LagrangianBound, lagrangian_lower_bound, lp_lower_bound
from optsched.generators.total_jct import random_total_jct_instance
from optsched.problems.total_jct import Mode, TotalJctInstance, TotalJctJob
from optsched.result import SolveStatus


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(), st.integers(1, 30), st.integers(0, 60), st.integers(0, 3))
def test_bound_is_below_the_optimum_for_any_prices(inst, slots, iterations, push):
    """Subgradient steps towards a target far above the optimum drive the prices far from the LP's duals: every
    price vector met must still give a bound."""
    opt = brute_force_total_jct(inst).objective
    target = opt * (1 + 4 * push) + push
    lag = LagrangianBound(inst, slots=slots, iterations=iterations, target=target or None)
    assert inst.trivial_lower_bound() <= lag.bound() <= opt


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(), st.integers(1, 30), st.integers(0, 40))
def test_node_bound_is_below_the_optimum_along_an_optimal_schedule(inst, slots, iterations):
    """The node bound of the branch and bound (placed jobs: cost + price of their real runs; the others: their
    least rest from the last start on) along an optimal schedule taken in start order never exceeds its cost."""
    bf = brute_force_total_jct(inst)
    choice = choice_of_schedule(inst, bf.schedule)
    lag = LagrangianBound(inst, slots=slots, iterations=iterations, target=bf.objective + 7)
    order = sorted(range(inst.n_jobs), key=lambda i: (choice[inst.jobs[i].id][2], i))
    cost, pen = 0, 0.0
    for pos, i in enumerate(order):
        j = inst.jobs[i]
        k, _, s = choice[j.id]
        d = j.modes[k].duration
        cost += j.weight * (s + d)
        pen += lag.price(i, s, d)
        node = cost + pen - lag.const + sum(lag.rest(x, s) for x in order[pos + 1:])
        assert node <= bf.objective + 1e-6 * max(1, bf.objective)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(), st.integers(1, 20))
def test_search_with_the_lagrangian_bound_equals_brute_force(inst, slots):
    bf = brute_force_total_jct(inst)
    res = solve_total_jct_bnb(inst, num_workers=1, time_limit=30, lagrangian_slots=slots)
    assert res.status == SolveStatus.OPTIMAL
    assert res.objective == bf.objective == res.lower_bound
    assert res.info["root_bound"] <= bf.objective


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(), st.integers(1, 30))
def test_at_the_lp_duals_the_bound_is_at_least_the_lp(inst, slots):
    """With no subgradient step the prices are the time-slot LP's duals, and each job's run is priced in one
    piece at its exact start: the bound is at least the LP's (up to the rounding of both)."""
    lag = LagrangianBound(inst, slots=slots)
    assert lag.bound() >= lp_lower_bound(inst, slots=slots) - 1


def test_bound_beats_the_lp_on_two_wide_jobs():
    """Two 2-GPU jobs of length 4 on one 2-GPU server: optimum 12, time-slot LP 11 (hand computation in
    tests/test_total_jct_lp_lns.py); priced in one piece, the runs reach the optimum."""
    inst = TotalJctInstance(Cluster.homogeneous(1, 2), (TotalJctJob("a", 0, 2, (Mode((2,), 4),)),
                                                         TotalJctJob("b", 0, 2, (Mode((2,), 4),))))
    assert lp_lower_bound(inst, slots=20) == 11
    assert lagrangian_lower_bound(inst, slots=20, iterations=200, target=13) == 12


def test_generator_instance_bounds_and_given_incumbent():
    """On a 10-job generator instance: Lagrangian bound <= the proven optimum; the branch and bound started from a
    given schedule proves the same optimum, and a schedule that breaks a constraint is refused."""
    inst = random_total_jct_instance(10, 0)
    plain = solve_total_jct_bnb(inst, num_workers=1, deterministic_limit=20)
    assert plain.status == SolveStatus.OPTIMAL
    assert lagrangian_lower_bound(inst, slots=300, iterations=100) <= plain.objective
    given_ = choice_of_schedule(inst, plain.schedule)
    res = solve_total_jct_bnb(inst, num_workers=1, deterministic_limit=20, lagrangian_slots=300, incumbent=given_)
    assert res.status == SolveStatus.OPTIMAL and res.objective == plain.objective
    assert res.info["nodes"] <= plain.info["nodes"]
    bad = dict(given_)
    jid = inst.jobs[0].id
    k, u, _ = bad[jid]
    bad[jid] = (k, u, -1)
    with pytest.raises(ScheduleError):
        solve_total_jct_bnb(inst, num_workers=1, deterministic_limit=1, incumbent=bad)


def test_bad_iterations():
    with pytest.raises(InstanceError, match="iterations"):
        LagrangianBound(random_total_jct_instance(3, 0), iterations=-1)
