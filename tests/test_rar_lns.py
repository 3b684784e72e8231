"""``optsched.exact.rar_lns``: the order search and the LNS on R1 return schedules the evaluator accepts at the
makespan they report, never worse than their start and never better than the optimum (brute force, the
time-indexed model). Deterministic CP-SAT limits and counted iterations only."""

from __future__ import annotations

from hypothesis import given, settings

from optsched import evaluate
from optsched.exact import _cpsat
from optsched.exact.rar_brute import brute_force
from optsched.exact.rar_cpsat import serial_schedule, solve_rar_cpsat
from optsched.exact.rar_interval import build_interval_model
from optsched.exact.rar_lns import improve_order, lns_r1, sched_order
from optsched.exact.rar_sgs import list_schedule
from optsched.generators.rar import contended_rar_instance
from optsched.result import Schedule, ScheduledJob, SolveStatus
from strategies import micro_rar_instances
from test_exact_rar import contention_pair

STEP = _cpsat.Params(deterministic_limit=1.0, num_workers=1, seed=0)


def r1(inst, schedule):
    """R1 over the schedule's makespan, as exact-interval gives it to the LNS."""
    return build_interval_model(inst, evaluate(inst, schedule).makespan, restriction=True, symmetry=False)


def test_sched_order_is_by_start():
    inst = contention_pair()
    sched = Schedule((ScheduledJob("j0", 4, {"s0": 2, "s1": 1}), ScheduledJob("j1", 0, {"s1": 1, "s2": 2})))
    assert sched_order(inst, sched) == [1, 0]


def test_order_search_never_worse_and_scored():
    for seed in range(3):
        inst = contended_rar_instance(8, 3, seed, iterations=(60, 300), horizon=400)
        order = list(range(inst.n_jobs))
        start = evaluate(inst, list_schedule(inst, order)).makespan
        ms, sched, found = improve_order(inst, order, iterations=60, seed=seed)
        assert ms <= start
        assert evaluate(inst, sched).makespan == ms
        assert sorted(found) == order  # a permutation of the jobs
        assert evaluate(inst, list_schedule(inst, found)).makespan == ms  # the order returned gives it again


@settings(max_examples=15, deadline=None)
@given(micro_rar_instances())
def test_lns_between_optimum_and_start(inst):
    opt = brute_force(inst).makespan
    start = serial_schedule(inst)
    ms0 = evaluate(inst, start).makespan
    ms, sched, stats = lns_r1(inst, start, r1(inst, start), steps=8, step_params=STEP, seed=0)
    assert opt <= ms <= ms0
    assert evaluate(inst, sched).makespan == ms
    assert stats["steps"] <= 8


def test_lns_reaches_the_time_indexed_optimum_on_contended_instances():
    # from the serial schedule (every job alone): the LNS must find the optimum the time-indexed model proves
    for seed in range(3):
        inst = contended_rar_instance(5, 2, seed, iterations=(60, 300), horizon=400)
        ref = solve_rar_cpsat(inst, num_workers=1, deterministic_limit=20.0)
        assert ref.status == SolveStatus.OPTIMAL
        start = serial_schedule(inst)
        ms, sched, _ = lns_r1(inst, start, r1(inst, start), steps=30, step_params=STEP, seed=seed)
        assert evaluate(inst, sched).makespan == ms
        assert ms >= ref.objective
        assert ms <= 1.05 * ref.objective, (inst.name, ms, ref.objective)


def test_lns_stops_at_target():
    inst = contended_rar_instance(5, 2, 0, iterations=(60, 300), horizon=400)
    start = serial_schedule(inst)
    ms0 = evaluate(inst, start).makespan
    _, _, stats = lns_r1(inst, start, r1(inst, start), steps=30, step_params=STEP, target=ms0)
    assert stats["steps"] == 0  # the start already meets the target: no re-solve


def test_lns_stops_after_patience_steps_without_improvement():
    # from the optimum (the time-indexed model's schedule) no step can improve the makespan, and soon none the sum
    # of completions either: the LNS stops after `patience` idle steps in a row, well before its step budget
    inst = contended_rar_instance(5, 2, 1, iterations=(60, 300), horizon=400)
    ref = solve_rar_cpsat(inst, num_workers=1, deterministic_limit=20.0)
    assert ref.status == SolveStatus.OPTIMAL and ref.schedule is not None
    ms, _, stats = lns_r1(inst, ref.schedule, r1(inst, ref.schedule), steps=200, step_params=STEP, seed=0,
                          patience=3)
    assert ms == ref.objective
    assert stats["stalled"] == 3
    assert stats["steps"] <= stats["improved"] + 3 * (stats["improved"] + 1)
    assert stats["steps"] < 200
    _, _, free = lns_r1(inst, ref.schedule, r1(inst, ref.schedule), steps=8, step_params=STEP, seed=0)
    assert "stalled" not in free and free["steps"] == 8  # without patience: every step of the budget


def test_lns_is_reproducible():
    # deterministic limits and a seeded generator: the same steps, the same schedule
    inst = contended_rar_instance(8, 3, 1, iterations=(60, 300), horizon=400)
    start = serial_schedule(inst)
    a = lns_r1(inst, start, r1(inst, start), steps=6, step_params=STEP, seed=3)
    b = lns_r1(inst, start, r1(inst, start), steps=6, step_params=STEP, seed=3)
    assert a[0] == b[0] and a[1] == b[1] and a[2] == b[2]
    assert a[2]["steps"] >= 1 and evaluate(inst, a[1]).makespan == a[0]


def test_lns_objective_puts_the_makespan_first():
    # the LNS minimises K M + sum_j C_j: one slot of makespan must outweigh any sum of completions (K > n H), or a
    # step may trade a longer makespan for shorter completions and be thrown away
    inst = contended_rar_instance(8, 3, 1, iterations=(60, 300), horizon=400)
    start = serial_schedule(inst)
    im = r1(inst, start)
    horizon = evaluate(inst, start).makespan
    lns_r1(inst, start, im, steps=0, step_params=STEP)
    obj = im.model.proto.objective
    coef = dict(zip(obj.vars, obj.coeffs))
    assert coef[im.makespan.index] > inst.n_jobs * horizon
    assert all(coef[im.end[j.id].index] == 1 for j in inst.jobs)


def test_complete_r1_hint_is_a_solution_of_r1_keeping_the_schedule():
    # every variable of R1 is hinted, the hint is a solution of R1 (CP-SAT accepts it with every variable fixed to
    # its hint), and it keeps the schedule's starts and GPUs; a schedule R1 rejects adds no hint
    from ortools.sat.python import cp_model

    from optsched.exact.rar_lns import hint_r1_solution

    for seed in range(3):
        inst = contended_rar_instance(8, 3, seed, iterations=(60, 300), horizon=400)
        start = serial_schedule(inst)
        im = r1(inst, start)
        run = hint_r1_solution(inst, start, im, STEP)
        assert run.found
        hint = dict(zip(im.model.proto.solution_hint.vars, im.model.proto.solution_hint.values))
        assert sorted(hint) == list(range(len(im.model.proto.variables)))
        for sj in start.jobs:
            assert hint[im.start[sj.id].index] == sj.start
            for s in inst.cluster.server_ids:
                assert hint[im.gpus[sj.id, s].index] == sj.placement.get(s, 0)
        solver = cp_model.CpSolver()
        solver.parameters.fix_variables_to_their_hinted_value = True
        solver.parameters.num_workers = 1
        assert solver.solve(im.model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    # a schedule R1's horizon cannot hold (a start one slot before its end): no solution, no hint
    inst = contention_pair()
    im = build_interval_model(inst, 20, restriction=True, symmetry=False)
    late = Schedule((ScheduledJob("j0", 19, {"s0": 2, "s1": 1}), ScheduledJob("j1", 0, {"s1": 1, "s2": 2})))
    run = hint_r1_solution(inst, late, im, STEP)
    assert not run.found and len(im.model.proto.solution_hint.vars) == 0
