"""Schedules from the deadline bounds' choice of jobs (``optsched.exact.deadline_repair``): the bounds' chosen sets
checked against their programs' constraints, the search checked against enumeration with toy schedulers, and
with the simulator as the scheduler, against a re-run and the bound."""

from __future__ import annotations

import itertools

import pytest

from optsched.errors import InstanceError
from optsched.exact.deadline import deadline_time_indexed_bound, deadline_upper_bound, min_energy_gpu_s
from optsched.exact.deadline_repair import repair_selection
from optsched.generators.deadline import tiny_deadline_workload
from optsched.problems.deadline import DEADLINE_TOL_S
from optsched.sim import simulate
from optsched.sim.deadline.metrics import met_mask


def simulated(policy):
    def score(sub):
        jobs = simulate(sub, scheduler=policy).jobs
        return list(jobs.loc[met_mask(jobs), "id"])
    return score


@pytest.mark.parametrize("seed", range(4))
def test_the_chosen_sets_satisfy_the_energy_windows_and_count_the_bound(seed):
    wl = tiny_deadline_workload(6, nodes=2, gpus_per_node=2, seed=seed)
    G = wl.total_gpus
    for b in (deadline_upper_bound(wl), deadline_time_indexed_bound(wl)):
        assert b.status.value == "optimal"
        assert len(b.chosen) == b.value  # weights "count": the optimum's jobs, one each
        chosen = [wl.job(i) for i in b.chosen]
        assert all(min_energy_gpu_s(wl, j) < float("inf") for j in chosen)
        # every window [arrival, deadline] holds the least energies of the chosen jobs inside it (the energy
        # relaxation's constraints, rechecked here in floating point; the time-indexed program implies them)
        for a in {j.arrival_s for j in chosen}:
            for e in {j.deadline_s + DEADLINE_TOL_S for j in chosen}:
                inside = [j for j in chosen if j.arrival_s >= a and j.deadline_s + DEADLINE_TOL_S <= e]
                assert sum(min_energy_gpu_s(wl, j) for j in inside) <= G * max(e - a, 0.0) * (1 + 1e-6) + 1e-3


def _subsets_best(ids, rule):
    return max(len(rule(set(s))) for k in range(len(ids) + 1) for s in itertools.combinations(ids, k))


@pytest.mark.parametrize("cap", [1, 2, 3])
def test_the_search_finds_the_best_set_of_a_toy_scheduler(cap):
    # a toy scheduler: every chosen job is on time while at most `cap` are chosen; beyond that only the first
    # job (by id) is. The best set has `cap` jobs; from all jobs the drops must reach it.
    wl = tiny_deadline_workload(6, nodes=2, gpus_per_node=2, seed=1)
    ids = [j.id for j in wl.jobs if min_energy_gpu_s(wl, j) < float("inf")]

    def rule(chosen):
        return set(chosen) if len(chosen) <= cap else {min(chosen)}

    sel = repair_selection(wl, lambda sub: rule({j.id for j in sub.jobs}), ids)
    assert sel.value == _subsets_best(ids, rule) == min(cap, len(ids))
    assert set(sel.met) == set(sel.chosen) and len(sel.chosen) == sel.value
    # from the empty set the additions reach it too
    assert repair_selection(wl, lambda sub: rule({j.id for j in sub.jobs}), []).value == sel.value


def test_the_search_keeps_its_evaluation_budget_and_refuses_bad_input():
    wl = tiny_deadline_workload(6, nodes=2, gpus_per_node=2, seed=1)
    ids = [j.id for j in wl.jobs]
    calls = []

    def first_only(sub):
        calls.append(1)
        return [sub.jobs[0].id] if sub.jobs else []

    repair_selection(wl, first_only, ids, max_evaluations=3)
    assert len(calls) <= 3
    with pytest.raises(InstanceError, match="not chosen"):
        repair_selection(wl, lambda sub: ids, ids[:1])
    with pytest.raises(InstanceError, match="not a deadline job"):
        repair_selection(wl, first_only, ["nope"])
    with pytest.raises(InstanceError, match="max_evaluations"):
        repair_selection(wl, first_only, ids, max_evaluations=0)


@pytest.mark.parametrize("seed", range(3))
def test_the_simulated_repair_is_a_schedule_the_simulator_confirms_and_the_bound_covers(seed):
    wl = tiny_deadline_workload(6, nodes=2, gpus_per_node=2, seed=seed)
    ti = deadline_time_indexed_bound(wl)
    sel = repair_selection(wl, simulated("elasticflow-noadmit"), ti.chosen)
    rerun = simulate(wl.with_jobs(j for j in wl.jobs if j.id in set(sel.chosen)), scheduler="elasticflow-noadmit")
    assert rerun.custom["deadline"]["deadlines_met"] == sel.value == len(sel.met)
    assert sel.value <= ti.value
    # never below the policy on every job (the search scores that set as a reference)
    assert sel.value >= simulate(wl, scheduler="elasticflow-noadmit").custom["deadline"]["deadlines_met"]
