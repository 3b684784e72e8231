"""The round model's optimum (paper 004, issue 13): the DP against plain enumeration, plans against the
independent scorer, and the optimum against every simulated policy and the simulator's own semantics."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.sim.shared_data import DEEPSHARE, needs_data

import optsched
from optsched.errors import InstanceError, ScheduleError
from optsched.exact.contention import (
    brute_force_contention,
    contention_lower_bound,
    evaluate_plan,
    solve_contention_dp,
)
from optsched.generators.contention import random_contention_instance
from optsched.problems.contention import ContentionInstance, ContentionJob
from optsched.sim import simulate

pytestmark = needs_data(*DEEPSHARE)

POLICIES = ["contention-las", "contention-srtf", "widest-first-fit", "contention-random", "contention-greedy",
            "rl-base", "rl-hybrid"]


@settings(max_examples=12)
@given(seed=st.integers(0, 10_000), jobs=st.integers(2, 3), mix=st.sampled_from(["normal", "heavy"]),
       hours=st.sampled_from([0.2, 0.25]))
def test_dp_equals_plain_enumeration_on_the_smallest(seed, jobs, mix, hours):
    inst = random_contention_instance(jobs=jobs, mix=mix, seed=seed, hours=hours)
    dp, bf = solve_contention_dp(inst), brute_force_contention(inst)
    assert dp.status.value == "optimal"
    assert dp.objective == pytest.approx(bf.objective)
    for r in (dp, bf):
        assert evaluate_plan(inst, r.info["plan"]).total_jct_s == pytest.approx(r.objective)


def test_dp_equals_enumeration_with_contention_forced():
    # three 4-GPU jobs on two nodes (2 x 2 each): all fit at once but then share both nodes: contention decides
    jobs = tuple(ContentionJob(f"j{i}", m, 4, s) for i, (m, s) in
                 enumerate([("MoE", 20000.0), ("FSDP", 30000.0), ("Transformer-XL", 60000.0)]))
    inst = ContentionInstance(jobs, nodes=2, gpus_per_node=8)
    dp, bf = solve_contention_dp(inst), brute_force_contention(inst)
    assert dp.objective == pytest.approx(bf.objective)
    together = [{j.id: (0, 1) for j in inst.jobs}] * 40
    assert dp.objective <= evaluate_plan(inst, _serial(inst)).total_jct_s + 1e-9
    assert dp.objective <= evaluate_plan(inst, together, strict=False).total_jct_s + 1e-9


def _serial(inst):
    plan, left = [], {j.id: j.samples for j in inst.jobs}
    from optsched.perf.measured import MeasuredPerf

    perf = MeasuredPerf()
    for j in sorted(inst.jobs, key=lambda j: j.samples / perf.throughput(j.model, j.gpus, 2)):
        while left[j.id] > 1e-9 * j.samples:
            plan.append({j.id: (0, 1)})
            left[j.id] -= perf.throughput(j.model, j.gpus, 2) * inst.round_s
    return plan


@settings(max_examples=8)
@given(seed=st.integers(0, 10_000), jobs=st.integers(3, 4))
def test_the_optimum_is_at_most_every_policy(seed, jobs):
    inst = random_contention_instance(jobs=jobs, seed=seed, hours=0.25)
    opt = solve_contention_dp(inst, time_limit=None)
    assert opt.status.value == "optimal"
    for pol in POLICIES:
        run = simulate(inst, scheduler=pol)
        total = float(run.jobs["round_jct_s"].sum())
        assert opt.objective <= total + 1e-6, pol
        # the policy's rounds, scored by the exact model's scorer: never worse than simulated (fresh >= sticky)
        plan = [cfg for _, cfg in run.custom["contention_rounds"]["plan"]]
        assert evaluate_plan(inst, plan, strict=False).total_jct_s <= total + 1e-6


@pytest.mark.parametrize("policy", ["contention-las", "contention-srtf"])
def test_simulator_and_exact_model_agree_on_a_re_placing_policy(policy):
    # LAS and SRTF re-place every job every round: ratios are fresh each round, exactly the exact model's rule,
    # so the scorer reproduces the simulator's completions round for round
    inst = random_contention_instance(jobs=12, mix="heavy", seed=2, hours=0.5)
    run = simulate(inst, scheduler=policy)
    ev = evaluate_plan(inst, [cfg for _, cfg in run.custom["contention_rounds"]["plan"]])
    sim = dict(zip(run.jobs["id"], run.jobs["round_completion_s"]))
    assert ev.completions == pytest.approx(sim)


def test_evaluate_plan_rejects_infeasible_plans():
    inst = random_contention_instance(jobs=3, seed=0, hours=0.25)
    j0, j1 = inst.jobs[0], inst.jobs[1]
    with pytest.raises(ScheduleError, match="not completed"):
        evaluate_plan(inst, [{j0.id: (0, 1)}])
    with pytest.raises(ScheduleError, match="legal split"):
        evaluate_plan(inst, [{j0.id: (0, 1, 2)}])
    with pytest.raises(ScheduleError, match="unknown job"):
        evaluate_plan(inst, [{"zz": (0, 1)}])
    big = ContentionInstance((ContentionJob("a", "MoE", 8, 10.0), ContentionJob("b", "MoE", 8, 10.0),
                              ContentionJob("c", "MoE", 8, 10.0)), nodes=2)
    with pytest.raises(ScheduleError, match="over capacity"):
        evaluate_plan(big, [{"a": (0, 1), "b": (0, 1), "c": (0, 1)}])
    late = ContentionInstance((ContentionJob("a", "MoE", 2, 10.0, arrival_s=400.0),))
    with pytest.raises(ScheduleError, match="before its arrival"):
        evaluate_plan(late, [{"a": (0, 1)}])
    assert evaluate_plan(late, [{}, {}, {"a": (0, 1)}]).jct == {"a": 500.0}  # released at 600 s, done at 900 s
    del j1


def test_releases_and_the_doors():
    jobs = (ContentionJob("a", "DLRM", 4, 2e6), ContentionJob("b", "MoE", 8, 5000.0, arrival_s=650.0))
    inst = ContentionInstance(jobs)
    res = optsched.solve(inst)
    assert res.algorithm == "contention-dp" and res.status.value == "optimal"
    assert res.objective == pytest.approx(optsched.solve(inst, "contention-brute").objective)
    assert res.schedule["b"].start >= 900  # released at the first round boundary after its arrival
    with pytest.raises(InstanceError, match="at most"):
        brute_force_contention(random_contention_instance(jobs=6, seed=0))


def test_optsched_solve_solves_a_contention_file(tmp_path, capsys):
    from optsched import save
    from optsched.cli import main

    inst = random_contention_instance(jobs=3, seed=0, hours=0.25)
    path = tmp_path / "c.json"
    save(inst, path)
    assert main(["solve", str(path), "-o", str(tmp_path / "s.json")]) == 0   # the default: contention-dp
    out = capsys.readouterr().out
    assert "algorithm=contention-dp status=optimal" in out and (tmp_path / "s.json").is_file()
    assert main(["evaluate", str(path), str(tmp_path / "s.json")]) == 2      # no independent evaluator: said so
    assert "no independent evaluator" in capsys.readouterr().err


@pytest.mark.parametrize("seed", range(4))
def test_the_root_lower_bound_is_below_the_brute_force_optimum(seed):
    inst = random_contention_instance(jobs=3, seed=seed, hours=0.25)
    assert contention_lower_bound(inst) <= brute_force_contention(inst).objective + 1e-6
