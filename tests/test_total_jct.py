"""Exact total (weighted) completion time with placement choice (optsched.exact.total_jct): CP-SAT against
the independent brute force (serial schedule generation over every order and placement), the schedule
checker, the pipeline-job constructor, validation and the registry."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from optsched.algorithms.total_jct import greedy_total_jct
from optsched.cluster import Cluster, Server
from optsched.errors import InstanceError, ScheduleError
from optsched.evaluators.total_jct import check_schedule
from optsched.exact.total_jct import brute_force_total_jct, solve_total_jct
from optsched.generators.total_jct import from_pipeline_jobs
from optsched.problems.total_jct import Mode, TotalJctInstance, TotalJctJob, concrete_placements, shapes_of
from optsched.result import Schedule, ScheduledJob, SolveStatus


@st.composite
def tiny_instances(draw, max_jobs: int = 4, weighted: bool = False):
    """2-3 servers of 1-3 GPUs (possibly unequal), 1-4 jobs, each with a random subset of its shapes and
    random integer durations (not monotone in the shape: any table is a valid instance)."""
    caps = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    cluster = Cluster(tuple(Server(f"s{m}", c) for m, c in enumerate(caps)))
    n = draw(st.integers(1, max_jobs))
    jobs = []
    for i in range(n):
        g = draw(st.integers(1, sum(caps)))
        shapes = shapes_of(g, caps)
        chosen = draw(st.lists(st.sampled_from(shapes), min_size=1, max_size=len(shapes), unique=True))
        modes = tuple(Mode(s, draw(st.integers(1, 5))) for s in chosen)
        w = draw(st.integers(0, 3)) if weighted else 1
        jobs.append(TotalJctJob(f"j{i}", draw(st.integers(0, 4)), g, modes, w))
    return TotalJctInstance(cluster, tuple(jobs))


def _two_server_example() -> TotalJctInstance:
    # a (2 GPUs) is faster split than packed, b needs a whole server, c arrives at 1
    return TotalJctInstance(Cluster.homogeneous(2, 2), (
        TotalJctJob("a", 0, 2, (Mode((2,), 4), Mode((1, 1), 3))),
        TotalJctJob("b", 0, 2, (Mode((2,), 2),)),
        TotalJctJob("c", 1, 1, (Mode((1,), 2),))))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances())
@example(_two_server_example())
def test_cpsat_equals_brute_force(inst):
    cp = solve_total_jct(inst, time_limit=20)
    bf = brute_force_total_jct(inst)
    assert cp.status == SolveStatus.OPTIMAL
    assert cp.objective == bf.objective == cp.lower_bound
    # both schedules pass the independent checker with the objective they report
    assert check_schedule(inst, cp.schedule) == cp.objective
    assert check_schedule(inst, bf.schedule) == bf.objective
    assert inst.trivial_lower_bound() <= cp.objective
    assert all(sj.completion <= inst.horizon() for sj in cp.schedule)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances(weighted=True))
def test_weighted_cpsat_equals_brute_force(inst):
    assert solve_total_jct(inst, time_limit=20).objective == brute_force_total_jct(inst).objective


@settings(max_examples=25, deadline=None)
@given(tiny_instances())
def test_symmetry_breaking_and_hints_do_not_change_the_optimum(inst):
    plain = solve_total_jct(inst, time_limit=20, symmetry=False, hint=False)
    assert plain.objective == solve_total_jct(inst, time_limit=20).objective


def test_two_server_example_by_hand():
    # optimum 10, e.g. b on s0 [0,2), a packed on s1 [0,4), c on s0 [2,4): 2 + 4 + 4; the lower bound
    # sum (r + d_min) = 3 + 2 + 3 = 8 is not attained: b and a cannot both start at 0 with a split
    inst = _two_server_example()
    res = solve_total_jct(inst, time_limit=10)
    assert res.objective == 10 and inst.trivial_lower_bound() == 8
    # c released at 0 and a only split: b s0 [0,2), c s1 [0,2), a (1,1) [2,5): 2 + 2 + 5 = 9 (a needs a GPU on
    # each server, b a whole server, so a and b never overlap; a first gives 3 + 5 + 2 = 10)
    forced = TotalJctInstance(inst.cluster, (TotalJctJob("a", 0, 2, (Mode((1, 1), 3),)), inst.jobs[1],
                                             TotalJctJob("c", 0, 1, (Mode((1,), 2),))))
    assert solve_total_jct(forced, time_limit=10).objective == 9


def test_greedy_is_feasible_and_an_upper_bound():
    inst = _two_server_example()
    g = greedy_total_jct(inst)
    sched = Schedule(tuple(ScheduledJob(jid, t, {inst.cluster.server_ids[m]: n for m, n in enumerate(u) if n})
                           for jid, (k, u, t) in g.items()))
    assert check_schedule(inst, sched) >= solve_total_jct(inst, time_limit=10).objective


def test_checker_rejects_infeasible_schedules():
    inst = _two_server_example()
    good = solve_total_jct(inst, time_limit=10).schedule
    a, b, c = (good[j] for j in "abc")
    early = Schedule((ScheduledJob("c", 0, dict(c.placement)), a, b))
    with pytest.raises(ScheduleError, match="before its release"):
        check_schedule(inst, early)
    overlap = Schedule((ScheduledJob("a", 0, {"s0": 2}), ScheduledJob("b", 0, {"s0": 2}),
                        ScheduledJob("c", 5, {"s1": 1})))
    with pytest.raises(ScheduleError, match="server s0 uses 4"):
        check_schedule(inst, overlap)
    bad_shape = Schedule((ScheduledJob("a", 0, {"s0": 1, "s1": 1}), ScheduledJob("b", 0, {"s0": 1, "s1": 1}),
                          ScheduledJob("c", 5, {"s1": 1})))
    with pytest.raises(ScheduleError, match="not a mode"):
        check_schedule(inst, bad_shape)
    with pytest.raises(ScheduleError, match="lists jobs"):
        check_schedule(inst, Schedule((a, b)))


def test_time_limit_reports_status_and_bound():
    # 5 jobs on 3 x 2 GPUs with many modes: a near-zero limit cannot prove optimality
    caps = [2, 2, 2]
    cl = Cluster.homogeneous(3, 2)
    jobs = tuple(TotalJctJob(f"j{i}", i % 3, g, tuple(Mode(s, 3 + (i + len(s)) % 4) for s in shapes_of(g, caps)))
                 for i, g in enumerate([4, 3, 2, 5, 1]))
    inst = TotalJctInstance(cl, jobs)
    res = solve_total_jct(inst, time_limit=1e-6)
    assert res.status in (SolveStatus.TIME_LIMIT, SolveStatus.UNKNOWN, SolveStatus.OPTIMAL)
    if res.objective is not None:
        assert res.lower_bound <= res.objective
        assert check_schedule(inst, res.schedule) == res.objective
    full = solve_total_jct(inst, time_limit=30)
    assert full.status == SolveStatus.OPTIMAL and full.objective == brute_force_total_jct(inst).objective


def test_registry_and_solve():
    import optsched
    from optsched import registry

    inst = _two_server_example()
    assert optsched.solve(inst, "total-jct-cpsat", time_limit=10).objective == 10
    assert optsched.solve(inst, "total-jct-brute").objective == 10
    assert optsched.solve(inst).algorithm == "total-jct-bnb"   # the problem's own default
    greedy = optsched.solve(inst, "total-jct-greedy")
    assert greedy.status == SolveStatus.FEASIBLE and greedy.objective >= 10
    assert registry.get_algorithm("total-jct-cpsat").exact
    assert not registry.get_algorithm("total-jct-greedy").exact


def test_shapes_and_concrete_placements():
    assert shapes_of(4, [2, 2, 2]) == [(2, 2), (2, 1, 1)]
    assert shapes_of(5, [2, 2]) == []
    assert concrete_placements((2,), [1, 2, 2]) == [(0, 2, 0), (0, 0, 2)]
    assert len(concrete_placements((1, 1), [2, 2, 2])) == 3


@pytest.mark.parametrize("mutate, field", [
    (lambda: TotalJctJob("a", -1, 1, (Mode((1,), 1),)), "jobs[0].release"),
    (lambda: TotalJctJob("a", 0, 2, (Mode((1,), 1),)), "jobs[0].modes[0].shape"),
    (lambda: TotalJctJob("a", 0, 2, (Mode((1, 1), 1), Mode((1, 1), 2))), "jobs[0].modes[1].shape"),
    (lambda: TotalJctJob("a", 0, 2, (Mode((1, 1), 1.5),)), "jobs[0].modes[0].duration"),
    (lambda: TotalJctJob("a", 0, 2, ()), "jobs[0].modes"),
    (lambda: TotalJctJob("a", 0, 2, (Mode((1, 2), 1),)), "jobs[0].modes[0].shape"),
    (lambda: TotalJctJob("a", 0, 1, (Mode((1,), 1),), weight=-1), "jobs[0].weight"),
])
def test_validation_names_field_and_job(mutate, field):
    with pytest.raises(InstanceError) as e:
        TotalJctInstance(Cluster.homogeneous(2, 2), (mutate(),))
    assert e.value.field == field and e.value.job == "a"
    with pytest.raises(InstanceError) as e:
        TotalJctInstance(Cluster.homogeneous(1, 2), (TotalJctJob("a", 0, 1, (Mode((1,), 1),)),
                                                     TotalJctJob("a", 0, 1, (Mode((1,), 1),))))
    assert e.value.field == "jobs[1].id"


# -- from pipeline jobs ---------------------------------------------------------------------------------------
def _pipeline_jobs():
    from optsched.models import catalogue_job

    return [("a", 0.0, catalogue_job("VGG19:dp4"), 60), ("b", 0.5, catalogue_job("ResNet152:1gpu"), 200),
            ("c", 1.0, catalogue_job("VGG19:1gpu"), 100)]


def test_from_pipeline_jobs_modes_rounding_and_alpha():
    from optsched.perf.pipeline import Network, alpha_max

    jobs = _pipeline_jobs()
    up = from_pipeline_jobs(jobs, (2, 4), time_unit_s=0.25)
    down = from_pipeline_jobs(jobs, (2, 4), time_unit_s=0.25, rounding="down")
    he = from_pipeline_jobs(jobs, (2, 4), time_unit_s=0.25, alpha="heavy-edge")
    net = Network.from_gbps(4, 10.0, 300.0)
    for ju, jd, jh, (_, r, spec, n) in zip(up.jobs, down.jobs, he.jobs, jobs):
        assert [m.shape for m in ju.modes] == shapes_of(spec.gpus, [4, 4])
        assert ju.release * 0.25 >= r >= jd.release * 0.25
        for mu, md, mh in zip(ju.modes, jd.modes, jh.modes):
            assert mu.duration * 0.25 >= n * mu.alpha / 1000 >= md.duration * 0.25
            assert mu.alpha <= mh.alpha + 1e-9           # the exact alpha per shape is a minimum
            assert mu.alpha <= alpha_max(spec, net) + 1e-9  # B_intra >= B_inter/g here
        assert ju.alpha_min <= ju.alpha_tilde_min + 1e-9
    # the optimum of the rounded-down instance is below that of the rounded-up one (both in seconds)
    lo = solve_total_jct(down, time_limit=20).objective * 0.25
    hi = solve_total_jct(up, time_limit=20).objective * 0.25
    assert lo <= hi
    # stage counts ride along into the schedule
    res = solve_total_jct(up, time_limit=20)
    assert res.schedule["a"].stage_placement is not None
    assert sum(sum(c) for c in res.schedule["a"].stage_placement.values()) == 4


def test_from_pipeline_jobs_errors():
    jobs = _pipeline_jobs()
    with pytest.raises(InstanceError) as e:
        from_pipeline_jobs(jobs, (2, 4), alpha="fast")
    assert e.value.field == "alpha"
    with pytest.raises(InstanceError) as e:
        from_pipeline_jobs([("x", 0.0, "VGG19", 10)], (2, 4))
    assert e.value.field == "jobs[0].spec" and e.value.job == "x"
    with pytest.raises(InstanceError) as e:
        from_pipeline_jobs(jobs, Cluster((Server("a", 2), Server("b", 4))))
    assert e.value.field == "cluster"
