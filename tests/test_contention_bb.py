"""The round model's branch and bound (``solve_contention_bb``, issue 24's 6-8-job optima): equal to plain
enumeration and to the DP wherever they run, its option table equal to ``pareto_options``, its bounds below the
exact values it stores, and its limits deterministic."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.sim.shared_data import DEEPSHARE, needs_data

import optsched
from optsched.exact.contention import (
    _Model,
    _Search,
    brute_force_contention,
    evaluate_plan,
    pareto_options,
    solve_contention_bb,
    solve_contention_dp,
)
from optsched.generators.contention import random_contention_instance
from optsched.problems.contention import ContentionInstance, ContentionJob
from optsched.sim import simulate

pytestmark = needs_data(*DEEPSHARE)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), jobs=st.integers(2, 3), mix=st.sampled_from(["normal", "heavy"]),
       hours=st.sampled_from([0.2, 0.25]), arrival=st.sampled_from(["zero", "poisson"]))
def test_bb_equals_plain_enumeration_on_the_smallest(seed, jobs, mix, hours, arrival):
    inst = random_contention_instance(jobs=jobs, mix=mix, seed=seed, hours=hours, arrival=arrival)
    bb, bf = solve_contention_bb(inst, time_limit=None), brute_force_contention(inst)
    assert bb.status.value == "optimal"
    assert bb.objective == pytest.approx(bf.objective)
    assert evaluate_plan(inst, bb.info["plan"]).total_jct_s == pytest.approx(bb.objective)


@pytest.mark.parametrize("jobs,seed", [(4, 2_000_000), (4, 2_000_014), (5, 2_000_007), (5, 2_000_013),
                                       (4, 7)])
def test_bb_equals_the_dp(jobs, seed):
    # the benchmark's 4-5-job instances (and two others): the DP's optimum, within deterministic limits
    inst = random_contention_instance(jobs=jobs, seed=seed, hours=0.25)
    bb, dp = solve_contention_bb(inst, time_limit=None), solve_contention_dp(inst, time_limit=None)
    assert bb.status.value == dp.status.value == "optimal"
    assert bb.objective == pytest.approx(dp.objective)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_bb_equals_the_dp_with_arrivals(seed):
    inst = random_contention_instance(jobs=4, seed=seed, hours=0.25, arrival="poisson", load=1.5)
    bb, dp = solve_contention_bb(inst, time_limit=None), solve_contention_dp(inst, time_limit=None)
    assert bb.objective == pytest.approx(dp.objective)


def test_identical_jobs_are_interchangeable_but_not_merged():
    # two identical 4-GPU MoE jobs beside an 8-GPU one: the table keys them as one class; the optimum is the
    # enumeration's
    jobs = (ContentionJob("a", "MoE", 4, 20000.0), ContentionJob("b", "FSDP", 8, 30000.0),
            ContentionJob("c", "MoE", 4, 20000.0))
    inst = ContentionInstance(jobs, nodes=2, gpus_per_node=8)
    m = _Model(inst)
    assert _Search(m, math.inf, None).cls == [0, 1, 0]
    bb = solve_contention_bb(inst, time_limit=None)
    assert bb.objective == pytest.approx(brute_force_contention(inst).objective)
    assert set(evaluate_plan(inst, bb.info["plan"]).jct) == {"a", "b", "c"}


def test_the_option_table_equals_pareto_options_on_every_subset():
    inst = random_contention_instance(jobs=5, seed=2_000_008, hours=0.25)
    m = _Model(inst)
    s = _Search(m, math.inf, None)
    for k in range(1, 6):
        for sub in itertools.combinations(range(5), k):
            assert sorted(v for v, _ in s.pareto_of(sub)) == sorted(v for v, _ in pareto_options(m, sub)), sub
            for v, cfg in s.pareto_of(sub):  # each vector is made by its configuration
                p = m.progress(cfg)
                assert tuple(round(p.get(i, 0.0), 12) for i in sub) == v


@pytest.mark.parametrize("jobs,seed", [(4, 2_000_000), (4, 2_000_014), (5, 2_000_007)])
def test_bounds_are_below_every_exact_value(jobs, seed):
    # the states two rounds down every choice (up to 25 per state), each solved exactly by the search itself
    inst = random_contention_instance(jobs=jobs, seed=seed, hours=0.25)
    s = _Search(_Model(inst), math.inf, None)
    root = tuple([1.0] * jobs)
    value = s.search(0, root, math.inf)
    assert value * inst.round_s == pytest.approx(solve_contention_bb(inst, time_limit=None).objective)
    checked = 0
    for f, fin, left, _ in itertools.islice(s.children(0, root), 25):
        v = s.search(1, left, math.inf)
        assert f <= fin + v + 1e-9 and s.bounds(1, np.array([left]))[0] <= v + 1e-9
        for f2, fin2, left2, _ in itertools.islice(s.children(1, left), 25):
            assert f2 <= fin2 + s.search(2, left2, math.inf) + 1e-9
            checked += 1
    assert checked > 50


def test_limits_are_deterministic_and_return_a_valid_plan():
    inst = random_contention_instance(jobs=6, seed=2_000_000, hours=0.25)
    a, b = (solve_contention_bb(inst, time_limit=None, max_states=20) for _ in range(2))
    assert a.status.value == "time limit" and a.objective == b.objective and a.lower_bound == b.lower_bound
    assert evaluate_plan(inst, a.info["plan"]).total_jct_s == pytest.approx(a.objective)
    full = solve_contention_bb(inst, time_limit=None)
    assert full.status.value == "optimal"
    assert a.lower_bound <= full.objective + 1e-6 <= a.objective + 1e-6


def test_a_simulated_plan_as_first_upper_bound():
    inst = random_contention_instance(jobs=5, seed=2_000_008, hours=0.25)
    run = simulate(inst, scheduler="contention-lookahead")
    plan = [cfg for _, cfg in run.custom["contention_rounds"]["plan"]]
    given_ = solve_contention_bb(inst, time_limit=None, incumbent=plan)
    alone = solve_contention_bb(inst, time_limit=None)
    assert given_.objective == pytest.approx(alone.objective)
    assert given_.objective <= float(run.jobs["round_jct_s"].sum()) + 1e-6
    # its own optimal plan as the first bound: nothing better exists, so that plan is returned
    again = solve_contention_bb(inst, time_limit=None, incumbent=alone.info["plan"])
    assert again.objective == pytest.approx(alone.objective) and again.status.value == "optimal"


def test_the_door_and_the_job_limit():
    inst = random_contention_instance(jobs=3, seed=0, hours=0.25)
    res = optsched.solve(inst, "contention-bb")
    assert res.algorithm == "contention-bb" and res.status.value == "optimal"
    assert res.objective == pytest.approx(solve_contention_dp(inst).objective)
    with pytest.raises(optsched.errors.InstanceError, match="at most"):
        solve_contention_bb(random_contention_instance(jobs=11, seed=0, hours=0.25))
