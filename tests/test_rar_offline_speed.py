"""Issue 29: the RAR-DDLS packer's faster structures choose exactly what a plain scan chooses.

* First-Fit's segment tree over blocks of servers against a scan of every GPU in index order, and the lazily re-keyed
  heap of ``enough_anywhere`` against a sort of every GPU's load, on packings driven step by step (many servers, so
  that the tree has several levels and padding);
* LBSGF's lazily re-keyed heap of servers by mean load against a sort, on packings driven step by step;
* SJF-BCO, FF, LS and RAND against the pre-issue-16 numpy oracles (``tests/reference_rar_heuristics.py``) on
  instances with many servers;
* the evaluator, which re-rates no neighbour where contention cannot change a speed, against the oracle's
  evaluator (every job's contention re-derived at every event);
* the instance and schedule readers' fast paths for plain rows against their checked paths (same objects, same
  errors);
* ``Cluster.server_ids`` is computed once and still follows the servers.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from optsched import solve  # noqa: E402
from optsched.algorithms import sjf_bco as alg  # noqa: E402
from optsched.algorithms.baselines import ff_rule  # noqa: E402
from optsched.cluster import Cluster, Server  # noqa: E402
from optsched.errors import InstanceError  # noqa: E402
from optsched.evaluators.rar import evaluate  # noqa: E402
from optsched.generators.rar import random_rar_instance  # noqa: E402
from optsched.perf.rar import contention_binds  # noqa: E402
from reference_rar_heuristics import evaluate_reference  # noqa: E402
from test_rar_scale import same_as_reference  # noqa: E402


def scan_first_fit(st_: alg.PackState, j: int) -> list[int] | None:
    """The first G_j idle GPUs with U + load <= limit, in GPU index order: FF by definition."""
    pk = st_.pk
    ok = [g for g in range(pk.n_gpus) if st_.free[g] and st_.U[g] + pk.load[j] <= st_.lim]
    return ok[:pk.size[j]] if len(ok) >= pk.size[j] else None


def scan_enough(st_: alg.PackState, j: int) -> bool:
    """Do G_j GPUs, idle or not, pass the limit? By sorting every GPU's load."""
    pk = st_.pk
    return sorted(st_.U)[pk.size[j] - 1] + pk.load[j] <= st_.lim if pk.size[j] <= pk.n_gpus else False


def drive_first_fit(inst, theta: float) -> int:
    """Pack ``inst`` in instance order under ``theta`` with FF, checking every question the packer asks against the
    scans; returns how many choices were compared."""
    pk = alg.Packer(inst)
    st_ = pk.new_state(theta, [ff_rule])
    compared = 0
    for j in range(len(pk.jobs)):
        while True:
            want = scan_first_fit(st_, j)
            got = ff_rule.choose(st_, j)
            assert got == want, (j, st_.t)
            compared += 1
            if got is not None:
                st_.commit(j, got)
                break
            assert st_.enough_anywhere(j) == scan_enough(st_, j)
            if not scan_enough(st_, j) or not st_.n_active:
                return compared
            st_.advance()
    return compared


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 80), st.integers(10, 120), st.integers(0, 10_000), st.floats(0.02, 1.0))
def test_first_fit_tree_and_lazy_heap_agree_with_scans(servers, jobs, seed, share):
    inst = random_rar_instance(jobs, servers, seed, server_gpus=(1, 2, 4, 8))
    # a limit between the largest single load and the total: tight enough that many GPUs fail it
    pk = alg.Packer(inst)
    theta = max(pk.load) + share * sum(lo * g for lo, g in zip(pk.load, pk.size)) / pk.n_gpus
    assert drive_first_fit(inst, theta) > 0


def test_first_fit_tree_with_one_server_and_an_infinite_limit():
    inst = random_rar_instance(12, 1, 3)
    drive_first_fit(inst, float("inf"))
    drive_first_fit(random_rar_instance(30, 33, 3), float("inf"))   # 3 blocks, a padded tree


def scan_lbsgf_servers(st_: alg.PackState, j: int) -> list[int]:
    """Algorithm 3's servers by a sort: (mean U, index) ascending, until they hold lambda_j * G_j GPUs."""
    pk = st_.pk
    means = []
    for s in range(pk.n_servers):
        acc = 0.0
        for g in range(pk.server_first[s], pk.server_first[s] + pk.cap_list[s]):
            acc += st_.U[g]
        means.append((acc / pk.cap_list[s], s))
    out, acc = [], 0
    for _, s in sorted(means):
        out.append(s)
        acc += pk.cap_list[s]
        if acc >= pk.lam[j] * pk.size[j] - alg._EPS:
            break
    return out


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 60), st.integers(10, 100), st.integers(0, 10_000), st.sampled_from([1.0, 2.0]))
def test_lbsgf_server_heap_agrees_with_a_sort(servers, jobs, seed, lam):
    inst = random_rar_instance(jobs, servers, seed, server_gpus=(1, 2, 4, 8))
    pk = alg.Packer(inst, lam=lam)
    st_ = pk.new_state(float(inst.horizon), [alg.lbsgf])
    for j in alg.sjf_order(inst):
        while True:
            assert alg.Lbsgf._servers(st_, j) == scan_lbsgf_servers(st_, j)
            got = alg.lbsgf.choose(st_, j)
            if got is not None:
                st_.commit(j, got)
                break
            if not alg.lbsgf.enough(st_, j) or not st_.n_active:
                return
            st_.advance()


@pytest.mark.parametrize("servers,seed", [(17, 0), (33, 1), (70, 2)])
def test_many_server_instances_match_the_reference(servers, seed):
    inst = random_rar_instance(4 * servers, servers, seed, server_gpus=(1, 2, 4, 8), horizon=300)
    for name in ("sjf-bco", "ff", "ls", "rand"):
        same_as_reference(inst, name, seed=seed)


def test_contended_many_server_instance_matches_the_reference():
    inst = random_rar_instance(90, 40, 5, contention_xi=1.0, server_gpus=(2, 4), horizon=400)
    assert alg.Packer(inst).p_matters
    for name in ("sjf-bco", "ff", "ls"):
        same_as_reference(inst, name)


@pytest.mark.parametrize("xi", [None, 0.1, 1.0])
def test_evaluator_with_and_without_binding_contention_matches_the_reference(xi):
    inst = random_rar_instance(120, 12, 4, contention_xi=xi, server_gpus=(2, 4), horizon=600)
    assert contention_binds(inst) == (xi == 1.0)
    for seed in range(3):   # RAND's schedules split many jobs over several servers
        sched = solve(inst, "rand", seed=seed).schedule
        assert sum(len(sj.placement) > 1 for sj in sched) > 10
        ev = evaluate(inst, sched)
        assert (ev.makespan, dict(ev.completions)) == evaluate_reference(inst, sched)


def test_server_ids_are_computed_once_and_follow_the_servers():
    c = Cluster((Server("b", 2), Server("a", 4)))
    assert c.server_ids == ("b", "a") and c.server_ids is c.server_ids
    assert Cluster((Server("x", 1),)).server_ids == ("x",)


# -- the readers' plain-type fast paths read what the checked paths read, and leave every error to them --------
def _read_both(read, module, fast_name, doc):
    """``read(doc)`` with the fast path and with it switched off: (result or error text) of each."""
    def run():
        try:
            return read(copy.deepcopy(doc))
        except InstanceError as exc:
            return ("error", str(exc), exc.field, exc.job)
    fast = run()
    saved = getattr(module, fast_name)
    setattr(module, fast_name, lambda j: None)
    try:
        slow = run()
    finally:
        setattr(module, fast_name, saved)
    return fast, slow


JOB_VARIANTS = [
    {}, {"gpus": 2.0}, {"gpus": 2.5}, {"gpus": True}, {"iterations": "7"}, {"gradient_size": 0}, {"lambda": 2},
    {"lambda": None}, {"lamda": 2}, {"id": ""}, {"id": 3}, {"backward_time": float("nan")}, {"batch_size": -1.0},
    {"gpus": 0}, {"forward_time_per_sample": float("inf")}, {"drop": "backward_time"}, {"drop": "lambda"},
]


@pytest.mark.parametrize("variant", JOB_VARIANTS)
def test_instance_fast_path_reads_like_the_checked_path(variant):
    import optsched.problems.rar as rar

    doc = rar.to_dict(random_rar_instance(6, 2, 1))
    job = doc["jobs"][3]
    for k, v in variant.items():
        if k == "drop":
            job.pop(v)
        else:
            job[k] = v
    fast, slow = _read_both(rar.from_dict, rar, "_plain_job", doc)
    assert fast == slow
    if isinstance(fast, rar.RarInstance):
        assert [type(getattr(a, f)) for a in fast.jobs for f in ("gpus", "lam", "batch_size")] == \
            [type(getattr(a, f)) for a in slow.jobs for f in ("gpus", "lam", "batch_size")]


ROW_VARIANTS = [
    {}, {"start": 2.0}, {"start": True}, {"start": None}, {"completion": 5}, {"completion": None},
    {"placement": {"s0": 1.0}}, {"placement": {"s0": True}}, {"placement": []}, {"placement": {"s0": 0, "s1": 2}},
    {"stage_placement": {"s0": [1]}}, {"extra": 1}, {"id": ""}, {"drop": "start"}, {"drop": "placement"},
]


@pytest.mark.parametrize("variant", ROW_VARIANTS)
def test_schedule_fast_path_reads_like_the_checked_path(variant):
    import optsched.io as oio

    inst = random_rar_instance(6, 2, 1)
    doc = oio.schedule_to_dict(solve(inst, "ls").schedule)
    row = doc["jobs"][2]
    for k, v in variant.items():
        if k == "drop":
            row.pop(v)
        else:
            row[k] = v
    fast, slow = _read_both(oio.schedule_from_dict, oio, "_plain_scheduled_job", doc)
    assert fast == slow


def test_with_completions_equals_building_the_jobs_again():
    from optsched.result import Schedule, ScheduledJob

    jobs = (ScheduledJob("a", 0, {"s1": 2, "s0": 1, "s2": 0}), ScheduledJob("b", 3.0, {"s0": 4}, 9.0, {"s0": (2, 2)}))
    got = Schedule(jobs, "x", "y").with_completions({"a": 5, "b": 7.5})
    want = Schedule(tuple(ScheduledJob(j.id, j.start, j.placement, c, j.stage_placement)
                          for j, c in zip(jobs, (5, 7.5))), "x", "y")
    assert got == want and [j.completion for j in got] == [5, 7.5]
    assert list(got["a"].placement.items()) == [("s0", 1), ("s1", 2)] and jobs[0].completion is None


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 40), st.integers(10, 80), st.integers(0, 10_000))
def test_lbsgf_structures_built_at_the_switch_equal_the_maintained_ones(servers, jobs, seed):
    """SJF-BCO's prefix keeps no server means and its LBSGF continuations no idle heap (``PackState.keep_only``):
    the means built at the switch equal, float for float, those maintained at every start, and the continuation
    chooses the same GPUs as a state that kept every structure all along."""
    inst = random_rar_instance(jobs, servers, seed, server_gpus=(1, 2, 4, 8))
    pk = alg.Packer(inst)
    order = alg.sjf_order(inst)
    lean = pk.new_state(float(inst.horizon), [alg.fa_ffp])
    full = pk.new_state(float(inst.horizon), [alg.fa_ffp, alg.lbsgf])
    cut = len(order) // 2
    placed = [pk.place(s, order[:cut], lambda j: alg.fa_ffp) for s in (lean, full)]
    # with theta = the horizon, FA-FFP's load limit can exclude a job for good (Alg. 2 "return empty"): many jobs
    # on few servers (hypothesis found 51 jobs on 2 servers); both states must agree, and the rest needs a prefix
    assert placed[0] == placed[1]
    assume(placed[0])
    assert not lean.need_srv and full.need_srv
    cont = lean.copy(alg.lbsgf.needs)
    assert cont.fheap == [] and not cont.need_heap and lean.need_heap and cont.smv == full.smv
    for j in order[cut:]:
        while True:
            assert alg.Lbsgf._servers(cont, j) == alg.Lbsgf._servers(full, j) == scan_lbsgf_servers(cont, j)
            got, want = alg.lbsgf.choose(cont, j), alg.lbsgf.choose(full, j)
            assert got == want
            if got is not None:
                cont.commit(j, got)
                full.commit(j, got)
                break
            if not alg.lbsgf.enough(cont, j) or not cont.n_active:
                return
            cont.advance()
            full.advance()
        assert cont.smv == full.smv and cont.U == full.U


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 12), st.integers(5, 40), st.integers(0, 10_000), st.floats(1.0, 60.0))
def test_progress_fast_check_agrees_with_tau_bounds(servers, jobs, seed, slow):
    """RarInstance's validation skips the per-job tau_bounds loop only when its inlined eq. (8) finds every job's
    slowest iteration below one slot; with some jobs slowed past a slot the exact check names the first of them."""
    from optsched.problems.rar import tau_bounds

    inst = random_rar_instance(jobs, servers, seed, server_gpus=(1, 2, 4, 8))
    assert inst._all_progress() and all(tau_bounds(inst, j)[1] < 1.0 for j in inst.jobs)
    slowed = copy.copy(inst)
    new = tuple(j if i % 3 else type(j)(j.id, j.gpus, j.iterations, j.gradient_size, j.batch_size,
                                        j.forward_time_per_sample, j.backward_time * slow, j.lam)
                for i, j in enumerate(inst.jobs))
    object.__setattr__(slowed, "jobs", new)
    bad = [j.id for j in new if tau_bounds(slowed, j)[1] >= 1.0]
    assert slowed._all_progress() == (not any(tau_bounds(slowed, j)[1] >= 1.0 - 1e-9 for j in new))
    if bad:
        with pytest.raises(InstanceError) as e:
            slowed._validate()
        assert e.value.job == bad[0]
    else:
        slowed._validate()


@pytest.mark.parametrize("name", ["sjf-bco", "ff", "ls"])
@pytest.mark.parametrize("servers,jobs,seed,xi", [(12, 200, 0, None), (30, 150, 1, None), (8, 120, 2, 1.0)])
def test_early_stop_of_hopeless_packings_changes_no_result(name, servers, jobs, seed, xi, monkeypatch):
    """Packer.place drops a packing once its makespan is bound to reach the cutoff (the clock plus the longest
    rho_min still to place, or a started job's known end): the bisection then sees every theta's result as before,
    so the schedule and the figures are those of packing to the end; and it does stop some packings early."""
    inst = random_rar_instance(jobs, servers, seed, server_gpus=(2, 4, 8), contention_xi=xi)
    stops = []
    place = alg.Packer.place

    def counted(self, st_, js, rule_for, cutoff=float("inf"), tail=None):
        ok = place(self, st_, js, rule_for, cutoff, tail)
        stops.append(not ok and st_.t < cutoff)   # failed before its clock reached the cutoff
        return ok

    monkeypatch.setattr(alg.Packer, "place", counted)
    monkeypatch.setattr(alg.Packer, "reuse", False)   # every theta packed (the repeats are tested below)
    fast = solve(inst, name)
    early, stops = stops, []
    monkeypatch.setattr(alg.Packer, "early_stop", False)
    plain = solve(inst, name)
    assert fast.schedule == plain.schedule and fast.objective == plain.objective
    assert {k: v for k, v in fast.info.items() if k != "runtime_s"} == \
        {k: v for k, v in plain.info.items() if k != "runtime_s"}
    assert sum(early) > sum(stops)   # more packings stopped before their clock reached the cutoff


def _figures(res):
    return res.schedule, res.objective, {k: v for k, v in res.info.items() if k != "runtime_s"}


@pytest.mark.parametrize("name", ["sjf-bco", "ff", "ls"])
@pytest.mark.parametrize("servers,jobs,seed,xi,lam", [(12, 200, 0, None, None), (30, 150, 1, None, 2.0),
                                                      (8, 120, 2, 1.0, None), (20, 300, 3, 0.1, None),
                                                      (25, 250, 5, 1.0, None), (6, 90, 7, None, None)])
def test_skipped_repeats_change_no_result(name, servers, jobs, seed, xi, lam, monkeypatch):
    """The bisection skips a theta's attempt (a kappa of SJF-BCO, FF's or LS's one packing) when a theta above it
    that returned a packing saw that attempt keep every load within the new limit, and SJF-BCO reuses saved prefix
    states (Repeats): the schedule and every figure are those of packing every theta, and something is skipped."""
    inst = random_rar_instance(jobs, servers, seed, server_gpus=(2, 4, 8), contention_xi=xi)
    opts = {"lam": lam} if lam is not None and name == "sjf-bco" else {}
    calls = []
    place = alg.Packer.place

    def counted(self, st_, js, rule_for, cutoff=float("inf"), tail=None):
        calls.append(len(js))
        return place(self, st_, js, rule_for, cutoff, tail)

    monkeypatch.setattr(alg.Packer, "place", counted)
    fast, placed = _figures(solve(inst, name, **opts)), sum(calls)
    calls.clear()
    monkeypatch.setattr(alg.Packer, "reuse", False)
    plain = _figures(solve(inst, name, **opts))
    assert fast == plain
    assert placed < sum(calls)   # fewer jobs placed with the repeats skipped


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 30), st.integers(20, 150), st.integers(0, 10_000), st.sampled_from([None, 0.1, 1.0]),
       st.sampled_from(["sjf-bco", "ff", "ls"]))
def test_skipped_repeats_change_no_result_random(servers, jobs, seed, xi, name):
    inst = random_rar_instance(jobs, servers, seed, server_gpus=(1, 2, 4, 8), contention_xi=xi)
    fast = _figures(solve(inst, name))
    try:
        alg.Packer.reuse = False
        plain = _figures(solve(inst, name))
    finally:
        alg.Packer.reuse = True
    assert fast == plain


def test_a_repeated_attempt_makes_the_same_decisions_below_its_reach():
    """The claim Repeats rests on, checked directly: a packing under theta whose loads reached W packs the same
    (starts, GPUs, loads) under every limit in [W, theta], and differently somewhere below W."""
    inst = random_rar_instance(150, 10, 11, server_gpus=(2, 4, 8))
    order = alg.sjf_order(inst)
    pk = alg.Packer(inst)
    for rule in (alg.fa_ffp, alg.lbsgf, ff_rule):
        top = pk.run(order, 10 ** 6, lambda j, r=rule: r)
        reach = max(top.loads)
        for theta in (reach, reach + 0.5, (reach + 10 ** 6) / 2):
            again = pk.run(order, theta, lambda j, r=rule: r)
            assert (again.start, again.gpus, again.loads) == (top.start, top.gpus, top.loads)
        lower = pk.run(order, reach - 1.0, lambda j, r=rule: r)
        assert lower is None or (lower.start, lower.gpus) != (top.start, top.gpus)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 12), st.integers(5, 80), st.integers(0, 10_000), st.sampled_from([None, 0.1]),
       st.integers(0, 6))
def test_fixed_speed_capacity_check_agrees_with_the_replay(servers, jobs, seed, xi, shift):
    """Where contention cannot bind, evaluate checks the capacity with numpy (a running sum per server, releases
    first): the same completions in the same order as the event replay, and on a schedule made infeasible by
    moving some jobs earlier, the same error (the replay names it)."""
    import optsched.evaluators.rar as rar
    from optsched.errors import ScheduleError
    from optsched.result import Schedule, ScheduledJob

    inst = random_rar_instance(jobs, servers, seed, server_gpus=(1, 2, 4, 8), contention_xi=xi)
    assert not contention_binds(inst)
    sched = solve(inst, "rand", seed=seed).schedule
    if shift:   # every shift-th job starts earlier: often over capacity
        sched = Schedule(tuple(ScheduledJob(j.id, max(0, j.start - 3 * shift) if i % shift == 0 else j.start,
                                            j.placement) for i, j in enumerate(sched.jobs)))

    def outcome():
        try:
            ev = evaluate(inst, sched)
        except ScheduleError as exc:
            return ("error", str(exc), exc.field, exc.job)
        return list(ev.completions.items()), ev.makespan, ev.average_jct, ev.schedule

    saved_from, rar.NUMPY_FROM = rar.NUMPY_FROM, 0      # numpy's check at any size
    try:
        fast = outcome()
    finally:
        rar.NUMPY_FROM = saved_from
    saved = rar._fixed_speed_completions
    rar._fixed_speed_completions = lambda *a: None      # the replay only
    try:
        slow = outcome()
    finally:
        rar._fixed_speed_completions = saved
    assert fast == slow
