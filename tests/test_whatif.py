"""The what-if policy switcher (issue 17): copies of the live simulator through the engine's copy
(``Simulator.__deepcopy__``, what ``clone`` calls), the live run left untouched, the best candidate chosen, and on
a case where one switching point sees the whole run, the switched run is the best fixed policy's run."""

from __future__ import annotations

import math

import numpy as np
import pytest

from optsched.cluster import Cluster
from optsched.errors import InstanceError
from optsched.generators.workload import synthetic_workload
from optsched.sim import simulate
from optsched.sim import whatif as wi
from optsched.sim.engine import Simulator
from optsched.sim.registry import build_admission, build_policy

PAIRS = [("fifo", "accept-all"), ("srtf", "accept-all"), ("las", "accept-all")]


def _wl(n=30, load=12.0, seed=1):
    return synthetic_workload(n, load_jph=load, seed=seed, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2})


def _state(sim: Simulator):
    return ([(j.status, j.executed, j.completion_s, j.first_start_s, j.placement, j.preemptions) for j in sim.jobs],
            sim.now, sim.view.cluster.free.tolist())


def test_one_candidate_is_the_fixed_policy():
    wl = _wl()
    for sched in ("fifo", "srtf", "tiresias"):
        res = wi.run_whatif(wl, (2, 4), [(sched, "accept-all")], period_s=1800, horizon_s=3600)
        ref = simulate(wl, (2, 4), scheduler=sched)
        assert res.custom["whatif"].n_points == res.summary["switch_points"] > 1
        assert res.jobs["completion_s"].tolist() == ref.jobs["completion_s"].tolist()


def test_the_copies_are_clones_and_leave_the_live_run_untouched(monkeypatch):
    wl = _wl()
    pols = [build_policy(s, "consolidated", seed=0) for s, _ in PAIRS]
    adms = [build_admission(a) for _, a in PAIRS]
    live = Simulator(wl, Cluster.homogeneous(2, 4), policy=wi.SwitchingPolicy(pols),
                     admission=wi.SwitchingAdmission(adms), mode="round", seed=0)
    twin_ref = live.clone()  # an identical run never evaluated
    calls = []
    real_copy = Simulator.__deepcopy__

    def counting_copy(self, memo):
        calls.append(self)
        return real_copy(self, memo)
    monkeypatch.setattr(Simulator, "__deepcopy__", counting_copy)
    live.reset()
    twin_ref.reset()
    run = wi.WhatIfRecord(names=[])
    steps = 0
    while live.advance() is not None:
        assert twin_ref.advance() is not None
        if steps % 7 == 3:
            before = _state(live)
            scores = wi._evaluate(live, len(PAIRS), 5000.0, "workload", "jct", run)
            assert _state(live) == before
            assert len(scores) == len(PAIRS)
        live.apply(live.decide())
        twin_ref.apply(twin_ref.decide())
        steps += 1
    assert twin_ref.advance() is None
    assert calls and all(c is live for c in calls) and run.copies == len(calls)
    assert live.result().jobs["completion_s"].tolist() == twin_ref.result().jobs["completion_s"].tolist()


def test_run_whatif_copies_once_per_candidate_and_point(monkeypatch):
    n = []
    real_copy = Simulator.__deepcopy__
    monkeypatch.setattr(Simulator, "__deepcopy__", lambda self, memo: (n.append(1), real_copy(self, memo))[1])
    out = wi.run_whatif(_wl(), (2, 4), PAIRS, period_s=3600, horizon_s=3600).custom["whatif"]
    # at a point where the live run runs its own candidate's window (lookahead "workload", horizon <= period),
    # that candidate needs no copy; a window every candidate would run alike (whatif._Forced) is run once
    assert out.copies == len(n) == out.n_points * len(PAIRS) - out.reused - out.skipped
    assert 0 < out.reused <= out.n_points and out.skipped > 0
    assert out.whatif_s > 0 and out.live_s > 0
    n.clear()
    out = wi.run_whatif(_wl(), (2, 4), PAIRS, period_s=3600, horizon_s=3601).custom["whatif"]
    # a window past the next point
    assert out.copies == len(n) == out.n_points * len(PAIRS) - out.skipped and out.reused == 0


def test_it_switches_to_the_best_scored_candidate():
    seen = []
    out = wi.run_whatif(_wl(40, 20.0, 3), (1, 4), PAIRS, period_s=1200, horizon_s=2400,
                        on_switch=lambda t, s, c: seen.append((t, list(s), c))).custom["whatif"]
    assert len(seen) == out.n_points > 3
    for (t, s, c), ch, sc, tt in zip(seen, out.choices, out.scores, out.times):
        assert c == ch == int(np.argmin(s)) and s == sc and t == tt
    assert len(set(out.choices)) > 1  # the scores do tell the candidates apart here
    assert math.isclose(sum(out.share().values()), 1.0)


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_one_point_seeing_the_whole_run_equals_the_best_fixed_policy(seed):
    # a single switching point (the first decision) whose horizon covers the run: each copy *is* the fixed
    # policy's run, its score the sum of the JCTs, so the switcher picks and then runs the best fixed policy
    wl = _wl(25, 15.0, seed)
    fixed = [simulate(wl, (1, 4), scheduler=s) for s, _ in PAIRS]
    totals = [float(r.jobs["jct_s"].sum()) for r in fixed]
    res = wi.run_whatif(wl, (1, 4), PAIRS, period_s=1e9, horizon_s=1e9)
    out = res.custom["whatif"]
    assert out.n_points == 1
    # the score starts at the point: jobs that arrived before it lose their time before it (same for all)
    before = sum(max(0.0, out.times[0] - j.arrival_s) for j in wl)
    assert np.allclose(out.scores[0], np.array(totals) - before)
    assert float(res.jobs["jct_s"].sum()) == pytest.approx(min(totals))
    assert out.choices[0] == int(np.argmin(totals))


def test_present_lookahead_holds_back_later_arrivals():
    wl = _wl(30, 15.0, 4)
    res = wi.run_whatif(wl, (1, 4), PAIRS, period_s=1800, horizon_s=20000, lookahead="present")
    out = res.custom["whatif"]
    assert int(res.summary["finished_tracked"]) == len(wl)
    # a copy that sees only the present scores only the jobs present at the point, undisturbed by later
    # arrivals; a copy that sees the future also counts the jobs arriving within the horizon
    full = wi.run_whatif(wl, (1, 4), PAIRS, period_s=1800, horizon_s=20000).custom["whatif"]
    assert out.times[0] == full.times[0]
    assert min(out.scores[0]) <= min(full.scores[0])


def test_score_counts_only_the_window():
    a = wi.Job("a", 0.0, 1, 1, 1.0)
    a.completion_s, a.first_start_s = 50.0, 5.0
    assert wi.score([a], 60.0, 100.0) == 0.0            # done before the window
    assert wi.score([a], 10.0, 100.0) == 40.0
    assert wi.score([a], 0.0, 100.0, "both") == 55.0
    with pytest.raises(InstanceError):
        wi.score([a], 0.0, 1.0, "makespan")


@pytest.mark.parametrize("kw, field", [({"lookahead": "future"}, "lookahead"), ({"metric": "x"}, "metric"),
                                       ({"period_s": 0}, "period_s"), ({"horizon_s": float("nan")}, "horizon_s")])
def test_bad_options(kw, field):
    with pytest.raises(InstanceError) as e:
        wi.run_whatif(_wl(5), (1, 4), PAIRS, **kw)
    assert e.value.field == field
    with pytest.raises(InstanceError):
        wi.run_whatif(_wl(5), (1, 4), [])


def test_admission_switch_hands_over_held_jobs():
    sa = wi.SwitchingAdmission([build_admission("accept-k"), build_admission("accept-all")])
    wl = _wl(12, 60.0, 2)
    sim = Simulator(wl, Cluster.homogeneous(1, 4),
                    policy=build_policy("fifo", "consolidated"), admission=sa, mode="round")
    sim.reset()
    while sim.advance() is not None and sa.holding == 0:
        sim.apply(sim.decide())
    held = sa.holding
    assert held > 0
    sa.switch(1)
    assert sa.holding == held  # carried, not dropped
    sim.apply(sim.decide())
    while sim.advance() is not None:
        sim.apply(sim.decide())
    assert int(sim.result().summary["finished_tracked"]) == len(wl)


# -- windows every candidate runs alike (whatif._Forced) -------------------------------------------------------
FORCED_PAIRS = [("fifo", "accept-all"), ("las", "accept-all"), ("srtf", "accept-all"), ("tiresias", "accept-all"),
                ("las", "accept-1.2")]


@pytest.mark.parametrize("lookahead, live_runs_one", [("workload", True), ("workload", False), ("present", True)])
@pytest.mark.parametrize("seed, load, window", [(1, 3.0, None), (2, 5.0, (5, 30)), (4, 5.0, None), (6, 3.0, None)])
def test_windows_run_once_for_every_candidate_keep_every_choice(monkeypatch, lookahead, live_runs_one, seed, load,
                                                                 window):
    # the built-in policies only (the rule's condition): at a point whose first window takes only decisions every
    # candidate takes alike, the other windows are not run; the plain method (a whole clone per candidate, every
    # window run) gives the same points, scores, choices and run
    from tests.sim.test_whatif_shortcuts import _plain, _run

    wl = synthetic_workload(40, load_jph=load, seed=seed, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2}, window=window)
    kw = dict(period_s=1800, horizon_s=1800, lookahead=lookahead, seed=seed, stop_when_tracked_done=window is not None)
    res = wi.run_whatif(wl, (1, 4), FORCED_PAIRS, **kw, live_runs_one=live_runs_one)
    out = res.custom["whatif"]
    assert out.skipped > 0 and res.summary["skipped"] == out.skipped  # the shortcut is taken
    assert out.copies + out.reused + out.skipped == len(FORCED_PAIRS) * out.n_points
    fast = _run(wl, (1, 4), FORCED_PAIRS, **kw, live_runs_one=live_runs_one)
    _plain(monkeypatch)
    plain = _run(wl, (1, 4), FORCED_PAIRS, **kw, live_runs_one=False)
    assert len(set(plain[2])) > 1  # the choice does change
    assert fast[:3] == plain[:3]
    assert np.array_equal(fast[3], plain[3], equal_nan=True) and fast[4:] == plain[4:]


def test_a_window_wrongly_taken_for_every_candidates_would_be_seen(monkeypatch):
    # the comparison can fail: taking every first window for every candidate's (two waiting jobs, or one that does
    # not fit, included) changes the scores and choices
    wl = synthetic_workload(40, load_jph=8.0, seed=3, gpu_mix={1: 0.5, 2: 0.3, 4: 0.2})
    kw = dict(period_s=1800, horizon_s=1800, seed=3)
    right = wi.run_whatif(wl, (1, 4), FORCED_PAIRS, **kw).custom["whatif"]
    monkeypatch.setattr(wi._Forced, "__call__", lambda self, sim: True)
    wrong = wi.run_whatif(wl, (1, 4), FORCED_PAIRS, **kw).custom["whatif"]
    assert wrong.skipped > right.skipped
    assert wrong.scores != right.scores and wrong.choices != right.choices


def test_the_rule_is_kept_for_the_policies_it_knows():
    pols = [build_policy(s, "consolidated", seed=0) for s, _ in FORCED_PAIRS]
    adms = [build_admission(a) for _, a in FORCED_PAIRS]
    f = wi._Forced.for_run(pols, adms)
    assert f is not None and f.limit_gpus == 1.2
    assert wi._Forced.for_run([*pols, build_policy("fifo", "first-free")], [*adms, adms[0]]) is None
    assert wi._Forced.for_run([*pols[:2], wi.SwitchingPolicy(pols[:2])], adms[:3]) is None
    odd = build_policy("fifo", "consolidated", seed=0)
    odd.placement.backfill = True  # another walk's parameter
    assert wi._Forced.for_run([pols[0], odd], adms[:2]) is None
