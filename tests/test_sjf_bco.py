"""SJF-BCO (paper 000, Alg. 1-3) and the baselines FF, LS, RAND on random valid instances (hypothesis)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared strategies

from optsched import InstanceError, evaluate, solve  # noqa: E402
from optsched.algorithms import sjf_bco as alg  # noqa: E402
from optsched.generators.rar import tiny_rar_example  # noqa: E402
from strategies import rar_instances  # noqa: E402

ALGORITHMS = ("sjf-bco", "ff", "ls", "rand")
SMALL = rar_instances(max_jobs=6, max_servers=3)


@given(SMALL, st.integers(0, 3))
def test_every_algorithm_returns_a_feasible_schedule_scored_as_reported(inst, seed):
    for name in ALGORITHMS:
        r = solve(inst, name, seed=seed)
        ev = evaluate(inst, r.schedule)          # raises on any infeasibility (GPU count, capacity per slot)
        assert ev.makespan == r.objective == r.schedule.makespan, name
        # the packing simulates the exact slot model, so its own makespan is the evaluator's
        assert r.info["makespan_packing"] == ev.makespan, name
        for sj in r.schedule:
            assert sj.completion == ev.completions[sj.id]


def gpu_loads(inst, info):
    """Per-GPU estimated load recomputed from the returned assignment: sum of rho-hat_j / u (eq. 15)."""
    loads: dict[tuple[str, int], float] = {}
    for job in alg.sjf_order(inst):  # the packing's order, so the float sums are the same
        jid = inst.jobs[job].id
        for s, g in info["gpu_assignment"][jid]:
            loads[(s, g)] = loads.get((s, g), 0.0) + info["rho_hat"][jid] / info["u"]
    return loads


@given(SMALL)
def test_lemma2_max_estimated_load_equals_final_theta(inst):
    sched, info = alg.sjf_bco(inst)
    loads = gpu_loads(inst, info)
    # the assignment matches the schedule's placement
    for sj in sched:
        assert len(info["gpu_assignment"][sj.id]) == sj.gpus
        assert len({tuple(x) for x in info["gpu_assignment"][sj.id]}) == sj.gpus
        for s, n in sj.placement.items():
            assert sum(1 for x in info["gpu_assignment"][sj.id] if x[0] == s) == n
    w_max = max(loads.values())
    assert math.isclose(w_max, info["max_estimated_load"], rel_tol=1e-12)
    assert info["max_estimated_load"] == info["theta"]            # Lemma 2
    assert info["theta"] <= info["theta_bisection"] + 1e-9       # no GPU exceeds the bisection's limit
    # theta~ is a limit under which the packing finds this very schedule (so it is the tightest such limit:
    # a lower one would exclude the GPU that reaches W-hat_max when its last job was placed)
    pk = alg.Packer(inst)
    again = pk.run(alg.sjf_order(inst), info["theta"], alg.sjf_bco_rules(pk, info["kappa"]))
    assert again is not None
    assert pk.schedule(again, "sjf-bco") == sched


def reference_sjf_bco(inst):
    """Algorithm 1 written out naively: every kappa in 1..n_g, no early abandoning of packings."""
    pk = alg.Packer(inst)
    order = alg.sjf_order(inst)
    best, m = None, math.inf
    top = max(inst.horizon, math.ceil(pk.total_load()))
    for left, right in ((1, inst.horizon), (inst.horizon + 1, top)):
        while left <= right:
            theta = (left + right) // 2
            m_theta, y_theta = math.inf, None
            for kappa in range(1, inst.max_job_gpus + 1):
                res = pk.run(order, theta, alg.sjf_bco_rules(pk, kappa))
                if res is not None and res.makespan < m_theta:
                    m_theta, y_theta = res.makespan, (res, theta, kappa)
            if m_theta < m:
                m, best = m_theta, y_theta
                right = theta - 1
            else:
                left = theta + 1
        if best is not None:
            break
    return best


@settings(max_examples=25)
@given(SMALL)
def test_speedups_do_not_change_algorithm_1(inst):
    # one kappa per job-size class and abandoning packings that cannot be kept give Algorithm 1's answer
    res, theta, kappa = reference_sjf_bco(inst)
    sched, info = alg.sjf_bco(inst)
    assert (info["makespan_packing"], info["theta_bisection"], info["kappa"]) == (res.makespan, theta, kappa)
    pk = alg.Packer(inst)
    assert pk.schedule(res, "sjf-bco") == sched


@given(SMALL)
def test_estimates_bracket_every_execution_time(inst):
    # section 5: l * rho_j <= rho-hat_j <= u * rho_j for the execution time rho_j of every produced schedule
    est = alg.estimates(inst)
    assert est.l <= 1 <= est.u
    for name in ALGORITHMS:
        ev = evaluate(inst, solve(inst, name, seed=1).schedule)
        for sj in ev.schedule:
            rho = sj.completion - sj.start
            assert est.rho_min[sj.id] <= rho <= est.rho_max[sj.id]
            assert est.l * rho <= est.rho_hat[sj.id] + 1e-9
            assert est.rho_hat[sj.id] <= est.u * rho + 1e-9
            assert est.load[sj.id] <= rho + 1e-9               # rho-hat / u <= rho (Theorem 5, theta*_u <= T*)


@settings(max_examples=15)
@given(SMALL, st.integers(0, 100))
def test_determinism(inst, seed):
    for name in ALGORITHMS:
        a, b = solve(inst, name, seed=seed), solve(inst, name, seed=seed)
        assert a.schedule == b.schedule and a.objective == b.objective


def test_options_kappa_and_lambda():
    inst = tiny_rar_example()
    for kappa in (1, 2, 4, 9):
        r = solve(inst, "sjf-bco", kappa=kappa)
        assert r.info["kappa"] == kappa and evaluate(inst, r.schedule).makespan == r.objective
    assert solve(inst, "sjf-bco", kappa=1, lam=8).info["lam"] == 8.0
    with pytest.raises(InstanceError, match="kappa"):
        solve(inst, "sjf-bco", kappa=0)
    with pytest.raises(InstanceError, match="lam"):
        solve(inst, "sjf-bco", lam=0.5)


def test_lbsgf_uses_the_least_busy_servers():
    # kappa = 1 sends j0 (4 GPUs) and j1 (2 GPUs) to LBSGF. SJF order: j1 first: both servers have mean load
    # 0, the stable sort keeps s0 first, and s0 alone holds lambda * G = 2 GPUs -> j1 on s0. Then j0: s1 has
    # mean load 0 < s0's, s1 holds 4 >= 4 GPUs -> j0 on s1 alone. Both start at slot 0, no split.
    sched, info = alg.sjf_bco(tiny_rar_example(), kappa=1)
    assert dict(sched["j1"].placement) == {"s0": 2} and dict(sched["j0"].placement) == {"s1": 4}
    assert sched["j0"].start == sched["j1"].start == 0
    # lambda = 2: j1 still needs only s0 (4 >= 2 * 2); j0 may use both servers (8 >= 2 * 4), s1 first (mean
    # load 0), and the four least-loaded idle GPUs are s1's (load 0 < j1's load on s0) -> same placement.
    sched, _ = alg.sjf_bco(tiny_rar_example(), kappa=1, lam=2)
    assert dict(sched["j1"].placement) == {"s0": 2} and dict(sched["j0"].placement) == {"s1": 4}


def test_ff_packs_server_by_server():
    # FF in instance order: j0 (4 GPUs) takes s0 entirely, j1 (2 GPUs) the first two GPUs of s1.
    sched = solve(tiny_rar_example(), "ff").schedule
    assert dict(sched["j0"].placement) == {"s0": 4} and dict(sched["j1"].placement) == {"s1": 2}


def test_loads_beyond_the_horizon_fall_back_to_a_larger_theta():
    # tiny_rar_example with T = 3: rho-hat(j0) = 120 * 0.039875 = 4.785 > 3, so no theta in [1, T] admits j0;
    # the bisection continues above T (docs section 5) and still returns a schedule, flagged past the horizon.
    import dataclasses

    inst = dataclasses.replace(tiny_rar_example(), horizon=3)
    for name in ALGORITHMS:
        r = solve(inst, name)
        ev = evaluate(inst, r.schedule)
        assert ev.exceeds_horizon and ev.makespan == r.info["makespan_packing"]
    info = solve(inst, "sjf-bco").info
    assert info["theta_bisection"] > 3 and info["theta"] >= 4.785 - 1e-9
