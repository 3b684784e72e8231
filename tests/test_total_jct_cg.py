"""Column-generation bound on single-server schedules of total JCT (optsched.exact.total_jct_cg): the pricing
search against enumeration of job sets with brute-force per-server optima, the bound against the brute-force
optimum of the single-server instance, and the split instance of a spread job against the brute force of the
schedules that spread it (formulation, "Column-generation bound" and "Spread jobs, split")."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tests.test_total_jct_bnb import tiny_instances

from optsched.cluster import Cluster, Server
from optsched.errors import InstanceError
from optsched.exact.total_jct import brute_force_total_jct
from optsched.exact.total_jct_assign import server_instance
from optsched.exact.total_jct_cg import (
    _Prices,
    cg_lower_bound,
    lagrangian_start_prices,
    price_server,
    split_instance,
    split_weights,
    spread_split_bound,
)
from optsched.generators.total_jct import random_total_jct_instance
from optsched.problems.total_jct import Mode, TotalJctInstance, TotalJctJob


def _one_server(cap: int, jobs: list[tuple[int, int, int, int]]) -> TotalJctInstance:
    return TotalJctInstance(Cluster((Server("s0", cap),)), tuple(
        TotalJctJob(f"j{i}", r, g, (Mode((g,), d),), w) for i, (r, w, g, d) in enumerate(jobs)))


@st.composite
def pricing_cases(draw):
    cap = draw(st.integers(1, 4))
    n = draw(st.integers(1, 5))
    jobs = [(draw(st.integers(0, 5)), draw(st.integers(0, 3)), draw(st.integers(1, cap)), draw(st.integers(0, 6)))
            for _ in range(n)]
    pi = [draw(st.floats(0, 40, allow_nan=False)) for _ in range(n)]
    return cap, jobs, pi


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pricing_cases(), st.booleans(), st.integers(0, 30), st.integers(3, 40), st.integers(1, 40))
def test_pricing_search_is_exact(case, with_prices, steps, slots, limit):
    """min over job sets S of (one-server optimum of S) - pi(S): the search against every set's brute force;
    with slot prices (any, after 0-30 subgradient steps) the relaxation and the pruning stay below it; a search
    stopped after ``limit`` nodes reports a lower bound below it."""
    cap, jobs, pi = case
    R, W, G, D = ([x[k] for x in jobs] for k in range(4))
    best = 0.0
    for size in range(1, len(jobs) + 1):
        for S in itertools.combinations(range(len(jobs)), size):
            v = brute_force_total_jct(_one_server(cap, [jobs[i] for i in S])).objective
            best = min(best, v - sum(pi[i] for i in S))
    prices = None
    if with_prices:
        prices = _Prices(R, W, G, D, cap, max(R) + sum(D) + 1, slots)
        relax = prices.ascend(pi, steps, best)
        assert relax <= best + 1e-6
    cut = price_server(R, W, G, D, cap, pi, prices=prices, node_limit=limit)
    assert cut.lower <= best + 1e-6 and cut.value >= best - 1e-6
    res = price_server(R, W, G, D, cap, pi, prices=prices)
    assert res.complete and abs(res.value - best) < 1e-6 and res.lower <= best + 1e-6
    mask, starts = res.best
    if mask:  # the returned set's schedule is a feasible schedule of that set with that value
        S = [i for i in range(len(jobs)) if mask >> i & 1]
        assert abs(sum(W[i] * (s + D[i]) - pi[i] for i, s in zip(S, starts)) - res.value) < 1e-6
        assert all(s >= R[i] for i, s in zip(S, starts))
    for mask, (cost, _starts) in res.columns.items():  # every column is the cost of a schedule of its set
        S = [i for i in range(len(jobs)) if mask >> i & 1]
        assert cost >= brute_force_total_jct(_one_server(cap, [jobs[i] for i in S])).objective


def _single_only(inst: TotalJctInstance) -> TotalJctInstance | None:
    jobs = tuple(dataclasses.replace(j, modes=tuple(m for m in j.modes if len(m.shape) == 1)) for j in inst.jobs)
    return None if any(not j.modes for j in jobs) else TotalJctInstance(inst.cluster, jobs)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(tiny_instances(max_jobs=4), st.integers(0, 3), st.floats(0.0, 0.9))
def test_bound_is_below_the_best_single_server_schedule(inst, iterations, smoothing):
    """The bound (any number of rounds, any smoothing) is at most the brute-force optimum over single-server
    schedules, also after many rounds (complete searches)."""
    single = _single_only(inst)
    res = cg_lower_bound(inst, iterations=iterations + 1, slots=20, lag_iterations=5, smoothing=smoothing)
    if single is None:
        assert res["bound"] is None
        return
    opt1 = brute_force_total_jct(single).objective
    assert res["bound"] <= opt1
    full = cg_lower_bound(inst, iterations=200, slots=20, lag_iterations=5)
    assert full["bound"] <= opt1 and full["complete"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(tiny_instances(max_jobs=4), st.data(), st.booleans())
def test_start_prices_keep_the_bound_below_the_best_single_server_schedule(inst, data, lagrangian):
    """Any first-round prices (random ones up to 60, or the Lagrangian start prices) leave the bound at most the
    brute-force single-server optimum."""
    single = _single_only(inst)
    assume(single is not None)
    if lagrangian:
        start = lagrangian_start_prices(inst, slots=20, iterations=data.draw(st.integers(0, 20)))
    else:
        start = data.draw(st.lists(st.floats(0, 60, allow_nan=False), min_size=inst.n_jobs, max_size=inst.n_jobs))
    res = cg_lower_bound(inst, iterations=data.draw(st.integers(1, 4)), slots=20, lag_iterations=5,
                         start_prices=start)
    assert res["bound"] <= brute_force_total_jct(single).objective


def test_start_prices_of_the_wrong_length_are_refused():
    with pytest.raises(InstanceError, match="start_prices"):
        cg_lower_bound(random_total_jct_instance(4, 0), start_prices=[1.0])


def test_lagrangian_start_prices_give_about_the_lagrangian_bound():
    """On the 12-job seed-0 instance the first round at the Lagrangian start prices is already at least the
    Lagrangian bound of the whole instance at the same settings minus 1 % (a start from the master's duals is far
    below it after one round)."""
    from optsched.exact.total_jct_lp import lagrangian_lower_bound

    inst = random_total_jct_instance(12, 0)
    lag = lagrangian_lower_bound(inst, slots=300, iterations=100)
    start = lagrangian_start_prices(inst, slots=300, iterations=100)
    one = cg_lower_bound(inst, iterations=1, slots=100, lag_iterations=10, start_prices=start)
    cold = cg_lower_bound(inst, iterations=1, slots=100, lag_iterations=10)
    assert one["bound"] >= 0.99 * lag > cold["bound"]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(tiny_instances(max_jobs=3), st.data(), st.sampled_from(["first", "even", "gpus"]))
def test_split_instance_bounds_the_schedules_that_spread_one_job(inst, data, rule):
    """Schedules that run job i in shape sigma and every other job on one server cost at least the best
    single-server schedule of the split instance (two brute forces; with the part weights of ``rule`` summing to f
    times the job's weight, at least 1/f of it), and so at least the bound computed on it."""
    multi = [(i, m.shape) for i, j in enumerate(inst.jobs) for m in j.modes if len(m.shape) > 1]
    assume(multi)
    i, shape = data.draw(st.sampled_from(multi))
    w = split_weights(inst.jobs[i].weight, shape, rule)
    f = sum(w) // inst.jobs[i].weight if inst.jobs[i].weight else 1
    jobs = list(inst.jobs)
    for k, j in enumerate(jobs):
        keep = [m for m in j.modes if (m.shape == shape if k == i else len(m.shape) == 1)]
        assume(keep)
        jobs[k] = dataclasses.replace(j, modes=tuple(keep))
    restricted = brute_force_total_jct(TotalJctInstance(inst.cluster, tuple(jobs))).objective
    split = split_instance(inst, i, shape, w)
    assume(split.n_jobs <= 5)  # the brute force's size
    single = _single_only(split)
    assert single is not None
    assert brute_force_total_jct(single).objective <= f * restricted
    assert cg_lower_bound(split, iterations=100, slots=20, lag_iterations=5)["bound"] <= f * restricted


def test_split_weights_scale_the_other_jobs():
    """Part weights summing to f times the job's weight multiply every other job's weight by f (so the split
    instance's costs are f times the original's); a sum that is not a multiple is refused."""
    inst = random_total_jct_instance(6, 0)
    sub = split_instance(inst, 3, (3, 1), [3, 1])
    assert [j.weight for j in sub.jobs] == [4, 4, 4, 3, 1, 4, 4]
    with pytest.raises(InstanceError, match="weights"):
        split_instance(inst, 3, (3, 1), [1, 1, 1])
    with pytest.raises(InstanceError, match="weights"):
        split_weights(1, (3, 1), "half")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(tiny_instances(max_jobs=3), st.integers(0, 30), st.sampled_from(["first", "even", "gpus"]), st.data())
def test_spread_split_bound_is_below_the_optimum(inst, margin, rule, data):
    """The combined bound of "Spread jobs, split" (any known cost ``upper``, above or below the optimum; the
    single-server term as the brute-force optimum of the single-server schedules or the CG bound; spread bounds
    after 0-20 subgradient steps; split CG bounds with any part weights) is at most the brute-force optimum."""
    from optsched.exact.total_jct_assign import spread_bounds

    assume(sum(len(m.shape) for j in inst.jobs for m in j.modes) <= 8)
    opt = brute_force_total_jct(inst).objective
    single_inst = _single_only(inst)
    if single_inst is None:
        single = None
    elif data.draw(st.booleans()):
        single = brute_force_total_jct(single_inst).objective
    else:
        single = cg_lower_bound(inst, iterations=50, slots=20, lag_iterations=5)["bound"]
    steps = data.draw(st.integers(0, 20))
    spread = spread_bounds(inst, slots=20, iterations=steps, target=opt + margin)
    res = spread_split_bound(inst, opt + margin, single, spread, slots=20, iterations=steps, pair_slots=20,
                             pair_iterations=steps, cg_rounds=data.draw(st.integers(0, 30)), weights=rule)
    assert res["bound"] <= opt


def test_bound_proves_a_generator_instance():
    """On the 8-job seed-0 instance the bound reaches the optimum of the bundled library (18,976, proved there by
    the branch and bound), so no single-server schedule is better."""
    inst = random_total_jct_instance(8, 0)
    res = cg_lower_bound(inst, iterations=100, slots=100, lag_iterations=10)
    assert res["complete"] and res["bound"] == 18976
    single = server_instance(inst, 0, set(range(inst.n_jobs)))  # every job alone on one server: a column exists
    assert single.n_jobs == inst.n_jobs
