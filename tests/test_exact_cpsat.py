"""The shared CP-SAT back-end (optsched.exact._cpsat) and what every exact solver builds on it: the status
mapping, parameter checks, parameters reaching CP-SAT, reproducible deterministic limits, results stopped by a
limit (with or without a schedule), and results that pickle.

No test depends on the machine's speed: every limit that must stop a search is a deterministic one."""

from __future__ import annotations

import copy
import math
import pickle
import subprocess
import sys

import pytest
from ortools.sat.python import cp_model

from optsched.algorithms.heavy_edge import fig2_job
from optsched.errors import InstanceError, SolverError
from optsched.evaluators.total_jct import check_schedule
from optsched.exact import _cpsat
from optsched.exact.placement import min_cut_placement, min_time_placement, min_time_placement_per_server
from optsched.exact.rar_brute import brute_force
from optsched.exact.rar_cpsat import solve_rar_cpsat
from optsched.exact.rar_milp import min_max_load
from optsched.exact.total_jct import brute_force_total_jct, solve_total_jct
from optsched.generators.rar import random_rar_instance, tiny_rar_example
from optsched.generators.total_jct import random_total_jct_instance
from optsched.perf.pipeline import Network
from optsched.registry import get_algorithm
from optsched.result import Result, SolveStatus

NET = Network(8, 1.25, 300.0)
FIG2_FREE = {"a": 4, "b": 1, "c": 1}


def chain_model(n: int = 300) -> tuple[cp_model.CpModel, list[cp_model.IntVar]]:
    """min sum x_i s.t. x_i + x_{i+1} >= 37..41: big enough that presolve alone outlasts a tiny limit."""
    m = cp_model.CpModel()
    xs = [m.new_int_var(0, 100, f"x{i}") for i in range(n)]
    for i in range(n - 1):
        m.add(xs[i] + xs[i + 1] >= 37 + i % 5)
    m.minimize(sum(xs))
    return m, xs


def contention_instance():
    """5 jobs of 2..7 GPUs on three 4-GPU servers, contention biting (xi_1 = 1): the 6- and 7-GPU jobs must
    split. CP-SAT needs about one deterministic second to prove its optimum, so half of one stops it with a
    schedule and a bound strictly between the closed-form bound and the optimum."""
    return random_rar_instance(5, 3, 0, server_gpus=(4,), sizes=(6, 5, 3, 7, 2), iterations=(100, 400),
                               contention_xi=1.0)


# -- the status mapping -----------------------------------------------------------------------------------
@pytest.mark.parametrize("code, status", [(cp_model.OPTIMAL, SolveStatus.OPTIMAL),
                                          (cp_model.FEASIBLE, SolveStatus.TIME_LIMIT),
                                          (cp_model.INFEASIBLE, SolveStatus.INFEASIBLE),
                                          (cp_model.UNKNOWN, SolveStatus.UNKNOWN)])
def test_status_table(code, status):
    assert _cpsat.status_of(code) == status


def test_optimal_model():
    m = cp_model.CpModel()
    x, y = m.new_int_var(0, 3, "x"), m.new_int_var(0, 3, "y")
    m.add(x + y <= 4)
    m.maximize(x + 2 * y)
    run = _cpsat.solve(m, _cpsat.Params(time_limit=10))
    assert (run.status, run.cpsat_status, run.objective, run.bound) == (SolveStatus.OPTIMAL, "OPTIMAL", 7.0, 7.0)
    assert (run.value(x), run.value(y), run.value(x + y)) == (1, 3, 4) and run.found


def test_infeasible_model():
    m = cp_model.CpModel()
    x = m.new_int_var(0, 3, "x")
    m.add(x >= 5)
    m.minimize(x)
    run = _cpsat.solve(m, _cpsat.Params(time_limit=10))
    assert (run.status, run.objective, run.bound, run.found) == (SolveStatus.INFEASIBLE, None, None, False)
    with pytest.raises(SolverError, match="no solution"):
        run.value(x)


def test_model_stopped_by_a_tiny_deterministic_limit():
    m, xs = chain_model()
    run = _cpsat.solve(m, _cpsat.Params(deterministic_limit=1e-6))
    assert run.status == SolveStatus.UNKNOWN and run.cpsat_status == "UNKNOWN" and run.objective is None
    # what is proven is still reported: every x_i >= 0, so 0 is a valid bound
    assert run.bound is not None and run.bound >= 0
    full = _cpsat.solve(m, _cpsat.Params(time_limit=30))
    assert full.status == SolveStatus.OPTIMAL and run.bound <= full.objective


def test_invalid_model_raises_with_the_validation_message():
    m = cp_model.CpModel()
    m.new_int_var(5, 3, "empty")
    with pytest.raises(SolverError, match="invalid: .*no domain"):
        _cpsat.solve(m, _cpsat.Params(time_limit=10))


def test_model_without_objective_has_no_bound():
    m = cp_model.CpModel()
    x = m.new_int_var(0, 3, "x")
    m.add(x >= 2)
    run = _cpsat.solve(m, _cpsat.Params(time_limit=10))
    assert run.status == SolveStatus.OPTIMAL and run.bound is None and run.value(x) >= 2


# -- parameters ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("field, value", [("time_limit", 0), ("time_limit", -1), ("time_limit", math.nan),
                                          ("time_limit", math.inf), ("time_limit", True), ("time_limit", "5"),
                                          ("deterministic_limit", 0.0), ("deterministic_limit", -2.5),
                                          ("num_workers", 0), ("num_workers", 1.5), ("num_workers", True),
                                          ("seed", -1), ("seed", 2**31), ("seed", 1.0)])
def test_bad_parameters_name_their_field(field, value):
    with pytest.raises(InstanceError) as err:
        _cpsat.Params(**{field: value})
    assert err.value.field == field


def test_bad_parameters_rejected_by_every_solver_before_any_work():
    with pytest.raises(InstanceError, match="time_limit"):
        solve_rar_cpsat(tiny_rar_example(), time_limit=0)
    with pytest.raises(InstanceError, match="num_workers"):
        solve_total_jct(random_total_jct_instance(3, 0), num_workers=0)
    with pytest.raises(InstanceError, match="deterministic_limit"):
        min_time_placement(fig2_job(), NET, FIG2_FREE, deterministic_limit=-1)
    # a CP-SAT-only option given to a MILP solver is an error, not silently dropped
    with pytest.raises(InstanceError, match=r"deterministic_limit \(job 'fig2'\): applies to the 'cpsat'"):
        min_cut_placement(fig2_job(), FIG2_FREE, solver="cbc", deterministic_limit=1.0)


def test_limits_one_at_a_time():
    assert _cpsat.Params().limit == "none"
    assert _cpsat.Params(time_limit=3).limit == "time"
    both = _cpsat.Params(time_limit=3, deterministic_limit=1.5, num_workers=2)
    # the wall clock would make a deterministic run depend on the machine again: it is not applied
    assert both.limit == "deterministic" and both.info()["time_limit_s"] is None and both.interleave


def _logged_parameters(params: _cpsat.Params) -> tuple[_cpsat.Run, str]:
    """Solve a small model with ``params`` and return CP-SAT's own log line of the parameters it received."""
    m, _ = chain_model(20)
    solver = cp_model.CpSolver()
    solver.parameters.log_to_stdout = False
    lines: list[str] = []
    solver.log_callback = lines.append
    run = _cpsat.solve(m, params, solver=solver)
    return run, next(line for line in lines if line.startswith("Parameters:"))


def test_parameters_reach_the_solver():
    run, line = _logged_parameters(_cpsat.Params(time_limit=7, num_workers=1, seed=5, log=True))
    assert "max_time_in_seconds: 7" in line and "random_seed: 5" in line and "num_workers: 1" in line
    assert "max_deterministic_time" not in line
    prm = run.solver.parameters
    assert (prm.max_time_in_seconds, prm.random_seed, prm.num_workers) == (7.0, 5, 1)
    assert run.info()["limit"] == "time" and run.info()["time_limit_s"] == 7.0

    run, line = _logged_parameters(_cpsat.Params(time_limit=7, deterministic_limit=0.25, num_workers=2, log=True))
    assert "max_deterministic_time: 0.25" in line and "interleave_search: true" in line
    assert "max_time_in_seconds" not in line and math.isinf(run.solver.parameters.max_time_in_seconds)
    info = run.info()
    assert (info["limit"], info["deterministic_limit"], info["interleave_search"]) == ("deterministic", 0.25, True)


def test_every_solver_says_which_limit_it_used():
    rar = solve_rar_cpsat(tiny_rar_example(), deterministic_limit=5.0, num_workers=1, seed=2, shortcut=False)
    tj = solve_total_jct(random_total_jct_instance(3, 0), deterministic_limit=5.0, seed=2)
    mt = min_time_placement(fig2_job(), NET, FIG2_FREE, deterministic_limit=5.0, seed=2)
    mc = min_cut_placement(fig2_job(), FIG2_FREE, time_limit=5.0)
    for info in (rar.info, tj.info, mt.info):
        assert (info["limit"], info["deterministic_limit"], info["random_seed"]) == ("deterministic", 5.0, 2)
        assert info["time_limit_s"] is None and info["cpsat_status"] == "OPTIMAL"
    assert mc.info["limit"] == "time" and mc.info["time_limit_s"] == 5.0
    assert rar.status == tj.status == mt.status == mc.status == SolveStatus.OPTIMAL
    # the registry's door passes the option through
    via_door = get_algorithm("exact").func(tiny_rar_example(), deterministic_limit=5.0, num_workers=1,
                                           shortcut=False)
    assert via_door.info["limit"] == "deterministic" and via_door.objective == rar.objective


# -- reproducible limited runs -----------------------------------------------------------------------------
@pytest.mark.parametrize("workers", [1, 2])
def test_deterministic_limit_reproduces_a_run_stopped_by_it(workers):
    inst = contention_instance()
    runs = [solve_rar_cpsat(inst, deterministic_limit=0.5, num_workers=workers, seed=3) for _ in range(2)]
    a, b = runs
    # stopped by the limit (if a new OR-Tools proves this instance faster, raise the instance, not the limit)
    assert a.status == SolveStatus.TIME_LIMIT and "fallback" not in a.info
    assert a.lower_bound < a.objective
    assert (a.objective, a.lower_bound, a.schedule) == (b.objective, b.lower_bound, b.schedule)
    assert a.info["branches"] == b.info["branches"]


# -- a limit never crashes and always says what it found -------------------------------------------------
def test_total_jct_limit_before_any_schedule():
    """The run that crashed ``optsched solve`` (40 jobs, 4 servers, seed 3, --time-limit 2 on a slow machine):
    the limit stops CP-SAT before any schedule. It returns no schedule, says so, and keeps the bound."""
    inst = random_total_jct_instance(40, 3, 4)
    res = solve_total_jct(inst, deterministic_limit=1e-3, seed=0)
    assert res.status == SolveStatus.UNKNOWN and res.objective is None and res.schedule is None
    assert res.lower_bound is not None and res.lower_bound >= inst.trivial_lower_bound()
    assert res.gap is None and not res.found
    assert "(no schedule found)" in res.summary() and "bound=" in res.summary()
    assert res.info["cpsat_status"] == "UNKNOWN" and res.info["limit"] == "deterministic"
    assert pickle.loads(pickle.dumps(res)) == res and res.to_dict()["schedule"] is None


def test_total_jct_limit_after_a_schedule():
    inst = random_total_jct_instance(40, 3, 4)
    res = solve_total_jct(inst, deterministic_limit=0.05, seed=0)
    assert res.status == SolveStatus.TIME_LIMIT and res.schedule is not None
    assert check_schedule(inst, res.schedule) == res.objective
    assert inst.trivial_lower_bound() <= res.lower_bound <= res.objective and res.gap is not None
    assert res.info["cpsat_status"] == "FEASIBLE"


def test_rar_limit_before_any_schedule_returns_the_incumbent_and_the_bound():
    inst = contention_instance()
    res = solve_rar_cpsat(inst, deterministic_limit=1e-6, num_workers=1, shortcut=False)
    assert res.status == SolveStatus.TIME_LIMIT and res.schedule is not None
    assert res.info["cpsat_status"] == "UNKNOWN" and "fallback" in res.info
    assert res.objective == res.info["incumbent"]["makespan"] and res.lower_bound <= res.objective


# -- every exact solver's result pickles ---------------------------------------------------------------------
def _roundtrip(obj):
    assert pickle.loads(pickle.dumps(obj)) == obj
    assert copy.deepcopy(obj) == obj


def test_every_exact_result_pickles():
    rar = tiny_rar_example()
    for res in (solve_rar_cpsat(rar, num_workers=1, shortcut=False),
                get_algorithm("brute-force").func(rar),
                solve_total_jct(random_total_jct_instance(4, 1)),
                brute_force_total_jct(random_total_jct_instance(4, 1))):
        assert isinstance(res, Result) and res.status == SolveStatus.OPTIMAL
        _roundtrip(res)
    _roundtrip(brute_force(rar))
    _roundtrip(min_max_load([2, 1], [3.0, 2.0], 4, solver="cbc"))
    for placement in (min_time_placement(fig2_job(), NET, FIG2_FREE),
                      min_time_placement(fig2_job(), NET, FIG2_FREE, solver="cbc"),
                      min_time_placement_per_server(fig2_job(), NET, FIG2_FREE),
                      min_cut_placement(fig2_job(), FIG2_FREE, net=NET)):
        assert placement.status == SolveStatus.OPTIMAL
        _roundtrip(placement)
        with pytest.raises(TypeError):
            placement.info["model"] = "changed"


def test_cpsat_loaded_only_by_a_solve():
    """OR-Tools takes about half a second to import: importing the exact modules must not load it."""
    code = ("import sys, optsched.exact._cpsat, optsched.exact.total_jct, optsched.exact.placement; "
            "print(sorted(m for m in sys.modules if m.startswith('ortools')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_hint_that_crashes_or_tools_is_dropped_not_fatal():
    """OR-Tools 9.15 crashes in presolve on this feasible hint (google/or-tools#5288): four unit jobs on one
    GPU, three released at 4. The solve goes on without the hint and still proves the optimum."""
    from optsched.cluster import Cluster, Server
    from optsched.exact.total_jct import brute_force_total_jct, solve_total_jct
    from optsched.problems.total_jct import Mode, TotalJctInstance, TotalJctJob

    jobs = tuple(TotalJctJob(f"j{i}", r, 1, (Mode((1,), 1),)) for i, r in enumerate((4, 4, 0, 4)))
    inst = TotalJctInstance(Cluster((Server("s0", 1),)), jobs)
    res = solve_total_jct(inst, time_limit=20)
    assert res.status.value == "optimal" and res.objective == brute_force_total_jct(inst).objective == 19
