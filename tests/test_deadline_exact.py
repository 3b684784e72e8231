"""The exact models of paper 003's offline problem: CP-SAT against the independent brute force, the energy
upper bound (its LP against a second solver, its knapsack against enumeration), the doors."""

from __future__ import annotations

import itertools
import math

import pulp
import pytest

import optsched
from optsched.errors import InstanceError
from optsched.evaluators.deadline import evaluate
from optsched.exact import _pulp
from optsched.exact.deadline import (
    brute_force_deadline,
    deadline_time_indexed_bound,
    deadline_upper_bound,
    grid_modes,
    min_energy_gpu_s,
    solve_deadline_cpsat,
    speed_hull,
)
from optsched.generators.deadline import deadline_workload, tiny_deadline_workload
from optsched.problems.deadline import DEADLINE_TOL_S, DeadlineJob, DeadlineWorkload, job_weight, paper_cluster

SHAPES = [(3, 1, 2), (4, 2, 2), (4, 2, 3)]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n,nodes,g", SHAPES)
def test_cpsat_equals_the_brute_force_on_tiny_instances(seed, n, nodes, g):
    wl = tiny_deadline_workload(n, nodes=nodes, gpus_per_node=g, seed=seed)
    cp = solve_deadline_cpsat(wl, time_limit=20)
    bf = brute_force_deadline(wl)
    assert cp.status == optsched.SolveStatus.OPTIMAL
    assert cp.objective == bf.objective
    # both schedules pass the independent evaluator with the objective they claim, every job run is on time
    for res in (cp, bf):
        ev = evaluate(wl, res.schedule)
        assert ev.objective == res.objective and len(ev.met) == len(res.schedule)
    assert cp.objective <= deadline_upper_bound(wl).value + 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_urgency_weights_agree_and_never_count_fewer_urgent_jobs(seed):
    wl = tiny_deadline_workload(4, nodes=2, gpus_per_node=2, seed=seed)
    cp = solve_deadline_cpsat(wl, weights="urgency", time_limit=20)
    bf = brute_force_deadline(wl, weights="urgency")
    assert cp.objective == pytest.approx(bf.objective)
    ev = evaluate(wl, cp.schedule, "urgency")
    assert ev.objective == pytest.approx(sum(job_weight(wl.job(i).alpha, "urgency") for i in ev.met))
    assert cp.objective <= deadline_upper_bound(wl, weights="urgency").value + 1e-9


def test_a_hand_instance_whose_optimum_is_known():
    # one GPU, jobs of 2 grid units: a (arrives 0, alpha 1.5: deadline 3), b (arrives 1, deadline 4), c (arrives
    # 0, alpha 1: deadline 2). Whichever of a and c starts at 0 is on time; b then starts at 2 and ends at 4, on
    # time; the third cannot be: the optimum is 2 and always includes b.
    unit = 60.0
    epoch = DeadlineJob("x", "TSN", 0, 1, 1).run_time_1gpu_s

    def job(i, arr, alpha):
        return DeadlineJob(i, "TSN", arr * unit, alpha, epochs=2 * unit / epoch)

    wl = DeadlineWorkload(paper_cluster(1, 1), (job("a", 0, 1.5), job("b", 1, 1.5), job("c", 0, 1.0)))
    cp, bf = solve_deadline_cpsat(wl, time_limit=10), brute_force_deadline(wl)
    assert cp.objective == bf.objective == 2
    starts = {j.id: j.start for j in cp.schedule}
    assert len(starts) == 2 and "b" in starts


def test_grid_modes_respect_capacity_and_deadlines_and_pruning_keeps_the_optimum():
    wl = tiny_deadline_workload(4, nodes=2, gpus_per_node=3, seed=11)
    unit = wl.time_unit_s
    for j in wl.jobs:
        full = grid_modes(wl, j, unit, prune=False)
        for m in full:
            assert all(0 <= c <= 3 for c in m.vector) and m.n_gpu >= 1
            assert m.latest * unit + m.run_time_s <= j.deadline_s + DEADLINE_TOL_S
            assert (m.latest + 1) * unit + m.run_time_s > j.deadline_s + DEADLINE_TOL_S
            assert (m.units - 1) * unit < m.run_time_s <= m.units * unit + 1e-6
        assert set(grid_modes(wl, j, unit)) <= set(full)
    assert (solve_deadline_cpsat(wl, prune=False, time_limit=20).objective
            == solve_deadline_cpsat(wl, time_limit=20).objective)


def test_brute_force_refuses_large_instances_and_a_bad_time_unit():
    with pytest.raises(InstanceError, match="at most 5 jobs"):
        brute_force_deadline(tiny_deadline_workload(6))
    with pytest.raises(InstanceError, match="time_unit_s"):
        solve_deadline_cpsat(tiny_deadline_workload(2), time_unit_s=0)


# -- the upper bound -----------------------------------------------------------------------------------------
def _energy_lp(wl, job, solver):
    """The same minimum-energy LP, built from scratch and solved by PuLP (a second solver)."""
    big = max(wl.capacities)
    window = job.deadline_s + DEADLINE_TOL_S - job.arrival_s
    w = job.work_batches
    p = pulp.LpProblem("e", pulp.LpMinimize)
    tau = {n: _pulp.var(p, f"t{n}", 0, None) for n in range(1, wl.total_gpus + 1)}
    speed = {n: w / wl.run_time_s(job, n, cross=n > big) for n in tau}
    p += pulp.lpSum(n * tau[n] for n in tau)
    p += pulp.lpSum(tau.values()) <= window
    p += pulp.lpSum(speed[n] * tau[n] for n in tau) == w
    status = _pulp.solve(p, solver)
    return pulp.value(p.objective) if status == "optimal" else math.inf


@pytest.mark.parametrize("model", ["AlexNet", "VGG-16", "ResNet-50", "TSN"])
@pytest.mark.parametrize("alpha", [0.5, 1.0, 1.5])
def test_min_energy_equals_the_lp_solved_by_highs(model, alpha):
    wl = DeadlineWorkload(paper_cluster(2, 4), (DeadlineJob("a", model, 0, alpha, 3),))
    ours = min_energy_gpu_s(wl, wl.jobs[0])
    lp = _energy_lp(wl, wl.jobs[0], "highs")
    if math.isinf(lp):
        assert math.isinf(ours)
    else:
        assert ours == pytest.approx(lp, rel=1e-6)
    if alpha >= 1:  # one GPU meets the deadline and no count is cheaper in GPU-seconds than one
        assert ours == pytest.approx(wl.jobs[0].run_time_1gpu_s, rel=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_the_bound_equals_its_knapsack_solved_by_enumeration(seed):
    wl = tiny_deadline_workload(4, nodes=2, gpus_per_node=2, seed=seed, max_release_units=3)
    e = {j.id: min_energy_gpu_s(wl, j) for j in wl.jobs}
    G = wl.total_gpus
    best = 0
    for r in range(len(wl.jobs) + 1):
        for subset in itertools.combinations(wl.jobs, r):
            if any(math.isinf(e[j.id]) for j in subset):
                continue
            ok = all(sum(e[j.id] for j in subset if j.arrival_s >= a.arrival_s and j.deadline_s <= b.deadline_s)
                     <= G * (b.deadline_s - a.arrival_s) + 1e-3 for a in subset for b in subset
                     if b.deadline_s > a.arrival_s)
            if ok:
                best = max(best, r)
    assert deadline_upper_bound(wl).value == best


def test_the_bound_counts_a_full_cluster_once():
    # one GPU, two jobs whose windows coincide and each need the whole window: at most one is on time
    wl = DeadlineWorkload(paper_cluster(1, 1), (DeadlineJob("a", "TSN", 0, 1.0, 2), DeadlineJob("b", "TSN", 0, 1.0, 2)))
    b = deadline_upper_bound(wl)
    assert b.value == 1 and b.reachable == 2 and b.status == optsched.SolveStatus.OPTIMAL


def test_the_bound_scales_to_the_default_trace():
    wl = deadline_workload(seed=0)
    b = deadline_upper_bound(wl, time_limit=20)
    assert 0 < b.value <= b.reachable <= len(wl) - len(wl.unreachable()) + 1e-9


# -- the time-indexed bound (docs/formulations/deadline.md, "Time-indexed bound") -----------------------------
@pytest.mark.parametrize("seed", range(6))
def test_the_time_indexed_bound_sits_between_every_schedule_and_the_energy_bound(seed):
    from optsched.sim import simulate

    wl = tiny_deadline_workload(4, nodes=2, gpus_per_node=2, seed=seed, max_release_units=3)
    ti = deadline_time_indexed_bound(wl)
    assert ti.status == optsched.SolveStatus.OPTIMAL
    # a second solver agrees; it is never above the energy bound (proved) and never below a schedule
    assert deadline_time_indexed_bound(wl, solver="CBC").value == ti.value
    assert ti.value <= deadline_upper_bound(wl).value
    assert brute_force_deadline(wl).objective <= ti.value
    for policy in ("elasticflow", "elasticflow-noadmit", "drs", "edf-elastic"):
        assert simulate(wl, scheduler=policy).custom["deadline"]["deadlines_met"] <= ti.value, policy


def test_the_speed_hull_is_concave_and_dominates_every_count():
    wl = deadline_workload(seed=0)
    for job in wl.jobs[:12]:
        hull = speed_hull(wl, job)
        pts = [(0, 0.0)] + hull
        slopes = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(pts, pts[1:])]
        assert all(x >= y - 1e-15 for x, y in zip(slopes, slopes[1:]))  # concave
        big = max(wl.capacities)
        for n in range(1, min(wl.total_gpus, job.max_gpus) + 1):  # every count on or under the hull
            u = max(p for p in pts if p[0] <= n)
            v = min((p for p in pts if p[0] >= n), default=u)
            env = u[1] if v[0] == u[0] else u[1] + (v[1] - u[1]) * (n - u[0]) / (v[0] - u[0])
            assert 1.0 / wl.run_time_s(job, n, cross=n > big) <= env * (1 + 1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_the_sgs_heuristic_is_feasible_and_at_most_the_optimum(seed):
    from optsched.algorithms.deadline_sgs import deadline_sgs

    wl = tiny_deadline_workload(5, nodes=2, gpus_per_node=2, seed=seed, max_release_units=3)
    a = deadline_sgs(wl, iterations=30, seed=1)
    value = evaluate(wl, a).objective  # the evaluator checks capacity, arrivals and counts the deadlines
    assert value <= brute_force_deadline(wl).objective
    assert deadline_sgs(wl, iterations=30, seed=1) == a  # seeded: the same schedule
    assert optsched.solve(wl, "deadline-sgs", seed=1, iterations=30).objective == value


# -- the doors -----------------------------------------------------------------------------------------------
def test_solve_and_evaluate_through_the_doors(tmp_path):
    wl = optsched.generate("deadline", lam=2, window_h=2, seed=1)
    assert optsched.registry.problem_of(wl).name == "deadline"
    tiny = tiny_deadline_workload(3, seed=2)
    res = optsched.solve(tiny)  # the default: deadline-cpsat
    assert res.algorithm == "deadline-cpsat" and res.status == optsched.SolveStatus.OPTIMAL
    assert optsched.evaluate(tiny, res.schedule).objective == res.objective
    assert optsched.solve(tiny, "deadline-brute").objective == res.objective
    assert res.info["upper_bound"] == res.objective
    p = tmp_path / "t.json"
    optsched.save(tiny, p)
    assert optsched.load(p) == tiny
    assert "deadline-cpsat" in optsched.list_algorithms("deadline")
