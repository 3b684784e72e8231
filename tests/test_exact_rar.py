"""Exact RAR-DDLS: CP-SAT vs brute force vs the evaluator, the feasibility MILP (CBC vs HiGHS vs enumeration),
and the certified lower bounds (``docs/formulations/rar-ddls-cpsat.md``,
``docs/formulations/rar-feasibility-milp.md``)."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched import evaluate, load, solve
from optsched.bounds import duration_range, lower_bound, makespan_lower_bound, phi_table
from optsched.cluster import Cluster, Server
from optsched.exact.rar_brute import brute_force
from optsched.exact.rar_cpsat import canonical, greedy_schedule, serial_schedule, solve_rar_cpsat
from optsched.exact.rar_milp import (
    brute_min_max_load,
    feasibility_milp,
    lp_closed_form,
    lp_lower_bound,
    milp_lower_bound,
    min_max_load,
)
from optsched.io import bundled_path
from optsched.problems.rar import RarInstance, RarJob
from optsched.result import Schedule, ScheduledJob, SolveStatus
from strategies import micro_rar_instances

ROOT = Path(__file__).resolve().parents[1]
FAST = dict(num_workers=1, time_limit=30)
MODEL_ONLY = dict(heuristics=False, greedy=False, hint=False, shortcut=False)  # no help: the model alone


def contention_pair() -> RarInstance:
    """Two 3-GPU jobs on three 2-GPU servers: each must split; together they share a server.

    Hand computation (w = 3, ring = (w-1) m / w = 0.1, compute 0.1, xi_1 = 1, alpha = 1, b^e = 1):
    alone tau = 2*0.1/1 + 0.1 = 0.3 -> 3 iterations/slot; together p = 2, f = 2 + 1 = 3, tau = 0.6 + 0.1 = 0.7
    -> 1 iteration/slot. F = 6 each. Run together: 6 slots. One after the other: 2 + 2 = 4 slots. Optimum 4:
    12 iterations are needed, a slot makes at most 3 of them (3 alone, 1 + 1 together), so 3 slots make <= 9.
    """
    cluster = Cluster((Server("s0", 2), Server("s1", 2), Server("s2", 2)), intra_bandwidth=100.0,
                      inter_bandwidth=1.0)
    jobs = tuple(RarJob(f"j{i}", gpus=3, iterations=6, gradient_size=0.15, batch_size=1,
                        forward_time_per_sample=0.0, backward_time=0.1) for i in range(2))
    return RarInstance(cluster, horizon=20, jobs=jobs, reduce_speed=1e12, contention_xi=1.0, overhead_xi=0.0,
                       degradation_alpha=1.0, name="contention-pair")


# -- CP-SAT against hand computation, brute force and the evaluator ---------------------------------------
def test_contention_pair_hand_computed():
    inst = contention_pair()
    assert phi_table(inst, inst.jobs[0])[2][1:] == (3, 1)
    together = Schedule((ScheduledJob("j0", 0, {"s0": 2, "s1": 1}), ScheduledJob("j1", 0, {"s1": 1, "s2": 2})))
    assert evaluate(inst, together).makespan == 6
    res = solve_rar_cpsat(inst, **FAST, **MODEL_ONLY)
    assert (res.status, res.objective, res.lower_bound) == (SolveStatus.OPTIMAL, 4, 4)
    assert evaluate(inst, res.schedule).makespan == 4
    assert brute_force(inst, max_servers=3).makespan == 4
    # the two jobs never overlap in the optimum (any overlap costs iterations)
    a, b = sorted(res.schedule.jobs, key=lambda j: j.start)
    assert b.start >= a.completion


@settings(max_examples=30)
@given(micro_rar_instances())
def test_cpsat_equals_brute_force(inst):
    br = brute_force(inst)
    res = solve_rar_cpsat(inst, **FAST, **MODEL_ONLY)
    assert res.status == SolveStatus.OPTIMAL
    assert res.objective == br.makespan == res.lower_bound
    assert evaluate(inst, res.schedule).makespan == res.objective
    assert evaluate(inst, br.schedule).makespan == br.makespan


@settings(max_examples=10)
@given(micro_rar_instances(max_jobs=5, max_servers=3, max_iterations=80))
def test_cpsat_optimum_scored_by_evaluator_and_below_heuristics(inst):
    res = solve_rar_cpsat(inst, num_workers=2, time_limit=30)
    assert res.status == SolveStatus.OPTIMAL
    assert evaluate(inst, res.schedule).makespan == res.objective
    for sched in (serial_schedule(inst), greedy_schedule(inst)):
        assert evaluate(inst, sched).makespan >= res.objective
    # the optimum found without any help from incumbents is the same number
    alone = solve_rar_cpsat(inst, num_workers=2, time_limit=30, **MODEL_ONLY)
    assert alone.status == SolveStatus.OPTIMAL and alone.objective == res.objective


def test_symmetry_breaking_keeps_optimum():
    inst = contention_pair()
    with_sym = solve_rar_cpsat(inst, **FAST, **MODEL_ONLY, symmetry=True)
    without = solve_rar_cpsat(inst, **FAST, **MODEL_ONLY, symmetry=False)
    assert with_sym.objective == without.objective == 4
    # canonical() only permutes equal servers: same makespan
    sched = Schedule((ScheduledJob("j0", 0, {"s1": 2, "s2": 1}), ScheduledJob("j1", 2, {"s0": 1, "s2": 2})))
    assert evaluate(inst, canonical(inst, sched)).makespan == evaluate(inst, sched).makespan


@given(micro_rar_instances(max_jobs=3, max_servers=2))
@settings(max_examples=25)
def test_evaluator_monotone_in_added_jobs(inst):
    """The fact behind the brute force's pruning and the model's relaxed progress constraint: adding a job
    never makes another job finish earlier (contention only grows)."""
    if inst.n_jobs < 2:
        return
    sched = greedy_schedule(inst)
    full = evaluate(inst, sched).completions
    sub = dataclasses.replace(inst, jobs=inst.jobs[:-1])
    try:
        part = evaluate(sub, Schedule(tuple(j for j in sched.jobs if j.id != inst.jobs[-1].id))).completions
    except Exception:  # pragma: no cover - removing a job cannot create an overload
        raise
    assert all(part[j] <= full[j] for j in part)


def test_time_limit_returns_a_schedule():
    inst = _library_or_random(8)
    res = solve_rar_cpsat(inst, num_workers=1, time_limit=0.05, shortcut=False)
    assert res.schedule is not None
    assert res.status in (SolveStatus.TIME_LIMIT, SolveStatus.OPTIMAL)
    assert res.objective == evaluate(inst, res.schedule).makespan
    assert res.lower_bound is not None and res.lower_bound <= res.objective


def test_within_horizon_infeasible():
    inst = dataclasses.replace(contention_pair(), horizon=3)
    res = solve_rar_cpsat(inst, **FAST, within_horizon=True, shortcut=False)
    assert res.status == SolveStatus.INFEASIBLE and res.schedule is None
    ok = solve_rar_cpsat(dataclasses.replace(inst, horizon=4), **FAST, within_horizon=True)
    assert ok.status == SolveStatus.OPTIMAL and ok.objective == 4


def test_too_large_model_returns_heuristic_with_certified_bound():
    inst = _library_or_random(6)
    res = solve_rar_cpsat(inst, num_workers=1, time_limit=5, max_cells=10, shortcut=False)
    assert res.schedule is not None and res.status in (SolveStatus.FEASIBLE, SolveStatus.OPTIMAL)
    assert "too large" in res.info["reason"]
    assert res.lower_bound <= res.objective


def test_registry_and_cli_report_bound_and_gap(tmp_path):
    from optsched.api import save

    inst = contention_pair()
    res = solve(inst, "exact", time_limit=20, num_workers=1)
    assert res.status == SolveStatus.OPTIMAL and res.objective == 4 and res.gap == 0.0
    path = tmp_path / "pair.json"
    save(inst, path)
    out = subprocess.run([sys.executable, "-m", "optsched", "solve", str(path), "--algorithm", "exact",
                          "--time-limit", "20", "-o", str(tmp_path / "s.json")],
                         capture_output=True, text=True, check=True).stdout
    assert "status=optimal" in out and "objective=4" in out and "bound=4" in out and "gap=0.00%" in out


# -- the feasibility MILP and the lower bounds ------------------------------------------------------------
@st.composite
def load_instances(draw):
    n = draw(st.integers(2, 8))
    k = draw(st.integers(1, 5))
    gpus = [draw(st.integers(1, n)) for _ in range(k)]
    weights = [draw(st.integers(1, 60)) / 4 for _ in range(k)]  # quarter units: exact in binary
    return gpus, weights, n


@settings(max_examples=20)
@given(load_instances())
def test_milp_cbc_equals_highs_equals_enumeration(case):
    gpus, weights, n = case
    cbc = min_max_load(gpus, weights, n, solver="cbc")
    highs = min_max_load(gpus, weights, n, solver="highs")
    assert cbc.status == highs.status == "optimal"
    exact = brute_min_max_load(gpus, weights, n)
    # the solvers' own feasibility tolerance is 1e-6 (HiGHS returned 29.499999 for 29.5): relative as well
    assert math.isclose(cbc.theta, exact, rel_tol=1e-6, abs_tol=1e-6)
    assert math.isclose(highs.theta, exact, rel_tol=1e-6, abs_tol=1e-6)
    # the assignment is feasible and achieves theta
    loads = [0.0] * n
    for j, gs in enumerate(cbc.assignment):
        assert len(set(gs)) == gpus[j]
        for g in gs:
            loads[g] += weights[j]
    assert math.isclose(max(loads), cbc.theta, abs_tol=1e-6)
    lp = min_max_load(gpus, weights, n, solver="highs", relax=True)
    assert math.isclose(lp.theta, lp_closed_form(gpus, weights, n), abs_tol=1e-6)
    assert lp.theta <= exact + 1e-6


@settings(max_examples=25)
@given(micro_rar_instances(max_jobs=3, max_servers=2))
def test_lower_bounds_below_optimum(inst):
    opt = brute_force(inst).makespan
    lp = lp_lower_bound(inst)
    milp = milp_lower_bound(inst, solver="cbc")
    assert makespan_lower_bound(inst) <= opt
    assert lp <= milp + 1e-6 <= opt + 1e-6
    assert lower_bound(inst) <= opt
    # d_min_j is exactly achievable: the job alone on its fastest placement class
    for j in inst.jobs:
        assert duration_range(inst, j)[0] <= opt


def test_milp_on_instance_cbc_equals_highs():
    inst = contention_pair()
    a = feasibility_milp(inst, weights="certified", solver="cbc")
    b = feasibility_milp(inst, weights="certified", solver="highs")
    # two 3-GPU jobs of weight 2 on 6 GPUs fit side by side: theta* = 2 (< T* = 4: contention is not in it)
    assert a.status == b.status == "optimal" and a.theta == pytest.approx(2.0) == b.theta


# -- the instance library ---------------------------------------------------------------------------------
def _index() -> list[dict]:
    data = json.loads(bundled_path("index.json").read_text())
    # the families benchmarks/rar_exact.py proves with the time-indexed model (benchmarks/library.py adds
    # instances of hundreds of slots, and the 160-job presets, that this model is not for)
    return [e for e in data.get("instances", []) if e.get("problem") == "rar-ddls"
            and e.get("family") in ("paper", "contention", "queued", "cli")]


def _library_or_random(n_jobs: int) -> RarInstance:
    for e in sorted(_index(), key=lambda e: e["path"]):
        if e["jobs"] == n_jobs:
            return load(bundled_path(e["path"]))
    from optsched.generators.rar import tiny_rar_example
    return tiny_rar_example()


@pytest.mark.parametrize("entry", sorted((e for e in _index() if e.get("status") == "optimal"),
                                         key=lambda e: (e.get("runtime_s", 0), e["path"]))[:4],
                         ids=lambda e: Path(e["path"]).stem)
def test_library_optimum_reproved(entry):
    inst = load(bundled_path(entry["path"]))
    res = solve_rar_cpsat(inst, num_workers=2, time_limit=30)
    assert res.status == SolveStatus.OPTIMAL and res.objective == entry["optimum"]


def test_closed_form_bound_jobs_that_cannot_share_a_slot():
    """Three 3-GPU jobs on 4 GPUs: no two fit side by side (k = 1 bound: they run one after another), so
    T* = the sum of their fastest durations, which the closed form certifies and CP-SAT attains."""
    inst = dataclasses.replace(contention_pair(), jobs=tuple(
        RarJob(f"j{i}", gpus=3, iterations=6 + 3 * i, gradient_size=0.15, batch_size=1,
               forward_time_per_sample=0.0, backward_time=0.1) for i in range(3)),
        cluster=Cluster((Server("s0", 2), Server("s1", 2)), intra_bandwidth=100.0, inter_bandwidth=1.0))
    # alone: 3 iterations per slot (see contention_pair) -> 2, 3 and 4 slots
    assert [duration_range(inst, j)[0] for j in inst.jobs] == [2, 3, 4]
    assert makespan_lower_bound(inst) == 9
    res = solve_rar_cpsat(inst, **FAST, **MODEL_ONLY)
    assert res.objective == 9 == brute_force(inst).makespan


@settings(max_examples=30)
@given(micro_rar_instances(max_jobs=1, max_servers=2))
def test_phi_table_matches_evaluator_alone(inst):
    """A job alone on a placement finishes after exactly ceil(F / Phi(n, 1 if split else 0)) slots."""
    from optsched.exact.rar_brute import placements

    job = inst.jobs[0]
    table = phi_table(inst, job)
    for pl in placements(inst, job):
        n = len(pl)
        got = evaluate(inst, Schedule((ScheduledJob(job.id, 0, pl),))).makespan
        assert got == -(-job.iterations // table[n][1 if n > 1 else 0])
