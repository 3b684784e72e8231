"""Issue 16: the fast RAR-DDLS packer, evaluator and validation give exactly what the code before them gave.

The oracles are the branch point's implementations, kept verbatim in ``tests/reference_rar_heuristics.py`` (numpy,
O(GPUs) per placed job). Same schedules, same ``info`` (theta, kappa, loads, GPU assignment) for SJF-BCO, FF, LS and
RAND, on the paper's preset, on instances where contention binds, and on random small instances (hypothesis).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from optsched import ScheduleError, solve  # noqa: E402
from optsched.algorithms import sjf_bco as alg  # noqa: E402
from optsched.evaluators.rar import evaluate  # noqa: E402
from optsched.generators.rar import mobihoc22_preset, random_rar_instance  # noqa: E402
from optsched.result import Schedule, ScheduledJob  # noqa: E402
from reference_rar_heuristics import evaluate_reference, reference  # noqa: E402
from strategies import rar_instances  # noqa: E402

ALGORITHMS = ("sjf-bco", "ff", "ls", "rand")


def same_as_reference(inst, name, seed=0):
    r = solve(inst, name, seed=seed)
    sched, info = reference(inst, name, seed)
    assert r.schedule.jobs == tuple(ScheduledJob(sj.id, sj.start, sj.placement, r.schedule[sj.id].completion)
                                    for sj in sched), name
    assert r.info == info, name
    return r


@pytest.mark.parametrize("name", ALGORITHMS)
def test_preset_schedules_are_those_of_the_reference(name):
    same_as_reference(mobihoc22_preset(3, servers=8), name, seed=2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_contention_binding_instances_match_the_reference(seed):
    # contention_xi = 1: k = max(1, p) > 1 as soon as two split jobs share a server, so phi changes mid-run
    inst = random_rar_instance(40, 6, seed, contention_xi=1.0)
    assert alg.Packer(inst).p_matters
    for name in ALGORITHMS:
        same_as_reference(inst, name, seed=seed)


def test_kappa_checkpoints_and_fixed_kappa_match_the_reference():
    import reference_rar_heuristics as ref

    inst = random_rar_instance(30, 5, 4, contention_xi=0.7)
    for kappa in (1, 2, 8):
        new = alg.sjf_bco(inst, kappa=kappa)
        pk, best = ref.run_sjf_bco(inst, kappa=kappa)
        assert new[0] == pk.schedule(best, "sjf-bco") and new[1] == ref.info_for(pk, best)


@settings(max_examples=20, deadline=None)
@given(rar_instances(max_jobs=8, max_servers=4), st.integers(0, 5))
def test_random_instances_match_the_reference(inst, seed):
    for name in ALGORITHMS:
        same_as_reference(inst, name, seed=seed)


def test_packing_state_copies_are_independent():
    inst = random_rar_instance(12, 3, 1, contention_xi=1.0)
    pk = alg.Packer(inst)
    order = alg.sjf_order(inst)
    st0 = pk.new_state(600, (alg.fa_ffp, alg.lbsgf))
    assert pk.place(st0, order[:6], lambda j: alg.fa_ffp)
    snap = st0.copy()
    before = copy.deepcopy((snap.U, snap.start, snap.rem, snap.cheap, snap.sjobs))
    assert pk.place(st0, order[6:], lambda j: alg.lbsgf)
    assert st0.finish(float("inf")) is not None
    assert (snap.U, snap.start, snap.rem, snap.cheap, snap.sjobs) == before


# -- the evaluator -------------------------------------------------------------------------------------------
@st.composite
def schedules(draw):
    """An instance and a random schedule of it: random starts, random placements (capacity may be exceeded)."""
    inst = draw(rar_instances(max_jobs=6, max_servers=3))
    caps = inst.cluster.capacity
    rows = []
    for job in inst.jobs:
        left, pl = job.gpus, {}
        for sid in draw(st.permutations(list(caps))):
            if left == 0:
                break
            n = draw(st.integers(0, min(left, caps[sid])))
            if n:
                pl[sid] = n
                left -= n
        if left:  # not enough drawn: put the rest where it fits, else give up on this draw
            for sid in caps:
                extra = min(left, caps[sid] - pl.get(sid, 0))
                if extra > 0:
                    pl[sid] = pl.get(sid, 0) + extra
                    left -= extra
        rows.append(ScheduledJob(job.id, draw(st.integers(0, 30)), pl))
    return inst, Schedule(tuple(rows))


@settings(max_examples=80, deadline=None)
@given(schedules())
def test_evaluator_agrees_with_the_reference_on_random_schedules(case):
    inst, sched = case
    try:
        want = evaluate_reference(inst, sched)
    except ScheduleError as exc:
        with pytest.raises(ScheduleError) as got:
            evaluate(inst, sched)
        assert (got.value.field, got.value.job) == (exc.field, exc.job)
        return
    ev = evaluate(inst, sched)
    assert (ev.makespan, dict(ev.completions)) == want


def test_evaluator_agrees_with_the_reference_on_a_preset_schedule():
    inst = random_rar_instance(60, 6, 7, contention_xi=1.0)
    for name in ("sjf-bco", "rand"):
        sched = solve(inst, name, seed=1).schedule
        ev = evaluate(inst, sched)
        assert (ev.makespan, dict(ev.completions)) == evaluate_reference(inst, sched)


# -- the closed-form bounds in O(n log n) ---------------------------------------------------------------------
def naive_lp_closed_form(gpus, weights, n_gpus):
    v = max(sum(g * w for g, w in zip(gpus, weights)) / n_gpus, max(weights))
    for j in range(len(gpus)):
        for k in range(j + 1, len(gpus)):
            if gpus[j] + gpus[k] > n_gpus:
                v = max(v, weights[j] + weights[k])
    return v


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.lists(st.integers(1, 10), min_size=n, max_size=n),
    st.lists(st.integers(1, 50).map(float), min_size=n, max_size=n))), st.integers(1, 16))
def test_lp_closed_form_equals_the_pairwise_formula(case, n_gpus):
    from optsched.bounds import lp_closed_form

    gpus, weights = case
    assert lp_closed_form(gpus, weights, n_gpus) == naive_lp_closed_form(gpus, weights, n_gpus)


@settings(max_examples=60, deadline=None)
@given(rar_instances(max_jobs=8, max_servers=3))
def test_makespan_lower_bound_equals_the_per_k_formula(inst):
    from optsched.bounds import duration_range, makespan_lower_bound

    n_gpus = inst.cluster.total_gpus
    dmin = [duration_range(inst, j)[0] for j in inst.jobs]
    lb = max(max(dmin), -(-sum(j.gpus * d for j, d in zip(inst.jobs, dmin)) // n_gpus))
    for k in range(1, inst.n_jobs):
        big = [d for j, d in zip(inst.jobs, dmin) if (k + 1) * j.gpus > n_gpus]
        if len(big) > k:
            lb = max(lb, -(-sum(big) // k))
    assert makespan_lower_bound(inst) == lb


# -- the bundled instances where jobs queue and contention binds ---------------------------------------------
def _queued_entries():
    import json

    from optsched.io import bundled_path

    data = json.loads(bundled_path("index.json").read_text())
    return [e for e in data["instances"] if e.get("family") == "queued"]


def test_queued_library_is_consistent():
    from optsched import load
    from optsched.bounds import lower_bound
    from optsched.io import bundled_path

    entries = _queued_entries()
    assert entries
    for e in entries:
        inst = load(bundled_path(e["path"]))
        assert inst.contention_xi == 1.0 and sum(j.gpus for j in inst.jobs) > inst.cluster.total_gpus
        value = e.get("optimum", e.get("best_known"))
        assert lower_bound(inst) <= e["lower_bound"] <= value
        for name in ALGORITHMS:
            assert solve(inst, name, seed=0).objective >= e["lower_bound"]


def test_smallest_queued_optimum_is_reproved():
    from optsched import load
    from optsched.exact.rar_cpsat import solve_rar_cpsat
    from optsched.io import bundled_path
    from optsched.result import SolveStatus

    e = min((e for e in _queued_entries() if e["status"] == "optimal"), key=lambda e: (e["runtime_s"], e["path"]))
    res = solve_rar_cpsat(load(bundled_path(e["path"])), time_limit=30, num_workers=2)
    assert res.status == SolveStatus.OPTIMAL and res.objective == e["optimum"]


@settings(max_examples=15, deadline=None)
@given(__import__("strategies").micro_rar_instances(), st.sampled_from([0.2, 1.0]))
def test_cpsat_with_contention_only_where_it_binds_equals_brute_force(inst, xi1):
    # xi_1 = 0.2: k = max(1, 0.2 p) = 1 for p <= 5, so no job is p-sensitive and the model has no per-slot
    # variable; xi_1 = 1: mixes of sensitive and insensitive jobs. Both must give brute force's optimum.
    import dataclasses

    from optsched.exact.rar_brute import brute_force
    from optsched.exact.rar_cpsat import solve_rar_cpsat
    from optsched.result import SolveStatus

    inst = dataclasses.replace(inst, contention_xi=xi1)
    res = solve_rar_cpsat(inst, time_limit=20, num_workers=1, shortcut=False)
    assert res.status == SolveStatus.OPTIMAL
    assert res.objective == brute_force(inst).makespan
