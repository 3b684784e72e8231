"""The branch and bound for total (weighted) completion time (optsched.exact.total_jct_bnb) against the brute
force and CP-SAT, its lower bounds against the optimum, and its CP-SAT companion."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import optsched
from optsched.cluster import Cluster, Server
from optsched.errors import InstanceError
from optsched.evaluators.total_jct import check_schedule
from optsched.exact.total_jct import brute_force_total_jct, solve_total_jct
from optsched.exact.total_jct_bnb import root_lower_bound, solve_total_jct_bnb, spt_total
from optsched.generators.total_jct import random_total_jct_instance
from optsched.problems.total_jct import Mode, TotalJctInstance, TotalJctJob, shapes_of
from optsched.result import SolveStatus


@st.composite
def tiny_instances(draw, max_jobs: int = 5):
    """1-3 servers of 1-4 GPUs (possibly unequal), 1-5 jobs with a random subset of their shapes, durations
    0..6 (zero-length modes included), releases 0..5 and weights 0..3."""
    caps = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    cluster = Cluster(tuple(Server(f"s{m}", c) for m, c in enumerate(caps)))
    jobs = []
    for i in range(draw(st.integers(1, max_jobs))):
        g = draw(st.integers(1, sum(caps)))
        shapes = shapes_of(g, caps)
        chosen = draw(st.lists(st.sampled_from(shapes), min_size=1, max_size=len(shapes), unique=True))
        modes = tuple(Mode(s, draw(st.integers(0, 6))) for s in chosen)
        jobs.append(TotalJctJob(f"j{i}", draw(st.integers(0, 5)), g, modes, draw(st.integers(0, 3))))
    return TotalJctInstance(cluster, tuple(jobs))


def _weighted_wide_jobs() -> TotalJctInstance:
    # both jobs need the whole server (a class of width 1, one machine) and their weights differ: the
    # k-machine bound must not use SPT with one weight for all (3 * (1 + 11) = 36 would exceed the optimum 3)
    return TotalJctInstance(Cluster.homogeneous(1, 2), (
        TotalJctJob("a", 0, 2, (Mode((2,), 1),), 3), TotalJctJob("b", 0, 2, (Mode((2,), 10),), 0),
        TotalJctJob("c", 0, 1, (Mode((1,), 2),), 1)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances())
@example(_weighted_wide_jobs())
def test_search_equals_brute_force_and_root_bound_is_below(inst):
    bf = brute_force_total_jct(inst)
    res = solve_total_jct_bnb(inst, num_workers=1, time_limit=30)
    assert res.status == SolveStatus.OPTIMAL and res.info["proved_by"] == "search"
    assert res.objective == bf.objective == res.lower_bound
    assert check_schedule(inst, res.schedule) == res.objective
    assert inst.trivial_lower_bound() <= root_lower_bound(inst) <= bf.objective


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 6), min_size=1, max_size=3), st.lists(st.integers(0, 5), min_size=1, max_size=5))
def test_spt_is_optimal_on_machines_with_availability_times(avail, durations):
    """The k-machine bound rests on SPT being optimal for P, NC_inc || sum C_j: check it by enumerating every
    assignment of the jobs to machines (on each machine the order is SPT, optimal for one machine)."""
    best = min(
        sum(sum(itertools.accumulate(sorted(d for d, m in zip(durations, assign) if m == k), initial=avail[k]))
            - avail[k] for k in range(len(avail)))
        for assign in itertools.product(range(len(avail)), repeat=len(durations)))
    assert spt_total(list(avail), sorted(durations)) == best


@pytest.mark.parametrize("n, seed", [(7, 0), (7, 1), (8, 2)])
def test_search_equals_cpsat_on_generator_instances(n, seed):
    inst = random_total_jct_instance(n, seed)
    cp = solve_total_jct(inst, time_limit=60)
    assert cp.status == SolveStatus.OPTIMAL
    res = solve_total_jct_bnb(inst, num_workers=1, time_limit=60)
    assert res.status == SolveStatus.OPTIMAL and res.objective == cp.objective
    assert root_lower_bound(inst) <= res.objective


def test_companion_finds_the_same_optimum_and_the_limit_is_reported():
    inst = random_total_jct_instance(8, 1)
    alone = solve_total_jct_bnb(inst, num_workers=1, time_limit=60)
    both = solve_total_jct_bnb(inst, num_workers=2, time_limit=60, seed=0)
    assert both.status == SolveStatus.OPTIMAL and both.objective == alone.objective
    assert both.info["proved_by"] in ("search", "cpsat") and both.info["found_by"] in ("greedy", "search", "cpsat")
    assert check_schedule(inst, both.schedule) == both.objective
    cut = solve_total_jct_bnb(random_total_jct_instance(12, 2), num_workers=1, time_limit=0.05)
    assert cut.status == SolveStatus.TIME_LIMIT
    assert cut.lower_bound <= cut.objective
    assert cut.info["proved_by"] is None


def test_registry_and_bad_workers():
    inst = random_total_jct_instance(5, 3)
    res = optsched.solve(inst, "total-jct-bnb", time_limit=30)
    assert res.algorithm == "total-jct-bnb" and res.objective == brute_force_total_jct(inst).objective
    with pytest.raises(InstanceError, match="num_workers"):
        solve_total_jct_bnb(inst, num_workers=0)


def test_heartbeat_reports_progress_and_the_end():
    import io

    from optsched.exact._cpsat import heartbeat

    out = io.StringIO()
    with heartbeat(0.0, out):  # a line at every look at the clock
        res = solve_total_jct_bnb(random_total_jct_instance(10, 1), num_workers=1, time_limit=60)
    lines = out.getvalue().splitlines()
    assert res.info["nodes"] >= 256 and any(line.startswith("branch and bound: still solving") for line in lines)
    assert lines[-1].startswith("branch and bound: done in") and f"best {res.objective}" in lines[-1]
